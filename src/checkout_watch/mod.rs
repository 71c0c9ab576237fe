//! What an attempt must never change outside its worktree, watched from
//! outside the sandbox, in every sandbox mode (the files with inotify, the
//! git state through [`Repo`]'s reads, the machinery by copies):
//!
//! - the user's own checkout: its HEAD, branches and tags (but retry-run's
//!   own `retry-run/<task>` branches) and its index ([`GitState`]), and
//!   every file git tracks or does not ignore: watched with inotify from the start of
//!   the run ([`CheckoutWatch`]), so an attempt costs no walk of the
//!   checkout; where inotify cannot watch it (more directories than the
//!   user's inotify limit, no watches left, not Linux), the stat data of
//!   every such file is compared instead ([`CheckoutState`]);
//! - the repository's git machinery shared by every worktree: `config`,
//!   `config.worktree`, `hooks/` and `info/`, copied before an attempt and
//!   put back after it when the attempt changed them ([`Machinery`]).
//!
//! [`whole_run`] keeps the watch for a whole `run`: started on a thread of
//! its own when the run begins, retired when the run no longer needs it.

pub(crate) mod whole_run;

use std::collections::{BTreeMap, HashMap};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::git::Repo;

/// The stat data that tells a file changed: size, times, inode, mode.
type Stat = (u64, i64, i64, i64, i64, u64, u32);

fn stat_of(m: &std::fs::Metadata) -> Stat {
    (m.size(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.ino(), m.mode())
}

/// [`Stat`] from `statat`'s data (its field types differ between rustix's
/// backends, hence the casts).
#[allow(clippy::unnecessary_cast)]
fn stat_of_raw(st: &rustix::fs::Stat) -> Stat {
    (
        st.st_size as u64,
        st.st_mtime as i64,
        st.st_mtime_nsec as i64,
        st.st_ctime as i64,
        st.st_ctime_nsec as i64,
        st.st_ino as u64,
        st.st_mode as u32,
    )
}

/// The stat data of every entry of `dir` but its directories into
/// `files`, by path relative to `root`: the directory opened once, each
/// name stat'ed relative to it (no path looked up from `/` per file).
fn read_directory(root: &Path, dir: &Path, files: &mut HashMap<PathBuf, Stat>) {
    use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(dir, flags, Mode::empty()) else { return };
    let Ok(mut entries) = Dir::read_from(&fd) else { return };
    let rel = dir.strip_prefix(root).unwrap_or(Path::new(""));
    while let Some(Ok(e)) = entries.read() {
        let name = e.file_name();
        let bytes = name.to_bytes();
        if bytes == b"." || bytes == b".." || e.file_type() == FileType::Directory {
            continue;
        }
        let Ok(st) = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW) else { continue };
        if FileType::from_raw_mode(st.st_mode) != FileType::Directory {
            files.insert(rel.join(std::ffi::OsStr::from_bytes(bytes)), stat_of_raw(&st));
        }
    }
}

/// A walk of the checkout at `root` on both cores, by git's ignore rules,
/// leaving out `.git` and `skip`.
fn walk(root: &Path, skip: &Path) -> ::ignore::WalkParallel {
    let skip = skip.to_path_buf();
    ::ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .git_global(true)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .ignore(false)
        .threads(2)
        .filter_entry(move |e| e.file_name() != ".git" && e.path() != skip)
        .build_parallel()
}

/// The directories of the checkout at `root` that hold tracked files or
/// that git does not ignore, but `.git` and `skip`, listed from the index
/// and the directories themselves ([`Repo::watched_directories`]); `None`
/// where the index cannot be read that way.
fn listed_directories(root: &Path, skip: &Path) -> Option<Vec<PathBuf>> {
    Repo::discover(root).ok().and_then(|r| r.watched_directories(skip).ok().flatten())
}

