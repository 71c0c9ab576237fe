//! What a check receives and loads beyond the tree: every variable of the
//! user's environment that reaches it, the Python packages its
//! interpreters load (each directory of their `sys.path`, as installed),
//! each `node_modules` a Node program would find from the worktree, the
//! toolchain a version manager's shim resolves to, and the paths outside
//! the tree the check declares (`[[check]] reads`). Its digest is part of
//! the reuse key and of the base's cache key: an earlier run stands for
//! this one only when all of it is the same
//! (docs/honest-success.md, "Reused checks").
//!
//! What cannot be known cheaply (a shim of a version manager it cannot
//! ask, a declared path too large to list) limits reuse to this run of
//! this task: the digest then holds the run's own nonce.
//!
//! Asking an interpreter or a shim runs it once per process (memoized),
//! outside the sandbox, from `/`, never a program inside the worktree.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::UNIX_EPOCH;

/// Variables that reach a check but say nothing of what it computes: set
/// anew by each shell and terminal session.
const SESSION_VARS: &[&str] = &["PWD", "OLDPWD", "SHLVL", "_"];

/// Entries listed of one directory at most ([`listing`]); past it, the
/// directory is unknown.
const MAX_ENTRIES: usize = 20_000;

/// What a check receives and loads, gathered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Received {
    /// The user's variables that reach it (not those retry-run sets).
    pub vars: BTreeMap<String, String>,
    /// What its programs load, each `(what, identity)`.
    pub loads: Vec<(String, String)>,
    /// What could not be known cheaply.
    pub unknown: Vec<String>,
}

impl Received {
    /// The digest in the key: everything gathered, and, when something
    /// could not be known, the `nonce` of this run of this task. Pure.
    pub(crate) fn digest(&self, nonce: &str) -> String {
        let unknown = if self.unknown.is_empty() { "" } else { nonce };
        let text = serde_json::to_string(&(&self.vars, &self.loads, &self.unknown, unknown)).unwrap_or_default();
        crate::hash::sha256_hex(text.as_bytes())
    }

    /// In words, for the record: how many variables, what was loaded, and
    /// what limited reuse to this run. Pure.
    pub(crate) fn summary(&self) -> String {
        let mut parts = vec![format!("{} variables", self.vars.len())];
        parts.extend(self.loads.iter().map(|(what, _)| what.clone()));
        if !self.unknown.is_empty() {
            parts.push(format!("reused within this run only: {}", self.unknown.join(", ")));
        }
        parts.join("; ")
    }
}

/// What the check whose command is `run` receives and loads, run in the
/// worktree `wt` (with the checkout's directories `shared` mounted in it,
/// each `(checkout's, worktree's)`) with `path` as its `PATH`, retry-run's own variables
/// `set` (left out: the key holds them already) and `unset` (hidden from
/// it), and `reads` (`[[check]] reads`, `~` the home directory).
pub(crate) fn received(
    run: &str,
    (wt, shared): (&Path, &[(PathBuf, PathBuf)]),
    path: &str,
    (set, unset): (&BTreeMap<String, String>, &[String]),
    reads: &[String],
) -> Received {
    let mut r = Received { vars: user_vars(set, unset), ..Received::default() };
    let words = super::baseline_cache::command_words(run);
    let programs = programs(&words, path, wt);
    for py in pythons(&programs, path, wt) {
        python(&py, &mut r);
    }
    node_modules(wt, shared, &mut r);
    for p in &programs {
        toolchain(p, wt, &mut r);
    }
    for read in reads {
        declared(read, &mut r);
    }
    r
}

/// The user's variables as they reach a check: not those retry-run sets
/// (`set`, its `RETRY_RUN_*`, the confinement's `TMPDIR` and proxy), nor
/// those it hides (`unset`), nor a shell's own ([`SESSION_VARS`]).
fn user_vars(set: &BTreeMap<String, String>, unset: &[String]) -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| !ours(k) && !set.contains_key(k) && !unset.contains(k) && !SESSION_VARS.contains(&k.as_str()))
        .collect()
}

/// Whether retry-run sets `name` for every confined command: its own
/// variables, the temporary directory and the proxy's.
fn ours(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    name.starts_with("RETRY_RUN_")
        || ["tmpdir", "tmp", "temp", "no_proxy", "node_use_env_proxy"].contains(&lower.as_str())
        || lower.ends_with("_proxy")
}

