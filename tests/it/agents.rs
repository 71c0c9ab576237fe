//! Presets with the real agent CLIs, each talking to a fake model server
//! (`tests/agents/fake_*.py`) that this test starts on 127.0.0.1. The
//! server answers with a wrong edit first and the right one only when the
//! request carries the check's failure, so a success at attempt 2 proves
//! the feedback reached the real agent through the prompt.
//!
//! The CLIs come from `support::tools`: installed from their registries
//! into a cache outside the checkout on first use, reused after. A CLI
//! that cannot be installed because its registry cannot be reached makes
//! its test say SKIPPED with the reason. The checks run the real pytest
//! (`TestEnv::with_python_tools`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::record::{events, of_type, outcomes};
use crate::support::tools::{npm_agent, pip_agent, skipped};
use crate::support::{FakeAgent, TestEnv, processes_in};

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
        let port_file = env.path(&format!("{script}.port"));
        let log = env.path(&format!("{script}.log"));
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
    env.repo("repo")
        .file("calc.py", CALC)
        .file("tests/test_calc.py", TESTS)
        .file(".gitignore", "__pycache__/\n")
        .file(
            "retry-run.toml",
            format!("{toml}\n[[check]]\nname = \"pytest\"\nrun = \"python3 -m pytest -p no:cacheprovider -rA tests\"\nkind = \"test\"\n"),
        )
        .commit()
}

