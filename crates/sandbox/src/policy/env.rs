//! The environment of a confined process: it names the worktree, never the
//! user's checkout ([`away_from_checkout`]), and holds no credential but
//! those passed on purpose ([`credentials`]). Pure.

use std::path::{Path, PathBuf};

/// A variable of retry-run's environment as the processes of an attempt get
/// it: `value` is the new value, `None` when it is dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvChange {
    pub name: String,
    pub value: Option<String>,
}

/// Variables that say where a repository is: an attempt's processes work in
/// their own worktree, so the user's never reaches them.
const GIT_LOCATION: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
];

/// The environment names the worktree, never the checkout. Every variable
/// of `vars` whose value is a path into the user's checkout (any of
/// `checkouts`, the same directory by different names), or a `:`-list
/// holding such paths, is rewritten to the same path in `worktree` where
/// `exists` says it is there, and otherwise loses that path (and is
/// dropped when nothing is left); paths already in the worktree stay. The
/// git location variables are dropped; `PWD`, `OLDPWD` and `INIT_CWD` are
/// set for each process where it starts (`process`). Pure.
pub fn away_from_checkout(
    vars: &[(String, String)],
    checkouts: &[PathBuf],
    worktree: &Path,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<EnvChange> {
    let inside = |p: &Path, root: &Path| p.strip_prefix(root).ok().map(Path::to_path_buf);
    let moved = |part: &str| -> Option<Option<String>> {
        let p = Path::new(part);
        if !p.is_absolute() || inside(p, worktree).is_some() {
            return None;
        }
        let rel = checkouts.iter().find_map(|c| inside(p, c))?;
        let there = if rel.as_os_str().is_empty() { worktree.to_path_buf() } else { worktree.join(&rel) };
        Some(exists(&there).then(|| there.display().to_string()))
    };
    let mut out = Vec::new();
    for (name, value) in vars {
        if matches!(name.as_str(), "PWD" | "OLDPWD" | "INIT_CWD") {
            continue;
        }
        if GIT_LOCATION.contains(&name.as_str()) {
            out.push(EnvChange { name: name.clone(), value: None });
            continue;
        }
        let parts: Vec<&str> = value.split(':').collect();
        let changed: Vec<Option<Option<String>>> = parts.iter().map(|p| moved(p)).collect();
        if changed.iter().all(Option::is_none) {
            continue;
        }
        let kept: Vec<String> = parts
            .iter()
            .zip(changed)
            .filter_map(|(p, c)| match c {
                None => Some(p.to_string()),
                Some(new) => new,
            })
            .collect();
        let value = (!kept.is_empty()).then(|| kept.join(":"));
        out.push(EnvChange { name: name.clone(), value });
    }
    out
}

/// Whether a variable's name says it holds a credential: a token, secret,
/// password or private key, cloud and forge credentials, or the socket of
/// an SSH or GPG agent. An API key (`*_API_KEY`) is not among them: it is
/// what an agent talks to its model with. Pure.
pub fn looks_like_credential(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const EXACT: [&str; 6] = [
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
        "GH_TOKEN",
        "DOCKER_AUTH_CONFIG",
        "NETRC",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ];
    const PREFIX: [&str; 4] = ["AWS_", "GITHUB_", "AZURE_", "VAULT_"];
    const SUFFIX: [&str; 6] = ["_TOKEN", "_PASSWORD", "_PASSWD", "_PASSPHRASE", "_CREDENTIALS", "_PRIVATE_KEY"];
    EXACT.contains(&n.as_str())
        || PREFIX.iter().any(|p| n.starts_with(p))
        || SUFFIX.iter().any(|s| n.ends_with(s))
        || n.contains("SECRET")
}

/// The names among `vars` that look like credentials
/// ([`looks_like_credential`]), but for those `pass` names. Pure.
pub fn credentials(vars: &[(String, String)], pass: &[String]) -> Vec<String> {
    let mut names: Vec<String> = vars
        .iter()
        .map(|(k, _)| k)
        .filter(|k| looks_like_credential(k) && !pass.iter().any(|p| p == *k))
        .cloned()
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_names_the_worktree_never_the_checkout() {
        let checkout = PathBuf::from("/home/u/proj");
        let wt = PathBuf::from("/home/u/proj/.git/retry-run/worktrees/t");
        let in_worktree = ["src", "src/app"];
        let exists = |p: &Path| {
            p.strip_prefix(&wt).is_ok_and(|r| r.as_os_str().is_empty() || in_worktree.iter().any(|w| r == Path::new(w)))
        };
        let vars: Vec<(String, String)> = [
            ("PWD", "/home/u/proj"),
            ("OLDPWD", "/home/u"),
            ("HOME", "/home/u"),
            ("PROJECT", "/home/u/proj"),
            ("SRC", "/home/u/proj/src/app"),
            ("VIRTUAL_ENV", "/home/u/proj/.venv"),
            ("PATH", "/home/u/proj/.venv/bin:/usr/bin:/home/u/proj/src"),
            ("ONLY_VENV", "/home/u/proj/.venv/bin"),
            ("OTHER", "/home/u/project2/x"),
            ("ALREADY", "/home/u/proj/.git/retry-run/worktrees/t/src"),
            ("GIT_DIR", "/home/u/proj/.git"),
            ("GIT_WORK_TREE", "/elsewhere"),
            ("WORDS", "not a path"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let got = away_from_checkout(&vars, &[checkout], &wt, &exists);
        let w = wt.display();
        let want: Vec<EnvChange> = [
            ("PROJECT", Some(format!("{w}"))),
            ("SRC", Some(format!("{w}/src/app"))),
            ("VIRTUAL_ENV", None),
            ("PATH", Some(format!("/usr/bin:{w}/src"))),
            ("ONLY_VENV", None),
            ("GIT_DIR", None),
            ("GIT_WORK_TREE", None),
        ]
        .into_iter()
        .map(|(name, value)| EnvChange { name: name.to_string(), value })
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn credentials_are_hidden_but_for_those_passed() {
        let vars: Vec<(String, String)> = [
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "SSH_AUTH_SOCK",
            "DB_PASSWORD",
            "MY_SECRET_THING",
            "NPM_TOKEN",
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "HOME",
            "PATH",
            "TOKENIZERS_PARALLELISM",
        ]
        .iter()
        .map(|k| (k.to_string(), "x".to_string()))
        .collect();
        assert_eq!(
            credentials(&vars, &["NPM_TOKEN".to_string()]),
            [
                "AWS_PROFILE",
                "AWS_SECRET_ACCESS_KEY",
                "DB_PASSWORD",
                "GH_TOKEN",
                "GITHUB_TOKEN",
                "MY_SECRET_THING",
                "SSH_AUTH_SOCK"
            ]
        );
    }
}
