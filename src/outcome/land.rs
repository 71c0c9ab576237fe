//! `retry-run land`'s decisions, pure: whether a task's result may land
//! and why not, how the branch moves (straight onto a branch still at the
//! task's base, else a replay and the gates again), the landed commit's
//! parents and message with its trailers, the trailers read back from a
//! tip (to finish a land that was killed after the branch moved), and the
//! rejection a replay conflict becomes.

use crate::model::{LandHow, Landed};

/// Lines of conflicting hunks kept in the rejection's output.
pub(crate) const MAX_CONFLICT_LINES: usize = 200;

/// The trailers' keys.
pub(crate) const TASK_TRAILER: &str = "Retry-Run-Task";
pub(crate) const ATTEMPT_TRAILER: &str = "Retry-Run-Attempt";
pub(crate) const RECORD_TRAILER: &str = "Retry-Run-Record";

/// Why a task's result does not land: what to say, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LandRefusal {
    pub message: String,
    pub hint: String,
}

/// What the task's record says of its result: the attempt that is its
/// result, how its reviewers left it, and its latest land.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResultStanding<'a> {
    pub task: &'a str,
    pub result: Option<u32>,
    pub review: Option<&'static str>,
    pub landed: Option<&'a Landed>,
}

/// Why the result may not land, or `None` when it may: no result, a
/// result whose latest verdict is a rejection, a result that landed.
pub(crate) fn refuse(s: ResultStanding<'_>) -> Option<LandRefusal> {
    let task = s.task;
    let Some(n) = s.result else {
        return Some(LandRefusal {
            message: format!("task {task} has no result to land: its latest round did not succeed"),
            hint: format!(
                "`retry-run report {task}` shows why; `retry-run run --id {task} --again` starts a new round"
            ),
        });
    };
    if let Some(l) = s.landed.filter(|l| l.attempt == n) {
        return Some(LandRefusal {
            message: format!(
                "task {task}'s result (attempt {n}) already landed on {} as {} ({})",
                l.onto,
                short(&l.commit),
                l.how.as_str()
            ),
            hint: format!("`retry-run report {task}` shows the land"),
        });
    }
    if s.review == Some("rejected") {
        return Some(LandRefusal {
            message: format!("task {task}'s result (attempt {n}) was rejected by its latest review"),
            hint: format!("`retry-run run --id {task} --again` starts the round that answers it"),
        });
    }
    None
}

/// How a land goes, from where the branch stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LandRoute {
    /// The branch is still at the task's base: the gates ran on this base,
    /// the result lands as it is.
    Direct,
    /// The branch moved: the change is replayed onto its tip and every gate
    /// runs again there.
    Replay,
}

/// The route for a branch at `tip` and a task based on `base`.
pub(crate) fn route(base: &str, tip: &str) -> LandRoute {
    if base == tip { LandRoute::Direct } else { LandRoute::Replay }
}

/// How the branch is updated on `route`, `--merge` or not.
pub(crate) fn how(route: LandRoute, merge: bool) -> LandHow {
    match (route, merge) {
        (LandRoute::Direct, _) => LandHow::FastForward,
        (LandRoute::Replay, false) => LandHow::Squash,
        (LandRoute::Replay, true) => LandHow::Merge,
    }
}

/// The landed commit's parents: the tip, and for a merge the attempt's
/// commit too.
pub(crate) fn parents<T: Clone>(how: LandHow, tip: &T, attempt_commit: &T) -> Vec<T> {
    match how {
        LandHow::Merge => vec![tip.clone(), attempt_commit.clone()],
        _ => vec![tip.clone()],
    }
}

/// The landed commit's message: the task's title, a blank line and the
/// trailers naming the task, the attempt and the record's hash.
pub(crate) fn message(title: &str, task: &str, attempt: u32, record_sha256: &str) -> String {
    let title = title.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or(task);
    format!(
        "{title}\n\n{TASK_TRAILER}: {task}\n{ATTEMPT_TRAILER}: {attempt}\n{RECORD_TRAILER}: sha256:{record_sha256}\n"
    )
}

/// What a landed commit's trailers name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trailers {
    pub task: String,
    pub attempt: u32,
    pub record_sha256: String,
}

/// The trailers of a commit message, when it names a task and attempt
/// (in its last paragraph, as git's trailers are).
pub(crate) fn trailers(message: &str) -> Option<Trailers> {
    let last = message.trim_end().rsplit("\n\n").next()?;
    let value =
        |key: &str| last.lines().find_map(|l| l.strip_prefix(key)?.strip_prefix(':').map(|v| v.trim().to_string()));
    Some(Trailers {
        task: value(TASK_TRAILER)?,
        attempt: value(ATTEMPT_TRAILER)?.parse().ok()?,
        record_sha256: value(RECORD_TRAILER)
            .and_then(|v| v.strip_prefix("sha256:").map(str::to_string))
            .unwrap_or_default(),
    })
}

