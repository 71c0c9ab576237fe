//! The layout tells the architecture, and these tests hold it to the
//! table below: which module may import which (arrows point down only),
//! which modules are pure, and which single module owns each outside
//! thing (libgit2, tree-sitter, processes).

use std::collections::{BTreeMap, BTreeSet};
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
    // The sandbox, a crate of its own (crates/sandbox) named `crate::sandbox`
    // here: it depends on nothing of this crate (Cargo holds it to that).
    ("sandbox", Edge, &[]),
    // Foundations: shared types and helpers that import nothing.
    ("model", Pure, &[]),
    ("text", Pure, &[]),
    ("hash", Pure, &[]),
    ("pathfmt", Pure, &["text"]),
    ("process", Edge, &["sandbox"]),
    ("console", Edge, &[]),
    ("project", Edge, &["sandbox"]),
    ("mcp", Edge, &[]),
    // Rules and parsers over those types.
    ("agents", Pure, &["model"]),
    ("summarize", Pure, &["text"]),
    // The gates' judges: scope, integrity, test results, the verdict.
    ("judge", Pure, &["model", "text"]),
    ("symbols", Pure, &["model"]),
    ("syntax", Edge, &["hash", "model", "pathfmt"]),
    ("config", Pure, &["agents", "model", "sandbox", "text"]),
    ("diagnostics", Pure, &["config", "text"]),
    ("task", Pure, &["config"]),
    ("record", Edge, &["hash", "model", "sandbox", "text"]),
    // Edges that read and write the repository and the record.
    ("enrich", Pure, &["diagnostics", "model", "syntax", "text"]),
    ("git", Edge, &["hash", "judge", "model", "pathfmt", "process"]),
    ("checkout_watch", Edge, &["git"]),
    ("remote", Edge, &["git", "model", "process", "record"]),
    // Decisions over the record, and what is shown of them.
    ("outcome", Pure, &["config", "diagnostics", "enrich", "hash", "judge", "model", "pathfmt", "summarize", "text"]),
    ("format", Pure, &["enrich", "judge", "model", "pathfmt", "text"]),
    ("context", Pure, &["config", "judge", "model", "outcome", "pathfmt", "text"]),
    ("report", Pure, &["context", "model", "outcome", "pathfmt", "text"]),
    ("stats", Pure, &["context", "model", "text"]),
    ("stats_reader", Edge, &["model", "record", "stats"]),
    // Verbs: the only modules that combine edges.
    ("clean", Verb, &["git", "model", "outcome", "record"]),
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
            "judge",
            "mcp",
            "model",
            "outcome",
            "pathfmt",
            "process",
            "project",
            "record",
            "remote",
            "report",
            "sandbox",
            "summarize",
            "syntax",
            "task",
            "text",
        ],
    ),
    ("demo", Verb, &["console", "git", "process", "record", "run"]),
    (
        "review",
        Verb,
        &[
            "config",
            "console",
            "context",
            "diagnostics",
            "enrich",
            "git",
            "judge",
            "model",
            "outcome",
            "pathfmt",
            "process",
            "record",
            "run",
            "summarize",
            "syntax",
            "text",
        ],
    ),
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
            "judge",
            "outcome",
            "process",
            "project",
            "record",
            "run",
            "sandbox",
            "text",
        ],
    ),
    (
        "ui",
        Verb,
        &[
            "config",
            "console",
            "context",
            "git",
            "model",
            "outcome",
            "pathfmt",
            "process",
            "record",
            "report",
            "review",
            "run",
            "stats",
            "stats_reader",
            "syntax",
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
            "judge",
            "mcp",
            "model",
            "outcome",
            "pathfmt",
            "process",
            "project",
            "record",
            "remote",
            "report",
            "review",
            "run",
            "sandbox",
            "stats",
            "stats_reader",
            "summarize",
            "text",
            "ui",
        ],
    ),
];

