//! Running one configured check: confined in the worktree, with the
//! variables that make quiet test runners name their tests
//! ([`crate::judge::test_results::runners`]), its output parsed with the
//! diagnostics parsers and enriched from the attempt's files; how a test
//! check runs only the task's targets; and the single runs a self-check
//! and `land` make. The base's runs are in [`super::base`]; an attempt's
//! stages in [`super::stages`].

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::FileReader;
use crate::config::CheckConfig;
use crate::diagnostics::{self, Format};
use crate::enrich::{self, load::load_with};
use crate::git::{Oid, Repo};
use crate::judge::test_results;
use crate::judge::test_results::runners;
use crate::model::{CheckKind, CheckResult, ErrorItem};
use crate::outcome::check::{Baseline, Judging, Parsed, checkout_paths, counted, failure_keys, judge};
use crate::process::{self, Finished, Spec};
use crate::summarize;

/// Bytes of a check's output kept at the head and at the tail.
const KEEP: usize = 2 * 1024 * 1024;
/// Errors with snippets kept per check.
const MAX_ERRORS: usize = 30;
/// The digest's budget, in tokens, before the context's own limits.
const DIGEST_TOKENS: usize = 1500;

/// `path` with the worktree's absolute prefix removed, so the record and
/// the prompt hold no path of this machine.
pub(crate) fn relativize(text: &str, worktree: &Path) -> String {
    let mut out = text.to_string();
    let mut roots = vec![worktree.to_path_buf()];
    if let Ok(c) = std::fs::canonicalize(worktree)
        && c != worktree
    {
        roots.push(c);
    }
    for root in roots {
        let r = root.to_string_lossy();
        out = out.replace(&format!("{r}/"), "").replace(r.as_ref(), ".");
    }
    out
}

/// `PYTHONPATH` with the worktree's Python import root first, so that the
/// attempt's code is imported ahead of site-packages, where an editable
/// install of the user's checkout would otherwise win. Empty for a project
/// that is not Python.
pub(crate) fn import_root_env(worktree: &Path) -> Vec<(String, String)> {
    let Some(root) = crate::project::import_root_of(worktree) else { return Vec::new() };
    let existing = std::env::var("PYTHONPATH").ok();
    vec![("PYTHONPATH".into(), crate::project::python_path(&root.to_string_lossy(), existing.as_deref()))]
}

/// The value a check would get for `name` without retry-run's runner
/// variables: `env`'s, else retry-run's own unless the sandbox drops it.
pub(super) fn inherited<'a>(env: &'a [(String, String)], unset: &'a [String]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| match env.iter().rev().find(|(k, _)| k == name) {
        Some((_, v)) => Some(v.clone()),
        None if unset.iter().any(|u| u == name) => None,
        None => std::env::var(name).ok(),
    }
}

/// `env` with `added` set over it.
pub(super) fn with(env: &[(String, String)], added: &[(String, String)]) -> Vec<(String, String)> {
    env.iter().chain(added).cloned().collect()
}

/// Variables as recorded.
pub(super) fn as_map(vars: &[(String, String)]) -> BTreeMap<String, String> {
    vars.iter().cloned().collect()
}

/// Runs a check once in `worktree`; its output goes to `out_file`.
pub(crate) fn run_once(
    check: &CheckConfig,
    worktree: &Path,
    env: &[(String, String)],
    out_file: &Path,
    confinement: &crate::sandbox::Confinement,
) -> Result<Finished, process::StartError> {
    // jest and vitest name every test they run (docs/honest-success.md, Targets).
    let named = (check.kind != CheckKind::Lint)
        .then(|| test_results::select::with_named_tests(&check.run, &package_scripts(worktree)))
        .flatten();
    let mut spec = Spec::shell(named.as_deref().unwrap_or(&check.run), worktree, check.timeout.value);
    // Each check reaches its own hosts, none by default; the proxy (or, in
    // detect mode, what observes it) logs beside its output.
    let mut confinement = confinement.clone();
    confinement.policy.network = check.network.clone();
    spec.argv = confinement.check_argv(spec.argv, Some(&network_log(out_file)));
    spec.env = env.to_vec();
    spec.env.extend(import_root_env(worktree));
    spec.unset = confinement.unset();
    spec.keep = KEEP;
    spec.grace = Duration::from_secs(2);
    let f = process::run(&spec)?;
    let _ = crate::record::store::write_file(out_file, &f.output.bytes());
    Ok(f)
}