/// A python one-liner that rewrites `a - b` in calc.py.
fn edit(to: &str) -> String {
    format!(
        "python3 -c \"import pathlib; p = pathlib.Path('calc.py'); p.write_text(p.read_text().replace('a - b', '{to}'))\""
    )
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
    run_task(env, r, bin, vars, server);
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

/// Runs the task "Fix add so that the tests pass" in `r` with `bin` first
/// on PATH, `vars` in the environment and the fake model server the one
/// host reachable; asserts that it succeeded.
fn run_task(env: &TestEnv, r: &Path, bin: &Path, vars: &[(&str, String)], server: &Server) {
    let mut path = bin.as_os_str().to_owned();
    path.push(":");
    path.push(env.path_var());
    // The fake model server is the one host the agent may reach, through
    // the sandbox's proxy (the CLI's own hosts are not reachable here).
    let project = std::fs::read_to_string(r.join("retry-run.toml")).expect("retry-run.toml");
    let config =
        env.write("preset-config.toml", format!("{project}\n[sandbox]\nnetwork = [\"127.0.0.1:{}\"]\n", server.port));
    let out = env
        .retry_run(r)
        .env("PATH", path)
        .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
        .args(["run", "--quiet", "--config"])
        .arg(&config)
        .args(["--task", "Fix add so that the tests pass"])
        .output()
        .expect("retry-run runs");
    let agent_out = std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{TASK}/attempts/1/agent.out")))
        .unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\nagent:\n{agent_out}\nserver: {:?}", server.requests());
}

/// The task run with a fake model server in its self-checking mode
/// (`FAKE_MCP`): the agent edits wrongly, calls run_checks through the
/// preset's MCP wiring, reads the failing test and its assertion, fixes
/// it, calls run_checks again, sees green and finishes. Asserts success at
/// attempt 1 with two self-checks recorded, and that the answers the
/// model server received named the test, then said every gate passed.
/// Returns the server's log of the self-checks.
fn self_checking(env: &TestEnv, r: &Path, bin: &Path, vars: &[(&str, String)], server: &Server) -> Vec<Value> {
    run_task(env, r, bin, vars, server);
    assert_eq!(outcomes(r, TASK), ["SUCCESS"]);
    let ev = events(r, TASK);
    let runs: Vec<&Value> = of_type(&ev, "SelfChecked").into_iter().filter(|c| c["tool"] == "run_checks").collect();
    let passed: Vec<&Value> = runs.iter().map(|c| &c["passed"]).collect();
    assert_eq!(passed, [&Value::Bool(false), &Value::Bool(true)], "{runs:?}");
    // The server ended with the agent: not a process it left running.
    for f in of_type(&ev, "AgentFinished") {
        assert!(!f["limits_hit"].to_string().contains("left running"), "{f}");
    }
    let seen: Vec<Value> = server.requests().into_iter().filter(|q| q.get("self_check").is_some()).collect();
    assert_eq!(seen.len(), 2, "{seen:?}");
    let first = seen[0]["self_check"].as_str().unwrap_or("");
    assert!(first.contains("FAIL") && first.contains("tests/test_calc.py::test_add"), "{first}");
    assert!(first.contains("assert 6 == 5"), "the assertion reached the model: {first}");
    let second = seen[1]["self_check"].as_str().unwrap_or("");
    assert!(second.contains("every gate passed"), "{second}");
    let prompt =
        std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{TASK}/attempts/1/prompt.md"))).expect("prompt");
    assert!(prompt.contains("MCP server named `retry-run`"), "the prompt says the tools exist: {prompt}");
    seen
}

/// An agent CLI as the tests install it: its directory in the agents'
/// cache, its package at the version tested, its program.
struct AgentCli {
    preset: &'static str,
    dir: &'static str,
    package: &'static str,
    program: &'static str,
    /// From PyPI into a virtualenv, else from npm.
    pip: bool,
}

const CLAUDE_CODE: AgentCli = AgentCli {
    preset: "claude-code",
    dir: "claude-code",
    package: "@anthropic-ai/claude-code@2.1.197",
    program: "claude",
    pip: false,
};
const CODEX: AgentCli =
    AgentCli { preset: "codex", dir: "codex", package: "@openai/codex@0.169.0", program: "codex", pip: false };
const AIDER: AgentCli =
    AgentCli { preset: "aider", dir: "aider-venv", package: "aider-chat==0.86.2", program: "aider", pip: true };
const GEMINI: AgentCli =
    AgentCli { preset: "gemini", dir: "gemini", package: "@google/gemini-cli@0.61.0", program: "gemini", pip: false };
const OPENCODE: AgentCli =
    AgentCli { preset: "opencode", dir: "opencode", package: "opencode-ai@1.18.33", program: "opencode", pip: false };

impl AgentCli {
    /// The directory holding its program, installed when missing; `Err`
    /// says why it cannot be had.
    fn install(&self) -> Result<PathBuf, String> {
        if self.pip {
            pip_agent(self.dir, self.package, self.program)
        } else {
            npm_agent(self.dir, self.package, self.program)
        }
    }

    /// The tree holding its code: the npm packages installed with it, or
    /// its virtualenv's libraries.
    fn code(&self) -> Result<PathBuf, String> {
        let bin = self.install()?;
        let up = if self.pip { bin.parent().map(|v| v.join("lib")) } else { bin.parent().map(Path::to_path_buf) };
        Ok(up.expect("bin has a parent"))
    }
}

/// The server's variables for a tool-calling agent: a wrong edit, then the right one.
fn edits() -> Vec<(&'static str, String)> {
    vec![
        ("FAKE_WRONG_CMD", edit("a * b")),
        ("FAKE_RIGHT_CMD", edit("a + b")),
        ("FAKE_FEEDBACK", "tests/test_calc.py::test_add".into()),
    ]
}

/// The server's variables for an agent that checks its own work: a wrong
/// edit, then the right one on top of it (a different length: Python
/// trusts bytecode cached in the same second for a file of the same size).
fn self_checking_edits() -> Vec<(&'static str, String)> {
    let right = "python3 -c \"import pathlib; p = pathlib.Path('calc.py'); p.write_text(p.read_text().replace('a * b', 'a + b  # fixed'))\"";
    vec![("FAKE_WRONG_CMD", edit("a * b")), ("FAKE_RIGHT_CMD", right.to_string()), ("FAKE_MCP", "1".into())]
}

/// Claude Code's endpoint and key: the fake model server.
fn anthropic_api(server: &Server) -> [(&'static str, String); 2] {
    [
        ("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", server.port)),
        ("ANTHROPIC_API_KEY", "sk-fake-for-tests".into()),
    ]
}

fn start(env: &TestEnv, script: &str, vars: &[(&str, String)]) -> Server {
    let v: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Server::start(env, script, &v)
}

#[test]
fn claude_code_preset_with_the_real_cli_learns_from_the_failed_check() {
    let bin = match CLAUDE_CODE.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "max_attempts = 2\n[agent]\npreset = \"claude-code\"\ntimeout = \"2m\"\n");
    let server = start(&env, "fake_anthropic.py", &edits());
    let api = anthropic_api(&server);
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

#[test]
fn claude_code_preset_runs_the_gates_itself_through_mcp_and_succeeds_at_its_first_attempt() {
    let bin = match CLAUDE_CODE.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "max_attempts = 2\n[agent]\npreset = \"claude-code\"\ntimeout = \"2m\"\n");
    let vars = self_checking_edits();
    let server = start(&env, "fake_anthropic.py", &vars);
    let api = anthropic_api(&server);
    let seen = self_checking(&env, &r, &bin, &api, &server);
    // The tools as Claude Code offered them to the model.
    let tools = seen[0]["tools"].to_string();
    assert!(tools.contains("mcp__retry-run__run_checks") && tools.contains("mcp__retry-run__task"), "{tools}");
}

