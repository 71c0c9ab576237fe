//! How to run only some tests of a check: given the check's command line
//! (`[[check]] run`), the variables it inherits and the test ids (as the
//! runners print them), the variables to set and/or the command to run
//! instead so that the runner runs those tests alone, or a typed reason why
//! it cannot. Pure: no process, no file; the caller runs what it returns.
//!
//! Only a plain invocation of one runner can be narrowed: leading
//! `VAR=value` words, then the runner and its own options. A pipe, `&&`,
//! `;`, a redirection, an expansion (`$X`, `` `...` ``) or a script of its
//! own (`make test`, `npm test`) runs tests retry-run cannot name, so it
//! is refused with the reason. What each runner gets:
//!
//! | runner | how | a command that already selects |
//! |---|---|---|
//! | pytest (`pytest`, `py.test`, `python -m pytest`, `uv run pytest`) | the node ids, shell-quoted, in `PYTEST_ADDOPTS` after `-rfEp`; a command that names paths (whose collection would add every other test back) is run instead with its paths replaced by the node ids | `-k`, `-m` stay: they only narrow |
//! | go test | `GOFLAGS=-v -run=^(TestA\|TestB)$` (top-level names: a subtest runs its parent) | `-run` on the command line or in `GOFLAGS` wins over ours: refused |
//! | cargo test (`cargo [+toolchain] test`) | the command with libtest filters after `--`: `--exact` and each name; a `TESTNAME` filter of its own is dropped (libtest ORs filters) | `--skip` stays |
//! | jest, vitest (`jest`, `vitest [run]`, through `npx`, `pnpm [exec]`, `yarn`, `bunx`) | the command with `-t '^(?:full name\|...)$'`: the `describe` names and the test's, joined by spaces, escaped as a regular expression; vitest's leading file is dropped | `-t`/`--testNamePattern` already there: refused |
//! | mocha (`mocha`, through `npx` ...) | the command with `--grep '^(?:full title\|...)$'` (the `describe` names and the test's, spaced) | `-g`/`--grep`/`-f`/`--fgrep` already there: refused |
//! | node's runner (`node [options] --test`) | `--test-name-pattern='^(?:name\|full title\|...)$'` right after `--test` (node 20 matches a test's own name, later versions its full title) | a name pattern already there: refused |
//!
//! Used for a task's targets run alone and for a failed check's flaky
//! reruns ([`super::runners::rerun`]).

use std::fmt;

use super::Runner;

/// pytest reads extra command-line options from this variable, before the
/// command line's own.
pub(crate) const PYTEST_ADDOPTS: &str = "PYTEST_ADDOPTS";
/// The go command reads default flags from this variable, each applied only
/// when the command knows it (so `go vet` and `go build` ignore `-run`).
pub(crate) const GOFLAGS: &str = "GOFLAGS";

/// pytest's default report characters (`fE`: failed, errors) plus `p`: a
/// `PASSED <node id>` line in the short summary for each passing test, at
/// any verbosity. A `-r` on the check's command line replaces it.
pub(crate) const PYTEST_REPORT: &str = "-rfEp";
/// `go test` names its passing tests (`--- PASS: TestAdd`) only with `-v`.
pub(crate) const GO_VERBOSE: &str = "-v";

/// How to run only the chosen tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    /// Variables to set over those of [`super::runners::runner_env`], each
    /// whole: retry-run's options first, then the inherited value.
    pub env: Vec<(String, String)>,
    /// The command line to run instead of the check's, when the selection
    /// is on the command line; `None`: the check's own.
    pub run: Option<String>,
}

/// Why some tests of a check cannot be run alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unselectable {
    /// No test id was given.
    NoTests,
    /// The command is not one plain invocation: it holds this shell syntax
    /// (`a pipe`, `&&`, `a redirection`, ...).
    NotPlain(&'static str),
    /// The command starts this program, no runner retry-run can narrow.
    NotARunner(String),
    /// A test of another runner than the command's.
    OtherRunner { id: String, runner: Runner, command: Runner },
    /// The runner cannot select this id (a go subtest name that is no
    /// identifier, a Rust name with spaces).
    Id { id: String, why: &'static str },
    /// An option of the command whose value cannot be told from a path or
    /// a filter (an option retry-run does not know, followed by a word).
    Ambiguous(String),
    /// The command (or the variable) already selects with this option,
    /// which would win over the selection.
    Selects(String),
}

impl fmt::Display for Unselectable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unselectable::NoTests => write!(f, "no test to select"),
            Unselectable::NotPlain(what) => write!(
                f,
                "the command is not one runner's invocation ({what}): only pytest, cargo test, go test, jest, vitest, mocha or node --test with their own options can be narrowed to some tests"
            ),
            Unselectable::NotARunner(program) => write!(
                f,
                "`{program}` is no runner retry-run can narrow to some tests (pytest, cargo test, go test, jest, vitest, mocha, node --test)"
            ),
            Unselectable::OtherRunner { id, runner, command } => {
                write!(f, "test `{id}` is {}'s, the command runs {}", name(*runner), name(*command))
            }
            Unselectable::Id { id, why } => write!(f, "test `{id}` cannot be selected: {why}"),
            Unselectable::Ambiguous(word) => {
                write!(f, "cannot tell whether `{word}` takes the next word as its value; write it as `{word}=value`")
            }
            Unselectable::Selects(option) => {
                write!(f, "the command already selects tests with `{option}`, which would win over the selection")
            }
        }
    }
}

