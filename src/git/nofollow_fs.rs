//! Filesystem moves inside a task's worktree that never follow a symlink
//! (libgit2's forced checkout writes through them).
//! An attempt may have replaced any file or directory by a link pointing
//! outside; these helpers remove such links, never write through them.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// Removes whatever is at `path` (file, symlink, or directory tree) without
/// following symlinks, making read-only directories writable on the way.
pub(crate) fn remove_any(path: &Path) -> io::Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if let Some(parent) = path.parent() {
        make_writable_dir(parent);
    }
    if meta.is_dir() { remove_tree(path) } else { fs::remove_file(path) }
}

/// Removes the directory at `path` and everything in it, however deep
/// ([`empty_dir`]), without following a link, making read-only
/// directories writable on the way.
fn remove_tree(path: &Path) -> io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    make_writable_dir(path);
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    empty_dir(&rustix::fs::open(path, flags, Mode::empty())?)?;
    fs::remove_dir(path)
}

fn make_writable_dir(dir: &Path) {
    if let Ok(m) = fs::symlink_metadata(dir)
        && m.is_dir()
        && m.permissions().mode() & 0o700 != 0o700
    {
        let _ = fs::set_permissions(dir, fs::Permissions::from_mode(m.permissions().mode() | 0o700));
    }
}

/// Clears the way for a new file at `root/rel`: real parent directories,
/// and nothing (not even a dangling symlink) at the path itself.
pub(crate) fn clear_for_write(root: &Path, rel: &Path) -> io::Result<()> {
    Clearer::new(root).clear_for_write(rel)
}

/// [`clear_for_write`] for many paths of one tree: each directory is
/// checked (and made real and writable) once, not once for every file
/// below it. Only for a tree nothing else changes meanwhile, such as a task
/// worktree during its reset.
pub(crate) struct Clearer {
    root: PathBuf,
    real: HashSet<PathBuf>,
}

impl Clearer {
    pub(crate) fn new(root: &Path) -> Clearer {
        Clearer { root: root.to_path_buf(), real: HashSet::new() }
    }

    /// Real parent directories for `rel`, and nothing at `rel` itself.
    pub(crate) fn clear_for_write(&mut self, rel: &Path) -> io::Result<()> {
        self.real_parent_dirs(rel)?;
        let path = self.root.join(rel);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => {
                self.real.retain(|d| !d.starts_with(&path));
                remove_tree(&path)
            }
            Ok(_) => fs::remove_file(&path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Real, writable directories for every parent of `rel`; `rel` itself
    /// is left as it is.
    pub(crate) fn real_parents(&mut self, rel: &Path) -> io::Result<()> {
        self.real_parent_dirs(rel)
    }

    fn real_parent_dirs(&mut self, rel: &Path) -> io::Result<()> {
        let mut at = self.root.clone();
        if self.real.insert(at.clone()) {
            // The root is there; it only has to be writable.
            make_writable_dir(&at);
        }
        let comps: Vec<Component> = rel.components().collect();
        for c in comps.iter().take(comps.len().saturating_sub(1)) {
            let Component::Normal(name) = c else {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("unsafe path {}", rel.display())));
            };
            at.push(name);
            if self.real.contains(&at) {
                continue;
            }
            match fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() => make_writable_dir(&at),
                Ok(_) => {
                    remove_any(&at)?;
                    fs::create_dir(&at)?;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => fs::create_dir(&at)?,
                Err(e) => return Err(e),
            }
            self.real.insert(at.clone());
        }
        Ok(())
    }
}

/// Copies a regular file or a symlink from `src` to `root/rel`, never
/// writing through a symlink at the destination.
pub(crate) fn copy_in(src: &Path, root: &Path, rel: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(src)?;
    clear_for_write(root, rel)?;
    let dst = root.join(rel);
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(fs::read_link(src)?, &dst)
    } else if meta.is_file() {
        use std::os::unix::fs::OpenOptionsExt;
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(meta.permissions().mode() & 0o777)
            .open(&dst)?;
        io::copy(&mut fs::File::open(src)?, &mut out)?;
        Ok(())
    } else {
        Ok(())
    }
}

/// Bytes used by a tree on disk (symlinks not followed), walked with a
/// stack of its own however deep the tree; what lies past `PATH_MAX` from
/// `path` is not counted.
pub(crate) fn disk_usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(m) = fs::symlink_metadata(&p) else { continue };
        total += m.blocks() * 512;
        if m.is_dir()
            && let Ok(rd) = fs::read_dir(&p)
        {
            stack.extend(rd.flatten().map(|e| e.path()));
        }
    }
    total
}