/// The directories of the checkout at `root` git does not ignore, but
/// `.git` and `skip`, by a walk with git's ignore rules.
fn walked_directories(root: &Path, skip: &Path) -> Vec<PathBuf> {
    let dirs = Mutex::new(Vec::new());
    walk(root, skip).run(|| {
        let dirs = &dirs;
        Box::new(move |entry| {
            if let Ok(e) = entry
                && e.file_type().is_some_and(|t| t.is_dir())
                && let Ok(mut d) = dirs.lock()
            {
                d.push(e.into_path());
            }
            ::ignore::WalkState::Continue
        })
    });
    dirs.into_inner().unwrap_or_default()
}

/// The stat data of every file of the user's checkout git does not ignore
/// (the fallback where inotify cannot watch it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CheckoutState {
    files: HashMap<PathBuf, Stat>,
}

impl CheckoutState {
    /// Reads the checkout at `root`, leaving out `.git` and `skip` (a
    /// worktree root inside it): the files of every directory
    /// [`listed_directories`] names, half of them on another thread (as
    /// git refreshes its index's stat data on several).
    pub(crate) fn read(root: &Path, skip: &Path) -> CheckoutState {
        let Some(dirs) = listed_directories(root, skip) else { return CheckoutState::walked(root, skip) };
        let read = |dirs: &[PathBuf]| {
            let mut files = HashMap::new();
            for dir in dirs {
                read_directory(root, dir, &mut files);
            }
            files
        };
        let (first, second) = dirs.split_at(dirs.len() / 2);
        let (mut files, other) = std::thread::scope(|s| {
            let other = s.spawn(|| read(second));
            let files = read(first);
            (files, other.join())
        });
        match other {
            Ok(other) => files.extend(other),
            // The thread panicked: read its half here.
            Err(_) => files.extend(read(second)),
        }
        CheckoutState { files }
    }

    /// [`CheckoutState::read`] by a walk with git's ignore rules, on both
    /// cores, where the directories cannot be listed from the index.
    fn walked(root: &Path, skip: &Path) -> CheckoutState {
        let files = Mutex::new(HashMap::new());
        let root = root.to_path_buf();
        walk(&root, skip).run(|| {
            let files = &files;
            let root = &root;
            Box::new(move |entry| {
                if let Ok(e) = entry
                    && e.depth() > 0
                    && let Ok(m) = e.path().symlink_metadata()
                    && !m.is_dir()
                    && let Ok(rel) = e.path().strip_prefix(root)
                    && let Ok(mut f) = files.lock()
                {
                    f.insert(rel.to_path_buf(), stat_of(&m));
                }
                ::ignore::WalkState::Continue
            })
        });
        CheckoutState { files: files.into_inner().unwrap_or_default() }
    }

    /// The files added, removed or changed since `before`. Pure.
    pub(crate) fn changed_since(&self, before: &CheckoutState) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for (p, s) in &self.files {
            if before.files.get(p) != Some(s) {
                out.push(p.clone());
            }
        }
        out.extend(before.files.keys().filter(|p| !self.files.contains_key(*p)).cloned());
        out.sort();
        out
    }
}

/// Everything of the user's checkout an attempt must not change, watched
/// in windows: [`Outside::mark`] opens one, [`Outside::changes`] closes it
/// and names what changed in it.
pub(crate) struct Outside {
    root: Option<PathBuf>,
    skip: PathBuf,
    #[cfg(target_os = "linux")]
    inotify: Option<CheckoutWatch>,
    stat: Option<CheckoutState>,
    git: GitState,
    /// Why inotify is not used, when it is not.
    pub fallback: Option<String>,
    /// How long setting up the watch took.
    pub setup: std::time::Duration,
}

