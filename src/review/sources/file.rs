//! A review file (docs/review-file.md): the JSON any forge, bot or CI job
//! may write for `retry-run review --from-file`. Pure: its text in, a draft
//! review or the first problem (its JSON path and what to do) out. Strict:
//! an unknown field is refused, so that a misspelt one is never dropped in
//! silence.

use serde_json::{Map, Value};

use crate::model::{Channel, LineComment, Review, Verdict};

/// The one version of the format.
pub(crate) const VERSION: u64 = 1;

const FIELDS: &[&str] =
    &["version", "verdict", "required_change", "critique", "by", "comments", "failures", "output", "source"];
const COMMENT_FIELDS: &[&str] = &["path", "start", "end", "text", "by"];

/// A problem of a review file: where (a JSON path, `$.comments[1].start`)
/// and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub at: String,
    pub what: String,
}

fn problem(at: impl Into<String>, what: impl Into<String>) -> Problem {
    Problem { at: at.into(), what: what.into() }
}

/// The draft review file `name` holds.
pub(crate) fn parse(text: &str, name: &str) -> Result<Review, Problem> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| problem("$", format!("not JSON: {e} (a review file is one JSON object; docs/review-file.md)")))?;
    let Value::Object(o) = v else { return Err(problem("$", format!("must be a JSON object, not {}", kind(&v)))) };
    unknown_fields(&o, FIELDS, "$")?;
    if let Some(v) = o.get("version") {
        match v.as_u64() {
            Some(VERSION) => {}
            _ => {
                return Err(problem(
                    "$.version",
                    format!("{v} is not a version this retry-run reads: it reads version {VERSION}"),
                ));
            }
        }
    }
    let verdict = match o.get("verdict") {
        None => return Err(problem("$.verdict", "missing: say \"approved\" or \"rejected\"")),
        Some(Value::String(s)) if s == "approved" => Verdict::Approved,
        Some(Value::String(s)) if s == "rejected" => Verdict::Rejected,
        Some(v) => return Err(problem("$.verdict", format!("{v} is not a verdict: say \"approved\" or \"rejected\""))),
    };
    let required_change = string(&o, "required_change", "$")?;
    let required_change = match (verdict, required_change) {
        (Verdict::Rejected, None) => {
            return Err(problem(
                "$.required_change",
                "missing: a rejection needs the one change the next round must make, as one imperative sentence",
            ));
        }
        (Verdict::Rejected, Some(s)) if s.trim().is_empty() => {
            return Err(problem(
                "$.required_change",
                "empty: a rejection needs the one change the next round must make, as one imperative sentence",
            ));
        }
        (Verdict::Rejected, Some(s)) if s.trim().contains(['\n', '\r']) => {
            return Err(problem(
                "$.required_change",
                "spans several lines: give one imperative sentence, and put the rest in \"critique\"",
            ));
        }
        (Verdict::Approved, Some(_)) => {
            return Err(problem(
                "$.required_change",
                "an approval has no required change: remove it, or make the verdict \"rejected\"",
            ));
        }
        (_, s) => s.map(|s| s.trim().to_string()),
    };
    let comments = match o.get("comments") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            items.iter().enumerate().map(|(i, c)| comment(c, &format!("$.comments[{i}]"))).collect::<Result<_, _>>()?
        }
        Some(v) => return Err(problem("$.comments", format!("must be an array of comments, not {}", kind(v)))),
    };
    let source = string(&o, "source", "$")?.filter(|s| !s.trim().is_empty()).unwrap_or_else(|| name.to_string());
    Ok(Review {
        verdict,
        by: string(&o, "by", "$")?.map(|s| s.trim().to_string()).unwrap_or_default(),
        channel: Channel::File,
        required_change,
        critique: string(&o, "critique", "$")?.filter(|s| !s.trim().is_empty()),
        comments,
        failures: strings(&o, "failures")?,
        output: strings(&o, "output")?,
        source: Some(source),
        ..Review::default()
    })
}