/// The programs the command words start, resolved: absolute paths and
/// words found on `path`, never one inside the worktree `wt` (what is
/// there is the tree's, and in the key already).
fn programs(words: &[String], path: &str, wt: &Path) -> Vec<PathBuf> {
    words
        .iter()
        .filter_map(|w| {
            if w.contains('/') {
                Path::new(w).is_absolute().then(|| PathBuf::from(w))
            } else {
                crate::process::programs_on_path(w, path.as_ref()).next()
            }
        })
        .filter(|p| !p.starts_with(wt))
        .collect()
}

/// The Python interpreters a check may load packages through: those the
/// command starts (a `python` program, or a script whose `#!` line names
/// one) and `python3` and `python` on `path` (a script of the tree may
/// start them).
fn pythons(programs: &[PathBuf], path: &str, wt: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let named = programs.iter().filter_map(|p| if is_python(p) { Some(p.clone()) } else { shebang_python(p) });
    let on_path =
        ["python3", "python"].into_iter().filter_map(|w| crate::process::programs_on_path(w, path.as_ref()).next());
    for p in named.chain(on_path) {
        if !p.starts_with(wt) && !found.contains(&p) {
            found.push(p);
        }
    }
    found
}

fn is_python(p: &Path) -> bool {
    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("python"))
}

/// The interpreter a script's `#!` line names, when it is a Python
/// (`#!/venv/bin/python`, `#!/usr/bin/env python3`).
fn shebang_python(script: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let line = std::str::from_utf8(&head[..n]).ok()?.lines().next()?.strip_prefix("#!")?.trim().to_string();
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let interp = if first.ends_with("/env") { words.find(|w| !w.starts_with('-'))? } else { first };
    let p = Path::new(interp);
    if !is_python(p) {
        return None;
    }
    if p.is_absolute() { Some(p.to_path_buf()) } else { crate::process::find_program(interp) }
}

/// What each program asked said, by its path and modification time.
type Said = HashMap<(PathBuf, Option<u128>), Option<String>>;