impl Outside {
    /// Starts watching the checkout of `root` (`None`: a bare repository),
    /// leaving out `skip`: with inotify where it can, else by stat data
    /// (also when `RETRY_RUN_WATCH=stat` asks for it).
    pub(crate) fn start(root: Option<&Path>, skip: &Path) -> Outside {
        let started = std::time::Instant::now();
        let mut o = Outside {
            setup: std::time::Duration::ZERO,
            root: root.map(Path::to_path_buf),
            skip: skip.to_path_buf(),
            #[cfg(target_os = "linux")]
            inotify: None,
            stat: None,
            git: GitState::default(),
            fallback: None,
        };
        let forced = std::env::var("RETRY_RUN_WATCH").is_ok_and(|v| v == "stat");
        if forced {
            o.fallback = Some("RETRY_RUN_WATCH=stat asks for it".into());
            return o;
        }
        #[cfg(target_os = "linux")]
        if let Some(r) = root {
            match CheckoutWatch::start(r, skip) {
                Ok(w) => o.inotify = Some(w),
                Err(e) => o.fallback = Some(e.to_string()),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            o.fallback = Some("inotify needs Linux".into());
        }
        o.setup = started.elapsed();
        o
    }

    /// Opens a window: what happened before it is not the attempt's.
    pub(crate) fn mark(&mut self, repo: &Repo) {
        self.git = GitState::read(repo);
        #[cfg(target_os = "linux")]
        if let Some(w) = &mut self.inotify {
            let _ = w.drain();
            return;
        }
        if let Some(r) = &self.root {
            self.stat = Some(CheckoutState::read(r, &self.skip));
        }
    }

    /// Closes the window: the paths of the checkout (relative to it) and
    /// its git state (`.git/HEAD`, `refs/heads/x`) changed in it, ignored
    /// files left out. Opens the next window at once.
    pub(crate) fn changes(&mut self, repo: &Repo) -> Vec<String> {
        let git = GitState::read(repo);
        let mut out = git.changed_since(&self.git);
        self.git = git;
        let mut files: Vec<PathBuf> = Vec::new();
        #[cfg(target_os = "linux")]
        let watched = if let Some(w) = &mut self.inotify {
            match w.drain() {
                Some(paths) => files = paths,
                None => out.push("(the checkout: more changes than inotify could name)".into()),
            }
            true
        } else {
            false
        };
        #[cfg(not(target_os = "linux"))]
        let watched = false;
        if !watched && let (Some(r), Some(before)) = (&self.root, &self.stat) {
            let now = CheckoutState::read(r, &self.skip);
            files = now.changed_since(before);
            self.stat = Some(now);
        }
        for f in files {
            if f.as_os_str().is_empty() {
                out.push(".".into());
            } else if !repo.ignores_changes_to(&f) {
                out.push(f.display().to_string());
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// HEAD, the index's stat data, and every branch and tag but retry-run's
/// own: the git state of the user's checkout. Cheap: a few files and refs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GitState {
    parts: BTreeMap<String, String>,
}

impl GitState {
    pub(crate) fn read(repo: &Repo) -> GitState {
        let mut git = BTreeMap::new();
        let dir = repo.git_dir();
        git.insert("HEAD".to_string(), std::fs::read_to_string(dir.join("HEAD")).unwrap_or_default());
        if let Ok(m) = std::fs::symlink_metadata(dir.join("index")) {
            git.insert("index".to_string(), format!("{:?}", stat_of(&m)));
        }
        for (name, target) in repo.branches_and_tags() {
            // `retry-run/<task>` branches are retry-run's own (another task
            // may finish meanwhile); every other branch and tag is the user's.
            if !name.starts_with("refs/heads/retry-run/") {
                git.insert(name, target);
            }
        }
        GitState { parts: git }
    }

    /// `.git/HEAD`, `.git/index`, `refs/heads/x`: what changed since `before`. Pure.
    pub(crate) fn changed_since(&self, before: &GitState) -> Vec<String> {
        let names = |k: &String| if k.starts_with("refs/") { k.clone() } else { format!(".git/{k}") };
        let mut out: Vec<String> = Vec::new();
        for (k, v) in &self.parts {
            if before.parts.get(k) != Some(v) {
                out.push(names(k));
            }
        }
        for k in before.parts.keys() {
            if !self.parts.contains_key(k) {
                out.push(names(k));
            }
        }
        out
    }
}

/// The files of the user's checkout, watched with inotify: one watch per
/// directory git does not ignore, set up once for the whole run.
#[cfg(target_os = "linux")]
pub(crate) struct CheckoutWatch {
    fd: std::os::fd::OwnedFd,
    /// Watch descriptor → the directory, relative to the checkout.
    dirs: HashMap<i32, PathBuf>,
    root: PathBuf,
}

/// inotify's limit on the watches of this user: the lower of the
/// machine's (`fs.inotify.max_user_watches`) and the user namespace's own
/// (`user.max_inotify_watches`), with the sysctl that sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WatchLimit {
    pub watches: u64,
    pub sysctl: &'static str,
}

impl WatchLimit {
    /// Reads the limit from `/proc/sys`; `None` where neither file reads.
    fn read() -> Option<WatchLimit> {
        let read = |path: &str, sysctl: &'static str| {
            let watches = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
            Some(WatchLimit { watches, sysctl })
        };
        [
            read("/proc/sys/fs/inotify/max_user_watches", "fs.inotify.max_user_watches"),
            read("/proc/sys/user/max_inotify_watches", "user.max_inotify_watches"),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|l| l.watches)
    }

    /// A value to raise it to that leaves the user's other programs the
    /// watches they have now: the limit plus `dirs`, rounded up to 1,024.
    /// Pure.
    pub(crate) fn raised_for(&self, dirs: usize) -> u64 {
        (self.watches + dirs as u64).div_ceil(1024) * 1024
    }
}

/// Why the checkout cannot be watched (the caller falls back to comparing
/// stat data, and says why).
#[derive(Debug, thiserror::Error)]
pub(crate) enum WatchError {
    #[error("inotify: {source}")]
    Init { source: std::io::Error },
    /// More directories than inotify allows watches: none is tried, so the
    /// user's other programs keep theirs.
    #[error(
        "your checkout has {dirs} directories to watch, more than inotify's limit of {} watches ({}); \
         raise it with `sysctl -w {}={}`",
        .limit.watches, .limit.sysctl, .limit.sysctl, raised(.limit, .dirs)
    )]
    TooMany { dirs: usize, limit: WatchLimit },
    /// The kernel refused a watch for want of watches: other programs of
    /// the user hold the rest.
    #[error(
        "inotify ran out of watches after {watched} of your checkout's {dirs} directories \
         (its limit of {} watches, {}, counts every program of this user); raise it with `sysctl -w {}={}`",
        .limit.watches, .limit.sysctl, .limit.sysctl, raised(.limit, .dirs)
    )]
    Exhausted { watched: usize, dirs: usize, limit: WatchLimit },
    /// The kernel refused a watch for another reason.
    #[error("inotify cannot watch {}: {source}", dir.display())]
    Watch { dir: PathBuf, source: std::io::Error },
}

