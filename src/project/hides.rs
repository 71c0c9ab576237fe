//! Paths a command relies on that a confined command does not see: in
//! its namespaces, `/tmp`, `/dev/shm` and `/run` are empty private
//! directories ([`PRIVATE`]), where only the repository, retry-run's own
//! executables, the programs a command runs (through `PATH` too) with
//! their installations, and the files a command's arguments name stay
//! visible (`sandbox::launch::visible`). A data file or directory named inside a
//! `sh -c` string (`cat /tmp/x`) is not seen. Pure: whether a path is an
//! executable that stays visible is passed in.

use std::path::Path;

/// The directories a confined command gets empty and private in its
/// namespaces (the sandbox's own list).
pub(crate) use crate::sandbox::layers::namespaces::PRIVATE;

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

/// The paths `run` (a `sh -c` command line) names that lie under a
/// private directory, but for those beneath one of `kept` (the
/// repository) and the executables (`runs`), which stay visible.
pub(crate) fn hidden(run: &str, kept: &[String], runs: impl Fn(&str) -> bool) -> Vec<Hidden> {
    let kept = |p: &str| kept.iter().any(|k| Path::new(p).starts_with(k)) || runs(p);
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
    out
}

/// What `run` says before the first attempt: each of `commands` (who
/// runs it, its command line: the checks, `worktree.setup`) that names a
/// path the sandbox hides; nothing when the sandbox is not asked for
/// namespaces. `root` is the repository, which stays visible.
pub(crate) fn warnings(
    namespaces: bool,
    commands: &[(String, String)],
    root: &str,
    runs: impl Fn(&str) -> bool,
) -> Vec<String> {
    if !namespaces {
        return Vec::new();
    }
    let kept = [root.to_string()];
    let mut out = Vec::new();
    for (who, run) in commands {
        for h in hidden(run, &kept, &runs) {
            out.push(format!("{who}: {}", h.advice()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_under_the_private_directories_are_named_with_what_to_do() {
        let none = |_: &str| false;
        let h = hidden("/tmp/x/bin/python -m pytest '/run/user/s.sh' /home/u/ok", &[], none);
        let paths: Vec<(&str, &str)> = h.iter().map(|h| (h.path.as_str(), h.under)).collect();
        assert_eq!(paths, [("/tmp/x/bin/python", "/tmp"), ("/run/user/s.sh", "/run")]);
        assert!(h[1].advice().starts_with("/run/user/s.sh lies under /run, which the sandbox hides (named by"));
        assert!(h[1].advice().contains("sandbox.writable"));
        // The repository stays visible where it lies; /tmpfoo is not /tmp;
        // an executable stays visible (bound read-only).
        assert!(hidden("/tmp/repo/.venv/bin/python -m pytest /tmpfoo/x", &["/tmp/repo".into()], none).is_empty());
        assert!(hidden("/tmp/x/bin/python -m pytest", &[], |p| p == "/tmp/x/bin/python").is_empty());
    }

    #[test]
    fn run_warns_of_each_command_naming_a_hidden_path_unless_namespaces_are_not_asked_for() {
        let commands = [
            ("check pytest".to_string(), "python -m pytest /tmp/data/cases.json".to_string()),
            ("check ruff".to_string(), "ruff check".to_string()),
        ];
        let w = warnings(true, &commands, "/tmp/repo", |_| false);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("check pytest: /tmp/data/cases.json lies under /tmp"), "{w:?}");
        assert!(warnings(false, &commands, "/tmp/repo", |_| false).is_empty());
    }
}
