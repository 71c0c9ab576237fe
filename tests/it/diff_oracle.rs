//! `retry-run diff` against `git diff` itself, on every fixture: statuses,
//! old paths of renames, line counts and binary flags must agree.

use std::collections::BTreeMap;

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
            files.insert(
                display(&new).into_owned(),
                (letter, Some(display(&first).into_owned()), String::new()),
            );
        } else {
            files.insert(display(&first).into_owned(), (letter, None, String::new()));
        }
    }
    let mut it = fields(numstat).into_iter();
    while let Some(head) = it.next() {
        let mut parts = head.splitn(3, |&b| b == b'\t');
        let (adds, dels, path) = (
            parts.next().unwrap_or(b""),
            parts.next().unwrap_or(b""),
            parts.next().unwrap_or(b""),
        );
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
                (
                    f["status"].as_str().expect("status").to_string(),
                    f["old_path"].as_str().map(String::from),
                    counts,
                ),
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
                HeadMode::Commit => (
                    vec!["diff", "--base", "main", "--head", "feature"],
                    repo.clone(),
                    "main...feature".to_string(),
                ),
                HeadMode::Worktree => {
                    // The oracle: a copy of the repository with everything added.
                    let copy = env.path("copy");
                    let st = std::process::Command::new("cp")
                        .arg("-a")
                        .arg(&repo)
                        .arg(&copy)
                        .status()
                        .expect("cp");
                    assert!(st.success());
                    env.git(&copy, &["add", "-A"]);
                    let mb = env.git(&copy, &["merge-base", "main", "HEAD"]);
                    (
                        vec!["diff", "--base", "main"],
                        copy,
                        format!("--cached {mb}"),
                    )
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
                env.git_raw(&oracle_dir, a.iter().map(|s| os(s.as_bytes())))
                    .stdout
            };
            let want = git_files(&git("--name-status"), &git("--numstat"));
            assert_eq!(got, want, "fixture {} ({mode:?})", fixture.name);
            // The patch text itself, byte for byte (lossy only where git's
            // output is not UTF-8, as ours is).
            let patch = String::from_utf8_lossy(&{
                let mut a: Vec<&str> = vec!["diff", "-M", "--no-color", "--no-ext-diff"];
                a.extend(range.split(' '));
                env.git_raw(&oracle_dir, a.iter().map(|s| os(s.as_bytes())))
                    .stdout
            })
            .into_owned();
            assert_eq!(
                json["patch"].as_str(),
                Some(patch.as_str()),
                "fixture {} ({mode:?}): patch text",
                fixture.name
            );
            compared += 1;
        }
    }
    assert!(compared >= 4, "compared only {compared}");
}