fn raised(limit: &WatchLimit, dirs: &usize) -> u64 {
    limit.raised_for(*dirs)
}

/// Whether `dirs` directories can be watched under `limit`: `Err` names
/// both where there are more than the limit allows. Pure.
pub(crate) fn fits(dirs: usize, limit: Option<WatchLimit>) -> Result<(), WatchError> {
    match limit {
        Some(limit) if dirs as u64 > limit.watches => Err(WatchError::TooMany { dirs, limit }),
        _ => Ok(()),
    }
}

#[cfg(target_os = "linux")]
impl CheckoutWatch {
    /// Watches every directory of the checkout at `root` that holds tracked
    /// files or that git does not ignore, but `.git` and `skip`: listed
    /// from the index and the directories themselves
    /// ([`Repo::watched_directories`]), or, where the index cannot be read
    /// that way, by a walk with git's ignore rules. `Err` says why it
    /// cannot (the caller falls back to comparing stat data).
    pub(crate) fn start(root: &Path, skip: &Path) -> Result<CheckoutWatch, WatchError> {
        use rustix::fs::inotify;
        let fd = inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC)
            .map_err(|e| WatchError::Init { source: e.into() })?;
        let dirs = listed_directories(root, skip).unwrap_or_else(|| walked_directories(root, skip));
        let limit = WatchLimit::read();
        fits(dirs.len(), limit)?;
        let mut watch = CheckoutWatch { fd, dirs: HashMap::with_capacity(dirs.len()), root: root.to_path_buf() };
        for (watched, dir) in dirs.iter().enumerate() {
            match (watch.add(dir), limit) {
                (Ok(()), _) => {}
                (Err(rustix::io::Errno::NOSPC), Some(limit)) => {
                    return Err(WatchError::Exhausted { watched, dirs: dirs.len(), limit });
                }
                (Err(e), _) => return Err(WatchError::Watch { dir: dir.clone(), source: e.into() }),
            }
        }
        Ok(watch)
    }

    /// Watches `dir`; `Err` when the kernel refuses (`NOSPC`: no watches left).
    fn add(&mut self, dir: &Path) -> Result<(), rustix::io::Errno> {
        use rustix::fs::inotify::{self, WatchFlags};
        let mask = WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::DONT_FOLLOW
            | WatchFlags::ONLYDIR;
        let wd = inotify::add_watch(&self.fd, dir, mask)?;
        let rel = dir.strip_prefix(&self.root).unwrap_or(Path::new("")).to_path_buf();
        self.dirs.insert(wd, rel);
        Ok(())
    }

    /// The paths (relative to the checkout) written, created, removed,
    /// renamed or chmodded since the last call; `None` when the kernel's
    /// queue overflowed and the paths are lost.
    pub(crate) fn drain(&mut self) -> Option<Vec<PathBuf>> {
        use rustix::fs::inotify::{ReadFlags, Reader};
        let mut out = Vec::new();
        let mut overflow = false;
        let mut buf = vec![std::mem::MaybeUninit::<u8>::uninit(); 64 * 1024];
        let mut events = Reader::new(&self.fd, &mut buf);
        // Until the queue is empty: the descriptor does not block, so an
        // empty queue is an error (EAGAIN), as is one that cannot be read.
        while let Ok(ev) = events.next() {
            if ev.events().contains(ReadFlags::QUEUE_OVERFLOW) {
                overflow = true;
                continue;
            }
            if ev.events().contains(ReadFlags::IGNORED) {
                continue;
            }
            let Some(dir) = self.dirs.get(&ev.wd()) else { continue };
            let name = ev.file_name().map_or(&b""[..], |n| n.to_bytes());
            out.push(if name.is_empty() { dir.clone() } else { dir.join(std::ffi::OsStr::from_bytes(name)) });
        }
        if overflow {
            return None;
        }
        out.sort();
        out.dedup();
        Some(out)
    }
}

