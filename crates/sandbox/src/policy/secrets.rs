//! What no confined process may read: the credential stores beneath
//! `HOME`, and the other projects' secret files found beside the
//! repository.

use std::path::{Path, PathBuf};

use crate::expand;

/// What no confined process may read, beneath `HOME`: keys, cloud, forge
/// and registry credentials.
pub const SECRETS: [&str; 10] = [
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.config/gh",
    "~/.git-credentials",
    "~/.netrc",
    "~/.docker",
    "~/.kube",
    "~/.npmrc",
    "~/.pypirc",
];

/// The paths a confined process may not read: [`SECRETS`] and `extra`
/// (`sandbox.deny_read`, `--deny-read`), `~` expanded and relative ones
/// taken from `root`, and the other projects' secret files found beside
/// the repository at `root` and beneath `HOME` ([`other_secrets`]); those
/// that exist, symlinks resolved, sorted.
pub fn hidden_paths(extra: &[String], home: Option<&Path>, root: &Path) -> Vec<PathBuf> {
    let own = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let found: Vec<PathBuf> = other_secrets(home, root)
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        // A link beside the repository to a file of its own hides nothing.
        .filter(|p| !p.starts_with(&own) && !p.starts_with(root))
        .collect();
    let mut out: Vec<PathBuf> = SECRETS
        .iter()
        .map(|s| s.to_string())
        .chain(extra.iter().cloned())
        .filter_map(|raw| expand(&raw, home, root).ok())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .chain(found)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// How deep beneath each place it starts from [`other_secrets`] looks for
/// projects (a secret at `start/a/b/c/.env` is found, one level deeper not).
const DOT_ENV_DEPTH: usize = 4;

/// How many directories it reads at most, all its starting places together
/// (a bound on its cost).
const DOT_ENV_DIRS: usize = 5_000;

/// How many secret files it hides at most (each is a mount and Landlock
/// rules): the first found, nearest places first.
const SECRETS_FOUND: usize = 1_000;

/// Whether a file name is an environment file (`.env`, `.env.local`, ...).
pub fn is_dot_env(name: &str) -> bool {
    name == ".env" || name.starts_with(".env.")
}

/// Files of other projects (and other users' homes) that hold secrets, by
/// name, beside [`is_dot_env`]'s: login files of git, curl, npm and PyPI,
/// Google's client and service account files, SSH private keys.
pub const SECRET_FILES: [&str; 11] = [
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    "credentials.json",
    "application_default_credentials.json",
    "id_rsa",
    "id_ecdsa",
    "id_ed25519",
    "id_dsa",
];

/// Credential stores in a hidden directory of a project or another user's
/// home, relative to it: hidden whole (a directory) or as the one file.
pub const SECRET_STORES: [&str; 9] = [
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".docker/config.json",
    ".kube/config",
    ".terraform.d/credentials.tfrc.json",
];

/// What a directory's entry is, as its listing says (links not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

/// What the walk makes of one directory's listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Triage {
    /// Secrets, relative to the directory (`.env`, `.aws`,
    /// `.docker/config.json`); a store's file may not exist.
    pub secrets: Vec<String>,
    /// The directories to look into next.
    pub enter: Vec<String>,
}

/// The secrets among a directory's `entries` and the directories to enter
/// when it lies `depth` levels beneath where the walk started: files (not
/// links) named as [`is_dot_env`] or [`SECRET_FILES`] say, the
/// [`SECRET_STORES`] whose first directory is there; entered are the
/// directories not hidden (`.name`), not dependencies or build output
/// (`node_modules`, `target`, virtualenvs), above [`DOT_ENV_DEPTH`]. Pure.
pub fn triage(entries: &[(String, EntryKind)], depth: usize) -> Triage {
    const SKIP: [&str; 6] = ["node_modules", "target", "venv", ".venv", "__pycache__", "site-packages"];
    let mut t = Triage::default();
    for (name, kind) in entries {
        if *kind == EntryKind::File && (is_dot_env(name) || SECRET_FILES.contains(&name.as_str())) {
            t.secrets.push(name.clone());
        } else if *kind == EntryKind::Dir {
            let stores = SECRET_STORES.iter().filter(|s| s.split('/').next() == Some(name.as_str()));
            t.secrets.extend(stores.map(|s| s.to_string()));
            if depth + 1 < DOT_ENV_DEPTH && !name.starts_with('.') && !SKIP.contains(&name.as_str()) {
                t.enter.push(name.clone());
            }
        }
    }
    t
}

