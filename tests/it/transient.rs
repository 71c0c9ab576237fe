//! A model provider's transient failure (a rate limit, an overload, a
//! server error, a dropped connection) is not the attempt's: the agent runs
//! again from the attempt's clean start, without spending an attempt, each
//! run recorded as `AgentRetried`; past `[agent] transient_retries` the run
//! stops with exit 3. The presets' CLIs are tried in `agents.rs`; here a
//! custom agent, read with the common forms, and one whose model server
//! only the sandbox's proxy sees failing.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::record::{events, of_type, outcomes, prompt};
use crate::support::{FakeAgent, TestEnv};

const TEST_CHECK: &str = "[retry]\nbaseline = false\n\n[[check]]\nname = \"tests\"\nrun = \"sh test.sh\"\nkind = \"test\"\nformat = \"generic\"\n";

fn project(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file(
            "test.sh",
            "if grep -q 'value = 2' src/app.txt; then echo '1 passed'; exit 0; fi\n\
             echo 'FAILED tests/app::test_value - expected value = 2'\nexit 1\n",
        )
        .file("retry-run.toml", format!("{toml}\n{TEST_CHECK}"))
        .commit()
}

/// A directory agents may write, for their run counter; the config lines
/// that allow it.
fn counter_dir(env: &TestEnv) -> (PathBuf, String) {
    let d = env.path("shared");
    std::fs::create_dir_all(&d).expect("mkdir shared");
    (d.clone(), format!("[sandbox]\nwritable = [\"{}\"]\n", d.display()))
}

/// A fake agent whose first `failing` runs (counted in `dir`, across
/// attempts) leave a half-done file and end as Claude Code does on an
/// HTTP 529; the run after makes the fix.
fn overloaded_then_fixes(dir: &Path, failing: u32) -> FakeAgent {
    let c = dir.join("runs").display().to_string();
    FakeAgent::new()
        .sh(&format!(
            "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; if [ $n -le {failing} ]; then \
             echo half > half-done.txt; echo 'API Error: 529 {{\"type\":\"error\",\"error\":{{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}}}'; exit 1; fi"
        ))
        .write("src/app.txt", "value = 2\n")
}

#[test]
fn an_overloaded_provider_is_waited_out_without_spending_an_attempt() {
    let env = TestEnv::new();
    let (dir, writable) = counter_dir(&env);
    let r = project(&env, &format!("max_attempts = 2\n[agent]\ntransient_wait = \"0s\"\n{writable}"));
    let agent = env.agent(overloaded_then_fixes(&dir, 2));
    env.run_agent(&r, &["run", "--quiet", "--task", "Set value"], &agent).assert_code(0);
    let task = "set-value";
    assert_eq!(outcomes(&r, task), ["SUCCESS"], "one attempt, the runs the provider failed not counted");
    let ev = events(&r, task);
    let retried = of_type(&ev, "AgentRetried");
    assert_eq!(retried.len(), 2, "{retried:?}");
    for (i, e) in retried.iter().enumerate() {
        assert_eq!((e["attempt"].as_u64(), e["run"].as_u64()), (Some(1), Some(i as u64 + 1)), "{e}");
        assert_eq!(e["kind"], "overloaded", "{e}");
        assert!(e["said"].as_str().is_some_and(|s| s.contains("API Error: 529")), "{e}");
        assert_eq!((e["exit_code"].as_i64(), e["wait_ms"].as_u64()), (Some(1), Some(0)), "{e}");
        let kept = r.join(format!(".git/retry-run/tasks/{task}/attempts/1/agent-run-{}.out", i + 1));
        let out = std::fs::read_to_string(&kept).expect("the failed run's output is kept");
        assert!(out.contains("overloaded_error"), "{out}");
    }
    assert_eq!(of_type(&ev, "AgentStarted").len(), 3, "three runs of the agent in attempt 1");
    assert_eq!(of_type(&ev, "AgentFinished").len(), 1, "one finished run: the one judged");
    // Each run started from the attempt's clean start: the half-done file
    // of the failed runs is not in the change.
    let files = env.git(&r, &["diff", "--name-only", "HEAD", &format!("refs/retry-run/{task}/1")]);
    assert_eq!(files, "src/app.txt");
    let report = env.run(&r, &["report", task]).stdout;
    assert!(report.contains("overloaded"), "the report says the provider failed the agent: {report}");
}