/// A file of a tree read as git would see it, every path component opened
/// from a descriptor of the tree's root without following a link:
/// retry-run's own reads of a worktree the agent wrote (the snapshot, the
/// self-checks' comparison), which run unconfined, can never be sent
/// through a link to a file outside (a directory replaced by a link to
/// `~/.ssh`), even one swapped in while the read is under way.
pub(crate) struct Beneath {
    root: std::os::fd::OwnedFd,
}

/// What stands at a path of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    /// A regular file: its bytes, and whether its owner may execute it.
    File { data: Vec<u8>, exec: bool },
    /// A symbolic link: its target's bytes.
    Link(Vec<u8>),
}

impl Beneath {
    /// The tree at `root` (itself a real directory, not a link).
    pub(crate) fn open(root: &Path) -> io::Result<Beneath> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Beneath { root: rustix::fs::open(root, flags, Mode::empty())? })
    }

    /// What is at `rel` (relative to the root): `None` when nothing is, or
    /// when a component on the way is not a real directory (a link, a
    /// file): git sees no file there either. A FIFO, socket or device is
    /// `None` too (never opened).
    pub(crate) fn read(&self, rel: &Path) -> io::Result<Option<Node>> {
        use rustix::fs::{AtFlags, FileType, Mode, OFlags};
        let (parent, leaf) = match (rel.parent(), rel.file_name()) {
            (Some(p), Some(l)) => (p, l),
            _ => return Ok(None),
        };
        let dir = match self.dir(parent) {
            Ok(Some(d)) => d,
            Ok(None) => return Ok(None),
            Err(e) => return Err(e),
        };
        let gone = |e: rustix::io::Errno| {
            e == rustix::io::Errno::NOENT || e == rustix::io::Errno::NOTDIR || e == rustix::io::Errno::LOOP
        };
        let st = match rustix::fs::statat(&dir, leaf, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(e) if gone(e) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => match rustix::fs::readlinkat(&dir, leaf, Vec::new()) {
                Ok(target) => Ok(Some(Node::Link(target.into_bytes()))),
                Err(e) if gone(e) || e == rustix::io::Errno::INVAL => Ok(None),
                Err(e) => Err(e.into()),
            },
            FileType::RegularFile => {
                let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                let fd = match rustix::fs::openat(&dir, leaf, flags, Mode::empty()) {
                    Ok(fd) => fd,
                    Err(e) if gone(e) => return Ok(None),
                    Err(e) => return Err(e.into()),
                };
                // What was opened, not what was looked at: it may have been
                // swapped in between.
                let st = rustix::fs::fstat(&fd)?;
                if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
                    return Ok(None);
                }
                let mut data = Vec::with_capacity(st.st_size.max(0) as usize);
                use std::io::Read as _;
                fs::File::from(fd).read_to_end(&mut data)?;
                Ok(Some(Node::File { data, exec: st.st_mode & 0o100 != 0 }))
            }
            _ => Ok(None),
        }
    }

    /// The directory `rel` beneath the root, opened without following a
    /// link on the way; `None` when a component is not a real directory.
    fn dir(&self, rel: &Path) -> io::Result<Option<std::os::fd::OwnedFd>> {
        use rustix::fs::{Mode, OFlags, ResolveFlags};
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let here = if rel.as_os_str().is_empty() { Path::new(".") } else { rel };
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(&self.root, here, flags, Mode::empty(), resolve) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) if e == rustix::io::Errno::NOSYS || e == rustix::io::Errno::AGAIN => self.dir_by_steps(rel),
            Err(e)
                if e == rustix::io::Errno::NOENT
                    || e == rustix::io::Errno::NOTDIR
                    || e == rustix::io::Errno::LOOP
                    || e == rustix::io::Errno::XDEV =>
            {
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// [`Beneath::dir`] one component at a time (kernels before 5.6 have
    /// no `openat2`).
    pub(crate) fn dir_by_steps(&self, rel: &Path) -> io::Result<Option<std::os::fd::OwnedFd>> {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut at = rustix::fs::openat(&self.root, ".", flags, Mode::empty())?;
        for c in rel.components() {
            let Component::Normal(name) = c else { return Ok(None) };
            at = match rustix::fs::openat(&at, name, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(e)
                    if e == rustix::io::Errno::NOENT
                        || e == rustix::io::Errno::NOTDIR
                        || e == rustix::io::Errno::LOOP =>
                {
                    return Ok(None);
                }
                Err(e) => return Err(e.into()),
            };
        }
        Ok(Some(at))
    }
}

