//! The layout tells the architecture, and these tests hold it to the
//! table below: which module may import which (arrows point down only),
//! which modules are pure, and which single module owns each outside
//! thing (libgit2, tree-sitter, processes).

use std::collections::BTreeSet;
use std::path::Path;

/// What a module may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Decisions over data: no filesystem, processes, environment or clock.
    Pure,
    /// Talks to the outside (git, tree-sitter, processes, the disk).
    Edge,
    /// Combines edges and pure decisions into a verb (`run`, `diff`).
    Verb,
    /// The command line.
    Cli,
}

use Kind::*;

/// The house, bottom up: each top-level module of `src/`, what it is, and
/// the modules it may import. A module may only import modules listed
/// above it, so every arrow points down.
const LAYERS: &[(&str, Kind, &[&str])] = &[
    // Foundations: shared types and helpers that import nothing.
    ("model", Pure, &[]),
    ("text", Pure, &[]),
    ("hash", Pure, &[]),
    ("pathfmt", Pure, &["text"]),
    ("verdict", Pure, &[]),
    ("test_results", Pure, &["text"]),
    ("process", Edge, &[]),
    ("console", Edge, &[]),
    ("project", Edge, &[]),
    ("mcp", Edge, &[]),
    // Rules and parsers over those types.
    ("agents", Pure, &["model"]),
    ("summarize", Pure, &["text"]),
    ("scope", Pure, &["model"]),
    ("symbols", Pure, &["model"]),
    ("integrity", Pure, &["model", "text"]),
    ("syntax", Edge, &["hash", "model", "pathfmt"]),
    ("config", Pure, &["agents", "model", "text"]),
    ("diagnostics", Pure, &["config"]),
    ("task", Pure, &["config"]),
    ("sandbox", Edge, &["config", "console", "process", "project"]),
    // Edges that read and write the repository and the record.
    ("enrich", Pure, &["diagnostics", "model", "syntax", "text"]),
    ("git", Edge, &["hash", "model", "pathfmt", "process", "scope"]),
    ("record", Edge, &["hash", "model"]),
    ("checkout_watch", Edge, &["git"]),
    ("remote", Edge, &["git", "model", "process", "record"]),
    // Decisions over the record, and what is shown of them.
    ("outcome", Pure, &["config", "diagnostics", "enrich", "model", "summarize", "test_results", "text"]),
    ("format", Pure, &["enrich", "model", "pathfmt", "scope", "text"]),
    ("context", Pure, &["config", "model", "outcome", "scope", "text"]),
    ("report", Pure, &["context", "model", "outcome", "pathfmt", "text"]),
    ("stats", Pure, &["context", "model", "outcome", "text"]),
    // Verbs: the only modules that combine edges.
    ("clean", Verb, &["git", "model", "record"]),
    ("diff", Verb, &["git", "model", "symbols", "syntax"]),
    (
        "run",
        Verb,
        &[
            "agents",
            "checkout_watch",
            "config",
            "console",
            "context",
            "diagnostics",
            "enrich",
            "format",
            "git",
            "hash",
            "integrity",
            "mcp",
            "model",
            "outcome",
            "pathfmt",
            "process",
            "project",
            "record",
            "remote",
            "sandbox",
            "scope",
            "summarize",
            "syntax",
            "task",
            "test_results",
            "text",
            "verdict",
        ],
    ),
    ("demo", Verb, &["console", "git", "record", "run"]),
    // init proposes a config (pure, the files in PURE_FILES) from what it
    // detects and from its checks tried as `run` tries them.
    (
        "init",
        Verb,
        &[
            "agents",
            "config",
            "diagnostics",
            "enrich",
            "git",
            "outcome",
            "project",
            "record",
            "run",
            "sandbox",
            "test_results",
            "text",
        ],
    ),
    (
        "cli",
        Cli,
        &[
            "agents",
            "clean",
            "config",
            "console",
            "context",
            "demo",
            "diagnostics",
            "diff",
            "enrich",
            "format",
            "git",
            "init",
            "mcp",
            "model",
            "outcome",
            "pathfmt",
            "process",
            "project",
            "record",
            "remote",
            "report",
            "run",
            "sandbox",
            "scope",
            "stats",
            "summarize",
            "text",
        ],
    ),
];

/// Files of edge modules and verbs that are pure all the same.
const PURE_FILES: &[&str] = &[
    "src/init/candidates.rs",
    "src/init/judge.rs",
    "src/init/propose.rs",
    "src/init/python.rs",
    "src/project/hides.rs",
    "src/project/layout.rs",
    "src/record/chain.rs",
    "src/record/event.rs",
    "src/record/manifest.rs",
];

/// Files of pure modules that read what they parse (and nothing else).
const IMPURE_FILES: &[&str] = &["src/enrich/load.rs"];

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

fn all_sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    assert!(files.len() > 10);
    files
}

/// The top-level module a file belongs to (`src/run/gates/scope.rs` is in
/// `run`); `None` for `lib.rs` and `main.rs`.
fn module_of(path: &str) -> Option<&str> {
    let rel = path.strip_prefix("src/")?;
    let first = rel.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then_some(name)
}