/// Memoized per process: what each interpreter said of itself.
fn asked() -> &'static Mutex<Said> {
    static ASKED: OnceLock<Mutex<Said>> = OnceLock::new();
    ASKED.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The output of `program args`, run from `/` (retry-run's environment,
/// no prompt, no network needed), once per process for each program as
/// modified; `None` when it fails.
fn ask(program: &Path, args: &[&str], extra_env: &[(&str, &str)]) -> Option<String> {
    let id = (program.to_path_buf(), mtime(program));
    let mut memo = asked().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = memo.get(&id) {
        return known.clone();
    }
    let set: Vec<(&str, &std::ffi::OsStr)> = extra_env.iter().map(|(k, v)| (*k, v.as_ref())).collect();
    let out = crate::process::output_with(&program.to_string_lossy(), args, Path::new("/"), &set, &[], None)
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    memo.insert(id, out.clone());
    out
}

/// A Python interpreter's packages: its version and each directory of its
/// `sys.path` (site-packages as installed, `.pth` additions, the
/// standard library) listed.
fn python(py: &Path, r: &mut Received) {
    const SAY: &str = "import sys\nprint(sys.version.replace('\\n', ' '))\nfor p in sys.path:\n    print(p)";
    let Some(said) = ask(py, &["-c", SAY], &[]) else {
        r.unknown.push(format!("what {} loads", py.display()));
        return;
    };
    let mut lines = said.lines();
    let version = lines.next().unwrap_or_default().to_string();
    let mut ids = vec![version];
    for dir in lines.filter(|l| Path::new(l).is_absolute()) {
        match listing(Path::new(dir)) {
            Some(l) => ids.push(format!("{dir} {l}")),
            None if Path::new(dir).exists() => r.unknown.push(format!("{dir} (too large to list)")),
            None => {}
        }
    }
    r.loads.push((format!("python {}", py.display()), crate::hash::sha256_hex(ids.join("\n").as_bytes())));
}

/// Each `node_modules` a Node program in the worktree finds (its own, a
/// shared copy, and those of the directories above it): its packages,
/// each by its name and its `package.json`, and the package manager's
/// record of what it installed (npm's `.package-lock.json`, pnpm's
/// `.modules.yaml`, yarn's `.yarn-state.yml`). Not modification times: a
/// copy made for a task's worktree is the same install.
fn node_modules(wt: &Path, shared: &[(PathBuf, PathBuf)], r: &mut Received) {
    for dir in wt.ancestors() {
        let nm = dir.join("node_modules");
        // A mount of the checkout's own: what is there is the checkout's.
        let from = shared.iter().find(|(_, at)| *at == nm).map_or(nm.as_path(), |(src, _)| src.as_path());
        if !from.is_dir() {
            continue;
        }
        let Some(ids) = packages(from) else {
            r.unknown.push(format!("{} (too large to list)", nm.display()));
            continue;
        };
        let shown = match nm.strip_prefix(wt) {
            Ok(rel) => format!("node_modules <worktree>/{}", rel.display()),
            Err(_) => format!("node_modules {}", nm.display()),
        };
        r.loads.push((shown, crate::hash::sha256_hex(ids.join("\n").as_bytes())));
    }
}

/// The packages of one `node_modules` ([`node_modules`]), sorted; `None`
/// past [`MAX_ENTRIES`].
fn packages(nm: &Path) -> Option<Vec<String>> {
    let content = |p: &Path| std::fs::read(p).map(|b| crate::hash::sha256_hex(&b)).unwrap_or_default();
    let mut ids = Vec::new();
    let mut dirs = vec![(String::new(), nm.to_path_buf())];
    while let Some((scope, dir)) = dirs.pop() {
        for e in std::fs::read_dir(&dir).ok()?.flatten() {
            let name = format!("{scope}{}", e.file_name().to_string_lossy());
            if scope.is_empty() && name.starts_with('@') {
                dirs.push((format!("{name}/"), e.path()));
            } else if name.ends_with("/.bin") || name == ".bin" || name == ".cache" {
                continue;
            } else if [".package-lock.json", ".modules.yaml", ".yarn-state.yml"].contains(&name.as_str()) {
                ids.push(format!("{name} {}", content(&e.path())));
            } else {
                ids.push(format!("{name} {}", content(&e.path().join("package.json"))));
            }
            if ids.len() > MAX_ENTRIES {
                return None;
            }
        }
    }
    ids.sort();
    Some(ids)
}

/// The toolchain behind a version manager's shim: rustup's proxies
/// (`rustc -vV` beside them, in the worktree's own toolchain file's
/// choice, never installing one), and the `shims` of pyenv, asdf, mise,
/// nodenv, goenv, rbenv (the program's version). Another program is known
/// by its path and modification time, in the key already.
fn toolchain(program: &Path, wt: &Path, r: &mut Received) {
    let Some(name) = program.file_name().and_then(|n| n.to_str()) else { return };
    if is_rustup_proxy(program) {
        let rustc = program.with_file_name("rustc");
        let set = [("RUSTUP_AUTO_INSTALL", std::ffi::OsStr::new("0"))];
        let out = crate::process::output_with(&rustc.to_string_lossy(), &["-vV"], wt, &set, &[], None)
            .ok()
            .filter(|o| o.status.success());
        match out {
            Some(o) => r.loads.push((format!("rust toolchain ({name})"), crate::hash::sha256_hex(&o.stdout))),
            None => r.unknown.push(format!("the toolchain rustup picks for {name}")),
        }
        return;
    }
    if !program.components().any(|c| c.as_os_str() == "shims") || is_python(program) {
        return;
    }
    let version: &[&str] = match name {
        "node" | "npm" | "npx" | "ruby" | "java" => &["--version"],
        "go" => &["version"],
        _ => {
            r.unknown.push(format!("the program behind the shim {}", program.display()));
            return;
        }
    };
    match ask(program, version, &[]) {
        Some(v) => {
            r.loads.push((format!("{name} behind {}", program.display()), crate::hash::sha256_hex(v.as_bytes())))
        }
        None => r.unknown.push(format!("the program behind the shim {}", program.display())),
    }
}

/// Whether `p` is one of rustup's proxies (`cargo`, `rustc`, ... in
/// `~/.cargo/bin`: links to `rustup` itself).
fn is_rustup_proxy(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(dir) = p.parent() else { return false };
    let (Ok(me), Ok(rustup)) = (std::fs::metadata(p), std::fs::metadata(dir.join("rustup"))) else { return false };
    p.file_name().is_some_and(|n| n != "rustup") && me.dev() == rustup.dev() && me.ino() == rustup.ino()
}

/// A path the check declares it reads (`[[check]] reads`): a file's size
/// and modification time, a directory's every entry below it (at most
/// [`MAX_ENTRIES`]).
fn declared(read: &str, r: &mut Received) {
    let path = match read.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(rest)).unwrap_or_else(|| read.into()),
        None => PathBuf::from(read),
    };
    let mut ids = Vec::new();
    let mut stack = vec![path.clone()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            ids.push(format!("{} missing", p.display()));
            continue;
        };
        ids.push(format!("{} {} {:?}", p.display(), meta.len(), mtime_of(&meta)));
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
                stack.push(e.path());
            }
        }
        if ids.len() > MAX_ENTRIES {
            r.unknown.push(format!("{read} (more than {MAX_ENTRIES} entries)"));
            return;
        }
    }
    ids.sort();
    r.loads.push((format!("reads {read}"), crate::hash::sha256_hex(ids.join("\n").as_bytes())));
}

