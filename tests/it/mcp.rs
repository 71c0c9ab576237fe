//! The self-check MCP server (docs/mcp.md): `retry-run mcp` over stdio
//! with a scripted client, and an agent that uses it during a real run
//! (`tests/agents/mcp_agent.py`, started from RETRY_RUN_MCP_COMMAND): its
//! calls answered outside the sandbox, capped, one at a time, recorded as
//! advisory self-checks.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::record::{events, of_type};

/// A Python project whose test passes once `calc.py` adds; the agent may
/// write under `shared/` (its transcript).
fn project(env: &TestEnv, extra: &str) -> PathBuf {
    let shared = env.path("shared");
    std::fs::create_dir_all(&shared).expect("mkdir shared");
    let config = format!(
        "max_attempts = 2\n{extra}\n[sandbox]\nwritable = [\"{}\"]\n\n[[check]]\nname = \"test\"\nkind = \"test\"\nrun = \"python3 test_calc.py\"\n",
        shared.display()
    );
    env.repo("repo")
        .file("calc.py", "def add(a, b):\n    return 0\n")
        .file(
            "test_calc.py",
            "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5, 'add(2, 3) should be 5'\n\nif __name__ == '__main__':\n    try:\n        test_add()\n    except AssertionError as e:\n        print('FAILED test_calc.py::test_add - AssertionError:', e)\n        raise SystemExit(1)\n    print('1 passed')\n",
        )
        .file("retry-run.toml", &config)
        .commit()
}

const WRONG: &str = "def add(a, b):\n    return a - b\n";
// Not the same length as WRONG: Python would take the bytecode it cached
// for WRONG in the same second as still valid.
const RIGHT: &str = "def add(a, b):\n    return a + b  # fixed\n";

/// Runs task `t` with the scripted MCP agent following `steps`; returns
/// the run and the agent's transcript.
fn run_with(env: &TestEnv, r: &Path, steps: Value) -> (crate::support::Run, Value) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/mcp_agent.py");
    let transcript = env.path("shared/transcript.json");
    let _ = std::fs::remove_file(&transcript);
    let agent =
        ["python3".to_string(), script.display().to_string(), steps.to_string(), transcript.display().to_string()];
    let mut args = vec!["run", "--quiet", "--id", "t", "--task", "Make add() add", "--"];
    args.extend(agent.iter().map(String::as_str));
    let out = env.run(r, &args);
    let t = std::fs::read(&transcript).map(|b| serde_json::from_slice(&b).expect("transcript")).unwrap_or(Value::Null);
    (out, t)
}

fn text(answer: &Value) -> &str {
    answer["text"].as_str().unwrap_or("")
}

