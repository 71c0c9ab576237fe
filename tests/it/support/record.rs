//! What a run recorded, read back from the repository's
//! `.git/retry-run/tasks/<task>/`.

use std::path::Path;

use serde_json::Value;

/// The events of `task`'s log in the repository at `r`, parsed (none when
/// the log does not exist yet).
pub(crate) fn events(r: &Path, task: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{task}/events.jsonl"))).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// The events of type `kind` among `ev`.
pub(crate) fn of_type<'a>(ev: &'a [Value], kind: &str) -> Vec<&'a Value> {
    ev.iter().filter(|e| e["type"] == kind).collect()
}

/// `task`'s first event of type `kind` (null when there is none).
pub(crate) fn first(r: &Path, task: &str, kind: &str) -> Value {
    events(r, task).into_iter().find(|e| e["type"] == kind).unwrap_or(Value::Null)
}

/// The outcome of each of `task`'s completed attempts, in order.
pub(crate) fn outcomes(r: &Path, task: &str) -> Vec<String> {
    of_type(&events(r, task), "AttemptCompleted")
        .iter()
        .map(|e| e["outcome"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The `CheckFinished` event of `check` in `task`'s attempt `attempt` (null
/// when there is none).
pub(crate) fn check_event(r: &Path, task: &str, attempt: u64, check: &str) -> Value {
    let mine: Vec<Value> = events(r, task)
        .into_iter()
        .filter(|e| e["type"] == "CheckFinished" && e["attempt"] == attempt && e["check"] == check)
        .collect();
    // The check's full run, ahead of a run of the task's targets alone.
    let full = mine.iter().find(|e| e.get("part").is_none()).cloned();
    full.or_else(|| mine.into_iter().next()).unwrap_or(Value::Null)
}

/// The prompt attempt `n` of `task` received.
pub(crate) fn prompt(r: &Path, task: &str, n: u32) -> String {
    std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{task}/attempts/{n}/prompt.md"))).expect("prompt.md")
}
