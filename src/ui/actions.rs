//! The forms a task's page posts, read into exactly what `retry-run
//! review` and `retry-run land` are asked with: a review's
//! [`ReviewRequest`](crate::review::ReviewRequest) built as the command line builds it
//! (its channel the web view's), a land's
//! [`LandOptions`](crate::run::land::LandOptions). Pure.
//!
//! `POST /tasks/<id>/review`: `attempt` (empty: the task's result),
//! `verdict` (`approve` or `reject`), `required_change`, `critique`, and
//! per line comment `comment_path`, `comment_lines` (`L` or `L-M`) and
//! `comment_text`, repeated in that order (a row left blank is skipped).
//! `POST /tasks/<id>/land`: `onto` (empty: the current branch) and `merge`
//! (a checkbox). Both carry `token`.

use crate::model::Channel;
use crate::review::{CommentArg, Input, ReviewRequest};
use crate::run::land::LandOptions;

/// What is wrong with a review form, in the words the page shows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FormError {
    #[error("the attempt is a number, not {0:?}")]
    Attempt(String),
    #[error("each line comment needs its file, its lines and its text")]
    Comments,
    #[error("an approval carries no required change, critique or line comments: clear them, or reject")]
    ApprovalWithChanges,
    #[error("the verdict is approve or reject, not {0:?}")]
    Verdict(String),
}

/// The review form `form` posted for task `id`, or what is wrong with it.
pub(crate) fn review_request(id: &str, form: &[(String, String)]) -> Result<ReviewRequest, FormError> {
    // A browser sends a textarea's line ends as CRLF (the HTML standard's
    // form encoding); the record keeps the text as it was typed, as the
    // command line records it.
    let form: Vec<(String, String)> = form.iter().map(|(k, v)| (k.clone(), v.replace("\r\n", "\n"))).collect();
    let form = form.as_slice();
    let one = |k: &str| form.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v.as_str()).unwrap_or("");
    let all = |k: &str| form.iter().filter(|(key, _)| key == k).map(|(_, v)| v.as_str()).collect::<Vec<_>>();
    let attempt = match one("attempt").trim() {
        "" => None,
        n => Some(n.parse::<u32>().map_err(|_| FormError::Attempt(n.to_string()))?),
    };
    let (paths, lines, texts) = (all("comment_path"), all("comment_lines"), all("comment_text"));
    if paths.len() != lines.len() || paths.len() != texts.len() {
        return Err(FormError::Comments);
    }
    let comments: Vec<CommentArg> = paths
        .iter()
        .zip(&lines)
        .zip(&texts)
        .filter(|((p, l), t)| !(p.trim().is_empty() && l.trim().is_empty() && t.trim().is_empty()))
        .map(|((p, l), t)| CommentArg { spec: format!("{}:{}", p.trim(), l.trim()), text: t.to_string() })
        .collect();
    let required_change = one("required_change");
    let critique = Some(one("critique").to_string()).filter(|c| !c.trim().is_empty());
    let input = match one("verdict") {
        "approve" => {
            if !required_change.trim().is_empty() || critique.is_some() || !comments.is_empty() {
                return Err(FormError::ApprovalWithChanges);
            }
            Input::Approve
        }
        "reject" => Input::Reject { required_change: required_change.to_string(), critique, comments },
        v => return Err(FormError::Verdict(v.to_string())),
    };
    Ok(ReviewRequest { task: id.to_string(), attempt, by: None, input, config_path: None, channel: Channel::Ui })
}

/// The land form `form` posted for task `id`.
pub(crate) fn land_options(id: &str, form: &[(String, String)]) -> LandOptions {
    let one = |k: &str| form.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v.trim());
    LandOptions {
        task: id.to_string(),
        onto: one("onto").filter(|o| !o.is_empty()).map(str::to_string),
        merge: one("merge").is_some_and(|m| matches!(m, "on" | "true" | "1" | "yes")),
        push: None,
        pr: false,
        keep_branch: false,
        config_path: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(s: &str) -> Vec<(String, String)> {
        crate::ui::routes::pairs(s.as_bytes())
    }

    fn comment(spec: &str, text: &str) -> CommentArg {
        CommentArg { spec: spec.into(), text: text.into() }
    }

    #[test]
    fn review_forms_are_read_as_the_command_line_reads_its_flags() {
        let reject = |rc: &str, critique: Option<&str>, comments: Vec<CommentArg>| Input::Reject {
            required_change: rc.into(),
            critique: critique.map(str::to_string),
            comments,
        };
        type Want = Result<(Option<u32>, Input), &'static str>;
        let cases: Vec<(&str, Want)> = vec![
            ("token=t&verdict=approve", Ok((None, Input::Approve))),
            (
                "verdict=approve&attempt=2&required_change=&critique=+&comment_path=&comment_lines=&comment_text=",
                Ok((Some(2), Input::Approve)),
            ),
            ("verdict=approve&required_change=Fix+it", Err("an approval carries no")),
            ("verdict=approve&comment_path=a.py&comment_lines=3&comment_text=x", Err("an approval carries no")),
            (
                "verdict=reject&attempt=3&required_change=Retry+the+429&critique=It+swallows+it.%0A",
                Ok((Some(3), reject("Retry the 429", Some("It swallows it.\n"), vec![]))),
            ),
            ("verdict=reject&required_change=Do+it&critique=", Ok((None, reject("Do it", None, vec![])))),
            (
                "verdict=reject&required_change=R&comment_path=src/a.py&comment_lines=40-44&comment_text=hides+it&comment_path=&comment_lines=&comment_text=&comment_path=b.py&comment_lines=+7+&comment_text=%3Cscript%3E",
                Ok((
                    None,
                    reject("R", None, vec![comment("src/a.py:40-44", "hides it"), comment("b.py:7", "<script>")]),
                )),
            ),
            ("verdict=reject&required_change=R&comment_path=a.py&comment_lines=1", Err("each line comment needs")),
            ("verdict=reject&required_change=", Ok((None, reject("", None, vec![])))),
            ("verdict=maybe", Err("not \"maybe\"")),
            ("", Err("not \"\"")),
            ("verdict=approve&attempt=two", Err("the attempt is a number")),
            ("verdict=approve&attempt=-1", Err("the attempt is a number")),
        ];
        for (body, want) in cases {
            let got = review_request("fix-login", &form(body));
            match (got, want) {
                (Ok(r), Ok((attempt, input))) => {
                    assert_eq!((r.task.as_str(), r.attempt, &r.input), ("fix-login", attempt, &input), "{body}");
                    assert_eq!((r.by, r.config_path, r.channel), (None, None, Channel::Ui), "{body}");
                }
                (Err(e), Err(says)) => assert!(e.to_string().contains(says), "{body}: {e}"),
                (got, want) => panic!("{body}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn land_forms_are_read_as_the_command_line_reads_its_flags() {
        let cases = [
            ("token=t", None, false),
            ("onto=&merge=", None, false),
            ("onto=release-2.1&merge=on", Some("release-2.1"), true),
            ("onto=+main+", Some("main"), false),
        ];
        for (body, onto, merge) in cases {
            let o = land_options("fix-login", &form(body));
            assert_eq!((o.task.as_str(), o.onto.as_deref(), o.merge), ("fix-login", onto, merge), "{body}");
            assert_eq!((o.push, o.pr, o.keep_branch, o.config_path), (None, false, false, None), "{body}");
        }
    }
}
