//! What an unconfined attempt (`sandbox.mode = "detect"` or `"off"`) can
//! write beside the repository's internals, which the default mode keeps
//! from it: marked before its agent (and its checks) and compared after,
//! each change a scope finding of its own kind:
//!
//! - `pushed`: the refs of each remote on this machine (a path or `file://`
//!   URL in `remote.<name>.url` or `pushurl`), read before and after, but
//!   retry-run's own (`refs/retry-run/*`); and a tracking ref
//!   (`refs/remotes/<name>/*`) whose reflog says `git push` moved it;
//! - `checkout-git`: the files of the user's checkout's git directory
//!   beside those watched elsewhere (config, hooks, refs, objects, index,
//!   HEAD): its locks (`index.lock`), `ORIG_HEAD`, `FETCH_HEAD`, the
//!   reflogs under `logs/`, a rebase's or a merge's state, by their stat
//!   data; a lock that goes away by itself a moment later (a git command
//!   of the user's ending) is not one;
//! - `record`: the records of the task (but what retry-run writes during
//!   the step: the attempt's TMPDIR, quarantine, output, checks' output,
//!   the base's results) and of every task no run holds, by their stat data;
//!   the task's event log is watched by the log itself
//!   ([`crate::record::EventLog::watch_foreign`]);
//! - `retry-run-cache`: `$XDG_CACHE_HOME/retry-run` (else
//!   `~/.cache/retry-run`), by stat data;
//! - `shared-tmp` (noted, never a violation): this user's entries of
//!   `/dev/shm` and, where the attempt has a TMPDIR of its own, `/tmp`, and
//!   one level below them (retry-run's own directories left out); known by
//!   their time alone, so another program of the user's may have written
//!   them.
//!
//! Each look is bounded (entries and depth): what lies past the bound is
//! not compared.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::git::fingerprint::{Fingerprint, Part, refs_of};
use crate::model::{PartChange, ScopeFinding, ScopeReason};
use crate::record::Store;

/// Where the attempt runs: what [`mark`] and [`changes`] look at.
pub(super) struct Where<'a> {
    /// The repository's common git directory.
    pub common: &'a Path,
    /// The user's checkout's own git directory (the common one, or
    /// `worktrees/<name>` for a linked checkout).
    pub git_dir: &'a Path,
    /// The user's checkout, for a remote named by a relative path.
    pub checkout: Option<&'a Path>,
    /// The task's worktree (where the agent's git runs).
    pub worktree: &'a Path,
    pub store: &'a Store,
    /// The record's id (`task`, or `task/lanes/<n>`).
    pub record: &'a str,
    pub attempt: u32,
    /// Whether `/tmp` is compared: the attempt has a TMPDIR of its own.
    pub tmp: bool,
}

/// One look at everything [`changes`] compares.
#[derive(Debug, Default)]
pub(super) struct Marks {
    remotes: Vec<RemoteRefs>,
    checkout_git: Fingerprint,
    record: Fingerprint,
    /// Other tasks a run held at the mark: their records are not compared.
    held: BTreeSet<String>,
    cache: Fingerprint,
    shared_tmp: Fingerprint,
}

/// A remote on this machine: its name, git directory and refs.
#[derive(Debug)]
struct RemoteRefs {
    name: String,
    dir: PathBuf,
    refs: BTreeMap<String, String>,
}

/// What [`changes`] found: violations, and what is only noted.
#[derive(Debug, Default)]
pub(super) struct AroundFound {
    pub violations: Vec<ScopeFinding>,
    pub noted: Vec<ScopeFinding>,
}

/// How many entries each part of a look reads at most.
const CHECKOUT_GIT_MAX: usize = 5_000;
const RECORD_MAX: usize = 20_000;
const CACHE_MAX: usize = 10_000;
const SHARED_TMP_MAX: usize = 2_000;
/// How many entries of `/tmp` (or `/dev/shm`) are looked at at most, the
/// other users' among them.
const SHARED_TMP_SCAN: usize = 20_000;
/// How many remotes are read at most.
const REMOTES_MAX: usize = 16;

/// The common directory's entries watched elsewhere (the fingerprint, the
/// checkout's watch, the machinery) or not the checkout's (`retry-run`, the
/// record; `lfs` and `annex`, stores of content named by its hash).
const WATCHED_ELSEWHERE: [&str; 15] = [
    "config",
    "config.worktree",
    "HEAD",
    "shallow",
    "hooks",
    "info",
    "modules",
    "refs",
    "objects",
    "worktrees",
    "packed-refs",
    "retry-run",
    "index",
    "lfs",
    "annex",
];