/// One file of the machinery: its mode and bytes (a symlink's target).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Saved {
    mode: u32,
    link: bool,
    bytes: Vec<u8>,
}

/// A copy of `config`, `config.worktree`, `hooks/**` and `info/**` of the
/// common git directory.
#[derive(Debug, Clone, Default)]
pub(crate) struct Machinery {
    files: BTreeMap<String, Saved>,
}

const MACHINERY: [&str; 4] = ["config", "config.worktree", "hooks", "info"];

impl Machinery {
    pub(crate) fn take(common: &Path) -> Machinery {
        let mut m = Machinery::default();
        for name in MACHINERY {
            save(&mut m.files, common, name);
        }
        m
    }

    /// Puts back what changed since `self` was taken: changed and removed
    /// files written again, added ones removed. Returns what it restored
    /// (`config`, `hooks/pre-commit`), and what it could not, with why.
    pub(crate) fn restore(&self, common: &Path) -> Restored {
        let now = Machinery::take(common);
        let (mut done, mut failed) = (Vec::new(), Vec::new());
        for (name, saved) in &self.files {
            if now.files.get(name) == Some(saved) {
                continue;
            }
            let path = common.join(name);
            let r = (|| -> std::io::Result<()> {
                if let Ok(m) = std::fs::symlink_metadata(&path)
                    && (m.is_dir() || m.file_type().is_symlink() || saved.link)
                {
                    if m.is_dir() {
                        std::fs::remove_dir_all(&path)?;
                    } else {
                        std::fs::remove_file(&path)?;
                    }
                }
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                if saved.link {
                    std::os::unix::fs::symlink(String::from_utf8_lossy(&saved.bytes).as_ref(), &path)?;
                } else {
                    std::fs::write(&path, &saved.bytes)?;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(saved.mode & 0o7777))?;
                }
                Ok(())
            })();
            match r {
                Ok(()) => done.push(name.clone()),
                Err(e) => failed.push(format!("{name}: {e}")),
            }
        }
        for name in now.files.keys().filter(|n| !self.files.contains_key(*n)) {
            match std::fs::remove_file(common.join(name)) {
                Ok(()) => done.push(name.clone()),
                Err(e) => failed.push(format!("{name}: {e}")),
            }
        }
        done.sort();
        Restored { done, failed }
    }
}