/// A runner's name in messages.
fn name(runner: Runner) -> &'static str {
    match runner {
        Runner::Pytest => "pytest",
        Runner::Cargo => "cargo test",
        Runner::Go => "go test",
        Runner::Js => "a JavaScript runner",
    }
}

/// How to run `tests` (each with the runner that named it) alone with the
/// check's command `run`, which inherits `inherited` for the variables
/// retry-run adds (`PYTEST_ADDOPTS`, `GOFLAGS`).
#[cfg(test)]
pub(crate) fn select(
    run: &str,
    inherited: &dyn Fn(&str) -> Option<String>,
    tests: &[(Runner, String)],
) -> Result<Selection, Unselectable> {
    select_in(run, inherited, &[], tests)
}

/// [`select`], where `scripts` are the project's `package.json` scripts
/// (name, text): a package manager's run of a script that starts jest,
/// vitest or mocha itself (`npm run --silent test -- --verbose` over
/// `"test": "vitest run"`) is narrowed by arguments given to the script.
pub(crate) fn select_in(
    run: &str,
    inherited: &dyn Fn(&str) -> Option<String>,
    scripts: &[(String, String)],
    tests: &[(Runner, String)],
) -> Result<Selection, Unselectable> {
    if tests.is_empty() {
        return Err(Unselectable::NoTests);
    }
    let words = shell_words(run)?;
    if let Some(script) = script_run(&words) {
        return through_script(run, &words, &script, scripts, tests);
    }
    let call = invocation(&words)?;
    if let Some((runner, id)) = tests.iter().find(|(r, _)| *r != call.runner) {
        return Err(Unselectable::OtherRunner { id: id.clone(), runner: *runner, command: call.runner });
    }
    let mut ids: Vec<&str> = Vec::new();
    for (_, id) in tests {
        if !ids.contains(&id.as_str()) {
            ids.push(id);
        }
    }
    match call.runner {
        Runner::Pytest => pytest(run, &words, call.args, &ids, inherited),
        Runner::Go => go(&words[call.args..], &ids, inherited),
        Runner::Cargo => cargo(run, &words, call.args, &ids),
        Runner::Js => match call.js {
            JsRunner::Jest | JsRunner::Vitest => js(run, &words[call.args..], &ids),
            JsRunner::Mocha => mocha(run, &words[call.args..], &ids),
            JsRunner::Node => node(run, &words[call.args - 1], &words[call.args..], &ids),
        },
    }
}

/// A word of the command: its value after quote removal, and its span in
/// the command as written (to rebuild the command without some words).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    span: (usize, usize),
}

/// The words of a plain shell command line, or the syntax that makes it
/// more than one program's invocation.
fn shell_words(run: &str) -> Result<Vec<Word>, Unselectable> {
    let mut out = Vec::new();
    let mut chars = run.char_indices().peekable();
    let mut current: Option<(String, usize)> = None;
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some((text, start)) = current.take() {
                    out.push(Word { text, span: (start, i) });
                }
                continue;
            }
            '\n' | ';' => return Err(Unselectable::NotPlain("several commands")),
            '|' => return Err(Unselectable::NotPlain("a pipe or `||`")),
            '&' => return Err(Unselectable::NotPlain("`&&` or a background job")),
            '<' | '>' => return Err(Unselectable::NotPlain("a redirection")),
            '(' | ')' => return Err(Unselectable::NotPlain("a subshell")),
            '$' | '`' => return Err(Unselectable::NotPlain("an expansion")),
            '#' if current.is_none() => return Err(Unselectable::NotPlain("a comment")),
            _ => {}
        }
        let (text, _) = current.get_or_insert_with(|| (String::new(), i));
        match c {
            '\'' => loop {
                match chars.next() {
                    Some((_, '\'')) => break,
                    Some((_, c)) => text.push(c),
                    None => return Err(Unselectable::NotPlain("an unclosed quote")),
                }
            },
            '"' => loop {
                match chars.next() {
                    Some((_, '"')) => break,
                    Some((_, '$' | '`')) => return Err(Unselectable::NotPlain("an expansion")),
                    Some((_, '\\')) => match chars.next() {
                        Some((_, c @ ('"' | '\\'))) => text.push(c),
                        Some((_, c)) => {
                            text.push('\\');
                            text.push(c);
                        }
                        None => return Err(Unselectable::NotPlain("an unclosed quote")),
                    },
                    Some((_, c)) => text.push(c),
                    None => return Err(Unselectable::NotPlain("an unclosed quote")),
                }
            },
            '\\' => match chars.next() {
                Some((_, '\n')) => {}
                Some((_, c)) => text.push(c),
                None => {}
            },
            c => text.push(c),
        }
    }
    if let Some((text, start)) = current {
        out.push(Word { text, span: (start, run.len()) });
    }
    Ok(out)
}

/// `s` quoted for a POSIX shell, and for Python's `shlex.split` (which
/// pytest applies to `PYTEST_ADDOPTS`): bare when every character is safe.
pub(crate) fn quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./:=+,@%".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r#"'"'"'"#))
}

/// The runner a command starts and where its own arguments begin.
#[derive(Clone, Copy)]
struct Call {
    runner: Runner,
    args: usize,
    /// Which JavaScript runner, for [`Runner::Js`].
    js: JsRunner,
}

/// The JavaScript runners, each with its own way of selecting by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JsRunner {
    /// jest: `-t`.
    Jest,
    /// vitest: `-t`.
    Vitest,
    /// mocha: `--grep`, over the describe names and the test's, spaced.
    Mocha,
    /// `node --test`: `--test-name-pattern`, before the files.
    Node,
}