/// A directory's entries, each name with its modification time, sorted,
/// hashed: what installing, upgrading or removing a package changes.
/// `None` when it cannot be read or has more than [`MAX_ENTRIES`].
fn listing(dir: &Path) -> Option<String> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut entries = Vec::new();
    for e in rd.flatten() {
        if entries.len() >= MAX_ENTRIES {
            return None;
        }
        // Bytecode Python writes as it imports, not an install.
        if e.file_name() == "__pycache__" {
            continue;
        }
        let t = e.metadata().ok().as_ref().and_then(mtime_of);
        entries.push(format!("{} {:?}", e.file_name().to_string_lossy(), t));
    }
    entries.sort();
    Some(crate::hash::sha256_hex(entries.join("\n").as_bytes()))
}

fn mtime(p: &Path) -> Option<u128> {
    std::fs::metadata(p).ok().as_ref().and_then(mtime_of)
}

fn mtime_of(m: &std::fs::Metadata) -> Option<u128> {
    m.modified().ok()?.duration_since(UNIX_EPOCH).ok().map(|d| d.as_nanos())
}

/// What a check receives, as its keys hold it: the digest and, for the
/// record, the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ReceivedKeys {
    pub digest: String,
    pub summary: String,
}

/// [`received`] for `check` run in `wt` for task `task`, with the key's
/// variables `keyed` (`PATH` among them), confined by `confinement`.
pub(crate) fn seen(
    check: &crate::config::CheckConfig,
    wt: &Path,
    keyed: &BTreeMap<String, String>,
    confinement: &crate::sandbox::Confinement,
    task: &str,
) -> ReceivedKeys {
    let path = keyed.get("PATH").cloned().or_else(|| std::env::var("PATH").ok()).unwrap_or_default();
    let (unset, shared) = (confinement.unset(), &confinement.policy.shared);
    let r = received(&check.run, (wt, shared), &path, (keyed, &unset), &check.reads);
    ReceivedKeys { digest: r.digest(&nonce(task)), summary: r.summary() }
}

