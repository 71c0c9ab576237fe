//! What stays visible beneath the private directories (`/tmp`, `/dev/shm`,
//! `/run`, which a confined process gets empty in its namespaces): the
//! programs a confined process runs must keep working wherever they are
//! installed. Kept read-only, never writable:
//!
//! - retry-run's own executables (the MCP command the agent is given, the
//!   supervisor), wherever the binary lives;
//! - the command's program, found through `PATH` as the shell would, and
//!   the executables a `sh -c` line names by absolute path;
//! - each `PATH` entry;
//! - for each of those that lies in a `bin` directory, the installation it
//!   belongs to (its parent: a virtualenv's `lib`, npm's `lib/node_modules`
//!   beside its `bin`), and a virtualenv's base interpreter (`home` in its
//!   `pyvenv.cfg`).
//!
//! A private directory itself is never kept whole (`/tmp/bin`'s parent is
//! `/tmp`: only `/tmp/bin` is kept). Only [`kept`] reads the filesystem;
//! the rules are pure.

use std::path::{Path, PathBuf};

use crate::layers::namespaces::PRIVATE;

/// Whether `p` lies strictly beneath one of the private directories.
fn beneath_private(p: &Path) -> bool {
    PRIVATE.iter().any(|d| p.starts_with(d) && p != Path::new(d))
}

/// The directories that hold a command's executables in an installation.
const BIN_DIRS: [&str; 3] = ["bin", ".bin", "Scripts"];

/// The installation that a program directory `dir` belongs to: its parent
/// when `dir` is a `bin` directory strictly beneath a private one. Pure.
pub fn installation_of(dir: &Path) -> Option<PathBuf> {
    let name = dir.file_name()?.to_str()?;
    let parent = dir.parent()?;
    (BIN_DIRS.contains(&name) && beneath_private(parent)).then(|| parent.to_path_buf())
}

/// The base interpreter's installation named by a `pyvenv.cfg` (its `home
/// = DIR` line, the directory of the Python the virtualenv was made
/// from). Pure.
pub fn venv_home(cfg: &str) -> Option<PathBuf> {
    cfg.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == "home").then(|| PathBuf::from(v.trim())).filter(|p| p.is_absolute())
    })
}

/// The absolute paths a `sh -c` line names, as words. Pure.
pub fn named_paths(line: &str) -> Vec<&str> {
    line.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '`'))
        .map(|w| w.trim_matches(['\'', '"']))
        .filter(|w| w.starts_with('/'))
        .collect()
}

/// Where `program` is found: itself when it holds a `/`, else the first
/// executable file of that name in `path`.
fn resolve(program: &str, path: &[PathBuf]) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    path.iter().map(|d| d.join(program)).find(|p| is_executable(p))
}

/// Whether `p` is an executable file here (what a confined command runs
/// keeps visible).
pub fn is_executable(p: impl AsRef<Path>) -> bool {
    let p = p.as_ref();
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What must stay readable beneath the private directories for `argv` to
/// run with `path` (the `PATH` it gets) and retry-run's executables
/// `own`. Paths elsewhere are returned too; the caller binds only those
/// beneath a private directory.
pub fn kept(argv: &[String], path: &[PathBuf], own: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = own.to_vec();
    let mut programs: Vec<PathBuf> = argv.first().and_then(|p| resolve(p, path)).into_iter().collect();
    // The files among the arguments, and the executables a shell line
    // names (`sh -c '/tmp/v/bin/python -m pytest'`).
    for a in argv.iter().skip(1) {
        if Path::new(a).is_absolute() && Path::new(a).exists() {
            out.push(PathBuf::from(a));
        }
        if argv.first().is_some_and(|p| p == "sh" || p.ends_with("/sh")) {
            programs.extend(named_paths(a).into_iter().map(PathBuf::from).filter(|p| is_executable(p)));
        }
    }
    let mut dirs: Vec<PathBuf> = path.to_vec();
    for p in programs {
        // The directory it is named in (a venv's `bin`, whose `python` is a
        // link out of it) and the one its links lead to.
        dirs.extend(p.parent().map(Path::to_path_buf));
        dirs.extend(std::fs::canonicalize(&p).ok().and_then(|c| c.parent().map(Path::to_path_buf)));
        out.push(p);
    }
    for d in dirs {
        if beneath_private(&d)
            && let Some(real) = std::fs::canonicalize(&d).ok().filter(|r| r != &d)
        {
            out.extend(with_installation(&real));
        }
        out.extend(with_installation(&d));
    }
    out.sort();
    out.dedup();
    out
}

/// `dir`, its installation and, for a virtualenv, its base interpreter's.
fn with_installation(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    if let Some(prefix) = installation_of(dir) {
        if let Some(home) = std::fs::read_to_string(prefix.join("pyvenv.cfg")).ok().as_deref().and_then(venv_home) {
            out.extend(installation_of(&home));
            out.push(home);
        }
        out.push(prefix);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bin_directory_beneath_a_private_one_keeps_its_installation_but_never_the_private_one() {
        assert_eq!(installation_of(Path::new("/tmp/v/bin")), Some(PathBuf::from("/tmp/v")));
        assert_eq!(installation_of(Path::new("/tmp/p/node_modules/.bin")), Some("/tmp/p/node_modules".into()));
        assert_eq!(installation_of(Path::new("/tmp/bin")), None);
        assert_eq!(installation_of(Path::new("/usr/local/bin")), None);
        assert_eq!(installation_of(Path::new("/tmp/v/lib")), None);
        assert_eq!(installation_of(Path::new("/tmpfoo/v/bin")), None);
    }

    #[test]
    fn a_virtualenv_names_its_base_interpreter_by_its_home_line() {
        let cfg = "home = /tmp/py/bin\ninclude-system-site-packages = false\nversion = 3.11.7\n";
        assert_eq!(venv_home(cfg), Some(PathBuf::from("/tmp/py/bin")));
        assert_eq!(venv_home("version = 3\n"), None);
        assert_eq!(venv_home("home = relative\n"), None);
    }

    #[test]
    fn a_shell_line_names_its_absolute_paths() {
        assert_eq!(
            named_paths("/tmp/v/bin/python -m pytest -q;cd x&&'/tmp/w/run' \"/run/a\" tests/ rel"),
            ["/tmp/v/bin/python", "/tmp/w/run", "/run/a"]
        );
    }

    #[test]
    fn a_virtualenv_under_tmp_is_kept_whole_with_its_base_interpreter() {
        let d = tempfile::tempdir_in("/tmp").expect("tempdir in /tmp");
        let base = d.path().join("py/bin");
        let venv = d.path().join("v");
        std::fs::create_dir_all(&base).expect("mkdir");
        std::fs::create_dir_all(venv.join("bin")).expect("mkdir");
        std::fs::write(venv.join("pyvenv.cfg"), format!("home = {}\n", base.display())).expect("cfg");
        let own = [PathBuf::from("/tmp/rr/retry-run")];
        let k = kept(&["sh".into(), "-c".into(), "python -m pytest".into()], &[venv.join("bin")], &own);
        for want in [venv.join("bin"), venv.clone(), base.clone(), d.path().join("py"), own[0].clone()] {
            assert!(k.contains(&want), "{want:?} not in {k:?}");
        }
        assert!(!k.iter().any(|p| p == Path::new("/tmp")), "{k:?}");
    }
}
