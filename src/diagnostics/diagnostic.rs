//! What every reader of a tool's output makes: a [`Diagnostic`], with its
//! [`Severity`].

use serde::Serialize;

/// One finding of a tool: a location (when the tool gave one) and a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The tool or format that printed it: `ruff`, `mypy`, `pytest`, ...
    pub tool: &'static str,
    /// The path as the tool printed it.
    pub path: Option<String>,
    /// 1-based.
    pub line: Option<usize>,
    /// 1-based, when the tool printed one.
    pub column: Option<usize>,
    pub code: Option<String>,
    pub severity: Severity,
    pub message: String,
    /// Frames of one traceback share a number: enrichment makes the last
    /// frame inside the tree the `error` and the others `note`s.
    #[serde(skip)]
    pub traceback: Option<usize>,
    /// A qualified name to look up when the tool named a test but gave no
    /// line (pytest's short summary): `TestDiscount.test_half`.
    #[serde(skip)]
    pub symbol: Option<String>,
}

impl Diagnostic {
    pub(super) fn new(tool: &'static str, severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            tool,
            path: None,
            line: None,
            column: None,
            code: None,
            severity,
            message: message.into(),
            traceback: None,
            symbol: None,
        }
    }

    pub(super) fn at(mut self, path: &str, line: Option<usize>, column: Option<usize>) -> Self {
        self.path = Some(path.to_string());
        self.line = line.filter(|&l| l > 0);
        self.column = column.filter(|&c| c > 0);
        self
    }

    pub(super) fn code(mut self, code: Option<&str>) -> Self {
        self.code = code.map(str::to_string).filter(|c| !c.is_empty());
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Note => "note",
        }
    }

    /// `error`, `warning`, `note`, `info`/`information`/`help`, as tools print them.
    pub(super) fn parse(word: &str) -> Severity {
        match word.to_ascii_lowercase().as_str() {
            "error" | "fatal" | "fatal error" | "failure" => Severity::Error,
            "warning" | "warn" => Severity::Warning,
            "note" => Severity::Note,
            _ => Severity::Info,
        }
    }
}
