//! A reset that writes the base's bytes over a tracked file in place (no
//! unlink and create) and writes the worktree's index back with the new
//! stat data itself: only over a plain file of the worktree's own, never
//! through a hard link to a file outside, and with an index git reads
//! (its checksum verified) and trusts (a clean status without rehashing).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::support::TestEnv;

fn repo(env: &TestEnv) -> PathBuf {
    env.repo("repo")
        .file("a.txt", "a\n")
        .file("long.txt", "the base's line\n".repeat(200))
        .file("src/lib.py", "def f():\n    return 1\n")
        .file("src/shrunk.py", "x = 1\n")
        .file("src/ro.txt", "read-only\n")
        .executable("run.sh", "#!/bin/sh\n")
        .file("plain.sh", "echo plain\n")
        .commit()
}

fn wt_path(env: &TestEnv, r: &Path, task: &str) -> PathBuf {
    PathBuf::from(env.run(r, &["worktree", "path", task]).assert_code(0).stdout.trim())
}

/// Every tracked file's content hashed again, against the index's ids.
fn contents_match_the_index(env: &TestEnv, w: &Path) {
    let staged = env.git(w, &["ls-files", "-s"]);
    for line in staged.lines() {
        let (meta, path) = line.split_once('\t').expect("ls-files line");
        let id = meta.split(' ').nth(1).expect("id");
        assert_eq!(env.git(w, &["hash-object", "--no-filters", path]), id, "{path}");
    }
}

#[test]
fn files_an_attempt_changed_are_written_over_in_place_and_git_reads_the_index_written_back() {
    let env = TestEnv::new();
    let r = repo(&env);
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");
    let inode = |p: &str| std::fs::metadata(w.join(p)).expect(p).ino();
    let before: Vec<u64> = ["a.txt", "long.txt", "src/lib.py", "src/shrunk.py"].map(inode).to_vec();
    for round in 0..2 {
        // Appended to, shortened, emptied, lengthened.
        std::fs::write(w.join("a.txt"), format!("a\nagent {round}\n")).expect("append");
        std::fs::write(w.join("long.txt"), "short now\n").expect("shorten");
        std::fs::write(w.join("src/lib.py"), "").expect("empty");
        std::fs::write(w.join("src/shrunk.py"), "x = 2\n".repeat(500)).expect("lengthen");
        let out = env.run(&r, &["worktree", "reset", "t1"]).assert_code(0).stdout.clone();
        // The four, and any whose stat data cannot tell (racy: written in
        // the same instant as the index).
        assert!(out.contains(" restored, 0 removed)"), "round {round}: {out}");
        assert_eq!(std::fs::read_to_string(w.join("a.txt")).expect("a"), "a\n");
        assert_eq!(std::fs::read_to_string(w.join("long.txt")).expect("long"), "the base's line\n".repeat(200));
        assert_eq!(std::fs::read_to_string(w.join("src/lib.py")).expect("lib"), "def f():\n    return 1\n");
        assert_eq!(std::fs::read_to_string(w.join("src/shrunk.py")).expect("shrunk"), "x = 1\n");
        let after: Vec<u64> = ["a.txt", "long.txt", "src/lib.py", "src/shrunk.py"].map(inode).to_vec();
        assert_eq!(after, before, "round {round}: the same files, written over");
        // The stat data written back is the files': git finds nothing to
        // refresh, and its checksum holds (fsck verifies it).
        assert_eq!(env.git(&w, &["status", "--porcelain", "--ignored"]), "", "round {round}");
        assert_eq!(env.git(&w, &["diff-files", "--name-only"]), "", "round {round}: stat data as the files'");
        env.git(&w, &["fsck", "--no-dangling", "--no-progress"]);
        contents_match_the_index(&env, &w);
    }
}

#[test]
fn a_hard_link_to_a_file_outside_is_replaced_never_written_through() {
    let env = TestEnv::new();
    let r = repo(&env);
    let outside = env.path("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    std::fs::write(outside.join("victim.txt"), "keep me\n").expect("write");
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let w = wt_path(&env, &r, "t1");

    // A tracked file made a second name of a file outside the worktree.
    std::fs::remove_file(w.join("a.txt")).expect("rm");
    std::fs::hard_link(outside.join("victim.txt"), w.join("a.txt")).expect("hard link");
    // Two names inside the worktree for one file.
    std::fs::remove_file(w.join("src/lib.py")).expect("rm");
    std::fs::hard_link(w.join("long.txt"), w.join("src/lib.py")).expect("hard link inside");
    // The executable bit flipped both ways, with new content.
    std::fs::write(w.join("run.sh"), "#!/bin/sh\necho agent\n").expect("write");
    std::fs::set_permissions(w.join("run.sh"), std::fs::Permissions::from_mode(0o644)).expect("chmod -x");
    std::fs::write(w.join("plain.sh"), "echo agent\n").expect("write");
    std::fs::set_permissions(w.join("plain.sh"), std::fs::Permissions::from_mode(0o755)).expect("chmod +x");
    // Changed, then made read-only; and a set-group-id bit.
    std::fs::write(w.join("src/ro.txt"), "changed\n").expect("write");
    std::fs::set_permissions(w.join("src/ro.txt"), std::fs::Permissions::from_mode(0o444)).expect("chmod");
    std::fs::write(w.join("src/shrunk.py"), "x = 3\n").expect("write");
    std::fs::set_permissions(w.join("src/shrunk.py"), std::fs::Permissions::from_mode(0o2644)).expect("chmod g+s");

    env.run(&r, &["worktree", "reset", "t1"]).assert_code(0);
    assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).expect("victim"), "keep me\n");
    assert_eq!(std::fs::metadata(outside.join("victim.txt")).expect("victim").nlink(), 1, "a.txt is a file of its own");
    assert_eq!(std::fs::read_to_string(w.join("a.txt")).expect("a"), "a\n");
    assert_eq!(std::fs::read_to_string(w.join("src/lib.py")).expect("lib"), "def f():\n    return 1\n");
    assert_eq!(std::fs::read_to_string(w.join("long.txt")).expect("long"), "the base's line\n".repeat(200));
    for (p, links) in [("a.txt", 1), ("src/lib.py", 1), ("long.txt", 1)] {
        assert_eq!(std::fs::metadata(w.join(p)).expect(p).nlink(), links, "{p}");
    }
    let mode = |p: &str| std::fs::metadata(w.join(p)).expect(p).permissions().mode();
    assert_eq!(mode("run.sh") & 0o111, 0o111, "executable again");
    assert_eq!(mode("plain.sh") & 0o111, 0, "not executable again");
    assert_eq!(mode("src/ro.txt") & 0o200, 0o200, "written anew, writable");
    assert_eq!(mode("src/shrunk.py") & 0o7000, 0, "no set-group-id bit left");
    assert_eq!(std::fs::read_to_string(w.join("src/ro.txt")).expect("ro"), "read-only\n");
    assert_eq!(env.git(&w, &["status", "--porcelain", "--ignored"]), "");
    assert_eq!(env.git(&w, &["diff-files", "--name-only"]), "");
    env.git(&w, &["fsck", "--no-dangling", "--no-progress"]);
    contents_match_the_index(&env, &w);
}
