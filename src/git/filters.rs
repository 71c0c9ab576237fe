//! What libgit2 cannot do for a checkout: filter drivers and sparse
//! checkouts, handed to the `git` program.
//!
//! libgit2 applies `text`, `eol`, `crlf` and `ident` on checkout and when
//! hashing a file, but runs no filter driver (`filter=<driver>` with
//! `filter.<driver>.clean`, `.smudge` or the long-running `.process`, as
//! git-lfs uses) and no `working-tree-encoding`; and it does not apply
//! sparse-checkout patterns. So, and only then:
//!
//! - a task worktree is checked out and reset by `git reset --hard`
//!   ([`GitCheckout`]), hooks off, with the user's sparse-checkout patterns
//!   when the user's checkout is sparse;
//! - a working-tree file that such a driver (or encoding) applies to is
//!   hashed by `git hash-object` into a scratch object directory
//!   ([`hash_with_git`]), which runs the clean filter as `git add` does;
//! - a driver the attributes name that is not configured, or whose program
//!   cannot be found, stops a run before its first attempt
//!   ([`Repo::check_filter_drivers`]).
//!
//! Whether any of this applies is decided from the attribute files'
//! text (a `filter=` or `working-tree-encoding=` anywhere in them) and the
//! config, never by looking attributes up path by path: a repository
//! without them keeps the fast paths.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use super::{GitError, Repo, ctx};

/// Variables of retry-run's environment that would point git elsewhere
/// than the directory it runs in.
const GIT_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
];

/// Runs `git <config> <args>` in `dir` (hooks off), `set` over the
/// environment, `stdin` as its input; its stdout, or an error naming
/// `what` with git's own message.
pub(super) fn run_git(
    dir: &Path,
    config: &[String],
    args: &[&OsStr],
    set: &[(&str, &OsStr)],
    stdin: Option<Vec<u8>>,
    what: &dyn Fn() -> String,
) -> Result<Vec<u8>, GitError> {
    let mut all: Vec<OsString> = vec!["-c".into(), "core.hooksPath=/dev/null".into()];
    all.extend(config.iter().map(OsString::from));
    all.extend(args.iter().map(|a| a.to_os_string()));
    let out = crate::process::output_with("git", &all, dir, set, GIT_ENV, stdin)
        .map_err(|e| GitError::GitProgram { what: what(), detail: format!("cannot start git: {e}") })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let detail = err.trim().lines().last().unwrap_or("failed").to_string();
        return Err(GitError::GitProgram { what: what(), detail });
    }
    Ok(out.stdout)
}

/// The user's sparse checkout, followed by task worktrees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Sparse {
    /// The text of `info/sparse-checkout`.
    patterns: Vec<u8>,
    /// `core.sparseCheckoutCone`.
    cone: bool,
}

/// A task worktree written by `git reset --hard` rather than libgit2:
/// filter drivers apply, or the user's checkout is sparse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GitCheckout {
    sparse: Option<Sparse>,
}

impl GitCheckout {
    /// The `-c` options of every git command in the worktree: sparse
    /// checkout as the user's, submodules not recursed into (as libgit2's
    /// checkout), no fsmonitor.
    fn config(&self) -> Vec<String> {
        let mut c = vec!["submodule.recurse=false".to_string(), "core.fsmonitor=false".to_string()];
        match &self.sparse {
            Some(s) => {
                c.push("core.sparseCheckout=true".into());
                c.push(format!("core.sparseCheckoutCone={}", s.cone));
            }
            None => c.push("core.sparseCheckout=false".into()),
        }
        c.into_iter().flat_map(|o| ["-c".to_string(), o]).collect()
    }

    /// The worktree at `path` (administrative directory `meta`) brought to
    /// `base` by `git reset --hard`: files git sees as changed or missing
    /// are written through the smudge filters, and the index follows;
    /// paths outside the sparse patterns are left out (skip-worktree).
    pub(super) fn reset_hard(&self, path: &Path, meta: &Path, base: Oid) -> Result<(), GitError> {
        if let Some(s) = &self.sparse {
            let info = meta.join("info");
            std::fs::create_dir_all(&info).map_err(|source| GitError::Io { path: info.clone(), source })?;
            let file = info.join("sparse-checkout");
            std::fs::write(&file, &s.patterns).map_err(|source| GitError::Io { path: file.clone(), source })?;
        }
        let base = base.to_string();
        let args: [&OsStr; 4] = ["reset".as_ref(), "-q".as_ref(), "--hard".as_ref(), base.as_ref()];
        run_git(path, &self.config(), &args, &[], None, &|| format!("{}: cannot check out {base}", path.display()))?;
        Ok(())
    }
}

