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

/// One scope as an oracle finds it: (kind, qualified name, head line, end line).
type OracleScope = (String, String, u64, u64);

/// Python's own `ast` (tests/oracle/py_scopes.py) on `source`.
fn python_oracle(env: &TestEnv, source: &str) -> Option<Vec<OracleScope>> {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let file = env.write(&format!("oracle-{n}.py"), source);
    let oracle = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/py_scopes.py");
    let out = std::process::Command::new("python3").arg(oracle).arg(&file).output().ok()?;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("oracle JSON");
    Some(
        v.as_array()
            .expect("array")
            .iter()
            .map(|s| {
                let n = |k: &str| s[k].as_u64().expect("a line");
                (
                    s["kind"].as_str().expect("kind").into(),
                    s["qualified_name"].as_str().expect("q").into(),
                    n("head_line"),
                    n("end_line"),
                )
            })
            .collect(),
    )
}

/// `syn` (tests/it/syntax.rs) on `source`.
fn rust_oracle(source: &str) -> Vec<OracleScope> {
    use syn::visit::Visit;
    let parsed = syn::parse_file(source).expect("syn parses");
    let mut o = crate::syntax::rust_oracle::Oracle::default();
    o.visit_file(&parsed);
    o.out.into_iter().zip(o.heads).map(|((kind, _, q, _, end), head)| (kind, q, head, end)).collect()
}

/// The changed lines of `git diff -U0` in `repo`: (old, new).
fn changed_lines(env: &TestEnv, repo: &std::path::Path) -> (Vec<u64>, Vec<u64>) {
    let patch = env.git(repo, &["diff", "-U0", "--no-color", "--no-ext-diff"]);
    let (mut old, mut new) = (Vec::new(), Vec::new());
    for line in patch.lines().filter(|l| l.starts_with("@@ ")) {
        let mut parts = line.split(' ').skip(1);
        for (side, out) in [(parts.next(), &mut old), (parts.next(), &mut new)] {
            let range = side.expect("a range")[1..].to_string();
            let (start, count) = match range.split_once(',') {
                Some((s, c)) => (s.parse::<u64>().expect("start"), c.parse::<u64>().expect("count")),
                None => (range.parse::<u64>().expect("start"), 1),
            };
            out.extend(start..start + count);
        }
    }
    (old, new)
}

/// The scope a reviewer names for `line`: the innermost one from its head
/// (decorators, attributes, doc comments) to its end; a whitespace-only
/// line only when the nearest other lines above and below are that
/// scope's too.
fn reviewer_scope<'a>(scopes: &'a [OracleScope], text: &str, line: u64) -> Option<&'a OracleScope> {
    let lines: Vec<&str> = text.lines().collect();
    let blank = |l: u64| lines.get(l as usize - 1).is_none_or(|t| t.trim().is_empty());
    let innermost = |l: u64| scopes.iter().filter(|s| s.2 <= l && l <= s.3).min_by_key(|s| (s.3 - s.2, u64::MAX - s.2));
    if !blank(line) {
        return innermost(line);
    }
    let above = (1..line).rev().find(|&l| !blank(l))?;
    let below = (line + 1..=lines.len() as u64).find(|&l| !blank(l))?;
    let s = innermost(line)?;
    (innermost(above) == Some(s) && innermost(below) == Some(s)).then_some(s)
}

/// What the oracles say `diff` should list: (kind, qualified name, change), sorted.
fn expected(old: (&[OracleScope], &str, &[u64]), new: (&[OracleScope], &str, &[u64])) -> Vec<(String, String, String)> {
    let key = |s: &OracleScope| (s.0.clone(), s.1.clone());
    let old_keys: std::collections::BTreeSet<_> = old.0.iter().map(key).collect();
    let new_keys: std::collections::BTreeSet<_> = new.0.iter().map(key).collect();
    let mut modified = std::collections::BTreeSet::new();
    for (side, others) in [(old, &new_keys), (new, &old_keys)] {
        for &l in side.2 {
            if let Some(s) = reviewer_scope(side.0, side.1, l).filter(|s| others.contains(&key(s))) {
                modified.insert(key(s));
            }
        }
    }
    let mut out: Vec<(String, String, String)> = Vec::new();
    out.extend(
        new.0.iter().filter(|s| !old_keys.contains(&key(s))).map(|s| (s.0.clone(), s.1.clone(), "added".into())),
    );
    out.extend(
        old.0.iter().filter(|s| !new_keys.contains(&key(s))).map(|s| (s.0.clone(), s.1.clone(), "removed".into())),
    );
    out.extend(modified.into_iter().map(|(k, q)| (k, q, "modified".to_string())));
    out.sort();
    out
}

