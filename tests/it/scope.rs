//! `retry-run scope` on real repositories: every `[[scope]]` case of every
//! fixture in commit and working-tree mode; its output formats (GitHub
//! annotations, SARIF validated against the 2.1.0 schema, text); errors on
//! bad input (one line naming the thing and what to do, the exit code of
//! docs/commands.md, never a panic), shared with `diff`; and `scope` and `diff`
//! leaving the user's checkout byte-identical.

use crate::support::{Fixture, HeadMode, TestEnv, all_fixtures, files_under};

#[test]
fn every_fixture_case() {
    let mut ran = 0;
    for fixture in all_fixtures() {
        for mode in [HeadMode::Commit, HeadMode::Worktree] {
            let cases: Vec<_> = fixture.scope.iter().filter(|c| c.applies_to(mode)).collect();
            if cases.is_empty() {
                continue;
            }
            let env = TestEnv::new();
            let repo = fixture.build(&env, "repo", mode);
            for case in cases {
                let mut args =
                    vec!["scope".to_string(), "--base".into(), "main".into(), "--format".into(), "json".into()];
                if mode == HeadMode::Commit {
                    args.extend(["--head".into(), "feature".into()]);
                }
                args.extend(case.allow.iter().map(|g| format!("--allow={g}")));
                args.extend(case.deny.iter().map(|g| format!("--deny={g}")));
                let argv: Vec<&str> = args.iter().map(String::as_str).collect();
                let run = env.run(&repo, &argv);
                let what = format!(
                    "fixture {} ({}; {mode:?}), allow {:?} deny {:?}",
                    fixture.name, fixture.description, case.allow, case.deny
                );
                assert_eq!(
                    run.code,
                    if case.violations.is_empty() { 0 } else { 1 },
                    "{what}: exit code\n{}{}",
                    run.stdout,
                    run.stderr
                );
                let json = run.json();
                assert_eq!(json["checked"], case.checked, "{what}: checked\n{}", run.stdout);
                let got: Vec<[String; 3]> = json["violations"]
                    .as_array()
                    .expect("violations")
                    .iter()
                    .map(|v| {
                        [
                            v["path"].as_str().expect("path").to_string(),
                            v["reason"].as_str().expect("reason").to_string(),
                            v["rule"].as_str().unwrap_or("").to_string(),
                        ]
                    })
                    .collect();
                assert_eq!(got, case.violations, "{what}\n{}", run.stdout);
                if mode == HeadMode::Worktree {
                    assert_eq!(json["head"], "worktree");
                }
                ran += 1;
            }
        }
    }
    assert!(ran >= 10, "only {ran} scope cases ran");
}

fn awkward(env: &TestEnv) -> std::path::PathBuf {
    Fixture::named("awkward-paths").build(env, "repo", HeadMode::Commit)
}

