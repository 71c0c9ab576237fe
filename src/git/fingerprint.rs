//! The repository's internals an attempt must not change, read before and
//! after it: [`fingerprint`] collects them (a few hundred files read, the
//! rest only listed and stat'ed), [`Fingerprint::compare`] names each change
//! (pure). What the changes mean is `crate::outcome::internals`; in the loop
//! each one is a `git-internal` scope finding or an added object.
//!
//! The parts, named as they are reported:
//!
//! - the machinery: `config`, `config.worktree`, `hooks/**`, `info/**`,
//!   `shallow`, and the config and hooks of submodules' repositories
//!   (`modules/<name>/config`, `modules/<name>/hooks/**`): their bytes;
//! - the refs as git reads them, loose (`refs/**`) over `packed-refs`, by
//!   name (`refs/heads/main`, `refs/stash`), and the main `HEAD`: what they
//!   point at (a loose ref that is neither a file nor a link, a FIFO, by
//!   its kind, never opened; each read beside its directory). retry-run's own refs of other tasks (`refs/retry-run/*`,
//!   `refs/heads/retry-run/*`, `refs/retry-run-remotes/*`) and this task's
//!   lease are left out: they move under `run -j` and `--remote`;
//! - the object store: `objects/info/**` (`alternates`, `commit-graph`, ...)
//!   by bytes (by size, last bytes and mtime above 64 KiB), every file of
//!   `objects/pack/` by name, size and its last 64 bytes (the checksums git
//!   ends a pack, an index, a reverse index, a bitmap and a multi-pack index
//!   with), never by its times or link count, which another clone that
//!   hard-links the packs changes (`.keep` files, which `git fetch` writes
//!   and removes, are left out; a `.pack`'s mtime is kept apart, to report
//!   the packs git freshened), every loose object by name, size and
//!   inode (`objects/1a/2b3c...`): a loose object deleted, written again or
//!   replaced by one of another size, or added, is seen without reading it
//!   (one `stat` each, relative to its fan-out directory, the directories
//!   shared among two threads; git packs them once there are more than
//!   `gc.auto`, 6,700 by default);
//! - the other linked worktrees' links (`worktrees/<id>/gitdir`,
//!   `commondir`, `config.worktree`, `locked`) and their `HEAD` and private
//!   `refs/**` (other tasks' worktrees, `worktrees/retry-run-*`, are left
//!   out: their own runs write them and put their links back);
//! - for the task's worktree: its `.git` file (`worktree/.git`) and its
//!   administrative directory's links (`worktree-admin/gitdir`,
//!   `commondir`, `config.worktree`); its `HEAD`, index and logs are the
//!   agent's to write.

use std::collections::BTreeMap;
use std::ffi::{CStr, CString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

use crate::hash::sha256_hex;
use crate::model::{InternalChange, PartChange};

/// One part: what it holds, and when it was written where its bytes are
/// not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// A hash of its mode and bytes, its size (`size 1234`), or what a ref
    /// points at.
    pub content: String,
    /// Its mtime (seconds, nanoseconds; the last two always 0) where it is
    /// known by its size and last bytes: a `.pack` (git freshens it by its
    /// mtime), a file of `objects/info/` above 64 KiB.
    pub times: Option<[i64; 4]>,
}

/// Each part, by name (`config`, `hooks/pre-commit`, `refs/heads/main`,
/// `objects/pack/pack-1a2b.pack`, `worktree/.git`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint {
    pub parts: BTreeMap<String, Part>,
}

/// The task whose worktree and refs are watched with the repository's.
#[derive(Debug, Clone, Copy)]
pub struct TaskParts<'a> {
    /// The task's id (`refs/retry-run/<id>/` are its refs).
    pub id: &'a str,
    /// Its worktree.
    pub worktree: &'a Path,
    /// Its administrative directory (`<common>/worktrees/retry-run-<id>`).
    pub admin: &'a Path,
}

/// Files above this size are known by their size, last bytes and mtime,
/// not all their bytes.
const READ_MAX: u64 = 64 * 1024;

impl Fingerprint {
    /// One hash over every part.
    pub fn digest(&self) -> String {
        let all: String = self.parts.iter().map(|(k, v)| format!("{k}\0{}\0{:?}\n", v.content, v.times)).collect();
        sha256_hex(all.as_bytes())
    }

