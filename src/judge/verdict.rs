//! Verifier verdicts (docs/config.md, `[verifier]`), parsed. Pure.
//!
//! A verifier prints one JSON object. Text before it (a reviewer that logs
//! as it thinks) is tolerated when the object is the last non-empty line;
//! anything else is malformed and names what is wrong, so the loop can
//! record why the call did not count.

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Approved,
    NeedsChanges,
    /// The verifier could not judge: treated like a failed call.
    Retry,
    Escalate,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Approved => "approved",
            Kind::NeedsChanges => "needs_changes",
            Kind::Retry => "retry",
            Kind::Escalate => "escalate",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VerifierVerdict {
    pub kind: Kind,
    pub required_change: Option<String>,
    pub critique: Option<String>,
    /// 1.0 when the verifier gave none.
    pub confidence: f64,
}

/// A verifier's output that is not a verdict retry-run can act on: what
/// is wrong with it, in words the verifier's author can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{problem}")]
pub(crate) struct VerdictError {
    pub problem: String,
}

impl From<String> for VerdictError {
    fn from(problem: String) -> Self {
        VerdictError { problem }
    }
}

impl From<&str> for VerdictError {
    fn from(problem: &str) -> Self {
        VerdictError { problem: problem.to_string() }
    }
}

/// A verifier's pick among lanes: the lane and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pick {
    pub lane: u32,
    pub why: String,
}

/// Parses a verifier's standard output.
pub(crate) fn parse(stdout: &str) -> Result<VerifierVerdict, VerdictError> {
    let trimmed = stdout.trim();
    if trimmed.is_empty() {
        return Err("the verifier printed nothing; it must print one JSON verdict".into());
    }
    let value: Value = match serde_json::from_str(trimmed) {
        Ok(v) => v,
        Err(whole) => {
            let last = trimmed.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            serde_json::from_str(last.trim())
                .map_err(|_| format!("the verifier's output is not a JSON verdict ({whole})"))?
        }
    };
    let Value::Object(map) = value else {
        return Err("the verdict is not a JSON object".into());
    };
    let kind = match map.get("verdict") {
        Some(Value::String(s)) => match s.as_str() {
            "approved" => Kind::Approved,
            "needs_changes" => Kind::NeedsChanges,
            "retry" => Kind::Retry,
            "escalate" => Kind::Escalate,
            other => {
                return Err(format!("unknown verdict {other:?}: use approved, needs_changes, retry or escalate").into());
            }
        },
        Some(_) => return Err("\"verdict\" must be a string".into()),
        None => return Err("the verdict has no \"verdict\" field".into()),
    };
    let text = |key: &str| -> Result<Option<String>, VerdictError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(_) => Err(format!("\"{key}\" must be a string").into()),
        }
    };
    let required_change = text("required_change")?;
    let critique = text("critique")?;
    let confidence = match map.get("confidence") {
        None | Some(Value::Null) => 1.0,
        Some(Value::Number(n)) => match n.as_f64() {
            Some(c) if (0.0..=1.0).contains(&c) => c,
            _ => return Err(format!("\"confidence\" must be between 0.0 and 1.0, not {n}").into()),
        },
        Some(_) => return Err("\"confidence\" must be a number".into()),
    };
    if kind == Kind::NeedsChanges && required_change.is_none() && critique.is_none() {
        return Err("a needs_changes verdict must say what to change (required_change or critique)".into());
    }
    Ok(VerifierVerdict { kind, required_change, critique, confidence })
}

/// A verifier's pick among lanes (`run --lanes --choose all`): the
/// verdict's `lane`, one of `lanes`, and its `why`.
pub(crate) fn pick(stdout: &str, lanes: &[u32]) -> Result<Pick, VerdictError> {
    let trimmed = stdout.trim();
    let value: Value = serde_json::from_str(trimmed)
        .or_else(|_| serde_json::from_str(trimmed.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim()))
        .map_err(|e| format!("the verifier's output is not a JSON verdict ({e})"))?;
    let lane = value.get("lane").and_then(Value::as_u64).ok_or("the verdict names no `lane`")?;
    let lane = u32::try_from(lane).ok().filter(|l| lanes.contains(l)).ok_or_else(|| {
        let listed: Vec<String> = lanes.iter().map(u32::to_string).collect();
        format!("the verdict picks lane {lane}, not one of the lanes it was shown ({})", listed.join(", "))
    })?;
    let why = value.get("why").and_then(Value::as_str).unwrap_or("").trim().to_string();
    Ok(Pick { lane, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pick_names_one_of_the_lanes_shown() {
        let out = "thinking...\n{\"verdict\": \"approved\", \"lane\": 3, \"why\": \"it keeps the API\"}\n";
        assert_eq!(pick(out, &[1, 3]), Ok(Pick { lane: 3, why: "it keeps the API".into() }));
        assert!(
            pick("{\"lane\": 2}", &[1, 3]).unwrap_err().problem.contains("not one of the lanes it was shown (1, 3)")
        );
        assert!(pick("{\"verdict\": \"approved\"}", &[1]).unwrap_err().problem.contains("no `lane`"));
        assert!(pick("no json", &[1]).is_err());
    }

    #[test]
    fn valid_verdicts() {
        let v = parse(
            r#"{"verdict":"needs_changes","required_change":"Handle the empty list.","critique":"x","confidence":0.8}"#,
        )
        .unwrap();
        assert_eq!(v.kind, Kind::NeedsChanges);
        assert_eq!(v.required_change.as_deref(), Some("Handle the empty list."));
        assert_eq!(v.confidence, 0.8);
        let v = parse("thinking...\nlooks fine\n{\"verdict\": \"approved\"}\n").unwrap();
        assert_eq!((v.kind, v.confidence), (Kind::Approved, 1.0));
    }

    #[test]
    fn malformed_verdicts_say_what_is_wrong() {
        let cases = [
            ("", "printed nothing"),
            ("LGTM", "not a JSON verdict"),
            ("[1,2]", "not a JSON object"),
            ("{}", "no \"verdict\" field"),
            ("{\"verdict\": \"ok\"}", "unknown verdict \"ok\""),
            ("{\"verdict\": 1}", "must be a string"),
            ("{\"verdict\": \"approved\", \"confidence\": 1.5}", "between 0.0 and 1.0"),
            ("{\"verdict\": \"approved\", \"confidence\": \"high\"}", "must be a number"),
            ("{\"verdict\": \"needs_changes\"}", "must say what to change"),
            ("{\"verdict\": \"approved\", \"critique\": 3}", "\"critique\" must be a string"),
            ("{\"verdict\": \"appro", "not a JSON verdict"),
        ];
        for (text, want) in cases {
            let err = parse(text).expect_err(text);
            assert!(err.problem.contains(want), "{text:?}: {err}");
        }
    }
}
