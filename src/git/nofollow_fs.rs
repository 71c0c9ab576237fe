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
pub fn remove_any(path: &Path) -> io::Result<()> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if let Some(parent) = path.parent() {
        make_writable_dir(parent);
    }
    if meta.is_dir() {
        make_tree_writable(path);
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    }
}

/// Gives the owner rwx on every directory of a tree (symlinks not followed).
fn make_tree_writable(dir: &Path) {
    make_writable_dir(dir);
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                make_tree_writable(&e.path());
            }
        }
    }
}

fn make_writable_dir(dir: &Path) {
    if let Ok(m) = fs::symlink_metadata(dir)
        && m.is_dir()
        && m.permissions().mode() & 0o700 != 0o700
    {
        let _ = fs::set_permissions(dir, fs::Permissions::from_mode(m.permissions().mode() | 0o700));
    }
}

/// Makes every directory from `root` down to the parent of `root/rel` a real
/// directory: a symlink or file standing where a directory belongs is removed.
pub fn real_parent_dirs(root: &Path, rel: &Path) -> io::Result<()> {
    Clearer::new(root).real_parent_dirs(rel)
}

/// Clears the way for a new file at `root/rel`: real parent directories,
/// and nothing (not even a dangling symlink) at the path itself.
pub fn clear_for_write(root: &Path, rel: &Path) -> io::Result<()> {
    Clearer::new(root).clear_for_write(rel)
}

/// [`clear_for_write`] for many paths of one tree: each directory is
/// checked (and made real and writable) once, not once for every file
/// below it. Only for a tree nothing else changes meanwhile, such as a task
/// worktree during its reset.
pub struct Clearer {
    root: PathBuf,
    real: HashSet<PathBuf>,
}

impl Clearer {
    pub fn new(root: &Path) -> Clearer {
        Clearer { root: root.to_path_buf(), real: HashSet::new() }
    }

    /// Real parent directories for `rel`, and nothing at `rel` itself.
    pub fn clear_for_write(&mut self, rel: &Path) -> io::Result<()> {
        self.real_parent_dirs(rel)?;
        let path = self.root.join(rel);
        match fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => {
                make_tree_writable(&path);
                self.real.retain(|d| !d.starts_with(&path));
                fs::remove_dir_all(&path)
            }
            Ok(_) => fs::remove_file(&path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Real, writable directories for every parent of `rel`; `rel` itself
    /// is left as it is.
    pub fn real_parents(&mut self, rel: &Path) -> io::Result<()> {
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
pub fn copy_in(src: &Path, root: &Path, rel: &Path) -> io::Result<()> {
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

/// Bytes used by a tree on disk (symlinks not followed).
pub fn disk_usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = fs::symlink_metadata(path) else { return 0 };
    let own = m.blocks() * 512;
    if !m.is_dir() {
        return own;
    }
    own + fs::read_dir(path).map(|rd| rd.flatten().map(|e| disk_usage(&e.path())).sum()).unwrap_or(0)
}