/// Codex's self-checking task ([`self_checking`]), with retry-run copied
/// under `installed_in` first when given; returns what the model server saw.
fn codex_self_checking(installed_in: Option<&Path>) -> Option<Vec<Value>> {
    let bin = match CODEX.install() {
        Ok(b) => b,
        Err(why) => {
            skipped(&why);
            return None;
        }
    };
    let env = TestEnv::with_python_tools()?;
    if let Some(dir) = installed_in {
        let exe = env.install_retry_run_in(dir);
        assert!(env.retry_run_exe() == exe && exe.starts_with(dir), "{}", exe.display());
    }
    let vars = self_checking_edits();
    let server = start(&env, "fake_openai.py", &vars);
    let r = python_repo(
        &env,
        &format!("max_attempts = 2\n[agent]\npreset = \"codex\"\ntimeout = \"2m\"\nargs = {}\n", codex_args(&server)),
    );
    let key = [("OPENAI_API_KEY", "sk-fake-for-tests".to_string())];
    Some(self_checking(&env, &r, &bin, &key, &server))
}

#[test]
fn codex_preset_runs_the_gates_itself_through_mcp_and_succeeds_at_its_first_attempt() {
    let Some(seen) = codex_self_checking(None) else { return };
    let namespaces = seen[0]["namespaces"].as_array().expect("namespaces");
    assert!(namespaces.contains(&Value::from("mcp__retry_run")), "{:?}", seen[0]);
}

/// retry-run itself under `/tmp` (unpacked in a CI's scratch directory):
/// Codex starts the MCP command it is given inside the sandbox, whose
/// `/tmp` is private; the command stays visible there, and the task's two
/// runs of the gates through it are recorded.
#[test]
fn codex_preset_self_checks_through_mcp_with_retry_run_installed_under_tmp() {
    codex_self_checking(Some(Path::new("/tmp")));
}

#[test]
fn gemini_preset_runs_the_gates_itself_through_mcp_and_succeeds_at_its_first_attempt() {
    let bin = match GEMINI.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
    let server = start(&env, "fake_gemini.py", &self_checking_edits());
    let settings = env.home().join(".gemini/settings.json");
    let users = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}}}"#;
    std::fs::create_dir_all(env.home().join(".gemini")).expect("mkdir");
    std::fs::write(&settings, users).expect("settings");
    // Only calc.py may change: the settings written for the agent are not
    // its change, in the self-checks as in the real gates.
    let r = python_repo(
        &env,
        "max_attempts = 2\n[scope]\nallow = [\"calc.py\"]\n[agent]\npreset = \"gemini\"\ntimeout = \"2m\"\n",
    );
    let api = [
        ("GEMINI_API_KEY", "fake-for-tests".to_string()),
        ("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{}", server.port)),
    ];
    let seen = self_checking(&env, &r, &bin, &api, &server);
    let tools = seen[0]["tools"].to_string();
    assert!(tools.contains("mcp_retry-run_run_checks"), "{tools}");
    // Its settings were the worktree's for the agent's run, and are gone:
    // the change is calc.py alone, and the user's settings are theirs.
    let files = env.git(&r, &["diff", "--name-only", "HEAD", &format!("refs/retry-run/{TASK}/1")]);
    assert_eq!(files, "calc.py");
    assert_eq!(std::fs::read_to_string(&settings).expect("settings"), users);
}

#[test]
fn opencode_preset_runs_the_gates_itself_through_mcp_and_succeeds_at_its_first_attempt() {
    let bin = match OPENCODE.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
    let server = start(&env, "fake_openai.py", &self_checking_edits());
    let config = opencode_config(&env, &server);
    let r = python_repo(&env, "max_attempts = 2\n[agent]\npreset = \"opencode\"\ntimeout = \"2m\"\n");
    let vars = [("OPENCODE_CONFIG", config.display().to_string())];
    let seen = self_checking(&env, &r, &bin, &vars, &server);
    let tools = seen[0]["tools"].to_string();
    assert!(tools.contains("retry-run_run_checks"), "{tools}");
}

/// Codex's model and endpoint, the user's: a provider of their own, in
/// the preset's args.
fn codex_args(server: &Server) -> String {
    let base = format!("model_providers.fake.base_url=\\\"http://127.0.0.1:{}/v1\\\"", server.port);
    format!(
        "[\"-m\", \"fake\", \"-c\", \"model_provider=fake\", \"-c\", \"model_providers.fake.name=fake\", \"-c\", \"{base}\", \"-c\", \"model_providers.fake.wire_api=responses\", \"-c\", \"model_providers.fake.env_key=OPENAI_API_KEY\"]"
    )
}

#[test]
fn aider_preset_with_the_real_cli_learns_from_the_failed_check() {
    let venv_bin = match AIDER.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
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
    // Only `aider` from its virtualenv on PATH: the checks keep the python3 with pytest.
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
    let bin = match CODEX.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
    let server = start(&env, "fake_openai.py", &edits());
    let args = codex_args(&server);
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
    let bin = match GEMINI.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
    let server = start(&env, "fake_gemini.py", &edits());
    // The user's own Gemini CLI settings: an API key.
    let settings = env.home().join(".gemini/settings.json");
    let users = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}}}"#;
    std::fs::create_dir_all(env.home().join(".gemini")).expect("mkdir");
    std::fs::write(&settings, users).expect("settings");
    let r = python_repo(&env, "max_attempts = 2\n[agent]\npreset = \"gemini\"\ntimeout = \"2m\"\n");
    let api = [
        ("GEMINI_API_KEY", "fake-for-tests".to_string()),
        ("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{}", server.port)),
    ];
    run_preset(&env, &r, &bin, &api, &server, &|q| q["kind"] == "call");
    // The preset seeds a missing settings file only: the user's stays theirs.
    assert_eq!(std::fs::read_to_string(&settings).expect("settings"), users);
}