    /// Each part added, removed, changed or touched since `before`, by
    /// name. Pure.
    pub fn compare(&self, before: &Fingerprint) -> Vec<InternalChange> {
        use std::cmp::Ordering;
        let mut out: Vec<InternalChange> = Vec::new();
        let change = |part: &String, change| InternalChange { part: part.clone(), change };
        // Both maps walked once side by side, in their names' order.
        let (mut now, mut was) = (self.parts.iter().peekable(), before.parts.iter().peekable());
        loop {
            let order = match (now.peek(), was.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((a, _)), Some((b, _))) => a.cmp(b),
            };
            match order {
                Ordering::Less => {
                    if let Some((name, _)) = now.next() {
                        out.push(change(name, PartChange::Added));
                    }
                }
                Ordering::Greater => {
                    if let Some((name, _)) = was.next() {
                        out.push(change(name, PartChange::Removed));
                    }
                }
                Ordering::Equal => {
                    if let (Some((name, a)), Some((_, b))) = (now.next(), was.next()) {
                        if a.content != b.content {
                            out.push(change(name, PartChange::Changed));
                        } else if a.times != b.times {
                            out.push(change(name, PartChange::Touched));
                        }
                    }
                }
            }
        }
        out.sort();
        out
    }

    /// The names of the parts added, removed, changed or touched since
    /// `before`. Pure.
    pub fn changed_since(&self, before: &Fingerprint) -> Vec<String> {
        let mut names: Vec<String> = self.compare(before).into_iter().map(|c| c.part).collect();
        names.sort();
        names.dedup();
        names
    }

    fn bytes(&mut self, name: &str, path: &Path) {
        if let Some(p) = read_part(path) {
            self.parts.insert(name.to_string(), p);
        }
    }

    fn tree(&mut self, name: &str, dir: &Path) {
        let Ok(meta) = std::fs::symlink_metadata(dir) else { return };
        if !meta.is_dir() {
            self.bytes(name, dir);
            return;
        }
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let child = format!("{name}/{}", e.file_name().to_string_lossy());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                self.tree(&child, &e.path());
            } else {
                self.bytes(&child, &e.path());
            }
        }
    }
}

/// Fingerprints the repository's internals under `common` (its common git
/// directory), and with `task`, that task's worktree links and refs.
pub fn fingerprint(common: &Path, task: Option<&TaskParts<'_>>) -> Fingerprint {
    let mut f = Fingerprint::default();
    for name in ["config", "config.worktree", "HEAD", "shallow"] {
        f.bytes(name, &common.join(name));
    }
    f.tree("hooks", &common.join("hooks"));
    f.tree("info", &common.join("info"));
    modules(&mut f, "modules", &common.join("modules"), 0);
    refs(&mut f, common, task.map(|t| t.id));
    objects(&mut f, &common.join("objects"));
    let own = task.and_then(|t| t.admin.file_name()).map(|n| n.to_string_lossy().into_owned());
    other_worktrees(&mut f, &common.join("worktrees"), own.as_deref());
    if let Some(t) = task {
        f.bytes("worktree/.git", &t.worktree.join(".git"));
        for name in ["gitdir", "commondir", "config.worktree"] {
            f.bytes(&format!("worktree-admin/{name}"), &t.admin.join(name));
        }
    }
    f
}

/// A file's mode and bytes (a symlink's target) hashed, or, above
/// [`READ_MAX`], its size, last bytes and mtime ([`pack_part`]).
fn read_part(path: &Path) -> Option<Part> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.is_dir() {
        return Some(Part { content: format!("directory {:o}", meta.permissions().mode()), times: None });
    }
    if meta.is_file() && meta.len() > READ_MAX {
        // Not by its ctime: a local clone hard-links `objects/info/` too.
        return Some(pack_part(path, &meta, true));
    }
    let content = if meta.file_type().is_symlink() {
        std::fs::read_link(path).map(|t| t.as_os_str().to_string_lossy().into_owned().into_bytes()).unwrap_or_default()
    } else if meta.is_file() {
        // Opened without following a link and without waiting on a FIFO
        // swapped in since the look above; read only if still a file.
        use std::io::Read as _;
        use std::os::unix::fs::OpenOptionsExt;
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.is_file()));
        let mut bytes = Vec::new();
        if let Some(f) = opened {
            let _ = f.take(READ_MAX).read_to_end(&mut bytes);
        }
        bytes
    } else {
        // A FIFO, socket or device: never opened, known by its kind.
        format!("kind {:o}", meta.permissions().mode()).into_bytes()
    };
    let mut bytes = format!("{:o}\0", meta.permissions().mode()).into_bytes();
    bytes.extend_from_slice(&content);
    Some(Part { content: sha256_hex(&bytes), times: None })
}