/// Where [`other_secrets`] starts, in this order: the parent directories
/// of the repository at `root`, nearest first, up to a child of `/` (`/`
/// itself never), then `home` when it is not one of them. A parent inside
/// a `.git` directory (a worktree in `.git/retry-run/worktrees/`) is
/// passed over: the checkout it belongs to is the first start; a world-writable directory with the sticky bit (`/tmp`,
/// `/var/tmp`: other programs' files that come and go) is not a start, nor
/// is any parent above it. `sticky` says which are. Pure.
pub fn walk_starts(root: &Path, home: Option<&Path>, sticky: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in root.ancestors().skip(1) {
        if dir.parent().is_none() || sticky(dir) {
            break;
        }
        let in_git = dir.components().any(|c| c.as_os_str() == ".git");
        if !in_git {
            out.push(dir.to_path_buf());
        }
    }
    if let Some(h) = home
        && !out.iter().any(|o| o == h)
        && h.parent().is_some()
    {
        out.push(h.to_path_buf());
    }
    out
}

/// The other projects' secret files beside the repository at `root` and
/// beneath `home`: from each of [`walk_starts`], breadth first, what
/// [`triage`] finds up to [`DOT_ENV_DEPTH`] levels down; the repository
/// and the other starting places are not entered from another one;
/// [`DOT_ENV_DIRS`] directories read and [`SECRETS_FOUND`] found at most,
/// all starts together. Nothing beneath `root`.
pub fn other_secrets(home: Option<&Path>, root: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let sticky = |d: &Path| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o1002 == 0o1002);
    let starts = walk_starts(root, home, sticky);
    let mut out = Vec::new();
    let mut read = 0;
    for start in &starts {
        let mut queue = std::collections::VecDeque::from([(start.clone(), 0usize)]);
        while let Some((dir, depth)) = queue.pop_front() {
            if read >= DOT_ENV_DIRS || out.len() >= SECRETS_FOUND {
                return out;
            }
            read += 1;
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            let entries: Vec<(String, EntryKind)> = rd
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    let kind = match e.file_type() {
                        Ok(k) if k.is_symlink() => EntryKind::Symlink,
                        Ok(k) if k.is_dir() => EntryKind::Dir,
                        Ok(k) if k.is_file() => EntryKind::File,
                        _ => EntryKind::Other,
                    };
                    Some((name, kind))
                })
                .collect();
            let t = triage(&entries, depth);
            // A link is never followed: one named `.env` that leads to
            // `/usr` would hide `/usr`.
            out.extend(t.secrets.iter().map(|s| dir.join(s)).filter(|p| {
                !p.starts_with(root)
                    && std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file() || m.file_type().is_dir())
            }));
            for name in t.enter {
                let next = dir.join(name);
                if next != root && !starts.contains(&next) && !root.starts_with(&next) {
                    queue.push_back((next, depth + 1));
                }
            }
        }
    }
    out.truncate(SECRETS_FOUND);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_directory_listing_hides_and_enters() {
        use EntryKind::*;
        let entries: Vec<(String, EntryKind)> = [
            (".env", File),
            (".env.production", File),
            (".envrc", File),
            ("env", File),
            (".netrc", File),
            ("credentials.json", File),
            ("id_ed25519", File),
            ("id_ed25519.pub", File),
            (".git-credentials", Symlink),
            (".aws", Dir),
            (".docker", Dir),
            (".config", Dir),
            (".git", Dir),
            ("src", Dir),
            ("node_modules", Dir),
            ("target", Dir),
            ("README.md", File),
        ]
        .into_iter()
        .map(|(n, k)| (n.to_string(), k))
        .collect();
        let t = triage(&entries, 0);
        assert_eq!(
            t.secrets,
            [
                ".env",
                ".env.production",
                ".netrc",
                "credentials.json",
                "id_ed25519",
                ".aws",
                ".docker/config.json",
                ".config/gcloud",
                ".config/gh"
            ]
        );
        assert_eq!(t.enter, ["src"]);
        assert_eq!(triage(&entries, DOT_ENV_DEPTH - 2).enter, ["src"]);
        assert!(triage(&entries, DOT_ENV_DEPTH - 1).enter.is_empty(), "no deeper than the bound");
        assert_eq!(triage(&entries, DOT_ENV_DEPTH - 1).secrets.len(), 9, "found at the last level still");
    }

    #[test]
    fn the_walk_starts_beside_the_repository_up_to_a_child_of_the_root() {
        let never = |_: &Path| false;
        let s = walk_starts(Path::new("/srv/work/app"), Some(Path::new("/home/u")), never);
        assert_eq!(s, [Path::new("/srv/work"), Path::new("/srv"), Path::new("/home/u")]);
        let s = walk_starts(Path::new("/home/u/src/app"), Some(Path::new("/home/u")), never);
        assert_eq!(s, [Path::new("/home/u/src"), Path::new("/home/u"), Path::new("/home")]);
        // The worktree inside the checkout's .git: its hidden parents passed over.
        let s = walk_starts(Path::new("/srv/app/.git/retry-run/worktrees/t"), None, never);
        assert_eq!(s, [Path::new("/srv/app"), Path::new("/srv")]);
        // Shared temporary directories stop it.
        let tmp = |d: &Path| d == Path::new("/var/tmp") || d == Path::new("/tmp");
        let s = walk_starts(Path::new("/var/tmp/x/work/app"), Some(Path::new("/var/tmp/x/home")), tmp);
        assert_eq!(s, [Path::new("/var/tmp/x/work"), Path::new("/var/tmp/x"), Path::new("/var/tmp/x/home")]);
        assert!(walk_starts(Path::new("/tmp/app"), None, tmp).is_empty());
        assert!(walk_starts(Path::new("/app"), Some(Path::new("/")), never).is_empty(), "never / itself");
    }

    #[test]
    fn other_projects_secrets_beside_the_repository_are_found_not_its_own() {
        let t = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(t.path()).expect("real path");
        let files = [
            "work/app/.env",
            "work/app/sub/.env",
            "work/billing/.env",
            "work/billing/.aws/credentials",
            "work/billing/svc/api/.env.local",
            "work/billing/a/b/c/d/.env",
            "work/billing/node_modules/x/.env",
            "work/.netrc",
            "other/deep/proj/credentials.json",
            "home/proj/.env",
            "home/notes.txt",
        ];
        for f in files {
            let p = base.join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "x").expect("write");
        }
        std::os::unix::fs::symlink("/usr", base.join("work/billing/.env.usr")).expect("link");
        let root = base.join("work/app");
        let found = other_secrets(Some(&base.join("home")), &root);
        let mut rel: Vec<String> =
            found.iter().filter_map(|p| p.strip_prefix(&base).ok()).map(|p| p.display().to_string()).collect();
        rel.sort();
        assert_eq!(
            rel,
            [
                "home/proj/.env",
                "other/deep/proj/credentials.json",
                "work/.netrc",
                "work/billing/.aws",
                "work/billing/.env",
                "work/billing/svc/api/.env.local",
            ],
            "{found:?}"
        );
        let hidden = hidden_paths(&[], Some(&base.join("home")), &root);
        assert!(hidden.contains(&base.join("work/billing/.env")) && !hidden.contains(&root.join(".env")));
        assert!(!hidden.iter().any(|h| h.starts_with("/usr")), "a link is not followed: {hidden:?}");
    }
}