fn invocation(words: &[Word]) -> Result<Call, Unselectable> {
    let mut i = 0;
    // `VAR=value` assignments before the program.
    while words.get(i).is_some_and(|w| is_assignment(&w.text)) {
        i += 1;
    }
    let Some(first) = words.get(i) else { return Err(Unselectable::NotARunner(String::new())) };
    let word = |k: usize| words.get(k).map(|w| w.text.as_str());
    let program = first.text.rsplit('/').next().unwrap_or(&first.text);
    let call = |runner, args| Ok(Call { runner, args, js: JsRunner::Jest });
    match program {
        "pytest" | "py.test" => call(Runner::Pytest, i + 1),
        p if is_python(p) && word(i + 1) == Some("-m") && word(i + 2) == Some("pytest") => call(Runner::Pytest, i + 3),
        "uv" | "poetry" | "pipenv" | "pdm" | "hatch" if word(i + 1) == Some("run") => {
            let rest = invocation(&words[i + 2..]).map_err(|_| Unselectable::NotARunner(first.text.clone()))?;
            if rest.runner != Runner::Pytest {
                return Err(Unselectable::NotARunner(first.text.clone()));
            }
            call(Runner::Pytest, i + 2 + rest.args)
        }
        "cargo" => {
            let mut k = i + 1;
            if word(k).is_some_and(|w| w.starts_with('+')) {
                k += 1;
            }
            match word(k) {
                Some("test" | "t") => call(Runner::Cargo, k + 1),
                _ => Err(Unselectable::NotARunner(format!("cargo {}", word(k).unwrap_or("")).trim().to_string())),
            }
        }
        "go" if word(i + 1) == Some("test") => call(Runner::Go, i + 2),
        "jest" => call(Runner::Js, i + 1),
        "mocha" | "_mocha" => Ok(Call { runner: Runner::Js, args: i + 1, js: JsRunner::Mocha }),
        "node" | "nodejs" => {
            // Node's own options, then `--test`; the files come after.
            let mut k = i + 1;
            while word(k).is_some_and(|w| w.starts_with("--") && w != "--test") {
                k += 1;
            }
            match word(k) {
                Some("--test") => Ok(Call { runner: Runner::Js, args: k + 1, js: JsRunner::Node }),
                _ => Err(Unselectable::NotARunner("node without --test".to_string())),
            }
        }
        "vitest" => {
            Ok(Call { runner: Runner::Js, args: i + 1 + usize::from(word(i + 1) == Some("run")), js: JsRunner::Vitest })
        }
        "npx" | "bunx" | "pnpm" | "yarn" => {
            let mut k = i + 1;
            while word(k).is_some_and(|w| matches!(w, "exec" | "--no-install" | "--yes" | "-y" | "--offline")) {
                k += 1;
            }
            match word(k) {
                Some("jest" | "vitest" | "mocha") => {
                    let rest = invocation(&words[k..])?;
                    Ok(Call { runner: Runner::Js, args: k + rest.args, js: rest.js })
                }
                _ => Err(Unselectable::NotARunner(first.text.clone())),
            }
        }
        _ => Err(Unselectable::NotARunner(first.text.clone())),
    }
}

/// The command line `run` with what jest or vitest needs to name every
/// test it runs, passing or failing, when its reporter would not: jest's
/// `--verbose`, vitest's `--reporter=verbose` (their default reporters
/// name no passing test of a file that passes whole). Also through a
/// package script that starts the runner itself, given as the script's
/// arguments as [`select_in`] gives a selection. `None`: nothing to add
/// (another runner, a command of more than one program, a reporter or
/// `--verbose`/`--json` of the user's, on the command line or in the
/// script). What the tests do is not changed: only how they are reported.
pub(crate) fn with_named_tests(run: &str, scripts: &[(String, String)]) -> Option<String> {
    let words = shell_words(run).ok()?;
    let (head, call, args) = match script_run(&words) {
        Some(script) => {
            if script.manager != "npm" && script.dashes {
                return None;
            }
            let s = script_runner(run, &words, &script, scripts).ok()?;
            (s.head, s.call, s.args)
        }
        None => {
            let call = invocation(&words).ok()?;
            (run.trim_end().to_string(), call, words[call.args..].to_vec())
        }
    };
    if call.runner != Runner::Js {
        return None;
    }
    let has = |options: &[&str]| {
        args.iter().any(|w| options.iter().any(|o| w.text == *o || w.text.starts_with(&format!("{o}="))))
    };
    match call.js {
        JsRunner::Jest if !has(&["--verbose", "--json", "--reporters"]) => Some(format!("{head} --verbose")),
        JsRunner::Vitest if !has(&["--reporter"]) => Some(format!("{head} --reporter=verbose")),
        _ => None,
    }
}

/// A package manager's run of a `package.json` script: its manager, its
/// name, where the words after the name start, and whether one is `--`.
struct ScriptRun {
    manager: String,
    name: String,
    rest: usize,
    dashes: bool,
}