/// What [`Machinery::restore`] put back, and what it could not, with why.
pub(crate) struct Restored {
    pub(crate) done: Vec<String>,
    pub(crate) failed: Vec<String>,
}

fn save(files: &mut BTreeMap<String, Saved>, common: &Path, name: &str) {
    let path = common.join(name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else { return };
    if meta.is_dir() {
        let Ok(rd) = std::fs::read_dir(&path) else { return };
        for e in rd.flatten() {
            save(files, common, &format!("{name}/{}", e.file_name().to_string_lossy()));
        }
    } else if meta.file_type().is_symlink() {
        let target =
            std::fs::read_link(&path).map(|t| t.as_os_str().to_string_lossy().into_owned()).unwrap_or_default();
        files.insert(
            name.to_string(),
            Saved { mode: meta.permissions().mode(), link: true, bytes: target.into_bytes() },
        );
    } else if let Ok(bytes) = std::fs::read(&path) {
        files.insert(name.to_string(), Saved { mode: meta.permissions().mode(), link: false, bytes });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_fits_inotify_up_to_its_limit_and_the_message_says_how_to_raise_it() {
        let limit = |watches| Some(WatchLimit { watches, sysctl: "fs.inotify.max_user_watches" });
        // (directories, limit, refused)
        let cases = [(0, limit(0), false), (10, limit(10), false), (11, limit(10), true), (4_000, None, false)];
        for (dirs, limit, refused) in cases {
            assert_eq!(fits(dirs, limit).is_err(), refused, "{dirs} directories, limit {limit:?}");
        }
        let Err(e) = fits(4_012, limit(1_000)) else { panic!("4,012 directories fit 1,000 watches") };
        assert_eq!(
            e.to_string(),
            "your checkout has 4012 directories to watch, more than inotify's limit of 1000 watches \
             (fs.inotify.max_user_watches); raise it with `sysctl -w fs.inotify.max_user_watches=5120`"
        );
        let l = WatchLimit { watches: 192_536, sysctl: "user.max_inotify_watches" };
        assert_eq!(l.raised_for(4_012), 196_608);
        assert_eq!(
            WatchError::Exhausted { watched: 100, dirs: 4_012, limit: l }.to_string(),
            "inotify ran out of watches after 100 of your checkout's 4012 directories (its limit of 192536 \
             watches, user.max_inotify_watches, counts every program of this user); raise it with \
             `sysctl -w user.max_inotify_watches=196608`"
        );
    }

    #[test]
    fn changes_are_named_once() {
        let mut before = CheckoutState::default();
        before.files.insert("a.txt".into(), (1, 0, 0, 0, 0, 1, 0o100644));
        before.files.insert("gone.txt".into(), (1, 0, 0, 0, 0, 2, 0o100644));
        let mut after = before.clone();
        after.files.insert("a.txt".into(), (2, 0, 0, 0, 0, 1, 0o100644));
        after.files.remove(Path::new("gone.txt"));
        after.files.insert("new.txt".into(), (1, 0, 0, 0, 0, 3, 0o100644));
        let names: Vec<String> = after.changed_since(&before).iter().map(|p| p.display().to_string()).collect();
        assert_eq!(names, ["a.txt", "gone.txt", "new.txt"]);
        assert!(before.changed_since(&before.clone()).is_empty());
        let mut g0 = GitState::default();
        g0.parts.insert("refs/heads/main".into(), "abc".into());
        g0.parts.insert("HEAD".into(), "ref: refs/heads/main\n".into());
        let mut g1 = g0.clone();
        g1.parts.insert("refs/heads/evil".into(), "def".into());
        g1.parts.insert("HEAD".into(), "ref: refs/heads/evil\n".into());
        assert_eq!(g1.changed_since(&g0), [".git/HEAD", "refs/heads/evil"]);
    }
}