/// Removes whatever is at `rel` beneath `root`, however deep and long its
/// path (past `PATH_MAX`), each directory on the way opened from its
/// parent without following a link; nothing to do when a component is
/// missing or not a real directory.
pub(crate) fn remove_beneath(root: &Path, rel: &Path) -> io::Result<()> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use std::os::fd::AsFd;
    let (Some(parent), Some(leaf)) = (rel.parent(), rel.file_name()) else { return Ok(()) };
    let b = Beneath::open(root)?;
    let Some(dir) = b.dir_by_steps(parent)? else { return Ok(()) };
    // O_PATH descriptors cannot list or unlink: reopen it for that.
    let dir = rustix::fs::openat(&dir, ".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    let st = match rustix::fs::statat(&dir, leaf, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(e) if e == rustix::io::Errno::NOENT => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
        let sub = open_writable(dir.as_fd(), leaf)?;
        empty_dir(&sub)?;
        rustix::fs::unlinkat(&dir, leaf, AtFlags::REMOVEDIR)?;
    } else {
        rustix::fs::unlinkat(&dir, leaf, AtFlags::empty())?;
    }
    Ok(())
}

/// Levels of a tree [`empty_dir`] holds open at once: a directory deeper
/// below the one it empties is moved up into that one first, and emptied
/// from there. Descriptors stay bounded however deep the tree (a chain of
/// 3,000 directories would otherwise take 3,000, past the usual limit of
/// 1,024).
const OPEN_LEVELS: usize = 32;

/// Empties the directory open at `fd`, never following a link, however
/// deep, with at most [`OPEN_LEVELS`] descriptors open; each directory is
/// made writable by its owner before it is emptied (a read-only one could
/// not be).
pub(crate) fn empty_dir(fd: &std::os::fd::OwnedFd) -> io::Result<()> {
    use rustix::fs::{AtFlags, Dir, FileType, RenameFlags};
    /// A directory being emptied: open, its name in its parent and the
    /// names still in it, with their types.
    struct Level {
        dir: Dir,
        name: std::ffi::CString,
        names: Vec<(std::ffi::CString, FileType)>,
    }
    let open = |dir: Dir, name: std::ffi::CString| -> io::Result<Level> {
        let mut dir = dir;
        let names = names_in(&mut dir)?;
        Ok(Level { dir, name, names })
    };
    let mut stack = vec![open(Dir::read_from(fd)?, std::ffi::CString::default())?];
    let mut moved = 0u64;
    loop {
        let levels = stack.len();
        let Some(level) = stack.last_mut() else { break };
        let Some((name, kind)) = level.names.pop() else {
            if let Some(done) = stack.pop()
                && let Some(parent) = stack.last()
            {
                rustix::fs::unlinkat(parent.dir.fd()?, &done.name, AtFlags::REMOVEDIR)?;
            }
            continue;
        };
        let (Some(level), Some(top)) = (stack.last(), stack.first()) else { break };
        let at = level.dir.fd()?;
        if kind != FileType::Directory {
            rustix::fs::unlinkat(at, &name, AtFlags::empty())?;
        } else if levels < OPEN_LEVELS {
            let next = open(Dir::new(open_writable(at, &name)?)?, name)?;
            stack.push(next);
        } else {
            // Moved into the directory being emptied, under a name not in
            // use there (a directory moved needs its own write permission).
            let _ = rustix::fs::chmodat(at, &name, rustix::fs::Mode::RWXU, AtFlags::empty());
            let fresh = loop {
                moved += 1;
                let fresh = std::ffi::CString::new(format!(".retry-run-deep-{moved}")).map_err(io::Error::other)?;
                match rustix::fs::renameat_with(at, &name, top.dir.fd()?, &fresh, RenameFlags::NOREPLACE) {
                    Ok(()) => break fresh,
                    Err(e) if e == rustix::io::Errno::EXIST => continue,
                    Err(e) => return Err(e.into()),
                }
            };
            if let Some(top) = stack.first_mut() {
                top.names.push((fresh, FileType::Directory));
            }
        }
    }
    Ok(())
}

