//! No verdict stands on a result from another environment: a check's
//! earlier run (reused, or the base's cached run) stands for a run only
//! when what the check receives and loads is what it did then. Each case
//! runs a task whose fix succeeds, the same fix again in the same
//! environment (reused: the control), then changes the environment
//! outside the tree (a variable the test reads, a package upgraded with
//! the real `pip` in a virtualenv, a package upgraded with the real `npm`
//! in `node_modules`) and runs the same fix again: its verdict is the one
//! `--fresh-baseline` gives.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::record::{events, of_type, outcomes};
use crate::support::{FakeAgent, TestEnv};

/// Runs task `text` in `r` with `agent`, `vars` in the environment (and
/// `--fresh-baseline` when `fresh`); returns its outcome and its events.
fn task(
    env: &TestEnv,
    r: &Path,
    text: &str,
    agent: &FakeAgent,
    vars: &[(&str, &str)],
    fresh: bool,
) -> (String, Vec<Value>) {
    let agent = env.agent(agent.clone());
    let mut args = vec!["run", "--quiet", "--task", text];
    if fresh {
        args.push("--fresh-baseline");
    }
    let out = env.retry_run(r).args(agent.after(&args)).envs(vars.iter().copied()).output().expect("runs");
    let id = text.to_lowercase().replace(' ', "-");
    let got = outcomes(r, &id);
    assert_eq!(got.len(), 1, "{text}: {}", String::from_utf8_lossy(&out.stderr));
    (got[0].clone(), events(r, &id))
}

/// The check's run as the attempt's record has it.
fn check_run(ev: &[Value]) -> Value {
    of_type(ev, "CheckFinished").into_iter().find(|c| c["check"] == "test").cloned().expect("the check ran")
}

/// Task "One" succeeds; "Two", the same fix in the same environment,
/// reuses its run; `change` then changes what the check receives; "Three"
/// (the same fix) is judged as "Four" (the same, `--fresh-baseline`), not
/// from the earlier runs. `vars` before and after the change.
fn judged_afresh(
    env: &TestEnv,
    r: &Path,
    fix: &FakeAgent,
    before: &[(&str, &str)],
    after: &[(&str, &str)],
    change: &dyn Fn(),
) {
    let (one, _) = task(env, r, "One", fix, before, false);
    assert_eq!(one, "SUCCESS");
    let (two, ev) = task(env, r, "Two", fix, before, false);
    assert_eq!(two, "SUCCESS");
    let reused = check_run(&ev)["reused"].clone();
    assert_eq!(reused["task"], "one", "the same environment: reused {ev:#?}");
    assert!(reused["environment"].as_str().is_some_and(|e| e.contains("variables")), "{reused}");
    let base = of_type(&ev, "BaselineChecked");
    assert!(base.iter().all(|b| b["cache"]["hit"] == true), "the base's run reused: {base:?}");
    change();
    let (three, ev) = task(env, r, "Three", fix, after, false);
    let run = check_run(&ev);
    assert!(run.get("reused").is_none(), "another environment: run again {run}");
    let base = of_type(&ev, "BaselineChecked");
    assert!(base.iter().all(|b| b["cache"]["hit"] == false), "the base's run again too: {base:?}");
    let (four, _) = task(env, r, "Four", fix, after, true);
    assert_eq!(three, four, "judged as --fresh-baseline judges it");
    assert_eq!(three, "CHECK_FAILURE");
}

const CHECK: &str = "[[check]]\nname = \"test\"\nkind = \"test\"\nformat = \"generic\"\n";

#[test]
fn an_exported_variable_the_tests_read_is_part_of_what_a_result_stands_on() {
    let env = TestEnv::new();
    let r = env
        .repo("repo")
        .file("value.txt", "1\n")
        .file(
            "test.sh",
            "want=$((5 * FACTOR))\nif [ \"$(cat value.txt)\" = \"$want\" ]; then echo '1 passed'; exit 0; fi\n\
             echo \"FAILED test.sh::value - expected $want\"\nexit 1\n",
        )
        .file("retry-run.toml", format!("max_attempts = 1\n{CHECK}run = \"sh test.sh\"\n"))
        .commit();
    let fix = FakeAgent::new().write("value.txt", "10\n");
    judged_afresh(&env, &r, &fix, &[("FACTOR", "2")], &[("FACTOR", "3")], &|| {});
}

/// A package (`scalelib`) at `version` with `FACTOR = factor`, as a source
/// tree under `dir`.
fn python_package(env: &TestEnv, version: &str, factor: u32) -> PathBuf {
    let dir = env.path(&format!("scalelib-{version}"));
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("setup.py"),
        format!(
            "from setuptools import setup\nsetup(name=\"scalelib\", version=\"{version}\", py_modules=[\"scalelib\"])\n"
        ),
    )
    .expect("setup.py");
    std::fs::write(dir.join("scalelib.py"), format!("FACTOR = {factor}\n")).expect("module");
    dir
}