/// `npm run [-s] NAME ...`, `npm test`, `pnpm run NAME`, `pnpm test`,
/// `yarn run NAME`, `yarn test`, `bun run NAME` (not `bun test`, bun's
/// own runner).
fn script_run(words: &[Word]) -> Option<ScriptRun> {
    let mut i = 0;
    while words.get(i).is_some_and(|w| is_assignment(&w.text)) {
        i += 1;
    }
    let manager = words.get(i)?.text.rsplit('/').next()?.to_string();
    if !matches!(manager.as_str(), "npm" | "pnpm" | "yarn" | "bun") {
        return None;
    }
    let option = |w: &Word| w.text.starts_with('-') && w.text != "--";
    let mut k = i + 1;
    while words.get(k).is_some_and(option) {
        k += 1;
    }
    let name = match words.get(k)?.text.as_str() {
        "run" | "run-script" => {
            k += 1;
            while words.get(k).is_some_and(option) {
                k += 1;
            }
            words.get(k)?.text.clone()
        }
        "test" | "t" if manager != "bun" => "test".to_string(),
        _ => return None,
    };
    let rest = k + 1;
    let dashes = words[rest.min(words.len())..].iter().any(|w| w.text == "--");
    Some(ScriptRun { manager, name, rest, dashes })
}

/// The selection of a script's runner, given as the script's arguments:
/// npm takes them after `--` (added when missing); pnpm, yarn and bun
/// pass the words after the name on, and a `--` there would reach the
/// runner, which reads what follows it as no option: refused.
fn through_script(
    run: &str,
    words: &[Word],
    script: &ScriptRun,
    scripts: &[(String, String)],
    tests: &[(Runner, String)],
) -> Result<Selection, Unselectable> {
    let ScriptRunner { head, call, args } = script_runner(run, words, script, scripts)?;
    if call.runner != Runner::Js || call.js == JsRunner::Node {
        return Err(Unselectable::NotARunner(format!("{} run {}", script.manager, script.name)));
    }
    if let Some((runner, id)) = tests.iter().find(|(r, _)| *r != Runner::Js) {
        return Err(Unselectable::OtherRunner { id: id.clone(), runner: *runner, command: Runner::Js });
    }
    if script.manager != "npm" && script.dashes {
        return Err(Unselectable::NotPlain("`--` after a pnpm, yarn or bun script's name"));
    }
    let mut ids: Vec<&str> = Vec::new();
    for (_, id) in tests {
        if !ids.contains(&id.as_str()) {
            ids.push(id);
        }
    }
    match call.js {
        JsRunner::Mocha => mocha(&head, &args, &ids),
        _ => js(&head, &args, &ids),
    }
}

/// The runner a package script starts, as the command `run` reaches it.
struct ScriptRunner {
    /// `run`, ready for more arguments to reach the script (npm's `--`
    /// added when missing).
    head: String,
    call: Call,
    /// The runner's arguments: the script's own, then those `run` gives it.
    args: Vec<Word>,
}

/// The runner that `script` (a run of one of `scripts`, in the command
/// `run` of `words`) starts, past a leading `cross-env VAR=value`.
fn script_runner(
    run: &str,
    words: &[Word],
    script: &ScriptRun,
    scripts: &[(String, String)],
) -> Result<ScriptRunner, Unselectable> {
    let said = || Unselectable::NotARunner(format!("{} run {}", script.manager, script.name));
    let text = scripts.iter().find(|(n, _)| *n == script.name).map(|(_, t)| t.as_str()).ok_or_else(said)?;
    let inner = shell_words(text)?;
    // `cross-env TZ=UTC jest`: the variables are set, the runner starts.
    let skip = usize::from(inner.first().is_some_and(|w| w.text == "cross-env"));
    let call = invocation(&inner[skip..]).map_err(|_| said())?;
    let mut args: Vec<Word> = inner[skip + call.args..].to_vec();
    args.extend(words[script.rest.min(words.len())..].iter().filter(|w| w.text != "--").cloned());
    let head = match script.manager.as_str() {
        "npm" if !script.dashes => format!("{} --", run.trim_end()),
        _ => run.trim_end().to_string(),
    };
    Ok(ScriptRunner { head, call, args })
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn is_python(p: &str) -> bool {
    p.strip_prefix("python").is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// How an option's words read: which take the next word as their value.
struct Options {
    /// Short options (a letter) that take a value, attached or next.
    short_values: &'static str,
    /// Short options that take none.
    short_flags: &'static str,
    long_values: &'static [&'static str],
    long_flags: &'static [&'static str],
}

const PYTEST_OPTIONS: Options = Options {
    short_values: "kmpcoWrnP",
    short_flags: "qvxslh",
    long_values: &[
        "--rootdir",
        "--tb",
        "--maxfail",
        "--durations",
        "--durations-min",
        "--basetemp",
        "--confcutdir",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--junitxml",
        "--junit-xml",
        "--junit-prefix",
        "--log-level",
        "--log-file",
        "--log-file-level",
        "--log-cli-level",
        "--log-format",
        "--cov",
        "--cov-report",
        "--cov-config",
        "--cov-fail-under",
        "--import-mode",
        "--override-ini",
        "--config-file",
        "--color",
        "--code-highlight",
        "--capture",
        "--pythonwarnings",
        "--dist",
        "--numprocesses",
        "--timeout",
        "--lfnf",
        "--last-failed-no-failures",
        "--show-capture",
        "--verbosity",
        "--report-log",
        "--html",
    ],
    long_flags: &[
        "--lf",
        "--last-failed",
        "--ff",
        "--failed-first",
        "--nf",
        "--new-first",
        "--sw",
        "--stepwise",
        "--sw-skip",
        "--stepwise-skip",
        "--cache-clear",
        "--exitfirst",
        "--quiet",
        "--verbose",
        "--showlocals",
        "--strict-markers",
        "--strict-config",
        "--strict",
        "--no-header",
        "--no-summary",
        "--disable-warnings",
        "--disable-pytest-warnings",
        "--co",
        "--collect-only",
        "--pyargs",
        "--runxfail",
        "--full-trace",
        "--setup-only",
        "--setup-show",
        "--setup-plan",
        "--doctest-modules",
        "--continue-on-collection-errors",
        "--trace",
        "--pdb",
        "--no-cov",
        "--cov-append",
        "--cov-branch",
        "--keep-duplicates",
        "--noconftest",
        "--force-short-summary",
    ],
};