impl Repo {
    /// The sparse checkout of the worktree retry-run runs from: its
    /// `info/sparse-checkout` when `core.sparseCheckout` is on (in its
    /// `config.worktree` or the repository's config).
    pub(super) fn sparse_checkout(&self) -> Option<Sparse> {
        let patterns = std::fs::read(self.git_dir().join("info").join("sparse-checkout")).ok()?;
        let worktree = git2::Config::open(&self.git_dir().join("config.worktree")).ok();
        let shared = self.repo.config().ok();
        let flag = |name: &str| {
            worktree.as_ref().and_then(|c| c.get_bool(name).ok()).or_else(|| shared.as_ref()?.get_bool(name).ok())
        };
        flag("core.sparseCheckout")
            .unwrap_or(false)
            .then(|| Sparse { patterns, cone: flag("core.sparseCheckoutCone").unwrap_or(false) })
    }

    /// How a task worktree whose `.gitattributes` files are `gitattributes`
    /// (path, blob) is checked out: by git (`Some`) when the user's
    /// checkout is sparse or an attribute names a filter driver or a
    /// working-tree encoding; by libgit2 or retry-run's own writers
    /// (`None`) otherwise. `attributes`: whether any attributes exist at
    /// all (else no blob is read).
    pub(super) fn git_checkout(
        &self,
        repo: &Repository,
        gitattributes: &[(Vec<u8>, Oid)],
        attributes: bool,
    ) -> Option<GitCheckout> {
        let sparse = self.sparse_checkout();
        let named = attributes && {
            let texts = self.attribute_texts(repo, gitattributes);
            let n = named(&texts);
            !n.drivers.is_empty() || n.encoding
        };
        (sparse.is_some() || named).then_some(GitCheckout { sparse })
    }

    /// Every attribute file that applies to a checkout whose
    /// `.gitattributes` are `gitattributes`: each with its name and text.
    fn attribute_texts(&self, repo: &Repository, gitattributes: &[(Vec<u8>, Oid)]) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        for (path, oid) in gitattributes {
            if let Ok(blob) = repo.find_blob(*oid) {
                out.push((String::from_utf8_lossy(path).into_owned(), blob.content().to_vec()));
            }
        }
        let mut files: Vec<PathBuf> = vec![self.common_dir().join("info").join("attributes")];
        if let Ok(config) = self.repo.config() {
            files.extend(config.get_path("core.attributesFile").ok());
        }
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")));
        files.extend(xdg.map(|d| d.join("git").join("attributes")));
        for f in files {
            if let Ok(text) = std::fs::read(&f) {
                out.push((f.display().to_string(), text));
            }
        }
        out
    }

    /// Stops a run before its first attempt when an attribute of `base`'s
    /// tree (or of the repository's or the user's attribute files) names a
    /// filter driver that is not configured, or whose program cannot be
    /// found: the attempts would work on content git would have converted.
    ///
    /// Which `.gitattributes` files a tree holds is kept in `listed`
    /// (`<dir>/<tree id>`, written once per tree): listing them reads every
    /// tree object of the base, which costs each run a few milliseconds on
    /// a large repository. A file there that does not read as such a list
    /// is ignored and written again.
    pub fn check_filter_drivers(&self, base: Oid, listed: Option<&Path>) -> Result<(), GitError> {
        let commit = self.repo.find_commit(base).map_err(ctx(|| format!("cannot read base commit {base}")))?;
        let tree = commit.tree().map_err(ctx(|| format!("cannot read the tree of {base}")))?;
        // One walk of the tree for its `.gitattributes`; the files are
        // listed only to name them in an error.
        let walk = |all: bool| -> Result<Vec<(Vec<u8>, Oid)>, GitError> {
            let mut found = Vec::new();
            tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
                if entry.kind() == Some(git2::ObjectType::Blob) && (all || entry.name_bytes() == b".gitattributes") {
                    found.push(([dir.as_bytes(), entry.name_bytes()].concat(), entry.id()));
                }
                git2::TreeWalkResult::Ok
            })
            .map_err(ctx(|| format!("cannot read the tree of {base}")))?;
            Ok(found)
        };
        let cached = listed.map(|dir| dir.join(tree.id().to_string()));
        let gitattributes = match cached.as_ref().and_then(|f| std::fs::read(f).ok()).and_then(|b| decode_listed(&b)) {
            Some(list) => list,
            None => {
                let list = walk(false)?;
                if let Some(f) = &cached {
                    // Only a speed-up: a cache that cannot be written is
                    // walked again next time.
                    write_listed(f, &encode_listed(&list));
                }
                list
            }
        };
        let texts = self.attribute_texts(&self.repo, &gitattributes);
        let named = named(&texts);
        if named.drivers.is_empty() {
            return Ok(());
        }
        let config = self.repo.config().map_err(ctx(|| "cannot read the repository's config".into()))?;
        let workdir = self.workdir().unwrap_or(self.common_dir()).to_path_buf();
        for (driver, patterns) in &named.drivers {
            let Some(problem) = driver_problem(&config, driver, &workdir) else { continue };
            let files: Vec<Vec<u8>> = walk(true)?.into_iter().map(|(p, _)| p).collect();
            let matching = matching_files(&patterns.iter().map(|p| p.1.clone()).collect::<Vec<_>>(), &files);
            let shown: Vec<String> = patterns.iter().map(|(f, p)| format!("{f}: {}", p.pattern)).collect();
            let mut paths = format!("attributes {}", shown.join(", "));
            if !matching.is_empty() {
                let more = matching.len().saturating_sub(5);
                let list: Vec<String> =
                    matching.iter().take(5).map(|p| String::from_utf8_lossy(p).into_owned()).collect();
                paths.push_str(&format!("; files {}", list.join(", ")));
                if more > 0 {
                    paths.push_str(&format!(" and {more} more"));
                }
            }
            return Err(GitError::FilterDriver { driver: driver.clone(), problem, paths });
        }
        Ok(())
    }
}