#[test]
fn a_provider_that_keeps_failing_stops_the_run_with_exit_3_and_no_attempt_spent() {
    let env = TestEnv::new();
    let (dir, writable) = counter_dir(&env);
    let toml = format!("max_attempts = 3\n[agent]\ntransient_wait = \"0s\"\ntransient_retries = 1\n{writable}");
    let r = project(&env, &toml);
    let agent = env.agent(overloaded_then_fixes(&dir, 100));
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Set value"], &agent);
    out.assert_code(3);
    assert!(out.stderr.contains("model provider failed it 2 time(s)"), "{}", out.stderr);
    assert!(out.stderr.contains("API Error: 529"), "names the provider's error: {}", out.stderr);
    assert!(out.stderr.contains("transient_retries"), "says what to raise: {}", out.stderr);
    let task = "set-value";
    let ev = events(&r, task);
    assert!(outcomes(&r, task).is_empty(), "no attempt counted: {:?}", outcomes(&r, task));
    let retried = of_type(&ev, "AgentRetried");
    assert_eq!(retried.len(), 2, "{retried:?}");
    assert!(retried[0]["wait_ms"].is_u64() && retried[1].get("wait_ms").is_none(), "{retried:?}");
    let aborted = of_type(&ev, "AttemptAborted");
    assert_eq!(aborted.len(), 1);
    assert_eq!(aborted[0]["phase"], "agent");
    assert!(of_type(&ev, "RetryContextAssembled").iter().all(|e| e["required_change"].is_null()));
    // Run again once the provider is back: attempt 2 is the task's first
    // counted one, and its prompt aims no required change at the agent.
    std::fs::write(dir.join("runs"), "100\n").expect("reset");
    env.run_agent(&r, &["run", "--quiet", "--id", task], &agent).assert_code(0);
    assert_eq!(outcomes(&r, task), ["SUCCESS"]);
    let p = prompt(&r, task, 2);
    assert!(!p.contains("Required change") && !p.contains("exited with code"), "{p}");
}