/// One line comment at `at`.
fn comment(v: &Value, at: &str) -> Result<LineComment, Problem> {
    let Value::Object(o) = v else {
        return Err(problem(at, format!("must be an object with path, start and text, not {}", kind(v))));
    };
    unknown_fields(o, COMMENT_FIELDS, at)?;
    let path = string(o, "path", at)?
        .ok_or_else(|| problem(format!("{at}.path"), "missing: the file, as `git diff` names it"))?;
    check_path(&path).map_err(|what| problem(format!("{at}.path"), what.to_string()))?;
    let start = line(o, "start", at)?
        .ok_or_else(|| problem(format!("{at}.start"), "missing: the first line the comment is on, counted from 1"))?;
    let end = line(o, "end", at)?.unwrap_or(start);
    if end < start {
        return Err(problem(
            format!("{at}.end"),
            format!("{end} is before start {start}: a comment is on lines start to end, end included"),
        ));
    }
    let text = string(o, "text", at)?
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| problem(format!("{at}.text"), "missing or empty: what the reviewer says of these lines"))?;
    let by = string(o, "by", at)?.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    Ok(LineComment { path, start, end, text, lines: Vec::new(), by })
}

/// Why a comment's path is not one git names.
#[derive(Debug, thiserror::Error)]
enum BadPath {
    #[error("empty: the file, as `git diff` names it")]
    Empty,
    #[error("{0:?} is absolute: give it relative to the repository's root, as `git diff` does")]
    Absolute(String),
    #[error("{0:?} is not a path as `git diff` names it (no `.`, `..` or empty parts)")]
    NotGitPath(String),
}

/// A path as git names it: relative, `/`-separated, without `.` or `..`.
fn check_path(path: &str) -> Result<(), BadPath> {
    if path.is_empty() {
        return Err(BadPath::Empty);
    }
    if path.starts_with('/') {
        return Err(BadPath::Absolute(path.to_string()));
    }
    if path.split('/').any(|p| p.is_empty() || p == "." || p == "..") {
        return Err(BadPath::NotGitPath(path.to_string()));
    }
    Ok(())
}

/// A line number (1 or more) at `o[key]`, when there.
fn line(o: &Map<String, Value>, key: &str, at: &str) -> Result<Option<u32>, Problem> {
    match o.get(key) {
        None => Ok(None),
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) if n >= 1 => Ok(Some(n)),
            _ => Err(problem(format!("{at}.{key}"), format!("{v} is not a line number: lines count from 1"))),
        },
    }
}

/// A string at `o[key]`, when there.
fn string(o: &Map<String, Value>, key: &str, at: &str) -> Result<Option<String>, Problem> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(problem(format!("{at}.{key}"), format!("must be a string, not {}", kind(v)))),
    }
}

/// An array of strings at `o[key]`, empty when not there.
fn strings(o: &Map<String, Value>, key: &str) -> Result<Vec<String>, Problem> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                v => Err(problem(format!("$.{key}[{i}]"), format!("must be a string, not {}", kind(v)))),
            })
            .collect(),
        Some(v) => Err(problem(format!("$.{key}"), format!("must be an array of strings, not {}", kind(v)))),
    }
}

/// The first field of `o` not in `known`.
fn unknown_fields(o: &Map<String, Value>, known: &[&str], at: &str) -> Result<(), Problem> {
    match o.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => {
            Err(problem(format!("{at}.{k}"), format!("unknown field; the fields here are {}", known.join(", "))))
        }
        None => Ok(()),
    }
}