/// A linked checkout's own git directory's entries watched elsewhere.
const LINKED_WATCHED: [&str; 7] = ["HEAD", "index", "commondir", "gitdir", "config.worktree", "locked", "refs"];

/// The reflogs of retry-run's own refs, which other tasks move.
const OWN_LOGS: [&str; 3] = ["logs/refs/heads/retry-run/", "logs/refs/retry-run/", "logs/refs/retry-run-remotes/"];

/// Looks at everything [`changes`] compares.
pub(super) fn mark(w: &Where<'_>) -> Marks {
    let (record, held) = record(w, &BTreeSet::new());
    Marks {
        remotes: remotes(w),
        checkout_git: checkout_git(w),
        record,
        held,
        cache: cache(),
        shared_tmp: shared_tmp(w),
    }
}

/// What changed since `before`, each a finding of its kind. `moved` names
/// the refs (`refs/heads/main`, `HEAD`) other findings already name: their
/// reflogs are not named again.
pub(super) fn changes(w: &Where<'_>, before: &Marks, moved: &BTreeSet<String>) -> AroundFound {
    let mut seen = AroundFound::default();
    for r in &before.remotes {
        let now = remote_refs(&r.dir);
        seen.violations.extend(pushes(&r.name, &r.refs, &now));
    }
    let checkout = settled(checkout_git(w).compare(&before.checkout_git), || checkout_git(w));
    for c in checkout {
        if !reflog_of_moved(&c.part, moved) {
            seen.violations.push(finding(format!(".git/{}", c.part), ScopeReason::CheckoutGit, c.change));
        }
    }
    let (record_now, held_now) = record(w, &before.held);
    for c in record_now.compare(&before.record) {
        let task = c.part.strip_prefix("tasks/").and_then(|r| r.split('/').next()).unwrap_or_default();
        // What another task of this run wrote meanwhile (an ended task's
        // worktree evicted, a lane's coordinator) is this run's.
        let ours = std::fs::symlink_metadata(w.store.root.join(&c.part))
            .is_ok_and(|m| crate::record::store::written_here(&w.store.root.join(&c.part), &m));
        if !held_now.contains(task) && !ours {
            seen.violations.push(finding(format!(".git/retry-run/{}", c.part), ScopeReason::Record, c.change));
        }
    }
    for c in cache().compare(&before.cache) {
        seen.violations.push(finding(c.part, ScopeReason::RetryRunCache, c.change));
    }
    for c in shared_tmp(w).compare(&before.shared_tmp) {
        seen.noted.push(finding(c.part, ScopeReason::SharedTmp, c.change));
    }
    seen
}

/// A finding of `reason` at `path`, its change said in its `rule`.
fn finding(path: String, reason: ScopeReason, change: PartChange) -> ScopeFinding {
    let what = match change {
        PartChange::Added => "added",
        PartChange::Removed => "removed",
        PartChange::Changed | PartChange::Touched => "changed",
    };
    ScopeFinding { path, old_path: None, reason, rule: Some(what.to_string()) }
}

/// Whether `part` (`logs/refs/heads/main`, `logs/HEAD`) is the reflog of
/// a ref `moved` already names (the checkout's `HEAD` moves with its
/// branch). Pure.
fn reflog_of_moved(part: &str, moved: &BTreeSet<String>) -> bool {
    match part.strip_prefix("logs/") {
        Some("HEAD") => moved.iter().any(|m| m == "HEAD" || m.starts_with("refs/heads/")),
        Some(name) => moved.contains(name),
        None => false,
    }
}

/// `changes` without the locks that went away by themselves: a lock added
/// or changed is looked at again a moment later (`again`), and one gone
/// by then was a git command's, not left behind; a lock removed is a git
/// command ending.
fn settled(
    changes: Vec<crate::model::InternalChange>,
    again: impl FnOnce() -> Fingerprint,
) -> Vec<crate::model::InternalChange> {
    let lock = |c: &crate::model::InternalChange| c.part.ends_with(".lock");
    if !changes.iter().any(lock) {
        return changes;
    }
    std::thread::sleep(Duration::from_millis(100));
    let later = again();
    changes
        .into_iter()
        .filter(|c| !lock(c) || (c.change != PartChange::Removed && later.parts.contains_key(&c.part)))
        .collect()
}

