//! Child processes for what must happen in another process: holding a
//! task's OS lock, appending to an event log until killed, measuring a
//! command's peak memory. The child is this test binary re-executed to run
//! one `#[ignore]`d test (so it never runs in the normal suite), which reads
//! what to do from variables its parent sets and fails when they are
//! missing. The child says it is ready by creating a marker file that its
//! parent waits for.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use retry_run::record::{RecordError, Store};

/// The marker file a child creates once it is ready.
pub(crate) const READY: &str = "RETRY_RUN_TEST_READY";
const LOCK_COMMON: &str = "RETRY_RUN_TEST_LOCK_COMMON";
const LOCK_TASK: &str = "RETRY_RUN_TEST_LOCK_TASK";
const MEASURE: &str = "RETRY_RUN_TEST_MEASURE";

/// Runs the ignored test `test` (its full path, `module::name`) of this
/// binary in a child process with `vars` in its environment.
pub(crate) fn spawn(test: &str, vars: &[(&str, &OsStr)]) -> Child {
    Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", test, "--ignored", "--nocapture", "--test-threads=1"])
        .envs(vars.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the child starts")
}

/// Waits until `marker` exists; panics if the child ends before.
pub(crate) fn wait_until_ready(child: &mut Child, marker: &Path) {
    while !marker.exists() {
        if let Some(status) = child.try_wait().expect("the child's status") {
            panic!("the child ended ({status}) before it was ready");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kills the child with SIGKILL and reaps it.
pub(crate) fn kill(mut child: Child) {
    child.kill().expect("SIGKILL");
    let _ = child.wait();
}

/// Another process holding a task's lock, as a run does; killed when
/// released or dropped (which releases the lock with the process).
pub(crate) struct LockHolder {
    child: Option<Child>,
}

impl LockHolder {
    /// Starts the holder of `task`'s lock in the record under `common`
    /// (a repository's `.git`) and waits until it holds it; `ready` is a
    /// path for its marker file.
    pub(crate) fn start(common: &Path, task: &str, ready: PathBuf) -> LockHolder {
        let _ = std::fs::remove_file(&ready);
        let mut child = spawn(
            "support::child::lock_holder",
            &[(LOCK_COMMON, common.as_os_str()), (LOCK_TASK, OsStr::new(task)), (READY, ready.as_os_str())],
        );
        wait_until_ready(&mut child, &ready);
        LockHolder { child: Some(child) }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Kills the holder: once this returns, the lock is free.
    pub(crate) fn release(mut self) {
        if let Some(c) = self.child.take() {
            kill(c);
        }
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        if let Some(c) = self.child.take() {
            kill(c);
        }
    }
}

/// The child of [`LockHolder`]: takes the lock, says so, holds it until killed.
#[test]
#[ignore = "a child process that LockHolder starts; it does not run on its own"]
fn lock_holder() {
    let var =
        |name: &str| std::env::var_os(name).unwrap_or_else(|| panic!("{name} is not set: LockHolder starts this"));
    let (common, task, ready) = (var(LOCK_COMMON), var(LOCK_TASK), var(READY));
    let task = task.to_str().expect("a UTF-8 task name");
    let store = Store::new(Path::new(&common));
    let _lock = loop {
        match store.lock(task) {
            Ok(lock) => break lock,
            Err(RecordError::Locked { .. }) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => panic!("cannot lock task {task}: {e}"),
        }
    };
    std::fs::write(&ready, "").expect("create the ready marker");
    loop {
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// Runs `cmd` to its end (its output discarded) from a fresh child process,
/// and returns its exit code and the peak resident memory, in KiB, of it
/// and of the processes it waited for (`getrusage`). Measured from a small
/// process: a child starts with the memory of the process it was forked
/// from counted in its peak, and this test binary, running many tests at
/// once, can be large. `cmd`'s environment is the variables it sets (as
/// `TestEnv`'s commands, which clear the rest); `scratch` is a path for
/// the two processes' files.
pub(crate) fn peak_memory(cmd: &Command, scratch: &Path) -> (i32, i64) {
    let text = |s: &OsStr| s.to_str().expect("UTF-8").to_string();
    let spec = serde_json::json!({
        "program": text(cmd.get_program()),
        "args": cmd.get_args().map(text).collect::<Vec<_>>(),
        "dir": cmd.get_current_dir().map(|d| text(d.as_os_str())),
        "env": cmd.get_envs().filter_map(|(k, v)| Some((text(k), text(v?)))).collect::<Vec<_>>(),
    });
    std::fs::write(scratch, spec.to_string()).expect("write the command");
    let status = spawn("support::child::measure", &[(MEASURE, scratch.as_os_str())]).wait().expect("wait");
    assert!(status.success(), "the measuring child failed: {status}");
    let result = std::fs::read_to_string(scratch.with_extension("out")).expect("the measurement");
    let (code, kb) = result.split_once(' ').expect("\"code kb\"");
    (code.parse().expect("an exit code"), kb.parse().expect("KiB"))
}

/// The child of [`peak_memory`].
#[test]
#[ignore = "a child process that peak_memory starts; it does not run on its own"]
fn measure() {
    let scratch = std::env::var_os(MEASURE).expect("RETRY_RUN_TEST_MEASURE is not set: peak_memory starts this");
    let scratch = Path::new(&scratch);
    let spec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(scratch).expect("read the command")).expect("JSON");
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array().expect("an array").iter().map(|s| s.as_str().expect("a string").to_string()).collect()
    };
    let mut cmd = Command::new(spec["program"].as_str().expect("program"));
    cmd.args(strings(&spec["args"])).env_clear().stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    if let Some(dir) = spec["dir"].as_str() {
        cmd.current_dir(dir);
    }
    for kv in spec["env"].as_array().expect("env") {
        let kv = strings(kv);
        cmd.env(&kv[0], &kv[1]);
    }
    let status = cmd.status().expect("the command runs");
    // This process's only child is the command: the usage of its waited-for
    // children is the command's and its own waited-for children's.
    // SAFETY: rusage is plain data, for which all zeroes is a valid value.
    let mut usage = unsafe { std::mem::zeroed::<libc::rusage>() };
    // SAFETY: getrusage writes into a live local of the right type.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) }, 0, "getrusage");
    let code = status.code().unwrap_or(-1);
    std::fs::write(scratch.with_extension("out"), format!("{code} {}", usage.ru_maxrss)).expect("write the result");
}