#[test]
fn opencode_preset_with_the_real_cli_learns_from_the_failed_check() {
    let bin = match OPENCODE.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
    let server = start(&env, "fake_openai.py", &edits());
    let config = opencode_config(&env, &server);
    let r = python_repo(&env, "max_attempts = 2\n[agent]\npreset = \"opencode\"\ntimeout = \"2m\"\n");
    let vars = [("OPENCODE_CONFIG", config.display().to_string())];
    run_preset(&env, &r, &bin, &vars, &server, &|q| q["tools"] == true && q["answered"] == false);
}

/// The user's own opencode config: an OpenAI-compatible provider (the fake
/// server) and its model.
fn opencode_config(env: &TestEnv, server: &Server) -> PathBuf {
    let config = env.path("opencode.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"provider":{{"fake":{{"npm":"@ai-sdk/openai-compatible","name":"fake","options":{{"baseURL":"http://127.0.0.1:{}/v1","apiKey":"x"}},"models":{{"m":{{"name":"m"}}}}}}}},"model":"fake/m","autoupdate":false,"share":"disabled"}}"#,
            server.port
        ),
    )
    .expect("config");
    config
}

/// The keys of every object in `v`, at any depth, added to `out`.
fn json_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                json_keys(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| json_keys(v, out)),
        _ => {}
    }
}

/// Which of `needles` occur in a file under `dir` other than
/// documentation (`*.md`); symbolic links are not followed and a file with
/// several links is read once.
fn found_in_code(dir: &Path, needles: &[String]) -> Vec<bool> {
    use std::os::unix::fs::MetadataExt;
    let ac = aho_corasick::AhoCorasick::new(needles).expect("patterns");
    let mut found = vec![false; needles.len()];
    let keep = needles.iter().map(String::len).max().unwrap_or(1) - 1;
    let mut seen = std::collections::HashSet::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())).flatten() {
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.is_dir() {
                dirs.push(path);
            } else if meta.is_file()
                && path.extension().is_none_or(|x| x != "md")
                && seen.insert((meta.dev(), meta.ino()))
            {
                search_file(&ac, &path, keep, &mut found);
                if found.iter().all(|f| *f) {
                    return found;
                }
            }
        }
    }
    found
}