#[test]
fn an_agent_runs_the_gates_fixes_what_they_found_and_succeeds_at_its_first_attempt() {
    let env = TestEnv::new();
    let r = project(&env, "");
    let steps = json!([
        {"call": ["task", {}]},
        {"write": ["calc.py", WRONG]},
        {"call": ["run_checks", {}]},
        {"write": ["calc.py", RIGHT]},
        {"call": ["run_checks", {}]},
        {"call": ["previous_attempts", {}]},
    ]);
    let (out, t) = run_with(&env, &r, steps);
    out.assert_code(0);
    assert!(out.stdout.contains("task t succeeded at attempt 1"), "{}", out.stdout);

    // The handshake and the tools, as the agent saw them.
    assert_eq!(t["initialize"]["protocolVersion"], "2025-06-18");
    assert_eq!(t["initialize"]["serverInfo"]["name"], "retry-run");
    let tools: Vec<&str> =
        t["tools"]["tools"].as_array().expect("tools").iter().filter_map(|x| x["name"].as_str()).collect();
    assert_eq!(tools, ["run_checks", "previous_attempts", "task"]);
    assert_eq!(t["server_exit"], 0);

    let a = t["answers"].as_array().expect("answers");
    assert!(text(&a[0]).contains("check `test`: `python3 test_calc.py`"), "{}", text(&a[0]));
    // The failing test and its assertion, as the next prompt would say them.
    let first = text(&a[1]);
    assert!(first.starts_with("Self-check 1 of 5: FAIL"), "{first}");
    assert!(first.contains("test_calc.py::test_add"), "{first}");
    assert!(first.contains("add(2, 3) should be 5"), "{first}");
    assert_eq!(a[1]["is_error"], false);
    assert!(text(&a[2]).starts_with("Self-check 2 of 5: every gate passed"), "{}", text(&a[2]));
    assert!(text(&a[3]).contains("first"), "{}", text(&a[3]));

    // Recorded as advisory self-checks: four calls, two that ran the gates.
    let ev = events(&r, "t");
    let calls = of_type(&ev, "SelfChecked");
    let tools: Vec<&str> = calls.iter().filter_map(|c| c["tool"].as_str()).collect();
    assert_eq!(tools, ["task", "run_checks", "run_checks", "previous_attempts"]);
    // Nothing a self-check does is written to the repository: the attempt
    // is not seen adding objects (the agent wrote files only).
    let scope = of_type(&ev, "ScopeChecked");
    assert!(scope.iter().all(|e| e.get("objects_added").is_none()), "{scope:?}");
    assert_eq!(calls[1]["passed"], false);
    assert_eq!(calls[2]["passed"], true);
    assert!(calls[1]["summary"].as_str().unwrap_or("").contains("FAIL"), "{}", calls[1]);
    let attempt: Value = serde_json::from_slice(
        &std::fs::read(r.join(".git/retry-run/tasks/t/attempts/1/attempt.json")).expect("attempt.json"),
    )
    .expect("json");
    assert_eq!(attempt["self_checks"].as_array().map(Vec::len), Some(4));
    assert_eq!(attempt["outcome"], "SUCCESS");
    // Each check a self-check ran kept its output beside the attempt.
    assert!(r.join(".git/retry-run/tasks/t/attempts/1/self-checks/1/test.out").exists());

    let report = env.run(&r, &["report", "t"]);
    report.assert_code(0);
    assert!(report.stdout.contains("Self-checks (advisory): 2 runs of the gates (FAIL, green)"), "{}", report.stdout);
    let stats = env.run(&r, &["stats", "--json"]);
    stats.assert_code(0);
    let s = stats.json();
    assert_eq!(s["self_checks"]["calls"], 2, "{s}");
    assert_eq!(s["self_checks"]["attempts"], 1, "{s}");
}

/// retry-run unpacked under `/tmp` (a CI's scratch directory, a
/// `CARGO_TARGET_DIR` there): the MCP command the agent is given names it
/// there, and the sandbox's private `/tmp` keeps it visible, read-only.
#[test]
fn retry_run_installed_under_tmp_hands_the_agent_an_mcp_command_that_runs() {
    let env = TestEnv::new();
    let exe = env.install_retry_run_in(Path::new("/tmp"));
    let r = project(&env, "");
    let steps = json!([
        {"call": ["task", {}]},
        {"write": ["calc.py", RIGHT]},
        {"call": ["run_checks", {}]},
        {"write": [exe.display().to_string(), "#!/bin/sh\necho replaced\n"]},
    ]);
    let (out, t) = run_with(&env, &r, steps);
    out.assert_code(0);
    assert_eq!(t["server_exit"], 0, "{t}");
    let a = t["answers"].as_array().expect("answers");
    assert!(text(&a[1]).starts_with("Self-check 1 of 5: every gate passed"), "{t}");
    assert!(t["write_errors"].to_string().contains("Read-only file system"), "{t}");
    assert!(std::fs::read(&exe).expect("the copy").starts_with(b"\x7fELF"), "the copy was not replaced");
}

