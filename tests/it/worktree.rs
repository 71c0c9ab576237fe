//! Task worktrees (`retry-run worktree`, `status`, `clean`) and snapshots
//! on real repositories: what an attempt can do to its worktree, and a
//! reset that undoes all of it without writing outside the worktree or
//! touching the user's checkout; what is copied into each worktree.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::child::LockHolder;
use crate::support::{FakeAgent, TestEnv};
use retry_run::git::Repo;
use retry_run::git::fingerprint::{TaskParts, fingerprint};

fn repo(env: &TestEnv) -> PathBuf {
    env.repo("repo")
        .file("a.txt", "a\n")
        .file("src/lib.py", "def f():\n    return 1\n")
        .file("src/deep/x.txt", "x\n")
        .executable("run.sh", "#!/bin/sh\n")
        .symlink("link", "a.txt")
        .file(".gitignore", ".env\n*.log\n")
        .file(".env", "SECRET=1\n")
        .file("retry-run.toml", "[worktree]\ninclude = [\".env\"]\nsetup = \"echo ready > setup.log\"\n")
        .commit()
}

/// Everything about the user's checkout that must not change.
fn checkout_state(env: &TestEnv, r: &Path) -> (String, String, String, Vec<u8>) {
    (
        env.git(r, &["status", "--porcelain", "--ignored"]),
        env.git(r, &["rev-parse", "HEAD"]),
        env.git(r, &["branch", "--list"]),
        std::fs::read(r.join(".git/index")).expect("index"),
    )
}

fn wt_path(env: &TestEnv, r: &Path, task: &str) -> PathBuf {
    PathBuf::from(env.run(r, &["worktree", "path", task]).assert_code(0).stdout.trim())
}

#[test]
fn create_makes_a_detached_linked_worktree_with_includes_and_setup() {
    let env = TestEnv::new();
    let r = repo(&env);
    let before = checkout_state(&env, &r);
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    assert!(w.starts_with(r.join(".git/retry-run/worktrees")));
    let list = env.git(&r, &["worktree", "list", "--porcelain"]);
    assert!(list.contains(&format!("worktree {}", w.display())) && list.contains("detached"), "{list}");
    assert_eq!(env.git(&w, &["status", "--porcelain"]), "", "clean; setup.log is ignored (*.log)");
    assert_eq!(std::fs::read_to_string(w.join(".env")).expect(".env copied"), "SECRET=1\n");
    assert_eq!(std::fs::read_to_string(w.join("setup.log")).expect("setup ran"), "ready\n");
    assert_eq!(std::fs::read_link(w.join("link")).expect("symlink"), Path::new("a.txt"));
    assert_eq!(std::fs::metadata(w.join("run.sh")).expect("run.sh").permissions().mode() & 0o111, 0o111);
    assert_eq!(env.git(&w, &["rev-parse", "HEAD"]), before.1);
    assert_eq!(checkout_state(&env, &r), before, "the user's checkout changed");
    let again = env.run(&r, &["worktree", "create", "t1"]);
    again.assert_code(2);
    assert!(again.stderr.contains("worktree reset t1"), "{}", again.stderr);
}

/// A repository with what a checkout has to get right: nested and
/// crowded directories (enough files for both writing threads), an
/// executable, a symlink, an empty file, a non-UTF-8 name and a submodule
/// that is not checked out; with `attributes`, a `.gitattributes` that
/// converts line endings.
fn checkout_repo(env: &TestEnv, attributes: bool) -> PathBuf {
    let mut repo = env.repo("co");
    for i in 0..300 {
        repo = repo.file(format!("d{}/e{}/f{i}.txt", i % 3, i % 7), format!("line {i}\nmore\n"));
    }
    repo = repo
        .file("empty", "")
        .executable("run.sh", "#!/bin/sh\n")
        .symlink("link", "d0/e0/f0.txt")
        .file(std::ffi::OsStr::from_bytes(b"caf\xe9.txt"), "latin-1 name\n")
        .gitlink("sub", "1111111111111111111111111111111111111111");
    if attributes {
        repo = repo.file(".gitattributes", "*.txt eol=crlf\n");
    }
    repo.commit()
}

