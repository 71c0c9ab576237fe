//! Repositories whose checkout is not their blobs: clean/smudge filter
//! drivers and sparse checkouts (docs/repositories.md).

use std::path::{Path, PathBuf};

use crate::support::record::outcomes;
use crate::support::{FakeAgent, TestEnv};

/// A check that passes when `src/a.txt` has a line `HELLO` (the smudged
/// text; the blob holds `hello`).
const SHOUT_CHECK: &str =
    "[retry]\nbaseline = false\n\n[[check]]\nname = \"shout\"\nrun = \"grep -qx HELLO src/a.txt\"\nkind = \"test\"\n";

/// A repository whose `*.txt` go through the driver `up`: smudge
/// uppercases, clean lowercases (both configured in `.git/config`). The
/// base's blob of `src/a.txt` is `hello`, the user's checkout `HELLO`.
fn shouting_repo(env: &TestEnv) -> PathBuf {
    let r = env
        .repo("repo")
        .file(".gitattributes", "*.txt filter=up\n")
        .file("src/a.txt", "hello\n")
        .file("retry-run.toml", SHOUT_CHECK)
        .init();
    env.git(&r, &["config", "filter.up.smudge", "tr a-z A-Z"]);
    env.git(&r, &["config", "filter.up.clean", "tr A-Z a-z"]);
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-q", "-m", "base"]);
    std::fs::remove_file(r.join("src/a.txt")).expect("rm");
    env.git(&r, &["checkout", "-q", "--", "src/a.txt"]);
    assert_eq!(std::fs::read_to_string(r.join("src/a.txt")).expect("read"), "HELLO\n", "git smudged the checkout");
    r
}

fn blob(env: &TestEnv, r: &Path, rev: &str) -> String {
    env.git(r, &["cat-file", "blob", rev])
}

#[test]
fn a_filter_driver_smudges_the_worktree_and_cleans_the_snapshot() {
    let env = TestEnv::new();
    let r = shouting_repo(&env);
    crate::support::keep_worktrees(&env, &r);
    // The user's checkout, unchanged and smudged, is no change.
    env.run(&r, &["scope", "--base", "main", "--allow", "nothing/**"]).assert_code(0);

    // Attempt 1 sees the smudged file and breaks it; attempt 2 sees it
    // smudged again after the reset, and adds a line.
    let agent = env.agent(
        FakeAgent::new()
            .expect("src/a.txt", "HELLO\n")
            .write("src/a.txt", "BROKEN\n")
            .next_call()
            .expect("src/a.txt", "HELLO\n")
            .append("src/a.txt", "WORLD\n"),
    );
    let out = env.run_agent(&r, &["run", "--quiet", "--id", "up", "--task", "Shout"], &agent);
    out.assert_code(0);
    assert_eq!(outcomes(&r, "up"), ["CHECK_FAILURE", "SUCCESS"]);
    // The attempts' commits hold the cleaned blobs, as `git add` stores them.
    assert_eq!(blob(&env, &r, "refs/retry-run/up/1:src/a.txt"), "broken");
    assert_eq!(blob(&env, &r, "refs/retry-run/up/2:src/a.txt"), "hello\nworld");
    let wt = r.join(".git/retry-run/worktrees/up");
    assert_eq!(std::fs::read_to_string(wt.join("src/a.txt")).expect("read"), "HELLO\nWORLD\n");

    // The same change in the user's checkout: scope and diff see the
    // cleaned text, as git diff does.
    std::fs::write(r.join("src/a.txt"), "HELLO\nWORLD\n").expect("write");
    let diff = env.run(&r, &["diff", "--base", "main"]);
    diff.assert_code(0);
    assert!(diff.stdout.contains("\n+world\n") && !diff.stdout.contains("HELLO"), "{}", diff.stdout);
}

#[test]
fn a_driver_that_cannot_run_stops_before_the_first_attempt() {
    let env = TestEnv::new();
    let r = env
        .repo("repo")
        .file(".gitattributes", "*.dat filter=nope\n")
        .file("data/x.dat", "raw\n")
        .file("retry-run.toml", "[retry]\nbaseline = false\n")
        .commit();
    let agent = env.agent(FakeAgent::new().write("ran.txt", "the agent ran\n"));
    let run = || env.run_agent(&r, &["run", "--quiet", "--id", "nope", "--task", "Anything"], &agent);

    // Named, but not configured.
    let out = run();
    out.assert_code(3);
    let line = out.error_line();
    assert!(line.contains("filter driver \"nope\" is not configured") && line.contains("data/x.dat"), "{line}");

    // Configured, but its program is missing.
    env.git(&r, &["config", "filter.nope.clean", "no-such-filter-program --clean"]);
    let out = run();
    out.assert_code(3);
    let line = out.error_line();
    assert!(line.contains("\"nope\"") && line.contains("no-such-filter-program is not found"), "{line}");

    // The second run read the base tree's `.gitattributes` from the list
    // the first one kept; a list that does not read as one is walked again
    // and written anew.
    let tree = env.git(&r, &["rev-parse", "HEAD^{tree}"]);
    let listed = r.join(".git/retry-run/gitattributes").join(tree.trim());
    let kept = std::fs::read_to_string(&listed).expect("the list of the tree's .gitattributes");
    assert!(kept.starts_with("gitattributes 1\n") && kept.lines().count() == 2, "{kept}");
    std::fs::write(&listed, "gitattributes 1\nnot a line\n").expect("write");
    let out = run();
    out.assert_code(3);
    assert!(out.error_line().contains("no-such-filter-program is not found"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&listed).expect("read"), kept);

    assert!(outcomes(&r, "nope").is_empty(), "no attempt ran");
    assert_eq!(env.git(&r, &["for-each-ref", "refs/retry-run/"]), "");
    assert!(!r.join(".git/retry-run/worktrees/nope").exists());
}

