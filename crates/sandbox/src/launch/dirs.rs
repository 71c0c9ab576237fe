//! The private directories a confined command is given (its TMPDIR in the
//! fallback, the run directory of the proxy's socket and the status),
//! named so that one a sandbox left behind is known by its maker.

use std::path::{Path, PathBuf};

use super::ExecError;

/// A new directory of our own (mode 0700) under the temporary directory.
pub(super) fn private_tmpdir(what: &str) -> Result<PathBuf, ExecError> {
    // The proxy's socket lives in the `run` one: its path must stay short
    // (a UNIX socket's path has 108 bytes), whatever TMPDIR says.
    let base = if what == "run" { PathBuf::from("/tmp") } else { std::env::temp_dir() };
    private_dir_in(&base, what)
}

/// The outer process's `run` directory under namespaces (the proxy's
/// socket, the command's status, the inner log): in `/dev/shm`, a tmpfs
/// on most machines, where making and removing it costs a tenth of what
/// it costs on a disk's `/tmp` (0.1 ms against 0.01 here, ext4 with
/// `discard`); else in `/tmp`. Inside, the command has a `/dev/shm` of
/// its own and reaches this directory only at [`namespaces::RUN_DIR`],
/// where the inner process put its own files before Landlock closed it.
pub(super) fn run_dir() -> Result<PathBuf, ExecError> {
    private_dir_in(Path::new("/dev/shm"), "run").or_else(|_| private_tmpdir("run"))
}

/// A new directory of our own (mode 0700) in `base`, named for `what`.
pub(super) fn private_dir_in(base: &Path, what: &str) -> Result<PathBuf, ExecError> {
    use std::os::unix::fs::DirBuilderExt;
    let base = base.to_path_buf();
    for i in 0..100u32 {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let p = base.join(format!("retry-run-{what}-{}-{nanos}-{i}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => {
                return std::fs::canonicalize(&p).map_err(|source| ExecError::TmpDirUnresolved { path: p, source });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(ExecError::TmpDir { dir: base, source }),
        }
    }
    Err(ExecError::TmpDirTaken { dir: base })
}

/// The pid in the name of a directory [`private_dir_in`] made
/// (`retry-run-sandbox-<pid>-…`, `retry-run-run-<pid>-…`); `None` for any
/// other name. Pure.
pub fn maker_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("retry-run-sandbox-").or_else(|| name.strip_prefix("retry-run-run-"))?;
    let (pid, tail) = rest.split_once('-')?;
    let (nanos, n) = tail.split_once('-')?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    (digits(nanos) && digits(n)).then(|| pid.parse().ok()).flatten()
}

/// The directories a `retry-run sandbox` (the process every confined agent
/// and check runs in) made and could not remove because it was killed
/// (`kill -9`): in `/dev/shm`, `/tmp` and the temporary directory, named as
/// [`maker_of`] reads, this user's, real directories, whose maker is gone.
pub fn left_behind() -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let me = crate::sys::process::euid();
    let mut bases = vec![PathBuf::from("/dev/shm"), PathBuf::from("/tmp"), std::env::temp_dir()];
    bases.dedup();
    let mut found = Vec::new();
    for base in bases {
        let Ok(entries) = std::fs::read_dir(&base) else { continue };
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(maker_of) else { continue };
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.is_dir() && meta.uid() == me && !crate::sys::process::alive(pid) {
                found.push(path);
            }
        }
    }
    found
}

#[cfg(test)]
mod names {
    use super::maker_of;

    #[test]
    fn the_maker_of_a_directory_a_sandbox_left() {
        let cases = [
            ("retry-run-run-4242-123456789-0", Some(4242)),
            ("retry-run-sandbox-7-1-99", Some(7)),
            ("retry-run-run-4242-123456789", None),
            ("retry-run-run-x-1-0", None),
            ("retry-run-run-12-1-0-extra", None),
            ("retry-run-tmp-12-1-0", None),
            ("retry-run-it-ydUs8n", None),
            ("other", None),
        ];
        for (name, want) in cases {
            assert_eq!(maker_of(name), want, "{name}");
        }
    }
}