#[test]
fn create_and_reset_write_what_git_checks_out_with_and_without_attributes() {
    for attributes in [false, true] {
        let env = TestEnv::new();
        let r = checkout_repo(&env, attributes);
        let head = env.git(&r, &["rev-parse", "HEAD"]);
        let theirs = env.path("theirs");
        env.git(&r, &["worktree", "add", "-q", "--detach", theirs.to_str().expect("utf-8"), &head]);
        let files = |dir: &Path| {
            let mut all = crate::support::files_under(dir);
            all.remove(&b".git"[..]);
            all
        };
        let want = files(&theirs);
        assert_eq!(want.get(&b"d0/e0/f0.txt"[..]).map(|f| f.1.contains(&b'\r')), Some(attributes));

        env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
        let w = wt_path(&env, &r, "t1");
        assert_eq!(files(&w), want, "create, attributes: {attributes}");
        // The index has the files' stat data: git sees nothing to refresh.
        assert_eq!(env.git(&w, &["diff-files", "--name-only"]), "");
        assert_eq!(env.git(&w, &["diff-index", "--cached", "--name-only", "HEAD"]), "");
        assert_eq!(env.git(&w, &["status", "--porcelain"]), "");

        for i in (0..300).step_by(3) {
            let f = w.join(format!("d{}/e{}/f{i}.txt", i % 3, i % 7));
            std::fs::write(&f, "changed\n").expect("modify");
        }
        std::fs::remove_dir_all(w.join("d1")).expect("rm -r");
        std::fs::remove_file(w.join("run.sh")).expect("rm");
        std::fs::write(w.join("link"), "no longer a link\n").expect("write");
        env.run(&r, &["worktree", "reset", "t1"]).assert_code(0);
        assert_eq!(files(&w), want, "reset, attributes: {attributes}");
        assert_eq!(env.git(&w, &["diff-files", "--name-only"]), "");
        assert_eq!(env.git(&w, &["status", "--porcelain"]), "");
    }
}

