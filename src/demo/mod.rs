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

/// The demo repository could not be written.
#[derive(Debug, thiserror::Error)]
#[error("demo: {0}")]
pub(crate) struct DemoError(#[from] crate::git::GitError);

/// Writes the demo repository with one commit on `main`.
pub(crate) fn create_repo(root: &Path) -> Result<(), DemoError> {
    Ok(crate::git::demo_repo::create(root, REPO, "calc: helpers, tests and a linter")?)
}

fn temp_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("retry-run-demo-{}-{nanos}", std::process::id()))
}

/// Runs the demo; `keep` leaves the temporary directory in place. Without
/// it the directory is removed however the demo ends: returning, failing,
/// panicking ([`Removed`]) or interrupted by Ctrl-C, SIGTERM or SIGHUP
/// ([`interrupted::remove_on_signal`]).
pub(crate) fn demo(keep: bool) -> Result<Ending, RunError> {
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
/// expects). `signal-hook`'s handler writes the signal to a pipe; a thread
/// reading it does the rest. Once the run loop catches SIGINT and SIGTERM
/// itself ([`crate::process::catch_interrupts`]), they are its own.
mod interrupted {
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;

    const SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

    /// Removes `dir` when one of [`SIGNALS`] arrives (once per process).
    pub(super) fn remove_on_signal(dir: &Path) {
        static ONCE: AtomicBool = AtomicBool::new(false);
        if ONCE.swap(true, Ordering::SeqCst) {
            return;
        }
        let Ok(mut signals) = Signals::new(SIGNALS) else { return };
        let dir = dir.to_path_buf();
        std::thread::spawn(move || {
            for sig in signals.forever() {
                if sig != SIGHUP && crate::process::interrupts_caught() {
                    continue;
                }
                super::remove_all(&dir);
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                std::process::exit(128 + sig);
            }
        });
    }
}

fn demo_in(dir: &Path) -> Result<Ending, RunError> {
    let repo_dir = dir.join("calc");
    std::fs::create_dir_all(&repo_dir)
        .map_err(|e| RunError::io(format!("{}: cannot create the demo directory", repo_dir.display()), e))?;
    create_repo(&repo_dir).map_err(|DemoError(e)| RunError::Git(e))?;
    let agent = dir.join("agent.sh");
    let task = dir.join("task.md");
    for (p, text) in [(&agent, AGENT), (&task, TASK)] {
        std::fs::write(p, text).map_err(|e| RunError::io(p.display().to_string(), e))?;
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
