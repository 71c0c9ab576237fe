//! Test support, the one place that builds repositories, runs the real
//! `retry-run` binary and provides the fake agent:
//!
//! - [`TestEnv`]: a temporary directory with a private HOME and XDG
//!   directories; every git and retry-run process runs hermetically in it
//!   (no user or system git config, fixed identities and dates).
//! - [`TestEnv::repo`] ([`repo`]) builds a repository from files with the
//!   real `git`; [`Fixture`] ([`fixture`]) builds one of `testdata-repos/`.
//! - [`TestEnv::run`] runs the binary and captures its exit code, stdout
//!   and stderr as a [`Run`].
//! - [`FakeAgent`] ([`agent`]): the scripted stand-in for an agent.
//! - [`record`]: reading what a run recorded.
//! - [`tools`]: what some tests need from package registries (pytest,
//!   jsonschema, the agent CLIs), installed on first use into a cache
//!   outside the checkout.
//! - [`child`]: this test binary re-executed as a child process.
//! - [`browser`]: `retry-run ui` in a real headless chromium.
//! - [`modes`]: an attack under namespaces or the fallback, as root or as
//!   an unprivileged user.

pub(crate) mod agent;
pub(crate) mod browser;
pub(crate) mod child;
pub(crate) mod fixture;
pub(crate) mod modes;
pub(crate) mod record;
pub(crate) mod repo;
pub(crate) mod tools;

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) use agent::{Agent, FakeAgent};
pub(crate) use fixture::{Fixture, HeadMode};
pub(crate) use repo::RepoBuilder;

/// The `.gitconfig` of every HOME of a test.
const GITCONFIG: &str = "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n";

/// A temporary directory with a HOME inside it (`home/`), in which every
/// process of a test runs.
pub(crate) struct TestEnv {
    dir: tempfile::TempDir,
    /// PATH of every process the test starts.
    path: OsString,
    /// Fake agents written so far (their script files are numbered).
    agents: Cell<u32>,
    /// retry-run installed elsewhere ([`TestEnv::install_retry_run_in`]):
    /// the directory holding its copies, which every later command runs.
    installed: std::cell::RefCell<Option<tempfile::TempDir>>,
}

impl TestEnv {
    pub(crate) fn new() -> TestEnv {
        TestEnv::with_path(std::env::var_os("PATH").unwrap_or_default())
    }

    /// A `TestEnv` whose `python3` has pytest and jsonschema (the
    /// virtualenv of [`tools::python_tools`] first on PATH when the
    /// system's lacks them). `None` when they cannot be installed because
    /// PyPI cannot be reached; the test has then said SKIPPED and returns.
    pub(crate) fn with_python_tools() -> Option<TestEnv> {
        match tools::python_tools() {
            Ok(None) => Some(TestEnv::new()),
            Ok(Some(bin)) => {
                let mut path = OsString::from(bin);
                path.push(":");
                path.push(std::env::var_os("PATH").unwrap_or_default());
                Some(TestEnv::with_path(path))
            }
            Err(why) => {
                tools::skipped(&why);
                None
            }
        }
    }

    fn with_path(path: OsString) -> TestEnv {
        // Not beneath /tmp: a confined process gets a private /tmp, where
        // the test's home, agents and servers would vanish. Nor beneath the
        // project's own checkout, where "not a repository" would find it.
        let dir =
            tempfile::Builder::new().prefix("retry-run-it-").tempdir_in(test_root()).expect("a temporary directory");
        let env = TestEnv { dir, path, agents: Cell::new(0), installed: Default::default() };
        env.new_home("home");
        env
    }

    /// The temporary directory itself.
    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.path("home")
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// PATH of every process the test starts.
    pub(crate) fn path_var(&self) -> &OsStr {
        &self.path
    }

