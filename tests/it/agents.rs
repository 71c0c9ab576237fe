//! Presets with the real agent CLIs, each talking to a fake model server
//! (`tests/agents/fake_*.py`) that this test starts on 127.0.0.1. The
//! server answers with a wrong edit first and the right one only when the
//! request carries the check's failure, so a success at attempt 2 proves
//! the feedback reached the real agent through the prompt.
//!
//! The CLIs are installed from their registries into a cache outside the
//! checkout (`$RETRY_RUN_AGENTS_CACHE`, default `~/.cache/retry-run-ci/agents`),
//! reused when present. A CLI that cannot be installed makes its test say
//! SKIPPED with the reason.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{TestEnv, events, hermetic};

fn cache() -> PathBuf {
    match std::env::var_os("RETRY_RUN_AGENTS_CACHE") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/retry-run-ci/agents"),
    }
}

/// The `bin` directory of an npm package installed in the cache, installing
/// it when missing; `Err` says why it cannot be had.
fn npm_agent(dir: &str, package: &str, program: &str) -> Result<PathBuf, String> {
    let prefix = cache().join(dir);
    let bin = prefix.join("node_modules/.bin");
    if !bin.join(program).exists() {
        std::fs::create_dir_all(&prefix).map_err(|e| format!("{}: {e}", prefix.display()))?;
        let out = Command::new("npm")
            .args(["install", "--no-fund", "--no-audit", "--prefix"])
            .arg(&prefix)
            .arg(package)
            .output()
            .map_err(|e| format!("npm cannot run: {e}"))?;
        if !out.status.success() {
            return Err(format!("npm install {package} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
    }
    let v = Command::new(bin.join(program)).arg("--version").output().map_err(|e| format!("{program}: {e}"))?;
    if !v.status.success() {
        return Err(format!("{program} --version failed: {}", String::from_utf8_lossy(&v.stderr).trim()));
    }
    Ok(bin)
}

/// A fake model server; killed when dropped.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(env: &TestEnv, script: &str, vars: &[(&str, &str)]) -> Server {
        let port_file = env.path("server.port");
        let log = env.path("server.log");
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents").join(script);
        let child = Command::new("python3")
            .arg(&path)
            .arg(&port_file)
            .arg(&log)
            .envs(vars.iter().map(|(k, v)| (*k, *v)))
            .stdout(Stdio::null())
            .spawn()
            .expect("the fake server starts");
        let t = Instant::now();
        while !port_file.exists() && t.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let port = std::fs::read_to_string(&port_file).expect("the server's port").trim().parse().expect("a port");
        Server { child, port, log }
    }

    fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }
}

const CALC: &str = "def add(a, b):\n    return a - b\n";
const TESTS: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";

fn python_repo(env: &TestEnv, toml: &str) -> PathBuf {
    let r = env.path("repo");
    std::fs::create_dir_all(r.join("tests")).expect("mkdir");
    std::fs::write(r.join("calc.py"), CALC).expect("write");
    std::fs::write(r.join("tests/test_calc.py"), TESTS).expect("write");
    std::fs::write(r.join(".gitignore"), "__pycache__/\n").expect("write");
    std::fs::write(
        r.join("retry-run.toml"),
        format!("{toml}\n[[check]]\nname = \"pytest\"\nrun = \"python3 -m pytest -p no:cacheprovider -rA tests\"\nkind = \"test\"\n"),
    )
    .expect("write");
    env.git(&r, &["init", "-q"]);
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-qm", "base"]);
    r
}

/// A python one-liner that rewrites `a - b` in calc.py.
fn edit(to: &str) -> String {
    format!(
        "python3 -c \"import pathlib; p = pathlib.Path('calc.py'); p.write_text(p.read_text().replace('a - b', '{to}'))\""
    )
}

