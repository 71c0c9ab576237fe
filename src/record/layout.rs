//! The layout of the record on disk (docs/record.md): every file name
//! under `<git-common-dir>/retry-run/tasks/<task>/` has its one place
//! here. Pure: paths are joined, never opened.
//!
//! ```text
//! tasks/<task>/
//!   events.jsonl  task.md  lock
//!   baseline/<base>/<check>.json, <check>.out
//!   attempts/<n>/
//!     prompt.md  context.json  manifest.json  attempt.json  agent.out
//!     verifier-<call>.out  checks/<check>.out  checks/<check>.rerun-<i>.out
//!     leftovers/  tmp/
//!   lands/<k>/                  (`retry-run land`'s gates on a replay)
//!     attempt.json  checks/<check>.out  base/<check>.out  tmp/
//! ```

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// A task's event log, relative to its directory (also its path in the
/// tree of the task's record ref).
pub(crate) const EVENTS: &str = "events.jsonl";
const TASK_MD: &str = "task.md";
const LOCK: &str = "lock";
const BASELINE: &str = "baseline";
const ATTEMPTS: &str = "attempts";
const TMP: &str = "tmp";
const LANDS: &str = "lands";

/// `tasks/<task>/`: one task's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskDir {
    path: PathBuf,
}

impl TaskDir {
    pub fn new(path: PathBuf) -> TaskDir {
        TaskDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `events.jsonl`: the event log.
    pub fn events(&self) -> PathBuf {
        self.path.join(EVENTS)
    }

    /// `task.md`: the task as given, front matter included.
    pub fn task_md(&self) -> PathBuf {
        self.path.join(TASK_MD)
    }

    /// `lock`: held by the run of this task.
    pub fn lock(&self) -> PathBuf {
        self.path.join(LOCK)
    }

    /// `baseline/<base>/`: the checks run on the base commit `base`.
    pub fn baseline_dir(&self, base: impl Display) -> PathBuf {
        self.path.join(BASELINE).join(base.to_string())
    }

    /// `baseline/<base>/<check>.json`: a check's result on the base, cached.
    pub fn baseline_cache(&self, base: impl Display, check: &str) -> PathBuf {
        self.baseline_dir(base).join(format!("{}.json", file_name(check)))
    }

    /// `baseline/<base>/<check>.out`: a check's output on the base.
    pub fn baseline_out(&self, base: impl Display, check: &str) -> PathBuf {
        self.baseline_dir(base).join(format!("{}.out", file_name(check)))
    }

    /// `choice/`: the verifier's choice among a task's lanes (`run --lanes
    /// --choose all`), its calls' output and TMPDIR, laid out as an
    /// attempt's.
    pub fn choice(&self) -> AttemptDir {
        AttemptDir { path: self.path.join("choice") }
    }

    /// `attempts/<n>/`: attempt `n`.
    pub fn attempt(&self, n: u32) -> AttemptDir {
        AttemptDir { path: self.path.join(ATTEMPTS).join(n.to_string()) }
    }

    /// `lands/`: the gates of each land that replayed the task's change.
    pub fn lands(&self) -> PathBuf {
        self.path.join(LANDS)
    }

    /// `lands/<k>/`: the `k`th replay's gates, laid out as an attempt's
    /// (`attempt.json`, `checks/<check>.out`, `tmp/`), with the checks on
    /// the branch's tip in `base/<check>.out`. Not an attempt of the task.
    pub fn land(&self, k: u32) -> AttemptDir {
        AttemptDir { path: self.lands().join(k.to_string()) }
    }

    /// Whether `rel`, a path relative to the task's directory, belongs to
    /// this machine only and is never shared (`push`): the lock and the
    /// attempts' private TMPDIRs (`attempts/<n>/tmp`), the task's and each
    /// of its lanes' (`lanes/<lane>/...`), the choice's TMPDIR, and a
    /// record file being written (`<name>.<pid>-<n>.tmp`).
    pub fn is_local(rel: &Path) -> bool {
        let parts: Vec<_> = rel.components().map(|c| c.as_os_str()).collect();
        let own = match parts.as_slice() {
            [l, _, rest @ ..] if *l == "lanes" => rest,
            all => all,
        };
        // A record file being written (`store::write_file`'s temporary).
        let writing = parts.last().is_some_and(|n| n.to_string_lossy().ends_with(".tmp"));
        writing
            || matches!(own, [l] if *l == LOCK)
            || matches!(own, [a, _, t] if *a == ATTEMPTS && *t == TMP)
            || matches!(parts.as_slice(), [l, _, t, ..] if *l == LANDS && *t == TMP)
            || matches!(parts.as_slice(), [c, t] if *c == "choice" && *t == TMP)
    }
}

/// `tasks/<task>/attempts/<n>/`: what one attempt received and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptDir {
    path: PathBuf,
}

impl AttemptDir {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `prompt.md`: the bytes the agent received.
    pub fn prompt(&self) -> PathBuf {
        self.path.join("prompt.md")
    }

    /// `context.json`: the structure the prompt was rendered from.
    pub fn context_json(&self) -> PathBuf {
        self.path.join("context.json")
    }

    /// `manifest.json`: the attempt's inputs, frozen.
    pub fn manifest(&self) -> PathBuf {
        self.path.join("manifest.json")
    }

    /// `attempt.json`: what the attempt did.
    pub fn attempt_json(&self) -> PathBuf {
        self.path.join("attempt.json")
    }

