//! Auto-detection of the input format, from the first lines of the input.
//! Distinctive markers decide first (cargo's JSON, pytest's banners, a panic,
//! rustc's `-->` spans); line shapes shared by several tools (`path:l:c: X`)
//! decide by their details; `generic` is the fallback.

use super::{Format, generic::looks_like_path, lines, location_prefix};

/// How many lines detection reads.
const SAMPLE_LINES: usize = 2000;

pub fn detect(text: &str) -> Format {
    let mut seen = Seen::default();
    for line in lines(text).take(SAMPLE_LINES) {
        seen.line(line);
    }
    seen.decide()
}

#[derive(Default)]
struct Seen {
    cargo_json: bool,
    pytest: bool,
    panic: bool,
    running_tests: bool,
    traceback: bool,
    rustc_header: bool,
    ruff_header: bool,
    arrow: bool,
    rustc_short: bool,
    ruff_trailer: bool,
    ruff_fixable: bool,
    pyright: bool,
    mypy: bool,
    pylint: bool,
    lint_code_line: bool,
    tsc: bool,
    eslint: bool,
    biome: bool,
    oxlint: bool,
}

impl Seen {
    fn line(&mut self, line: &str) {
        let t = line.trim_start();
        if line.starts_with("{\"reason\":") || line.starts_with("{\"$message_type\":") {
            self.cargo_json = true;
        }
        if (line.starts_with('=')
            && (line.contains(" test session starts ") || line.contains(" short test summary info ")))
            || (line.starts_with("FAILED ") || line.starts_with("ERROR ")) && line.contains("::")
        {
            self.pytest = true;
        }
        if line.starts_with("thread '") && line.contains("panicked at ") {
            self.panic = true;
        }
        if line.starts_with("running ") && line.ends_with(" tests") || line == "running 1 test" {
            self.running_tests = true;
        }
        if t.starts_with("Traceback (most recent call last):") {
            self.traceback = true;
        }
        if line.starts_with("error[") || line.starts_with("warning: ") || line.starts_with("error: ") {
            self.rustc_header = true;
        }
        if super::ruff::code_and_message(line).is_some() {
            self.ruff_header = true;
        }
        self.javascript(line);
        if t.starts_with("--> ") && location_prefix(t[4..].trim()).is_some() {
            self.arrow = true;
        }
        if line.starts_with("Found ") && (line.ends_with(" error.") || line.ends_with(" errors.")) {
            self.ruff_trailer = true;
        }
        if line.starts_with("Found ") && line.contains(" in ") && line.contains(" file")
            || line.starts_with("Success: no issues found")
        {
            self.mypy = true;
        }
        if line.starts_with("************* Module ") {
            self.pylint = true;
        }
        if line.contains(" errors, ") && line.contains(" warnings, ") && line.contains(" information") {
            self.pyright = true;
        }
        self.located(t);
    }

    /// The marks of TypeScript's and JavaScript's tools: tsc, Biome, oxlint, ESLint.
    fn javascript(&mut self, line: &str) {
        if (line.contains("): error TS") || line.contains(" - error TS")) && line.split_once("TS").is_some() {
            self.tsc = true;
        }
        if line.starts_with("{\"summary\":")
            || line.ends_with('━') && line.contains(" lint/")
            || line.contains(": lint/") && line.starts_with(['×', '!'])
        {
            self.biome = true;
        }
        if line.starts_with("{ \"diagnostics\": [")
            || (line.starts_with("  x ") || line.starts_with("  ! ")) && line.contains("): ")
            || line.ends_with(")]") && (line.contains(" [Error/") || line.contains(" [Warning/")) && line.contains('(')
        {
            self.oxlint = true;
        }
        if line.starts_with("[{\"filePath\":")
            || line.contains(" [Error/")
            || line.contains(" [Warning/")
            || (line.contains(": line ") && (line.contains(", Error - ") || line.contains(", Warning - ")))
            || (line.starts_with('✖') && line.contains(" problem"))
        {
            self.eslint = true;
        }
    }

    /// The marks of a line that starts with a location (`path:line[:col]`):
    /// pyright, rustc's short form, mypy, pylint, and the lint-code lines.
    fn located(&mut self, t: &str) {
        if let Some((path, _, _, rest)) = location_prefix(t) {
            if !looks_like_path(path) {
                return;
            }
            if rest.starts_with("- error: ") || rest.starts_with("- warning: ") || rest.starts_with("- information: ") {
                self.pyright = true;
            } else if rest.starts_with("error[") || (rest.starts_with("warning: ") && path.ends_with(".rs")) {
                self.rustc_short = true;
            } else if rest.starts_with("error: ") || rest.starts_with("note: ") {
                self.mypy = true;
            } else if let Some((code, _)) = rest.split_once(": ")
                && code.len() == 5
                && code.starts_with(['C', 'R', 'W', 'E', 'F', 'I'])
                && code[1..].bytes().all(|b| b.is_ascii_digit())
            {
                self.pylint = true;
            } else if super::ruff::code_and_message(rest).is_some() {
                self.lint_code_line = true;
                if rest.contains(" [*] ") {
                    self.ruff_fixable = true;
                }
            }
        }
    }

    fn decide(&self) -> Format {
        if self.cargo_json {
            Format::CargoJson
        } else if self.pytest {
            Format::Pytest
        } else if self.panic || self.running_tests && !(self.rustc_header && self.arrow) {
            Format::CargoTest
        } else if self.tsc {
            Format::Tsc
        } else if self.biome {
            Format::Biome
        } else if self.oxlint {
            Format::Oxlint
        } else if self.eslint {
            Format::Eslint
        } else if self.rustc_header && self.arrow || self.rustc_short {
            Format::Rustc
        } else if self.ruff_header && self.arrow {
            Format::Ruff
        } else if self.pyright {
            Format::Pyright
        } else if self.pylint {
            Format::Pylint
        } else if self.mypy {
            Format::Mypy
        } else if self.traceback {
            Format::PythonTraceback
        } else if self.lint_code_line {
            if self.ruff_trailer || self.ruff_fixable { Format::Ruff } else { Format::Flake8 }
        } else {
            Format::Generic
        }
    }
}