/// Real commits of real repositories (tests/syntax-corpus/history/README.md):
/// the scopes `diff` names for each are those the oracles (Python's `ast`,
/// `syn`) give for the same changed lines, a decorator, an attribute or a
/// doc comment counting for the scope it decorates.
#[test]
fn real_history_scopes_agree_with_the_oracles() {
    let env = TestEnv::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax-corpus/history");
    let mut pairs: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .expect("history dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().contains(".before."))
        .collect();
    pairs.sort();
    assert!(pairs.len() >= 5, "{pairs:?}");
    let mut compared = 0;
    for before_path in pairs {
        let name = before_path.file_name().and_then(|n| n.to_str()).expect("a name").to_string();
        let ext = name.rsplit('.').next().expect("an extension").to_string();
        let before = std::fs::read_to_string(&before_path).expect("before");
        let after = std::fs::read_to_string(dir.join(name.replace(".before.", ".after."))).expect("after");
        let file = format!("code.{ext}");
        let repo = env.repo(&name.replace('.', "-")).file(&file, before.as_str()).commit();
        std::fs::write(repo.join(&file), &after).expect("write the commit's version");
        let json = env.run(&repo, &["diff", "--format", "json", "--no-cache"]).json();
        let mut got = symbols(&json["files"][0]);
        got.sort();
        let (old_scopes, new_scopes) = if ext == "py" {
            let Some(old) = python_oracle(&env, &before) else {
                eprintln!("SKIPPED {name}: python3 is not installed");
                continue;
            };
            (old, python_oracle(&env, &after).expect("python3"))
        } else {
            (rust_oracle(&before), rust_oracle(&after))
        };
        let (old_lines, new_lines) = changed_lines(&env, &repo);
        let want = expected((&old_scopes, &before, &old_lines), (&new_scopes, &after, &new_lines));
        assert_eq!(got, want, "{name}");
        compared += want.len();
    }
    eprintln!("history: {compared} changed scopes agree with the oracles");
}

/// The cases reviewers named (issue: "diff misses what reviewers look
/// for"): a decorator added above a Python method, a `#[cfg(test)]` line
/// above a Rust module and a `///` line above a function mark those; a
/// blank line added between two methods marks nothing.
#[test]
fn decorators_attributes_and_doc_comments_mark_their_scope_and_blank_lines_between_mark_none() {
    let env = TestEnv::new();
    let py = "class Api:\n    def get(self):\n        return 1\n\n    def put(self):\n        return 2\n";
    let rs = "fn helper() -> u32 {\n    1\n}\n\nmod checks {\n    fn one() {}\n}\n";
    let repo = env.repo("reviewer").file("api.py", py).file("lib.rs", rs).commit();
    let py_after = "class Api:\n    @app.route('/get')\n    def get(self):\n        return 1\n\n\n    def put(self):\n        return 2\n";
    let rs_after =
        "/// The helper.\nfn helper() -> u32 {\n    1\n}\n\n#[cfg(test)]\nmod checks {\n    fn one() {}\n}\n";
    std::fs::write(repo.join("api.py"), py_after).expect("write");
    std::fs::write(repo.join("lib.rs"), rs_after).expect("write");
    let json = env.run(&repo, &["diff", "--format", "json", "--no-cache"]).json();
    let files = json["files"].as_array().expect("files");
    let of = |p: &str| symbols(files.iter().find(|f| f["path"] == p).expect("the file"));
    let t = |k: &str, q: &str| (k.to_string(), q.to_string(), "modified".to_string());
    assert_eq!(of("api.py"), vec![t("function", "Api.get")], "not the class for the blank line");
    assert_eq!(of("lib.rs"), vec![t("function", "helper"), t("mod", "checks")]);
}

/// A TypeScript and a JavaScript change name their scopes as a TypeScript
/// user says them: a method by its class, a function bound to a `const`,
/// a JSDoc comment edited as a change to what it documents.
#[test]
fn typescript_and_javascript_changes_name_their_functions_methods_and_classes() {
    let env = TestEnv::new();
    let ts = "export class DurationFormatter {\n  format(ms: number): string {\n    return `${ms}ms`;\n  }\n}\n\nexport const parse = (s: string): number => {\n  return Number(s);\n};\n";
    let js = "function total(items) {\n  return items.length;\n}\n\nmodule.exports = { total };\n";
    let repo = env.repo("ts").file("src/format.ts", ts).file("lib/cart.js", js).commit();
    let ts_after = "export class DurationFormatter {\n  format(ms: number): string {\n    return `${ms / 1000}s`;\n  }\n}\n\n/** Parses a number. */\nexport const parse = (s: string): number => {\n  return Number(s);\n};\n";
    let js_after =
        "function total(items) {\n  return items.reduce((n, i) => n + i.qty, 0);\n}\n\nmodule.exports = { total };\n";
    std::fs::write(repo.join("src/format.ts"), ts_after).expect("write");
    std::fs::write(repo.join("lib/cart.js"), js_after).expect("write");
    let json = env.run(&repo, &["diff", "--format", "json", "--no-cache"]).json();
    let files = json["files"].as_array().expect("files");
    let of = |p: &str| symbols(files.iter().find(|f| f["path"] == p).expect("the file"));
    let t = |k: &str, q: &str| (k.to_string(), q.to_string(), "modified".to_string());
    assert_eq!(of("src/format.ts"), vec![t("function", "DurationFormatter.format"), t("function", "parse")]);
    assert_eq!(of("lib/cart.js"), vec![t("function", "total")]);
}
