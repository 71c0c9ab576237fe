//! `retry-run diff` against `git diff` itself, on every fixture: statuses,
//! old paths of renames, line counts and binary flags must agree.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use retry_run::pathfmt::display;

use crate::support::fixture::os;
use crate::support::{HeadMode, TestEnv, all_fixtures};

/// path -> (status letter, old path, numstat "adds\tdels")
type Files = BTreeMap<String, (String, Option<String>, String)>;

fn fields(out: &[u8]) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = out.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
    if v.last().is_some_and(Vec::is_empty) {
        v.pop();
    }
    v
}

/// Parses `git diff -z --name-status` and `-z --numstat` output.
fn git_files(name_status: &[u8], numstat: &[u8]) -> Files {
    let mut files = Files::new();
    let mut it = fields(name_status).into_iter();
    while let Some(status) = it.next() {
        let letter = String::from_utf8_lossy(&status[..1]).into_owned();
        let first = it.next().expect("path");
        if letter == "R" || letter == "C" {
            let new = it.next().expect("new path");
            files.insert(display(&new).into_owned(), (letter, Some(display(&first).into_owned()), String::new()));
        } else {
            files.insert(display(&first).into_owned(), (letter, None, String::new()));
        }
    }
    let mut it = fields(numstat).into_iter();
    while let Some(head) = it.next() {
        let mut parts = head.splitn(3, |&b| b == b'\t');
        let (adds, dels, path) =
            (parts.next().unwrap_or(b""), parts.next().unwrap_or(b""), parts.next().unwrap_or(b""));
        let (adds, dels) = (String::from_utf8_lossy(adds), String::from_utf8_lossy(dels));
        let path = if path.is_empty() {
            // A rename: "adds\tdels\t" then old and new paths as fields.
            let _old = it.next().expect("old");
            display(&it.next().expect("new")).into_owned()
        } else {
            display(path).into_owned()
        };
        if let Some(f) = files.get_mut(&path) {
            f.2 = format!("{adds}\t{dels}");
        }
    }
    files
}

fn ours(json: &serde_json::Value) -> Files {
    json["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            let counts = if f["binary"] == true {
                "-\t-".to_string()
            } else {
                format!("{}\t{}", f["additions"], f["deletions"])
            };
            (
                f["path"].as_str().expect("path").to_string(),
                (f["status"].as_str().expect("status").to_string(), f["old_path"].as_str().map(String::from), counts),
            )
        })
        .collect()
}

#[test]
fn agrees_with_git_on_every_fixture() {
    let mut compared = 0;
    for fixture in all_fixtures().into_iter().filter(|f| f.git_oracle) {
        for mode in [HeadMode::Commit, HeadMode::Worktree] {
            let env = TestEnv::new();
            let repo = fixture.build(&env, "repo", mode);
            let (mut args, oracle_dir, range) = match mode {
                HeadMode::Commit => {
                    (vec!["diff", "--base", "main", "--head", "feature"], repo.clone(), "main...feature".to_string())
                }
                HeadMode::Worktree => {
                    // The oracle: a copy of the repository with everything added.
                    let copy = env.path("copy");
                    let st = std::process::Command::new("cp").arg("-a").arg(&repo).arg(&copy).status().expect("cp");
                    assert!(st.success());
                    env.git(&copy, &["add", "-A"]);
                    let mb = env.git(&copy, &["merge-base", "main", "HEAD"]);
                    (vec!["diff", "--base", "main"], copy, format!("--cached {mb}"))
                }
            };
            args.extend(["--format", "json", "--max-lines", "1000000"]);
            let run = env.run(&repo, &args);
            run.assert_code(0);
            let json = run.json();
            let got = ours(&json);
            let git = |what: &str| {
                let mut a: Vec<&str> = vec!["diff", "-M", "-z", what];
                a.extend(range.split(' '));
                env.git_raw(&oracle_dir, a.iter().map(|s| os(s.as_bytes()))).stdout
            };
            let want = git_files(&git("--name-status"), &git("--numstat"));
            assert_eq!(got, want, "fixture {} ({mode:?})", fixture.name);
            // The patch text itself, byte for byte (lossy only where git's
            // output is not UTF-8, as ours is).
            let patch = String::from_utf8_lossy(&{
                let mut a: Vec<&str> = vec!["diff", "-M", "--no-color", "--no-ext-diff"];
                a.extend(range.split(' '));
                env.git_raw(&oracle_dir, a.iter().map(|s| os(s.as_bytes()))).stdout
            })
            .into_owned();
            assert_eq!(json["patch"].as_str(), Some(patch.as_str()), "fixture {} ({mode:?}): patch text", fixture.name);
            compared += 1;
        }
    }
    assert!(compared >= 4, "compared only {compared}");
}

