//! Output formats: github escaping, SARIF structure, Markdown, text, and the
//! patch bound.

use crate::support::{Fixture, HeadMode, TestEnv};

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
    assert_eq!(rule_ids, ["git-internal", "submodule", "symlink-escape", "denied", "outside-allow"]);

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

/// Validates `doc` against the vendored SARIF 2.1.0 schema with Python's
/// `jsonschema`; returns its complaints (empty when valid).
fn sarif_schema_errors(env: &TestEnv, doc: &str) -> String {
    let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sarif/sarif-schema-2.1.0.json");
    let file = env.path("doc.sarif");
    std::fs::write(&file, doc).expect("write the document");
    let script = "import json, sys\n\
        try:\n    import jsonschema\n\
        except ImportError:\n    sys.exit('no jsonschema: pip install jsonschema (bash .ci/run installs it)')\n\
        schema = json.load(open(sys.argv[1]))\n\
        doc = json.load(open(sys.argv[2]))\n\
        for e in jsonschema.Draft4Validator(schema).iter_errors(doc):\n    print('/'.join(map(str, e.absolute_path)) + ': ' + e.message)\n";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&schema)
        .arg(&file)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn sarif_validates_against_the_2_1_0_schema() {
    let env = TestEnv::new();
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