/// This run's nonce, with the task's id: what limits reuse to this run
/// of this task when something could not be known.
pub(crate) fn nonce(task: &str) -> String {
    static RUN: OnceLock<String> = OnceLock::new();
    let run = RUN.get_or_init(|| {
        let now = std::time::SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        format!("{}-{now}", std::process::id())
    });
    format!("{run} {task}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_part_ties_the_digest_to_the_run() {
        let known = Received { vars: BTreeMap::from([("A".into(), "1".into())]), ..Received::default() };
        assert_eq!(known.digest("run 1"), known.digest("run 2"), "known: the same in every run");
        let mut other = known.clone();
        other.vars.insert("A".into(), "2".into());
        assert_ne!(other.digest("run 1"), known.digest("run 1"), "a variable's value is in it");
        let mut unknown = known.clone();
        unknown.unknown.push("the program behind the shim /x/shims/y".into());
        assert_ne!(unknown.digest("run 1"), unknown.digest("run 2"));
        assert_eq!(unknown.digest("run 1"), unknown.digest("run 1"));
        assert!(unknown.summary().contains("reused within this run only"), "{}", unknown.summary());
        assert_eq!(known.summary(), "1 variables");
    }

    #[test]
    fn retry_run_s_own_variables_and_the_shell_s_are_left_out() {
        for v in ["RETRY_RUN_ATTEMPT", "TMPDIR", "http_proxy", "HTTPS_PROXY", "no_proxy", "NODE_USE_ENV_PROXY"] {
            assert!(ours(v), "{v}");
        }
        for v in ["PYTHONPATH", "NODE_OPTIONS", "FACTOR", "PATH_TO_DATA"] {
            assert!(!ours(v), "{v}");
        }
    }

    #[test]
    fn a_package_installed_changes_the_listing_and_a_declared_file_its_identity() {
        let t = tempfile::tempdir().expect("tmp");
        let site = t.path().join("site-packages");
        std::fs::create_dir_all(site.join("lib-1.0.dist-info")).expect("mkdir");
        let before = listing(&site);
        std::fs::rename(site.join("lib-1.0.dist-info"), site.join("lib-2.0.dist-info")).expect("rename");
        assert_ne!(listing(&site), before);
        assert_eq!(listing(&t.path().join("none")), None);
        let f = t.path().join("data.json");
        std::fs::write(&f, "1").expect("write");
        let mut a = Received::default();
        declared(&f.display().to_string(), &mut a);
        std::fs::write(&f, "22").expect("write");
        let mut b = Received::default();
        declared(&f.display().to_string(), &mut b);
        assert_ne!(a.loads, b.loads);
        assert!(a.unknown.is_empty());
    }

    #[test]
    fn node_modules_above_and_in_the_worktree_are_found() {
        let t = tempfile::tempdir().expect("tmp");
        let wt = t.path().join("repo/.git/retry-run/worktrees/task");
        std::fs::create_dir_all(wt.join("node_modules/@scope/a")).expect("mkdir");
        std::fs::create_dir_all(t.path().join("repo/node_modules/b")).expect("mkdir");
        let mut r = Received::default();
        node_modules(&wt, &[], &mut r);
        let shown: Vec<&str> = r.loads.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert_eq!(shown[0], "node_modules <worktree>/node_modules");
        let before = r.loads.clone();
        std::fs::create_dir_all(wt.join("node_modules/@scope/c")).expect("mkdir");
        let mut again = Received::default();
        node_modules(&wt, &[], &mut again);
        assert_ne!(again.loads[0], before[0], "a scoped package added");
        std::fs::write(t.path().join("repo/node_modules/b/package.json"), "{\"version\":\"2.0.0\"}").expect("write");
        let mut upgraded = Received::default();
        node_modules(&wt, &[], &mut upgraded);
        assert_ne!(upgraded.loads[1], again.loads[1], "a package upgraded");
        // A copy of the same install (new times) is the same.
        std::fs::create_dir_all(wt.join("node_modules/@scope/c")).expect("mkdir");
        let mut same = Received::default();
        node_modules(&wt, &[], &mut same);
        assert_eq!(same.loads, upgraded.loads);
        // Mounted from the checkout: the checkout's is read.
        let checkout = t.path().join("checkout/node_modules");
        std::fs::create_dir_all(checkout.join("d")).expect("mkdir");
        let mut mounted = Received::default();
        node_modules(&wt, &[(checkout, wt.join("node_modules"))], &mut mounted);
        assert_ne!(mounted.loads[0], same.loads[0]);
    }

    #[test]
    fn a_python_named_by_a_script_s_first_line() {
        let t = tempfile::tempdir().expect("tmp");
        let s = t.path().join("pytest");
        std::fs::write(&s, "#!/opt/venv/bin/python3.12\nimport x\n").expect("write");
        assert_eq!(shebang_python(&s), Some(PathBuf::from("/opt/venv/bin/python3.12")));
        std::fs::write(&s, "#!/bin/sh\necho\n").expect("write");
        assert_eq!(shebang_python(&s), None);
    }
}