/// How many bytes of a pack file's end [`pack_part`] reads: its trailing
/// checksums (two SHA-256 ones at most).
const PACK_TAIL: u64 = 64;

/// A file of `objects/pack/`, immutable by its name: its size and a hash of
/// its last [`PACK_TAIL`] bytes; with `mtime`, the mtime alone as its
/// times (git freshens a pack by it), never the ctime, which a hard link
/// made by another clone moves.
fn pack_part(path: &Path, meta: &std::fs::Metadata, mtime: bool) -> Part {
    use std::io::{Read, Seek, SeekFrom};
    let mut tail = Vec::new();
    if let Ok(mut file) = std::fs::File::open(path) {
        let from = meta.size().saturating_sub(PACK_TAIL);
        if file.seek(SeekFrom::Start(from)).is_ok() {
            let _ = file.take(PACK_TAIL).read_to_end(&mut tail);
        }
    }
    Part {
        content: format!("size {} tail {}", meta.size(), &sha256_hex(&tail)[..16]),
        times: mtime.then(|| [meta.mtime(), meta.mtime_nsec(), 0, 0]),
    }
}

/// The packs' indexes of a repository, held open from a fingerprint on:
/// when a pack is removed meanwhile, its index still says which objects it
/// held (`git repack` moves them to a new pack; [`removed_pack_objects`]).
#[derive(Debug, Default)]
pub struct KeptIndexes {
    /// By pack name (`pack-1a2b...`).
    files: BTreeMap<String, std::fs::File>,
}

/// How many indexes [`keep_indexes`] holds open at most.
const KEPT_MAX: usize = 512;

/// Opens every `objects/pack/pack-*.idx` under `common` (up to
/// [`KEPT_MAX`]).
pub fn keep_indexes(common: &Path) -> KeptIndexes {
    let mut kept = KeptIndexes::default();
    let Ok(rd) = std::fs::read_dir(common.join("objects").join("pack")) else { return kept };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pack) = name.strip_suffix(".idx").filter(|p| p.starts_with("pack-")) else { continue };
        if kept.files.len() >= KEPT_MAX {
            break;
        }
        if let Ok(file) = std::fs::File::open(e.path()) {
            kept.files.insert(pack.to_string(), file);
        }
    }
    kept
}

/// The ids (hex) of the objects the pack `pack` (`pack-1a2b...`) held, read
/// from its index kept open; `None` when it was not kept or cannot be read.
pub fn removed_pack_objects(kept: &KeptIndexes, pack: &str) -> Option<Vec<String>> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = kept.files.get(pack)?;
    let hex = pack.strip_prefix("pack-")?.len();
    file.seek(SeekFrom::Start(0)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    index_object_ids(&bytes, hex / 2)
}

/// The object ids (hex) a pack index of version 2 lists, with object ids of
/// `hash_len` bytes (20 for SHA-1, 32 for SHA-256); `None` for anything
/// else. Pure.
pub fn index_object_ids(bytes: &[u8], hash_len: usize) -> Option<Vec<String>> {
    if !(hash_len == 20 || hash_len == 32) || bytes.get(..8)? != b"\xfftOc\0\0\0\x02" {
        return None;
    }
    let count = u32::from_be_bytes(bytes.get(8 + 255 * 4..8 + 256 * 4)?.try_into().ok()?) as usize;
    let names = bytes.get(8 + 1024..8 + 1024 + count.checked_mul(hash_len)?)?;
    Some(names.chunks(hash_len).map(|c| c.iter().map(|b| format!("{b:02x}")).collect()).collect())
}

/// The files a part names, as [`fingerprint`] read them under `common`
/// (`refs/heads/main`: its loose file and `packed-refs`); `worktree/*` and
/// `worktree-admin/*` under the task's. Pure.
pub fn part_paths(part: &str, common: &Path, task: Option<&TaskParts<'_>>) -> Vec<std::path::PathBuf> {
    if let Some(rest) = part.strip_prefix("worktree/") {
        return task.map(|t| vec![t.worktree.join(rest)]).unwrap_or_default();
    }
    if let Some(rest) = part.strip_prefix("worktree-admin/") {
        return task.map(|t| vec![t.admin.join(rest)]).unwrap_or_default();
    }
    let mut out = vec![common.join(part)];
    if part.starts_with("refs/") {
        out.push(common.join("packed-refs"));
    }
    out
}

