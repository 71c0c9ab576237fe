//! `retry-run diff` on real repositories: against `git diff` itself on
//! every fixture (statuses, old paths of renames, line counts, binary
//! flags, the patch text) and on index and working-tree edge cases; its
//! formats and the patch bound; revisions a user would type, discovery
//! from anywhere in a repository (linked worktrees included) and the
//! default base.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use retry_run::pathfmt::display;

use crate::support::fixture::os;
use crate::support::{Fixture, HeadMode, Run, TestEnv, all_fixtures};

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

/// `diff` of the working tree of `repo` against `main`, checked against
/// git's answer for the same state (a copy with everything added; a fifo,
/// which `cp` would wait on and git leaves out, is removed first); returns
/// git's files.
fn worktree_agrees_with_git(env: &TestEnv, repo: &std::path::Path) -> Files {
    let run = env.run(repo, &["diff", "--base", "main", "--format", "json", "--max-lines", "100000"]);
    run.assert_code(0);
    let json = run.json();
    for entry in std::fs::read_dir(repo).expect("list").flatten() {
        if entry.file_type().is_ok_and(|t| std::os::unix::fs::FileTypeExt::is_fifo(&t)) {
            std::fs::remove_file(entry.path()).expect("rm fifo");
        }
    }
    let copy = env.path("copy");
    assert!(std::process::Command::new("cp").arg("-a").arg(repo).arg(&copy).status().expect("cp").success());
    env.git(&copy, &["add", "-A"]);
    let git = |what: &str| env.git_raw(&copy, ["diff", "-M", "-z", "--cached", what, "main"].map(OsStr::new)).stdout;
    let want = git_files(&git("--name-status"), &git("--numstat"));
    assert_eq!(ours(&json), want);
    want
}

/// Working-tree states that only an index-aware reading gets right, against
/// git's own answer (a copy of the repository with `git add -A`).
#[test]
fn index_and_working_tree_edge_cases() {
    let env = TestEnv::new();
    let repo = env
        .repo("repo")
        .file(".gitignore", "*.log\n")
        .file("kept.txt", "kept\n")
        .file("dropped.txt", "dropped\n")
        .file("file_to_dir", "was a file\n")
        .file("dir/a.txt", "a\n")
        .file("dir/b.txt", "b\n")
        .file("same.txt", "unchanged\n")
        .file("tracked.log", "tracked although ignored\n")
        .init();
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

    let want = worktree_agrees_with_git(&env, &repo);
    let paths: Vec<&String> = want.keys().collect();
    assert_eq!(
        paths,
        ["dir", "dir/a.txt", "dir/b.txt", "dropped.txt", "file_to_dir", "file_to_dir/inner.txt", "tracked.log"]
    );
}

