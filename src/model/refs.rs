//! The names of the refs retry-run writes (docs/record.md, "Refs"), in one
//! place: every attempt's snapshot commit, a task's success branch, and
//! the record and lease a task shares through a remote.

/// `refs/retry-run/<task>/`: every ref of a task.
pub(crate) fn task_prefix(task: &str) -> String {
    format!("refs/retry-run/{task}/")
}

/// `refs/retry-run/<task>/<n>`: attempt `n`'s snapshot commit.
pub(crate) fn attempt(task: &str, n: u32) -> String {
    format!("refs/retry-run/{task}/{n}")
}

/// Whether `leaf` (the name under [`task_prefix`]) names an attempt.
pub(crate) fn is_attempt_leaf(leaf: &str) -> bool {
    leaf.parse::<u32>().is_ok()
}

/// `refs/retry-run/<task>/record`: the task's record as a commit.
pub(crate) fn record(task: &str) -> String {
    format!("refs/retry-run/{task}/record")
}

/// `refs/retry-run/<task>/lease`: who runs the task, through a remote.
pub(crate) fn lease(task: &str) -> String {
    format!("refs/retry-run/{task}/lease")
}

/// `retry-run/<task>`: the branch a task that succeeded leaves (under
/// `refs/heads/`).
pub(crate) fn success_branch(task: &str) -> String {
    format!("retry-run/{task}")
}

/// The record of lane `lane` of `task` (`run --lanes`): `<task>/lanes/<lane>`,
/// which names its directory under `tasks/` and its refs under
/// `refs/retry-run/`.
pub(crate) fn lane_record(task: &str, lane: u32) -> String {
    format!("{task}/lanes/{lane}")
}

/// The name of the worktree (and of git's directory for it) in which
/// `retry-run land` runs the task's checks on a replay: `<task>+land`
/// (a lane's is `<task>+<number>`, so the two never meet).
pub(crate) fn land_worktree(task: &str) -> String {
    format!("{task}+land")
}

/// The name of the worktree in which a run of `record` (a task's, or a
/// lane's) makes the base's full test runs aside while its first agent
/// works: `<task>+base`, a lane's `<task>+<lane>+base`.
pub(crate) fn base_worktree(record: &str) -> String {
    format!("{}+base", worktree_name(record))
}

/// A lane's record: its task, and its number among the task's lanes (from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LaneRecord<'a> {
    pub task: &'a str,
    pub lane: u32,
}

/// A lane's record named by [`lane_record`], as its task and lane.
pub(crate) fn parse_lane(record: &str) -> Option<LaneRecord<'_>> {
    let (task, lane) = record.split_once("/lanes/")?;
    lane.parse::<u32>().ok().filter(|l| *l >= 1 && lane == l.to_string()).map(|lane| LaneRecord { task, lane })
}

/// The directory name of a record's worktree (and of git's administrative
/// directory for it): the record itself for a task, `<task>+<lane>` for a
/// lane (`+` is never part of a task's name, so the two never meet).
pub(crate) fn worktree_name(record: &str) -> String {
    match parse_lane(record) {
        Some(LaneRecord { task, lane }) => format!("{task}+{lane}"),
        None => record.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_records_and_their_worktrees() {
        assert_eq!(lane_record("fix", 2), "fix/lanes/2");
        assert_eq!(parse_lane("fix/lanes/2"), Some(LaneRecord { task: "fix", lane: 2 }));
        assert_eq!(parse_lane("fix"), None);
        assert_eq!(parse_lane("fix/lanes/0"), None);
        assert_eq!(parse_lane("fix/lanes/02"), None);
        assert_eq!(worktree_name("fix/lanes/2"), "fix+2");
        assert_eq!(worktree_name("fix"), "fix");
        assert_eq!(worktree_name(&land_worktree("fix")), "fix+land");
        assert_eq!(worktree_name(&base_worktree("fix")), "fix+base");
        assert_eq!(worktree_name(&base_worktree("fix/lanes/2")), "fix+2+base");
        assert_eq!(attempt(&lane_record("fix", 2), 3), "refs/retry-run/fix/lanes/2/3");
    }

    #[test]
    fn names() {
        assert_eq!(attempt("fix-login", 2), "refs/retry-run/fix-login/2");
        assert!(attempt("t", 3).starts_with(&task_prefix("t")));
        assert_eq!(record("t"), "refs/retry-run/t/record");
        assert_eq!(lease("t"), "refs/retry-run/t/lease");
        assert_eq!(success_branch("t"), "retry-run/t");
        assert!(is_attempt_leaf("12") && !is_attempt_leaf("record") && !is_attempt_leaf("lease"));
    }
}
