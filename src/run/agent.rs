//! The agent: started confined in the worktree with the prompt, its output
//! kept and read (usage, final message), and what it left in the worktree
//! that is not part of the change moved out into the record.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::RunError;
use super::agent_start;
use super::attempt::{Attempt, Carried, Fixed};
use super::gates::checks::relativize;
use super::recorder::Recorder;
use crate::config::CommandSpec;
use crate::git::{Oid, Repo};
use crate::hash::sha256_hex;
use crate::model::AgentRun;
use crate::process::{self, Spec};
use crate::record::Event;
use crate::record::layout::AttemptDir;
use crate::record::store::write_file;
use crate::sandbox::{self, Effective};

use super::leftovers::Leftovers;
use super::self_checks::{MCP_COMMAND_VAR, SelfCheckDesk, open_self_checks};

/// The agent of attempt `a`, run to its end with the prompt at
/// `prompt_path`; its run goes into `a.record.agent`, the environment it
/// shares with the checks into `a.env`. A run its model provider failed
/// is run again from the attempt's start ([`super::transient`]).
pub(super) fn run_agent(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    carried: Carried<'_>,
    a: &mut Attempt,
    prompt_path: &Path,
) -> Result<(), RunError> {
    let delivered = deliver_prompt(t, rec, a.n, prompt_path)?;
    let net_log = a.dir.path().join(NET_LOG);
    let mut run = 1;
    loop {
        let (agent_run, self_checks) = run_once(t, rec, carried, a, prompt_path, &delivered)?;
        let Some(why) = super::transient::failure(t, &agent_run, &a.dir.agent_out(), &net_log) else {
            a.record.agent = Some(agent_run);
            a.record.self_checks = self_checks;
            return Ok(());
        };
        super::transient::run_again(t, rec, carried, a, (run, &agent_run, why), &net_log)?;
        run += 1;
    }
}

/// One run of the agent of attempt `a`: started with its self-check
/// server wired, read when it ends; the environment it shares with the
/// checks goes into `a.env`.
fn run_once(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    carried: Carried<'_>,
    a: &mut Attempt,
    prompt_path: &Path,
    delivered: &[u8],
) -> Result<(AgentRun, Vec<crate::model::SelfCheck>), RunError> {
    let n = a.n;
    let confinement = &a.confinement;
    let vars = agent_vars(t, a, prompt_path, delivered);
    let mut env = agent_env(t, n, prompt_path, confinement);
    // The checks, the real ones and the self-checks, get the agent's
    // environment without the server's command.
    let checks_env = env.clone();
    let mut argv = agent_argv(&t.plan.agent_cmd, &vars);
    let desk = open_self_checks(t, carried, a, &checks_env)?;
    let wired = match &desk {
        Some(d) => wire_self_checks(t, a, d, &mut argv, &mut env)?,
        None => Vec::new(),
    };
    t.progress.phase("agent running");
    let config = &t.plan.config;
    let spec = Spec {
        argv: confinement.agent_argv(argv, Some(&a.dir.path().join(NET_LOG))),
        cwd: t.wt.clone(),
        env: env.clone(),
        unset: confinement.unset(),
        stdin: config.agent.stdin.then(|| delivered.to_vec()),
        timeout: config.agent.timeout.value,
        grace: config.agent.kill_grace.value,
        keep: 64 * 1024,
    };
    let mut start_error = None;
    let agent_started = SystemTime::now();
    let ran = process::run_with(&spec, &mut |pgid| {
        let started = Event::AgentStarted { pgid: pgid as i64, sandbox: Some(confinement.record()) };
        if let Err(e) = rec.event(Some(n), started) {
            start_error = Some(e);
        }
    });
    let self_checks = desk.map(|d| d.finish()).unwrap_or_default();
    unwire(&wired, &t.wt);
    if let Some(e) = start_error {
        return Err(e);
    }
    for call in &self_checks {
        rec.event(Some(n), Event::SelfChecked { call: call.clone() })?;
    }
    let agent_run = agent_run(t, ran, a, agent_started)?;
    stop_if_it_did_not_start(t, rec, n, &agent_run)?;
    a.env = checks_env;
    Ok((agent_run, self_checks))
}