/// The refs each remote moved, as `pushed` findings (`origin:refs/heads/main`).
fn pushes(name: &str, before: &BTreeMap<String, String>, now: &BTreeMap<String, String>) -> Vec<ScopeFinding> {
    let short = |oid: &str| oid.chars().take(7).collect::<String>();
    let mut out = Vec::new();
    for (r, was) in before {
        match now.get(r) {
            None => out.push((r, format!("deleted (was {})", short(was)))),
            Some(is) if is != was => out.push((r, format!("moved {} -> {}", short(was), short(is)))),
            Some(_) => {}
        }
    }
    for (r, is) in now {
        if !before.contains_key(r) {
            out.push((r, format!("created at {}", short(is))));
        }
    }
    out.sort();
    out.into_iter()
        .map(|(r, what)| ScopeFinding {
            path: format!("{name}:{r}"),
            old_path: None,
            reason: ScopeReason::Pushed,
            rule: Some(what),
        })
        .collect()
}

/// `git-internal` findings of tracking refs (`refs/remotes/origin/main`)
/// whose reflog's last entry is `git push`'s, made `pushed` findings
/// (`origin:refs/heads/main`), or dropped where a `pushed` finding of the
/// remote read itself already names that ref.
pub(super) fn pushes_by_tracking(common: &Path, found: &mut Vec<ScopeFinding>) {
    let named: BTreeSet<String> =
        found.iter().filter(|f| f.reason == ScopeReason::Pushed).map(|f| f.path.clone()).collect();
    let mut out = Vec::with_capacity(found.len());
    for f in found.drain(..) {
        let pushed = (f.reason == ScopeReason::GitInternal)
            .then(|| f.path.strip_prefix("refs/remotes/"))
            .flatten()
            .and_then(|rest| rest.split_once('/'))
            .filter(|_| last_reflog_message(common, &f.path).is_some_and(|m| m.starts_with("update by push")));
        match pushed {
            Some((remote, branch)) => {
                let path = format!("{remote}:refs/heads/{branch}");
                if !named.contains(&path) {
                    out.push(ScopeFinding {
                        path,
                        old_path: None,
                        reason: ScopeReason::Pushed,
                        rule: Some(format!("its tracking ref {} was moved by `git push`", f.path)),
                    });
                }
            }
            None => out.push(f),
        }
    }
    *found = out;
}

/// The message of the last entry of `refname`'s reflog under `common`.
fn last_reflog_message(common: &Path, refname: &str) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(common.join("logs").join(refname)).ok()?;
    let len = f.metadata().ok()?.len();
    f.seek(SeekFrom::Start(len.saturating_sub(4096))).ok()?;
    let mut tail = String::new();
    f.take(4096).read_to_string(&mut tail).ok()?;
    let last = tail.lines().rev().find(|l| !l.trim().is_empty())?;
    last.split_once('\t').map(|(_, m)| m.trim().to_string())
}

/// The remotes on this machine named in the repository's config: each
/// `remote.<name>.url` and `pushurl` that is a path or a `file://` URL
/// (relative to the worktree, where the agent's git runs, else to the
/// checkout), to a repository other than this one.
fn remotes(w: &Where<'_>) -> Vec<RemoteRefs> {
    let own = std::fs::canonicalize(w.common).ok();
    let mut out: Vec<RemoteRefs> = Vec::new();
    for (name, urls) in crate::git::fingerprint::remote_urls(w.common, REMOTES_MAX) {
        for url in &urls {
            let Some(dir) = local_git_dir(url, w.worktree, w.checkout) else { continue };
            let real = std::fs::canonicalize(&dir).ok();
            if real.is_none() || real == own || out.iter().any(|r| std::fs::canonicalize(&r.dir).ok() == real) {
                continue;
            }
            out.push(RemoteRefs { name: name.clone(), refs: remote_refs(&dir), dir });
        }
    }
    out
}

/// A remote's refs, retry-run's own left out.
fn remote_refs(dir: &Path) -> BTreeMap<String, String> {
    refs_of(dir)
}