/// The sandbox's log of the run whose output is `out_file`
/// (`<check>.network.jsonl` beside `<check>.out`).
pub(crate) fn network_log(out_file: &Path) -> std::path::PathBuf {
    out_file.with_extension("network.jsonl")
}

/// What detect mode saw the runs whose outputs are `out_files` reach that
/// the other modes would have stopped (or why it could see nothing): one
/// entry for each thing seen, its counts added up over the runs, the first
/// [`crate::sandbox::detect::seen::SEEN_CAP`]. Empty in the other modes, and for
/// runs that were not made (their logs do not exist).
pub(crate) fn network_seen(out_files: &[std::path::PathBuf]) -> Vec<crate::model::NetworkSeen> {
    use crate::sandbox::detect::seen;
    let mut out: Vec<crate::model::NetworkSeen> = Vec::new();
    for s in out_files.iter().flat_map(|f| seen::network_seen(&network_log(f))) {
        if let Some(n) = out.iter_mut().find(|n| n.kind == s.seen && n.what == s.what) {
            n.count += s.count;
        } else if out.len() < seen::SEEN_CAP {
            out.push(crate::model::NetworkSeen { kind: s.seen, what: s.what, count: s.count });
        }
    }
    out
}

/// A note for a check that failed in detect mode where its output shows
/// `sudo` refused for `no_new_privs` (which observing its network use sets
/// for a user other than root), so that neither the agent nor the user
/// takes it for the attempt's doing. Pure.
pub(crate) fn no_new_privs_note(output: &str) -> Option<String> {
    output.to_ascii_lowercase().contains("\"no new privileges\"").then(|| {
        "sudo (or another setuid program) was refused here by retry-run, not by the attempt: detect mode observes a check's network use with `no_new_privs` set unless retry-run runs as root, so setuid programs gain no privileges; with `[sandbox] mode = \"off\"` nothing is observed and they do".to_string()
    })
}

/// Parses a finished check: failures with their keys, the digest, and the
/// errors enriched from the files `read` gives (as the attempt left them).
pub(crate) fn parse(check: &CheckConfig, f: &Finished, worktree: &Path, repo: &Repo, read: FileReader<'_>) -> Parsed {
    let bytes = f.output.bytes();
    let raw = String::from_utf8_lossy(&bytes);
    let text = relativize(&raw, worktree);
    let status = CheckExit { exit_code: f.exit_code, signal: f.signal, timed_out: f.timed_out, duration: f.duration };
    parse_output(check, &text, status, (worktree, repo.workdir()), read)
}

/// How a check's process ended.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CheckExit {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
}