    /// `agent.out`: the head and tail of the agent's output.
    pub fn agent_out(&self) -> PathBuf {
        self.path.join("agent.out")
    }

    /// `verifier-<call>.out`: the output of the verifier's call `call`.
    pub fn verifier_out(&self, call: u32) -> PathBuf {
        self.path.join(format!("verifier-{call}.out"))
    }

    /// `checks/`: the output of every check.
    pub fn checks(&self) -> PathBuf {
        self.path.join("checks")
    }

    /// `checks/<check>.out`: a check's output.
    pub fn check_out(&self, check: &str) -> PathBuf {
        self.checks().join(format!("{}.out", file_name(check)))
    }

    /// `checks/<check>.rerun-<i>.out`: a failed check's output on rerun `i`.
    pub fn check_rerun_out(&self, check: &str, i: u32) -> PathBuf {
        self.checks().join(format!("{}.rerun-{i}.out", file_name(check)))
    }

    /// `self-checks/<run>/<check>.out`: a check's output in the agent's
    /// `run`th self-check (docs/mcp.md).
    pub fn self_check_out(&self, run: u32, check: &str) -> PathBuf {
        self.path.join("self-checks").join(run.to_string()).join(format!("{}.out", file_name(check)))
    }

    /// `leftovers/`: files the agent left that are not part of the change.
    pub fn leftovers(&self) -> PathBuf {
        self.path.join("leftovers")
    }

    /// `tmp/`: the attempt's private TMPDIR, removed when it ends.
    pub fn tmp(&self) -> PathBuf {
        self.path.join(TMP)
    }

    /// The names of the attempt's files and directories, sorted (none when
    /// the directory is missing).
    pub fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.path)
            .map(|rd| rd.flatten().filter_map(|e| e.file_name().into_string().ok()).collect())
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Every file under `checks/` (the checks' outputs and reruns), sorted.
    pub fn check_outputs(&self) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> =
            std::fs::read_dir(self.checks()).map(|rd| rd.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        files.sort();
        files
    }
}

/// A check's name as a file name: letters, digits, `-`, `_` and `.` kept,
/// anything else (a `/`, a space) replaced by `_`.
pub(crate) fn file_name(check: &str) -> String {
    check.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_files() {
        let t = TaskDir::new("/r/tasks/t".into());
        let cases: [(PathBuf, &str); 6] = [
            (t.events(), "/r/tasks/t/events.jsonl"),
            (t.task_md(), "/r/tasks/t/task.md"),
            (t.lock(), "/r/tasks/t/lock"),
            (t.baseline_dir("abc"), "/r/tasks/t/baseline/abc"),
            (t.baseline_cache("abc", "unit tests"), "/r/tasks/t/baseline/abc/unit_tests.json"),
            (t.baseline_out("abc", "lint"), "/r/tasks/t/baseline/abc/lint.out"),
        ];
        for (got, want) in cases {
            assert_eq!(got, Path::new(want));
        }
        assert_eq!(t.attempt(3).path(), Path::new("/r/tasks/t/attempts/3"));
    }

    #[test]
    fn attempt_files() {
        let a = TaskDir::new("/t".into()).attempt(2);
        let cases: [(PathBuf, &str); 11] = [
            (a.prompt(), "/t/attempts/2/prompt.md"),
            (a.context_json(), "/t/attempts/2/context.json"),
            (a.manifest(), "/t/attempts/2/manifest.json"),
            (a.attempt_json(), "/t/attempts/2/attempt.json"),
            (a.agent_out(), "/t/attempts/2/agent.out"),
            (a.verifier_out(1), "/t/attempts/2/verifier-1.out"),
            (a.checks(), "/t/attempts/2/checks"),
            (a.check_out("py/test"), "/t/attempts/2/checks/py_test.out"),
            (a.check_rerun_out("lint", 2), "/t/attempts/2/checks/lint.rerun-2.out"),
            (a.leftovers(), "/t/attempts/2/leftovers"),
            (a.tmp(), "/t/attempts/2/tmp"),
        ];
        for (got, want) in cases {
            assert_eq!(got, Path::new(want));
        }
    }

    #[test]
    fn check_names_as_file_names() {
        for (name, want) in [
            ("tests", "tests"),
            ("unit tests", "unit_tests"),
            ("a/b", "a_b"),
            ("../x", ".._x"),
            ("v1.2-rc_3", "v1.2-rc_3"),
            ("é", "_"),
        ] {
            assert_eq!(file_name(name), want, "{name:?}");
        }
    }

    #[test]
    fn local_only_paths() {
        for (rel, local) in [
            ("lock", true),
            ("attempts/1/tmp", true),
            ("attempts/12/tmp", true),
            ("events.jsonl", false),
            ("attempts/1/prompt.md", false),
            ("tmp", false),
            ("attempts/1/leftovers/tmp", false),
            ("baseline/lock", false),
            ("lanes/2/lock", true),
            ("lanes/2/attempts/3/tmp", true),
            ("lanes/2/events.jsonl", false),
            ("lanes/2/attempts/3/prompt.md", false),
            ("choice/tmp", true),
            ("choice/verifier-1.out", false),
            ("lanes/2/attempts/2/manifest.6707-17.tmp", true),
            ("lands/1/tmp", true),
            ("lands/1/tmp/objects/pack", true),
            ("lands/1/checks/pytest.out", false),
            ("lands/1/attempt.json", false),
            ("events.41-3.tmp", true),
        ] {
            assert_eq!(TaskDir::is_local(Path::new(rel)), local, "{rel}");
        }
    }
}