/// The config and hooks of the submodules' repositories under `dir`
/// (`modules/<name>/`, nested ones under `modules/<name>/modules/`).
fn modules(f: &mut Fingerprint, name: &str, dir: &Path, depth: usize) {
    if depth > 8 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let sub = format!("{name}/{}", e.file_name().to_string_lossy());
        let path = e.path();
        if path.join("HEAD").exists() {
            f.bytes(&format!("{sub}/config"), &path.join("config"));
            f.tree(&format!("{sub}/hooks"), &path.join("hooks"));
            modules(f, &format!("{sub}/modules"), &path.join("modules"), depth + 1);
        } else {
            // A submodule named with a slash: `modules/libs/a/`.
            modules(f, &sub, &path, depth + 1);
        }
    }
}

/// Whether `name` is one of retry-run's own refs the fingerprint of `task`
/// leaves out (other tasks', and the task's lease).
fn retry_runs_own(name: &str, task: Option<&str>) -> bool {
    if name.starts_with("refs/retry-run-remotes/") || name.starts_with("refs/heads/retry-run/") {
        return true;
    }
    match (name.strip_prefix("refs/retry-run/"), task) {
        (None, _) => false,
        (Some(rest), Some(t)) => match rest.strip_prefix(t).and_then(|r| r.strip_prefix('/')) {
            Some(leaf) => leaf == "lease",
            None => true,
        },
        (Some(_), None) => true,
    }
}

/// The refs as git reads them: every loose ref under `refs/` over those of
/// `packed-refs`, each by what it points at.
fn refs(f: &mut Fingerprint, common: &Path, task: Option<&str>) {
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    if let Ok(text) = std::fs::read(common.join("packed-refs")) {
        for line in String::from_utf8_lossy(&text).lines() {
            if line.starts_with('#') || line.starts_with('^') {
                continue;
            }
            match line.split_once(' ') {
                Some((oid, name)) => found.insert(name.to_string(), oid.to_string()),
                // A line git would not write: seen by its bytes.
                None => found.insert("packed-refs".to_string(), sha256_hex(line.as_bytes())),
            };
        }
    }
    loose_refs(&mut found, "refs", &common.join("refs"));
    for (name, target) in found {
        if !retry_runs_own(&name, task) {
            f.parts.insert(name, Part { content: target, times: None });
        }
    }
}

/// The refs of the repository whose git directory is `git_dir` (a remote
/// on this machine), as git reads them (loose over `packed-refs`), each by
/// what it points at; retry-run's own (`refs/retry-run/*`,
/// `refs/heads/retry-run/*`, `refs/retry-run-remotes/*`) left out.
pub fn refs_of(git_dir: &Path) -> BTreeMap<String, String> {
    let mut f = Fingerprint::default();
    refs(&mut f, git_dir, None);
    f.parts.into_iter().map(|(name, p)| (name, p.content)).collect()
}

/// The repository's remotes at `git_dir` as its config names them, up to
/// `max`: each name with its `url` and `pushurl` (none when the config
/// cannot be read).
pub fn remote_urls(git_dir: &Path, max: usize) -> Vec<(String, Vec<String>)> {
    let Ok(repo) = git2::Repository::open(git_dir) else { return Vec::new() };
    let Ok(names) = repo.remotes() else { return Vec::new() };
    let mut out = Vec::new();
    for name in names.iter().filter_map(|n| n.ok().flatten()).take(max) {
        let Ok(remote) = repo.find_remote(name) else { continue };
        let urls = [remote.url().ok(), remote.pushurl().ok().flatten()];
        out.push((name.to_string(), urls.into_iter().flatten().map(str::to_string).collect()));
    }
    out
}

fn loose_refs(found: &mut BTreeMap<String, String>, name: &str, dir: &Path) {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if let Ok(fd) = rustix::fs::open(dir, flags, Mode::empty()) {
        refs_at(found, name, dir, &fd);
    }
}