fn ok(cmd: &mut Command) {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_package_upgraded_with_pip_in_the_virtualenv_is_part_of_what_a_result_stands_on() {
    // The python3 with setuptools and wheel builds the package's wheels;
    // the task's own virtualenv, outside the tree, installs them.
    let Some(env) = TestEnv::with_python_tools() else { return };
    let python = |args: &[&str]| {
        let mut c = Command::new("python3");
        c.args(args).env("PATH", env.path_var()).current_dir(env.root());
        c
    };
    let venv = env.path("venv");
    ok(python(&["-m", "venv"]).arg(&venv));
    let wheels = env.path("wheels");
    let wheel = |version: &str, factor: u32| {
        let pkg = python_package(&env, version, factor);
        ok(python(&["-m", "pip", "wheel", "--quiet", "--no-index", "--no-build-isolation", "--no-deps", "-w"])
            .arg(&wheels)
            .arg(&pkg));
        wheels.join(format!("scalelib-{version}-py3-none-any.whl"))
    };
    let pip = |whl: &Path| {
        ok(Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--no-index", "--disable-pip-version-check"])
            .arg(whl)
            .current_dir(env.root()));
    };
    pip(&wheel("1.0", 2));
    let upgraded = wheel("2.0", 3);
    let r = env
        .repo("repo")
        .file("app.py", "import scalelib\n\n\ndef scaled(x):\n    return x\n")
        .file(
            "test_app.py",
            "import sys\nimport app\nif app.scaled(5) == 10:\n    print('1 passed')\n    sys.exit(0)\n\
             print('FAILED test_app.py::test_scaled - expected 10, got', app.scaled(5))\nsys.exit(1)\n",
        )
        .file(".gitignore", "__pycache__/\n")
        .file("retry-run.toml", format!("max_attempts = 1\n{CHECK}run = \"python3 -B test_app.py\"\n"))
        .commit();
    let fix = FakeAgent::new().write("app.py", "import scalelib\n\n\ndef scaled(x):\n    return x * scalelib.FACTOR\n");
    // The virtualenv first on PATH, as an activated one is.
    let path = format!("{}:{}", venv.join("bin").display(), env.path_var().to_string_lossy());
    let vars = [("PATH", path.as_str())];
    judged_afresh(&env, &r, &fix, &vars, &vars, &|| pip(&upgraded));
}

#[test]
fn a_package_upgraded_in_node_modules_is_part_of_what_a_result_stands_on() {
    let env = TestEnv::new();
    let pack = |version: &str, factor: u32| {
        let dir = env.path(&format!("scalelib-{version}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join("package.json"),
            format!("{{\"name\":\"scalelib\",\"version\":\"{version}\",\"main\":\"index.js\"}}\n"),
        )
        .expect("package.json");
        std::fs::write(dir.join("index.js"), format!("exports.FACTOR = {factor};\n")).expect("index.js");
        ok(Command::new("npm").args(["pack", "--silent", "--pack-destination"]).arg(env.root()).current_dir(&dir));
        env.path(&format!("scalelib-{version}.tgz"))
    };
    let (v1, v2) = (pack("1.0.0", 2), pack("2.0.0", 3));
    let r = env
        .repo("repo")
        .file("package.json", "{\"name\":\"app\",\"version\":\"1.0.0\",\"private\":true}\n")
        .file("app.js", "const lib = require('scalelib');\nexports.scaled = (x) => x;\n")
        .file(
            "test.js",
            "const app = require('./app');\nif (app.scaled(5) === 10) { console.log('1 passed'); process.exit(0); }\n\
             console.log('FAILED test.js::scaled - expected 10, got ' + app.scaled(5));\nprocess.exit(1);\n",
        )
        .file(".gitignore", "node_modules/\n")
        .file("retry-run.toml", format!("max_attempts = 1\n{CHECK}run = \"node test.js\"\n"))
        .commit();
    let npm = |tgz: &Path| {
        ok(Command::new("npm")
            .args(["install", "--no-save", "--offline", "--no-audit", "--no-fund", "--silent"])
            .arg(tgz)
            .env("npm_config_cache", env.path("npm-cache"))
            .current_dir(&r));
    };
    npm(&v1);
    let fix =
        FakeAgent::new().write("app.js", "const lib = require('scalelib');\nexports.scaled = (x) => x * lib.FACTOR;\n");
    judged_afresh(&env, &r, &fix, &[], &[], &|| npm(&v2));
}

/// A toolchain behind a version manager's shim (a `shims` directory, as
/// pyenv, asdf, mise and nodenv make): the program's version is asked, and
/// another version behind the same shim is another environment.
#[test]
fn the_toolchain_behind_a_shim_is_part_of_what_a_result_stands_on() {
    let env = TestEnv::new();
    let shims = env.path("shims");
    std::fs::create_dir_all(&shims).expect("mkdir");
    let chosen = env.write("chosen-version", "v1\n");
    let found = Command::new("sh").args(["-c", "command -v node"]).output().expect("sh");
    let real = PathBuf::from(String::from_utf8_lossy(&found.stdout).trim());
    assert!(real.is_absolute(), "node on PATH");
    let shim = shims.join("node");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then cat {}; exit 0; fi\nexec {} \"$@\"\n",
            chosen.display(),
            real.display()
        ),
    )
    .expect("shim");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let r = env
        .repo("repo")
        .file("app.js", "exports.value = 1;\n")
        .file("test.js", "if (require('./app').value === 2) { console.log('1 passed'); } else { console.log('FAILED test.js::value'); process.exit(1); }\n")
        .file("retry-run.toml", format!("max_attempts = 1\n{CHECK}run = \"node test.js\"\n"))
        .commit();
    let fix = FakeAgent::new().write("app.js", "exports.value = 2;\n");
    let path = format!("{}:{}", shims.display(), env.path_var().to_string_lossy());
    let vars = [("PATH", path.as_str())];
    assert_eq!(task(&env, &r, "One", &fix, &vars, false).0, "SUCCESS");
    let (_, ev) = task(&env, &r, "Two", &fix, &vars, false);
    let reused = check_run(&ev)["reused"].clone();
    assert_eq!(reused["task"], "one", "the same toolchain: reused");
    assert!(reused["environment"].as_str().is_some_and(|e| e.contains("node behind")), "{reused}");
    std::fs::write(&chosen, "v2\n").expect("another version");
    let (_, ev) = task(&env, &r, "Three", &fix, &vars, false);
    assert!(check_run(&ev).get("reused").is_none(), "another toolchain: run again");
}