/// The prompt at `prompt_path` read back, and its delivery recorded.
fn deliver_prompt(t: &Fixed<'_>, rec: &mut Recorder, n: u32, prompt_path: &Path) -> Result<Vec<u8>, RunError> {
    let delivered = std::fs::read(prompt_path)
        .map_err(|source| RunError::PromptUnreadable { path: prompt_path.to_path_buf(), source })?;
    let via: &[&str] = if t.plan.config.agent.stdin { &["file", "stdin"] } else { &["file"] };
    rec.event(
        Some(n),
        Event::AttemptContextDelivered {
            sha256: sha256_hex(&delivered),
            bytes: delivered.len() as u64,
            via: via.iter().map(|v| v.to_string()).collect(),
        },
    )?;
    Ok(delivered)
}

/// With the self-check server `d` open and the agent's MCP wiring
/// known, its files written (never over one already there), its
/// arguments and environment added; returns the files written, to be
/// removed once the agent ends.
fn wire_self_checks(
    t: &Fixed<'_>,
    a: &Attempt,
    d: &SelfCheckDesk,
    argv: &mut Vec<String>,
    env: &mut Vec<(String, String)>,
) -> Result<Vec<PathBuf>, RunError> {
    let wt = &t.wt;
    let mut wired = Vec::new();
    env.push((MCP_COMMAND_VAR.into(), serde_json::to_string(&d.command).unwrap_or_default()));
    let Some(kind) = mcp_wiring(t) else { return Ok(wired) };
    let user =
        |k: &str| env.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone()).or_else(|| std::env::var(k).ok());
    let w = crate::agents::mcp::wiring(kind, &d.command, (&a.dir.tmp(), wt), &user);
    for (path, bytes) in w.files {
        // A file already there (a worktree's own settings) is
        // never overwritten: the agent goes without the server.
        if std::fs::symlink_metadata(&path).is_err() && no_link_between(wt, &path) {
            write_file(&path, &bytes)?;
            wired.push(path);
        }
    }
    use std::os::unix::ffi::OsStrExt;
    let inside = wired.iter().filter_map(|p| p.strip_prefix(wt).ok());
    d.not_the_agents(inside.map(|p| p.as_os_str().as_bytes().to_vec()).collect());
    argv.splice(1.min(argv.len())..1.min(argv.len()), w.args);
    env.extend(w.env);
    Ok(wired)
}

/// What the agent's run `ran` of attempt `a` was: its output read, its
/// leftovers moved out, the hosts and paths its confinement refused, the
/// file it wrote last (`started`: when it started).
fn agent_run(
    t: &Fixed<'_>,
    ran: Result<process::Finished, process::StartError>,
    a: &Attempt,
    started: SystemTime,
) -> Result<AgentRun, RunError> {
    let (config, wt) = (&t.plan.config, &t.wt);
    let output_kind = t.plan.preset.as_ref().map_or("text", |p| p.output.as_str());
    let mut agent_run = agent_run_of(ran, &a.dir, output_kind, config.agent.timeout.value.as_millis() as u64, wt)?;
    if !t.plan.leftovers.is_empty() {
        agent_run.leftovers = move_out_leftovers(&t.plan.leftovers, t.repo, t.base.oid, wt, &a.dir);
    }
    agent_run.refused_hosts = sandbox::refused_hosts(&a.dir.path().join(NET_LOG));
    agent_run.limits_hit =
        sandbox::limits_hit(&a.dir.path().join(NET_LOG)).iter().map(sandbox::LimitHit::describe).collect();
    agent_run.network_seen = sandbox::detect::seen::network_seen(&a.dir.path().join(NET_LOG))
        .into_iter()
        .map(|s| crate::model::NetworkSeen { kind: s.seen, what: s.what, count: s.count })
        .collect();
    if agent_run.timed_out || agent_run.crashed() {
        let put_back: &[&str] =
            if agent_run.leftovers.iter().any(|l| l == GITIGNORE_PUT_BACK) { &[".gitignore"] } else { &[] };
        agent_run.last_activity = last_write(written_since(wt, started), started, put_back);
        if matches!(t.plan.confined, Effective::Landlock | Effective::Namespaces) {
            agent_run.refused = sandbox::refused_paths(&agent_run.output_tail, wt);
        }
    }
    Ok(agent_run)
}

