//! Whether the agent can start at all: its program looked up before the
//! first attempt, on the `PATH` the agent will get ([`check`]), and an
//! attempt whose agent could not start told from one whose agent ran and
//! failed ([`cannot_start`]). Either is the environment's failure, not the
//! agent's: the task stops with the program named and how to install it,
//! and no attempt of its budget is spent.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::agents::Preset;
use crate::config::CommandSpec;

/// Words a shell command may start with that are no program of their own
/// (keywords and the builtins a command line starts with): such a command
/// is not looked up.
const SHELL_WORDS: &[&str] = &[
    "!", "{", "(", ".", ":", "[", "alias", "case", "cd", "command", "eval", "exec", "exit", "export", "false", "for",
    "if", "local", "read", "readonly", "return", "set", "shift", "source", "test", "time", "trap", "true", "type",
    "ulimit", "umask", "unset", "until", "wait", "while",
];

/// The program a command starts: an argv's first word, or a shell
/// command's first word when it is a plain word (no variable, quote,
/// redirection, placeholder, assignment or keyword). `None` when it
/// cannot be told before the command runs. Pure.
pub(super) fn program_of(cmd: &CommandSpec) -> Option<String> {
    let word = match cmd {
        CommandSpec::Argv(argv) => argv.first()?.clone(),
        CommandSpec::Shell(s) => {
            let first = s.split_whitespace().next()?;
            let plain = first.chars().all(|c| c.is_ascii_alphanumeric() || "/._+-@%,".contains(c));
            if !plain || SHELL_WORDS.contains(&first) {
                return None;
            }
            first.to_string()
        }
    };
    (!word.is_empty() && !word.contains('{')).then_some(word)
}

/// Where `program` is found: itself when it names a path, else the first
/// executable of that name in `path`'s directories, skipping what is under
/// `hidden` (the sandbox keeps the agent from it). `Err` says why it
/// cannot start; `Ok(None)` when it cannot be told before the attempt (a
/// path relative to the worktree, which does not exist yet).
fn find(program: &str, path: &OsString, hidden: &[PathBuf]) -> Result<Option<PathBuf>, NotStartable> {
    let under_hidden = |p: &Path| {
        let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        hidden.iter().any(|h| real.starts_with(h))
    };
    if program.contains('/') {
        let p = Path::new(program);
        if !p.is_absolute() {
            return Ok(None);
        }
        let program = program.to_string();
        return match std::fs::metadata(p) {
            Err(source) => Err(NotStartable::Unreadable { program, source }),
            Ok(m) if m.is_dir() => Err(NotStartable::Directory { program }),
            Ok(m) if m.permissions().mode() & 0o111 == 0 => Err(NotStartable::NotExecutable { program }),
            Ok(_) if under_hidden(p) => Err(NotStartable::Hidden { program }),
            Ok(_) => Ok(Some(p.to_path_buf())),
        };
    }
    if let Some(found) = crate::process::programs_on_path(program, path).find(|p| !under_hidden(p)) {
        return Ok(Some(found));
    }
    Err(NotStartable::NotOnPath { program: program.to_string(), path: path.to_string_lossy().into_owned() })
}

/// Why the agent's program cannot start, found before the task is recorded.
#[derive(Debug, thiserror::Error)]
pub(super) enum NotStartable {
    #[error("`{program}` cannot be read: {source}")]
    Unreadable { program: String, source: std::io::Error },
    #[error("`{program}` is a directory")]
    Directory { program: String },
    #[error("`{program}` is not executable")]
    NotExecutable { program: String },
    #[error("`{program}` is under a path the sandbox hides from the agent (sandbox.deny_read)")]
    Hidden { program: String },
    #[error("`{program}` is not on the PATH the agent gets ({path})")]
    NotOnPath { program: String, path: String },
}

/// The agent's program cannot start: why, and what to do about it.
#[derive(Debug, thiserror::Error)]
#[error("the agent cannot start: {why}; {remedy}")]
pub(super) struct CannotStart {
    why: NotStartable,
    remedy: String,
}