#[test]
fn reset_undoes_everything_an_attempt_did_without_writing_outside() {
    let env = TestEnv::new();
    let r = repo(&env);
    let outside = env.path("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    std::fs::write(outside.join("victim.txt"), "keep me\n").expect("write");
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    let before = checkout_state(&env, &r);
    let base = before.1.clone();

    // What an attempt might do.
    std::fs::write(w.join("a.txt"), "changed\n").expect("modify");
    std::fs::remove_dir_all(w.join("src/deep")).expect("rm dir");
    std::os::unix::fs::symlink(&outside, w.join("src/deep")).expect("dir -> symlink outside");
    std::fs::remove_file(w.join("run.sh")).expect("rm");
    std::os::unix::fs::symlink(outside.join("victim.txt"), w.join("run.sh")).expect("file -> symlink outside");
    std::fs::remove_file(w.join("link")).expect("rm link");
    std::fs::create_dir_all(w.join("link/inside")).expect("symlink -> dir");
    std::fs::remove_file(w.join("src/lib.py")).expect("rm");
    std::fs::write(w.join("src/lib.py.new"), "x").expect("write");
    let deep = (0..30).fold(w.join("untracked"), |p, i| p.join(format!("d{i}")));
    std::fs::create_dir_all(&deep).expect("deep tree");
    std::fs::write(deep.join("f"), "f").expect("write");
    std::fs::write(w.join("build.log"), "ignored").expect("ignored file");
    std::fs::create_dir_all(w.join("out.log/deep")).expect("ignored directory");
    std::fs::write(w.join("out.log/deep/f"), "ignored").expect("write");
    std::fs::create_dir_all(w.join("src/new")).expect("untracked directory inside a tracked one");
    std::fs::write(w.join("src/new/f"), "new").expect("write");
    std::fs::create_dir(w.join("ro")).expect("mkdir");
    std::fs::write(w.join("ro/f"), "f").expect("write");
    std::fs::set_permissions(w.join("ro/f"), std::fs::Permissions::from_mode(0o444)).expect("chmod");
    std::fs::set_permissions(w.join("ro"), std::fs::Permissions::from_mode(0o555)).expect("chmod");
    std::fs::set_permissions(w.join("a.txt"), std::fs::Permissions::from_mode(0o444)).expect("chmod");
    std::fs::write(w.join("staged.txt"), "s").expect("write");
    env.git(&w, &["add", "staged.txt"]);
    env.git(&w, &["commit", "-qm", "agent commit", "--no-verify", "--allow-empty"]);
    env.git(&w, &["checkout", "-q", "-b", "agent-branch"]);

    env.run(&r, &["worktree", "reset", "t1"]).assert_code(0);
    assert_eq!(env.git(&w, &["status", "--porcelain"]), "", "tracked state equals the base");
    assert_eq!(env.git(&w, &["rev-parse", "HEAD"]), base);
    let symref = env.git_raw(&w, ["symbolic-ref", "-q", "HEAD"].map(std::ffi::OsStr::new));
    assert!(!symref.status.success(), "HEAD is detached again");
    let ignored = env.git(&w, &["status", "--porcelain", "--ignored"]);
    assert_eq!(ignored, "!! .env\n!! setup.log", "only the includes and setup output are back");
    assert_eq!(std::fs::read_to_string(w.join("a.txt")).expect("a"), "a\n");
    assert_eq!(std::fs::read_to_string(w.join("src/deep/x.txt")).expect("x"), "x\n");
    assert!(std::fs::symlink_metadata(w.join("src/deep")).expect("deep").is_dir());
    assert_eq!(std::fs::read_link(w.join("link")).expect("link"), Path::new("a.txt"));
    assert_eq!(std::fs::metadata(w.join("run.sh")).expect("run.sh").permissions().mode() & 0o111, 0o111);
    assert!(!w.join("untracked").exists() && !w.join("ro").exists() && !w.join("build.log").exists());
    assert!(!w.join("out.log").exists() && !w.join("src/new").exists());
    // Nothing was written through the links.
    let victims: Vec<_> = std::fs::read_dir(&outside).expect("outside").flatten().map(|e| e.file_name()).collect();
    assert_eq!(victims, vec![std::ffi::OsString::from("victim.txt")]);
    assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).expect("victim"), "keep me\n");
    let (status, head, _branches, index) = checkout_state(&env, &r);
    assert_eq!((status, head, index), (before.0, before.1, before.3), "the user's checkout changed");
}