/// `text` without its comments (line comments, doc comments included).
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The top-level modules `text` names through `crate::`, including those
/// in a group (`use crate::{a, b::c};`).
fn imports(text: &str) -> BTreeSet<String> {
    let code = code(text);
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut at_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => at_start = true,
                    c if c.is_whitespace() => {}
                    _ if at_start && depth == 0 => {
                        out.insert(ident(&group[j..]));
                        at_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out
}

fn layer(module: &str) -> Option<(usize, Kind, &'static [&'static str])> {
    LAYERS.iter().position(|(m, ..)| *m == module).map(|i| (i, LAYERS[i].1, LAYERS[i].2))
}

#[test]
fn the_table_lists_every_module_and_its_arrows_point_down() {
    let mut found = BTreeSet::new();
    for (path, _) in all_sources() {
        if let Some(m) = module_of(&path) {
            found.insert(m.to_string());
        }
    }
    let listed: BTreeSet<String> = LAYERS.iter().map(|(m, ..)| m.to_string()).collect();
    assert_eq!(found, listed, "src/ and the table in tests/it/architecture.rs list different modules");
    for (i, (module, _, allowed)) in LAYERS.iter().enumerate() {
        for a in *allowed {
            let (j, ..) = layer(a).unwrap_or_else(|| panic!("{module} may import {a}, which is not in the table"));
            assert!(j < i, "{module} may import {a}, which is not below it in the table: an arrow pointing up");
        }
    }
}

#[test]
fn every_module_imports_only_what_the_table_allows() {
    let mut wrong = Vec::new();
    for (path, text) in all_sources() {
        let Some(module) = module_of(&path) else { continue };
        let Some((_, _, allowed)) = layer(module) else { continue };
        for m in imports(&text) {
            if m != module && !allowed.contains(&m.as_str()) {
                wrong.push(format!("{path} imports crate::{m}"));
            }
        }
    }
    assert!(wrong.is_empty(), "imports the layer table does not allow (arrows up or sideways):\n{}", wrong.join("\n"));
}

#[test]
fn the_import_reader_sees_groups_and_paths() {
    let text = "use crate::{model::{A, B}, text};\n// crate::cli in a comment\nlet x = crate::hash::sha256_hex(b);\n";
    let found: Vec<String> = imports(text).into_iter().collect();
    assert_eq!(found, ["hash", "model", "text"]);
}

#[test]
fn the_pure_core_has_no_side_effects() {
    for (path, text) in all_sources() {
        let Some(module) = module_of(&path) else { continue };
        let kind = layer(module).map(|(_, k, _)| k);
        let pure =
            (kind == Some(Pure) && !IMPURE_FILES.contains(&path.as_str())) || PURE_FILES.contains(&path.as_str());
        if !pure {
            continue;
        }
        for banned in ["std::fs", "std::process", "std::env", "SystemTime", "Instant::now"] {
            assert!(!code(&text).contains(banned), "{path} uses {banned}: the pure core may not");
        }
    }
}

#[test]
fn the_model_depends_on_nothing_and_the_event_types_only_on_the_model() {
    for (path, text) in all_sources() {
        if path.starts_with("src/model/") {
            let outside: Vec<String> = imports(&text).into_iter().filter(|m| m != "model").collect();
            assert!(outside.is_empty(), "{path} uses {outside:?}: model depends on nothing else in the crate");
        }
        if path == "src/record/event.rs" {
            let other: Vec<String> = imports(&text).into_iter().filter(|m| m != "model").collect();
            assert!(other.is_empty(), "{path} uses {other:?}: the event types may only use model");
        }
    }
}

#[test]
fn only_the_git_layer_uses_libgit2() {
    for (path, text) in all_sources() {
        if !path.starts_with("src/git/") {
            assert!(!text.contains("git2::") && !text.contains("use git2"), "{path} uses git2: only src/git/ may");
        }
    }
}

#[test]
fn only_the_syntax_layer_uses_tree_sitter() {
    for (path, text) in all_sources() {
        if !path.starts_with("src/syntax/") {
            assert!(!text.contains("tree_sitter"), "{path} uses tree-sitter: only src/syntax/ may");
        }
    }
}

#[test]
fn processes_start_only_through_process_and_the_sandbox() {
    for (path, text) in all_sources() {
        if path == "src/process.rs" || path == "src/sandbox/exec.rs" {
            continue;
        }
        assert!(
            !code(&text).contains("Command::new"),
            "{path} starts a process itself: go through crate::process (or sandbox::exec for a confined exec)"
        );
    }
}

#[test]
fn the_library_never_imports_its_command_line() {
    for (path, text) in all_sources() {
        if path.starts_with("src/cli/") || path == "src/main.rs" || path == "src/lib.rs" {
            continue;
        }
        assert!(
            !text.contains("crate::cli") && !text.contains("super::cli"),
            "{path} imports cli: library modules return their own errors and cli/ maps them"
        );
    }
}