/// What the working tree's stat data and layout can hide, against git's
/// own answer: a racy file (changed at the same size, its mtime as new as
/// the index's, ctime not trusted), a touched but unchanged file, an
/// executable bit, a symlink over a directory, a fifo over a file, ignored
/// and re-included files in tracked and untracked directories, a staged
/// edit (its cached trees invalidated) and a staged removal of a directory.
#[test]
fn stat_data_and_layout_edges_agree_with_git() {
    let env = TestEnv::new();
    let repo = env
        .repo("repo")
        .file(".gitignore", "build/\n*.log\n!keep.log\n")
        .file("racy.txt", "aaaa\n")
        .file("touched.txt", "same\n")
        .file("run.sh", "echo hi\n")
        .file("linked/a.txt", "a\n")
        .file("fifo_here", "a file\n")
        .file("gone/x.txt", "x\n")
        .file("gone/deeper/y.txt", "y\n")
        .file("src/deep/er/edit.py", "x = 1\n")
        .file("src/deep/er/other.py", "y = 2\n")
        .init();
    env.git(&repo, &["config", "core.trustctime", "false"]);
    // The racy file's mtime is after the index's, so its stat data cannot
    // vouch for it (git records its size as 0 for that reason).
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(30);
    let set_mtime = |path: &str| {
        let f = std::fs::File::options().write(true).open(repo.join(path)).expect("open");
        f.set_modified(later).expect("set mtime");
    };
    set_mtime("racy.txt");
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["commit", "-q", "-m", "base"]);
    std::fs::write(repo.join("racy.txt"), "bbbb\n").expect("write");
    set_mtime("racy.txt");
    // Touched, content unchanged.
    std::fs::write(repo.join("touched.txt"), "same\n").expect("write");
    // An executable bit.
    let mut perm = std::fs::metadata(repo.join("run.sh")).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(repo.join("run.sh"), perm).expect("chmod");
    // A symlink where a directory was; a fifo where a file was.
    std::fs::remove_dir_all(repo.join("linked")).expect("rm");
    std::os::unix::fs::symlink("src", repo.join("linked")).expect("symlink");
    std::fs::remove_file(repo.join("fifo_here")).expect("rm");
    assert!(std::process::Command::new("mkfifo").arg(repo.join("fifo_here")).status().expect("mkfifo").success());
    // Ignored and re-included files, in a tracked and an untracked directory.
    for (path, text) in [
        ("build/out.o", "o"),
        ("src/debug.log", "log"),
        ("src/keep.log", "kept"),
        ("fresh/new.py", "new"),
        ("fresh/trace.log", "log"),
        ("fresh/inner/keep.log", "kept"),
    ] {
        std::fs::create_dir_all(repo.join(path).parent().expect("parent")).expect("mkdir");
        std::fs::write(repo.join(path), text).expect("write");
    }
    // Staged: an edit deep down, and a directory removed.
    std::fs::write(repo.join("src/deep/er/edit.py"), "x = 2\n").expect("write");
    env.git(&repo, &["add", "src/deep/er/edit.py"]);
    env.git(&repo, &["rm", "-q", "-r", "gone"]);

    let want = worktree_agrees_with_git(&env, &repo);
    let paths: Vec<&String> = want.keys().collect();
    assert_eq!(
        paths,
        [
            "fifo_here",
            "fresh/inner/keep.log",
            "fresh/new.py",
            "gone/deeper/y.txt",
            "gone/x.txt",
            "linked",
            "linked/a.txt",
            "racy.txt",
            "run.sh",
            "src/deep/er/edit.py",
            "src/keep.log"
        ]
    );
}

#[test]
fn diff_formats_and_patch_bound() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    let full = env
        .run(&repo, &["diff", "--base", "main", "--head", "feature", "--format", "json", "--max-lines", "100000"])
        .json();
    assert_eq!(full["patch_truncated"], false);
    assert_eq!(full["totals"]["files"], 9);
    let total_lines = full["patch"].as_str().expect("patch").lines().count();
    let git_patch = env.git(&repo, &["diff", "-M", "main...feature"]);
    assert_eq!(total_lines, git_patch.lines().count(), "the patch has as many lines as git's");

    let cut = env
        .run(&repo, &["diff", "--base", "main", "--head", "feature", "--format", "json", "--max-lines", "10"])
        .json();
    assert_eq!(cut["patch_truncated"], true);
    let patch = cut["patch"].as_str().expect("patch");
    assert_eq!(patch.lines().count(), 11);
    assert!(patch.ends_with(&format!("[... {} lines omitted]\n", total_lines - 10)), "{patch}");
    assert_eq!(cut["files"], full["files"], "the bound cuts the patch, not the file list");

    let md =
        env.run(&repo, &["diff", "--base", "main", "--head", "feature", "--format", "markdown", "--max-lines", "5"]);
    md.assert_code(0);
    assert!(md.stdout.contains("| Status | File | + | - |"), "{}", md.stdout);
    assert!(md.stdout.contains("| R | `src/old_name.py` \u{2192} `src/new_name.py` | 0 | 0 |"), "{}", md.stdout);
    assert!(md.stdout.contains("| M | `assets/logo.bin` | binary | |"), "{}", md.stdout);
    assert!(md.stdout.contains("```diff\n") && md.stdout.contains("lines omitted]\n```"), "{}", md.stdout);

    let text = env.run(&repo, &["diff", "--base", "main", "--head", "feature", "--max-lines", "0"]);
    assert!(text.stdout.contains("T  config.ini") && text.stdout.contains("9 files changed, "), "{}", text.stdout);
    assert!(text.stdout.trim_end().ends_with("lines omitted]"), "{}", text.stdout);
}