/// What kind of JSON value `v` is, in words.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of docs/review-file.md parse as they say.
    #[test]
    fn the_documented_examples_parse() {
        let doc = include_str!("../../../docs/review-file.md");
        let blocks: Vec<&str> = doc.split("```json\n").skip(1).filter_map(|b| b.split("```").next()).collect();
        assert!(blocks.len() >= 2, "docs/review-file.md has its examples");
        for b in &blocks {
            parse(b, "review.json").unwrap_or_else(|p| panic!("{p:?} in\n{b}"));
        }
    }

    #[test]
    fn a_rejection_with_comments() {
        let r = parse(
            r#"{"verdict": "rejected", "required_change": " Retry the 429. ", "critique": "It is swallowed.\n",
                "by": "ci-bot", "comments": [{"path": "src/http.py", "start": 40, "end": 44, "text": "here", "by": "carol"},
                {"path": "src/a.py", "start": 3, "text": "one line"}], "failures": ["tests/t.py::t"], "output": ["1 failed"]}"#,
            "review.json",
        )
        .expect("a review");
        assert_eq!(r.verdict, Verdict::Rejected);
        assert_eq!(r.required_change.as_deref(), Some("Retry the 429."));
        assert_eq!(r.critique.as_deref(), Some("It is swallowed.\n"), "verbatim");
        assert_eq!(r.by, "ci-bot");
        assert_eq!(r.channel, Channel::File);
        assert_eq!(r.source.as_deref(), Some("review.json"));
        let c: Vec<(&str, u32, u32, Option<&str>)> =
            r.comments.iter().map(|c| (c.path.as_str(), c.start, c.end, c.by.as_deref())).collect();
        assert_eq!(c, [("src/http.py", 40, 44, Some("carol")), ("src/a.py", 3, 3, None)]);
        assert_eq!((r.failures.len(), r.output.len()), (1, 1));
    }

    #[test]
    fn an_approval() {
        let r = parse(r#"{"version": 1, "verdict": "approved", "source": "bot"}"#, "review.json").expect("a review");
        assert_eq!((r.verdict, r.required_change, r.source.as_deref()), (Verdict::Approved, None, Some("bot")));
        assert_eq!(r.by, "", "the reviewer is left to the caller");
    }

    #[test]
    fn bad_files_are_refused_at_their_json_path() {
        let cases: &[(&str, &str, &str)] = &[
            ("", "$", "not JSON"),
            ("[1]", "$", "must be a JSON object, not an array"),
            ("{}", "$.verdict", "missing"),
            (r#"{"verdict": "lgtm"}"#, "$.verdict", "\"lgtm\" is not a verdict"),
            (r#"{"verdict": true}"#, "$.verdict", "true is not a verdict"),
            (r#"{"verdict": "rejected"}"#, "$.required_change", "missing: a rejection needs"),
            (r#"{"verdict": "rejected", "required_change": "  "}"#, "$.required_change", "empty"),
            (r#"{"verdict": "approved", "required_change": "x"}"#, "$.required_change", "an approval has no"),
            (
                r#"{"verdict": "rejected", "required_change": "Do a.\nDo b."}"#,
                "$.required_change",
                "spans several lines",
            ),
            (r#"{"verdict": "approved", "requried_change": "x"}"#, "$.requried_change", "unknown field"),
            (r#"{"verdict": "approved", "version": 2}"#, "$.version", "reads version 1"),
            (r#"{"verdict": "approved", "critique": 3}"#, "$.critique", "must be a string, not a number"),
            (r#"{"verdict": "approved", "comments": {}}"#, "$.comments", "must be an array"),
            (r#"{"verdict": "approved", "comments": ["x"]}"#, "$.comments[0]", "must be an object"),
            (r#"{"verdict": "approved", "comments": [{"start": 1, "text": "t"}]}"#, "$.comments[0].path", "missing"),
            (
                r#"{"verdict": "approved", "comments": [{"path": "/etc/x", "start": 1, "text": "t"}]}"#,
                "$.comments[0].path",
                "absolute",
            ),
            (
                r#"{"verdict": "approved", "comments": [{"path": "a/../b", "start": 1, "text": "t"}]}"#,
                "$.comments[0].path",
                "no `.`, `..`",
            ),
            (r#"{"verdict": "approved", "comments": [{"path": "a", "text": "t"}]}"#, "$.comments[0].start", "missing"),
            (
                r#"{"verdict": "approved", "comments": [{"path": "a", "start": 0, "text": "t"}]}"#,
                "$.comments[0].start",
                "0 is not a line number",
            ),
            (
                r#"{"verdict": "approved", "comments": [{"path": "a", "start": -2, "text": "t"}]}"#,
                "$.comments[0].start",
                "-2 is not a line number",
            ),
            (
                r#"{"verdict": "approved", "comments": [{"path": "a", "start": 1.5, "text": "t"}]}"#,
                "$.comments[0].start",
                "1.5 is not a line number",
            ),
            (
                r#"{"verdict": "approved", "comments": [{"path": "a", "start": 9, "end": 3, "text": "t"}]}"#,
                "$.comments[0].end",
                "3 is before start 9",
            ),
            (
                r#"{"verdict": "approved", "comments": [{"path": "a", "start": 1}]}"#,
                "$.comments[0].text",
                "missing or empty",
            ),
            (
                r#"{"verdict": "approved", "comments": [{"path": "a", "start": 1, "text": "t", "line": 2}]}"#,
                "$.comments[0].line",
                "unknown field",
            ),
            (r#"{"verdict": "approved", "failures": [1]}"#, "$.failures[0]", "must be a string"),
            (r#"{"verdict": "approved", "output": "x"}"#, "$.output", "must be an array of strings"),
        ];
        for (text, at, what) in cases {
            let p = parse(text, "review.json").expect_err(text);
            assert_eq!(p.at, *at, "{text}: {p:?}");
            assert!(p.what.contains(what), "{text}: {p:?}");
        }
    }
}