/// The `PATH` the agent gets: its preset's, else retry-run's own, whose
/// directories in the user's checkout are those of the task's worktree
/// `wt` once it exists (as the sandbox gives them).
fn agent_path(preset: Option<&Preset>, checkout: Option<&Path>, wt: &Path) -> OsString {
    if let Some(p) = preset.and_then(|p| p.env.get("PATH")) {
        return p.into();
    }
    let own = std::env::var_os("PATH").unwrap_or_default();
    let (Some(checkout), Some(text)) = (checkout, own.to_str()) else { return own };
    if !wt.exists() {
        return own;
    }
    let mut checkouts = vec![checkout.to_path_buf()];
    checkouts.extend(std::fs::canonicalize(checkout).ok().filter(|c| c != checkout));
    let vars = [("PATH".to_string(), text.to_string())];
    match crate::sandbox::away_from_checkout(&vars, &checkouts, wt, &|p| p.exists()).first() {
        Some(change) => change.value.clone().unwrap_or_default().into(),
        None => own,
    }
}

/// Before anything is recorded: the agent's program looked up where the
/// agent will look for it. `Err` is the message that stops the task: the
/// program, why, and how to install it (a preset's) or what to check.
pub(super) fn check(
    cmd: &CommandSpec,
    preset: Option<&Preset>,
    checkout: Option<&Path>,
    wt: &Path,
    hidden: &[PathBuf],
) -> Result<(), CannotStart> {
    let Some(program) = program_of(cmd) else { return Ok(()) };
    match find(&program, &agent_path(preset, checkout, wt), hidden) {
        Ok(_) => Ok(()),
        Err(why) => Err(CannotStart { why, remedy: remedy(&program, preset) }),
    }
}

/// What to do about a program that cannot start: install the preset's, or
/// check the command.
pub(super) fn remedy(program: &str, preset: Option<&Preset>) -> String {
    match preset {
        Some(p) if p.program == program && !p.install.is_empty() => format!(
            "install {} (preset {}): `{}`, and make sure `{}` is on PATH",
            p.program, p.name, p.install, p.program
        ),
        _ => "check the agent command ([agent] command, --preset, or the command after --) and that its program is installed and on PATH".into(),
    }
}

/// The line of its output that says the agent's `program` could not be
/// started, when it ended with 126 or 127 (a shell's "not runnable" and
/// "not found"): a shell's `PROGRAM: not found` or `PROGRAM: No such file
/// or directory`, or the confined exec's `cannot start "PROGRAM": ...`.
/// `None` for an agent that ran, whatever it printed. Pure.
pub(super) fn cannot_start(program: &str, exit_code: Option<i32>, output: &[String]) -> Option<String> {
    if !matches!(exit_code, Some(126 | 127)) {
        return None;
    }
    let says = |line: &str| {
        line.contains(&format!("cannot start \"{program}\""))
            || [": not found", ": command not found", ": No such file or directory", ": Permission denied"]
                .iter()
                .any(|tail| line.contains(&format!("{program}{tail}")))
    };
    output.iter().rev().find(|l| says(l)).map(|l| l.trim().to_string())
}

/// A shell's or the kernel's word that a program could not be started: a
/// command not found, a file that is not there or not executable, a
/// script's interpreter missing (`/usr/bin/env: 'python9': No such file or
/// directory`, `bad interpreter`). Pure.
fn says_cannot_start(line: &str) -> bool {
    let line = line.trim();
    [": not found", ": command not found", ": No such file or directory", ": Permission denied"]
        .iter()
        .any(|tail| line.ends_with(tail))
        || line.contains("bad interpreter")
}

/// A command run through a shell (a check, an agent given as `sh -c ...`
/// or a wrapper script) that ended with 126 or 127: the shell's line that
/// says which program could not be started, when it says so. `None` for
/// any other exit, or when no line says it. Pure.
pub(super) fn shell_cannot_start(exit_code: Option<i32>, output: &[String]) -> Option<String> {
    if !matches!(exit_code, Some(126 | 127)) {
        return None;
    }
    output.iter().find(|l| says_cannot_start(l)).map(|l| l.trim().to_string())
}