    /// Writes a file outside every repository (a task file, a verifier
    /// script, a config), creating its directory; returns its path.
    pub(crate) fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create the file's directory");
        }
        std::fs::write(&p, content).expect("write a file of the test");
        p
    }

    /// Another HOME in the temporary directory (another user or machine),
    /// with the same git config as [`TestEnv::home`].
    pub(crate) fn new_home(&self, name: &str) -> PathBuf {
        let home = self.path(name);
        std::fs::create_dir_all(&home).expect("create HOME");
        std::fs::write(home.join(".gitconfig"), GITCONFIG).expect("write .gitconfig");
        home
    }

    /// `program` in `dir`, in the hermetic environment with [`TestEnv::home`].
    pub(crate) fn command(&self, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        self.command_as(&self.home(), program, dir)
    }

    /// `program` in `dir`, in the hermetic environment with `home` as HOME:
    /// no user or system config, fixed identities and dates, the XDG
    /// directories under `home`.
    pub(crate) fn command_as(&self, home: &Path, program: impl AsRef<OsStr>, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        // What a shell gives a program it starts: PWD is where it starts,
        // OLDPWD where the shell was before.
        cmd.env_clear()
            .current_dir(dir)
            .env("PWD", dir)
            .env("OLDPWD", home)
            .env("PATH", &self.path)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("GIT_CONFIG_GLOBAL", home.join(".gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("LC_ALL", "C");
        cmd
    }

    /// Runs git in `dir`; panics with its output when it fails.
    pub(crate) fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_raw(dir, args.iter().map(OsStr::new));
        assert!(
            out.status.success(),
            "git {args:?} failed in {}:\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    pub(crate) fn git_raw<'a>(&self, dir: &Path, args: impl IntoIterator<Item = &'a OsStr>) -> Output {
        self.command("git", dir).args(args).output().expect("git runs")
    }

    /// The real retry-run binary in `dir`, not started yet (to spawn it, or
    /// to change its environment first).
    pub(crate) fn retry_run(&self, dir: &Path) -> Command {
        self.command(self.retry_run_exe(), dir)
    }

    /// [`TestEnv::retry_run`] with `home` as HOME.
    pub(crate) fn retry_run_as(&self, home: &Path, dir: &Path) -> Command {
        self.command_as(home, self.retry_run_exe(), dir)
    }

    /// The retry-run executable this test runs: the one cargo built (or
    /// `$RETRY_RUN_TEST_EXE`: another build's, to show a test failing on an
    /// earlier commit), or its copy from [`TestEnv::install_retry_run_in`].
    pub(crate) fn retry_run_exe(&self) -> PathBuf {
        match &*self.installed.borrow() {
            Some(d) => d.path().join("retry-run"),
            None => built_exe("retry-run"),
        }
    }

    /// Copies retry-run and its supervisor into a new directory beneath
    /// `parent` (`/tmp`: where a CI unpacks it, or `CARGO_TARGET_DIR`
    /// points), which every later command of this test runs. Returns the
    /// copy of retry-run.
    pub(crate) fn install_retry_run_in(&self, parent: &Path) -> PathBuf {
        let d = tempfile::Builder::new().prefix("retry-run-bin-").tempdir_in(parent).expect("a directory for the copy");
        for name in ["retry-run", "retry-run-supervisor"] {
            std::fs::copy(built_exe(name), d.path().join(name)).expect("copy the executable");
        }
        let exe = d.path().join("retry-run");
        *self.installed.borrow_mut() = Some(d);
        exe
    }

    /// Runs the real retry-run binary in `dir` to its end.
    pub(crate) fn run(&self, dir: &Path, args: &[&str]) -> Run {
        Run::of(self.retry_run(dir).args(args))
    }

    /// Runs the real retry-run binary in `dir` to its end, `input` on its
    /// stdin.
    pub(crate) fn run_with_stdin(&self, dir: &Path, args: &[&str], input: &[u8]) -> Run {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = self
            .retry_run(dir)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the program starts");
        let mut stdin = child.stdin.take().expect("stdin");
        let input = input.to_vec();
        // Written from a thread: the program may print before it has read it all.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let out = child.wait_with_output().expect("the program ends");
        writer.join().expect("the writer ends");
        Run::from_output(&out)
    }

    /// `retry-run <args> -- <agent>` in `dir`, to its end.
    pub(crate) fn run_agent(&self, dir: &Path, args: &[&str], agent: &Agent) -> Run {
        Run::of(self.retry_run(dir).args(agent.after(args)))
    }

    /// A repository to be built in `name` under the temporary directory.
    pub(crate) fn repo(&self, name: &str) -> RepoBuilder<'_> {
        RepoBuilder::new(self, self.path(name))
    }

    /// Writes `agent`'s script; the agent is then a command line for
    /// `retry-run run -- ...` or an agent `command` in the config.
    pub(crate) fn agent(&self, agent: FakeAgent) -> Agent {
        let n = self.agents.get() + 1;
        self.agents.set(n);
        agent.install(self, n)
    }
}