#[test]
fn github_annotations_escape_properties_and_data() {
    let env = TestEnv::new();
    let repo = awkward(&env);
    let run = env.run(&repo, &["scope", "--base", "main", "--head", "feature", "--deny", "**", "--format", "github"]);
    run.assert_code(1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 8, "{}", run.stdout);
    assert!(lines.iter().all(|l| l.starts_with("::error file=") && l.contains(",title=scope violation::")));
    assert!(
        lines.contains(&"::error file=odd/50%25%2Ca%3Ab.txt,title=scope violation::denied: path matches deny glob **"),
        "{}",
        run.stdout
    );
    assert!(
        lines.contains(&"::error file=src/new%0Aline.txt,title=scope violation::denied: path matches deny glob **"),
        "{}",
        run.stdout
    );
    assert!(lines.iter().any(|l| l.starts_with("::error file=\"src/bad\\377\\376name.txt\",")), "{}", run.stdout);
    // A rename's message names the old path; a newline in it is escaped as data.
    assert!(
        lines.contains(
            &"::error file=\"moved out/new name\\377.txt\",title=scope violation::denied: path matches deny glob **"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn sarif_is_2_1_0_with_one_result_per_violation() {
    let env = TestEnv::new();
    let repo = awkward(&env);
    let run =
        env.run(&repo, &["scope", "--base", "main", "--head", "feature", "--allow", "src/**", "--format", "sarif"]);
    run.assert_code(1);
    let doc = run.json();
    assert_eq!(doc["version"], "2.1.0");
    let run0 = &doc["runs"][0];
    assert_eq!(run0["tool"]["driver"]["name"], "retry-run");
    let results = run0["results"].as_array().expect("results");
    assert_eq!(results.len(), 4);
    let uris: Vec<&str> = results
        .iter()
        .map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str().expect("uri"))
        .collect();
    assert_eq!(
        uris,
        ["-leading-dash.txt", "moved%20out/new%20name%FF.txt", "odd/%22quoted%22.txt", "odd/50%25%2Ca%3Ab.txt"]
    );
    for r in results {
        assert_eq!(r["ruleId"], "outside-allow");
        assert!(r["message"]["text"].as_str().expect("text").contains("outside the allowed paths (src/**)"));
    }
    let rule_ids: Vec<&str> =
        run0["tool"]["driver"]["rules"].as_array().expect("rules").iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(rule_ids, ["git-internal", "submodule", "symlink-escape", "denied", "acts-after-land", "outside-allow"]);

    // Clean: a valid document with no results, exit 0.
    let run = env.run(&repo, &["scope", "--base", "main", "--head", "feature", "--format", "sarif"]);
    run.assert_code(0);
    assert_eq!(run.json()["runs"][0]["results"].as_array().map(Vec::len), Some(0));
}

#[test]
fn text_scope_names_path_status_reason_and_rule() {
    let env = TestEnv::new();
    let repo = Fixture::named("symlinks").build(&env, "repo", HeadMode::Commit);
    let run = env
        .run(&repo, &["scope", "--base", "main", "--head", "feature", "--allow", "src/**", "--deny", "src/secret/**"]);
    run.assert_code(1);
    let out = &run.stdout;
    assert!(
        out.contains("A src/absolute: symlink-escape: symlink points to /etc/passwd, outside the repository"),
        "{out}"
    );
    assert!(out.contains("A src/to_secret: denied: symlink target secret/key.pem (resolves to src/secret/key.pem) matches deny glob src/secret/**"), "{out}");
    assert!(
        out.contains(
            "A src/loop_a: symlink-escape: symlink loop_b cannot be resolved: more than 40 links followed (a loop)"
        ),
        "{out}"
    );
    assert!(out.contains("M src/existing_link: outside-allow: symlink target ../README.md (resolves to README.md) is outside the allowed paths (src/**)"), "{out}");
    assert!(
        out.trim_end().ends_with(&format!(
            "9 scope violations in 11 changed paths ({}...{})",
            &env.git(&repo, &["merge-base", "main", "feature"])[..12],
            &env.git(&repo, &["rev-parse", "feature"])[..12]
        )),
        "{out}"
    );

    let run = env.run(&repo, &["scope", "--base", "main", "--head", "feature"]);
    run.assert_code(1); // absolute and escaping links violate even with no globs
    let run = env.run(&repo, &["scope", "--base", "main", "--head", "main"]);
    run.assert_code(0);
    assert!(run.stdout.starts_with("scope clean: 0 changed paths checked"), "{}", run.stdout);
}

#[test]
fn rename_from_a_denied_path_is_reported_under_the_new_path() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    let run = env
        .run(&repo, &["scope", "--base", "main", "--head", "feature", "--deny", "src/old_name.py", "--format", "json"]);
    run.assert_code(1);
    let v = &run.json()["violations"][0];
    assert_eq!(
        (v["path"].as_str(), v["old_path"].as_str(), v["status"].as_str()),
        (Some("src/new_name.py"), Some("src/old_name.py"), Some("R"))
    );
    assert_eq!((v["reason"].as_str(), v["rule"].as_str()), (Some("denied"), Some("src/old_name.py")));
    let run = env.run(&repo, &["scope", "--base", "main", "--head", "feature", "--deny", "src/old_name.py"]);
    assert!(run.stdout.contains("R src/old_name.py -> src/new_name.py: denied: renamed from src/old_name.py, which matches deny glob src/old_name.py"), "{}", run.stdout);
}

/// Validates `doc` against the vendored SARIF 2.1.0 schema with Python's
/// `jsonschema` (of `TestEnv::with_python_tools`); returns its complaints
/// (empty when valid).
fn sarif_schema_errors(env: &TestEnv, doc: &str) -> String {
    let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sarif/sarif-schema-2.1.0.json");
    let file = env.path("doc.sarif");
    std::fs::write(&file, doc).expect("write the document");
    let script = "import json, sys\n\
        try:\n    import jsonschema\n\
        except ImportError:\n    sys.exit('no jsonschema: pip install jsonschema')\n\
        schema = json.load(open(sys.argv[1]))\n\
        doc = json.load(open(sys.argv[2]))\n\
        for e in jsonschema.Draft4Validator(schema).iter_errors(doc):\n    print('/'.join(map(str, e.absolute_path)) + ': ' + e.message)\n";
    let out =
        env.command("python3", env.root()).args(["-c", script]).arg(&schema).arg(&file).output().expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn sarif_validates_against_the_2_1_0_schema() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let awkward = awkward(&env);
    let symlinks = Fixture::named("symlinks").build(&env, "links", HeadMode::Commit);
    let cases: [(&std::path::Path, &[&str], i32); 4] = [
        // Odd paths (percent-encoded URIs, bytes that are not UTF-8), renames.
        (&awkward, &["--allow", "src/**"], 1),
        (&awkward, &["--deny", "**"], 1),
        // Symlinks that escape, deny through a link, loops.
        (&symlinks, &["--allow", "src/**", "--deny", "src/secret/**"], 1),
        // Clean: no results.
        (&awkward, &[], 0),
    ];
    for (repo, extra, code) in cases {
        let mut args = vec!["scope", "--base", "main", "--head", "feature", "--format", "sarif"];
        args.extend_from_slice(extra);
        let run = env.run(repo, &args);
        run.assert_code(code);
        let errors = sarif_schema_errors(&env, &run.stdout);
        assert_eq!(errors, "", "scope {extra:?}: not valid SARIF 2.1.0:\n{}", run.stdout);
    }
    // The validator does reject what is not SARIF 2.1.0.
    let run = env.run(&awkward, &["scope", "--base", "main", "--head", "feature", "--format", "sarif"]);
    let broken = run.stdout.replace("\"2.1.0\"", "\"2.0.0\"").replace("\"results\"", "\"resultz\"");
    let errors = sarif_schema_errors(&env, &broken);
    assert!(errors.contains("version"), "{errors}");
}

#[test]
fn unknown_base_ref_is_usage() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    for cmd in ["scope", "diff"] {
        let run = env.run(&repo, &[cmd, "--base", "no-such-branch"]);
        run.assert_code(2);
        let line = run.error_line();
        assert!(line.contains("\"no-such-branch\""), "{line}");
        assert!(run.hints().iter().any(|h| h.contains("git branch -a")), "{}", run.stderr);
        let run = env.run(&repo, &[cmd, "--base", "main", "--head", "nope~3"]);
        run.assert_code(2);
        assert!(run.error_line().contains("\"nope~3\""));
    }
}

