//! What some tests need from package registries, installed on first use
//! into a cache outside the checkout and reused after: a virtualenv with
//! pytest, jsonschema, ruff and flake8 (the honest-success, init and
//! agent-preset tests run the real pytest; the SARIF test validates with
//! jsonschema; the init tests run ruff and flake8 on the base), and the
//! agent CLIs the preset tests run for real (from npm, Aider from PyPI).
//!
//! The cache is `$RETRY_RUN_CI_CACHE`, default `~/.cache/retry-run-ci` (the
//! one `.ci/run` names): the virtualenv is its `venv/`, the agents are under
//! `$RETRY_RUN_AGENTS_CACHE`, default its `agents/`. An install found
//! working is used as it is; otherwise it is made holding a file lock
//! beside its directory (`venv.lock`, `agents/<name>.lock`), so that tests
//! running in parallel and other test processes install once. An installer
//! that takes no lock (an older `.ci/run`) is waited out: a failed install
//! that is not the registry's is tried again before it fails the test.
//!
//! Only when a registry cannot be reached does a test skip, saying
//! `SKIPPED: <reason>`; any other failure to install fails the test.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The cache of installed tools.
pub(crate) fn ci_cache() -> PathBuf {
    match std::env::var_os("RETRY_RUN_CI_CACHE") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/retry-run-ci"),
    }
}

/// Where the agent CLIs are installed.
pub(crate) fn agents_cache() -> PathBuf {
    match std::env::var_os("RETRY_RUN_AGENTS_CACHE") {
        Some(p) => PathBuf::from(p),
        None => ci_cache().join("agents"),
    }
}

/// Says that the running test could not run and why, past the test
/// harness's capture (a direct write to stderr), so that a skip is never
/// silent: `SKIPPED: <test>: <why>`.
pub(crate) fn skipped(why: &str) {
    use std::io::Write;
    // The test harness names each test's thread after the test.
    let test = std::thread::current().name().map(|n| format!("{n}: ")).unwrap_or_default();
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}{why}");
}

/// The `bin` directory of a virtualenv whose `python3` has the
/// [`PYTHON_TOOLS`], installed when missing; `None` when the `python3` on
/// PATH has them already. `Err` says why they cannot be had: PyPI cannot be
/// reached.
pub(crate) fn python_tools() -> Result<Option<PathBuf>, String> {
    static TOOLS: OnceLock<Result<Option<PathBuf>, String>> = OnceLock::new();
    TOOLS.get_or_init(install_python_tools).clone()
}

/// What the virtualenv holds: the lint tools pinned, so that the init
/// tests' diagnostic counts do not move with their releases.
const PYTHON_TOOLS: [&str; 6] = ["pytest", "jsonschema", "ruff==0.6.9", "flake8==7.1.1", "setuptools", "wheel==0.45.1"];