/// A tip whose message names `task` and `attempt`: a land of them moved
/// the branch and was killed before recording it.
pub(crate) fn landed_already(tip_message: &str, task: &str, attempt: u32) -> Option<Trailers> {
    trailers(tip_message).filter(|t| t.task == task && t.attempt == attempt)
}

/// How a land that moved the branch and was not recorded landed, from the
/// landed commit's parents.
pub(crate) fn how_it_landed(parents: &[String], base: &str) -> LandHow {
    match parents {
        [_, _, ..] => LandHow::Merge,
        [p] if p == base => LandHow::FastForward,
        _ => LandHow::Squash,
    }
}

/// The required change a replay conflict becomes.
pub(crate) fn conflict_required_change(branch: &str, paths: &[String]) -> String {
    format!("Rebase onto {branch} and resolve the conflicts in {}.", names(paths))
}

/// At most this many paths named in the required change; the rest counted.
const MAX_NAMES: usize = 5;

/// `a, b and c (and 3 more)`.
fn names(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(MAX_NAMES).map(String::as_str).collect();
    let mut s = match shown.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    };
    if paths.len() > MAX_NAMES {
        s.push_str(&format!(" (and {} more)", paths.len() - MAX_NAMES));
    }
    s
}

/// The conflicting hunks, conflict-marker style, each headed by its path,
/// at most `max` lines in all (the cut said).
pub(crate) fn conflict_output(hunks: &[(String, String)], max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cut = 0;
    for (path, text) in hunks {
        let mut lines = vec![format!("--- {path}")];
        let mut inside = false;
        let mut any = false;
        for l in text.lines() {
            if l.starts_with("<<<<<<<") {
                inside = true;
            }
            if inside {
                lines.push(l.to_string());
                any = true;
            }
            if l.starts_with(">>>>>>>") {
                inside = false;
            }
        }
        if !any {
            lines.extend(text.lines().map(str::to_string));
        }
        for l in lines {
            if out.len() < max {
                out.push(l);
            } else {
                cut += 1;
            }
        }
    }
    if cut > 0 {
        out.push(format!("[... {cut} more line{} of conflicts cut]", crate::text::plural(cut)));
    }
    out
}

/// The rejection's source, in words.
pub(crate) fn source(branch: &str) -> String {
    format!("land onto {branch}")
}

/// The command that starts the round that answers a land's rejection on
/// the branch's tip.
pub(crate) fn next_round(task: &str, branch: &str) -> String {
    format!("retry-run run --id {task} --again --refresh-base --base {branch}")
}

/// A pull request's body: the top of the task's report (`md`), up to its
/// attempts, and a line saying where the rest is.
pub(crate) fn pr_body(md: &str) -> String {
    let top = match md.find("\n## Attempts") {
        Some(i) => &md[..i],
        None => md,
    };
    format!("{}\n\n_The attempts, in full: `retry-run report`._\n", top.trim_end())
}