/// Why `driver` cannot run here, or `None` when it can: not configured at
/// all, or a command whose program is not found.
fn driver_problem(config: &git2::Config, driver: &str, workdir: &Path) -> Option<String> {
    let commands: Vec<(String, String)> = ["process", "clean", "smudge"]
        .iter()
        .filter_map(|k| {
            let key = format!("filter.{driver}.{k}");
            config.get_string(&key).ok().filter(|v| !v.trim().is_empty()).map(|v| (key, v))
        })
        .collect();
    if commands.is_empty() {
        return Some(format!("is not configured (no filter.{driver}.process, .clean or .smudge in the git config)"));
    }
    for (key, command) in &commands {
        let Some(program) = program_of(command) else { continue };
        if !program_exists(&program, workdir) {
            return Some(format!("cannot run: {key} is `{command}` and {program} is not found"));
        }
    }
    None
}

/// The program a shell command line starts: its first word after any
/// `NAME=value` assignments, when it is a plain word (else `None`: a shell
/// construct this does not judge).
fn program_of(command: &str) -> Option<String> {
    let word = command.split_whitespace().find(|w| !w.contains('=') || w.starts_with('='))?;
    word.chars().all(|c| c.is_ascii_alphanumeric() || "._-+/".contains(c)).then(|| word.to_string())
}

/// Whether `program` exists: a path (relative to the working tree, where git
/// runs filters) or a name on PATH.
fn program_exists(program: &str, workdir: &Path) -> bool {
    if program.contains('/') {
        return workdir.join(program).is_file();
    }
    crate::process::find_program(program).is_some()
}

/// One attribute line that names a driver.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    /// The directory of its `.gitattributes` (`""`: the root, or a file
    /// outside the tree).
    dir: Vec<u8>,
    pattern: String,
}

/// What attribute texts name: each filter driver with the lines (file,
/// pattern) that name it, and whether any sets `working-tree-encoding`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Named {
    drivers: BTreeMap<String, Vec<(String, Pattern)>>,
    encoding: bool,
}

/// Reads `filter=` and `working-tree-encoding=` out of attribute files
/// (name, text). Pure. A macro (`[attr]lfs filter=lfs ...`) counts as
/// naming its driver.
fn named(texts: &[(String, Vec<u8>)]) -> Named {
    let mut out = Named::default();
    for (file, text) in texts {
        let dir = file.strip_suffix(".gitattributes").map(|d| d.trim_end_matches('/')).unwrap_or("");
        let dir = if file.starts_with('/') { "" } else { dir };
        for line in String::from_utf8_lossy(text).lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let Some(pattern) = words.next() else { continue };
            for w in words {
                if let Some(driver) = w.strip_prefix("filter=").filter(|d| !d.is_empty()) {
                    let p = Pattern { dir: dir.as_bytes().to_vec(), pattern: pattern.to_string() };
                    out.drivers.entry(driver.to_string()).or_default().push((file.clone(), p));
                }
                if w.starts_with("working-tree-encoding=") {
                    out.encoding = true;
                }
            }
        }
    }
    out
}