/// An agent run through a shell or a wrapper that could not start the
/// program it wraps: 126 or 127, and all it printed is the shell's word
/// that a program could not be started (it did nothing before). Pure.
pub(super) fn wrapped_cannot_start(exit_code: Option<i32>, output: &[String]) -> Option<String> {
    let said: Vec<&String> = output.iter().filter(|l| !l.trim().is_empty()).collect();
    if said.is_empty() || said.len() > 3 || !said.iter().all(|l| says_cannot_start(l)) {
        return None;
    }
    shell_cannot_start(exit_code, output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_of_a_command() {
        let argv = |a: &[&str]| CommandSpec::Argv(a.iter().map(|s| s.to_string()).collect());
        let shell = |s: &str| CommandSpec::Shell(s.to_string());
        let cases = [
            (argv(&["claude", "-p"]), Some("claude")),
            (argv(&["/nonexistent/agent"]), Some("/nonexistent/agent")),
            (argv(&["{worktree}/agent.sh"]), None),
            (argv(&[]), None),
            (shell("my-agent --prompt {prompt_file}"), Some("my-agent")),
            (shell("  ./agent.sh x"), Some("./agent.sh")),
            (shell("FOO=1 my-agent"), None),
            (shell("$AGENT run"), None),
            (shell("cd sub && agent"), None),
            (shell("exec agent"), None),
            (shell("'my agent' x"), None),
            (shell(""), None),
        ];
        for (cmd, want) in cases {
            assert_eq!(program_of(&cmd).as_deref(), want, "{cmd:?}");
        }
    }

    #[test]
    fn a_wrapped_program_or_a_check_that_could_not_start() {
        let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        // (exit, output, a check cannot start, a wrapped agent cannot start)
        let cases = [
            (127, lines(&["sh: 1: claude-typo: not found"]), true, true),
            (127, lines(&["/tmp/wrap.sh: 2: claude-typo: not found"]), true, true),
            (127, lines(&["bash: line 1: pytset: command not found"]), true, true),
            (127, lines(&["/usr/bin/env: 'python9': No such file or directory"]), true, true),
            (126, lines(&["sh: 1: ./run.sh: Permission denied"]), true, true),
            (126, lines(&["sh: ./t.sh: /usr/bin/python9: bad interpreter: No such file or directory"]), true, true),
            // It ran first, then a command it ran was missing: a check
            // that cannot start, an agent that did work.
            (127, lines(&["reading the task", "sh: 1: rg: not found"]), true, false),
            // Another exit, or no such line.
            (1, lines(&["sh: 1: x: not found"]), false, false),
            (127, lines(&["exit 127 on purpose"]), false, false),
            (127, lines(&[]), false, false),
        ];
        for (code, out, check, wrapped) in cases {
            assert_eq!(shell_cannot_start(Some(code), &out).is_some(), check, "{code} {out:?}");
            assert_eq!(wrapped_cannot_start(Some(code), &out).is_some(), wrapped, "{code} {out:?}");
        }
    }

    #[test]
    fn a_program_that_could_not_start_is_told_from_one_that_failed() {
        let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        let cases = [
            // dash, bash as sh, the confined exec, retry-run's own start.
            (127, "agent", lines(&["sh: 1: agent: not found"]), true),
            (127, "/x/agent", lines(&["sh: /x/agent: No such file or directory"]), true),
            (127, "agent", lines(&["sh: line 1: agent: command not found"]), true),
            (
                127,
                "/nonexistent/agent",
                lines(&[
                    "retry-run: error: cannot start \"/nonexistent/agent\": No such file or directory (os error 2); check the command and that it is installed",
                ]),
                true,
            ),
            (126, "./a.sh", lines(&["sh: 1: ./a.sh: Permission denied"]), true),
            // The agent ran: a command it ran was not found, or it said so itself.
            (127, "sh", lines(&["sh: 1: pytest: not found"]), false),
            (1, "agent", lines(&["sh: 1: agent: not found"]), false),
            (127, "agent", lines(&["done"]), false),
        ];
        for (code, program, out, want) in cases {
            assert_eq!(cannot_start(program, Some(code), &out).is_some(), want, "{code} {program} {out:?}");
        }
    }

    #[test]
    fn a_preset_is_installed_as_it_says() {
        let p = crate::agents::preset("claude-code").expect("preset");
        assert!(remedy("claude", Some(&p)).contains("npm install -g @anthropic-ai/claude-code"));
        assert!(remedy("other", Some(&p)).contains("check the agent command"));
        assert!(remedy("claude", None).contains("check the agent command"));
    }
}