/// The loose refs of the directory open at `fd` (`dir`, named `name`),
/// each read beside it; its subdirectories opened without following a
/// link.
fn refs_at(found: &mut BTreeMap<String, String>, name: &str, dir: &Path, fd: &OwnedFd) {
    for (leaf, kind) in entries(fd) {
        let child = format!("{name}/{}", leaf.to_string_lossy());
        let path = dir.join(std::ffi::OsStr::from_bytes(leaf.to_bytes()));
        if kind == FileType::Directory {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            if let Ok(sub) = rustix::fs::openat(fd, leaf.as_c_str(), flags, Mode::empty()) {
                refs_at(found, &child, &path, &sub);
            }
        } else if let Some(p) = read_ref(fd, &leaf, &path) {
            found.insert(child, p);
        }
    }
}

/// What the loose ref file `leaf` of the directory open at `dir` (at
/// `path`) says (`1a2b...`, `ref: refs/heads/main`); a symlink by its
/// target, anything long by a hash of its bytes, anything but a file (a
/// FIFO) by its kind, never opened.
fn read_ref(dir: &OwnedFd, leaf: &CStr, path: &Path) -> Option<String> {
    let st = rustix::fs::statat(dir, leaf, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::Symlink => {
            let target = rustix::fs::readlinkat(dir, leaf, Vec::new()).ok()?;
            return Some(format!("symlink {}", Path::new(std::ffi::OsStr::from_bytes(target.to_bytes())).display()));
        }
        FileType::RegularFile if st.st_size <= 512 => {}
        _ => return read_part(path).map(|p| p.content),
    }
    use std::io::Read as _;
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let mut file = std::fs::File::from(rustix::fs::openat(dir, leaf, flags, Mode::empty()).ok()?);
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).trim_end().to_string())
}

/// Whether `name` is a loose object's file name in a fan-out directory:
/// the rest of a SHA-1 or SHA-256 object id in hex.
fn loose_object_name(name: &str) -> bool {
    (name.len() == 38 || name.len() == 62) && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The object store: `info/**` by bytes, `pack/` by name, size and tail,
/// loose objects by name and size. Temporary files git and libgit2 write
/// while they store objects (`tmp_obj_*`, `pack/tmp_pack_*`) are left out.
fn objects(f: &mut Fingerprint, dir: &Path) {
    f.tree("objects/info", &dir.join("info"));
    if let Ok(rd) = std::fs::read_dir(dir.join("pack")) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            // A `.keep` only tells `git gc` to leave a pack alone; `git
            // fetch` writes one and removes it again.
            if !(name.starts_with("pack-") || name.starts_with("multi-pack-index")) || name.ends_with(".keep") {
                continue;
            }
            if let Ok(meta) = e.metadata() {
                f.parts.insert(format!("objects/pack/{name}"), pack_part(&e.path(), &meta, name.ends_with(".pack")));
            }
        }
    }
    let Ok(store) = rustix::fs::open(dir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()) else {
        return;
    };
    let mut fans = Vec::new();
    for (fan, kind) in entries(&store) {
        let fan_name = fan.to_string_lossy().into_owned();
        if fan_name.len() != 2 || !fan_name.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        if kind == FileType::Directory {
            fans.push(fan);
        } else {
            f.bytes(&format!("objects/{fan_name}"), &dir.join(&fan_name));
        }
    }
    // Thousands of objects at most (git packs them past `gc.auto`), each
    // one `stat`: the fan-out directories split among a few threads.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, LOOSE_THREADS);
    let share = fans.len().div_ceil(threads).max(1);
    let found: Vec<Vec<(String, Part)>> = std::thread::scope(|s| {
        let store = &store;
        let handles: Vec<_> = fans
            .chunks(share)
            .map(|some| s.spawn(move || some.iter().flat_map(|fan| fan_objects(store, fan)).collect()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_default()).collect()
    });
    f.parts.extend(found.into_iter().flatten());
}

/// How many threads [`objects`] stats the loose objects on at most.
const LOOSE_THREADS: usize = 2;

/// The names in the directory open at `dir` (not `.` and `..`), each with
/// its type: the directory entry's, or a `stat`'s (not following a link)
/// where the file system gives none. A name gone meanwhile is left out.
fn entries(dir: &OwnedFd) -> Vec<(CString, FileType)> {
    let Ok(mut list) = Dir::read_from(dir) else { return Vec::new() };
    let mut out = Vec::new();
    while let Some(Ok(e)) = list.read() {
        let name = e.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        let kind = match e.file_type() {
            FileType::Unknown => match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => FileType::from_raw_mode(st.st_mode),
                Err(_) => continue,
            },
            known => known,
        };
        out.push((name.to_owned(), kind));
    }
    out
}

