//! The layout tells the architecture: only `src/git/` may use libgit2, and
//! the pure core never touches processes or the filesystem.

use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("src readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).expect("inside").display().to_string();
            out.push((rel, std::fs::read_to_string(&path).expect("utf-8 source")));
        }
    }
}

#[test]
fn only_the_git_layer_uses_libgit2() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 10);
    for (path, text) in &files {
        if path.starts_with("src/git/") {
            continue;
        }
        assert!(!text.contains("git2::") && !text.contains("use git2"), "{path} uses git2: only src/git/ may");
    }
}

#[test]
fn only_the_syntax_layer_uses_tree_sitter() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    for (path, text) in &files {
        if !path.starts_with("src/syntax/") {
            assert!(!text.contains("tree_sitter"), "{path} uses tree-sitter: only src/syntax/ may");
        }
    }
}

#[test]
fn the_pure_core_has_no_side_effects() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let pure = [
        "src/model/",
        "src/config.rs",
        "src/hash.rs",
        "src/integrity.rs",
        "src/outcome.rs",
        "src/scope.rs",
        "src/pathfmt.rs",
        "src/symbols.rs",
        "src/format/",
        "src/diagnostics/",
        "src/enrich/mod.rs",
        "src/enrich/snippet.rs",
        "src/summarize/",
        "src/text.rs",
        "src/context/",
        "src/verdict.rs",
        "src/task.rs",
        "src/report.rs",
        "src/stats.rs",
    ];
    for (path, text) in &files {
        if !pure.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        for banned in ["std::fs", "std::process", "std::env", "SystemTime", "Instant::now"] {
            assert!(!text.contains(banned), "{path} uses {banned}: the pure core may not");
        }
    }
}

/// The paths of the crate's own modules that `text` names outside comments
/// (`crate::model`, `super::chain`).
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for prefix in ["crate::", "super::"] {
            for (i, _) in line.match_indices(prefix) {
                let rest = &line[i..];
                let end = rest[prefix.len()..]
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .map_or(rest.len(), |e| e + prefix.len());
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

#[test]
fn the_model_depends_on_nothing_and_the_event_types_only_on_the_model() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    for (path, text) in &files {
        let paths = crate_paths(text);
        if path.starts_with("src/model/") {
            let outside: Vec<&String> = paths.iter().filter(|p| p.starts_with("crate::")).collect();
            assert!(outside.is_empty(), "{path} uses {outside:?}: model depends on nothing else in the crate");
        }
        if path == "src/record/event.rs" {
            let other: Vec<&String> =
                paths.iter().filter(|p| p.starts_with("crate::") && p.as_str() != "crate::model").collect();
            assert!(other.is_empty(), "{path} uses {other:?}: the event types may only use model");
        }
    }
}

#[test]
fn the_library_never_imports_its_command_line() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    for (path, text) in &files {
        if path.starts_with("src/cli/") || path == "src/main.rs" || path == "src/lib.rs" {
            continue;
        }
        assert!(
            !text.contains("crate::cli") && !text.contains("super::cli"),
            "{path} imports cli: library modules return their own errors and cli/ maps them"
        );
    }
}