/// How a process ended and what it printed.
#[derive(Debug)]
pub(crate) struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Runs `cmd` to its end.
    pub(crate) fn of(cmd: &mut Command) -> Run {
        Run::from_output(&cmd.output().expect("the program starts"))
    }

    pub(crate) fn from_output(out: &Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }

    /// The error, which must be one line of stderr and not a panic.
    #[track_caller]
    pub(crate) fn error_line(&self) -> &str {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert!(
            !lines.is_empty()
                && lines[0].starts_with("retry-run: error: ")
                && lines[1..].iter().all(|l| l.starts_with("  caused by: ") || l.starts_with("hint: ")),
            "expected one line of error, then only causes and hints, got:\n{}",
            self.stderr
        );
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        lines[0]
    }

    /// The `hint: ` lines after the error.
    pub(crate) fn hints(&self) -> Vec<&str> {
        self.stderr.lines().filter_map(|l| l.strip_prefix("hint: ")).collect()
    }

    #[track_caller]
    pub(crate) fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "exit code\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

/// Every fixture under `testdata-repos/`.
pub(crate) fn all_fixtures() -> Vec<Fixture> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata-repos");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata-repos exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension() == Some(OsStr::new("toml")))
        .collect();
    names.sort();
    names.iter().map(|p| Fixture::load(p)).collect()
}

/// Sets `[worktree] keep = "all"` in the repository's retry-run.toml and
/// commits it: for a test that looks into a task's worktree after the task
/// ended (by default it is removed then).
pub(crate) fn keep_worktrees(env: &TestEnv, r: &Path) {
    let path = r.join("retry-run.toml");
    let toml = std::fs::read_to_string(&path).unwrap_or_default();
    let toml = if toml.contains("[worktree]\n") {
        toml.replacen("[worktree]\n", "[worktree]\nkeep = \"all\"\n", 1)
    } else {
        format!("{toml}\n[worktree]\nkeep = \"all\"\n")
    };
    std::fs::write(&path, toml).expect("write retry-run.toml");
    env.git(r, &["add", "retry-run.toml"]);
    env.git(r, &["commit", "-qm", "keep the worktrees"]);
}

/// Every file under `root` (`.git` included): path -> (mode, content or link target).
pub(crate) fn files_under(root: &Path) -> BTreeMap<Vec<u8>, (u32, Vec<u8>)> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<Vec<u8>, (u32, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).expect("readable dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(root).expect("under root").as_os_str().as_bytes().to_vec();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let mode = meta.permissions().mode();
            if meta.file_type().is_symlink() {
                out.insert(rel, (mode, std::fs::read_link(&path).expect("link").as_os_str().as_bytes().to_vec()));
            } else if meta.is_dir() {
                out.insert(rel, (mode, Vec::new()));
                walk(&path, root, out);
            } else {
                out.insert(rel, (mode, std::fs::read(&path).expect("file")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Processes whose working directory is inside `dir`.
pub(crate) fn processes_in(dir: &Path) -> Vec<String> {
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

/// retry-run's executable `name` as cargo built it, or beside
/// `$RETRY_RUN_TEST_EXE` when that names another build's `retry-run`. The
/// supervisor is the sandbox crate's: a build of the workspace (`cargo
/// build`, `cargo nextest run` at its root) puts it beside `retry-run`.
fn built_exe(name: &str) -> PathBuf {
    let exe = match std::env::var_os("RETRY_RUN_TEST_EXE") {
        Some(other) => PathBuf::from(other),
        None => PathBuf::from(env!("CARGO_BIN_EXE_retry-run")),
    };
    let exe = exe.with_file_name(name);
    assert!(exe.is_file(), "{} is missing: build the whole workspace (`cargo build` at its root)", exe.display());
    exe
}

/// Where each test's directory is made: `$RETRY_RUN_TEST_TMPDIR`, else
/// `/var/tmp` (outside the sandbox's private `/tmp`), else the system's.
fn test_root() -> PathBuf {
    if let Some(d) = std::env::var_os("RETRY_RUN_TEST_TMPDIR") {
        return PathBuf::from(d);
    }
    let var_tmp = Path::new("/var/tmp");
    if var_tmp.is_dir() && tempfile::tempdir_in(var_tmp).is_ok() { var_tmp.to_path_buf() } else { std::env::temp_dir() }
}