/// Processes whose working directory is inside `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else { return out };
    for e in rd.flatten() {
        if let Ok(cwd) = std::fs::read_link(e.path().join("cwd"))
            && cwd.starts_with(dir)
        {
            out.push(format!("{} {}", e.file_name().to_string_lossy(), cwd.display()));
        }
    }
    out
}

#[test]
fn claude_code_preset_with_the_real_cli_learns_from_the_failed_check() {
    let bin = match npm_agent("claude-code", "@anthropic-ai/claude-code@2.1.197", "claude") {
        Ok(b) => b,
        Err(why) => {
            eprintln!("SKIPPED claude-code preset test: {why}");
            return;
        }
    };
    let env = TestEnv::new();
    let r = python_repo(&env, "max_attempts = 2\n[agent]\npreset = \"claude-code\"\ntimeout = \"2m\"\n");
    let config_before = std::fs::read(r.join(".git/config")).expect("config");
    let server = Server::start(
        &env,
        "fake_anthropic.py",
        &[
            ("FAKE_WRONG", &edit("a * b")),
            ("FAKE_RIGHT", &edit("a + b")),
            ("FAKE_FEEDBACK", "tests/test_calc.py::test_add"),
        ],
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-run"));
    hermetic(&mut cmd, &env.home());
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = cmd
        .env("PATH", path)
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", server.port))
        .env("ANTHROPIC_API_KEY", "sk-fake-for-tests")
        .current_dir(&r)
        .args(["run", "--quiet", "--task", "Fix add so that the tests pass"])
        .output()
        .expect("retry-run runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\nserver: {:?}", server.requests());
    let task = "fix-add-so-that-the-tests-pass";
    let ev = events(&r, task);
    let outcomes: Vec<&str> =
        ev.iter().filter(|e| e["type"] == "AttemptCompleted").filter_map(|e| e["outcome"].as_str()).collect();
    assert_eq!(outcomes, ["CHECK_FAILURE", "SUCCESS"]);
    // The feedback reached the real agent: only the second main request carried it.
    let main: Vec<bool> =
        server.requests().iter().filter(|q| q["answer"] == "tool_use").map(|q| q["feedback"] == true).collect();
    assert_eq!(main, [false, true], "{:?}", server.requests());
    // Usage is recorded per attempt.
    let finished: Vec<&Value> = ev.iter().filter(|e| e["type"] == "AgentFinished").collect();
    for f in &finished {
        assert!(f["usage"]["cost_usd"].as_f64().is_some_and(|c| c > 0.0), "{f}");
        assert_eq!(f["usage"]["turns"], 2, "{f}");
    }
    // Nothing the agent dropped is in the change; the repository's config is as it was.
    let files = env.git(&r, &["diff", "--name-only", "HEAD", &format!("refs/retry-run/{task}/2")]);
    assert_eq!(files, "calc.py");
    assert_eq!(std::fs::read(r.join(".git/config")).expect("config"), config_before);
    // Its last words reached the next prompt, labelled as its own account.
    let p =
        std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{task}/attempts/2/prompt.md"))).expect("prompt");
    assert!(p.contains("The agent's own account of attempt 1"), "{p}");
    assert!(p.contains("> I changed calc.py; the tests should pass now."), "{p}");
    // Its state went where the preset says, under the sandbox.
    assert!(env.home().join(".claude").is_dir() && env.home().join(".claude.json").is_file());
    let started = ev.iter().find(|e| e["type"] == "AgentStarted").expect("AgentStarted");
    let writable = started["sandbox"]["writable"].to_string();
    assert!(writable.contains("/.claude\"") && writable.contains(".claude.json"), "{writable}");
    // No process of the agent outlives the attempt.
    let wt = r.join(format!(".git/retry-run/worktrees/{task}"));
    assert!(processes_in(&wt).is_empty(), "{:?}", processes_in(&wt));
    let report = env.run(&r, &["report", task]).stdout;
    assert!(report.contains("Agent usage, all attempts: 4 turns"), "{report}");
}