/// How the preset's agent is given the self-check server, when
/// `[agent] mcp` is on, the preset's agent speaks MCP and its own
/// command line is the one run (a command of the user's is left as
/// written; it still gets RETRY_RUN_MCP_COMMAND).
pub(super) fn mcp_wiring<'t>(t: &'t Fixed<'_>) -> Option<&'t str> {
    if !t.plan.config.agent.mcp || !t.plan.preset_command {
        return None;
    }
    t.plan.preset.as_ref().and_then(|p| p.mcp.as_deref())
}

/// The words the agent's command line may name (`{prompt_file}`,
/// `{worktree}`, ...), for attempt `a` of `run`.
fn agent_vars(run: &Fixed<'_>, a: &Attempt, prompt_path: &Path, delivered: &[u8]) -> Vec<(&'static str, String)> {
    let tmpdir = a.confinement.tmpdir.as_deref().unwrap_or(a.dir.path());
    vec![
        ("prompt_file", prompt_path.display().to_string()),
        ("worktree", run.wt.display().to_string()),
        ("task_id", run.plan.lane.as_ref().map_or(run.plan.id.clone(), |l| l.task.clone())),
        ("attempt", a.n.to_string()),
        ("max_attempts", run.last_allowed.to_string()),
        ("tmpdir", tmpdir.display().to_string()),
        ("prompt", String::from_utf8_lossy(delivered).into_owned()),
    ]
}

/// The agent's environment for attempt `n`: the `RETRY_RUN_*` variables,
/// the confinement's, the preset's.
fn agent_env(run: &Fixed<'_>, n: u32, prompt_path: &Path, confinement: &sandbox::Confinement) -> Vec<(String, String)> {
    let task = run.plan.lane.as_ref().map_or(run.plan.id.clone(), |l| l.task.clone());
    let mut env: Vec<(String, String)> = vec![
        ("RETRY_RUN_TASK".into(), task),
        ("RETRY_RUN_ATTEMPT".into(), n.to_string()),
        ("RETRY_RUN_MAX_ATTEMPTS".into(), run.last_allowed.to_string()),
        ("RETRY_RUN_WORKTREE".into(), run.wt.display().to_string()),
        ("RETRY_RUN_PROMPT_FILE".into(), prompt_path.display().to_string()),
    ];
    if let Some(l) = &run.plan.lane {
        env.push(("RETRY_RUN_LANE".into(), l.lane.to_string()));
        env.push(("RETRY_RUN_LANES".into(), l.lanes.to_string()));
    }
    env.extend(confinement.env());
    if let Some(p) = &run.plan.preset {
        env.extend(p.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    env
}

/// The self-check wiring's files removed, and each directory made for
/// one when nothing else is there (the worktree's `.gemini/`).
fn unwire(wired: &[PathBuf], wt: &Path) {
    for f in wired {
        let _ = std::fs::remove_file(f);
        if let Some(dir) = f.parent().filter(|d| d.starts_with(wt)) {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// An agent whose program could not start (126 or 127, and its output
/// says so; through `sh -c` or a wrapper script, when all it printed is
/// the shell's word that a program was not found) did not run: the attempt is closed as `AttemptAborted`
/// (phase `agent`), which spends nothing of the budget (the next run
/// gets one more attempt number in its window), and the task stops with
/// what to install or check.
fn stop_if_it_did_not_start(t: &Fixed<'_>, rec: &mut Recorder, n: u32, run: &AgentRun) -> Result<(), RunError> {
    let program = agent_start::program_of(&t.plan.agent_cmd);
    let line = program
        .as_deref()
        .and_then(|p| agent_start::cannot_start(p, run.exit_code, &run.output_tail))
        .or_else(|| agent_start::wrapped_cannot_start(run.exit_code, &run.output_tail));
    let Some(line) = line else { return Ok(()) };
    let program = program.unwrap_or_default();
    let message = format!(
        "the agent cannot start ({line}); {}; attempt {n} is recorded as aborted and not counted: `{}` runs it again",
        agent_start::remedy(&program, t.plan.preset.as_ref()),
        t.resume_command(""),
    );
    rec.event(Some(n), Event::AttemptAborted { reason: message.clone(), phase: "agent".into() })?;
    t.progress.done("aborted: the agent cannot start");
    t.publish()?;
    Err(RunError::AgentCannotStart { message })
}

/// Whether no directory between `wt` and `path` (beneath it) is a symbolic
/// link: a file retry-run writes there, unconfined, must not be written
/// through a link an earlier attempt left (`reset = "keep"`). A path
/// outside `wt` (the TMPDIR) is retry-run's own.
fn no_link_between(wt: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(wt) else { return true };
    let mut at = wt.to_path_buf();
    for part in rel.parent().into_iter().flat_map(Path::components) {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| !m.is_dir()) {
            return false;
        }
    }
    true
}

/// The attempt's file where the proxy logs the agent's connections.
const NET_LOG: &str = "network-agent.jsonl";

/// Quotes a value for `sh`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn substitute(arg: &str, vars: &[(&str, String)], quote: bool) -> String {
    let mut out = arg.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), &if quote { sh_quote(v) } else { v.clone() });
    }
    out
}