/// The git directory a remote's `url` names on this machine: a path or a
/// `file://` URL to a bare repository or to one with a `.git` directory;
/// `None` for a URL of the network (`ssh://`, `host:path`, `https://`).
fn local_git_dir(url: &str, worktree: &Path, checkout: Option<&Path>) -> Option<PathBuf> {
    let path = match url.strip_prefix("file://") {
        Some(p) => PathBuf::from(p),
        None if url.contains("://") => return None,
        // scp-like `host:path` (a colon before any slash).
        None if url.split('/').next().is_some_and(|first| first.contains(':')) => return None,
        None => PathBuf::from(url),
    };
    let candidates: Vec<PathBuf> = if path.is_absolute() {
        vec![path]
    } else {
        std::iter::once(worktree.join(&path)).chain(checkout.map(|c| c.join(&path))).collect()
    };
    candidates.into_iter().find_map(|p| {
        if p.join("HEAD").is_file() && p.join("objects").is_dir() && p.join("refs").is_dir() {
            Some(p)
        } else if p.join(".git").join("HEAD").is_file() && p.join(".git").is_dir() {
            Some(p.join(".git"))
        } else {
            None
        }
    })
}

/// The checkout's git files beside those watched elsewhere, by stat data
/// (named relative to the common directory: `index.lock`,
/// `logs/refs/heads/main`, `worktrees/<name>/ORIG_HEAD`).
fn checkout_git(w: &Where<'_>) -> Fingerprint {
    let mut f = Fingerprint::default();
    let mut budget = CHECKOUT_GIT_MAX;
    let skip = |rel: &str| OWN_LOGS.iter().any(|p| rel.starts_with(p)) || rel.starts_with("logs/refs/retry-run");
    for (name, path) in entries(w.common) {
        if !WATCHED_ELSEWHERE.contains(&name.as_str()) {
            walk(&mut f, &name, &path, 0, 8, &mut budget, &skip);
        }
    }
    if let Ok(rel) = w.git_dir.strip_prefix(w.common)
        && !rel.as_os_str().is_empty()
    {
        let prefix = rel.display().to_string();
        for (name, path) in entries(w.git_dir) {
            if !LINKED_WATCHED.contains(&name.as_str()) {
                walk(&mut f, &format!("{prefix}/{name}"), &path, 0, 8, &mut budget, &|_| false);
            }
        }
    }
    f
}

/// The record: every task's directory under `tasks/` (named relative to
/// the record, `tasks/t/attempts/1/attempt.json`), but what retry-run
/// writes while the attempt's step runs and the tasks a run holds (and
/// those of `held`, held at the mark). Also returns the tasks held now.
fn record(w: &Where<'_>, held: &BTreeSet<String>) -> (Fingerprint, BTreeSet<String>) {
    let mut f = Fingerprint::default();
    let mut budget = RECORD_MAX;
    let mut held_now = held.clone();
    let (own_top, own_lane) = match crate::model::refs::parse_lane(w.record) {
        Some(l) => (l.task.to_string(), Some(l.lane)),
        None => (w.record.to_string(), None),
    };
    let own_dir = format!("tasks/{}", w.record);
    let live = [
        format!("{own_dir}/events.jsonl"),
        format!("{own_dir}/lock"),
        format!("{own_dir}/baseline"),
        format!("{own_dir}/lanes"),
        format!("{own_dir}/choice"),
    ];
    // The attempt's own directory, which retry-run writes while the step
    // runs (its output, its checks', the TMPDIR, the quarantine): only what
    // retry-run wrote before it, what the agent was given.
    let attempt = format!("{own_dir}/attempts/{}/", w.attempt);
    let given = ["prompt.md", "context.json", "manifest.json"];
    let skip = |rel: &str| {
        rel.ends_with(".tmp")
            || live.iter().any(|l| rel == l || rel.strip_prefix(l.as_str()).is_some_and(|r| r.starts_with('/')))
            || rel.strip_prefix(attempt.as_str()).is_some_and(|r| !given.contains(&r))
            // A lane's task: the rest of its directory is the other lanes'
            // and the coordinator's.
            || (own_lane.is_some()
                && rel.starts_with(&format!("tasks/{own_top}/"))
                && !(rel == own_dir || rel.starts_with(&format!("{own_dir}/"))))
    };
    let tasks = w.store.root.join("tasks");
    for (name, path) in entries(&tasks) {
        if name != own_top && (held_now.contains(&name) || task_held(w.store, &name, &path)) {
            held_now.insert(name);
            continue;
        }
        walk(&mut f, &format!("tasks/{name}"), &path, 0, 10, &mut budget, &skip);
    }
    (f, held_now)
}