/// Working-tree states that only an index-aware reading gets right, against
/// git's own answer (a copy of the repository with `git add -A`).
#[test]
fn index_and_working_tree_edge_cases() {
    let env = TestEnv::new();
    let repo = env.path("repo");
    std::fs::create_dir_all(repo.join("dir")).expect("dir");
    env.git(&repo, &["init", "-q", "-b", "main"]);
    for (p, text) in [
        (".gitignore", "*.log\n"),
        ("kept.txt", "kept\n"),
        ("dropped.txt", "dropped\n"),
        ("file_to_dir", "was a file\n"),
        ("dir/a.txt", "a\n"),
        ("dir/b.txt", "b\n"),
        ("same.txt", "unchanged\n"),
    ] {
        std::fs::write(repo.join(p), text).expect("write");
    }
    std::fs::write(repo.join("tracked.log"), "tracked although ignored\n").expect("write");
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["add", "-f", "tracked.log"]);
    env.git(&repo, &["commit", "-q", "-m", "base"]);

    // Dropped from the index but left on disk: present again (not ignored) ...
    env.git(&repo, &["rm", "-q", "--cached", "kept.txt"]);
    // ... or absent (ignored): a deletion.
    env.git(&repo, &["rm", "-q", "--cached", "tracked.log"]);
    // Staged, then deleted from disk.
    std::fs::write(repo.join("staged_then_gone.txt"), "x\n").expect("write");
    env.git(&repo, &["add", "staged_then_gone.txt"]);
    std::fs::remove_file(repo.join("staged_then_gone.txt")).expect("rm");
    // Deleted from disk only.
    std::fs::remove_file(repo.join("dropped.txt")).expect("rm");
    // A file becomes a directory, a directory becomes a file.
    std::fs::remove_file(repo.join("file_to_dir")).expect("rm");
    std::fs::create_dir(repo.join("file_to_dir")).expect("mkdir");
    std::fs::write(repo.join("file_to_dir/inner.txt"), "inner\n").expect("write");
    std::fs::remove_dir_all(repo.join("dir")).expect("rm dir");
    std::fs::write(repo.join("dir"), "now a file\n").expect("write");
    // Staged and then changed again on disk: the disk wins.
    std::fs::write(repo.join("same.txt"), "staged\n").expect("write");
    env.git(&repo, &["add", "same.txt"]);
    std::fs::write(repo.join("same.txt"), "unchanged\n").expect("write");

    let run = env.run(&repo, &["diff", "--base", "main", "--format", "json", "--max-lines", "100000"]);
    run.assert_code(0);
    let json = run.json();
    let copy = env.path("copy");
    assert!(std::process::Command::new("cp").arg("-a").arg(&repo).arg(&copy).status().expect("cp").success());
    env.git(&copy, &["add", "-A"]);
    let git = |what: &str| env.git_raw(&copy, ["diff", "-M", "-z", "--cached", what, "main"].map(OsStr::new)).stdout;
    let want = git_files(&git("--name-status"), &git("--numstat"));
    assert_eq!(ours(&json), want);
    let paths: Vec<&String> = want.keys().collect();
    assert_eq!(
        paths,
        ["dir", "dir/a.txt", "dir/b.txt", "dropped.txt", "file_to_dir", "file_to_dir/inner.txt", "tracked.log"]
    );
}
