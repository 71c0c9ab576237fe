//! retry-run never touches the user's checkout: after `scope` and `diff`, in
//! every format and both modes, the working tree, the index, the refs and
//! the object database are byte-identical.

use crate::support::{Fixture, HeadMode, TestEnv, files_under};

#[test]
fn scope_and_diff_leave_the_checkout_byte_identical() {
    let env = TestEnv::new();
    // Staged changes from the fixture, one unstaged edit (util.py) ...
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Worktree);
    // ... plus a dirty tracked file, a staged change and an untracked file.
    std::fs::write(repo.join("tests/test_main.py"), "def test_main():\n    assert False\n").expect("dirty");
    std::fs::write(repo.join("src/staged.py"), "S = 1\n").expect("staged");
    env.git(&repo, &["add", "src/staged.py"]);
    std::fs::write(repo.join("src/untracked.py"), "U = 1\n").expect("untracked");
    let before = files_under(&repo);

    let mut runs = 0;
    for head in [None, Some("feature"), Some("HEAD")] {
        let mut base = vec!["--base", "main"];
        if let Some(h) = head {
            base.extend(["--head", h]);
        }
        for format in ["text", "json", "github", "sarif"] {
            let mut args = vec!["scope", "--allow", "src/**", "--format", format];
            args.extend(&base);
            let run = env.run(&repo, &args);
            assert!(run.code == 0 || run.code == 1, "{args:?}: {}", run.stderr);
            runs += 1;
        }
        for format in ["text", "markdown", "json"] {
            let mut args = vec!["diff", "--format", format];
            args.extend(&base);
            env.run(&repo, &args).assert_code(0);
            runs += 1;
        }
    }
    assert_eq!(runs, 21);
    let after = files_under(&repo);
    let changed: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    assert!(changed.is_empty(), "retry-run changed the checkout: {changed:?}");

    // And the working-tree diff really saw all three kinds of change.
    let json = env.run(&repo, &["diff", "--base", "main", "--format", "json"]).json();
    let paths: Vec<&str> = json["files"].as_array().expect("files").iter().filter_map(|f| f["path"].as_str()).collect();
    for p in ["tests/test_main.py", "src/staged.py", "src/untracked.py", "src/app/util.py"] {
        assert!(paths.contains(&p), "{p} missing from {paths:?}");
    }
}