fn files(run: &Run) -> Vec<String> {
    run.json()["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().expect("path").to_string())
        .collect()
}

#[test]
fn every_spelling_of_a_revision() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    env.git(&repo, &["tag", "v1.0", "main"]);
    env.git(&repo, &["tag", "-a", "-m", "annotated", "v1.0-annotated", "main"]);
    let main_sha = env.git(&repo, &["rev-parse", "main"]);
    let want = files(&env.run(&repo, &["diff", "--base", "main", "--head", "feature", "--format", "json"]));
    assert_eq!(want.len(), 9);
    for base in [
        "v1.0",
        "v1.0-annotated",
        &main_sha[..8],
        main_sha.as_str(),
        "feature~1",
        "HEAD^",
        "main^{commit}",
        "refs/heads/main",
    ] {
        for head in ["feature", "HEAD", "@"] {
            let run = env.run(&repo, &["diff", "--base", base, "--head", head, "--format", "json"]);
            run.assert_code(0);
            assert_eq!(files(&run), want, "--base {base} --head {head}");
        }
    }
}

#[test]
fn discovery_from_subdirectories_and_linked_worktrees() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    env.git(&repo, &["checkout", "-q", "main"]);
    env.git(&repo, &["worktree", "add", "-q", "../linked", "feature"]);
    let linked = env.path("linked");
    std::fs::write(linked.join("src/only_in_linked.py"), "x = 1\n").expect("write");
    let want = {
        let mut w = files(&env.run(&repo, &["diff", "--base", "main", "--head", "feature", "--format", "json"]));
        w.push("src/only_in_linked.py".into());
        w.sort();
        w
    };
    for dir in [linked.clone(), linked.join("src/app")] {
        let run = env.run(&dir, &["diff", "--base", "main", "--format", "json"]);
        run.assert_code(0);
        assert_eq!(files(&run), want, "from {}", dir.display());
    }
    // -C works like git's.
    let run =
        env.run(env.root(), &["-C", linked.to_str().expect("utf-8"), "diff", "--base", "main", "--format", "json"]);
    assert_eq!(files(&run), want);
    // The main checkout (on main, clean) sees nothing.
    assert!(files(&env.run(&repo, &["diff", "--base", "main", "--format", "json"])).is_empty());
}

#[test]
fn default_base_is_the_default_branch() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Worktree);
    // No --base, no config: main.
    let run = env.run(&repo, &["diff", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["base"], env.git(&repo, &["rev-parse", "main"]));

    // In a clone, origin/HEAD decides, even when no local main exists.
    let upstream = Fixture::named("basic").build(&env, "upstream", HeadMode::Commit);
    env.git(env.root(), &["clone", "-q", "--branch", "feature", upstream.to_str().expect("utf-8"), "clone"]);
    let clone = env.path("clone");
    env.git(&clone, &["remote", "set-head", "origin", "main"]);
    let run = env.run(&clone, &["scope", "--format", "json"]);
    run.assert_code(0);
    assert_eq!(run.json()["base"], env.git(&upstream, &["rev-parse", "main"]));
    assert_eq!(run.json()["checked"], 9);

    // A repository whose only branch is "trunk" and no default to find.
    let lone = env.path("lone");
    std::fs::create_dir(&lone).expect("dir");
    env.git(&lone, &["init", "-q", "-b", "trunk"]);
    env.git(&lone, &["commit", "-q", "--allow-empty", "-m", "x"]);
    let run = env.run(&lone, &["diff"]);
    run.assert_code(2);
    assert!(run.stderr.contains("no default branch found") && run.stderr.contains("--base"), "{}", run.stderr);
    env.run(&lone, &["diff", "--base", "trunk"]).assert_code(0);
}

#[test]
fn a_tree_is_not_a_commit() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    let run = env.run(&repo, &["diff", "--base", "main^{tree}"]);
    run.assert_code(2);
    assert!(run.error_line().contains("names a tree, not a commit"), "{}", run.stderr);
}

#[test]
fn unrelated_histories_are_usage() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    env.git(&repo, &["checkout", "-q", "--orphan", "other"]);
    env.git(&repo, &["commit", "-q", "-m", "unrelated"]);
    let run = env.run(&repo, &["diff", "--base", "main", "--head", "other"]);
    run.assert_code(2);
    assert!(run.error_line().contains("no common ancestor"), "{}", run.stderr);
}
