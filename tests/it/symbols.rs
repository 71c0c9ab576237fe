//! `retry-run diff` names the functions, classes and other scopes a change
//! touched, in every format.

use crate::support::{Fixture, HeadMode, TestEnv};

fn symbols(file: &serde_json::Value) -> Vec<(String, String, String)> {
    file["symbols"]
        .as_array()
        .expect("symbols array")
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().expect("kind").to_string(),
                s["qualified_name"].as_str().expect("qualified_name").to_string(),
                s["change"].as_str().expect("change").to_string(),
            )
        })
        .collect()
}

#[test]
fn symbols_in_json_text_and_markdown() {
    let env = TestEnv::new();
    for mode in [HeadMode::Commit, HeadMode::Worktree] {
        let repo = Fixture::named("symbols").build(&env, &format!("repo-{mode:?}"), mode);
        let mut args = vec!["diff", "--base", "main", "--format", "json"];
        if mode == HeadMode::Commit {
            args.extend(["--head", "feature"]);
        }
        let json = env.run(&repo, &args).json();
        let files = json["files"].as_array().expect("files");
        let by_path = |p: &str| files.iter().find(|f| f["path"] == p).unwrap_or_else(|| panic!("{p} in {files:?}"));
        let t = |k: &str, q: &str, c: &str| (k.to_string(), q.to_string(), c.to_string());
        assert_eq!(
            symbols(by_path("app/auth.py")),
            vec![
                t("function", "Auth.login", "modified"),
                t("function", "Auth.refresh", "added"),
                t("class", "Legacy", "removed"),
                t("function", "Legacy.old", "removed"),
            ],
            "{mode:?}"
        );
        assert_eq!(
            symbols(by_path("src/lib.rs")),
            vec![
                t("struct", "Config", "modified"),
                t("function", "Config::new", "modified"),
                t("enum", "Mode", "added"),
            ],
            "{mode:?}"
        );
        assert_eq!(symbols(by_path("app/settings.py")), vec![], "a module-level edit touches no scope");
        assert_eq!(symbols(by_path("notes.txt")), vec![], "no grammar, no symbols");

        args[4] = "text";
        let text = env.run(&repo, &args).stdout;
        assert!(
            text.contains("     ~ function Auth.login\n     + function Auth.refresh\n     - class Legacy\n"),
            "{text}"
        );
        args[4] = "markdown";
        let md = env.run(&repo, &args).stdout;
        assert!(
            md.contains(
                "| `Auth.login` (modified), `Auth.refresh` (added), `Legacy` (removed), `Legacy.old` (removed) |"
            ),
            "{md}"
        );
    }
}

/// The scopes cache (by blob id, under ~/.cache/retry-run/scopes) never
/// changes the output: without it, filling it, reading it, and reading a
/// damaged one, `diff` writes the same bytes, in both modes.
#[test]
fn diff_output_is_identical_with_and_without_the_scopes_cache() {
    let env = TestEnv::new();
    for mode in [HeadMode::Commit, HeadMode::Worktree] {
        let repo = Fixture::named("symbols").build(&env, &format!("cache-{mode:?}"), mode);
        let mut args = vec!["diff", "--base", "main", "--format", "json"];
        if mode == HeadMode::Commit {
            args.extend(["--head", "feature"]);
        }
        let cache = env.home().join(".cache/retry-run/scopes");
        let _ = std::fs::remove_dir_all(&cache);
        let mut uncached = args.clone();
        uncached.push("--no-cache");
        let plain = env.run(&repo, &uncached);
        plain.assert_code(0);
        assert!(!cache.exists(), "--no-cache wrote a cache");
        let cold = env.run(&repo, &args).stdout;
        let entries: Vec<Vec<u8>> = crate::support::files_under(&cache)
            .into_keys()
            .filter(|p| !p.rsplit(|&c| c == b'/').next().is_some_and(|name| name.starts_with(b".")))
            .filter(|p| cache.join(std::str::from_utf8(p).expect("utf-8 name")).is_file())
            .collect();
        assert!(entries.len() >= 4, "the cache was not filled: {entries:?}");
        let warm = env.run(&repo, &args).stdout;
        // Damage every entry: each is parsed again.
        for path in &entries {
            let p = cache.join(std::str::from_utf8(path).expect("utf-8 name"));
            std::fs::write(p, b"3 9 not an entry").expect("damage");
        }
        let damaged = env.run(&repo, &args).stdout;
        for (name, out) in [("cold", &cold), ("warm", &warm), ("damaged", &damaged)] {
            assert_eq!(out, &plain.stdout, "{mode:?}: {name} cache changed the output");
        }
        assert!(plain.stdout.contains("\"symbols\": [\n"), "{}", plain.stdout);
    }
}
