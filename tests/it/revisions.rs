//! Revisions a user would type, discovery from anywhere in a repository
//! (linked worktrees included), and the default base.

use crate::support::{Fixture, HeadMode, TestEnv};

fn files(run: &crate::support::Run) -> Vec<String> {
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
        env.run(env.dir.path(), &["-C", linked.to_str().expect("utf-8"), "diff", "--base", "main", "--format", "json"]);
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
    env.git(env.dir.path(), &["clone", "-q", "--branch", "feature", upstream.to_str().expect("utf-8"), "clone"]);
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
