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
    crate::git::init::init_with_files(root, REPO, "calc: helpers, tests and a linter").map_err(|e| format!("demo: {e}"))
}

fn temp_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("retry-run-demo-{}-{nanos}", std::process::id()))
}

/// Runs the demo; `keep` leaves the temporary directory in place.
pub fn demo(keep: bool) -> Result<Ending, RunError> {
    let dir = temp_dir();
    let result = demo_in(&dir);
    if keep {
        println!("\nThe demo's files are kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
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
    println!("retry-run demo: a repository with a failing test and a lint error, in {}", repo_dir.display());
    println!("The agent is a script that only knows what its prompt tells it.\n");
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
        println!("\n---- the prompt of attempt 2 (retry-run inspect {TASK_ID}/2 --prompt) ----\n");
        print!("{text}");
        println!("---- end of the prompt ----");
    }
    if code == Ending::Succeeded {
        println!("\nThe second attempt fixed both problems because the prompt said what failed.");
    } else {
        println!(
            "\nThe demo did not succeed (the task escalated); `retry-run report {TASK_ID}` in {} says why.",
            repo_dir.display()
        );
    }
    Ok(code)
}