/// The agent's argv with placeholders filled in.
pub(crate) fn agent_argv(cmd: &CommandSpec, vars: &[(&str, String)]) -> Vec<String> {
    match cmd {
        CommandSpec::Argv(a) => a.iter().map(|x| substitute(x, vars, false)).collect(),
        CommandSpec::Shell(s) => vec!["sh".into(), "-c".into(), substitute(s, vars, true)],
    }
}

/// How the agent ended, from its process: its output kept in `agent.out`,
/// its report (usage, final message) read, its last lines.
fn agent_run_of(
    ran: Result<process::Finished, process::StartError>,
    adir: &AttemptDir,
    output_kind: &str,
    timeout_ms: u64,
    wt: &Path,
) -> Result<AgentRun, RunError> {
    Ok(match ran {
        Ok(f) => {
            write_file(&adir.agent_out(), &f.output.bytes())?;
            let text = String::from_utf8_lossy(&f.output.bytes()).into_owned();
            let report = crate::agents::output::read(output_kind, &text);
            let tail: Vec<String> =
                text.lines().rev().take(20).map(|l| crate::text::clip(l, 300, "...").into_owned()).collect();
            AgentRun {
                exit_code: f.exit_code,
                signal: f.signal,
                timed_out: f.timed_out,
                timeout_ms,
                duration_ms: f.duration.as_millis() as u64,
                output_bytes: f.output.total,
                last_activity: None,
                output_tail: tail.into_iter().rev().map(|l| relativize(&l, wt)).collect(),
                refused: Vec::new(),
                refused_hosts: Vec::new(),
                limits_hit: Vec::new(),
                network_seen: Vec::new(),
                usage: report.usage,
                final_message: report.final_message.map(|m| {
                    let m = relativize(&m, wt);
                    crate::text::clip(&m, 4000, " [...]").into_owned()
                }),
                leftovers: Vec::new(),
            }
        }
        Err(e) => {
            let e = e.to_string();
            write_file(&adir.agent_out(), e.as_bytes())?;
            AgentRun { exit_code: Some(127), timeout_ms, output_tail: vec![e], ..AgentRun::default() }
        }
    })
}