#[test]
fn the_cap_one_call_at_a_time_and_malformed_calls_are_refused_in_words() {
    let env = TestEnv::new();
    let r = project(&env, "[agent]\nmax_self_checks = 2\n");
    // The check takes a second, so that two calls sent together overlap.
    let config = std::fs::read_to_string(r.join("retry-run.toml"))
        .expect("config")
        .replace("run = \"python3 test_calc.py\"", "run = \"sleep 1; python3 test_calc.py\"");
    std::fs::write(r.join("retry-run.toml"), config).expect("write");
    env.git(&r, &["commit", "-qam", "slow check"]);
    let steps = json!([
        {"write": ["calc.py", RIGHT]},
        {"together": [["run_checks", {}], ["run_checks", {}]]},
        {"call": ["run_checks", {"checks": ["test"]}]},
        {"call": ["run_checks", {}]},
        {"call": ["rm_rf", {"path": "/"}]},
        {"call": ["run_checks", {"checks": "test"}]},
        {"call": ["previous_attempts", {"attempt": 7}]},
        {"raw": {"method": "tools/call", "params": {"arguments": {}}}},
        // 7 calls reach the run so far (not the one without a name): the
        // 200th is answered, the 201st refused.
        {"repeat": ["task", {}, 193]},
        {"call": ["task", {}]},
    ]);
    let (out, t) = run_with(&env, &r, steps);
    out.assert_code(0);
    let a = t["answers"].as_array().expect("answers");
    let together = a[0].as_array().expect("two answers");
    let refused: Vec<&Value> = together.iter().filter(|x| x["is_error"] == true).collect();
    assert_eq!(refused.len(), 1, "{together:?}");
    assert!(text(refused[0]).contains("already under way"), "{}", text(refused[0]));
    assert!(text(&a[1]).starts_with("Self-check 2 of 2"), "{}", text(&a[1]));
    assert_eq!(a[2]["is_error"], true);
    assert!(text(&a[2]).contains("2 of 2 used ([agent] max_self_checks)"), "{}", text(&a[2]));
    assert!(text(&a[3]).contains("no tool `rm_rf`"), "{}", text(&a[3]));
    assert!(text(&a[4]).contains("`checks` must be a list"), "{}", text(&a[4]));
    assert!(text(&a[5]).contains("no attempt 7"), "{}", text(&a[5]));
    // A call without a tool's name is the protocol's error, and the server goes on.
    assert!(a[6]["protocol_error"].is_object(), "{}", a[6]);
    assert_eq!(a[7]["is_error"], false, "{}", a[7]);
    assert!(text(&a[8]).contains("no more calls in this attempt: it made 200"), "{}", a[8]);
    assert_eq!(t["server_exit"], 0);

    let calls = of_type(&events(&r, "t"), "SelfChecked").into_iter().cloned().collect::<Vec<_>>();
    let ran = calls.iter().filter(|c| c["passed"].is_boolean()).count();
    assert_eq!(ran, 2, "{calls:?}");
    let refused = calls.iter().filter(|c| c["refused"].is_string()).count();
    assert_eq!(refused, 5, "{calls:?}");
    assert_eq!(calls.len(), 200, "the calls after the 200th are not recorded");
}

#[test]
fn with_mcp_off_the_agent_is_given_no_server() {
    let env = TestEnv::new();
    let r = project(&env, "[agent]\nmcp = false\n");
    let (out, t) = run_with(&env, &r, json!([{"write": ["calc.py", RIGHT]}]));
    out.assert_code(0);
    assert_eq!(t["env"], Value::Null, "{t}");
    assert!(of_type(&events(&r, "t"), "SelfChecked").is_empty());
}

