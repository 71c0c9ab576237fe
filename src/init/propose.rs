//! The proposal: the `retry-run.toml` text and one line per choice saying
//! why (the interpreter, each check and what its run on the base said, the
//! scope, the agent preset, where task worktrees live). Pure.

use std::fmt::Write;

use super::candidates::Candidate;
use super::detect::Facts;
use super::judge::{BaseSays, judge};
use super::python::{Python, interpreters};
use super::trial::TrialRan;
use crate::project::python_import_root;

/// Directories that usually hold source or tests.
const SOURCE_DIRS: &[&str] = &[
    "src", "lib", "app", "pkg", "cmd", "internal", "crates", "packages", "tests", "test", "spec", "benches", "examples",
];

/// Where the task worktrees of a jest project live: jest skips every file
/// under a path that holds `/.git/`, where they live by default, so its
/// tests would never be found. A directory beside the checkout, named after
/// it, with the reason; `None` when the default serves.
pub(crate) fn worktree_root(f: &Facts) -> Option<(String, String)> {
    if !f.layout.uses_jest() {
        return None;
    }
    let name = std::path::Path::new(&f.root).file_name()?.to_string_lossy().into_owned();
    Some((
        format!("../{name}.retry-run-worktrees"),
        "jest skips every file under a path that holds /.git/, where task worktrees live by default".to_string(),
    ))
}

/// The config text and one line per choice saying why. `tried` holds each
/// candidate with how it ran on the base (`None`: not run, `--no-run`);
/// those that cannot start are left out.
pub(crate) fn propose(
    f: &Facts,
    python: &Python,
    notes: &[String],
    tried: &[(Candidate, Option<TrialRan>)],
) -> (String, Vec<String>) {
    let l = &f.layout;
    let mut why = Vec::new();
    if l.is_python() {
        why.extend(python_lines(f, python));
    }
    why.extend(notes.iter().cloned());
    let kept = [f.root.clone()];
    let checks = judged(tried, &kept, &mut why);
    if tried.is_empty() && !l.is_python() {
        why.push("no project type recognised (pyproject.toml, Cargo.toml, package.json, go.mod): no checks; add [[check]] sections".into());
    }
    let allow = scope_allow(f);
    if allow.is_empty() {
        why.push("no source or test directories found: the scope allows every path".into());
    } else {
        why.push(format!("scope: the source and test directories found ({})", allow.join(", ")));
    }
    let preset = f.agents.first();
    match preset {
        Some(p) => why.push(format!("agent: {p}, the first agent CLI found on PATH ({})", f.agents.join(", "))),
        None => why.push("agent: no agent CLI found on PATH; set [agent] preset or command".into()),
    }
    if let Some((root, reason)) = worktree_root(f) {
        why.push(format!("worktrees: beside the checkout ({root}): {reason}"));
        if l.has("node_modules") {
            why.push("node_modules: shared with each worktree ([worktree] share), which Node would not find beside the checkout".into());
        }
    }
    why.push("every key is documented in docs/config.md".into());
    (render(f, preset, &allow, &checks), why)
}

/// A Python project's lines: its import root and tests, the interpreters
/// passed over and the one chosen.
fn python_lines(f: &Facts, python: &Python) -> Vec<String> {
    let l = &f.layout;
    let mut why = Vec::new();
    let root = match python_import_root(l) {
        Some("src") => "imports from src/ (the checks get it on PYTHONPATH)".to_string(),
        Some(_) => "imports from the root (the checks get it on PYTHONPATH)".to_string(),
        None => "no import root found".to_string(),
    };
    let tests = l.test_paths();
    let tests =
        if tests.is_empty() { "no test directory found".to_string() } else { format!("tests in {}", tests.join(", ")) };
    why.push(format!("Python project: {root}; {tests}"));
    for (i, reason) in &python.passed_over {
        why.push(format!("passed over {} ({}): {reason}", i.run, i.from));
    }
    match (&python.chosen, python.checked) {
        (Some(i), true) => why.push(format!("interpreter: {} ({}), which can import pytest", i.run, i.from)),
        (Some(i), false) => why.push(format!("interpreter: {} ({}), not checked (--no-run)", i.run, i.from)),
        (None, _) if interpreters(f).is_empty() => {
            why.push("no Python interpreter found (.venv, venv, uv, poetry, hatch, python3): no pytest check".into())
        }
        (None, _) => why.push("no interpreter found that can import pytest: no pytest check".into()),
    }
    why
}