fn has_python_tools(python: &Path) -> bool {
    // ruff's module finds its binary beside the interpreter.
    Command::new(python)
        .args(["-c", "import pytest, jsonschema, flake8, setuptools, wheel, ruff.__main__ as r; r.find_ruff_bin()"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn install_python_tools() -> Result<Option<PathBuf>, String> {
    if has_python_tools(Path::new("python3")) {
        return Ok(None);
    }
    let venv = ci_cache().join("venv");
    let bin = venv.join("bin");
    let works = || has_python_tools(&bin.join("python3"));
    if works() {
        return Ok(Some(bin));
    }
    with_lock(&ci_cache().join("venv.lock"), || {
        pip_install(&venv, &PYTHON_TOOLS, &works)?;
        Ok(Some(bin.clone()))
    })
}

/// Installs `packages` into the virtualenv `venv` (created when missing)
/// until `works`. Another installer that does not take the lock (an older
/// `.ci/run`) may be filling the same virtualenv: a failure that is not the
/// registry's is tried again a few times before it fails the test.
fn pip_install(venv: &Path, packages: &[&str], works: &dyn Fn() -> bool) -> Result<(), String> {
    let python = venv.join("bin/python3");
    let mut last = String::new();
    for round in 0..3 {
        if works() {
            return Ok(());
        }
        if round > 0 {
            std::thread::sleep(Duration::from_secs(10));
        }
        if !python.exists() {
            let out = output(Command::new("python3").args(["-m", "venv"]).arg(venv), "python3");
            if !out.status.success() && !python.exists() {
                panic!(
                    "python3 -m venv {} failed (Debian and Ubuntu need the python3-venv package): {}",
                    venv.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
        }
        let out = output(Command::new(&python).args(["-m", "pip", "install", "-q"]).args(packages), "pip");
        if works() {
            return Ok(());
        }
        last = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if let Some(why) = unreachable(&last) {
            return Err(format!(
                "cannot install {} from PyPI into {}: the registry cannot be reached: {why}",
                packages.join(" "),
                venv.display(),
            ));
        }
    }
    panic!("pip install {} into {} failed: {last}", packages.join(" "), venv.display())
}

/// The `bin` directory of an npm package installed in the agents' cache
/// under `dir`, installing it when missing. `Err` says why it cannot be
/// had: the npm registry cannot be reached.
pub(crate) fn npm_agent(dir: &str, package: &str, program: &str) -> Result<PathBuf, String> {
    let prefix = agents_cache().join(dir);
    let bin = prefix.join("node_modules/.bin");
    let works = || runs(&bin.join(program));
    if works() {
        return Ok(bin);
    }
    with_lock(&agents_cache().join(format!("{dir}.lock")), || {
        let mut last = String::new();
        for round in 0..3 {
            if works() {
                return Ok(bin.clone());
            }
            if round > 0 {
                std::thread::sleep(Duration::from_secs(10));
            }
            std::fs::create_dir_all(&prefix).unwrap_or_else(|e| panic!("{}: {e}", prefix.display()));
            let out = output(
                Command::new("npm").args(["install", "--no-fund", "--no-audit", "--prefix"]).arg(&prefix).arg(package),
                "npm (the agent preset tests install the agent CLIs with it)",
            );
            if works() {
                return Ok(bin.clone());
            }
            last = String::from_utf8_lossy(&out.stderr).trim().to_string();
            if let Some(why) = unreachable(&last) {
                return Err(format!(
                    "cannot install {package} from npm into {}: the registry cannot be reached: {why}",
                    prefix.display(),
                ));
            }
        }
        panic!("npm install {package} into {} did not give a working {program}: {last}", prefix.display())
    })
}

/// The `bin` directory of a virtualenv in the agents' cache under `dir`
/// with `package` installed from PyPI, installing it when missing. `Err`
/// says why it cannot be had: PyPI cannot be reached.
pub(crate) fn pip_agent(dir: &str, package: &str, program: &str) -> Result<PathBuf, String> {
    let venv = agents_cache().join(dir);
    let bin = venv.join("bin");
    let works = || runs(&bin.join(program));
    if works() {
        return Ok(bin);
    }
    with_lock(&agents_cache().join(format!("{dir}.lock")), || {
        pip_install(&venv, &[package], &works)?;
        Ok(bin.clone())
    })
}

/// The `bin` directory of a virtualenv in the CI cache (`mypy/`) holding
/// mypy, pinned so that the init tests' counts do not move with its
/// releases; installed when missing. `Err`: PyPI cannot be reached.
pub(crate) fn mypy() -> Result<PathBuf, String> {
    let venv = ci_cache().join("mypy");
    let bin = venv.join("bin");
    let works = || runs(&bin.join("mypy"));
    if works() {
        return Ok(bin);
    }
    with_lock(&ci_cache().join("mypy.lock"), || {
        pip_install(&venv, &["mypy==1.13.0"], &works)?;
        Ok(bin.clone())
    })
}

/// Whether `program --version` runs and succeeds.
fn runs(program: &Path) -> bool {
    program.exists()
        && Command::new(program)
            .arg("--version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
}

fn output(cmd: &mut Command, what: &str) -> Output {
    cmd.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{what} cannot run: {e}"))
}

/// The line of an installer's error that says its registry cannot be
/// reached, if one does.
fn unreachable(stderr: &str) -> Option<&str> {
    const MARKERS: [&str; 18] = [
        // pip
        "Failed to establish a new connection",
        "Temporary failure in name resolution",
        "Name or service not known",
        "Network is unreachable",
        "Connection refused",
        "Max retries exceeded",
        "(from versions: none)",
        "Could not fetch URL",
        "ReadTimeoutError",
        "ConnectTimeoutError",
        // npm
        "ENOTFOUND",
        "EAI_AGAIN",
        "ECONNREFUSED",
        "ECONNRESET",
        "ETIMEDOUT",
        "ENETUNREACH",
        "EHOSTUNREACH",
        "network request to",
    ];
    stderr.lines().map(str::trim).find(|line| MARKERS.iter().any(|m| line.contains(m)))
}

/// Runs `f` holding an exclusive lock on the file `lock` (created with its
/// directory), released when `f` returns.
fn with_lock<T>(lock: &Path, f: impl FnOnce() -> T) -> T {
    if let Some(dir) = lock.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
    let file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock)
        .unwrap_or_else(|e| panic!("{}: {e}", lock.display()));
    // flock(2), as `flock` of util-linux in .ci/run takes it.
    file.lock().unwrap_or_else(|e| panic!("{}: cannot lock: {e}", lock.display()));
    let out = f();
    drop(file);
    out
}

/// A virtualenv at `venv` (without pip) that sees the test tools of
/// [`python_tools`]: through a `.pth` file naming their site-packages, or
/// the system's. Its `bin` directory.
pub(crate) fn seeing_python_tools(venv: &Path) -> Result<PathBuf, String> {
    let tools = python_tools()?;
    let python = tools.as_ref().map_or_else(|| PathBuf::from("python3"), |bin| bin.join("python3"));
    let mut create = Command::new(&python);
    create.args(["-m", "venv", "--without-pip"]);
    if tools.is_none() {
        create.arg("--system-site-packages");
    }
    let out = output(create.arg(venv), "python3 -m venv");
    if !out.status.success() {
        return Err(format!("python3 -m venv {}: {}", venv.display(), String::from_utf8_lossy(&out.stderr)));
    }
    let bin = venv.join("bin");
    if tools.is_some() {
        let purelib = |py: &Path| {
            let out = output(
                Command::new(py).args(["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]),
                "python3",
            );
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        };
        let theirs = purelib(&python);
        std::fs::write(purelib(&bin.join("python3")).join("ci_tools.pth"), format!("{}\n", theirs.display()))
            .map_err(|e| format!("ci_tools.pth: {e}"))?;
    }
    Ok(bin)
}

/// A virtualenv at `venv` that sees the test tools of [`python_tools`]
/// (through a `.pth` file naming their site-packages, or the system's) and
/// has the project at `project` installed in editable mode by the real pip
/// (`pip install -e`), the way tox and most developers' venvs hold it.
pub(crate) fn editable_venv(venv: &Path, project: &Path) -> Result<PathBuf, String> {
    let bin = seeing_python_tools(venv)?;
    let tools = python_tools()?;
    let python = tools.as_ref().map_or_else(|| PathBuf::from("python3"), |bin| bin.join("python3"));
    let out = output(
        Command::new(&python)
            .args(["-m", "pip", "--python"])
            .arg(bin.join("python3"))
            .args(["install", "-q", "--no-deps", "--no-build-isolation", "-e"])
            .arg(project),
        "pip install -e",
    );
    if !out.status.success() {
        return Err(format!("pip install -e {}: {}", project.display(), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(bin)
}

/// The `node_modules` directory of `packages`, installed with npm into the
/// CI cache's `dir/` when `programs` (in its `.bin`) do not all run yet,
/// one installer at a time. `Err` says why they cannot be had: the npm
/// registry cannot be reached; another failure fails the test.
fn npm_tools(dir: &str, packages: &[&str], programs: &[&str]) -> Result<PathBuf, String> {
    let prefix = ci_cache().join(dir);
    let modules = prefix.join("node_modules");
    let works = || programs.iter().all(|p| runs(&modules.join(".bin").join(p)));
    if works() {
        return Ok(modules);
    }
    with_lock(&ci_cache().join(format!("{dir}.lock")), || {
        if works() {
            return Ok(modules.clone());
        }
        std::fs::create_dir_all(&prefix).unwrap_or_else(|e| panic!("{}: {e}", prefix.display()));
        let out = output(
            Command::new("npm").args(["install", "--no-fund", "--no-audit", "--prefix"]).arg(&prefix).args(packages),
            "npm (the JavaScript tests install their tools with it)",
        );
        if works() {
            return Ok(modules.clone());
        }
        let last = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let what = packages.join(" ");
        match unreachable(&last) {
            Some(why) => Err(format!("cannot install {what} from npm: the registry cannot be reached: {why}")),
            None => {
                panic!("npm install {what} into {} gave no working {}: {last}", prefix.display(), programs.join(", "))
            }
        }
    })
}

/// The `node_modules/.bin` directory of jest 30.5.2 and vitest 4.1.12 (the
/// runner-verdict tests run them for real), installed into the CI cache
/// (`js-runners/`) when missing.
pub(crate) fn js_test_runners() -> Result<PathBuf, String> {
    Ok(npm_tools("js-runners", &["jest@30.5.2", "vitest@4.1.12"], &["jest", "vitest"])?.join(".bin"))
}

/// The `node_modules` directory holding typescript 5.9.3, whose compiler
/// API the TypeScript and JavaScript scope oracle (`tests/oracle/ts_scopes.js`,
/// run with it on NODE_PATH) parses with; installed into the CI cache
/// (`js-typescript/`) when missing.
pub(crate) fn js_typescript() -> Result<PathBuf, String> {
    npm_tools("js-typescript", &["typescript@5.9.3"], &["tsc"])
}

/// The `node_modules/.bin` directory of ESLint 10.16.0 (the TypeScript and
/// JavaScript lint tests run it for real), installed into the CI cache
/// (`js-lint/`) when missing.
pub(crate) fn js_lint_tools() -> Result<PathBuf, String> {
    Ok(npm_tools("js-lint", &["eslint@10.16.0"], &["eslint"])?.join(".bin"))
}

/// The `node_modules` directory of the project at `project` (one of
/// `tests/real-projects/`), its dependencies installed by `npm ci` from the
/// project's own `package.json` and `package-lock.json` into the CI cache's
/// `dir/`: when the copies of those two files kept there differ from the
/// project's (its lock file changed since), or when `programs` (in its
/// `.bin`) do not all run; one installer at a time. No install script runs
/// (`--ignore-scripts`: the projects need none). `Err` says why they
/// cannot be had: the npm registry cannot be reached; another failure
/// fails the test.
pub(crate) fn npm_ci(dir: &str, project: &Path, programs: &[&str]) -> Result<PathBuf, String> {
    let prefix = ci_cache().join(dir);
    let modules = prefix.join("node_modules");
    const MANIFESTS: [&str; 2] = ["package.json", "package-lock.json"];
    let read = |p: PathBuf| std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let wanted: Vec<Vec<u8>> = MANIFESTS.iter().map(|m| read(project.join(m))).collect();
    let works = || {
        MANIFESTS.iter().zip(&wanted).all(|(m, want)| std::fs::read(prefix.join(m)).is_ok_and(|have| &have == want))
            && programs.iter().all(|p| runs(&modules.join(".bin").join(p)))
    };
    if works() {
        return Ok(modules);
    }
    with_lock(&ci_cache().join(format!("{dir}.lock")), || {
        if works() {
            return Ok(modules.clone());
        }
        std::fs::create_dir_all(&prefix).unwrap_or_else(|e| panic!("{}: {e}", prefix.display()));
        for (m, text) in MANIFESTS.iter().zip(&wanted) {
            std::fs::write(prefix.join(m), text).unwrap_or_else(|e| panic!("{}: {e}", prefix.join(m).display()));
        }
        let out = output(
            Command::new("npm").args(["ci", "--ignore-scripts", "--no-fund", "--no-audit"]).current_dir(&prefix),
            "npm (the real-project tests install their dependencies with it)",
        );
        if works() {
            return Ok(modules.clone());
        }
        let last = String::from_utf8_lossy(&out.stderr).trim().to_string();
        match unreachable(&last) {
            Some(why) => Err(format!(
                "cannot install the dependencies of {} from npm: the registry cannot be reached: {why}",
                project.display()
            )),
            None => panic!(
                "npm ci of {} in {} gave no working {}: {last}",
                project.display(),
                prefix.display(),
                programs.join(", ")
            ),
        }
    })
}

/// `node_modules` of the project at `project`: a directory holding a link
/// to each package and program of the `node_modules` directories
/// `installs` (an earlier one's name wins), as an install would leave it,
/// without a copy.
pub(crate) fn link_node_modules(project: &Path, installs: &[&Path]) {
    let nm = project.join("node_modules");
    std::fs::create_dir_all(nm.join(".bin")).expect("mkdir node_modules/.bin");
    for modules in installs {
        for e in std::fs::read_dir(modules).expect("node_modules readable").flatten() {
            let name = e.file_name();
            if name == ".bin" {
                continue;
            }
            let _ = std::os::unix::fs::symlink(e.path(), nm.join(&name));
        }
        for e in std::fs::read_dir(modules.join(".bin")).expect("node_modules/.bin readable").flatten() {
            let _ = std::os::unix::fs::symlink(e.path(), nm.join(".bin").join(e.file_name()));
        }
    }
}