/// The directory `name` in `at`, opened without following a link and
/// given rwx for its owner (opened after a chmod when it could not be
/// read).
fn open_writable<P: rustix::path::Arg + Copy>(
    at: std::os::fd::BorrowedFd<'_>,
    name: P,
) -> io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(at, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(e) if e == rustix::io::Errno::ACCESS => {
            rustix::fs::chmodat(at, name, Mode::RWXU, AtFlags::empty())?;
            rustix::fs::openat(at, name, flags, Mode::empty())?
        }
        Err(e) => return Err(e.into()),
    };
    let st = rustix::fs::fstat(&fd)?;
    if st.st_mode & 0o700 != 0o700 {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode((st.st_mode & 0o7777) | 0o700))?;
    }
    Ok(fd)
}

/// The names in the directory `dir` (`.` and `..` left out), each with
/// its type (a stat's where the file system gives none).
fn names_in(dir: &mut rustix::fs::Dir) -> io::Result<Vec<(std::ffi::CString, rustix::fs::FileType)>> {
    use rustix::fs::{AtFlags, FileType};
    let mut names = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name != c"." && name != c".." {
            names.push((name.to_owned(), entry.file_type()));
        }
    }
    for (name, kind) in &mut names {
        if *kind == FileType::Unknown {
            let st = rustix::fs::statat(dir.fd()?, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)?;
            *kind = FileType::from_raw_mode(st.st_mode);
        }
    }
    Ok(names)
}

/// Removes every directory beneath `root` that is `depth` levels deep (a
/// path of `depth` names, relative to `root`) with everything below it, and
/// returns their paths: a tree cut where it is too deep for git's walks.
/// `.git` directories are not entered (git never walks them as the
/// tree's), nor links. One walk with a stack of its own: at most `depth`
/// directories open at once, each directory above that depth listed once
/// (and made readable and writable by its owner where it was not), each
/// one removed from its parent's descriptor ([`empty_dir`]). Its cost is
/// the size of the tree down to that depth, and of what it removes.
pub(crate) fn cut_beyond(root: &Path, depth: usize) -> io::Result<Vec<Vec<u8>>> {
    use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
    let mut cut = Vec::new();
    if depth == 0 {
        return Ok(cut);
    }
    let top = rustix::fs::open(root, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
    // Each directory being listed with its path; the children of the
    // last one are `stack.len()` levels deep.
    let mut stack: Vec<(Dir, Vec<u8>)> = vec![(Dir::new(top)?, Vec::new())];
    loop {
        let levels = stack.len();
        let Some((dir, path)) = stack.last_mut() else { break };
        let Some(entry) = dir.read() else {
            stack.pop();
            continue;
        };
        let entry = entry?;
        let name = entry.file_name();
        if name == c"." || name == c".." || name == c".git" {
            continue;
        }
        let at = dir.fd()?;
        let kind = match entry.file_type() {
            FileType::Unknown => {
                FileType::from_raw_mode(rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW)?.st_mode)
            }
            kind => kind,
        };
        if kind != FileType::Directory {
            continue;
        }
        let child =
            if path.is_empty() { name.to_bytes().to_vec() } else { [path.as_slice(), b"/", name.to_bytes()].concat() };
        let sub = open_writable(at, name)?;
        if levels < depth {
            stack.push((Dir::new(sub)?, child));
            continue;
        }
        // Removing the entry just read leaves the rest of the listing as it is.
        empty_dir(&sub)?;
        drop(sub);
        rustix::fs::unlinkat(at, name, AtFlags::REMOVEDIR)?;
        cut.push(child);
    }
    Ok(cut)
}

#[cfg(test)]
mod beneath_tests {
    use super::*;

