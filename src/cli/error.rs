//! Errors of the command line, each with the exit code of docs/commands.md.

use std::fmt;

use crate::config::ConfigError;
use crate::git::GitError;
use crate::judge::scope::GlobError;

/// Exit codes of docs/commands.md.
pub mod exit {
    pub const OK: i32 = 0;
    /// The task escalated, or a check found what it looks for.
    pub const FOUND: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const ENVIRONMENT: i32 = 3;

    /// A task's ending as an exit code: 0 succeeded, 1 escalated.
    pub fn ending(e: crate::run::Ending) -> i32 {
        match e {
            crate::run::Ending::Succeeded => OK,
            crate::run::Ending::Escalated => FOUND,
        }
    }
}

/// An error of a command: its exit code, what went wrong, the error it
/// came from (kept, with its own causes) and what to do about it.
#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub message: String,
    /// What the user can do, one sentence each, printed after the error.
    pub hints: Vec<String>,
    pub source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl CliError {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        CliError { code, message: message.into(), hints: Vec::new(), source: None }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        CliError::new(exit::USAGE, message)
    }

    pub fn environment(message: impl Into<String>) -> Self {
        CliError::new(exit::ENVIRONMENT, message)
    }

    /// The error `e` with `code`: its text is the message, it is kept as
    /// the source, and its hint (if any) is attached.
    pub(super) fn of<E: std::error::Error + Send + Sync + 'static>(code: i32, e: E, hint: Option<String>) -> Self {
        CliError { code, message: e.to_string(), hints: hint.into_iter().collect(), source: Some(Box::new(e)) }
    }

    /// Adds what the user can do.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// The lines printed on stderr, in the one style of every command:
    /// `retry-run: error: MESSAGE`, then each cause the message does not
    /// already say (`  caused by: ...`), then each hint (`hint: ...`).
    /// Nothing for an empty message (a closed pipe). Pure.
    pub fn lines(&self) -> Vec<String> {
        if self.message.is_empty() {
            return Vec::new();
        }
        let mut out = vec![format!("retry-run: error: {}", self.message)];
        let mut said = self.message.clone();
        let mut cause = self.source.as_deref().and_then(std::error::Error::source);
        while let Some(c) = cause {
            let text = c.to_string();
            if !text.is_empty() && !said.contains(&text) {
                out.push(format!("  caused by: {text}"));
                said.push_str(&text);
            }
            cause = c.source();
        }
        out.extend(self.hints.iter().map(|h| format!("hint: {h}")));
        out
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<GitError> for CliError {
    fn from(e: GitError) -> Self {
        let code = if e.is_usage() { exit::USAGE } else { exit::ENVIRONMENT };
        let hint = e.hint();
        CliError::of(code, e, hint)
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> Self {
        CliError::of(exit::USAGE, e, None)
    }
}

impl From<GlobError> for CliError {
    fn from(e: GlobError) -> Self {
        CliError::of(exit::USAGE, e, Some(GlobError::HINT.to_string()))
    }
}

impl From<crate::run::RunError> for CliError {
    fn from(e: crate::run::RunError) -> Self {
        let code = match e.interrupted_by() {
            // As a shell reports a death by that signal: 130, 143.
            Some(sig) => 128 + sig,
            None if e.is_usage() => exit::USAGE,
            None => exit::ENVIRONMENT,
        };
        let hint = e.hint();
        CliError::of(code, e, hint)
    }
}

/// Writing to stdout failed: a closed pipe is not an error (`| head`).
impl From<crate::review::ReviewError> for CliError {
    fn from(e: crate::review::ReviewError) -> Self {
        let code = if e.is_usage() { exit::USAGE } else { exit::ENVIRONMENT };
        let hint = e.hint();
        CliError::of(code, e, hint)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::new(exit::OK, "")
        } else {
            CliError::environment(format!("cannot write the output: {e}"))
        }
    }
}

impl From<crate::clean::CleanError> for CliError {
    fn from(e: crate::clean::CleanError) -> Self {
        let code = if e.is_usage() { exit::USAGE } else { exit::ENVIRONMENT };
        let hint = match &e {
            crate::clean::CleanError::Git(g) => g.hint(),
            _ => None,
        };
        CliError::of(code, e, hint)
    }
}

impl From<crate::record::RecordError> for CliError {
    fn from(e: crate::record::RecordError) -> Self {
        let code = if e.is_usage() { exit::USAGE } else { exit::ENVIRONMENT };
        CliError::of(code, e, None)
    }
}

impl From<crate::sandbox::launch::ExecError> for CliError {
    fn from(e: crate::sandbox::launch::ExecError) -> Self {
        let code = e.exit_code();
        let hint = e.hint();
        CliError::of(code, e, hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot read the task file")]
    struct Outer {
        #[source]
        source: std::io::Error,
    }

    #[test]
    fn a_cause_not_in_the_message_and_each_hint_are_printed_once() {
        let e = CliError::of(exit::USAGE, Outer { source: std::io::Error::other("permission denied") }, None)
            .with_hint("check the file's permissions");
        assert_eq!(
            e.lines(),
            [
                "retry-run: error: cannot read the task file",
                "  caused by: permission denied",
                "hint: check the file's permissions"
            ]
        );
    }

    #[test]
    fn a_cause_the_message_already_says_is_not_repeated() {
        let e = CliError::from(GlobError { list: "allow", glob: "src/[".into(), message: "unclosed [".into() });
        let lines = e.lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[1], format!("hint: {}", GlobError::HINT));
        assert!(CliError::new(exit::OK, "").lines().is_empty());
    }

    #[test]
    fn a_library_error_says_what_to_do_as_a_hint_line_not_in_its_message() {
        let e = CliError::from(crate::sandbox::launch::ExecError::NoBwrap);
        assert_eq!(e.code, exit::USAGE);
        assert_eq!(
            e.lines(),
            [
                "retry-run: error: bubblewrap (bwrap) is not installed",
                "hint: install it (Debian and Ubuntu: apt-get install bubblewrap) or use --layers landlock"
            ]
        );
        let e = CliError::from(crate::run::RunError::Remote(crate::remote::RemoteError::NoGit { what: "pull".into() }));
        assert_eq!(e.code, exit::ENVIRONMENT);
        assert_eq!(
            e.lines(),
            ["retry-run: error: `git` is not on PATH: pull runs it to reach the remote", "hint: install git"]
        );
    }
}