/// The same writes without a commit or anything staged: the reset reads the
/// index and lists the worktree itself (no libgit2 status), and must leave
/// exactly the base, a fifo and an executable bit included.
#[test]
fn reset_of_unstaged_writes_restores_the_base_exactly() {
    let env = TestEnv::new();
    let r = repo(&env);
    let outside = env.path("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    let base = env.git(&r, &["rev-parse", "HEAD"]);
    for round in 0..2 {
        std::fs::write(w.join("a.txt"), format!("changed {round}\n")).expect("modify");
        std::fs::remove_dir_all(w.join("src/deep")).expect("rm dir");
        std::os::unix::fs::symlink(&outside, w.join("src/deep")).expect("dir -> symlink outside");
        std::fs::remove_file(w.join("link")).expect("rm link");
        std::fs::create_dir_all(w.join("link/inside")).expect("symlink -> dir");
        std::fs::remove_file(w.join("src/lib.py")).expect("rm");
        std::fs::set_permissions(w.join("run.sh"), std::fs::Permissions::from_mode(0o644)).expect("chmod -x");
        assert!(Command::new("mkfifo").arg(w.join("pipe")).status().expect("mkfifo").success());
        std::fs::create_dir_all(w.join("untracked/d1/d2")).expect("untracked tree");
        std::fs::write(w.join("untracked/d1/d2/f"), "f").expect("write");
        std::fs::write(w.join("build.log"), "ignored").expect("ignored file");
        std::fs::create_dir_all(w.join("src/new")).expect("untracked directory inside a tracked one");
        std::fs::write(w.join("src/new/f"), "new").expect("write");
        env.run(&r, &["worktree", "reset", "t1"]).assert_code(0);
        assert_eq!(env.git(&w, &["status", "--porcelain"]), "", "round {round}: tracked state equals the base");
        assert_eq!(env.git(&w, &["rev-parse", "HEAD"]), base);
        let ignored = env.git(&w, &["status", "--porcelain", "--ignored"]);
        assert_eq!(ignored, "!! .env\n!! setup.log", "round {round}: only the includes and setup output");
        assert!(!w.join("pipe").exists() && !w.join("untracked").exists() && !w.join("src/new").exists());
        assert_eq!(std::fs::read_to_string(w.join("a.txt")).expect("a"), "a\n");
        assert!(std::fs::symlink_metadata(w.join("src/deep")).expect("deep").is_dir());
        assert_eq!(std::fs::read_link(w.join("link")).expect("link"), Path::new("a.txt"));
        assert_eq!(std::fs::metadata(w.join("run.sh")).expect("run.sh").permissions().mode() & 0o111, 0o111);
        assert_eq!(std::fs::read_dir(&outside).expect("outside").count(), 0, "nothing written through the link");
    }
}

#[test]
fn a_deleted_or_pruned_worktree_is_recreated_and_remove_prunes_git_metadata() {
    let env = TestEnv::new();
    let r = repo(&env);
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    std::fs::remove_dir_all(&w).expect("user deletes it");
    let out = env.run(&r, &["worktree", "reset", "t1"]).assert_code(0).stdout.clone();
    assert!(out.contains("recreated"), "{out}");
    assert_eq!(env.git(&w, &["status", "--porcelain"]), "");
    std::fs::remove_dir_all(r.join(".git/worktrees/retry-run-t1")).expect("prune by hand");
    env.git(&r, &["worktree", "prune"]);
    let out = env.run(&r, &["worktree", "reset", "t1"]).assert_code(0).stdout.clone();
    assert!(out.contains("recreated"), "{out}");
    assert!(env.git(&r, &["worktree", "list"]).contains("retry-run/worktrees/t1"));
    let list = env.run(&r, &["worktree", "list"]).assert_code(0).stdout.clone();
    assert!(list.starts_with("t1\t") && list.contains("KiB"), "{list}");
    env.run(&r, &["worktree", "remove", "t1"]).assert_code(0);
    assert!(!w.exists() && !r.join(".git/worktrees/retry-run-t1").exists());
    assert_eq!(env.git(&r, &["worktree", "list"]).lines().count(), 1);
}

#[test]
fn a_failing_setup_is_an_environment_error_and_bad_names_are_usage_errors() {
    let env = TestEnv::new();
    let r = repo(&env);
    std::fs::write(r.join("retry-run.toml"), "[worktree]\nsetup = \"echo broken >&2; exit 4\"\n").expect("write");
    let run = env.run(&r, &["worktree", "create", "t1"]);
    run.assert_code(3);
    assert!(run.stderr.contains("worktree.setup") && run.stderr.contains("broken"), "{}", run.stderr);
    env.run(&r, &["worktree", "create", "../evil"]).assert_code(2);
    env.run(&r, &["worktree", "create", "t2", "--base", "no-such-ref"]).assert_code(2);
    env.run(&r, &["worktree", "path", "never"]).assert_code(2);
}

#[test]
fn a_snapshot_of_many_new_files_is_one_pack_that_git_reads() {
    let env = TestEnv::new();
    let r = repo(&env);
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    let base_s = env.git(&r, &["rev-parse", "HEAD"]);
    std::fs::create_dir_all(w.join("gen")).expect("mkdir");
    for i in 0..200 {
        // Sizes across the stored-block boundary (65,535 bytes) and empty files.
        let body = if i == 0 { String::new() } else { format!("file {i}\n").repeat(i * 500) };
        std::fs::write(w.join(format!("gen/f{i}.txt")), body).expect("write");
    }
    let loose = |r: &Path| -> usize {
        std::fs::read_dir(r.join(".git/objects"))
            .expect("objects")
            .flatten()
            .filter(|e| e.file_name().len() == 2)
            .map(|e| std::fs::read_dir(e.path()).map_or(0, |d| d.count()))
            .sum()
    };
    let loose_before = loose(&r);
    let repo = Repo::discover(&r).expect("repo");
    let base = repo.resolve(&base_s).expect("base").oid;
    repo.snapshot(&w, base, "refs/retry-run/t1/1", "attempt 1").expect("snapshot");
    assert_eq!(loose(&r), loose_before + 1, "only the commit is loose; the 200 blobs and the two trees are one pack");
    env.git(&r, &["fsck", "--strict", "--no-dangling"]);
    assert_eq!(env.git(&r, &["show", "refs/retry-run/t1/1:gen/f3.txt"]), "file 3\n".repeat(1500).trim_end());
    assert_eq!(env.git(&r, &["show", "refs/retry-run/t1/1:gen/f199.txt"]).len() + 1, "file 199\n".len() * 199 * 500);
    let names = env.git(&r, &["diff", "--name-only", &base_s, "refs/retry-run/t1/1"]);
    assert_eq!(names.lines().count(), 200);
}

/// The tree git writes for the worktree at `w`: `git add -A && git
/// write-tree` on a scratch copy of the worktree's index.
fn git_write_tree(env: &TestEnv, r: &Path, w: &Path) -> String {
    let scratch = env.path("scratch-index");
    std::fs::copy(r.join(".git/worktrees/retry-run-t1/index"), &scratch).expect("copy the index");
    let git = |args: &[&str]| {
        let out = env.command("git", w).env("GIT_INDEX_FILE", &scratch).args(args).output().expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["add", "-A"]);
    git(&["write-tree"])
}

/// Makes `rel`'s parent a directory, removing any file or link in the way.
fn make_parent(w: &Path, rel: &str) {
    let mut at = w.to_path_buf();
    for part in Path::new(rel).parent().into_iter().flat_map(Path::components) {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| !m.is_dir()) {
            std::fs::remove_file(&at).expect("remove a file in the way");
        }
    }
    std::fs::create_dir_all(at).expect("mkdir");
}

