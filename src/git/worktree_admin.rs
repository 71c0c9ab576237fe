//! The task worktree's administrative directory
//! (`<git-common-dir>/worktrees/retry-run-<task>`), made safe for
//! retry-run's own git.
//!
//! The agent may write there (its `git commit` writes `HEAD`, `index` and
//! `logs/`), and retry-run's git opens it unconfined afterwards: a link
//! there would make that git write where the link points (a reflog line
//! appended to `~/.bashrc`, an index written over the user's), a FIFO
//! would hang it, and a `HEAD` naming a branch (`ref: refs/heads/main`)
//! would make a reset move that branch. So, whenever no process of the
//! attempt runs (after the agent, after the checks, before a reset), every
//! entry is looked at without following links, from a descriptor of the
//! directory: what is not a plain file or directory (a symlink, FIFO,
//! socket or device), a file with another name elsewhere (a hard link), a
//! file over [`MAX_FILE`] bytes, and whatever lies beyond [`MAX_ENTRIES`]
//! entries or [`MAX_DEPTH`] levels is removed and named (files below an
//! `objects` directory, a submodule's, are judged by their type only:
//! git hard-links them and never writes into one); and `HEAD` must hold a
//! commit id, nothing else ([`head_is_detached`]).

use std::ffi::CStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// The largest file kept (an index of 200,000 files is about 25 MB).
pub(crate) const MAX_FILE: u64 = 256 << 20;
/// The most entries looked at; more are removed.
pub(crate) const MAX_ENTRIES: usize = 100_000;
/// The deepest directory looked into; deeper ones are removed.
pub(crate) const MAX_DEPTH: usize = 16;

/// One entry removed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Removed {
    /// Relative to the administrative directory (`logs/HEAD`).
    pub path: String,
    pub why: String,
}

/// Whether `HEAD`'s bytes are a detached commit id (40 or 64 hex digits, a
/// newline after them or not): what retry-run writes there, and what
/// the agent's `git commit` on a detached `HEAD` writes. A symbolic ref
/// (`ref: refs/heads/main`) is not. Pure.
pub(crate) fn head_is_detached(bytes: &[u8]) -> bool {
    let id = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    matches!(id.len(), 40 | 64) && id.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Checks the administrative directory `admin` as the module says,
/// removing what may not stay, and returns what it removed. `HEAD` is
/// returned as removed (`why`: what it held) when it is not a detached
/// commit id; the caller writes it anew. A missing directory is fine.
pub(crate) fn secure(admin: &Path) -> std::io::Result<Vec<Removed>> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir = match rustix::fs::open(admin, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(e) if e == rustix::io::Errno::NOENT => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut walk = Walk { removed: Vec::new(), seen: 0 };
    walk.dir(&dir, "", 0)?;
    // HEAD: a plain file now, or gone.
    if let Ok(fd) = rustix::fs::openat(&dir, "HEAD", OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
    {
        let mut bytes = Vec::new();
        let mut file = std::fs::File::from(fd);
        use std::io::Read as _;
        (&mut file).take(4096).read_to_end(&mut bytes)?;
        if !head_is_detached(&bytes) {
            let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]).trim_end().to_string();
            rustix::fs::unlinkat(&dir, "HEAD", AtFlags::empty())?;
            walk.removed.push(Removed { path: "HEAD".into(), why: format!("not a commit id: {shown:?}") });
        }
    }
    Ok(walk.removed)
}

/// Whether the files retry-run's git reads first when it opens the
/// worktree (its `.git` file, and `HEAD`, `index`, `commondir`, `gitdir`
/// in `admin`) are plain files, for a look taken while the agent still
/// runs (a self-check), where nothing may be removed: `Err` names the
/// first that is a link, FIFO, socket, device, hard link or oversized
/// file. The agent could still swap one in after this look; what it then
/// costs is that one self-check's answer, and the attempt's own
/// [`secure`] finds it.
pub(crate) fn plain_files(worktree: &Path, admin: &Path) -> Result<(), super::GitError> {
    let files = [
        (worktree.join(".git"), ".git".to_string()),
        (admin.join("HEAD"), "worktree-admin/HEAD".into()),
        (admin.join("index"), "worktree-admin/index".into()),
        (admin.join("commondir"), "worktree-admin/commondir".into()),
        (admin.join("gitdir"), "worktree-admin/gitdir".into()),
    ];
    for (path, name) in files {
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(_) => continue,
        };
        use std::os::unix::fs::MetadataExt;
        if !meta.file_type().is_file() || meta.nlink() > 1 || meta.len() > MAX_FILE {
            return Err(super::GitError::NotPlainFile { name });
        }
    }
    Ok(())
}

struct Walk {
    removed: Vec<Removed>,
    seen: usize,
}