/// Marks in `found` the patterns of `ac` in the file at `path`, read in
/// blocks that each start with the last `keep` bytes of the one before, so
/// that a name across two blocks is seen; overlapping names count (one may
/// be the start of another).
fn search_file(ac: &aho_corasick::AhoCorasick, path: &Path, keep: usize, found: &mut [bool]) {
    use std::io::Read;
    let mut file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = vec![0u8; keep + (4 << 20)];
    let mut held = 0;
    loop {
        let n = file.read(&mut buf[held..]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if n == 0 {
            return;
        }
        let end = held + n;
        for m in ac.find_overlapping_iter(&buf[..end]) {
            found[m.pattern().as_usize()] = true;
        }
        held = keep.min(end);
        buf.copy_within(end - held..end, 0);
    }
}

/// Each variable a preset sets, and each settings key of a JSON file it
/// seeds, is a name its installed CLI holds in its code (its bundle, its
/// binary, its packages; never only its documentation): a variable the CLI
/// never reads would say "telemetry off" and turn nothing off.
#[test]
fn every_variable_and_setting_a_preset_gives_is_one_its_cli_holds() {
    for cli in [CLAUDE_CODE, CODEX, AIDER, GEMINI, OPENCODE] {
        let code = match cli.code() {
            Ok(c) => c,
            Err(why) => {
                skipped(&why);
                continue;
            }
        };
        let p = retry_run::agents::preset(cli.preset).expect("preset");
        let mut names: Vec<String> = p.env.keys().cloned().collect();
        for seed in p.state_files.values() {
            if let Ok(v) = serde_json::from_str::<Value>(seed) {
                json_keys(&v, &mut names);
            }
        }
        if names.is_empty() {
            continue;
        }
        let found = found_in_code(&code, &names);
        let missing: Vec<&String> = names.iter().zip(&found).filter(|(_, f)| !**f).map(|(n, _)| n).collect();
        assert!(missing.is_empty(), "{}: {missing:?} appear nowhere in {} (its code)", cli.preset, code.display());
    }
}

/// A repository with a text file the fake agents edit.
fn plain_repo(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("plain")
        .file("src/app.txt", "value = 1\n")
        .file(".gitignore", "*.log\n")
        .file("retry-run.toml", toml)
        .commit()
}

#[test]
fn what_the_agent_drops_in_the_worktree_is_left_out_of_the_change() {
    let env = TestEnv::new();
    let r = plain_repo(&env, "max_attempts = 1\n[agent]\nignore = [\".aider*\"]\n[scope]\nallow = [\"src/**\"]\n");
    let agent = env.agent(
        FakeAgent::new()
            .write("src/app.txt", "2\n")
            .write(".aider.chat.history.md", "chat\n")
            .write(".aider.tags.cache.v4/db", "x\n")
            .append(".gitignore", ".aider*\n"),
    );
    env.run_agent(&r, &["run", "--quiet", "--task", "Drop"], &agent).assert_code(0);
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
    // Copied beside the test: the sandbox's /tmp is private, and a clone of
    // this project may live beneath the machine's.
    let captured = env.write(
        "captured.json",
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/captured/claude-code-2.1.197.json"))
            .expect("the captured output"),
    );
    let agent = env.agent(FakeAgent::new().sh(&format!("cat {}", captured.display())).append("src/app.txt", "x\n"));
    let r = plain_repo(
        &env,
        &format!(
            "max_attempts = 5\n[agent]\npreset = \"claude-code\"\ncommand = {}\n[[check]]\nname = \"never\"\nrun = \"exit 1\"\n",
            agent.toml()
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
    let slow = env.agent(FakeAgent::new().sleep("1").append("src/app.txt", "y\n"));
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Slow", "--max-duration", "2s"], &slow);
    out.assert_code(1);
    let n = outcomes(&r, "slow").len();
    assert!((1..=2).contains(&n), "{n} attempts ran");
    let esc = events(&r, "slow").into_iter().find(|e| e["type"] == "TaskEscalated").expect("escalated");
    assert!(esc["reason"].as_str().unwrap_or("").contains("retry.max_duration (2s)"), "{esc}");
}

#[test]
fn agents_lists_every_preset_with_its_command_line() {
    let env = TestEnv::new();
    let out = env.run(env.root(), &["agents", "--json"]);
    out.assert_code(0);
    let presets: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).expect("json")).collect();
    let names: Vec<&str> = presets.iter().filter_map(|p| p["preset"].as_str()).collect();
    assert_eq!(names, ["claude-code", "codex", "aider", "gemini", "opencode"]);
    let claude = &presets[0];
    assert_eq!(claude["command"][0], "claude");
    assert_eq!(claude["state"], serde_json::json!(["~/.claude", "~/.claude.json"]));
    assert_eq!(claude["hosts"][0], "api.anthropic.com");
    assert!(claude["refused_hosts"].as_array().is_some_and(|h| h.iter().any(|h| h == "downloads.claude.ai")));
    assert_eq!(claude["credential_files"], serde_json::json!(["~/.claude/.credentials.json"]));
    for p in &presets {
        assert!(p["hosts"].as_array().is_some_and(|h| !h.is_empty()), "{p}");
    }
    let text = env.run(env.root(), &["agents"]).stdout;
    assert!(text.contains("  reaches:   api.anthropic.com, platform.claude.com\n"), "{text}");
    assert!(text.contains("  login:     ~/.codex/auth.json"), "{text}");
    let r = plain_repo(&env, "max_attempts = 1\n");
    let bad = env.run(&r, &["run", "--preset", "cursor", "--task", "x"]);
    bad.assert_code(2);
    assert!(bad.stderr.contains("unknown agent preset \"cursor\""), "{}", bad.stderr);
}

#[test]
fn two_presets_in_lanes_each_learn_from_their_own_lane_and_the_gates_choose() {
    let (claude, codex) = match (CLAUDE_CODE.install(), CODEX.install()) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(why), _) | (_, Err(why)) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
    let anthropic = start(&env, "fake_anthropic.py", &edits());
    let openai = start(&env, "fake_openai.py", &edits());
    let base = format!("model_providers.fake.base_url=\\\"http://127.0.0.1:{}/v1\\\"", openai.port);
    let codex_args = format!(
        "[\"-m\", \"fake\", \"-c\", \"model_provider=fake\", \"-c\", \"model_providers.fake.name=fake\", \"-c\", \"{base}\", \"-c\", \"model_providers.fake.wire_api=responses\", \"-c\", \"model_providers.fake.env_key=OPENAI_API_KEY\"]"
    );
    let r = python_repo(
        &env,
        &format!(
            "max_attempts = 4\n[agent]\ntimeout = \"2m\"\n[sandbox]\nnetwork = [\"127.0.0.1:{}\", \"127.0.0.1:{}\"]\n\n[[lane]]\npreset = \"claude-code\"\n\n[[lane]]\npreset = \"codex\"\nargs = {codex_args}\n",
            anthropic.port, openai.port
        ),
    );
    let mut path = claude.as_os_str().to_owned();
    path.push(":");
    path.push(codex.as_os_str());
    path.push(":");
    path.push(env.path_var());
    let out = env
        .retry_run(&r)
        .env("PATH", path)
        .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", anthropic.port))
        .env("ANTHROPIC_API_KEY", "sk-fake-for-tests")
        .env("OPENAI_API_KEY", "sk-fake-for-tests")
        .args(["run", "--quiet", "--choose", "all", "--task", "Fix add so that the tests pass"])
        .output()
        .expect("retry-run runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for lane in [1, 2] {
        assert_eq!(outcomes(&r, &format!("{TASK}/lanes/{lane}")), ["CHECK_FAILURE", "SUCCESS"], "lane {lane}");
    }
    // Each agent's second call carried its own lane's failure.
    let anthropic_calls: Vec<bool> =
        anthropic.requests().iter().filter(|q| q["answer"] == "tool_use").map(|q| q["feedback"] == true).collect();
    assert_eq!(anthropic_calls, [false, true], "{:?}", anthropic.requests());
    let openai_calls: Vec<bool> =
        openai.requests().iter().filter(|q| q["answered"] == false).map(|q| q["feedback"] == true).collect();
    assert_eq!(openai_calls, [false, true], "{:?}", openai.requests());
    let ev = events(&r, TASK);
    let agents: Vec<&str> =
        ev.iter().filter(|e| e["type"] == "LaneEnded").map(|e| e["agent"].as_str().unwrap_or("?")).collect();
    assert_eq!(agents, ["claude-code", "codex"]);
    // Equal on every gate and the same one-line diff: the lower lane.
    let chosen = ev.iter().find(|e| e["type"] == "LaneChosen").expect("LaneChosen");
    assert_eq!(chosen["lane"], 1, "{chosen}");
    let winner = env.git(&r, &["rev-parse", &format!("refs/retry-run/{TASK}/lanes/1/2")]);
    assert_eq!(env.git(&r, &["rev-parse", &format!("retry-run/{TASK}")]), winner);
    assert!(processes_in(env.root()).is_empty(), "{:?}", processes_in(env.root()));
}

