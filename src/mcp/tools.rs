//! The self-check tools as the agent sees them (names, descriptions, input
//! schemas) and a call's arguments read into a [`Call`]: pure, shared by
//! the server inside the sandbox (which lists them) and by the run outside
//! (which answers them and trusts nothing the agent sent).

use serde_json::{Map, Value, json};

pub(crate) const RUN_CHECKS: &str = "run_checks";
pub(crate) const PREVIOUS_ATTEMPTS: &str = "previous_attempts";
pub(crate) const TASK: &str = "task";

/// A tool: its name, what it does, and the JSON schema of its input.
pub(crate) struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: Value,
}

/// The three tools, in the order they are listed.
pub(crate) fn tools() -> Vec<Tool> {
    vec![
        Tool {
            name: RUN_CHECKS,
            description: "Run this task's gates on the worktree as it is now: the configured checks (judged against the base: new failures and failures already on the base told apart), the task's targets, test integrity and the scope. Returns pass or fail per gate and what went wrong, in the words the next attempt's prompt would use. Advisory: the real gates run again after you finish. Calls per attempt are capped; one at a time.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "checks": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Only these configured checks (by name); all of them when left out. The built-in gates always run."
                    }
                },
                "additionalProperties": false
            }),
        },
        Tool {
            name: PREVIOUS_ATTEMPTS,
            description: "What earlier attempts of this task did and why they failed: without arguments, the retry context your prompt holds; with `attempt`, that attempt in detail; with `diff: true`, its diff; with `check`, that check's whole digest.",
            input_schema: json!({
                "type": "object",
                "properties": {
                    "attempt": {"type": "integer", "minimum": 1, "description": "An earlier attempt's number."},
                    "diff": {"type": "boolean", "description": "The attempt's diff (needs `attempt`)."},
                    "check": {"type": "string", "description": "A check of the attempt, whose whole digest is returned (needs `attempt`)."}
                },
                "additionalProperties": false
            }),
        },
        Tool {
            name: TASK,
            description: "The task: its text, the tests it must make pass (targets), the paths it may write (the scope's allow and deny globs), and the gates that decide it and how (each check's baseline mode).",
            input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        },
    ]
}

/// A call, its arguments checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Call {
    RunChecks { checks: Vec<String> },
    PreviousAttempts { attempt: Option<u32>, diff: bool, check: Option<String> },
    Task,
}

/// Why a call is malformed, in words the agent can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CallError {
    #[error("the arguments of `{tool}` must be an object, not {kind}")]
    NotAnObject { tool: String, kind: &'static str },
    #[error("no tool `{tool}`: the tools are {RUN_CHECKS}, {PREVIOUS_ATTEMPTS} and {TASK}")]
    NoTool { tool: String },
    /// `takes`: the tool's arguments, or "none".
    #[error("`{tool}` takes no argument `{argument}` (its arguments: {takes})")]
    NoArgument { tool: String, argument: String, takes: String },
    /// An argument of the wrong type or value, or missing another.
    #[error("{0}")]
    Argument(String),
}

/// `tool` called with `arguments` (an object, or null for none), or why
/// the call is malformed.
pub(crate) fn parse(tool: &str, arguments: &Value) -> Result<Call, CallError> {
    let empty = Map::new();
    let args = match arguments {
        Value::Null => &empty,
        Value::Object(m) => m,
        other => return Err(CallError::NotAnObject { tool: tool.to_string(), kind: kind(other) }),
    };
    let known: &[&str] = match tool {
        RUN_CHECKS => &["checks"],
        PREVIOUS_ATTEMPTS => &["attempt", "diff", "check"],
        TASK => &[],
        _ => return Err(CallError::NoTool { tool: tool.to_string() }),
    };
    if let Some(k) = args.keys().find(|k| !known.contains(&k.as_str())) {
        let takes = if known.is_empty() { "none".to_string() } else { known.join(", ") };
        return Err(CallError::NoArgument { tool: tool.to_string(), argument: k.clone(), takes });
    }
    match tool {
        RUN_CHECKS => {
            let checks = match args.get("checks") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect::<Option<Vec<String>>>()
                    .ok_or_else(|| CallError::Argument("`checks` must be a list of check names (strings)".into()))?,
                Some(other) => {
                    return Err(CallError::Argument(format!(
                        "`checks` must be a list of check names, not {}",
                        kind(other)
                    )));
                }
            };
            Ok(Call::RunChecks { checks })
        }
        PREVIOUS_ATTEMPTS => {
            let attempt = match args.get("attempt") {
                None | Some(Value::Null) => None,
                Some(v) => {
                    Some(v.as_u64().and_then(|n| u32::try_from(n).ok()).filter(|n| *n > 0).ok_or_else(|| {
                        CallError::Argument(format!("`attempt` must be an attempt's number (1, 2, ...), not {v}"))
                    })?)
                }
            };
            let diff = match args.get("diff") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(CallError::Argument(format!("`diff` must be true or false, not {}", kind(other))));
                }
            };
            let check = match args.get("check") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => {
                    return Err(CallError::Argument(format!("`check` must be a check's name, not {}", kind(other))));
                }
            };
            if attempt.is_none() && (diff || check.is_some()) {
                return Err(CallError::Argument("`diff` and `check` need `attempt`: which attempt's".into()));
            }
            Ok(Call::PreviousAttempts { attempt, diff, check })
        }
        _ => Ok(Call::Task),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_read_with_their_arguments() {
        assert_eq!(parse("run_checks", &Value::Null), Ok(Call::RunChecks { checks: vec![] }));
        assert_eq!(
            parse("run_checks", &json!({"checks": ["lint"]})),
            Ok(Call::RunChecks { checks: vec!["lint".into()] })
        );
        assert_eq!(parse("task", &json!({})), Ok(Call::Task));
        assert_eq!(
            parse("previous_attempts", &json!({"attempt": 2, "diff": true})),
            Ok(Call::PreviousAttempts { attempt: Some(2), diff: true, check: None })
        );
    }

    #[test]
    fn malformed_calls_say_what_is_wrong() {
        let err = |t: &str, a: Value| parse(t, &a).expect_err("refused").to_string();
        assert!(err("rm_rf", json!({})).contains("no tool `rm_rf`"));
        assert!(err("run_checks", json!({"checks": "lint"})).contains("must be a list"));
        assert!(err("run_checks", json!({"checks": [1]})).contains("strings"));
        assert!(err("run_checks", json!({"cmd": "sh"})).contains("no argument `cmd`"));
        assert!(err("run_checks", json!([1])).contains("must be an object"));
        assert!(err("previous_attempts", json!({"attempt": 0})).contains("attempt's number"));
        assert!(err("previous_attempts", json!({"attempt": -1})).contains("attempt's number"));
        assert!(err("previous_attempts", json!({"diff": true})).contains("need `attempt`"));
        assert!(err("task", json!({"x": 1})).contains("takes no argument `x` (its arguments: none)"));
    }

    #[test]
    fn every_tool_has_an_object_schema() {
        for t in tools() {
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            assert!(parse(t.name, &json!({})).is_ok(), "{}", t.name);
        }
    }
}