/// [`parse`] of a check's output `text` (its worktree paths already made
/// relative), run in `worktree` of the checkout `checkout`: everything that
/// judging a check reads from its output.
pub(crate) fn parse_output(
    check: &CheckConfig,
    text: &str,
    f: CheckExit,
    (worktree, checkout): (&Path, Option<&Path>),
    read: FileReader<'_>,
) -> Parsed {
    // Every reader sees the output without the colours a tool forced.
    let text = &*crate::text::plain(text);
    let found = diagnostics::parse_as(Format::from_name(&check.format.0), text);
    // Locations (traceback frames, diagnostics) in the user's checkout: the
    // check ran the checkout's code. A path merely named in a message (a
    // refused write) is not a location.
    let tested_checkout = match checkout {
        Some(checkout) => {
            let located: Vec<&str> =
                found.iter().filter_map(|d| d.path.as_deref()).filter(|p| p.starts_with('/')).collect();
            let (checkouts, worktrees) = (both_spellings(checkout), both_spellings(worktree));
            let c: Vec<&str> = checkouts.iter().map(String::as_str).collect();
            let w: Vec<&str> = worktrees.iter().map(String::as_str).collect();
            checkout_paths(&located.join("\n"), &c, &w)
        }
        None => Vec::new(),
    };
    let root = Path::new(".");
    let files = enrich::files_to_read(&found, root, root);
    let sources = load_with(&files, read);
    let enriched = enrich::enrich(found, &sources, root, root);
    let digest = summarize::summarize(text.as_bytes());
    let digest_text = summarize::render::render(&digest, DIGEST_TOKENS);
    let tests = test_results::read(text);
    let runner_failure = if f.timed_out || !runs_tests(check) {
        None
    } else {
        test_results::runner_failure(text, f.exit_code, f.signal)
    };
    let mut digest_lines: Vec<String> = digest_text.lines().map(str::to_string).collect();
    if let Some(r) = &runner_failure {
        digest_lines.insert(0, r.line());
    }
    let failures = failure_keys(&digest.failed_tests.entries, &enriched);
    let errors = counted(&enriched)
        .take(MAX_ERRORS)
        .map(|e| ErrorItem {
            tool: e.diagnostic.tool.to_string(),
            path: e.diagnostic.path.clone().unwrap_or_default(),
            line: e.diagnostic.line,
            code: e.diagnostic.code.clone(),
            message: crate::text::clip(e.diagnostic.message.lines().next().unwrap_or(""), 300, "...").into_owned(),
            scope: e.scope.as_ref().map(|s| s.qualified_name.clone()),
            snippet: e.snippet.as_deref().map(String::from),
        })
        .collect();
    Parsed {
        exit_code: f.exit_code,
        signal: f.signal,
        timed_out: f.timed_out,
        duration_ms: f.duration.as_millis() as u64,
        failures,
        digest: digest_lines,
        output_lines: digest.lines as usize,
        errors,
        tests,
        tested_checkout,
        runner_failure,
    }
}

/// Whether a check runs tests, so that a runner-level failure in its output
/// decides its verdict: its kind is `test`, or its command starts a test
/// runner. A lint or build check that fails to compile is judged by its
/// diagnostics instead.
fn runs_tests(check: &CheckConfig) -> bool {
    check.kind == CheckKind::Test
        || ["pytest", "cargo test", "cargo nextest", "go test", "jest", "vitest"].iter().any(|r| check.run.contains(r))
}