/// A repository with files inside and outside the sparse cone `src`.
fn sparse_repo(env: &TestEnv) -> PathBuf {
    let r = env
        .repo("repo")
        .file("src/s.txt", "s\n")
        .file("other/o.txt", "o\n")
        .file(
            "retry-run.toml",
            "[retry]\nbaseline = false\n\n[[check]]\nname = \"good\"\nrun = \"grep -q good src/s.txt\"\n",
        )
        .commit();
    env.git(&r, &["sparse-checkout", "set", "src"]);
    assert!(!r.join("other").exists(), "outside the cone");
    r
}

#[test]
fn scope_and_diff_see_nothing_outside_a_sparse_checkout() {
    let env = TestEnv::new();
    let r = sparse_repo(&env);
    let scope = env.run(&r, &["scope", "--base", "main", "--allow", "src/**", "--format", "json"]);
    scope.assert_code(0);
    assert_eq!(scope.json()["checked"], 0, "{}", scope.stdout);
    let diff = env.run(&r, &["diff", "--base", "main", "--format", "json"]);
    diff.assert_code(0);
    assert_eq!(diff.json()["files"], serde_json::json!([]), "{}", diff.stdout);

    // A real change inside the cone is reported, and only it.
    std::fs::write(r.join("src/s.txt"), "changed\n").expect("write");
    let scope = env.run(&r, &["scope", "--base", "main", "--allow", "other/**", "--format", "json"]);
    scope.assert_code(1);
    let v = scope.json();
    assert_eq!((v["checked"].clone(), v["violations"][0]["path"].clone()), (1.into(), "src/s.txt".into()));
    let files = env.run(&r, &["diff", "--base", "main", "--format", "json"]).json()["files"].clone();
    assert_eq!(files.as_array().map(Vec::len), Some(1), "{files}");
    assert_eq!((files[0]["path"].clone(), files[0]["status"].clone()), ("src/s.txt".into(), "M".into()));
}

#[test]
fn task_worktrees_follow_the_sparse_checkout() {
    let env = TestEnv::new();
    let r = sparse_repo(&env);
    crate::support::keep_worktrees(&env, &r);
    // Both attempts find the cone only; the second after a reset.
    let agent = env.agent(
        FakeAgent::new()
            .sh("test ! -e other/o.txt")
            .write("src/s.txt", "bad\n")
            .next_call()
            .sh("test ! -e other/o.txt")
            .expect("src/s.txt", "s\n")
            .write("src/s.txt", "good\n"),
    );
    let out = env.run_agent(&r, &["run", "--quiet", "--id", "cone", "--task", "Be good"], &agent);
    out.assert_code(0);
    assert_eq!(outcomes(&r, "cone"), ["CHECK_FAILURE", "SUCCESS"]);
    // The files outside the cone are unchanged in the attempts' commits.
    for n in ["1", "2"] {
        let changed = env.git(&r, &["diff", "--name-status", "main", &format!("refs/retry-run/cone/{n}")]);
        assert_eq!(changed, "M\tsrc/s.txt", "attempt {n}");
    }
    let wt = r.join(".git/retry-run/worktrees/cone");
    assert!(!wt.join("other").exists());
    // The worktree holds the last attempt; git sees no file outside the cone as deleted.
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), " M src/s.txt");
}

#[test]
fn git_lfs_files_are_real_in_the_worktree_and_pointers_in_the_attempts_commit() {
    let env = TestEnv::new();
    let has_lfs = env.command("git", env.root()).args(["lfs", "version"]).output().is_ok_and(|o| o.status.success());
    assert!(has_lfs, "git-lfs is not installed (.ci/run installs the Debian package git-lfs)");
    let r = env.repo("repo").file("app.txt", "x\n").init();
    env.git(&r, &["lfs", "install", "--local"]);
    env.git(&r, &["lfs", "track", "*.bin"]);
    std::fs::write(r.join("data.bin"), vec![7u8; 2000]).expect("write");
    std::fs::write(
        r.join("retry-run.toml"),
        "max_attempts = 1\n[[check]]\nname = \"sizes\"\nrun = \"test $(wc -c < data.bin) -eq 2000 && test $(wc -c < new.bin) -eq 3000\"\n",
    )
    .expect("config");
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-q", "-m", "base"]);
    assert!(blob(&env, &r, "HEAD:data.bin").starts_with("version https://git-lfs"), "the base holds a pointer");
    // The agent sees the real file and adds a large one.
    let agent =
        env.agent(FakeAgent::new().sh("test $(wc -c < data.bin) -eq 2000").sh("head -c 3000 /dev/zero > new.bin"));
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Add a bin"], &agent);
    out.assert_code(0);
    assert_eq!(outcomes(&r, "add-a-bin"), ["SUCCESS"]);
    let pointer = blob(&env, &r, "retry-run/add-a-bin:new.bin");
    assert!(pointer.starts_with("version https://git-lfs") && pointer.contains("size 3000"), "{pointer}");
}
