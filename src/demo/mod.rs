//! `retry-run demo`: the whole loop on a small repository carried inside
//! the binary (`src/demo/repo/`): a failing test and a lint problem,
//! checks that need only `sh`, and a scripted agent (`agent.sh`) that
//! guesses wrong on its first attempt and fixes both problems on the
//! second, only because the prompt tells it what failed.
//!
//! The repository is written (git layer, libgit2) into a temporary directory,
//! which is removed afterwards unless `--keep`.

use std::path::{Path, PathBuf};

use crate::run::{Ending, RunError};
use crate::run::{Options, run};

/// The repository's files: path and content.
const REPO: &[(&str, &str)] = &[
    ("README.md", include_str!("repo/README.md")),
    ("retry-run.toml", include_str!("repo/retry-run.toml")),
    ("lint.sh", include_str!("repo/lint.sh")),
    ("src/calc.sh", include_str!("repo/src/calc.sh")),
    ("tests/run.sh", include_str!("repo/tests/run.sh")),
];
const AGENT: &str = include_str!("agent.sh");
const TASK: &str = include_str!("task.md");
const TASK_ID: &str = "make-the-calc-checks-pass";

/// Writes the demo repository with one commit on `main`.
pub fn create_repo(root: &Path) -> Result<(), String> {
    crate::git::demo_repo::create(root, REPO, "calc: helpers, tests and a linter").map_err(|e| format!("demo: {e}"))
}

fn temp_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("retry-run-demo-{}-{nanos}", std::process::id()))
}

/// Runs the demo; `keep` leaves the temporary directory in place. Without
/// it the directory is removed however the demo ends: returning, failing,
/// panicking ([`Removed`]) or interrupted by Ctrl-C, SIGTERM or SIGHUP
/// ([`interrupted::remove_on_signal`]).
pub fn demo(keep: bool) -> Result<Ending, RunError> {
    let dir = temp_dir();
    let _removed = (!keep).then(|| Removed(dir.clone()));
    if !keep {
        interrupted::remove_on_signal(&dir);
    }
    let result = demo_in(&dir);
    if keep {
        crate::console::outln!("\nThe demo's files are kept in {}", dir.display());
    }
    result
}

/// Removes `dir` and everything in it. A process that was just stopped may
/// still be writing there for a moment (a sandbox's last children): a
/// removal that fails is tried again, for up to a second.
fn remove_all(dir: &Path) {
    for _ in 0..20 {
        if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Removes the demo's temporary directory when dropped.
struct Removed(PathBuf);

impl Drop for Removed {
    fn drop(&mut self) {
        remove_all(&self.0);
    }
}

/// The demo interrupted: its temporary directory removed, then the
/// signal's default action (the exit status says the signal, as a shell
/// expects). A handler that only writes the signal's number to a pipe; a
/// thread reading the pipe does the rest. A handler installed later (the
/// run loop's own) takes over from this one.
mod interrupted {
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicI32, Ordering};

    const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
    /// The pipe's writing end, for the handler.
    static WRITE_FD: AtomicI32 = AtomicI32::new(-1);
    static DIR: OnceLock<PathBuf> = OnceLock::new();

    extern "C" fn on_signal(sig: libc::c_int) {
        let byte = sig as u8;
        let fd = WRITE_FD.load(Ordering::Relaxed);
        if fd >= 0 {
            // SAFETY: write(2) is async-signal-safe; the buffer is a local byte.
            unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
        }
    }

    /// Removes `dir` when one of [`SIGNALS`] arrives (once per process).
    pub fn remove_on_signal(dir: &Path) {
        if DIR.set(dir.to_path_buf()).is_err() {
            return;
        }
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array it is given.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return;
        }
        WRITE_FD.store(fds[1], Ordering::Relaxed);
        let read_fd = fds[0];
        std::thread::spawn(move || {
            let mut byte = 0u8;
            // SAFETY: reads one byte into a local from a descriptor this thread owns.
            let n = unsafe { libc::read(read_fd, (&mut byte as *mut u8).cast(), 1) };
            if n != 1 {
                return;
            }
            if let Some(dir) = DIR.get() {
                super::remove_all(dir);
            }
            let sig = i32::from(byte);
            // SAFETY: the default action restored, then the signal raised again.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
            std::process::exit(128 + sig);
        });
        for sig in SIGNALS {
            // SAFETY: a handler that only calls write(2), installed with an
            // empty mask; SA_RESTART keeps interrupted reads going.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    }
}

fn demo_in(dir: &Path) -> Result<Ending, RunError> {
    let repo_dir = dir.join("calc");
    std::fs::create_dir_all(&repo_dir)
        .map_err(|e| RunError::environment(format!("{}: cannot create the demo directory: {e}", repo_dir.display())))?;
    create_repo(&repo_dir).map_err(RunError::environment)?;
    let agent = dir.join("agent.sh");
    let task = dir.join("task.md");
    for (p, text) in [(&agent, AGENT), (&task, TASK)] {
        std::fs::write(p, text).map_err(|e| RunError::environment(format!("{}: {e}", p.display())))?;
    }
    crate::console::outln!(
        "retry-run demo: a repository with a failing test and a lint error, in {}",
        repo_dir.display()
    );
    crate::console::outln!("The agent is a script that only knows what its prompt tells it.\n");
    let code = run(
        &repo_dir,
        Options {
            task_file: Some(task),
            agent: vec!["sh".into(), agent.display().to_string(), "{prompt_file}".into()],
            quiet: true,
            ..Options::default()
        },
    )?;
    let store = crate::record::Store::new(&repo_dir.join(".git"));
    let prompt = store.attempt(TASK_ID, 2).prompt();
    if let Ok(text) = std::fs::read_to_string(&prompt) {
        crate::console::outln!("\n---- the prompt of attempt 2 (retry-run inspect {TASK_ID}/2 --prompt) ----\n");
        crate::console::out!("{text}");
        crate::console::outln!("---- end of the prompt ----");
    }
    if code == Ending::Succeeded {
        crate::console::outln!("\nThe second attempt fixed both problems because the prompt said what failed.");
    } else {
        crate::console::outln!(
            "\nThe demo did not succeed (the task escalated); `retry-run report {TASK_ID}` in {} says why.",
            repo_dir.display()
        );
    }
    Ok(code)
}