#[test]
fn a_check_run_by_run_checks_cannot_write_outside_the_worktree() {
    let env = TestEnv::new();
    let r = project(&env, "");
    let outside = env.path("outside-by-self-check");
    let checkout = r.join("escaped-by-self-check");
    let home = env.home().join("escaped-by-self-check");
    // A secret of the user's, which no check may read either.
    std::fs::create_dir_all(env.home().join(".ssh")).expect("mkdir");
    std::fs::write(env.home().join(".ssh/id_ed25519"), "SECRET-KEY-MATERIAL\n").expect("write");
    let escape = format!(
        "for p in {} {} {} {}; do echo x > \"$p\" || echo REFUSED \"$p\"; done; cat ~/.ssh/id_ed25519 || echo HIDDEN; python3 test_calc.py",
        outside.display(),
        checkout.display(),
        home.display(),
        r.join(".git/hooks/pre-commit").display()
    );
    let config = std::fs::read_to_string(r.join("retry-run.toml"))
        .expect("config")
        .replace("run = \"python3 test_calc.py\"", &format!("run = {escape:?}"));
    std::fs::write(r.join("retry-run.toml"), config).expect("write");
    env.git(&r, &["commit", "-qam", "a check that tries to escape"]);
    let (out, t) = run_with(
        &env,
        &r,
        json!([{"write": ["calc.py", WRONG]}, {"call": ["run_checks", {}]}, {"write": ["calc.py", RIGHT]}]),
    );
    out.assert_code(0);
    let answer = text(&t["answers"][0]);
    assert!(answer.contains("FAIL"), "{answer}");
    for p in [&outside, &checkout, &home, &r.join(".git/hooks/pre-commit")] {
        assert!(!p.exists(), "{} was written by a self-check", p.display());
    }
    let output = std::fs::read_to_string(r.join(".git/retry-run/tasks/t/attempts/1/self-checks/1/test.out"))
        .expect("the self-check's output");
    assert_eq!(output.matches("REFUSED").count(), 4, "{output}");
    assert!(output.contains("HIDDEN") && !output.contains("SECRET-KEY-MATERIAL"), "{output}");
    assert!(!answer.contains("SECRET-KEY-MATERIAL"), "{answer}");
}

/// `retry-run mcp` on its own: a scripted client on its stdio, and this
/// test answering its channel as the run would.
#[test]
fn the_server_speaks_mcp_on_stdio_and_relays_each_call() {
    let env = TestEnv::new();
    let channel = env.path("channel");
    std::fs::create_dir_all(&channel).expect("mkdir");
    let mut server = env
        .retry_run(env.root())
        .args(["mcp", "--channel"])
        .arg(&channel)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the server");
    let mut stdin = server.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(server.stdout.take().expect("stdout"));
    let mut ask = |msg: Value| -> Value {
        writeln!(stdin, "{msg}").expect("write");
        stdin.flush().expect("flush");
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    };
    let init = ask(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}));
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert!(init["result"]["capabilities"]["tools"].is_object(), "{init}");
    let list = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    for t in list["result"]["tools"].as_array().expect("tools") {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(!t["description"].as_str().unwrap_or("").is_empty(), "{t}");
    }

    // The run's side: each request answered with what it asked.
    let desk = std::thread::spawn({
        let channel = channel.clone();
        move || answer_two(&channel)
    });
    let ok = ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "task", "arguments": {"x": 1}}}));
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    assert_eq!(ok["result"]["content"][0]["text"], "answered task {\"x\":1}");
    let err = ask(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "run_checks"}}));
    assert_eq!(err["result"]["isError"], true, "{err}");
    assert_eq!(err["result"]["content"][0]["text"], "refused run_checks");
    desk.join().expect("desk");
    drop(stdin);
    assert!(server.wait().expect("wait").success());

    // Without a channel: a usage error that says where the command comes from.
    let out = env.run(env.root(), &["mcp", "--channel", "/nonexistent/channel"]);
    out.assert_code(2);
    assert!(out.stderr.contains("RETRY_RUN_MCP_COMMAND"), "{}", out.stderr);
}

/// Answers the first two requests in `channel`: the first as a result,
/// the second as an error.
fn answer_two(channel: &Path) {
    let mut answered = 0;
    while answered < 2 {
        let mut reqs: Vec<PathBuf> = std::fs::read_dir(channel)
            .expect("read the channel")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "req"))
            .collect();
        reqs.sort();
        for req in reqs {
            let r: Value = serde_json::from_slice(&std::fs::read(&req).expect("read")).expect("request");
            std::fs::remove_file(&req).expect("rm");
            let id = req.file_stem().and_then(|s| s.to_str()).expect("id").to_string();
            let tool = r["tool"].as_str().unwrap_or("");
            let answer = if answered == 0 {
                json!({"text": format!("answered {tool} {}", r["arguments"]), "is_error": false})
            } else {
                json!({"text": format!("refused {tool}"), "is_error": true})
            };
            let tmp = channel.join(format!("{id}.x"));
            std::fs::write(&tmp, answer.to_string()).expect("write");
            std::fs::rename(&tmp, channel.join(format!("{id}.res"))).expect("rename");
            answered += 1;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