/// Whether a run holds task `name` (its lock, or a lane's).
fn task_held(store: &Store, name: &str, dir: &Path) -> bool {
    if store.running(name).is_some() {
        return true;
    }
    entries(&dir.join("lanes")).iter().any(|(lane, _)| store.running(&format!("{name}/lanes/{lane}")).is_some())
}

/// `$XDG_CACHE_HOME/retry-run` (else `~/.cache/retry-run`): every entry
/// by its stat data, named by its path.
fn cache() -> Fingerprint {
    let mut f = Fingerprint::default();
    let Some(root) = cache_root() else { return f };
    let mut budget = CACHE_MAX;
    let name = root.display().to_string();
    if std::fs::symlink_metadata(&root).is_ok() {
        walk(&mut f, &name, &root, 0, 8, &mut budget, &|_| false);
    }
    f
}

/// Where retry-run keeps its cache.
pub(super) fn cache_root() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("retry-run"))
}

/// This user's entries of `/dev/shm` and (with `w.tmp`) `/tmp`, and of
/// their directories one level down; retry-run's own directories left out.
fn shared_tmp(w: &Where<'_>) -> Fingerprint {
    let mut f = Fingerprint::default();
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut roots = vec![Path::new("/dev/shm")];
    if w.tmp {
        roots.push(Path::new("/tmp"));
    }
    for root in roots {
        let mut budget = SHARED_TMP_MAX;
        for (name, path) in entries(root).into_iter().take(SHARED_TMP_SCAN) {
            if budget == 0 {
                break;
            }
            let Ok(m) = std::fs::symlink_metadata(&path) else { continue };
            if m.uid() != me || crate::sandbox::launch::maker_of(&name).is_some() {
                continue;
            }
            budget -= 1;
            f.parts.insert(path.display().to_string(), Part { content: stat_text(&m), times: None });
            if m.is_dir() {
                for (_, inner) in entries(&path) {
                    if budget == 0 {
                        break;
                    }
                    if let Ok(im) = std::fs::symlink_metadata(&inner) {
                        budget -= 1;
                        f.parts.insert(inner.display().to_string(), Part { content: stat_text(&im), times: None });
                    }
                }
            }
        }
    }
    f
}

/// The entries of `dir` (name, path), sorted; none when it cannot be read.
fn entries(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<(String, PathBuf)> =
        rd.flatten().map(|e| (e.file_name().to_string_lossy().into_owned(), e.path())).collect();
    out.sort();
    out
}

