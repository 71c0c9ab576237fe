//! The Python interpreter `init` proposes for the tests: those that may
//! run them, the project's own first, and the first of them that imports
//! pytest when tried on the base. Pure: the runs are made by the caller's
//! [`TryRun`].

use super::detect::{Facts, shell_word};
use super::trial::TrialRan;

/// A Python interpreter that may run the project's tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Interpreter {
    /// The command that starts it (`/p/.venv/bin/python`, `uv run python`).
    pub run: String,
    /// Where it was found, in words.
    pub from: String,
}

/// The interpreters that may run the tests, in the order they are tried:
/// the checkout's virtualenvs, `uv run` (`uv.lock` and uv on `PATH`),
/// `poetry run` (`poetry.lock` and poetry on `PATH`), `hatch run` (hatch
/// configured and on `PATH`), then `python3` (or `python`) on `PATH`.
/// Empty for a project that is not Python's.
pub(crate) fn interpreters(f: &Facts) -> Vec<Interpreter> {
    let l = &f.layout;
    if !l.is_python() {
        return Vec::new();
    }
    let mut out: Vec<Interpreter> = f
        .venvs
        .iter()
        .filter(|v| v.programs.iter().any(|p| p == "python"))
        .map(|v| Interpreter {
            run: shell_word(&format!("{}/python", v.bin)),
            from: format!("the checkout's {}", v.name),
        })
        .collect();
    let managers = [
        ("uv", l.has("uv.lock"), "uv.lock"),
        ("poetry", l.has("poetry.lock"), "poetry.lock"),
        ("hatch", l.configures("hatch").is_some(), "hatch's config"),
    ];
    for (tool, used, sign) in managers {
        if used && f.on_path(tool) {
            out.push(Interpreter { run: format!("{tool} run python"), from: format!("{sign}, and {tool} is on PATH") });
        }
    }
    for py in ["python3", "python"] {
        if f.on_path(py) {
            out.push(Interpreter { run: py.into(), from: format!("{py} on PATH") });
            break;
        }
    }
    out
}

/// The command that says whether `i` can import pytest (exit 0).
pub(crate) fn probe_command(i: &Interpreter) -> String {
    format!("{} -c 'import pytest'", i.run)
}

/// The interpreter the tests run with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Python {
    /// The first of [`interpreters`] that imports pytest (with `--no-run`,
    /// the first, unchecked).
    pub chosen: Option<Interpreter>,
    /// Those tried before it, each with why it was passed over (the first
    /// line of what it printed).
    pub passed_over: Vec<(Interpreter, String)>,
    /// Whether the interpreters were run; `false` with `--no-run`.
    pub checked: bool,
}

/// Runs a command on the base with the hosts it may reach, for at most so
/// many seconds; `None` when nothing can be run (`--no-run`).
pub(crate) type TryRun<'a> = dyn FnMut(&str, &[String], u64) -> Option<TrialRan> + 'a;

/// The first interpreter that imports pytest, each tried by `try_run`
/// (in the trial's worktree); without a trial, the first, unchecked.
pub(crate) fn choose_python(facts: &Facts, try_run: &mut TryRun<'_>) -> Python {
    let mut python = Python { checked: true, ..Python::default() };
    for i in interpreters(facts) {
        let Some(ran) = try_run(&probe_command(&i), &[], 60) else {
            return Python { chosen: Some(i), passed_over: Vec::new(), checked: false };
        };
        if ran.exit_code == Some(0) && !ran.timed_out {
            python.chosen = Some(i);
            return python;
        }
        let first = ran.output.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        let reason = match (ran.timed_out, first.is_empty()) {
            (true, _) => "did not answer within a minute".to_string(),
            (false, true) => format!("exit {}", ran.exit_code.unwrap_or(-1)),
            (false, false) => crate::text::clip(first, 200, "...").into_owned(),
        };
        python.passed_over.push((i, reason));
    }
    python
}