/// The variables a run of a CLI gets, made in its test environment.
type RunVars = dyn Fn(&TestEnv, &Server) -> Vec<(&'static str, String)> + Sync;

/// How one preset's CLI is run against a fake model server that fails its
/// requests: the server's script and its own variables, the config lines
/// of the `[agent]` table (given the server), the variables the run gets
/// (its endpoint and key, and its own retries made few, so that it gives
/// up soon), and the directory put first on `PATH` (its program).
struct Failing<'a> {
    cli: &'a AgentCli,
    script: &'static str,
    server_vars: Vec<(&'static str, String)>,
    agent_toml: &'a (dyn Fn(&Server) -> String + Sync),
    vars: &'a RunVars,
    bin: &'a (dyn Fn(&TestEnv, &Path) -> PathBuf + Sync),
}

/// For each of `kinds` (`429`, `529`, `drop`), at once, each in its own
/// test environment: the model server fails every request of the CLI that
/// way until retry-run has recorded that it runs the agent again, and
/// answers the right edit after. The run the provider failed is recorded
/// as `AgentRetried` of that kind, the worktree goes back to the
/// attempt's start, and the task succeeds at its one attempt. The
/// overload runs under the fallback sandbox (Landlock), where the
/// loopback server is reached directly and only the CLI's own words tell
/// the failure; the others under namespaces, where the proxy sees the
/// server's answer too.
fn runs_again_after_each_failure(f: &Failing<'_>, kinds: &[&str]) {
    let bin = match f.cli.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    std::thread::scope(|s| {
        for kind in kinds {
            let bin = &bin;
            s.spawn(move || runs_again_after(f, bin, kind));
        }
    });
}

fn runs_again_after(f: &Failing<'_>, bin: &Path, kind: &str) {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let flag = env.path("provider-back");
    let mut server_vars = vec![
        ("FAKE_WRONG_CMD", edit("a + b")),
        ("FAKE_RIGHT_CMD", edit("a + b")),
        ("FAKE_FAIL", kind.to_string()),
        ("FAKE_FAIL_UNTIL", flag.display().to_string()),
    ];
    server_vars.extend(f.server_vars.iter().cloned());
    let server = start(&env, f.script, &server_vars);
    let toml = format!(
        "max_attempts = 1\n[agent]\npreset = \"{}\"\ntimeout = \"4m\"\ntransient_wait = \"0s\"\n{}",
        f.cli.preset,
        (f.agent_toml)(&server)
    );
    let r = python_repo(&env, &toml);
    let mut vars = (f.vars)(&env, &server);
    let fallback = kind == "529";
    if fallback {
        vars.push(("RETRY_RUN_BWRAP", String::new()));
    }
    let bin = (f.bin)(&env, bin);
    let out = run_until_retried(&env, &r, &bin, &vars, &server, &flag);
    let ev = events(&r, TASK);
    assert_eq!(out.status.code(), Some(0), "{kind}: {}\n{ev:#?}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(outcomes(&r, TASK), ["SUCCESS"], "{kind}: one attempt, the failed run not counted");
    let retried = of_type(&ev, "AgentRetried");
    let want = match kind {
        "429" => "rate_limit",
        "529" => "overloaded",
        "503" => "server_error",
        _ => "dropped",
    };
    assert_eq!(retried.len(), 1, "{kind}: {retried:?}");
    assert_eq!((retried[0]["kind"].as_str(), retried[0]["run"].as_u64()), (Some(want), Some(1)), "{kind}");
    let said = retried[0]["said"].as_str().unwrap_or_default();
    if fallback {
        assert!(!said.contains("HTTP 529"), "{kind}: the CLI's own words: {said}");
    }
    assert!(server.requests().iter().any(|q| q.get("failed").is_some()), "{kind}");
    let files = env.git(&r, &["diff", "--name-only", "HEAD", &format!("refs/retry-run/{TASK}/1")]);
    assert_eq!(files, "calc.py", "{kind}");
    let report = env.run(&r, &["report", TASK]).stdout;
    assert!(report.contains("The model provider failed the agent 1 time(s)"), "{kind}: {report}");
}

/// As [`run_task`], started in the background: once the task's record
/// says the agent runs again (`AgentRetried`), the file `flag` is made,
/// which brings the fake model server back. Returns how it ended.
fn run_until_retried(
    env: &TestEnv,
    r: &Path,
    bin: &Path,
    vars: &[(&str, String)],
    server: &Server,
    flag: &Path,
) -> std::process::Output {
    let mut path = bin.as_os_str().to_owned();
    path.push(":");
    path.push(env.path_var());
    let project = std::fs::read_to_string(r.join("retry-run.toml")).expect("retry-run.toml");
    let config =
        env.write("preset-config.toml", format!("{project}\n[sandbox]\nnetwork = [\"127.0.0.1:{}\"]\n", server.port));
    let mut child = env
        .retry_run(r)
        .env("PATH", path)
        .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
        .args(["run", "--quiet", "--config"])
        .arg(&config)
        .args(["--task", "Fix add so that the tests pass"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("retry-run runs");
    let log = r.join(format!(".git/retry-run/tasks/{TASK}/events.jsonl"));
    let t = Instant::now();
    while child.try_wait().expect("wait").is_none() && t.elapsed() < Duration::from_secs(600) {
        if !flag.exists() && std::fs::read_to_string(&log).is_ok_and(|l| l.contains("\"AgentRetried\"")) {
            std::fs::write(flag, "").expect("flag");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().expect("retry-run ends")
}

/// The program's own directory first on `PATH`.
fn own_bin(_: &TestEnv, bin: &Path) -> PathBuf {
    bin.to_path_buf()
}

#[test]
fn claude_code_preset_runs_again_after_a_rate_limit_an_overload_and_a_dropped_connection() {
    let failing = Failing {
        cli: &CLAUDE_CODE,
        script: "fake_anthropic.py",
        server_vars: Vec::new(),
        agent_toml: &|_| String::new(),
        // Its own ten retries off (CLAUDE_CODE_MAX_RETRIES).
        vars: &|_, server| {
            let mut v = anthropic_api(server).to_vec();
            v.push(("CLAUDE_CODE_MAX_RETRIES", "0".into()));
            v
        },
        bin: &own_bin,
    };
    runs_again_after_each_failure(&failing, &["429", "529", "drop"]);
}

#[test]
fn codex_preset_runs_again_after_a_rate_limit_an_overload_and_a_dropped_connection() {
    let failing = Failing {
        cli: &CODEX,
        script: "fake_openai.py",
        server_vars: Vec::new(),
        // Its own retries of a request and of a stream off.
        agent_toml: &|server| {
            let args = codex_args(server);
            let off = "\"-c\", \"model_providers.fake.request_max_retries=0\", \"-c\", \"model_providers.fake.stream_max_retries=0\"";
            format!("args = {}, {off}]\n", args.trim_end_matches(']'))
        },
        vars: &|_, _| vec![("OPENAI_API_KEY", "sk-fake-for-tests".to_string())],
        bin: &own_bin,
    };
    runs_again_after_each_failure(&failing, &["429", "529", "drop"]);
}

#[test]
fn gemini_preset_runs_again_after_a_rate_limit_an_overload_and_a_dropped_connection() {
    let failing = Failing {
        cli: &GEMINI,
        script: "fake_gemini.py",
        server_vars: Vec::new(),
        agent_toml: &|_| String::new(),
        // The user's settings: an API key, and one try per request
        // (general.maxAttempts); a model named, so that no router request
        // of its own retries comes first.
        vars: &|env, server| {
            let settings = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"maxAttempts":1}}"#;
            std::fs::create_dir_all(env.home().join(".gemini")).expect("mkdir");
            std::fs::write(env.home().join(".gemini/settings.json"), settings).expect("settings");
            vec![
                ("GEMINI_API_KEY", "fake-for-tests".to_string()),
                ("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{}", server.port)),
                ("GEMINI_MODEL", "gemini-2.5-flash".to_string()),
            ]
        },
        bin: &own_bin,
    };
    runs_again_after_each_failure(&failing, &["429", "529", "drop"]);
}

#[test]
fn opencode_preset_runs_again_after_a_rate_limit_an_overload_and_a_dropped_connection() {
    let failing = Failing {
        cli: &OPENCODE,
        script: "fake_openai.py",
        // Its five retries, which nothing sets, wait what the server asks.
        server_vars: vec![("FAKE_RETRY_AFTER", "0".to_string())],
        agent_toml: &|_| String::new(),
        vars: &|env, server| vec![("OPENCODE_CONFIG", opencode_config(env, server).display().to_string())],
        bin: &own_bin,
    };
    runs_again_after_each_failure(&failing, &["429", "529", "drop"]);
}

/// Aider gives up after about a minute of its own retries, whatever is
/// set, and then exits 0: the preset reads its last lines all the same.
#[test]
fn aider_preset_runs_again_after_a_rate_limit_an_overload_and_a_dropped_connection() {
    let failing = Failing {
        cli: &AIDER,
        script: "fake_openai.py",
        server_vars: vec![
            ("FAKE_FILE", "calc.py".to_string()),
            ("FAKE_WRONG", "def add(a, b):\n    return a + b\n".into()),
            ("FAKE_RIGHT", "def add(a, b):\n    return a + b\n".into()),
        ],
        // The OpenAI client's own retries inside litellm off.
        agent_toml: &|server| {
            format!(
                "args = [\"--model\", \"openai/fake\", \"--openai-api-base\", \"http://127.0.0.1:{}/v1\", \"--openai-api-key\", \"sk-fake\", \"--edit-format\", \"whole\", \"--model-settings-file\", \"{}\", \"calc.py\"]\n",
                server.port,
                server.log.with_file_name("aider-models.yml").display()
            )
        },
        vars: &|_, server| {
            let settings = "- name: openai/fake\n  extra_params:\n    max_retries: 0\n";
            std::fs::write(server.log.with_file_name("aider-models.yml"), settings).expect("settings");
            Vec::new()
        },
        // Only `aider` from its virtualenv on PATH: the checks keep the
        // python3 with pytest.
        bin: &|env, venv_bin| {
            let bin = env.path("aider-bin");
            std::fs::create_dir_all(&bin).expect("mkdir");
            let _ = std::os::unix::fs::symlink(venv_bin.join("aider"), bin.join("aider"));
            bin
        },
    };
    runs_again_after_each_failure(&failing, &["429", "529", "drop"]);
}

/// The provider failing every request: past `[agent] transient_retries`
/// the run stops with exit 3 naming Claude Code's own words, and no
/// attempt is counted.
#[test]
fn claude_code_preset_stops_with_exit_3_when_the_provider_keeps_failing() {
    let bin = match CLAUDE_CODE.install() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    let Some(env) = TestEnv::with_python_tools() else { return };
    let server = start(&env, "fake_anthropic.py", &[("FAKE_FAIL", "529".into()), ("FAKE_FAIL_TIMES", "100".into())]);
    let r = python_repo(
        &env,
        "max_attempts = 2\n[agent]\npreset = \"claude-code\"\ntimeout = \"2m\"\ntransient_wait = \"0s\"\ntransient_retries = 1\n",
    );
    let mut path = bin.as_os_str().to_owned();
    path.push(":");
    path.push(env.path_var());
    let project = std::fs::read_to_string(r.join("retry-run.toml")).expect("retry-run.toml");
    let config =
        env.write("preset-config.toml", format!("{project}\n[sandbox]\nnetwork = [\"127.0.0.1:{}\"]\n", server.port));
    let out = env
        .retry_run(&r)
        .env("PATH", path)
        .envs(anthropic_api(&server))
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .args(["run", "--quiet", "--config"])
        .arg(&config)
        .args(["--task", "Fix add so that the tests pass"])
        .output()
        .expect("retry-run runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("model provider failed it 2 time(s)") && stderr.contains("529"), "{stderr}");
    assert!(outcomes(&r, TASK).is_empty(), "no attempt counted");
    let ev = events(&r, TASK);
    assert_eq!(of_type(&ev, "AgentRetried").len(), 2);
    assert_eq!(of_type(&ev, "AttemptAborted")[0]["phase"], "agent");
}