const CARGO_OPTIONS: Options = Options {
    short_values: "pFjZ",
    short_flags: "qvr",
    long_values: &[
        "--package",
        "--features",
        "--target",
        "--bin",
        "--test",
        "--example",
        "--bench",
        "--jobs",
        "--manifest-path",
        "--profile",
        "--target-dir",
        "--exclude",
        "--color",
        "--message-format",
        "--config",
        "--lockfile-path",
    ],
    long_flags: &[
        "--workspace",
        "--all",
        "--quiet",
        "--verbose",
        "--release",
        "--lib",
        "--bins",
        "--tests",
        "--doc",
        "--benches",
        "--examples",
        "--all-targets",
        "--all-features",
        "--no-default-features",
        "--no-fail-fast",
        "--locked",
        "--offline",
        "--frozen",
        "--no-run",
        "--ignore-rust-version",
        "--future-incompat-report",
        "--timings",
        "--keep-going",
    ],
};

const LIBTEST_OPTIONS: Options = Options {
    short_values: "Z",
    short_flags: "q",
    long_values: &["--test-threads", "--skip", "--format", "--color", "--logfile", "--shuffle-seed"],
    long_flags: &[
        "--exact",
        "--nocapture",
        "--no-capture",
        "--show-output",
        "--ignored",
        "--include-ignored",
        "--quiet",
        "--list",
        "--bench",
        "--test",
        "--force-run-in-process",
        "--report-time",
        "--ensure-time",
        "--shuffle",
    ],
};

/// The indices (into `words`) of the positional words among `words`: not
/// an option nor an option's value. `Err` names an unknown option followed
/// by a word, which may be its value or a positional.
fn positionals(words: &[Word], options: &Options) -> Result<Vec<usize>, Unselectable> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].text.as_str();
        let next_is_word = words.get(i + 1).is_some_and(|n| !n.text.starts_with('-'));
        if w == "-" || !w.starts_with('-') {
            out.push(i);
        } else if w.starts_with("--") {
            if !w.contains('=') && options.long_values.contains(&w) {
                i += 1;
            } else if !w.contains('=') && !options.long_flags.contains(&w) && next_is_word {
                return Err(Unselectable::Ambiguous(w.to_string()));
            }
        } else {
            // A cluster of short options: the first that takes a value
            // takes the rest of the word, or the next word.
            for (k, c) in w.char_indices().skip(1) {
                if options.short_values.contains(c) {
                    if k + c.len_utf8() == w.len() {
                        i += 1;
                    }
                    break;
                }
                if !options.short_flags.contains(c) && next_is_word && !c.is_ascii_digit() {
                    return Err(Unselectable::Ambiguous(w.to_string()));
                }
            }
        }
        i += 1;
    }
    Ok(out)
}

/// `run` without the words at `drop`, and with `added` at its end.
fn rebuilt(run: &str, words: &[Word], drop: &[usize], added: &[String]) -> String {
    let mut out = String::new();
    let mut from = 0;
    for &d in drop {
        let (start, end) = words[d].span;
        out.push_str(run[from..start].trim_end());
        from = end;
    }
    out.push_str(&run[from..]);
    let mut out = out.trim_end().to_string();
    for a in added {
        out.push(' ');
        out.push_str(a);
    }
    out
}

fn pytest(
    run: &str,
    words: &[Word],
    args: usize,
    ids: &[&str],
    inherited: &dyn Fn(&str) -> Option<String>,
) -> Result<Selection, Unselectable> {
    let quoted: Vec<String> = ids.iter().map(|id| quote(id)).collect();
    let paths: Vec<usize> = positionals(&words[args..], &PYTEST_OPTIONS)?.into_iter().map(|p| p + args).collect();
    let theirs = inherited(PYTEST_ADDOPTS).filter(|v| !v.trim().is_empty());
    if let Some(theirs) = &theirs
        && let Ok(w) = shell_words(theirs)
        && !positionals(&w, &PYTEST_OPTIONS)?.is_empty()
    {
        return Err(Unselectable::Selects(format!("{PYTEST_ADDOPTS}={theirs}")));
    }
    if paths.is_empty() {
        let ours = format!("{PYTEST_REPORT} {}", quoted.join(" "));
        let value = match theirs {
            Some(theirs) => format!("{ours} {theirs}"),
            None => ours,
        };
        return Ok(Selection { env: vec![(PYTEST_ADDOPTS.to_string(), value)], run: None });
    }
    // The command's paths would collect their every test again: the node
    // ids replace them.
    Ok(Selection { env: Vec::new(), run: Some(rebuilt(run, words, &paths, &quoted)) })
}

