//! Dependencies shared with the worktree (`[worktree] share`,
//! docs/worktrees.md): each named directory of the user's checkout (an
//! ignored one: `node_modules`, `.venv`, `target`) reaches every attempt
//! without a copy where the agent runs in its own namespaces: the
//! checkout's directory is mounted read-only at the same path of the
//! worktree (a write into it fails, the checkout stays as it was).
//! Elsewhere it is copied into the task's worktree once per task, by
//! reflinks where the file system has them (btrfs, XFS: the `FICLONE`
//! ioctl, no data copied), else byte for byte; the reset between attempts
//! leaves the copy where it is, and it is made again when a lock file of
//! the checkout changed since. Either way the agent never writes into the
//! checkout's directory, nor into another task's copy.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use std::os::unix::ffi::OsStrExt;

use super::RunError;
use super::attempt::Fixed;
use crate::hash;
use crate::sandbox::Effective;

/// The lock files whose change makes a shared copy stale.
const LOCK_FILES: [&str; 12] = [
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "requirements.txt",
    "Cargo.lock",
    "go.sum",
    "Gemfile.lock",
];

/// What the shared copies were made from: the checkout's lock files, by
/// content. Pure over what was read.
pub(super) fn stamp(lock_files: &[(&str, Option<Vec<u8>>)]) -> String {
    let mut text = String::new();
    for (name, bytes) in lock_files {
        let h = bytes.as_deref().map_or_else(|| "-".to_string(), hash::sha256_hex);
        text.push_str(&format!("{name} {h}\n"));
    }
    hash::sha256_hex(text.as_bytes())
}

/// What the prompt says of the directories mounted read-only in the
/// worktree (none: nothing). Pure.
pub(super) fn prompt_note(mounted: &[String]) -> String {
    if mounted.is_empty() {
        return String::new();
    }
    let names: Vec<String> = mounted.iter().map(|m| format!("`{m}`")).collect();
    format!(
        "\nNote: {} in your worktree {} the user's own, mounted read-only (`[worktree] share` in retry-run.toml): \
         a write into it fails. To change a dependency, change its manifest or lock file.\n",
        names.join(", "),
        if names.len() == 1 { "is" } else { "are" }
    )
}

/// The shared directories, as paths relative to the worktree: each kept
/// by the reset.
pub(super) fn kept(share: &[String]) -> Vec<Vec<u8>> {
    share.iter().map(|s| s.trim_end_matches('/').as_bytes().to_vec()).collect()
}

/// Each `[worktree] share` directory in the worktree: copied from the
/// checkout when it is not there yet or the checkout's lock files
/// changed since it was, said on the progress.
pub(super) fn share_dependencies(t: &Fixed<'_>) -> Result<(), RunError> {
    let share = &t.plan.config.worktree.share;
    let Some(checkout) = t.repo.workdir() else { return Ok(()) };
    if share.is_empty() {
        return Ok(());
    }
    let locks: Vec<(&str, Option<Vec<u8>>)> =
        LOCK_FILES.iter().map(|n| (*n, std::fs::read(checkout.join(n)).ok())).collect();
    let now = stamp(&locks);
    let stamp_file = t.store.task(&t.plan.id).path().join("shared.stamp");
    let before = std::fs::read_to_string(&stamp_file).unwrap_or_default();
    for dir in share {
        let rel = dir.trim_end_matches('/');
        let p = Path::new(rel);
        let plain =
            !rel.is_empty() && p.components().all(|c| matches!(c, std::path::Component::Normal(n) if n != ".git"));
        if !plain {
            return Err(RunError::Share(format!(
                "{dir:?} must be a directory of the repository, relative to its root (like \"node_modules\")"
            )));
        }
        if !t.repo.is_ignored(p) {
            return Err(RunError::Share(format!(
                "{rel} is not ignored by git; only ignored directories are shared (add it to .gitignore)"
            )));
        }
        let (src, dst) = (checkout.join(rel), t.wt.join(rel));
        if !src.is_dir() {
            continue;
        }
        if t.plan.confined == Effective::Namespaces {
            // The mount point of the read-only mount; empty, ignored.
            if std::fs::symlink_metadata(&dst).is_err() {
                std::fs::create_dir_all(&dst).map_err(|e| RunError::io(format!("cannot make {}", dst.display()), e))?;
            }
            continue;
        }
        let present = std::fs::symlink_metadata(&dst).is_ok_and(|m| m.is_dir());
        if present && before.trim() == now {
            continue;
        }
        if std::fs::symlink_metadata(&dst).is_ok() {
            crate::git::nofollow_fs::remove_any(&dst)
                .map_err(|e| RunError::io(format!("cannot remove the old copy of {rel}"), e))?;
        }
        let started = std::time::Instant::now();
        let how = copy_tree(&src, &dst).map_err(|e| {
            RunError::io(format!("[worktree] share: cannot copy {} into the worktree", src.display()), e)
        })?;
        t.progress.say(&format!(
            "shared {rel} from your checkout ({how}, {})",
            crate::text::human_ms(started.elapsed().as_millis() as u64)
        ));
    }
    if before.trim() != now && t.plan.confined != Effective::Namespaces {
        crate::record::store::write_file(&stamp_file, now.as_bytes())?;
    }
    Ok(())
}