/// Removes whatever is at `rel`: file, link or directory tree.
fn remove_any(w: &Path, rel: &str) {
    let at = w.join(rel);
    match std::fs::symlink_metadata(&at) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&at).expect("rm -r"),
        Ok(_) => std::fs::remove_file(&at).expect("rm"),
        Err(_) => {}
    }
}

#[test]
fn snapshot_trees_are_the_trees_git_writes_for_the_same_worktree() {
    // Rounds of random edits: new, changed and deleted files, files turned
    // into directories and back, symlinks, executable bits, names that sort
    // around a directory's (`a-b`, `a.c` next to `a/`), ignored files. After
    // each round the snapshot's tree must be the tree git writes.
    let env = TestEnv::new();
    let r = repo(&env);
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    let base_s = env.git(&r, &["rev-parse", "HEAD"]);
    let repo = Repo::discover(&r).expect("repo");
    let base = repo.resolve(&base_s).expect("base").oid;
    let dirs = ["", "a", "a/b", "a-b", "a.c", "src", "src/deep", "src/deep/z"];
    let names = ["a", "a-b", "a.c", "b", "x y", "\u{fc}", "lib.py", "x.txt", "trace.log"];
    let mut seed: u64 = 0x5eed;
    let mut next = |n: usize| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n
    };
    for round in 1..=40 {
        for _ in 0..6 {
            let dir = dirs[next(dirs.len())];
            let name = names[next(names.len())];
            let rel = if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
            match next(6) {
                0 | 1 => {
                    make_parent(&w, &rel);
                    remove_any(&w, &rel);
                    std::fs::write(w.join(&rel), format!("{rel} {round}\n").repeat(next(3))).expect("write");
                }
                2 => remove_any(&w, &rel),
                3 => {
                    make_parent(&w, &rel);
                    remove_any(&w, &rel);
                    std::os::unix::fs::symlink(format!("../{name}"), w.join(&rel)).expect("symlink");
                }
                4 => {
                    if std::fs::symlink_metadata(w.join(&rel)).is_ok_and(|m| m.is_file()) {
                        let mode = std::fs::metadata(w.join(&rel)).expect("stat").permissions().mode();
                        let flipped = std::fs::Permissions::from_mode(mode ^ 0o111);
                        std::fs::set_permissions(w.join(&rel), flipped).expect("chmod");
                    }
                }
                _ => {
                    // A directory turned into a file.
                    let dir = if dir.is_empty() { "a" } else { dir };
                    remove_any(&w, dir);
                    make_parent(&w, dir);
                    std::fs::write(w.join(dir), format!("was a directory {round}\n")).expect("write");
                }
            }
        }
        let oid = repo.snapshot(&w, base, &format!("refs/retry-run/t1/{round}"), "attempt").expect("snapshot").commit;
        let ours = env.git(&r, &["rev-parse", &format!("{oid}^{{tree}}")]);
        assert_eq!(ours, git_write_tree(&env, &r, &w), "round {round}");
    }
    env.git(&r, &["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn snapshots_commit_tracked_changes_and_new_files_but_not_ignored_ones() {
    let env = TestEnv::new();
    let r = repo(&env);
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    let base_s = env.git(&r, &["rev-parse", "HEAD"]);
    std::fs::write(w.join("a.txt"), "changed\n").expect("modify");
    std::fs::remove_file(w.join("src/deep/x.txt")).expect("delete");
    std::fs::write(w.join("new.py"), "print(1)\n").expect("new file");
    std::fs::write(w.join("debug.log"), "ignored\n").expect("ignored");
    // An attempt cannot hide a new file by editing .gitignore.
    std::fs::write(w.join(".gitignore"), ".env\n*.log\nhidden.txt\n").expect("edit gitignore");
    std::fs::write(w.join("hidden.txt"), "sneaky\n").expect("hidden");
    std::fs::remove_file(w.join("link")).expect("rm");
    std::os::unix::fs::symlink("src/lib.py", w.join("link")).expect("retarget");
    let index_before = std::fs::read(r.join(".git/worktrees/retry-run-t1/index")).expect("wt index");

    let repo = Repo::discover(&r).expect("repo");
    let base = repo.resolve(&base_s).expect("base").oid;
    let oid = repo.snapshot(&w, base, "refs/retry-run/t1/1", "attempt 1").expect("snapshot").commit;
    assert_eq!(env.git(&r, &["rev-parse", "refs/retry-run/t1/1"]), oid.to_string());
    assert_eq!(env.git(&r, &["rev-parse", "refs/retry-run/t1/1^"]), base_s);
    let names = env.git(&r, &["diff", "--name-status", &base_s, "refs/retry-run/t1/1"]);
    assert_eq!(names, "M\t.gitignore\nM\ta.txt\nA\thidden.txt\nM\tlink\nA\tnew.py\nD\tsrc/deep/x.txt");
    assert_eq!(env.git(&r, &["show", "refs/retry-run/t1/1:a.txt"]), "changed");
    assert_eq!(std::fs::read(r.join(".git/worktrees/retry-run-t1/index")).expect("wt index"), index_before);
    assert_eq!(env.git(&r, &["branch", "--list"]), "* main", "no branch was created");
}

#[test]
fn reset_removes_locks_a_killed_writer_left_and_waits_for_no_running_task() {
    let env = TestEnv::new();
    let r = repo(&env);
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    std::fs::write(w.join("a.txt"), "changed\n").expect("modify");
    // A run killed while writing the worktree's index or HEAD.
    let meta = r.join(".git/worktrees/retry-run-t1");
    std::fs::write(meta.join("index.lock"), "").expect("lock");
    std::fs::write(meta.join("HEAD.lock"), "").expect("lock");
    let out = env.run(&r, &["worktree", "reset", "t1"]);
    out.assert_code(0);
    assert!(out.stdout.contains("index.lock, left by a killed process"), "{}", out.stdout);
    assert!(out.stdout.contains("HEAD.lock, left by a killed process"), "{}", out.stdout);
    assert!(!meta.join("index.lock").exists() && !meta.join("HEAD.lock").exists());
    assert_eq!(env.git(&w, &["status", "--porcelain"]), "");

    // While a run holds the task, its worktree is left alone (exit 3). The
    // run is another process: a lock this process took could outlive its
    // release in a child another test is starting (forked, not yet exec'd).
    let held = LockHolder::start(&r.join(".git"), "t1", env.path("held"));
    std::fs::write(w.join("a.txt"), "the attempt's work\n").expect("modify");
    for args in [&["worktree", "reset", "t1"][..], &["worktree", "remove", "t1"]] {
        let out = env.run(&r, args);
        out.assert_code(3);
        assert!(out.stderr.contains("is being run by process"), "{}", out.stderr);
    }
    assert_eq!(std::fs::read_to_string(w.join("a.txt")).expect("kept"), "the attempt's work\n");
    held.release();
    env.run(&r, &["worktree", "remove", "t1"]).assert_code(0);
}

#[test]
fn the_fingerprint_sees_hooks_config_and_the_worktree_link() {
    let env = TestEnv::new();
    let r = repo(&env);
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    let common = r.join(".git");
    let meta = common.join("worktrees/retry-run-t1");
    let task = TaskParts { id: "t1", worktree: &w, admin: &meta };
    let before = fingerprint(&common, Some(&task));
    std::fs::write(common.join("hooks/pre-commit"), "#!/bin/sh\nexit 0\n").expect("hook");
    env.git(&w, &["config", "user.name", "agent"]);
    std::fs::write(w.join(".git"), format!("gitdir: {}\n", env.path("elsewhere").display())).expect("relink");
    let after = fingerprint(&common, Some(&task));
    assert_ne!(before.digest(), after.digest());
    assert_eq!(after.changed_since(&before), ["config", "hooks/pre-commit", "worktree/.git"]);
    assert_eq!(fingerprint(&common, Some(&task)).digest(), after.digest(), "stable");
}

#[test]
fn status_shows_tasks_and_disk_use_and_clean_removes_only_worktrees_and_records() {
    let env = TestEnv::new();
    let r = repo(&env);
    let base = env.git(&r, &["rev-parse", "HEAD"]);
    let store = retry_run::record::Store::new(&r.join(".git"));
    {
        let mut log = store.log("t1").expect("log");
        log.append("TaskStarted", None, &serde_json::json!({"base": base})).expect("append");
        log.append("AttemptStarted", Some(1), &serde_json::json!({})).expect("append");
        log.append("AttemptCompleted", Some(1), &serde_json::json!({"outcome": "CHECK_FAILURE"})).expect("append");
    }
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    let repo = Repo::discover(&r).expect("repo");
    let oid = repo.resolve(&base).expect("base").oid;
    std::fs::write(w.join("a.txt"), "changed by the agent\n").expect("write");
    repo.snapshot(&w, oid, "refs/retry-run/t1/1", "attempt 1").expect("snapshot");

    let out = env.run(&r, &["status"]).assert_code(0).stdout.clone();
    let want = format!("t1\tstopped\tattempts 1\tbase {}\tlast CHECK_FAILURE\tworktree ", &base[..12]);
    assert!(
        out.lines().nth(1).is_some_and(|l| l.starts_with(&want))
            && out.contains("KiB")
            && out.contains("clean --ended"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_str(env.run(&r, &["status", "--json"]).stdout.lines().next().expect("line")).expect("json");
    assert_eq!((json["task"].as_str(), json["attempts"].as_u64()), (Some("t1"), Some(1)));
    assert!(json["worktree_bytes"].as_u64().is_some_and(|b| b > 0));

    std::fs::create_dir_all(store.attempt("t1", 1).path().join("checks")).expect("mkdir");
    std::fs::write(store.attempt("t1", 1).path().join("prompt.md"), "# Fix it\n").expect("write");
    std::fs::write(store.attempt("t1", 1).path().join("checks/pytest.txt"), "1 failed\n").expect("write");
    env.run(&r, &["inspect", "t1/1", "--prompt"]).assert_code(0);
    assert_eq!(env.run(&r, &["inspect", "t1/1", "--prompt"]).stdout, "# Fix it\n");
    assert!(env.run(&r, &["inspect", "t1/1", "--checks"]).stdout.contains("==> pytest.txt <==\n1 failed"));
    let diff = env.run(&r, &["inspect", "t1/1", "--diff"]).assert_code(0).stdout.clone();
    assert!(diff.contains("M  a.txt  +1 -1") && diff.contains("+changed by the agent"), "{diff}");
    let j: serde_json::Value = serde_json::from_str(&env.run(&r, &["inspect", "t1/1", "--json"]).stdout).expect("json");
    assert_eq!(j["events"].as_array().map(Vec::len), Some(2));
    assert!(j["commit"].as_str().is_some());
    let ctx = env.run(&r, &["inspect", "t1/1", "--context"]);
    ctx.assert_code(3);
    assert!(ctx.stderr.contains("context.json"), "{}", ctx.stderr);
    env.run(&r, &["inspect", "t1/9"]).assert_code(2);
    env.run(&r, &["inspect", "t1"]).assert_code(2);
    env.run(&r, &["clean", "--stale", "1"]).assert_code(0);
    assert!(w.exists(), "a task active today is not stale");
    env.run(&r, &["clean"]).assert_code(2);
    env.run(&r, &["clean", "t1"]).assert_code(0);
    assert!(!w.exists() && store.task("t1").events().exists());
    assert_eq!(env.git(&r, &["rev-parse", "refs/retry-run/t1/1"]).len(), 40, "attempt commits stay");
    env.run(&r, &["clean", "--all", "--state"]).assert_code(0);
    assert!(!store.task("t1").path().exists());
    assert_eq!(env.git(&r, &["for-each-ref", "refs/retry-run/t1/"]), "", "--state removes the task's refs too");
    assert_eq!(env.run(&r, &["status"]).stdout, "no tasks yet\n");
}

#[test]
fn worktreeinclude_copies_ignored_files_into_each_worktree() {
    let env = TestEnv::new();
    let r = env
        .repo("plain")
        .file("src/app.txt", "value = 1\n")
        .file(".gitignore", "*.log\n.env\nbuild/\n")
        .file(".worktreeinclude", ".env\n")
        .file("retry-run.toml", "max_attempts = 1\n")
        .commit();
    std::fs::write(r.join(".env"), "SECRET=1\n").expect("write");
    std::fs::create_dir_all(r.join("build")).expect("mkdir");
    std::fs::write(r.join("build/.env"), "not listed by its directory\n").expect("write");
    let agent = env.agent(
        FakeAgent::new().sh("test -f .env && grep -q SECRET .env && ! test -e build").write("src/app.txt", "2\n"),
    );
    env.run_agent(&r, &["run", "--quiet", "--task", "Env"], &agent).assert_code(0);
}