#[test]
fn hint_for_a_remote_only_branch() {
    let env = TestEnv::new();
    let upstream = Fixture::named("basic").build(&env, "upstream", HeadMode::Commit);
    env.git(env.root(), &["clone", "-q", "--branch", "feature", upstream.to_str().expect("utf-8"), "clone"]);
    let clone = env.path("clone");
    let run = env.run(&clone, &["scope", "--base", "main", "--head", "HEAD"]);
    run.assert_code(2);
    run.error_line();
    assert!(run.hints().iter().any(|h| h.contains("did you mean origin/main?")), "{}", run.stderr);
    env.run(&clone, &["scope", "--base", "origin/main", "--head", "HEAD"]).assert_code(0);
}

#[test]
fn missing_directory_for_dash_c_is_usage() {
    let env = TestEnv::new();
    let run = env.run(env.root(), &["-C", "/no/such/dir", "scope"]);
    run.assert_code(2);
    assert!(run.error_line().contains("/no/such/dir: no such directory"), "{}", run.stderr);
    assert_eq!(run.hints(), ["check the path given to -C"], "{}", run.stderr);
}

#[test]
fn not_a_repository_is_environment() {
    let env = TestEnv::new();
    let dir = env.path("plain");
    std::fs::create_dir(&dir).expect("dir");
    for cmd in ["scope", "diff"] {
        let run = env.run(&dir, &[cmd, "--base", "main"]);
        run.assert_code(3);
        assert!(run.error_line().contains("not a git repository"), "{}", run.stderr);
    }
}