fn go(args: &[Word], ids: &[&str], inherited: &dyn Fn(&str) -> Option<String>) -> Result<Selection, Unselectable> {
    let selects = |w: &str| {
        let w = w.trim_start_matches('-');
        w == "run" || w.starts_with("run=") || w == "test.run" || w.starts_with("test.run=")
    };
    if let Some(w) = args.iter().find(|w| w.text.starts_with('-') && selects(&w.text)) {
        return Err(Unselectable::Selects(w.text.clone()));
    }
    let theirs = inherited(GOFLAGS).filter(|v| !v.trim().is_empty());
    if let Some(w) = theirs.as_deref().and_then(|t| t.split_whitespace().find(|w| selects(w))) {
        return Err(Unselectable::Selects(format!("{GOFLAGS}: {w}")));
    }
    let mut names: Vec<&str> = Vec::new();
    for id in ids {
        let top = id.split('/').next().unwrap_or(id);
        // Test names are identifiers: nothing to escape in the pattern.
        if top.is_empty() || !top.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(Unselectable::Id { id: id.to_string(), why: "a go test's name is an identifier" });
        }
        if !names.contains(&top) {
            names.push(top);
        }
    }
    let ours = format!("{GO_VERBOSE} -run=^({})$", names.join("|"));
    let value = match theirs {
        Some(theirs) => format!("{ours} {theirs}"),
        None => ours,
    };
    Ok(Selection { env: vec![(GOFLAGS.to_string(), value)], run: None })
}

fn cargo(run: &str, words: &[Word], args: usize, ids: &[&str]) -> Result<Selection, Unselectable> {
    for id in ids {
        // A doc test's id (`src/lib.rs - add (line 3)`) is libtest's too.
        let doc = id.contains(" - ") && id.ends_with(')') && id.contains("(line ");
        if (id.contains(char::is_whitespace) && !doc) || id.is_empty() {
            return Err(Unselectable::Id { id: id.to_string(), why: "a Rust test's name has no spaces" });
        }
    }
    let split = words[args..].iter().position(|w| w.text == "--").map(|p| p + args);
    let cargo_end = split.unwrap_or(words.len());
    let mut drop: Vec<usize> =
        positionals(&words[args..cargo_end], &CARGO_OPTIONS)?.into_iter().map(|p| p + args).collect();
    let mut added: Vec<String> = Vec::new();
    match split {
        Some(s) => {
            let libtest = &words[s + 1..];
            drop.extend(positionals(libtest, &LIBTEST_OPTIONS)?.into_iter().map(|p| p + s + 1));
            if !libtest.iter().any(|w| w.text == "--exact") {
                added.push("--exact".into());
            }
        }
        None => added.extend(["--".to_string(), "--exact".to_string()]),
    }
    added.extend(ids.iter().map(|id| quote(id)));
    Ok(Selection { env: Vec::new(), run: Some(rebuilt(run, words, &drop, &added)) })
}

/// File extensions of jest's and vitest's test files.
const JS_FILES: [&str; 8] = [".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts"];

fn js(run: &str, args: &[Word], ids: &[&str]) -> Result<Selection, Unselectable> {
    if let Some(w) = args.iter().find(|w| {
        let t = w.text.as_str();
        t == "-t" || t.starts_with("-t=") || t == "--testNamePattern" || t.starts_with("--testNamePattern=")
    }) {
        return Err(Unselectable::Selects(w.text.clone()));
    }
    let names: Vec<String> = ids
        .iter()
        .map(|id| {
            let mut parts: Vec<&str> = id.split(" > ").collect();
            // vitest names the file first.
            if parts.len() > 1 && JS_FILES.iter().any(|e| parts[0].ends_with(e)) {
                parts.remove(0);
            }
            regex_escaped(&parts.join(" "))
        })
        .collect();
    let pattern = format!("^(?:{})$", names.join("|"));
    Ok(Selection { env: Vec::new(), run: Some(format!("{} -t {}", run.trim_end(), quote(&pattern))) })
}

/// mocha: `--grep` over each test's full title (its `describe` names and
/// its own, spaced).
fn mocha(run: &str, args: &[Word], ids: &[&str]) -> Result<Selection, Unselectable> {
    if let Some(w) = args.iter().find(|w| {
        let t = w.text.as_str();
        ["-g", "--grep", "-f", "--fgrep"]
            .iter()
            .any(|o| t == *o || t.strip_prefix(o).is_some_and(|r| r.starts_with('=')))
    }) {
        return Err(Unselectable::Selects(w.text.clone()));
    }
    let names: Vec<String> = ids.iter().map(|id| regex_escaped(&id.replace(" > ", " "))).collect();
    let pattern = format!("^(?:{})$", names.join("|"));
    Ok(Selection { env: Vec::new(), run: Some(format!("{} --grep {}", run.trim_end(), quote(&pattern))) })
}

