//! The scope's globs as written: normalised ([`normalize_glob`]), compiled
//! into a set, and a bad one quoted back ([`GlobError`]).

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// An invalid glob, quoted as the user wrote it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {list} glob {glob:?}: {message}")]
pub struct GlobError {
    pub list: &'static str,
    pub glob: String,
    pub message: String,
}

impl GlobError {
    /// What to do about a bad glob, wherever it was given.
    pub const HINT: &'static str = "fix the glob in [scope] of retry-run.toml or in --allow/--deny";
}

/// Normalises a glob (docs/commands.md, `scope`): a leading `./` or `/` is
/// dropped, a trailing `/` means the directory and everything under it.
pub fn normalize_glob(glob: &str) -> String {
    let mut g = glob;
    loop {
        if let Some(rest) = g.strip_prefix("./") {
            g = rest;
        } else if let Some(rest) = g.strip_prefix('/') {
            g = rest;
        } else {
            break;
        }
    }
    if g.is_empty() {
        "**".to_string()
    } else if g.ends_with('/') && !g.ends_with("\\/") {
        format!("{g}**")
    } else {
        g.to_string()
    }
}

pub(super) fn build_set(list: &'static str, globs: &[String]) -> Result<GlobSet, GlobError> {
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        let compiled = GlobBuilder::new(&normalize_glob(glob))
            .literal_separator(true)
            .backslash_escape(true)
            .case_insensitive(false)
            .empty_alternates(true)
            .build()
            .map_err(|e| GlobError { list, glob: glob.clone(), message: glob_error_message(&e) })?;
        set.add(compiled);
    }
    set.build().map_err(|e| GlobError { list, glob: globs.join(", "), message: e.to_string() })
}

fn glob_error_message(e: &globset::Error) -> String {
    match e.kind() {
        globset::ErrorKind::UnclosedClass => "unclosed character class `[`; escape a literal bracket as `\\[`".into(),
        other => other.to_string(),
    }
}