/// An entry's stat data as text: a directory by its kind and mode alone
/// (what it holds is listed apart), anything else by its kind, mode, size,
/// inode and times (the status-change time, which no process sets back).
fn stat_text(m: &std::fs::Metadata) -> String {
    let mode = m.mode();
    if m.is_dir() {
        return format!("directory {mode:o}");
    }
    format!(
        "{mode:o} size {} inode {} mtime {}.{} ctime {}.{}",
        m.len(),
        m.ino(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec()
    )
}

/// `path` (named `name`) or, for a directory, what it holds, down to
/// `max_depth` levels and `budget` entries, never following a link (a
/// directory is not an entry of its own: what it holds is); names `skip`
/// says yes to left out, with what they hold.
fn walk(
    f: &mut Fingerprint,
    name: &str,
    path: &Path,
    depth: usize,
    max_depth: usize,
    budget: &mut usize,
    skip: &dyn Fn(&str) -> bool,
) {
    if *budget == 0 || skip(name) {
        return;
    }
    let Ok(m) = std::fs::symlink_metadata(path) else { return };
    *budget -= 1;
    if !m.is_dir() {
        f.parts.insert(name.to_string(), Part { content: stat_text(&m), times: None });
    } else if depth < max_depth {
        for (child, p) in entries(path) {
            walk(f, &format!("{name}/{child}"), &p, depth + 1, max_depth, budget, skip);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_remote_s_refs_moved_each_a_pushed_finding() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        let before: BTreeMap<String, String> =
            [("refs/heads/main".to_string(), a.clone()), ("refs/tags/v1".to_string(), a.clone())].into();
        let now: BTreeMap<String, String> =
            [("refs/heads/main".to_string(), b.clone()), ("refs/heads/evil".to_string(), b.clone())].into();
        let found: Vec<(String, String)> =
            pushes("origin", &before, &now).into_iter().map(|f| (f.path, f.rule.unwrap_or_default())).collect();
        assert_eq!(
            found,
            [
                ("origin:refs/heads/evil".to_string(), "created at bbbbbbb".to_string()),
                ("origin:refs/heads/main".to_string(), "moved aaaaaaa -> bbbbbbb".to_string()),
                ("origin:refs/tags/v1".to_string(), "deleted (was aaaaaaa)".to_string()),
            ]
        );
        assert!(pushes("origin", &before, &before).is_empty());
    }

    #[test]
    fn which_urls_are_on_this_machine() {
        let t = tempfile::tempdir().expect("tempdir");
        let bare = t.path().join("remote.git");
        for d in ["objects", "refs"] {
            std::fs::create_dir_all(bare.join(d)).expect("mkdir");
        }
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").expect("write");
        let wt = t.path().join("wt");
        std::fs::create_dir_all(&wt).expect("mkdir");
        let url = bare.display().to_string();
        assert_eq!(local_git_dir(&url, &wt, None), Some(bare.clone()));
        assert_eq!(local_git_dir(&format!("file://{url}"), &wt, None), Some(bare.clone()));
        assert_eq!(local_git_dir("../remote.git", &wt, None), Some(wt.join("../remote.git")));
        for network in ["git://host/x.git", "ssh://host/x", "host:x.git", "https://h/x.git"] {
            assert_eq!(local_git_dir(network, &wt, None), None, "{network}");
        }
        assert_eq!(local_git_dir("/nonexistent/x.git", &wt, None), None);
    }

    #[test]
    fn a_reflog_of_a_ref_named_elsewhere_is_not_named_again() {
        let moved = set(&["refs/heads/main", "refs/remotes/origin/main"]);
        assert!(reflog_of_moved("logs/refs/heads/main", &moved));
        assert!(reflog_of_moved("logs/refs/remotes/origin/main", &moved));
        assert!(reflog_of_moved("logs/HEAD", &moved), "HEAD moves with its branch");
        assert!(!reflog_of_moved("logs/refs/heads/other", &moved));
        assert!(!reflog_of_moved("logs/HEAD", &set(&["refs/tags/v1"])));
        assert!(!reflog_of_moved("ORIG_HEAD", &moved));
    }

    #[test]
    fn a_tracking_ref_moved_by_push_is_a_push() {
        let t = tempfile::tempdir().expect("tempdir");
        let logs = t.path().join("logs/refs/remotes/origin");
        std::fs::create_dir_all(&logs).expect("mkdir");
        let line = |msg: &str| format!("{} {} A <a@b> 1700000000 +0000\t{msg}\n", "0".repeat(40), "1".repeat(40));
        std::fs::write(logs.join("main"), line("update by push")).expect("write");
        std::fs::write(logs.join("other"), format!("{}{}", line("update by push"), line("fetch: fast-forward")))
            .expect("write");
        let internal =
            |p: &str| ScopeFinding { path: p.into(), old_path: None, reason: ScopeReason::GitInternal, rule: None };
        let mut found =
            vec![internal("refs/remotes/origin/main"), internal("refs/remotes/origin/other"), internal("config")];
        pushes_by_tracking(t.path(), &mut found);
        let got: Vec<(&str, ScopeReason)> = found.iter().map(|f| (f.path.as_str(), f.reason)).collect();
        assert_eq!(
            got,
            [
                ("origin:refs/heads/main", ScopeReason::Pushed),
                ("refs/remotes/origin/other", ScopeReason::GitInternal),
                ("config", ScopeReason::GitInternal)
            ]
        );
        // Named already by the remote read itself: not twice.
        let mut found = vec![
            ScopeFinding {
                rule: Some("moved".into()),
                reason: ScopeReason::Pushed,
                ..internal("origin:refs/heads/main")
            },
            internal("refs/remotes/origin/main"),
        ];
        pushes_by_tracking(t.path(), &mut found);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule.as_deref(), Some("moved"));
    }

    #[test]
    fn a_lock_that_goes_away_by_itself_is_not_one() {
        use crate::model::InternalChange;
        let c = |part: &str, change| InternalChange { part: part.into(), change };
        let changes = vec![
            c("index.lock", PartChange::Added),
            c("HEAD.lock", PartChange::Added),
            c("packed-refs.lock", PartChange::Removed),
            c("ORIG_HEAD", PartChange::Added),
        ];
        let mut later = Fingerprint::default();
        later.parts.insert("index.lock".into(), Part { content: "x".into(), times: None });
        let kept: Vec<String> = settled(changes, || later).into_iter().map(|c| c.part).collect();
        assert_eq!(kept, ["index.lock", "ORIG_HEAD"]);
    }
}