    /// A chain of `depth` directories named `d` made at `at/top`, each
    /// opened from its parent (no path past a name); `file` at its bottom.
    fn chain(at: &Path, top: &str, depth: usize) {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        let mut fd = rustix::fs::open(at, flags, Mode::empty()).expect("open");
        for name in std::iter::once(top).chain(std::iter::repeat_n("d", depth)) {
            rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o755)).expect("mkdir");
            fd = rustix::fs::openat(&fd, name, flags, Mode::empty()).expect("open");
        }
        let file = rustix::fs::openat(&fd, "file", OFlags::WRONLY | OFlags::CREATE, Mode::from_raw_mode(0o644));
        drop(file.expect("file"));
    }

    #[test]
    fn a_tree_of_any_depth_is_cut_where_it_is_too_deep_and_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let wt = dir.path().join("wt");
        fs::create_dir_all(wt.join("shallow/x")).expect("mkdir");
        fs::write(wt.join("shallow/f"), "f\n").expect("write");
        chain(&wt, "deep", 3000);
        chain(&wt, "edge", 9);
        chain(&wt, "short", 8);
        // Neither git's own directory nor what a link points at is cut.
        fs::create_dir(wt.join(".git")).expect("mkdir");
        chain(&wt.join(".git"), "inner", 20);
        std::os::unix::fs::symlink(wt.join("deep"), wt.join("link")).expect("symlink");
        // A read-only directory on the way is made writable to cut below it.
        fs::set_permissions(wt.join("deep/d/d"), fs::Permissions::from_mode(0o555)).expect("chmod");

        let cut = cut_beyond(&wt, 10).expect("cut");
        let mut cut: Vec<String> = cut.iter().map(|p| String::from_utf8_lossy(p).into_owned()).collect();
        cut.sort();
        let at_ten = |top: &str| format!("{top}{}", "/d".repeat(9));
        assert_eq!(cut, [at_ten("deep"), at_ten("edge")]);
        assert!(wt.join(at_ten("deep")).parent().is_some_and(|p| p.is_dir()));
        assert!(!wt.join(at_ten("deep")).exists() && !wt.join(at_ten("edge")).exists());
        assert!(wt.join(format!("short{}/file", "/d".repeat(8))).is_file());
        assert!(wt.join(format!(".git/inner{}/file", "/d".repeat(20))).is_file());
        assert!(wt.join("shallow/f").is_file() && wt.join("link").is_symlink());
        assert_eq!(cut_beyond(&wt, 10).expect("cut again"), Vec::<Vec<u8>>::new());

        // Removed whole, however deep (past PATH_MAX, more levels than
        // descriptors are usually allowed).
        chain(&wt, "again", 3000);
        remove_any(&wt.join("again")).expect("removed");
        assert!(!wt.join("again").exists());
        remove_any(&wt).expect("removed");
        assert!(!wt.exists());
    }

    #[test]
    fn a_directory_replaced_by_a_link_hides_what_is_beyond_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (wt, secret) = (dir.path().join("wt"), dir.path().join("secret"));
        fs::create_dir_all(wt.join("src")).expect("mkdir");
        fs::create_dir_all(&secret).expect("mkdir");
        fs::write(secret.join("id_rsa"), "PRIVATE KEY\n").expect("write");
        fs::write(wt.join("src/a.txt"), "a\n").expect("write");
        std::os::unix::fs::symlink(&secret, wt.join("keys")).expect("symlink");
        std::os::unix::fs::symlink("../secret/id_rsa", wt.join("src/link")).expect("symlink");
        let b = Beneath::open(&wt).expect("open");
        assert_eq!(
            b.read(Path::new("src/a.txt")).expect("read"),
            Some(Node::File { data: b"a\n".to_vec(), exec: false })
        );
        assert_eq!(b.read(Path::new("keys/id_rsa")).expect("read"), None);
        assert_eq!(b.read(Path::new("src/link")).expect("read"), Some(Node::Link(b"../secret/id_rsa".to_vec())));
        assert_eq!(b.read(Path::new("src/../../secret/id_rsa")).expect("read"), None);
        assert_eq!(b.read(Path::new("src/missing")).expect("read"), None);
        assert_eq!(b.dir_by_steps(Path::new("keys")).expect("steps").map(|_| ()), None);
        rustix::fs::mkfifoat(rustix::fs::CWD, wt.join("fifo"), rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR)
            .expect("fifo");
        assert_eq!(b.read(Path::new("fifo")).expect("read"), None);
        // Removal beneath, past PATH_MAX, never through the link.
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        let mut at = rustix::fs::open(&wt, flags, Mode::empty()).expect("open");
        for name in std::iter::once("deep".to_string()).chain((0..40).map(|_| "d".repeat(120))) {
            rustix::fs::mkdirat(&at, name.as_str(), Mode::from_raw_mode(0o755)).expect("mkdir");
            at = rustix::fs::openat(&at, name.as_str(), flags, Mode::empty()).expect("open");
        }
        remove_beneath(&wt, Path::new("deep")).expect("removed");
        assert!(!wt.join("deep").exists());
        remove_beneath(&wt, Path::new("keys/id_rsa")).expect("nothing to do");
        assert!(secret.join("id_rsa").exists());
    }
}