/// `node --test`: `--test-name-pattern` right after `--test` (node reads
/// the words after the files as more files). Node 20 matches a test's own
/// name, later versions its suites' names and its own, spaced: the
/// pattern takes both.
fn node(run: &str, test: &Word, args: &[Word], ids: &[&str]) -> Result<Selection, Unselectable> {
    if let Some(w) =
        args.iter().find(|w| w.text.starts_with("--test-name-pattern") || w.text.starts_with("--test-skip-pattern"))
    {
        return Err(Unselectable::Selects(w.text.clone()));
    }
    let mut names: Vec<String> = Vec::new();
    for id in ids {
        for name in [id.rsplit(" > ").next().unwrap_or(id).to_string(), id.replace(" > ", " ")] {
            let name = regex_escaped(&name);
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let option = format!("--test-name-pattern={}", quote(&format!("^(?:{})$", names.join("|"))));
    let at = test.span.1;
    Ok(Selection { env: Vec::new(), run: Some(format!("{} {option}{}", &run[..at], &run[at..])) })
}

/// `s` matched literally by a JavaScript regular expression (also under
/// the `u` flag, which refuses needless escapes).
fn regex_escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\^$.*+?()[]{}|/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jest_and_vitest_are_asked_to_name_every_test_unless_the_user_chose_a_reporter() {
        let scripts =
            [("test".to_string(), "vitest run".to_string()), ("jt".to_string(), "cross-env TZ=UTC jest".to_string())];
        let named = |run: &str| with_named_tests(run, &scripts);
        assert_eq!(named("npx jest --coverage").as_deref(), Some("npx jest --coverage --verbose"));
        assert_eq!(named("vitest run src").as_deref(), Some("vitest run src --reporter=verbose"));
        assert_eq!(named("npm test").as_deref(), Some("npm test -- --reporter=verbose"));
        assert_eq!(named("npm run --silent jt -- -t x").as_deref(), Some("npm run --silent jt -- -t x --verbose"));
        assert_eq!(named("pnpm run jt").as_deref(), Some("pnpm run jt --verbose"));
        for mine in [
            "npx jest --verbose=false",
            "jest --json",
            "vitest run --reporter=dot",
            "npm run --silent test -- --reporter verbose",
            "pnpm run jt -- -t x",
            "mocha",
            "pytest -q",
            "npm run lint",
            "vitest run | tee out",
        ] {
            assert_eq!(named(mine), None, "{mine}");
        }
    }

    fn none(_: &str) -> Option<String> {
        None
    }

    fn ids(runner: Runner, ids: &[&str]) -> Vec<(Runner, String)> {
        ids.iter().map(|id| (runner, id.to_string())).collect()
    }

    fn env(name: &str, value: &str) -> Vec<(String, String)> {
        vec![(name.to_string(), value.to_string())]
    }

    #[test]
    fn pytest_node_ids_go_in_pytest_addopts_quoted_for_shlex() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("pytest -q", &["tests/t.py::test_a"], "-rfEp tests/t.py::test_a"),
            ("python3 -m pytest", &["t.py::TestA::test_b", "t.py::test_c"], "-rfEp t.py::TestA::test_b t.py::test_c"),
            ("uv run pytest -x", &["t.py::test_p[1-2]"], "-rfEp 't.py::test_p[1-2]'"),
            ("PYTHONPATH=src pytest -k 'not slow'", &["t.py::test_p[a b]"], "-rfEp 't.py::test_p[a b]'"),
            ("pytest", &["t.py::test_p[it's]"], r#"-rfEp 't.py::test_p[it'"'"'s]'"#),
            ("pytest --tb short -p no:randomly", &["t.py::test_a"], "-rfEp t.py::test_a"),
            ("pytest -q", &["t.py::test_a", "t.py::test_a"], "-rfEp t.py::test_a"),
        ];
        for (run, tests, value) in cases {
            let got = select(run, &none, &ids(Runner::Pytest, tests));
            assert_eq!(got, Ok(Selection { env: env("PYTEST_ADDOPTS", value), run: None }), "{run}");
        }
        let theirs = |_: &str| Some("--tb=short".to_string());
        let got = select("pytest", &theirs, &ids(Runner::Pytest, &["t.py::test_a"])).expect("selected");
        assert_eq!(got.env, env("PYTEST_ADDOPTS", "-rfEp t.py::test_a --tb=short"));
    }

    #[test]
    fn a_pytest_command_naming_paths_runs_the_node_ids_instead() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("pytest tests", &["tests/t.py::test_a"], "pytest tests/t.py::test_a"),
            ("pytest -q tests/ -x", &["tests/t.py::test_a"], "pytest -q -x tests/t.py::test_a"),
            (
                "python -m pytest -k fast tests/unit tests/it",
                &["tests/unit/t.py::test_p[a b]"],
                "python -m pytest -k fast 'tests/unit/t.py::test_p[a b]'",
            ),
            ("pytest --rootdir . 'tests dir'", &["tests dir/t.py::x"], "pytest --rootdir . 'tests dir/t.py::x'"),
        ];
        for (run, tests, instead) in cases {
            let got = select(run, &none, &ids(Runner::Pytest, tests));
            assert_eq!(got, Ok(Selection { env: vec![], run: Some(instead.to_string()) }), "{run}");
        }
    }

    #[test]
    fn go_tests_by_their_top_level_name_in_goflags() {
        let tests = ids(Runner::Go, &["TestBad", "TestBad/neg", "TestÄ"]);
        let got = select("go test ./...", &none, &tests).expect("selected");
        assert_eq!(got, Selection { env: env("GOFLAGS", "-v -run=^(TestBad|TestÄ)$"), run: None });
        let theirs = |_: &str| Some("-mod=vendor".to_string());
        let got = select("go test -count=1 ./pkg", &theirs, &ids(Runner::Go, &["TestA"])).expect("selected");
        assert_eq!(got.env, env("GOFLAGS", "-v -run=^(TestA)$ -mod=vendor"));
    }

    #[test]
    fn cargo_test_by_exact_libtest_filters() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("cargo test", &["tests::add"], "cargo test -- --exact tests::add"),
            ("cargo test -q", &["a::b", "c"], "cargo test -q -- --exact a::b c"),
            ("cargo test --workspace -p core", &["x::y"], "cargo test --workspace -p core -- --exact x::y"),
            ("cargo test -- --nocapture", &["x"], "cargo test -- --nocapture --exact x"),
            ("cargo test parse -- --exact", &["parse::a"], "cargo test -- --exact parse::a"),
            ("cargo test -- parse --test-threads 1", &["parse::a"], "cargo test -- --test-threads 1 --exact parse::a"),
            (
                "cargo +nightly t --features 'a b' slow",
                &["slow::x"],
                "cargo +nightly t --features 'a b' -- --exact slow::x",
            ),
            (
                "RUST_BACKTRACE=0 cargo test --doc",
                &["src/lib.rs - add (line 3)"],
                "RUST_BACKTRACE=0 cargo test --doc -- --exact 'src/lib.rs - add (line 3)'",
            ),
        ];
        for (run, tests, instead) in cases {
            let got = select(run, &none, &ids(Runner::Cargo, tests));
            assert_eq!(got, Ok(Selection { env: vec![], run: Some(instead.to_string()) }), "{run}");
        }
    }

    #[test]
    fn jest_and_vitest_by_a_full_name_pattern() {
        let cases: &[(&str, &[&str], &str)] = &[
            ("npx jest", &["cart > when empty > totals zero"], "npx jest -t '^(?:cart when empty totals zero)$'"),
            ("npx vitest run", &["vt/calc.test.js > math > bad"], "npx vitest run -t '^(?:math bad)$'"),
            ("jest src", &["adds (1+1)", "a.b | c"], r"jest src -t '^(?:adds \(1\+1\)|a\.b \| c)$'"),
            ("pnpm exec vitest --run", &["it's $5"], r#"pnpm exec vitest --run -t '^(?:it'"'"'s \$5)$'"#),
        ];
        for (run, tests, instead) in cases {
            let got = select(run, &none, &ids(Runner::Js, tests));
            assert_eq!(got, Ok(Selection { env: vec![], run: Some(instead.to_string()) }), "{run}");
        }
    }

    #[test]
    fn what_cannot_be_selected_and_why() {
        let py = ids(Runner::Pytest, &["t.py::test_a"]);
        type Case = (&'static str, Vec<(Runner, String)>, Unselectable);
        let cases: Vec<Case> = vec![
            ("pytest", vec![], Unselectable::NoTests),
            ("ruff check . && pytest", py.clone(), Unselectable::NotPlain("`&&` or a background job")),
            ("pytest | tee out", py.clone(), Unselectable::NotPlain("a pipe or `||`")),
            ("pytest; true", py.clone(), Unselectable::NotPlain("several commands")),
            ("pytest > out", py.clone(), Unselectable::NotPlain("a redirection")),
            ("pytest $ARGS", py.clone(), Unselectable::NotPlain("an expansion")),
            ("pytest \"$ARGS\"", py.clone(), Unselectable::NotPlain("an expansion")),
            ("pytest 'x", py.clone(), Unselectable::NotPlain("an unclosed quote")),
            ("make test", py.clone(), Unselectable::NotARunner("make".into())),
            ("npm test", py.clone(), Unselectable::NotARunner("npm run test".into())),
            ("cargo nextest run", ids(Runner::Cargo, &["a"]), Unselectable::NotARunner("cargo nextest".into())),
            (
                "cargo test",
                py.clone(),
                Unselectable::OtherRunner { id: "t.py::test_a".into(), runner: Runner::Pytest, command: Runner::Cargo },
            ),
            ("pytest --weird tests", py.clone(), Unselectable::Ambiguous("--weird".into())),
            ("go test -run TestA ./...", ids(Runner::Go, &["TestA"]), Unselectable::Selects("-run".into())),
            (
                "go test ./...",
                ids(Runner::Go, &["Test A"]),
                Unselectable::Id { id: "Test A".into(), why: "a go test's name is an identifier" },
            ),
            (
                "cargo test",
                ids(Runner::Cargo, &["a b"]),
                Unselectable::Id { id: "a b".into(), why: "a Rust test's name has no spaces" },
            ),
            ("npx jest -t adds", ids(Runner::Js, &["adds"]), Unselectable::Selects("-t".into())),
            (
                "vitest run --testNamePattern=x",
                ids(Runner::Js, &["x"]),
                Unselectable::Selects("--testNamePattern=x".into()),
            ),
        ];
        for (run, tests, why) in cases {
            assert_eq!(select(run, &none, &tests), Err(why), "{run}");
        }
        let theirs = |_: &str| Some("-run=TestB".to_string());
        let got = select("go test", &theirs, &ids(Runner::Go, &["TestA"]));
        assert_eq!(got, Err(Unselectable::Selects("GOFLAGS: -run=TestB".into())));
        let theirs = |_: &str| Some("-x tests".to_string());
        assert!(matches!(select("pytest", &theirs, &py), Err(Unselectable::Selects(_))));
    }

    #[test]
    fn reasons_read_as_sentences() {
        let why = Unselectable::NotPlain("a pipe or `||`").to_string();
        assert!(why.starts_with("the command is not one runner's invocation (a pipe or `||`)"), "{why}");
        assert_eq!(Unselectable::NotARunner("make".into()).to_string().split(' ').next(), Some("`make`"));
    }

    #[test]
    fn quoting_round_trips_through_the_shell_words() {
        for s in ["plain", "a b", "it's", "[x]", "", "a\"b", "\\n"] {
            let w = shell_words(&quote(s)).expect("words");
            assert_eq!(w.iter().map(|w| w.text.as_str()).collect::<Vec<_>>(), [s], "{s}");
        }
    }
}
