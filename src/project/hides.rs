//! Paths a command relies on that a confined command does not see: in
//! its namespaces, `/tmp`, `/dev/shm` and `/run` are empty private
//! directories ([`PRIVATE`]), where only the
//! repository, the programs on `PATH` and the files a command's arguments
//! name stay visible. A virtualenv there whose `bin` is on `PATH` keeps
//! its `bin` but loses its `lib` (its Python runs without its packages:
//! "No module named ..."); a path inside a `sh -c` string is not seen at
//! all. Pure: what is on `PATH` is passed in.

use std::path::Path;

/// The directories a confined command gets empty and private in its
/// namespaces (the sandbox's own list).
pub(crate) const PRIVATE: [&str; 3] = ["/tmp", "/dev/shm", "/run"];

/// A path the sandbox hides from a command that relies on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hidden {
    pub path: String,
    /// The private directory it lies under (`/tmp`).
    pub under: &'static str,
    /// How the command relies on it, in words.
    pub what: &'static str,
}

impl Hidden {
    /// What happens and what to do, in a line.
    pub(crate) fn advice(&self) -> String {
        format!(
            "{} lies under {}, which the sandbox hides ({}): confined commands get an empty private {} \
             (in sandbox mode namespaces); move it out of {} (a virtualenv as the checkout's .venv), \
             or list it in `sandbox.writable` (it then becomes writable to them too)",
            self.path, self.under, self.what, self.under, self.under
        )
    }
}

/// The private directory `path` lies under, if it does.
fn under_private(path: &str) -> Option<&'static str> {
    PRIVATE.into_iter().find(|d| Path::new(path).starts_with(d))
}

/// The paths `run` (a `sh -c` command line) names and the virtualenvs of
/// `path_venvs` (those whose `bin` is on `PATH`) that lie under a private
/// directory, but for those beneath one of `kept` (the repository).
pub(crate) fn hidden(run: &str, path_venvs: &[String], kept: &[String]) -> Vec<Hidden> {
    let kept = |p: &str| kept.iter().any(|k| Path::new(p).starts_with(k));
    let mut out: Vec<Hidden> = Vec::new();
    let words = run.split_whitespace().map(|w| w.trim_matches(['\'', '"']));
    for w in words.filter(|w| w.starts_with('/')) {
        if let Some(under) = under_private(w)
            && !kept(w)
            && !out.iter().any(|h| h.path == w)
        {
            out.push(Hidden { path: w.to_string(), under, what: "named by the command" });
        }
    }
    for v in path_venvs {
        if let Some(under) = under_private(v)
            && !kept(v)
        {
            out.push(Hidden { path: v.clone(), under, what: "a virtualenv whose bin is on PATH" });
        }
    }
    out
}

/// What `run` says before the first attempt: each of `commands` (who
/// runs it, its command line: the checks, `worktree.setup`) that names a
/// path the sandbox hides, and each hidden virtualenv of `path_venvs`;
/// nothing when the sandbox is not asked for namespaces. `root` is the
/// repository, which stays visible.
pub(crate) fn warnings(
    namespaces: bool,
    commands: &[(String, String)],
    path_venvs: &[String],
    root: &str,
) -> Vec<String> {
    if !namespaces {
        return Vec::new();
    }
    let kept = [root.to_string()];
    let mut out = Vec::new();
    for (who, run) in commands {
        for h in hidden(run, &[], &kept) {
            out.push(format!("{who}: {}", h.advice()));
        }
    }
    out.extend(hidden("", path_venvs, &kept).iter().map(Hidden::advice));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_the_private_directories_are_named_with_what_to_do() {
        let venvs = vec!["/tmp/v".to_string(), "/home/u/.venv".to_string()];
        let h = hidden("/tmp/x/bin/python -m pytest '/run/user/s.sh' /home/u/ok", &venvs, &[]);
        let paths: Vec<(&str, &str)> = h.iter().map(|h| (h.path.as_str(), h.under)).collect();
        assert_eq!(paths, [("/tmp/x/bin/python", "/tmp"), ("/run/user/s.sh", "/run"), ("/tmp/v", "/tmp")]);
        assert!(h[2].advice().starts_with("/tmp/v lies under /tmp, which the sandbox hides (a virtualenv"));
        assert!(h[2].advice().contains("sandbox.writable"));
        // The repository stays visible where it lies; /tmpfoo is not /tmp.
        assert!(hidden("/tmp/repo/.venv/bin/python -m pytest /tmpfoo/x", &[], &["/tmp/repo".into()]).is_empty());
    }

    #[test]
    fn run_warns_of_each_command_naming_a_hidden_path_unless_namespaces_are_not_asked_for() {
        let commands = [
            ("check pytest".to_string(), "/tmp/v/bin/python -m pytest".to_string()),
            ("check ruff".to_string(), "ruff check".to_string()),
        ];
        let w = warnings(true, &commands, &["/tmp/w".into()], "/tmp/repo");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("check pytest: /tmp/v/bin/python lies under /tmp"), "{w:?}");
        assert!(w[1].starts_with("/tmp/w lies under /tmp"), "{w:?}");
        assert!(warnings(false, &commands, &["/tmp/w".into()], "/tmp/repo").is_empty());
    }
}