#[test]
fn invalid_glob_is_usage_and_named() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    let run = env.run(&repo, &["scope", "--base", "main", "--head", "feature", "--allow", "src/["]);
    run.assert_code(2);
    assert!(run.error_line().contains("invalid allow glob \"src/[\""), "{}", run.stderr);
    assert_eq!(run.hints(), ["fix the glob in [scope] of retry-run.toml or in --allow/--deny"], "{}", run.stderr);
    let run = env.run(&repo, &["scope", "--base", "main", "--deny", "a/{b"]);
    run.assert_code(2);
    assert!(run.error_line().contains("invalid deny glob \"a/{b\""), "{}", run.stderr);
}

#[test]
fn config_errors_name_file_line_and_column() {
    let env = TestEnv::new();
    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    std::fs::write(repo.join("retry-run.toml"), "base = \"main\"\n\n[scope]\nalow = [\"src/**\"]\n").expect("config");
    let run = env.run(&repo, &["scope", "--head", "feature"]);
    run.assert_code(2);
    let line = run.error_line();
    assert!(
        line.contains("retry-run.toml:4:1: unknown field `alow`, expected one of `allow`, `deny`, `submodules`"),
        "{line}"
    );

    // A config given by --config, with a glob error inside it.
    std::fs::write(env.path("other.toml"), "[scope]\ndeny = [\"x/[\"]\n").expect("config");
    let run = env.run(&repo, &["scope", "--base", "main", "--config", env.path("other.toml").to_str().expect("utf-8")]);
    run.assert_code(2);
    assert!(run.error_line().contains("invalid deny glob \"x/[\""), "{}", run.stderr);

    let run = env.run(&repo, &["diff", "--base", "main", "--config", "/no/such/file.toml"]);
    run.assert_code(2);
    assert!(run.error_line().contains("/no/such/file.toml: cannot read the config file"), "{}", run.stderr);
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
    env.git(env.root(), &["clone", "-q", "--depth", "1", "--no-single-branch", &url, "shallow"]);
    let clone = env.path("shallow");
    let run = env.run(&clone, &["scope", "--base", "origin/main", "--head", "origin/feature"]);
    run.assert_code(3);
    let line = run.error_line();
    assert!(line.contains("shallow clone"), "{line}");
    assert!(run.hints().iter().any(|h| h.contains("--unshallow")), "{}", run.stderr);
}

#[test]
fn unborn_head_and_bare_repository() {
    let env = TestEnv::new();
    let empty = env.repo("empty").init();
    let run = env.run(&empty, &["scope", "--base", "HEAD"]);
    assert!(run.code == 2 || run.code == 3, "{run:?}");
    run.error_line();

    let repo = Fixture::named("basic").build(&env, "repo", HeadMode::Commit);
    env.git(env.root(), &["clone", "-q", "--bare", repo.to_str().expect("utf-8"), "bare.git"]);
    let bare = env.path("bare.git");
    let run = env.run(&bare, &["scope", "--base", "main"]);
    run.assert_code(2);
    assert!(run.error_line().contains("bare repository"), "{}", run.stderr);
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