/// A fake Anthropic server (tests/agents/fake_anthropic.py) failing its
/// first `times` requests with `fail`, `Retry-After: 1`; killed on drop.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn failing_server(env: &TestEnv, fail: &str, times: u32) -> Server {
    let port_file = env.path(&format!("server-{fail}.port"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/fake_anthropic.py");
    let child = Command::new("python3")
        .arg(&script)
        .arg(&port_file)
        .arg(env.path(&format!("server-{fail}.log")))
        .env("FAKE_FAIL", fail)
        .env("FAKE_FAIL_TIMES", times.to_string())
        .env("FAKE_RETRY_AFTER", "1")
        .stdout(Stdio::null())
        .spawn()
        .expect("the fake server starts");
    let t = Instant::now();
    while !port_file.exists() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let port = std::fs::read_to_string(&port_file).expect("the server's port").trim().parse().expect("a port");
    Server { child, port }
}

/// An agent that asks the model server at `port` for its answer and says
/// nothing that names the failure: only the proxy sees the status.
fn asking_agent(env: &TestEnv, port: u16) -> FakeAgent {
    let ask = env.write(
        "ask.py",
        "import sys, urllib.request\n\
         req = urllib.request.Request(sys.argv[1], data=b'{}', headers={'Content-Type': 'application/json'})\n\
         try:\n    urllib.request.urlopen(req, timeout=20).read()\n\
         except Exception:\n    print('no answer')\n    sys.exit(1)\n",
    );
    let url = format!("http://127.0.0.1:{port}/v1/messages");
    FakeAgent::new().sh(&format!("python3 {} {url}", ask.display())).write("src/app.txt", "value = 2\n")
}

#[test]
fn the_proxy_sees_the_model_server_s_status_and_retry_after() {
    if !crate::support::modes::namespaces_here() {
        eprintln!("SKIPPED: the proxy sees loopback servers only under namespaces");
        return;
    }
    let env = TestEnv::new();
    let server = failing_server(&env, "429", 1);
    let toml = format!(
        "max_attempts = 2\n[agent]\ntransient_wait = \"0s\"\n[sandbox]\nnetwork = [\"127.0.0.1:{}\"]\n",
        server.port
    );
    let r = project(&env, &toml);
    let agent = env.agent(asking_agent(&env, server.port));
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Set value"], &agent);
    let task = "set-value";
    let ev = events(&r, task);
    let adir = r.join(format!(".git/retry-run/tasks/{task}/attempts/1"));
    let read = |f: &str| std::fs::read_to_string(adir.join(f)).unwrap_or_default();
    let (net, said) = (read("network-agent.jsonl"), read("agent.out"));
    assert_eq!(out.code, 0, "{}\nnetwork: {net}\nagent: {said}", out.stderr);
    assert_eq!(outcomes(&r, task), ["SUCCESS"]);
    let retried: Vec<&Value> = of_type(&ev, "AgentRetried");
    assert_eq!(retried.len(), 1, "{retried:?}");
    assert_eq!(retried[0]["kind"], "rate_limit");
    assert!(retried[0]["said"].as_str().is_some_and(|s| s.contains("HTTP 429")), "{}", retried[0]);
    assert_eq!((retried[0]["retry_after_ms"].as_u64(), retried[0]["wait_ms"].as_u64()), (Some(1000), Some(1000)));
}

/// Every output captured from a real CLI whose model server failed it
/// (`tests/agents/captured/transient/<preset>-<version>-<kind>.txt`) is
/// read as that kind with its preset's forms; the same CLI's output of
/// a run that went well (`tests/agents/captured/<preset>-<version>.*`)
/// is read as none, even had it failed.
#[test]
fn captured_failures_of_each_cli_are_read_as_their_kind() {
    use retry_run::agents::transient::{AgentEnded, classify};
    let failed = AgentEnded { exit_code: Some(1), ..AgentEnded::default() };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/captured");
    let mut seen = std::collections::BTreeMap::<String, Vec<String>>::new();
    for entry in std::fs::read_dir(root.join("transient")).expect("captures") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let Some(stem) = name.strip_suffix(".txt") else { continue };
        let stem = stem.strip_suffix("-default-retries").unwrap_or(stem);
        let preset = retry_run::agents::names().into_iter().find(|p| stem.starts_with(&format!("{p}-")));
        let preset = retry_run::agents::preset(preset.unwrap_or_else(|| panic!("{name}: no preset"))).expect("preset");
        let kind = stem.rsplit('-').next().unwrap_or_default();
        let want = match kind {
            "429" => "rate_limit",
            "529" => "overloaded",
            "503" => "server_error",
            "drop" => "dropped",
            other => panic!("{name}: kind {other}"),
        };
        let text = std::fs::read_to_string(&path).expect("capture");
        let ended =
            AgentEnded { exit_code: Some(1), gives_up_with_0: preset.transient_exit_0, ..AgentEnded::default() };
        let got = classify(ended, &text, &[], &preset.transient_forms());
        assert_eq!(got.as_ref().map(|t| t.kind), Some(want), "{name}: {got:?}");
        let said = got.map(|t| t.said).unwrap_or_default();
        assert!(said.chars().count() <= 203 && said.chars().count() > 12, "{name}: {said}");
        seen.entry(preset.name.clone()).or_default().push(want.to_string());
    }
    for entry in std::fs::read_dir(&root).expect("captures") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let Some(preset) = retry_run::agents::names().into_iter().find(|p| name.starts_with(&format!("{p}-"))) else {
            continue;
        };
        let preset = retry_run::agents::preset(preset).expect("preset");
        let text = std::fs::read_to_string(&path).expect("capture");
        assert_eq!(classify(failed, &text, &[], &preset.transient_forms()), None, "{name}");
        let zero = AgentEnded { exit_code: Some(0), gives_up_with_0: true, ..AgentEnded::default() };
        assert_eq!(classify(zero, &text, &[], &preset.transient_forms()), None, "{name}");
    }
    for name in retry_run::agents::names() {
        let kinds = seen.get(name).cloned().unwrap_or_default();
        for k in ["rate_limit", "overloaded", "dropped"] {
            assert!(kinds.iter().any(|s| s == k), "{name}: no capture of {k} ({kinds:?})");
        }
    }
}
