//! Snapshots a task worktree, for `bench/worktree.py` (the attempt loop does
//! this itself; there is no command for it).
//!
//!     cargo run --release --example snapshot -- REPO WORKTREE BASE REFNAME

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [repo, worktree, base, refname] = args.as_slice() else {
        eprintln!("usage: snapshot REPO WORKTREE BASE REFNAME");
        return ExitCode::from(2);
    };
    let result = retry_run::git::Repo::discover(Path::new(repo)).and_then(|r| {
        let base = r.resolve(base)?.oid;
        r.snapshot(Path::new(worktree), base, refname, "snapshot")
    });
    match result {
        Ok(snap) => {
            println!("{}", snap.commit);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("snapshot: {e}");
            ExitCode::from(3)
        }
    }
}
