//! Programs the sandbox runs outside the namespaces: found on `PATH`, and
//! run to their end with their output kept.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The programs named `name` in the directories of `path` (a `PATH`
/// value), in its order: each directory's `name` that is a regular file
/// (after symlinks) with an execute bit, which is what a shell would run;
/// an empty entry is the current directory. A name that is empty or holds
/// a `/` is not looked up: nothing is found.
pub fn programs_on_path<'a>(name: &'a str, path: &'a OsStr) -> impl Iterator<Item = PathBuf> + 'a {
    let looked_up = !name.is_empty() && !name.contains('/');
    std::env::split_paths(path).filter(move |_| looked_up).map(move |dir| dir.join(name)).filter(|p| is_program(p))
}

/// The program `name` on this process's `PATH` ([`programs_on_path`]);
/// `None` when it is not there, or `PATH` is unset.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    programs_on_path(name, &path).next()
}

/// Whether `p` is a regular file (after symlinks) with an execute bit.
fn is_program(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `program` run with `args` to its end, its output kept.
pub fn output<S: AsRef<OsStr>>(program: &Path, args: &[S]) -> std::io::Result<std::process::Output> {
    std::process::Command::new(program).args(args).output()
}