/// The paths of `files` that one of `patterns` matches (gitignore-style
/// patterns, relative to their directory), in order.
fn matching_files(patterns: &[Pattern], files: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let root = Path::new("/");
    let mut sets = Vec::new();
    for p in patterns {
        if p.pattern.starts_with("[attr]") {
            continue;
        }
        let dir = root.join(OsStr::from_bytes(&p.dir));
        let mut b = ignore::gitignore::GitignoreBuilder::new(&dir);
        if b.add_line(None, &p.pattern).is_ok()
            && let Ok(gi) = b.build()
        {
            sets.push((p.dir.clone(), gi));
        }
    }
    files
        .iter()
        .filter(|f| {
            sets.iter().any(|(dir, gi)| {
                let inside = dir.is_empty() || f.starts_with(&[dir.as_slice(), b"/"].concat());
                inside && gi.matched_path_or_any_parents(root.join(OsStr::from_bytes(f)), false).is_ignore()
            })
        })
        .cloned()
        .collect()
}

/// Whether `rel`'s attributes hand its hashing to git: a `filter` naming a
/// driver that is configured (an unconfigured one passes content through,
/// as libgit2 does), or a `working-tree-encoding`.
pub(super) fn needs_git_hash(repo: &Repository, config: &git2::Config, rel: &Path) -> bool {
    let get = |name: &str| repo.get_attr_bytes(rel, name, git2::AttrCheckFlags::FILE_THEN_INDEX).ok().flatten();
    let configured = |d: &[u8]| {
        let d = String::from_utf8_lossy(d);
        ["process", "clean"].iter().any(|k| config.get_string(&format!("filter.{d}.{k}")).is_ok())
    };
    let driver = get("filter").is_some_and(|v| match git2::AttrValue::from_bytes(Some(v)) {
        git2::AttrValue::Bytes(d) => configured(d),
        git2::AttrValue::String(d) => configured(d.as_bytes()),
        _ => false,
    });
    driver
        || get("working-tree-encoding").is_some_and(|v| {
            matches!(git2::AttrValue::from_bytes(Some(v)), git2::AttrValue::String(_) | git2::AttrValue::Bytes(_))
        })
}