/// The agent's leftovers (what it left in the worktree that is not part of
/// the change), moved into the attempt's record; an edit of `.gitignore`
/// that only adds the agent's own patterns put back. Returns what it moved
/// or put back.
fn move_out_leftovers(leftovers: &Leftovers, repo: &Repo, base: Oid, wt: &Path, adir: &AttemptDir) -> Vec<String> {
    let mut moved = leftovers.move_out(wt, &adir.leftovers(), &|p| repo.blob_at(base, p).is_some());
    let base_gitignore = repo.blob_at(base, ".gitignore");
    if let Ok(now) = std::fs::read_to_string(wt.join(".gitignore")) {
        let before = base_gitignore.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
        if now != before && leftovers.only_adds_own(&before, &now) {
            let put_back = match &base_gitignore {
                Some(b) => std::fs::write(wt.join(".gitignore"), b),
                None => std::fs::remove_file(wt.join(".gitignore")),
            };
            if put_back.is_ok() {
                moved.push(GITIGNORE_PUT_BACK.into());
            }
        }
    }
    moved
}

/// What a leftover `.gitignore` put back is recorded as.
const GITIGNORE_PUT_BACK: &str = ".gitignore (only the agent's own patterns added)";

/// The file named as the agent's last write: the newest of `files` (each
/// a path in the worktree and when it was last modified) modified at or
/// after `started`, when the agent started. A file retry-run checked out
/// before (its config, the task's files) is never named, nor one of
/// `put_back`, which retry-run wrote back after the agent; `None` when
/// no other is left. Pure.
fn last_write(files: Vec<(String, SystemTime)>, started: SystemTime, put_back: &[&str]) -> Option<String> {
    files
        .into_iter()
        .filter(|(p, m)| *m >= started && !put_back.contains(&p.as_str()))
        .max_by_key(|(_, m)| *m)
        .map(|(p, _)| p)
}

/// The files under the worktree `root` (not `.git`) modified at or after
/// `since`, relative to it, with their modification times.
fn written_since(root: &Path, since: SystemTime) -> Vec<(String, SystemTime)> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
            if meta.is_dir() {
                stack.push(p);
            } else if let Ok(m) = meta.modified()
                && m >= since
                && let Ok(rel) = p.strip_prefix(root)
            {
                found.push((rel.display().to_string(), m));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_write_named_is_one_the_agent_made_after_it_started() {
        use std::time::Duration;
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let at = |s: i64| {
            if s >= 0 { start + Duration::from_secs(s as u64) } else { start - Duration::from_secs((-s) as u64) }
        };
        let files = |list: &[(&str, i64)]| list.iter().map(|(p, s)| (p.to_string(), at(*s))).collect::<Vec<_>>();
        // The config retry-run checked out before the agent started is
        // never named: with nothing written since, no file is.
        assert_eq!(last_write(files(&[("retry-run.toml", -1), ("src/app.txt", -60)]), start, &[]), None);
        assert_eq!(last_write(Vec::new(), start, &[]), None);
        // The newest of those written since, at the start itself included.
        let written = files(&[("retry-run.toml", -1), ("src/a.py", 0), ("src/b.py", 5), ("notes.txt", 3)]);
        assert_eq!(last_write(written.clone(), start, &[]).as_deref(), Some("src/b.py"));
        assert_eq!(last_write(files(&[("src/a.py", 0)]), start, &[]).as_deref(), Some("src/a.py"));
        // A `.gitignore` retry-run put back is not the agent's write.
        let put_back = files(&[("src/a.py", 2), (".gitignore", 9)]);
        assert_eq!(last_write(put_back, start, &[".gitignore"]).as_deref(), Some("src/a.py"));
        assert_eq!(last_write(files(&[(".gitignore", 9)]), start, &[".gitignore"]), None);
    }

    #[test]
    fn a_file_is_not_written_through_a_link_in_the_worktree() {
        let t = tempfile::tempdir().expect("tmp");
        let wt = t.path().join("wt");
        std::fs::create_dir_all(wt.join("real")).expect("mkdir");
        std::os::unix::fs::symlink(t.path(), wt.join(".gemini")).expect("link");
        assert!(!no_link_between(&wt, &wt.join(".gemini/settings.json")));
        assert!(no_link_between(&wt, &wt.join("real/settings.json")));
        assert!(no_link_between(&wt, &wt.join("new/settings.json")));
        assert!(no_link_between(&wt, &t.path().join("tmp/x.json")));
    }
}