/// Files of edge and verb modules that are pure all the same.
const PURE_FILES: &[&str] = &[
    "src/init/candidates.rs",
    "src/init/judge.rs",
    "src/init/propose.rs",
    "src/init/python.rs",
    "src/project/hides.rs",
    "src/project/layout.rs",
    "src/record/chain.rs",
    "src/record/confinement.rs",
    "src/record/event.rs",
    "src/record/manifest.rs",
    "src/review/sources/ci_log.rs",
    "src/review/sources/file.rs",
    "src/review/sources/pull_request.rs",
    "src/run/lanes/choose.rs",
    "src/run/lanes/feedback.rs",
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

/// The top-level module a file belongs to (`src/run/gates/scope_gate.rs` is in
/// `run`); `None` for `lib.rs`, `main.rs` and the executables of `src/bin/`.
fn module_of(path: &str) -> Option<&str> {
    let rel = path.strip_prefix("src/")?;
    let first = rel.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main" | "bin")).then_some(name)
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

/// The workspace's other crates, by the module name `src/lib.rs` gives
/// each (`pub use retry_run_sandbox as sandbox`) and their package.
const WORKSPACE_CRATES: &[(&str, &str)] = &[("sandbox", "retry-run-sandbox")];

/// The sandbox is a crate of its own: it depends on no package of the
/// workspace, and the supervisor's executable is its own target, so what
/// Cargo links into it is the sandbox crate and its dependencies alone.
#[test]
fn the_supervisor_links_only_the_sandbox_crate() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
    let bins = |p: &serde_json::Value| -> Vec<String> {
        p["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "bin")))
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    };
    for (_, package) in WORKSPACE_CRATES {
        let p = packages.iter().find(|p| p["name"] == *package).expect("the sandbox's package in the workspace");
        let deps: Vec<&str> =
            p["dependencies"].as_array().into_iter().flatten().filter_map(|d| d["name"].as_str()).collect();
        let inside: Vec<&&str> = deps.iter().filter(|d| names.contains(d)).collect();
        assert!(inside.is_empty(), "{package} depends on the workspace's {inside:?}");
        assert_eq!(bins(p), ["retry-run-supervisor"], "{package}'s executables");
    }
    let main = packages.iter().find(|p| p["name"] == "retry-run").expect("retry-run's package");
    assert_eq!(bins(main), ["retry-run"], "retry-run's executables: the supervisor is the sandbox crate's");
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
    // Crates of the workspace this crate names as its modules.
    found.extend(WORKSPACE_CRATES.iter().map(|(m, _)| m.to_string()));
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
    let mut files = all_sources();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/sandbox/src"), &mut files);
    // The sandbox's own starts: the confined command (its launch and
    // bubblewrap), a program run outside (bubblewrap's probe), and its
    // tests' probe, which re-runs the test.
    let starters = [
        "src/process.rs",
        "crates/sandbox/src/launch/start.rs",
        "crates/sandbox/src/launch/bubblewrap.rs",
        "crates/sandbox/src/programs.rs",
        "crates/sandbox/src/sys/probe.rs",
    ];
    for (path, text) in files {
        if starters.contains(&path.as_str()) {
            continue;
        }
        assert!(
            !code(&text).contains("Command::new"),
            "{path} starts a process itself: go through crate::process (or sandbox::launch for a confined exec)"
        );
    }
}

#[test]
fn the_library_never_imports_its_command_line() {
    for (path, text) in all_sources() {
        if path.starts_with("src/cli/") || path.starts_with("src/bin/") || path == "src/main.rs" || path == "src/lib.rs"
        {
            continue;
        }
        assert!(
            !text.contains("crate::cli") && !text.contains("super::cli"),
            "{path} imports cli: library modules return their own errors and cli/ maps them"
        );
    }
}

/// The module path of a source file (`src/run/gates/mod.rs` is `run::gates`).
fn module_path(path: &str) -> Vec<String> {
    let rel = path.strip_prefix("src/").unwrap_or(path);
    let rel = rel.strip_suffix(".rs").unwrap_or(rel);
    let mut segments: Vec<String> = rel.split('/').map(str::to_string).collect();
    if matches!(segments.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        segments.pop();
    }
    segments
}

/// `text` with the contents of string and char literals blanked, so that
/// braces and `::` inside them are not read as code.
fn without_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let raw_hashes = (c == 'r' && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')))
            .then(|| chars[i + 1..].iter().take_while(|&&h| h == '#').count())
            .filter(|&n| chars.get(i + 1 + n) == Some(&'"'));
        if let Some(n) = raw_hashes {
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', n)).collect();
            let body_start = i + 2 + n;
            let rest: String = chars[body_start..].iter().collect();
            let len = rest.find(&close).map_or(rest.chars().count(), |b| rest[..b].chars().count());
            out.push_str("r\"");
            out.extend(std::iter::repeat_n(' ', len));
            out.push('"');
            i = body_start + len + close.chars().count();
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let step = if chars[i] == '\\' { 2 } else { 1 };
                out.extend(chars[i..(i + step).min(chars.len())].iter().map(|&x| if x == '\n' { '\n' } else { ' ' }));
                i += step;
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || chars.get(i + 1) == Some(&'\\')) {
            let end = (i + 1..chars.len()).find(|&j| chars[j] == '\'' && chars[j - 1] != '\\').unwrap_or(i + 1);
            out.push_str("' '");
            i = end + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `code` without the items marked `#[cfg(test)]` (a test module in braces,
/// or a single declaration up to its `;`).
fn without_test_items(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let semi = after.find(';').unwrap_or(after.len());
        let Some(open) = after.find('{').filter(|&o| o < semi) else {
            rest = &after[(semi + 1).min(after.len())..];
            continue;
        };
        let mut depth = 0;
        let mut end = after.len();
        for (j, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + j + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The child modules `code` declares in files of their own (`mod a;`,
/// `pub(crate) mod b;`), which a bare path (`a::f`, `use b::B`) names.
fn child_modules(code: &str) -> BTreeSet<String> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("mod ") {
        if i > 0 && code[..i].ends_with(is_ident) {
            continue;
        }
        let rest = &code[i + 4..];
        let name: String = rest.trim_start().chars().take_while(|&c| is_ident(c)).collect();
        if !name.is_empty() && rest.trim_start()[name.len()..].trim_start().starts_with(';') {
            out.insert(name);
        }
    }
    out
}

/// The tree of a `use` declaration: everything after `use ` up to its `;`.
fn use_trees(code: &str) -> Vec<&str> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices("use ")
        .filter(|(i, _)| *i == 0 || !code[..*i].ends_with(is_ident))
        .map(|(i, _)| &code[i + 4..code[i..].find(';').map_or(code.len(), |e| i + e)])
        .collect()
}

/// The paths of a `use` tree, with its groups spread out (`super::{a,
/// b::c}` gives `super::a` and `super::b::c`), each with the name it binds.
fn spread_use(tree: &str) -> Vec<(Vec<String>, String)> {
    fn spread(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, String)>) {
        let tree = tree.trim();
        let (head, group) = match tree.find('{') {
            Some(open) => (&tree[..open], Some(&tree[open + 1..tree.rfind('}').unwrap_or(tree.len())])),
            None => (tree, None),
        };
        let mut parts = head.split(" as ");
        let head = parts.next().unwrap_or("");
        let alias = parts.next().map(|a| a.trim().to_string());
        let mut path = prefix.to_vec();
        path.extend(head.split("::").map(str::trim).filter(|s| !s.is_empty() && *s != "self").map(str::to_string));
        let Some(group) = group else {
            let name = alias.or_else(|| path.last().cloned()).unwrap_or_default();
            out.push((path, name));
            return;
        };
        let mut depth = 0;
        let mut start = 0;
        for (j, c) in group.char_indices().chain(std::iter::once((group.len(), ','))) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    spread(&path, &group[start..j], out);
                    start = j + 1;
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    spread(&[], tree, &mut out);
    out
}

/// A path as written, made relative to the file's own module: a bare path
/// whose first segment is one of `children` (`start::f`) is `self::start::f`;
/// `None` for a path that names no module of the crate (`std::`, a local).
fn rooted(mut path: Vec<String>, children: &BTreeSet<String>) -> Option<Vec<String>> {
    match path.first().map(String::as_str) {
        Some("crate" | "super" | "self") => Some(path),
        Some(first) if children.contains(first) => {
            path.insert(0, "self".to_string());
            Some(path)
        }
        _ => None,
    }
}

/// Every path `code` names in the crate: from `crate::`, `super::` or
/// `self::`, or bare from one of its child modules (`start::start_task`,
/// `use progress::Progress`), with the groups of a `use` spread out.
fn item_paths(code: &str) -> Vec<Vec<String>> {
    let children = child_modules(code);
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for tree in use_trees(code) {
        out.extend(spread_use(tree).into_iter().filter_map(|(p, _)| rooted(p, &children)));
    }
    let roots = ["crate::", "super::", "self::"].into_iter().map(str::to_string);
    for root in roots.chain(children.iter().map(|c| format!("{c}::"))) {
        for (i, _) in code.match_indices(root.as_str()) {
            if i > 0 && code[..i].ends_with(|c: char| is_ident(c) || c == ':') {
                continue;
            }
            // `pub(in crate::run)` names where an item is seen, not an import.
            if code[..i].trim_end().ends_with("(in") {
                continue;
            }
            let path: String = code[i..].chars().take_while(|&c| is_ident(c) || c == ':').collect();
            // `super::{a, b}`: the group's paths come from its `use` above.
            if path.ends_with("::") {
                continue;
            }
            let path: Vec<String> = path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
            if path.len() > 1 {
                out.extend(rooted(path, &children));
            }
        }
    }
    out
}

/// The names a file's `use` declarations bind (`pub(crate) use
/// error::RunError;`, `use a::{b, c as d};`), each with the path it stands
/// for (`None` outside the crate: `use git2::Oid`): a child module names
/// them through its parent (`super::RunError`), and the item is the other
/// file's.
fn reexports(code: &str) -> Vec<(String, Option<Vec<String>>)> {
    let children = child_modules(code);
    use_trees(code).into_iter().flat_map(spread_use).map(|(p, name)| (name, rooted(p, &children))).collect()
}

/// The crate's files by module, and the names each one's `use` binds.
struct Modules {
    files: Vec<(Vec<String>, String)>,
    reexports: Vec<Vec<(String, Option<Vec<String>>)>>,
}

impl Modules {
    fn new(sources: &[(String, String)], codes: &[String]) -> Self {
        Modules {
            files: sources.iter().map(|(p, _)| (module_path(p), p.clone())).collect(),
            reexports: codes.iter().map(|c| reexports(c)).collect(),
        }
    }

    /// The file a path from the file at module `at` lands in: the longest
    /// prefix of the resolved path that is a file's module, or, where the
    /// next segment is an item that file re-exports, the file it comes from.
    fn file_of(&self, at: &[String], path: &[String]) -> Option<usize> {
        self.resolve(at, path, 0)
    }

    fn resolve(&self, at: &[String], path: &[String], depth: usize) -> Option<usize> {
        let mut full: Vec<String> = match path.first().map(String::as_str) {
            Some("crate") => Vec::new(),
            Some("self" | "super") => at.to_vec(),
            _ => return None,
        };
        let mut segments = &path[1..];
        if path[0] == "super" {
            full.pop();
            while segments.first().is_some_and(|s| s == "super") {
                full.pop();
                segments = &segments[1..];
            }
        }
        full.extend(segments.iter().cloned());
        let (n, file) = (1..=full.len())
            .rev()
            .find_map(|n| self.files.iter().position(|(m, _)| *m == full[..n]).map(|f| (n, f)))?;
        let through = full.get(n).and_then(|next| self.reexports[file].iter().find(|(name, _)| name == next));
        match through {
            Some((_, None)) => None,
            Some((_, Some(to))) if depth < 8 => {
                let mut onward = to.clone();
                onward.extend(full[n + 1..].iter().cloned());
                self.resolve(&full[..n], &onward, depth + 1).or(Some(file))
            }
            _ => Some(file),
        }
    }
}

/// Each file's imports: the files it names (by index in `sources`), each
/// with the first path that names it.
fn file_edges(sources: &[(String, String)]) -> Vec<BTreeMap<usize, String>> {
    let codes: Vec<String> =
        sources.iter().map(|(_, text)| without_test_items(&without_literals(&code(text)))).collect();
    let modules = Modules::new(sources, &codes);
    sources
        .iter()
        .zip(&codes)
        .enumerate()
        .map(|(i, ((path, _), code))| {
            let at = module_path(path);
            let mut out = BTreeMap::new();
            for p in item_paths(code) {
                if let Some(j) = modules.file_of(&at, &p).filter(|&j| j != i) {
                    out.entry(j).or_insert_with(|| p.join("::"));
                }
            }
            out
        })
        .collect()
}

/// The circles among `sources` (path, text): each a sorted list of the
/// files that reach each other through their imports.
fn file_circles(sources: &[(String, String)]) -> Vec<Vec<String>> {
    let edges = file_edges(sources);
    let reach = |from: usize| {
        let mut seen = BTreeSet::from([from]);
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for &m in edges[n].keys() {
                if seen.insert(m) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let reaches: Vec<BTreeSet<usize>> = (0..sources.len()).map(reach).collect();
    let mut circles = BTreeSet::new();
    for i in 0..sources.len() {
        let circle: Vec<String> = (0..sources.len())
            .filter(|&j| j != i && reaches[i].contains(&j) && reaches[j].contains(&i))
            .chain(std::iter::once(i))
            .map(|j| sources[j].0.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if circle.len() > 1 {
            circles.insert(circle);
        }
    }
    circles.into_iter().collect()
}

#[test]
fn no_two_files_import_each_other_even_through_others() {
    let sources = all_sources();
    let found: Vec<Vec<String>> = file_circles(&sources);
    let edges = file_edges(&sources);
    let index = |f: &str| sources.iter().position(|(p, _)| p == f);
    let shown: Vec<String> = found
        .iter()
        .map(|circle| {
            let inside: Vec<String> = circle
                .iter()
                .filter_map(|f| Some((f, index(f)?)))
                .flat_map(|(f, i)| {
                    let (sources, edges) = (&sources, &edges);
                    edges[i]
                        .iter()
                        .filter(move |(j, _)| circle.contains(&sources[**j].0))
                        .map(move |(j, by)| format!("    {f} -> {} ({by})", sources[*j].0))
                })
                .collect();
            format!("{}:\n{}", circle.join(", "), inside.join("\n"))
        })
        .collect();
    assert!(
        found.is_empty(),
        "files that import each other (a circle, through crate::, super::, self:: or a bare path to a child module):\n{}",
        shown.join("\n")
    );
}

/// The sandbox crate's library holds to the same rule: its files named as
/// its own crate sees them (`src/...`), its executable left out.
#[test]
fn no_two_files_of_the_sandbox_crate_import_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/sandbox");
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    let sources: Vec<(String, String)> = files
        .into_iter()
        .filter_map(|(path, text)| Some((path.strip_prefix("crates/sandbox/")?.to_string(), text)))
        .filter(|(path, _)| !path.starts_with("src/bin/"))
        .collect();
    assert!(sources.len() > 10);
    let found = file_circles(&sources);
    assert!(found.is_empty(), "files of the sandbox crate that import each other:\n{found:#?}");
}

#[test]
fn the_circle_reader_follows_super_self_and_groups_and_skips_tests() {
    let file = |p: &str, t: &str| (p.to_string(), t.to_string());
    let sources = [
        file("src/a/mod.rs", "mod b;\nmod c;\nuse self::b::B;\n"),
        file("src/a/b.rs", "use super::{c::C, d};\n"),
        file("src/a/c.rs", "pub fn f() { let s = \"super::b\"; }\n#[cfg(test)]\nmod tests { use super::super::b; }\n"),
        file("src/a/d.rs", "// crate::a::b in a comment\nfn g() { crate::a::b::h(); }\n"),
        file("src/e.rs", "fn x() { let c = '{'; }\n#[cfg(test)]\nmod tests { use crate::f::F; }\n"),
        file("src/f.rs", "use crate::e::E;\n"),
    ];
    assert_eq!(file_circles(&sources), [["src/a/b.rs", "src/a/d.rs"]]);
}

/// A parent that calls into a child by a bare path (`start::go()`, `use
/// progress::P`) while the child calls back through `super::` is a circle;
/// a child's item the parent re-exports (`pub(crate) use error::E`) and a
/// sibling names through the parent is not, nor is a name the parent
/// imports from another crate, nor a `pub(in path)`.
#[test]
fn the_circle_reader_follows_bare_paths_to_children_and_re_exports_to_their_source() {
    let file = |p: &str, t: &str| (p.to_string(), t.to_string());
    let sources = [
        file(
            "src/r/mod.rs",
            "mod start;\nmod error;\npub(crate) use error::{E, Kind as K};\nfn run() { start::go(); }\nfn helper() {}\n",
        ),
        file("src/r/start.rs", "use super::K;\npub fn go() { super::helper(); }\n"),
        file("src/r/error.rs", "pub struct E;\npub enum Kind {}\n"),
        file("src/r/gate.rs", "use super::E;\nfn g() -> E { E }\n"),
        file("src/p/mod.rs", "mod progress;\nuse progress::P;\nfn helper() {}\n"),
        file("src/p/progress.rs", "pub struct P;\nfn f() { crate::p::helper(); }\n"),
        file("src/s/mod.rs", "mod child;\nfn f() { let child = 1; other::child::x(); }\n"),
        file("src/s/child.rs", "fn f() { super::f(); }\n"),
        // A name the parent imports from outside the crate, and a
        // visibility path, are no import of the parent's.
        file("src/g/mod.rs", "mod repo;\nuse git2::Oid;\nfn go() { repo::open(); }\n"),
        file("src/g/repo.rs", "use super::{Oid};\npub(in crate::g) fn open() -> super::Oid { todo!() }\n"),
    ];
    assert_eq!(file_circles(&sources), [["src/p/mod.rs", "src/p/progress.rs"], ["src/r/mod.rs", "src/r/start.rs"]]);
}

#[test]
fn the_attempt_loop_has_its_methods_in_one_file() {
    let elsewhere: Vec<String> = all_sources()
        .into_iter()
        .filter(|(path, text)| {
            path != "src/run/task_run.rs"
                && code(text).lines().any(|l| l.trim_start().starts_with("impl") && l.contains("TaskRun<"))
        })
        .map(|(path, _)| path)
        .collect();
    assert!(
        elsewhere.is_empty(),
        "impl blocks of TaskRun outside src/run/task_run.rs (a phase is a function over run::attempt::Fixed): {elsewhere:?}"
    );
}