/// The loose objects of the fan-out directory `fan` of the object store
/// open at `store`, each by its size and inode (`objects/1a/2b3c...`); the
/// directory opened without following a link, each object stat'ed
/// beside it (without following one either).
fn fan_objects(store: &OwnedFd, fan: &CStr) -> Vec<(String, Part)> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(store, fan, flags, Mode::empty()) else { return Vec::new() };
    let Ok(mut list) = Dir::new(fd) else { return Vec::new() };
    let fan = fan.to_string_lossy();
    let mut out = Vec::new();
    while let Some(Ok(e)) = list.read() {
        let Ok(name) = e.file_name().to_str() else { continue };
        if !loose_object_name(name) {
            continue;
        }
        let Ok(at) = list.fd() else { break };
        // The inode comes with the directory's entry: an object deleted
        // and written again (by another size or not) is seen by it.
        if let Ok(st) = rustix::fs::statat(at, e.file_name(), AtFlags::SYMLINK_NOFOLLOW) {
            out.push((
                format!("objects/{fan}/{name}"),
                Part { content: format!("size {} inode {}", st.st_size, e.ino()), times: None },
            ));
        }
    }
    out
}

/// The other linked worktrees: their links, `HEAD` and private refs (not
/// `own`, the task's, nor other tasks', `retry-run-*`).
fn other_worktrees(f: &mut Fingerprint, dir: &Path, own: Option<&str>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let id = e.file_name().to_string_lossy().into_owned();
        if Some(id.as_str()) == own || id.starts_with("retry-run-") {
            continue;
        }
        let name = format!("worktrees/{id}");
        let path = e.path();
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            f.bytes(&name, &path);
            continue;
        }
        for file in ["gitdir", "commondir", "config.worktree", "locked", "HEAD"] {
            f.bytes(&format!("{name}/{file}"), &path.join(file));
        }
        let mut found = BTreeMap::new();
        loose_refs(&mut found, &format!("{name}/refs"), &path.join("refs"));
        for (n, target) in found {
            f.parts.insert(n, Part { content: target, times: None });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(content: &str, times: Option<[i64; 4]>) -> Part {
        Part { content: content.into(), times }
    }

    fn print(f: &Fingerprint, before: &Fingerprint) -> Vec<String> {
        f.compare(before).into_iter().map(|c| format!("{:?} {}", c.change, c.part)).collect()
    }

    #[test]
    fn each_change_is_named_with_its_kind() {
        let t0 = Some([1, 0, 1, 0]);
        let t1 = Some([2, 0, 2, 0]);
        let mut before = Fingerprint::default();
        for (name, p) in [
            ("config", part("c", None)),
            ("refs/heads/main", part("aaaa", None)),
            ("objects/ab/cdef", part("size 10", None)),
            ("objects/12/3456", part("size 20", None)),
            ("objects/pack/pack-1.pack", part("size 100", t0)),
            ("objects/pack/pack-1.idx", part("size 8", t0)),
            ("hooks/pre-commit", part("h", None)),
        ] {
            before.parts.insert(name.into(), p);
        }
        assert!(before.compare(&before.clone()).is_empty());
        let mut after = before.clone();
        after.parts.remove("objects/ab/cdef");
        after.parts.insert("objects/12/3456".into(), part("size 21", None));
        after.parts.insert("objects/ff/0000".into(), part("size 5", None));
        after.parts.insert("objects/info/alternates".into(), part("x", None));
        after.parts.insert("objects/pack/pack-1.pack".into(), part("size 100", t1));
        after.parts.insert("refs/heads/main".into(), part("bbbb", None));
        assert_eq!(
            print(&after, &before),
            [
                "Changed objects/12/3456",
                "Removed objects/ab/cdef",
                "Added objects/ff/0000",
                "Added objects/info/alternates",
                "Touched objects/pack/pack-1.pack",
                "Changed refs/heads/main",
            ]
        );
        assert_eq!(
            after.changed_since(&before),
            [
                "objects/12/3456",
                "objects/ab/cdef",
                "objects/ff/0000",
                "objects/info/alternates",
                "objects/pack/pack-1.pack",
                "refs/heads/main"
            ]
        );
        assert_ne!(after.digest(), before.digest());
    }

    #[test]
    fn retry_runs_own_refs_are_left_out_but_for_the_task_s_attempts() {
        let cases: &[(&str, Option<&str>, bool)] = &[
            ("refs/heads/main", Some("t"), false),
            ("refs/tags/v1", None, false),
            ("refs/retry-run/t/1", Some("t"), false),
            ("refs/retry-run/t/record", Some("t"), false),
            ("refs/retry-run/t/lease", Some("t"), true),
            ("refs/retry-run/other/1", Some("t"), true),
            ("refs/retry-run/tt/1", Some("t"), true),
            ("refs/retry-run/t/1", None, true),
            ("refs/heads/retry-run/t", Some("t"), true),
            ("refs/retry-run-remotes/origin/t/1", Some("t"), true),
        ];
        for (name, task, own) in cases {
            assert_eq!(retry_runs_own(name, *task), *own, "{name} {task:?}");
        }
    }

    #[test]
    fn a_pack_is_judged_by_name_size_and_tail_not_by_its_links() {
        let t = tempfile::tempdir().expect("tempdir");
        let pack = t.path().join("objects/pack");
        std::fs::create_dir_all(&pack).expect("mkdir");
        let idx = pack.join("pack-ab.idx");
        std::fs::write(&idx, vec![7u8; 200]).expect("write");
        std::fs::write(pack.join("pack-ab.pack"), vec![1u8; 300]).expect("write");
        let before = fingerprint(t.path(), None);
        // Another clone hard-links it (its ctime moves); git freshens the
        // pack (its mtime moves): nothing is a change but the freshening.
        std::fs::hard_link(&idx, t.path().join("elsewhere.idx")).expect("link");
        let now = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(pack.join("pack-ab.pack"))
            .and_then(|f| f.set_modified(now))
            .expect("touch");
        std::fs::File::options().write(true).open(&idx).and_then(|f| f.set_modified(now)).expect("touch");
        let after = fingerprint(t.path(), None);
        assert_eq!(print(&after, &before), ["Touched objects/pack/pack-ab.pack"]);
        // Replaced by other bytes of the same size: its tail tells.
        let mut bytes = vec![7u8; 200];
        bytes[199] = 8;
        std::fs::write(&idx, bytes).expect("rewrite");
        assert_eq!(print(&fingerprint(t.path(), None), &after), ["Changed objects/pack/pack-ab.idx"]);
    }

    #[test]
    fn a_pack_index_lists_its_objects() {
        let mut idx = b"\xfftOc\0\0\0\x02".to_vec();
        for i in 0..256u32 {
            idx.extend_from_slice(&(if i < 0x12 { 0u32 } else { 2 }).to_be_bytes());
        }
        idx.extend_from_slice(&[0x12; 20]);
        idx.extend_from_slice(&[0xab; 20]);
        idx.extend_from_slice(&[0u8; 48]);
        let ids = index_object_ids(&idx, 20).expect("parsed");
        assert_eq!(ids, ["12".repeat(20), "ab".repeat(20)]);
        assert_eq!(index_object_ids(&idx[..1000], 20), None, "cut short");
        assert_eq!(index_object_ids(b"PACK\0\0\0\x02", 20), None);
        assert_eq!(index_object_ids(&idx, 7), None);
    }

    #[test]
    fn a_part_s_files() {
        let c = Path::new("/r/.git");
        let t = TaskParts { id: "t", worktree: Path::new("/w"), admin: Path::new("/r/.git/worktrees/retry-run-t") };
        assert_eq!(part_paths("refs/heads/main", c, None), [c.join("refs/heads/main"), c.join("packed-refs")]);
        assert_eq!(part_paths("objects/pack/pack-1.idx", c, None), [c.join("objects/pack/pack-1.idx")]);
        assert_eq!(part_paths("worktree/.git", c, Some(&t)), [Path::new("/w/.git")]);
        assert_eq!(part_paths("worktree-admin/gitdir", c, Some(&t)), [t.admin.join("gitdir")]);
        assert!(part_paths("worktree/.git", c, None).is_empty());
    }

    #[test]
    fn loose_objects_are_seen_by_name_size_and_inode() {
        let t = tempfile::tempdir().expect("tempdir");
        let objects = t.path().join("objects");
        let obj = |fan: &str, rest: char| objects.join(fan).join(rest.to_string().repeat(38));
        for fan in ["ab", "cd", "ef"] {
            std::fs::create_dir_all(objects.join(fan)).expect("mkdir");
        }
        std::fs::write(obj("ab", '1'), b"one").expect("write");
        std::fs::write(obj("ab", '2'), b"two").expect("write");
        std::fs::write(obj("cd", '3'), b"three").expect("write");
        std::fs::write(obj("ef", '4'), b"four").expect("write");
        // Not objects: a temporary file, a name of the wrong length, a
        // directory that is no fan-out.
        std::fs::write(objects.join("ab/tmp_obj_Ab12cd"), b"x").expect("write");
        std::fs::write(objects.join("cd/abc"), b"x").expect("write");
        std::fs::create_dir_all(objects.join("xyz")).expect("mkdir");
        std::fs::write(objects.join("xyz").join("5".repeat(38)), b"x").expect("write");
        let before = fingerprint(t.path(), None);
        let loose: Vec<&String> = before.parts.keys().filter(|k| k.starts_with("objects/")).collect();
        assert_eq!(loose.len(), 4, "{loose:?}");
        let ino = std::fs::metadata(obj("ab", '1')).expect("stat").ino();
        assert_eq!(before.parts[&format!("objects/ab/{}", "1".repeat(38))].content, format!("size 3 inode {ino}"));
        // Rewritten in place at another size; written again (a new inode)
        // at the same size; removed; added; a fan-out replaced by a link
        // to a directory of objects (not followed: seen by its target).
        std::fs::write(obj("ab", '1'), b"one, longer").expect("rewrite");
        let held = obj("ab", '9');
        std::fs::write(&held, b"owt").expect("write");
        std::fs::rename(&held, obj("ab", '2')).expect("rename");
        std::fs::remove_file(obj("cd", '3')).expect("remove");
        std::fs::write(obj("cd", '6'), b"six").expect("write");
        std::fs::remove_dir_all(objects.join("ef")).expect("rmdir");
        std::os::unix::fs::symlink(objects.join("xyz"), objects.join("ef")).expect("symlink");
        let after = fingerprint(t.path(), None);
        assert_eq!(
            print(&after, &before),
            [
                format!("Changed objects/ab/{}", "1".repeat(38)),
                format!("Changed objects/ab/{}", "2".repeat(38)),
                format!("Removed objects/cd/{}", "3".repeat(38)),
                format!("Added objects/cd/{}", "6".repeat(38)),
                "Added objects/ef".to_string(),
                format!("Removed objects/ef/{}", "4".repeat(38)),
            ]
        );
        assert!(fingerprint(t.path(), None).compare(&after).is_empty(), "the same look twice");
    }

    #[test]
    fn loose_refs_by_what_they_say_and_a_fifo_by_its_kind_never_opened() {
        let t = tempfile::tempdir().expect("tempdir");
        let refs = t.path().join("refs");
        std::fs::create_dir_all(refs.join("heads/topic")).expect("mkdir");
        std::fs::create_dir_all(refs.join("tags")).expect("mkdir");
        std::fs::write(refs.join("heads/main"), format!("{}\n", "a".repeat(40))).expect("write");
        std::fs::write(refs.join("heads/topic/x"), "ref: refs/heads/main\n").expect("write");
        std::fs::write(t.path().join("packed-refs"), format!("{} refs/tags/v1\n", "b".repeat(40))).expect("write");
        std::os::unix::fs::symlink("../heads/main", refs.join("tags/link")).expect("symlink");
        std::fs::write(refs.join("tags/long"), vec![b'c'; 600]).expect("write");
        let f = fingerprint(t.path(), None);
        let content = |name: &str| f.parts.get(name).map(|p| p.content.clone());
        assert_eq!(content("refs/heads/main"), Some("a".repeat(40)));
        assert_eq!(content("refs/heads/topic/x"), Some("ref: refs/heads/main".into()));
        assert_eq!(content("refs/tags/v1"), Some("b".repeat(40)), "packed");
        assert_eq!(content("refs/tags/link"), Some("symlink ../heads/main".into()));
        assert!(content("refs/tags/long").is_some_and(|c| c.len() == 64), "hashed");
        // A FIFO planted among the refs: seen, never opened (no writer
        // would ever come).
        let fifo = std::ffi::CString::new(refs.join("heads/fifo").as_os_str().as_bytes()).expect("path");
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let after = fingerprint(t.path(), None);
        assert_eq!(print(&after, &f), ["Added refs/heads/fifo"]);
    }

    #[test]
    fn loose_object_names() {
        assert!(loose_object_name(&"a".repeat(38)));
        assert!(loose_object_name(&"0".repeat(62)));
        assert!(!loose_object_name("tmp_obj_Ab12cd"));
        assert!(!loose_object_name(&"g".repeat(38)));
    }
}