impl Walk {
    fn dir(&mut self, fd: &OwnedFd, rel: &str, depth: usize) -> std::io::Result<()> {
        let names: Vec<(std::ffi::CString, FileType)> = {
            let mut list = rustix::fs::Dir::read_from(fd.as_fd())?;
            let mut names = Vec::new();
            while let Some(entry) = list.read() {
                let entry = entry?;
                let name = entry.file_name();
                if name == c"." || name == c".." {
                    continue;
                }
                names.push((name.to_owned(), entry.file_type()));
            }
            names
        };
        for (name, _) in names {
            self.entry(fd, rel, &name, depth)?;
        }
        Ok(())
    }

    fn entry(&mut self, dir: &OwnedFd, rel: &str, name: &CStr, depth: usize) -> std::io::Result<()> {
        let path = if rel.is_empty() {
            name.to_string_lossy().into_owned()
        } else {
            format!("{rel}/{}", name.to_string_lossy())
        };
        // Object files (a submodule's repository here, `modules/<name>/`)
        // are only ever read, are hard-linked from the user's by git's own
        // local clone, and are as large as packs are: their type alone
        // is checked.
        let object = path.split('/').any(|c| c == "objects");
        if !object {
            self.seen += 1;
        }
        let st = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(e) if e == rustix::io::Errno::NOENT => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        let kind = FileType::from_raw_mode(st.st_mode);
        let why = match kind {
            _ if self.seen > MAX_ENTRIES && !object => Some(format!("beyond the first {MAX_ENTRIES} entries")),
            FileType::Directory if depth >= MAX_DEPTH => Some(format!("deeper than {MAX_DEPTH} levels")),
            FileType::Directory => None,
            FileType::RegularFile if object => None,
            FileType::RegularFile if st.st_nlink > 1 => Some("a hard link (the file has another name)".into()),
            FileType::RegularFile if st.st_size as u64 > MAX_FILE => Some(format!("{} bytes", st.st_size)),
            FileType::RegularFile => None,
            FileType::Symlink => Some("a symbolic link".into()),
            FileType::Fifo => Some("a FIFO".into()),
            FileType::Socket => Some("a socket".into()),
            FileType::CharacterDevice | FileType::BlockDevice => Some("a device".into()),
            FileType::Unknown => Some("of an unknown type".into()),
        };
        match (why, kind) {
            (None, FileType::Directory) => {
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let sub = rustix::fs::openat(dir, name, flags, Mode::empty())?;
                self.dir(&sub, &path, depth + 1)
            }
            (None, _) => Ok(()),
            (Some(why), FileType::Directory) => {
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                let sub = rustix::fs::openat(dir, name, flags, Mode::empty())?;
                super::nofollow_fs::empty_dir(&sub)?;
                rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?;
                self.removed.push(Removed { path, why });
                Ok(())
            }
            (Some(why), _) => {
                rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
                self.removed.push(Removed { path, why });
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_commit_id_is_a_detached_head() {
        assert!(head_is_detached(b"0123456789abcdef0123456789abcdef01234567\n"));
        assert!(head_is_detached(b"0123456789abcdef0123456789abcdef01234567"));
        assert!(head_is_detached(&[b'a'; 64]));
        assert!(!head_is_detached(b"ref: refs/heads/main\n"));
        assert!(!head_is_detached(b"0123456789ABCDEF0123456789abcdef01234567\n"));
        assert!(!head_is_detached(b"0123456789abcdef0123456789abcdef01234567\n\n"));
        assert!(!head_is_detached(b""));
    }

    #[test]
    fn links_fifos_and_hard_links_are_removed_and_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let admin = dir.path().join("admin");
        std::fs::create_dir_all(admin.join("logs")).expect("mkdir");
        let outside = dir.path().join("bashrc");
        std::fs::write(&outside, "user's\n").expect("write");
        std::fs::write(admin.join("HEAD"), "ref: refs/heads/main\n").expect("write");
        std::fs::write(admin.join("gitdir"), "x\n").expect("write");
        std::os::unix::fs::symlink(&outside, admin.join("logs/HEAD")).expect("symlink");
        std::fs::hard_link(&outside, admin.join("ORIG_HEAD")).expect("link");
        rustix::fs::mkfifoat(rustix::fs::CWD, admin.join("index"), Mode::RUSR | Mode::WUSR).expect("fifo");
        let mut removed: Vec<(String, String)> =
            secure(&admin).expect("secured").into_iter().map(|r| (r.path, r.why)).collect();
        removed.sort();
        let paths: Vec<&str> = removed.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["HEAD", "ORIG_HEAD", "index", "logs/HEAD"], "{removed:?}");
        assert!(removed[2].1.contains("FIFO") && removed[3].1.contains("symbolic link"), "{removed:?}");
        assert!(admin.join("gitdir").is_file());
        assert_eq!(std::fs::read_to_string(&outside).expect("read"), "user's\n");
        assert!(secure(&dir.path().join("missing")).expect("fine").is_empty());
    }
}