/// The read-only mounts of `[worktree] share` for a confined process:
/// (the checkout's directory, the worktree's), where the agent runs in
/// its own namespaces and the checkout has the directory.
pub(super) fn shared_mounts(t: &Fixed<'_>) -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
    let Some(checkout) = t.repo.workdir() else { return Vec::new() };
    if t.plan.confined != Effective::Namespaces {
        return Vec::new();
    }
    kept(&t.plan.config.worktree.share)
        .iter()
        .map(|rel| std::path::Path::new(std::ffi::OsStr::from_bytes(rel)))
        .filter(|rel| checkout.join(rel).is_dir())
        .map(|rel| (checkout.join(rel), t.wt.join(rel)))
        .collect()
}

/// Copies the directory `src` to `dst` (which must not exist): symlinks
/// as symlinks, modes kept, each file by a reflink where the file system
/// can, else by its bytes. Says which it did.
pub(crate) fn copy_tree(src: &Path, dst: &Path) -> std::io::Result<&'static str> {
    let mut reflinked = true;
    copy_dir(src, dst, &mut reflinked)?;
    Ok(if reflinked { "reflinks" } else { "a copy" })
}

fn copy_dir(src: &Path, dst: &Path, reflinked: &mut bool) -> std::io::Result<()> {
    std::fs::create_dir(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let (from, to) = (entry.path(), dst.join(entry.file_name()));
        let meta = std::fs::symlink_metadata(&from)?;
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from)?, &to)?;
        } else if meta.is_dir() {
            copy_dir(&from, &to, reflinked)?;
        } else if meta.is_file() {
            if !reflink(&from, &to)? {
                *reflinked = false;
                std::fs::copy(&from, &to)?;
            }
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(meta.permissions().mode()))?;
        }
    }
    let mode = std::fs::symlink_metadata(src)?.permissions().mode();
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(mode))
}

/// A reflink of `from` at `to` (`FICLONE`); `false`, with nothing left at
/// `to`, where the file system cannot.
fn reflink(from: &Path, to: &Path) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let src = std::fs::File::open(from)?;
    let dst = std::fs::File::create(to)?;
    // SAFETY: both descriptors are open files we own for the call; FICLONE
    // takes the source descriptor as its argument and writes no memory.
    let r = unsafe { libc::ioctl(dst.as_raw_fd(), libc::FICLONE, src.as_raw_fd()) };
    if r == 0 {
        return Ok(true);
    }
    drop(dst);
    std::fs::remove_file(to)?;
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamp_changes_with_any_lock_file_and_only_then() {
        let a = stamp(&[("package-lock.json", Some(b"v1".to_vec())), ("uv.lock", None)]);
        assert_eq!(a, stamp(&[("package-lock.json", Some(b"v1".to_vec())), ("uv.lock", None)]));
        assert_ne!(a, stamp(&[("package-lock.json", Some(b"v2".to_vec())), ("uv.lock", None)]));
        assert_ne!(a, stamp(&[("package-lock.json", Some(b"v1".to_vec())), ("uv.lock", Some(Vec::new()))]));
    }

    #[test]
    fn the_prompt_names_what_is_mounted_read_only_and_says_nothing_otherwise() {
        assert_eq!(prompt_note(&[]), "");
        let one = prompt_note(&["node_modules".into()]);
        assert!(one.contains("`node_modules` in your worktree is the user's own") && one.contains("[worktree] share"));
        assert!(prompt_note(&["a".into(), "b".into()]).contains("`a`, `b` in your worktree are"));
    }

    #[test]
    fn kept_paths_are_relative_without_a_trailing_slash() {
        assert_eq!(kept(&["node_modules/".into(), ".venv".into()]), vec![b"node_modules".to_vec(), b".venv".to_vec()]);
    }
}
