//! Bad input: a one-line error naming the thing and what to do, the exit
//! code of section 12, never a panic.

use crate::support::{Fixture, HeadMode, TestEnv};

fn one_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line of error, got:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    lines[0]
}

#[test]
fn unknown_base_ref_is_usage() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    for cmd in ["scope", "diff"] {
        let run = env.run(&repo, &[cmd, "--base", "no-such-branch"]);
        run.assert_code(2);
        let line = one_line(&run.stderr);
        assert!(line.contains("\"no-such-branch\"") && line.contains("git branch -a"), "{line}");
        let run = env.run(&repo, &[cmd, "--base", "main", "--head", "nope~3"]);
        run.assert_code(2);
        assert!(one_line(&run.stderr).contains("\"nope~3\""));
    }
}

#[test]
fn a_tree_is_not_a_commit() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    let run = env.run(&repo, &["diff", "--base", "main^{tree}"]);
    run.assert_code(2);
    assert!(one_line(&run.stderr).contains("names a tree, not a commit"), "{}", run.stderr);
}

#[test]
fn hint_for_a_remote_only_branch() {
    let env = TestEnv::new();
    let upstream = Fixture::named("basic").build(&env, "upstream", HeadMode::Commit);
    env.git(env.dir.path(), &["clone", "-q", "--branch", "feature", upstream.to_str().expect("utf-8"), "clone"]);
    let clone = env.path("clone");
    let run = env.run(&clone, &["scope", "--base", "main", "--head", "HEAD"]);
    run.assert_code(2);
    assert!(one_line(&run.stderr).contains("did you mean origin/main?"), "{}", run.stderr);
    env.run(&clone, &["scope", "--base", "origin/main", "--head", "HEAD"]).assert_code(0);
}

#[test]
fn missing_directory_for_dash_c_is_usage() {
    let env = TestEnv::new();
    let run = env.run(env.dir.path(), &["-C", "/no/such/dir", "scope"]);
    run.assert_code(2);
    assert!(one_line(&run.stderr).contains("/no/such/dir: no such directory"), "{}", run.stderr);
}

#[test]
fn not_a_repository_is_environment() {
    let env = TestEnv::new();
    let dir = env.path("plain");
    std::fs::create_dir(&dir).expect("dir");
    for cmd in ["scope", "diff"] {
        let run = env.run(&dir, &[cmd, "--base", "main"]);
        run.assert_code(3);
        assert!(one_line(&run.stderr).contains("not a git repository"), "{}", run.stderr);
    }
}

#[test]
fn invalid_glob_is_usage_and_named() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    let run = env.run(&repo, &["scope", "--base", "main", "--head", "feature", "--allow", "src/["]);
    run.assert_code(2);
    assert!(one_line(&run.stderr).contains("invalid allow glob \"src/[\""), "{}", run.stderr);
    let run = env.run(&repo, &["scope", "--base", "main", "--deny", "a/{b"]);
    run.assert_code(2);
    assert!(one_line(&run.stderr).contains("invalid deny glob \"a/{b\""), "{}", run.stderr);
}

#[test]
fn config_errors_name_file_line_and_column() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    std::fs::write(repo.join("retry-run.toml"), "base = \"main\"\n\n[scope]\nalow = [\"src/**\"]\n").expect("config");
    let run = env.run(&repo, &["scope", "--head", "feature"]);
    run.assert_code(2);
    let line = one_line(&run.stderr);
    assert!(line.contains("retry-run.toml:4:1: unknown field `alow`, expected `allow` or `deny`"), "{line}");

    // A config given by --config, with a glob error inside it.
    std::fs::write(env.path("other.toml"), "[scope]\ndeny = [\"x/[\"]\n").expect("config");
    let run = env.run(&repo, &["scope", "--base", "main", "--config", env.path("other.toml").to_str().expect("utf-8")]);
    run.assert_code(2);
    assert!(one_line(&run.stderr).contains("invalid deny glob \"x/[\""), "{}", run.stderr);

    let run = env.run(&repo, &["diff", "--base", "main", "--config", "/no/such/file.toml"]);
    run.assert_code(2);
    assert!(one_line(&run.stderr).contains("/no/such/file.toml: cannot read the config file"), "{}", run.stderr);
}

#[test]
fn config_supplies_base_and_globs() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    std::fs::write(
        repo.join("retry-run.toml"),
        "base = \"main\"\n[scope]\nallow = [\"src/**\", \"tests/**\"]\ndeny = [\"**/*.lock\"]\n",
    )
    .expect("config");
    // The config itself is untracked here, so compare commits.
    let run = env.run(&repo, &["scope", "--head", "feature", "--format", "json"]);
    run.assert_code(1);
    assert_eq!(run.json()["violations"].as_array().expect("array").len(), 5);
    // Flags replace the config's lists.
    env.run(&repo, &["scope", "--head", "feature", "--allow", "**", "--deny", "nothing"]).assert_code(0);
}

#[test]
fn shallow_clone_without_merge_base_is_environment() {
    let env = TestEnv::new();
    let upstream = Fixture::named("basic").build(&env, "upstream", HeadMode::Commit);
    // Move main on, so feature's merge base is main's first commit.
    env.git(&upstream, &["checkout", "-q", "main"]);
    std::fs::write(upstream.join("later.txt"), "later\n").expect("write");
    env.git(&upstream, &["add", "later.txt"]);
    env.git(&upstream, &["commit", "-q", "-m", "later"]);
    let url = format!("file://{}", upstream.display());
    env.git(env.dir.path(), &["clone", "-q", "--depth", "1", "--no-single-branch", &url, "shallow"]);
    let clone = env.path("shallow");
    let run = env.run(&clone, &["scope", "--base", "origin/main", "--head", "origin/feature"]);
    run.assert_code(3);
    let line = one_line(&run.stderr);
    assert!(line.contains("shallow clone") && line.contains("--unshallow"), "{line}");
}

#[test]
fn unrelated_histories_are_usage() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    env.git(&repo, &["checkout", "-q", "--orphan", "other"]);
    env.git(&repo, &["commit", "-q", "-m", "unrelated"]);
    let run = env.run(&repo, &["diff", "--base", "main", "--head", "other"]);
    run.assert_code(2);
    assert!(one_line(&run.stderr).contains("no common ancestor"), "{}", run.stderr);
}

#[test]
fn unborn_head_and_bare_repository() {
    let env = TestEnv::new();
    let empty = env.path("empty");
    std::fs::create_dir(&empty).expect("dir");
    env.git(&empty, &["init", "-q"]);
    let run = env.run(&empty, &["scope", "--base", "HEAD"]);
    assert!(run.code == 2 || run.code == 3, "{run:?}");
    one_line(&run.stderr);

    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    env.git(env.dir.path(), &["clone", "-q", "--bare", repo.to_str().expect("utf-8"), "bare.git"]);
    let bare = env.path("bare.git");
    let run = env.run(&bare, &["scope", "--base", "main"]);
    run.assert_code(2);
    assert!(one_line(&run.stderr).contains("bare repository"), "{}", run.stderr);
    env.run(&bare, &["scope", "--base", "main", "--head", "feature"]).assert_code(0);
}

#[test]
fn bad_flags_are_usage() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    env.run(&repo, &["scope", "--format", "yaml"]).assert_code(2);
    env.run(&repo, &["diff", "--max-lines", "-3"]).assert_code(2);
    env.run(&repo, &["frobnicate"]).assert_code(2);
    env.run(&repo, &["--help"]).assert_code(0);
}