/// A directory as given and as resolved, without a trailing `/`.
fn both_spellings(dir: &Path) -> Vec<String> {
    let mut out = vec![dir.to_string_lossy().trim_end_matches('/').to_string()];
    if let Ok(c) = std::fs::canonicalize(dir) {
        let c = c.to_string_lossy().trim_end_matches('/').to_string();
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// A run of a check on only the task's targets
/// ([`crate::judge::test_results::select`]): the variables to add, the
/// command to run instead, and the targets it runs.
pub(crate) struct TargetsRun {
    pub env: Vec<(String, String)>,
    pub run: Option<String>,
    pub tests: Vec<String>,
}

/// What a check's command runs with: the variables it inherits, and the
/// project's `package.json` scripts ([`package_scripts`]).
pub(super) type Surroundings<'a> = (&'a dyn Fn(&str) -> Option<String>, &'a [(String, String)]);

/// How `check` runs only those of the task's `targets` it reported
/// failing on the base ([`test_results::select`]), or `None` when it
/// reported none there or its command cannot be narrowed (it has no
/// targets stage then). Its runner is the one `select` finds in the
/// command.
pub(super) fn targets_run(
    check: &CheckConfig,
    (inherited, scripts): Surroundings<'_>,
    targets: &[String],
    base: Option<&Baseline>,
) -> Option<TargetsRun> {
    let base = base?;
    let mine: Vec<String> = targets
        .iter()
        .filter(|t| base.failures.iter().any(|f| f.test && test_results::is_target(&f.key, t)))
        .cloned()
        .collect();
    selection(check, (inherited, scripts), mine)
}

/// The scripts of the `package.json` in `wt` (name, text); none when it
/// has none or cannot be read (then no package script is narrowed).
pub(super) fn package_scripts(wt: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(wt.join("package.json")) else { return Vec::new() };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else { return Vec::new() };
    json.get("scripts")
        .and_then(|s| s.as_object())
        .map(|s| s.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
        .unwrap_or_default()
}

/// How `check` runs only `mine`, or `None` when there are none, it is a
/// lint check, or its command cannot be narrowed.
pub(super) fn selection(
    check: &CheckConfig,
    (inherited, scripts): Surroundings<'_>,
    mine: Vec<String>,
) -> Option<TargetsRun> {
    use test_results::Runner;
    use test_results::select::{Unselectable, select_in};
    if mine.is_empty() || check.kind == CheckKind::Lint {
        return None;
    }
    for runner in [Runner::Pytest, Runner::Go, Runner::Cargo, Runner::Js] {
        let tests: Vec<(Runner, String)> = mine.iter().map(|t| (runner, t.clone())).collect();
        match select_in(&check.run, inherited, scripts, &tests) {
            Ok(sel) => return Some(TargetsRun { env: sel.env, run: sel.run, tests: mine }),
            Err(Unselectable::OtherRunner { .. }) => continue,
            Err(_) => return None,
        }
    }
    None
}

/// A self-check's run of `check` (docs/mcp.md): once, confined as the
/// real gate runs it, with the same runner variables, its output in
/// `out_file`, judged against the base. No flaky re-runs: the real gate
/// does those.
pub(crate) fn run_and_judge(
    repo: &Repo,
    check: &CheckConfig,
    (wt, env, confinement): (&Path, &[(String, String)], &crate::sandbox::Confinement),
    out_file: &Path,
    (base, how, read): (Option<&Baseline>, Judging<'_>, FileReader<'_>),
) -> Result<CheckResult, process::StartError> {
    let unset = confinement.unset();
    let added = runners::runner_env(&inherited(env, &unset));
    let f = run_once(check, wt, &with(env, &added), out_file, confinement)?;
    let parsed = parse(check, &f, wt, repo, read);
    Ok(judge(check, &parsed, base, how, 1, false))
}

/// A run of `check` on a base (commit `base`, checked out in `wt`), once,
/// confined and with the runner variables as the checks on a task's base
/// get them, its output in `out_file`: what the checks on the replayed tree
/// are judged against (`retry-run land`). Not cached: the base is a
/// branch's tip.
pub(crate) fn base_run(
    repo: &Repo,
    check: &CheckConfig,
    (wt, env, confinement): (&Path, &[(String, String)], &crate::sandbox::Confinement),
    out_file: &Path,
    base: Oid,
) -> Result<Baseline, process::StartError> {
    let added = runners::runner_env(&inherited(env, &confinement.unset()));
    let f = run_once(check, wt, &with(env, &added), out_file, confinement)?;
    let p = parse(check, &f, wt, repo, &|rel| std::fs::read(wt.join(rel)).ok());
    Ok(Baseline::of(&check.name, &check.run, base.to_string(), &p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_detect_mode_saw_over_a_check_s_runs_is_added_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (first, rerun, never) =
            (dir.path().join("t.out"), dir.path().join("t.rerun-1.out"), dir.path().join("t.rerun-2.out"));
        let line = |seen: &str, what: &str, count: u64| {
            serde_json::json!({"seen": seen, "what": what, "count": count}).to_string()
        };
        let tcp = "TCP connect to 127.0.0.1:9 by python3";
        std::fs::write(
            network_log(&first),
            [line("network", tcp, 2), line("allowed", "TCP connect to 127.0.0.1:80 by curl", 1)].join("\n"),
        )
        .expect("write");
        std::fs::write(
            network_log(&rerun),
            [line("network", tcp, 1), line("network", "TCP listen on 0.0.0.0:8080 by node", 1)].join("\n"),
        )
        .expect("write");
        assert_eq!(network_log(&rerun), dir.path().join("t.rerun-1.network.jsonl"));
        let seen = network_seen(&[first, rerun, never]);
        let got: Vec<(&str, &str, u64)> = seen.iter().map(|n| (n.kind.as_str(), n.what.as_str(), n.count)).collect();
        assert_eq!(got, [("network", tcp, 3), ("network", "TCP listen on 0.0.0.0:8080 by node", 1)]);
    }

    #[test]
    fn sudo_refused_for_no_new_privs_is_said_to_be_retry_run_s_doing() {
        let sudo = "sudo: The \"no new privileges\" flag is set, which prevents sudo from running as root.\n";
        let note = no_new_privs_note(sudo).expect("a note");
        assert!(note.contains("not by the attempt") && note.contains("mode = \"off\""), "{note}");
        assert!(no_new_privs_note("sudo: a password is required\n").is_none());
    }
}