/// The files `paths` (relative to `workdir`) hashed as `git add` stores
/// them, clean filters run: each blob's id and bytes. git writes them into
/// a scratch object directory, removed afterwards, and nothing into the
/// repository's own object store (a clean filter may keep data of its own,
/// as git-lfs does under `.git/lfs`).
pub(super) fn hash_with_git(workdir: &Path, paths: &[Vec<u8>]) -> Result<Vec<(Oid, Vec<u8>)>, GitError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let scratch = scratch_dir()?;
    let result = (|| {
        let mut input = Vec::new();
        for p in paths {
            input.extend_from_slice(p);
            input.push(b'\n');
        }
        let args: [&OsStr; 3] = ["hash-object".as_ref(), "-w".as_ref(), "--stdin-paths".as_ref()];
        let set = [("GIT_OBJECT_DIRECTORY", scratch.as_os_str())];
        let what = || format!("{}: cannot hash files through their filters", workdir.display());
        let out = run_git(workdir, &[], &args, &set, Some(input), &what)?;
        let odb = git2::Odb::new().map_err(ctx(|| "cannot open the scratch objects".into()))?;
        odb.add_disk_alternate(&scratch.display().to_string())
            .map_err(ctx(|| format!("{}: cannot read the scratch objects", scratch.display())))?;
        let mut blobs = Vec::with_capacity(paths.len());
        for line in String::from_utf8_lossy(&out).lines() {
            let oid = Oid::from_str(line.trim()).map_err(ctx(|| format!("git hash-object printed {line:?}")))?;
            let obj = odb.read(oid).map_err(ctx(|| format!("cannot read blob {oid} git hashed")))?;
            blobs.push((oid, obj.data().to_vec()));
        }
        if blobs.len() != paths.len() {
            return Err(GitError::GitProgram {
                what: what(),
                detail: format!("hash-object named {} blobs for {} files", blobs.len(), paths.len()),
            });
        }
        Ok(blobs)
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// A fresh directory under the system's temporary directory.
fn scratch_dir() -> Result<PathBuf, GitError> {
    let base = std::env::temp_dir();
    for n in 0..100u32 {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!("retry-run-objects-{}-{nanos}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(GitError::Io { path: dir, source }),
        }
    }
    Err(GitError::Io { path: base, source: std::io::Error::other("cannot make a scratch directory") })
}

/// The `.gitattributes` files of a tree as the cache of
/// [`Repo::check_filter_drivers`] keeps them: a line per file, its blob id
/// and its path in hex (a path may hold any byte but NUL). Pure.
fn encode_listed(list: &[(Vec<u8>, Oid)]) -> Vec<u8> {
    let mut out = b"gitattributes 1\n".to_vec();
    for (path, oid) in list {
        out.extend_from_slice(format!("{oid} {}\n", crate::hash::hex(path)).as_bytes());
    }
    out
}

/// `bytes` written to `file` whole (a file beside it renamed over it), or
/// not at all: the cache of [`Repo::check_filter_drivers`] is only a
/// speed-up, walked again when it cannot be written.
fn write_listed(file: &Path, bytes: &[u8]) {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else { return };
    let mut tmp = name.to_os_string();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = dir.join(tmp);
    let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&tmp, bytes));
    if written.and_then(|()| std::fs::rename(&tmp, file)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// [`encode_listed`] read back; `None` for anything else. Pure.
fn decode_listed(bytes: &[u8]) -> Option<Vec<(Vec<u8>, Oid)>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let rest = text.strip_prefix("gitattributes 1\n")?;
    let mut out = Vec::new();
    for line in rest.split_terminator('\n') {
        let (oid, path) = line.split_once(' ')?;
        let oid = Oid::from_str(oid).ok().filter(|_| oid.len() == 40)?;
        out.push((crate::hash::unhex(path)?, oid));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_gitattributes_read_back_and_refuse_other_bytes() {
        let oid = Oid::from_str("0123456789abcdef0123456789abcdef01234567").unwrap();
        let list = vec![(b".gitattributes".to_vec(), oid), (b"a b/\n\xff/.gitattributes".to_vec(), oid)];
        assert_eq!(decode_listed(&encode_listed(&list)), Some(list));
        assert_eq!(decode_listed(&encode_listed(&[])), Some(vec![]));
        for bad in [&b""[..], b"gitattributes 2\n", b"gitattributes 1\nxyz 00\n", b"gitattributes 1\n0123 00\n"] {
            assert_eq!(decode_listed(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    fn texts(list: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        list.iter().map(|(f, t)| (f.to_string(), t.as_bytes().to_vec())).collect()
    }

    #[test]
    fn drivers_are_read_from_every_attribute_file_and_macro() {
        let n = named(&texts(&[
            (".gitattributes", "# comment\n*.bin filter=lfs diff=lfs -text\n*.txt text eol=lf\n"),
            ("docs/.gitattributes", "*.dat filter=up\n[attr]big filter=lfs\n"),
            ("/home/u/.config/git/attributes", "*.utf16 working-tree-encoding=UTF-16\n"),
        ]));
        assert_eq!(n.drivers.keys().collect::<Vec<_>>(), ["lfs", "up"]);
        assert_eq!(n.drivers["lfs"].len(), 2);
        assert_eq!(n.drivers["up"][0].1, Pattern { dir: b"docs".to_vec(), pattern: "*.dat".into() });
        assert!(n.encoding);
        let none = named(&texts(&[(".gitattributes", "*.sh text eol=lf\n*.x -filter\n* ident\n")]));
        assert_eq!(none, Named::default());
    }

    #[test]
    fn patterns_match_files_below_their_directory() {
        let patterns = [
            Pattern { dir: b"docs".to_vec(), pattern: "*.dat".into() },
            Pattern { dir: Vec::new(), pattern: "/top.bin".into() },
        ];
        let files: Vec<Vec<u8>> = ["a.dat", "docs/x.dat", "docs/deep/y.dat", "top.bin", "src/top.bin"]
            .iter()
            .map(|f| f.as_bytes().to_vec())
            .collect();
        let found = matching_files(&patterns, &files);
        assert_eq!(found, [b"docs/x.dat".to_vec(), b"docs/deep/y.dat".to_vec(), b"top.bin".to_vec()]);
    }

    #[test]
    fn the_program_of_a_command_line() {
        assert_eq!(program_of("git-lfs filter-process").as_deref(), Some("git-lfs"));
        assert_eq!(program_of("LC_ALL=C tr a-z A-Z").as_deref(), Some("tr"));
        assert_eq!(program_of("./tools/clean.sh %f").as_deref(), Some("./tools/clean.sh"));
        assert_eq!(program_of("f() { cat; }; f"), None);
    }
}
