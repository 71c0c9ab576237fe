//! The names of the refs retry-run writes (docs/record.md, "Refs"), in one
//! place: every attempt's snapshot commit, a task's success branch, and
//! the record and lease a task shares through a remote.

/// `refs/retry-run/<task>/`: every ref of a task.
pub fn task_prefix(task: &str) -> String {
    format!("refs/retry-run/{task}/")
}

/// `refs/retry-run/<task>/<n>`: attempt `n`'s snapshot commit.
pub fn attempt(task: &str, n: u32) -> String {
    format!("refs/retry-run/{task}/{n}")
}

/// Whether `leaf` (the name under [`task_prefix`]) names an attempt.
pub fn is_attempt_leaf(leaf: &str) -> bool {
    leaf.parse::<u32>().is_ok()
}

/// `refs/retry-run/<task>/record`: the task's record as a commit.
pub fn record(task: &str) -> String {
    format!("refs/retry-run/{task}/record")
}

/// `refs/retry-run/<task>/lease`: who runs the task, through a remote.
pub fn lease(task: &str) -> String {
    format!("refs/retry-run/{task}/lease")
}

/// `retry-run/<task>`: the branch a task that succeeded leaves (under
/// `refs/heads/`).
pub fn success_branch(task: &str) -> String {
    format!("retry-run/{task}")
}

#[cfg(test)]
mod tests {
    use super::*;

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
