//! Errors of the command line, each with the exit code of docs/commands.md.

use std::fmt;

use crate::config::ConfigError;
use crate::git::GitError;
use crate::scope::GlobError;

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

/// An error to print on one line, with its exit code.
#[derive(Debug)]
pub struct CliError {
    pub code: i32,
    pub message: String,
}

impl CliError {
    pub fn usage(message: impl Into<String>) -> Self {
        CliError { code: exit::USAGE, message: message.into() }
    }

    pub fn environment(message: impl Into<String>) -> Self {
        CliError { code: exit::ENVIRONMENT, message: message.into() }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<GitError> for CliError {
    fn from(e: GitError) -> Self {
        let code = if e.is_usage() { exit::USAGE } else { exit::ENVIRONMENT };
        CliError { code, message: e.to_string() }
    }
}

impl From<ConfigError> for CliError {
    fn from(e: ConfigError) -> Self {
        CliError::usage(e.to_string())
    }
}

impl From<GlobError> for CliError {
    fn from(e: GlobError) -> Self {
        CliError::usage(format!("{e}; fix the glob in --allow/--deny or [scope] of retry-run.toml"))
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
        CliError { code, message: e.to_string() }
    }
}

/// Writing to stdout failed: a closed pipe is not an error (`| head`).
impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError { code: exit::OK, message: String::new() }
        } else {
            CliError::environment(format!("cannot write the output: {e}"))
        }
    }
}

impl From<crate::clean::CleanError> for CliError {
    fn from(e: crate::clean::CleanError) -> Self {
        let code = if e.is_usage() { exit::USAGE } else { exit::ENVIRONMENT };
        CliError { code, message: e.to_string() }
    }
}

impl From<crate::record::RecordError> for CliError {
    fn from(e: crate::record::RecordError) -> Self {
        let code = if e.is_usage() { exit::USAGE } else { exit::ENVIRONMENT };
        CliError { code, message: e.to_string() }
    }
}

impl From<crate::sandbox::exec::ExecError> for CliError {
    fn from(e: crate::sandbox::exec::ExecError) -> Self {
        use crate::sandbox::exec::ExecError;
        let code = match &e {
            ExecError::Usage { .. } | ExecError::NoCommand => exit::USAGE,
            // What a shell says: 127 not found, 126 found and not runnable.
            ExecError::CannotStart { source, .. } => {
                if source.kind() == std::io::ErrorKind::NotFound {
                    127
                } else {
                    126
                }
            }
            _ => exit::ENVIRONMENT,
        };
        CliError { code, message: e.to_string() }
    }
}
