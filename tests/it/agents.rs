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

/// Says that a preset's test could not run, past the test harness's
/// capture (a direct write to stderr), so that a skip is never silent.
fn skipped(preset: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED {preset} preset test: {why}");
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

/// Runs the task "Fix add so that the tests pass" in `r` with `bin` first
/// on PATH and `vars` in the environment, and checks what every preset test
/// checks: CHECK_FAILURE then SUCCESS; of the model requests that
/// `main_request` picks, only the second carried the check's failure; usage
/// recorded for each attempt; the change is calc.py alone; the
/// repository's config unchanged; no process left in the worktree. Returns
/// the task's events.
fn run_preset(
    env: &TestEnv,
    r: &Path,
    bin: &Path,
    vars: &[(&str, String)],
    server: &Server,
    main_request: &dyn Fn(&Value) -> bool,
) -> Vec<Value> {
    let config_before = std::fs::read(r.join(".git/config")).expect("config");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-run"));
    hermetic(&mut cmd, &env.home());
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = cmd
        .env("PATH", path)
        .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
        .current_dir(r)
        .args(["run", "--quiet", "--task", "Fix add so that the tests pass"])
        .output()
        .expect("retry-run runs");
    let agent_out = std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{TASK}/attempts/1/agent.out")))
        .unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\nagent:\n{agent_out}\nserver: {:?}", server.requests());
    assert_eq!(outcomes(r, TASK), ["CHECK_FAILURE", "SUCCESS"]);
    let calls: Vec<bool> =
        server.requests().iter().filter(|q| main_request(q)).map(|q| q["feedback"] == true).collect();
    assert_eq!(calls, [false, true], "the feedback reached the agent's second call only: {:?}", server.requests());
    let ev = events(r, TASK);
    for f in ev.iter().filter(|e| e["type"] == "AgentFinished") {
        assert!(f["usage"]["input_tokens"].as_u64().is_some_and(|n| n > 0), "{f}");
    }
    let files = env.git(r, &["diff", "--name-only", "HEAD", &format!("refs/retry-run/{TASK}/2")]);
    assert_eq!(files, "calc.py", "nothing the agent dropped is in the change");
    assert_eq!(std::fs::read(r.join(".git/config")).expect("config"), config_before);
    let wt = r.join(format!(".git/retry-run/worktrees/{TASK}"));
    assert!(processes_in(&wt).is_empty(), "{:?}", processes_in(&wt));
    ev
}

const TASK: &str = "fix-add-so-that-the-tests-pass";

/// The server's variables for a tool-calling agent: a wrong edit, then the right one.
fn edits() -> Vec<(&'static str, String)> {
    vec![
        ("FAKE_WRONG_CMD", edit("a * b")),
        ("FAKE_RIGHT_CMD", edit("a + b")),
        ("FAKE_FEEDBACK", "tests/test_calc.py::test_add".into()),
    ]
}

fn start(env: &TestEnv, script: &str, vars: &[(&str, String)]) -> Server {
    let v: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Server::start(env, script, &v)
}

#[test]
fn claude_code_preset_with_the_real_cli_learns_from_the_failed_check() {
    let bin = match npm_agent("claude-code", "@anthropic-ai/claude-code@2.1.197", "claude") {
        Ok(b) => b,
        Err(why) => return skipped("claude-code", &why),
    };
    let env = TestEnv::new();
    let r = python_repo(&env, "max_attempts = 2\n[agent]\npreset = \"claude-code\"\ntimeout = \"2m\"\n");
    let server = start(&env, "fake_anthropic.py", &edits());
    let api = [
        ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", server.port)),
        ("ANTHROPIC_API_KEY", "sk-fake-for-tests".into()),
    ];
    let ev = run_preset(&env, &r, &bin, &api, &server, &|q| q["answer"] == "tool_use");
    for f in ev.iter().filter(|e| e["type"] == "AgentFinished") {
        assert!(f["usage"]["cost_usd"].as_f64().is_some_and(|c| c > 0.0), "{f}");
        assert_eq!(f["usage"]["turns"], 2, "{f}");
    }
    // Its last words reached the next prompt, labelled as its own account.
    let p =
        std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{TASK}/attempts/2/prompt.md"))).expect("prompt");
    assert!(p.contains("The agent's own account of attempt 1"), "{p}");
    assert!(p.contains("> I changed calc.py; the tests should pass now."), "{p}");
    // Its state went where the preset says, under the sandbox.
    assert!(env.home().join(".claude").is_dir() && env.home().join(".claude.json").is_file());
    let started = ev.iter().find(|e| e["type"] == "AgentStarted").expect("AgentStarted");
    let writable = started["sandbox"]["writable"].to_string();
    assert!(writable.contains("/.claude\"") && writable.contains(".claude.json"), "{writable}");
    let report = env.run(&r, &["report", TASK]).stdout;
    assert!(report.contains("Agent usage, all attempts: 4 turns"), "{report}");
}

/// Aider from PyPI in a virtualenv of the cache, installed when missing.
fn pip_agent(dir: &str, package: &str, program: &str) -> Result<PathBuf, String> {
    let venv = cache().join(dir);
    let bin = venv.join("bin");
    if !bin.join(program).exists() {
        std::fs::create_dir_all(cache()).map_err(|e| format!("{}: {e}", cache().display()))?;
        let ok = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().is_ok_and(|s| s.success());
        if !ok {
            return Err("python3 -m venv failed".into());
        }
        let out = Command::new(bin.join("pip"))
            .args(["install", "-q", package])
            .output()
            .map_err(|e| format!("pip cannot run: {e}"))?;
        if !out.status.success() {
            return Err(format!("pip install {package} failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
    }
    let v = Command::new(bin.join(program)).arg("--version").output().map_err(|e| format!("{program}: {e}"))?;
    if !v.status.success() {
        return Err(format!("{program} --version failed"));
    }
    Ok(bin)
}

#[test]
fn aider_preset_with_the_real_cli_learns_from_the_failed_check() {
    let venv_bin = match pip_agent("aider-venv", "aider-chat==0.86.2", "aider") {
        Ok(b) => b,
        Err(why) => return skipped("aider", &why),
    };
    let env = TestEnv::new();
    let vars = [
        ("FAKE_FILE", "calc.py".to_string()),
        ("FAKE_WRONG", "def add(a, b):\n    return a * b\n".into()),
        ("FAKE_RIGHT", "def add(a, b):\n    return a + b\n".into()),
        ("FAKE_FEEDBACK", "tests/test_calc.py::test_add".into()),
    ];
    let server = start(&env, "fake_openai.py", &vars);
    // The model and its endpoint are the user's: given as the preset's args.
    let args = format!(
        "[\"--model\", \"openai/fake\", \"--openai-api-base\", \"http://127.0.0.1:{}/v1\", \"--openai-api-key\", \"sk-fake\", \"--edit-format\", \"whole\", \"calc.py\"]",
        server.port
    );
    let r =
        python_repo(&env, &format!("max_attempts = 2\n[agent]\npreset = \"aider\"\ntimeout = \"3m\"\nargs = {args}\n"));
    // Only `aider` from its virtualenv on PATH: the checks keep the system's python3 (with pytest).
    let bin = env.path("aider-bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    std::os::unix::fs::symlink(venv_bin.join("aider"), bin.join("aider")).expect("symlink");
    let ev = run_preset(&env, &r, &bin, &[], &server, &|_| true);
    for f in ev.iter().filter(|e| e["type"] == "AgentFinished") {
        assert_eq!(
            (f["usage"]["input_tokens"].as_u64(), f["usage"]["output_tokens"].as_u64()),
            (Some(900), Some(40)),
            "{f}"
        );
    }
}

#[test]
fn codex_preset_with_the_real_cli_learns_from_the_failed_check() {
    let bin = match npm_agent("codex", "@openai/codex@0.169.0", "codex") {
        Ok(b) => b,
        Err(why) => return skipped("codex", &why),
    };
    let env = TestEnv::new();
    let server = start(&env, "fake_openai.py", &edits());
    // The model and its endpoint are the user's: a provider of their own, in the preset's args.
    let base = format!("model_providers.fake.base_url=\\\"http://127.0.0.1:{}/v1\\\"", server.port);
    let args = format!(
        "[\"-m\", \"fake\", \"-c\", \"model_provider=fake\", \"-c\", \"model_providers.fake.name=fake\", \"-c\", \"{base}\", \"-c\", \"model_providers.fake.wire_api=responses\", \"-c\", \"model_providers.fake.env_key=OPENAI_API_KEY\"]"
    );
    let r =
        python_repo(&env, &format!("max_attempts = 2\n[agent]\npreset = \"codex\"\ntimeout = \"2m\"\nargs = {args}\n"));
    let key = [("OPENAI_API_KEY", "sk-fake-for-tests".to_string())];
    run_preset(&env, &r, &bin, &key, &server, &|q| q["answered"] == false);
    let p =
        std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{TASK}/attempts/2/prompt.md"))).expect("prompt");
    assert!(p.contains("> I edited calc.py."), "{p}");
}

#[test]
fn gemini_preset_with_the_real_cli_learns_from_the_failed_check() {
    let bin = match npm_agent("gemini", "@google/gemini-cli@0.61.0", "gemini") {
        Ok(b) => b,
        Err(why) => return skipped("gemini", &why),
    };
    let env = TestEnv::new();
    let server = start(&env, "fake_gemini.py", &edits());
    // The user's own Gemini CLI settings: an API key.
    std::fs::create_dir_all(env.home().join(".gemini")).expect("mkdir");
    std::fs::write(
        env.home().join(".gemini/settings.json"),
        r#"{"security":{"auth":{"selectedType":"gemini-api-key"}}}"#,
    )
    .expect("settings");
    let r = python_repo(&env, "max_attempts = 2\n[agent]\npreset = \"gemini\"\ntimeout = \"2m\"\n");
    let api = [
        ("GEMINI_API_KEY", "fake-for-tests".to_string()),
        ("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{}", server.port)),
    ];
    run_preset(&env, &r, &bin, &api, &server, &|q| q["kind"] == "call");
}

#[test]
fn opencode_preset_with_the_real_cli_learns_from_the_failed_check() {
    let bin = match npm_agent("opencode", "opencode-ai@1.18.33", "opencode") {
        Ok(b) => b,
        Err(why) => return skipped("opencode", &why),
    };
    let env = TestEnv::new();
    let server = start(&env, "fake_openai.py", &edits());
    // The user's own opencode config: an OpenAI-compatible provider and its model.
    let config = env.path("opencode.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"provider":{{"fake":{{"npm":"@ai-sdk/openai-compatible","name":"fake","options":{{"baseURL":"http://127.0.0.1:{}/v1","apiKey":"x"}},"models":{{"m":{{"name":"m"}}}}}}}},"model":"fake/m","autoupdate":false,"share":"disabled"}}"#,
            server.port
        ),
    )
    .expect("config");
    let r = python_repo(&env, "max_attempts = 2\n[agent]\npreset = \"opencode\"\ntimeout = \"2m\"\n");
    let vars = [("OPENCODE_CONFIG", config.display().to_string())];
    run_preset(&env, &r, &bin, &vars, &server, &|q| q["tools"] == true && q["answered"] == false);
}

/// A repository with a text file the scripted agents edit.
fn plain_repo(env: &TestEnv, toml: &str) -> PathBuf {
    let r = env.path("plain");
    std::fs::create_dir_all(r.join("src")).expect("mkdir");
    std::fs::write(r.join("src/app.txt"), "value = 1\n").expect("write");
    std::fs::write(r.join(".gitignore"), "*.log\n").expect("write");
    std::fs::write(r.join("retry-run.toml"), toml).expect("write");
    env.git(&r, &["init", "-q"]);
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-qm", "base"]);
    r
}

fn outcomes(r: &Path, task: &str) -> Vec<String> {
    events(r, task)
        .iter()
        .filter(|e| e["type"] == "AttemptCompleted")
        .filter_map(|e| e["outcome"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn what_the_agent_drops_in_the_worktree_is_left_out_of_the_change() {
    let env = TestEnv::new();
    let r = plain_repo(&env, "max_attempts = 1\n[agent]\nignore = [\".aider*\"]\n[scope]\nallow = [\"src/**\"]\n");
    let agent = "echo 2 > src/app.txt; echo chat > .aider.chat.history.md; mkdir -p .aider.tags.cache.v4; \
                 echo x > .aider.tags.cache.v4/db; printf '.aider*\\n' >> .gitignore";
    env.run(&r, &["run", "--quiet", "--task", "Drop", "--", "sh", "-c", agent]).assert_code(0);
    assert_eq!(outcomes(&r, "drop"), ["SUCCESS"]);
    let files = env.git(&r, &["diff", "--name-only", "HEAD", "refs/retry-run/drop/1"]);
    assert_eq!(files, "src/app.txt", "only the change itself");
    let finished = events(&r, "drop").into_iter().find(|e| e["type"] == "AgentFinished").expect("AgentFinished");
    assert_eq!(
        finished["leftovers"],
        serde_json::json!([
            ".aider.chat.history.md",
            ".aider.tags.cache.v4",
            ".gitignore (only the agent's own patterns added)"
        ])
    );
    let kept = r.join(".git/retry-run/tasks/drop/attempts/1/leftovers/.aider.chat.history.md");
    assert_eq!(std::fs::read_to_string(kept).expect("kept in the record"), "chat\n");
}

#[test]
fn budgets_stop_the_task_before_another_attempt() {
    let env = TestEnv::new();
    // Cost: the agent prints what the real Claude Code printed (captured), so
    // the preset's reader records its cost; the budget is below one attempt's.
    let captured = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/captured/claude-code-2.1.197.json");
    let r = plain_repo(
        &env,
        &format!(
            "max_attempts = 5\n[agent]\npreset = \"claude-code\"\ncommand = [\"sh\", \"-c\", \"cat {}; echo x >> src/app.txt\"]\n[[check]]\nname = \"never\"\nrun = \"exit 1\"\n",
            captured.display()
        ),
    );
    let out = env.run(&r, &["run", "--quiet", "--task", "Costly", "--max-cost", "0.02"]);
    out.assert_code(1);
    assert_eq!(outcomes(&r, "costly"), ["CHECK_FAILURE", "CHECK_FAILURE"], "$0.016 each: the third never starts");
    let esc = events(&r, "costly").into_iter().find(|e| e["type"] == "TaskEscalated").expect("escalated");
    assert!(esc["reason"].as_str().unwrap_or("").contains("retry.max_cost_usd"), "{esc}");
    let status = env.run(&r, &["status"]).stdout;
    assert!(status.contains("cost $0.0320"), "{status}");
    let stats = env.run(&r, &["stats"]).stdout;
    assert!(stats.contains("spent on retries (attempts after a task's first) $0.0160, 50.0%"), "{stats}");
    // Time: attempts of a second each, a budget of two seconds.
    let out = env.run(
        &r,
        &[
            "run",
            "--quiet",
            "--task",
            "Slow",
            "--max-duration",
            "2s",
            "--",
            "sh",
            "-c",
            "sleep 1; echo y >> src/app.txt",
        ],
    );
    out.assert_code(1);
    let n = outcomes(&r, "slow").len();
    assert!((1..=2).contains(&n), "{n} attempts ran");
    let esc = events(&r, "slow").into_iter().find(|e| e["type"] == "TaskEscalated").expect("escalated");
    assert!(esc["reason"].as_str().unwrap_or("").contains("retry.max_duration (2s)"), "{esc}");
}

#[test]
fn worktreeinclude_copies_ignored_files_into_each_worktree() {
    let env = TestEnv::new();
    let r = plain_repo(&env, "max_attempts = 1\n");
    std::fs::write(r.join(".gitignore"), "*.log\n.env\nbuild/\n").expect("write");
    std::fs::write(r.join(".worktreeinclude"), ".env\n").expect("write");
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-qm", "include"]);
    std::fs::write(r.join(".env"), "SECRET=1\n").expect("write");
    std::fs::create_dir_all(r.join("build")).expect("mkdir");
    std::fs::write(r.join("build/.env"), "not listed by its directory\n").expect("write");
    let agent = "test -f .env && grep -q SECRET .env && ! test -e build && echo 2 > src/app.txt";
    env.run(&r, &["run", "--quiet", "--task", "Env", "--", "sh", "-c", agent]).assert_code(0);
}

#[test]
fn agents_lists_every_preset_with_its_command_line() {
    let env = TestEnv::new();
    let out = env.run(env.dir.path(), &["agents", "--json"]);
    out.assert_code(0);
    let presets: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).expect("json")).collect();
    let names: Vec<&str> = presets.iter().filter_map(|p| p["preset"].as_str()).collect();
    assert_eq!(names, ["claude-code", "codex", "aider", "gemini", "opencode"]);
    let claude = &presets[0];
    assert_eq!(claude["command"][0], "claude");
    assert_eq!(claude["state"], serde_json::json!(["~/.claude", "~/.claude.json"]));
    let r = plain_repo(&env, "max_attempts = 1\n");
    let bad = env.run(&r, &["run", "--preset", "cursor", "--task", "x"]);
    bad.assert_code(2);
    assert!(bad.stderr.contains("unknown agent preset \"cursor\""), "{}", bad.stderr);
}