/// The first 12 characters of a commit id.
pub(crate) fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn landed(attempt: u32) -> Landed {
        Landed {
            onto: "main".into(),
            commit: "0123456789abcdef".into(),
            attempt,
            how: LandHow::Squash,
            ..Landed::default()
        }
    }

    #[test]
    fn what_may_not_land() {
        let l2 = landed(2);
        type Case<'a> = (Option<u32>, Option<&'static str>, Option<&'a Landed>, Option<&'a str>);
        let table: [Case<'_>; 7] = [
            (None, None, None, Some("has no result to land")),
            (Some(2), None, None, None),
            (Some(2), Some("approved"), None, None),
            (Some(2), Some("rejected"), None, Some("rejected by its latest review")),
            (Some(2), Some("landed"), Some(&l2), Some("already landed on main as 0123456789ab (squash)")),
            // An earlier round's land does not stop the new result.
            (Some(3), None, Some(&l2), None),
            (Some(3), Some("rejected"), Some(&l2), Some("rejected")),
        ];
        for (result, review, landed, want) in table {
            let got = refuse(ResultStanding { task: "t", result, review, landed });
            match (want, &got) {
                (None, None) => {}
                (Some(w), Some(r)) => assert!(r.message.contains(w), "{result:?} {review:?}: {}", r.message),
                _ => panic!("{result:?} {review:?}: {got:?}"),
            }
        }
        let hint =
            refuse(ResultStanding { task: "t", result: Some(1), review: Some("rejected"), landed: None }).unwrap().hint;
        assert!(hint.contains("retry-run run --id t --again"), "{hint}");
    }

    #[test]
    fn routes_and_how() {
        let table = [
            ("a", "a", false, LandRoute::Direct, LandHow::FastForward),
            ("a", "a", true, LandRoute::Direct, LandHow::FastForward),
            ("a", "b", false, LandRoute::Replay, LandHow::Squash),
            ("a", "b", true, LandRoute::Replay, LandHow::Merge),
        ];
        for (base, tip, merge, r, h) in table {
            assert_eq!(route(base, tip), r);
            assert_eq!(how(r, merge), h);
        }
        assert_eq!(parents(LandHow::FastForward, &1, &2), vec![1]);
        assert_eq!(parents(LandHow::Squash, &1, &2), vec![1]);
        assert_eq!(parents(LandHow::Merge, &1, &2), vec![1, 2]);
    }

    #[test]
    fn the_message_and_its_trailers_read_back() {
        let m = message("Fix the login\n", "fix-login", 3, "ab12");
        assert_eq!(
            m,
            "Fix the login\n\nRetry-Run-Task: fix-login\nRetry-Run-Attempt: 3\nRetry-Run-Record: sha256:ab12\n"
        );
        let t = trailers(&m).unwrap();
        assert_eq!((t.task.as_str(), t.attempt, t.record_sha256.as_str()), ("fix-login", 3, "ab12"));
        assert!(landed_already(&m, "fix-login", 3).is_some());
        assert!(landed_already(&m, "fix-login", 2).is_none());
        assert!(landed_already(&m, "other", 3).is_none());
        let table = [
            ("just a title", None),
            ("title\n\nRetry-Run-Task: x\n", None),
            ("title\n\nRetry-Run-Task: x\nRetry-Run-Attempt: two\n", None),
            ("title\n\nRetry-Run-Task: x\nRetry-Run-Attempt: 2\n", Some(("x", 2))),
            // Trailers count only in the last paragraph.
            ("t\n\nRetry-Run-Task: x\nRetry-Run-Attempt: 2\n\nmore words\n", None),
        ];
        for (msg, want) in table {
            let got = trailers(msg);
            assert_eq!(got.as_ref().map(|t| (t.task.as_str(), t.attempt)), want, "{msg:?}");
        }
        assert_eq!(message("", "t", 1, "h").lines().next(), Some("t"), "no title: the task's id");
    }

    #[test]
    fn the_pull_requests_body_is_the_reports_top() {
        let md =
            "# retry-run report: Fix\n\n- Task: `t`\n\n## Look at this first\n\nx\n\n## Attempts\n\n### Attempt 1\n";
        assert_eq!(
            pr_body(md),
            "# retry-run report: Fix\n\n- Task: `t`\n\n## Look at this first\n\nx\n\n_The attempts, in full: `retry-run report`._\n"
        );
        assert!(pr_body("# r\n").starts_with("# r\n\n_The"));
    }

    #[test]
    fn how_an_unrecorded_land_landed() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(how_it_landed(&s(&["base"]), "base"), LandHow::FastForward);
        assert_eq!(how_it_landed(&s(&["tip"]), "base"), LandHow::Squash);
        assert_eq!(how_it_landed(&s(&["tip", "attempt"]), "base"), LandHow::Merge);
    }

    #[test]
    fn a_conflict_becomes_a_required_change_and_bounded_hunks() {
        let paths = vec!["a.py".to_string(), "b/c.py".to_string()];
        assert_eq!(
            conflict_required_change("main", &paths),
            "Rebase onto main and resolve the conflicts in a.py and b/c.py."
        );
        let many: Vec<String> = (1..=7).map(|i| format!("f{i}")).collect();
        assert_eq!(
            conflict_required_change("dev", &many),
            "Rebase onto dev and resolve the conflicts in f1, f2, f3, f4 and f5 (and 2 more)."
        );
        assert_eq!(conflict_required_change("dev", &many[..1]), "Rebase onto dev and resolve the conflicts in f1.");
        let text = "keep\n<<<<<<< main\nx = 2\n=======\nx = 3\n>>>>>>> task\nafter\n";
        let out = conflict_output(&[("a.py".into(), text.into())], 100);
        assert_eq!(out, ["--- a.py", "<<<<<<< main", "x = 2", "=======", "x = 3", ">>>>>>> task"]);
        let out = conflict_output(&[("a.py".into(), text.into()), ("b.py".into(), "b.py: deleted on main".into())], 4);
        assert_eq!(out.len(), 5);
        assert_eq!(out[4], "[... 4 more lines of conflicts cut]");
        let out = conflict_output(&[("b.py".into(), "b.py: deleted on main, changed by the task\n".into())], 10);
        assert_eq!(out, ["--- b.py", "b.py: deleted on main, changed by the task"]);
        assert_eq!(next_round("t", "main"), "retry-run run --id t --again --refresh-base --base main");
    }
}