/// Each check with the reason it is left out (written commented out), and
/// a line to `why` saying what its run on the base said. `kept`: the paths
/// the sandbox keeps in view (the checkout's root).
fn judged<'c>(
    tried: &'c [(Candidate, Option<TrialRan>)],
    kept: &[String],
    why: &mut Vec<String>,
) -> Vec<(&'c Candidate, Option<String>)> {
    let mut checks = Vec::new();
    for (c, ran) in tried {
        match ran.as_ref().map(|r| judge(c, r)) {
            None => {
                why.push(format!("{}: {} (not run on the base: --no-run)", c.name, c.why));
                checks.push((c, None));
            }
            Some(BaseSays::Keep(line)) => {
                why.push(format!("{line} ({})", c.why));
                checks.push((c, None));
            }
            Some(BaseSays::Leave(line)) => {
                let named = crate::project::hides::hidden(&c.run, kept, |p: &str| {
                    crate::sandbox::launch::visible::is_executable(p)
                });
                let line = match named.first() {
                    Some(h) => format!("{line}; {}", h.advice()),
                    None => line,
                };
                why.push(format!("{line} (written commented out)"));
                checks.push((c, Some(line)));
            }
        }
    }
    checks
}

/// The scope's allow globs: the [`SOURCE_DIRS`] there are, then the
/// packages and test paths not already named.
fn scope_allow(f: &Facts) -> Vec<String> {
    let l = &f.layout;
    let mut allow: Vec<String> = SOURCE_DIRS.iter().filter(|d| l.has(d)).map(|d| format!("{d}/**")).collect();
    for p in l.packages.iter().chain(l.test_paths().iter().filter(|t| l.has(t))) {
        let g = format!("{p}/**");
        if !allow.contains(&g) {
            allow.push(g);
        }
    }
    allow
}

/// The config file's text.
fn render(f: &Facts, preset: Option<&String>, allow: &[String], checks: &[(&Candidate, Option<String>)]) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "# retry-run.toml, written by `retry-run init`. Every key is documented in docs/config.md.");
    let _ = writeln!(t, "max_attempts = 3\n");
    let _ = writeln!(t, "[agent]");
    match preset {
        Some(p) => {
            let _ = writeln!(t, "preset = {p:?}");
        }
        None => {
            let _ = writeln!(t, "# preset = \"claude-code\"   # or codex, aider, gemini, opencode");
        }
    }
    let _ = writeln!(t, "timeout = \"20m\"\n");
    if let Some((root, reason)) = worktree_root(f) {
        let _ = writeln!(t, "[worktree]\n# {reason}:\nroot = {root:?}");
        if f.layout.has("node_modules") {
            let _ = writeln!(
                t,
                "# Beside the checkout, Node finds no node_modules above the worktree: yours reaches it\n# (mounted read-only, or copied once per task):\nshare = [\"node_modules\"]"
            );
        }
        let _ = writeln!(t);
    }
    let _ = writeln!(t, "[scope]");
    let list: Vec<String> = allow.iter().map(|a| format!("{a:?}")).collect();
    let _ = writeln!(t, "allow = [{}]", list.join(", "));
    let _ = writeln!(t, "deny = [\".github/**\"]");
    for (c, left_out) in checks {
        write_check(&mut t, c, left_out.as_deref());
    }
    let _ = writeln!(t, "\n# More checks, the sandbox, the verifier and the retry prompt: see docs/config.md.");
    t
}

/// A `[[check]]` section, commented out with the reason when it is left out.
fn write_check(t: &mut String, c: &Candidate, left_out: Option<&str>) {
    let mut block = format!("[[check]]\nname = {:?}\nrun = {:?}\nkind = {:?}\n", c.name, c.run, c.kind);
    if !c.network.is_empty() {
        let hosts: Vec<String> = c.network.iter().map(|h| format!("{h:?}")).collect();
        let _ = writeln!(block, "network = [{}]", hosts.join(", "));
    }
    match left_out {
        None => {
            let _ = write!(t, "\n{block}");
        }
        Some(reason) => {
            let _ = writeln!(t, "\n# Left out: it failed on the base for a reason of the environment:");
            for l in reason.lines() {
                let _ = writeln!(t, "# {l}");
            }
            for l in block.lines() {
                let _ = writeln!(t, "# {l}");
            }
        }
    }
}
