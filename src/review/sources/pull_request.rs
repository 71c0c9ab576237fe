//! A GitHub pull request's reviews, review comments and checks, in the
//! shapes `gh` prints them, mapped onto a draft review. Pure.
//!
//! Read from two commands (docs/review-file.md says how they map):
//!
//! - `gh pr view N --json number,headRefOid,reviews,statusCheckRollup`:
//!   `reviews` are `{author: {login}, body, state, submittedAt}` with state
//!   `APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`, `DISMISSED` or `PENDING`,
//!   oldest first; `statusCheckRollup` holds check runs (`__typename`
//!   `CheckRun`: `name`, `workflowName`, `status`, `conclusion`,
//!   `detailsUrl`) and commit statuses (`StatusContext`: `context`,
//!   `state`, `targetUrl`).
//! - `gh api --paginate repos/{owner}/{repo}/pulls/N/comments`: the REST
//!   API's review comments, `{path, line, start_line, body, user: {login}}`,
//!   `line` null when the comment no longer applies to the diff (outdated)
//!   or is on the whole file. Without `--slurp`, older `gh` prints one
//!   array per page one after the other; newer `gh` merges them.

use serde::Deserialize;

use crate::context::required::name_list;
use crate::model::{Channel, LineComment, Review, Verdict};

/// What `gh pr view --json` is asked for.
pub(crate) const VIEW_FIELDS: &str = "number,headRefOid,reviews,statusCheckRollup";

/// `gh pr view N --json VIEW_FIELDS`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PullRequest {
    #[serde(default)]
    pub number: u64,
    #[serde(default)]
    pub head_ref_oid: String,
    #[serde(default)]
    pub reviews: Vec<PrReview>,
    /// `null` when the head commit has no checks.
    #[serde(default)]
    pub status_check_rollup: Option<Vec<CheckContext>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Author {
    #[serde(default)]
    pub login: String,
}

/// One review of the pull request.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PrReview {
    /// `null` for a deleted account.
    #[serde(default)]
    pub author: Option<Author>,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub state: String,
}

/// A check run or a commit status of the head commit.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CheckContext {
    #[serde(default, rename = "__typename")]
    pub typename: String,
    // CheckRun
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub workflow_name: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub conclusion: String,
    #[serde(default)]
    pub details_url: String,
    // StatusContext
    #[serde(default)]
    pub context: String,
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub target_url: String,
}

/// A review comment of the REST API.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct ReviewComment {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub line: Option<u32>,
    #[serde(default)]
    pub start_line: Option<u32>,
    #[serde(default)]
    pub body: String,
    #[serde(default)]
    pub user: Option<Author>,
}

/// What a check says of the head commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CheckState {
    Failed,
    Pending,
    Fine,
}

impl CheckContext {
    fn shown_name(&self) -> &str {
        if self.typename == "StatusContext" || self.name.is_empty() { &self.context } else { &self.name }
    }

    fn state(&self) -> CheckState {
        if self.typename == "StatusContext" {
            return match self.state.as_str() {
                "FAILURE" | "ERROR" => CheckState::Failed,
                "PENDING" | "EXPECTED" => CheckState::Pending,
                _ => CheckState::Fine,
            };
        }
        if self.status != "COMPLETED" {
            return CheckState::Pending;
        }
        match self.conclusion.as_str() {
            "FAILURE" | "TIMED_OUT" | "STARTUP_FAILURE" | "ACTION_REQUIRED" => CheckState::Failed,
            _ => CheckState::Fine,
        }
    }

    /// `CI / test failed (timed out): URL`.
    fn failure(&self) -> String {
        let name = match self.workflow_name.as_str() {
            "" => self.shown_name().to_string(),
            w => format!("{w} / {}", self.shown_name()),
        };
        let how = if self.typename == "StatusContext" { &self.state } else { &self.conclusion };
        let how = how.to_lowercase().replace('_', " ");
        let url = if self.typename == "StatusContext" { &self.target_url } else { &self.details_url };
        let url = if url.is_empty() { String::new() } else { format!(": {url}") };
        format!("check `{name}` failed ({how}){url}")
    }
}

/// Why a pull request gives nothing to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Nothing(pub String);

/// The login of `a`, `ghost` for a deleted account (as GitHub shows it).
fn login(a: &Option<Author>) -> String {
    a.as_ref().map(|a| a.login.clone()).filter(|l| !l.is_empty()).unwrap_or_else(|| "ghost".into())
}

/// A review comment on lines of the diff, as a line comment of the review.
fn line_comment(c: &ReviewComment) -> LineComment {
    let end = c.line.unwrap_or_default();
    LineComment {
        path: c.path.clone(),
        start: c.start_line.filter(|s| *s <= end).unwrap_or(end),
        end,
        text: c.body.clone(),
        lines: Vec::new(),
        by: Some(login(&c.user)),
    }
}

/// The critique: what the reviewers who requested changes, those who
/// commented, and the comments on no line of the diff said, each with who
/// said it; one change request alone is kept as it was written.
fn critique(changes: &[&PrReview], remarks: &[&PrReview], off_lines: &[&ReviewComment]) -> Option<String> {
    let mut parts: Vec<(String, &str)> = Vec::new();
    for r in changes {
        parts.push((format!("{} requested changes", login(&r.author)), r.body.as_str()));
    }
    for r in remarks {
        parts.push((format!("{} commented", login(&r.author)), r.body.as_str()));
    }
    for c in off_lines {
        parts.push((format!("{} on `{}` (not on a line of the diff)", login(&c.user), c.path), c.body.as_str()));
    }
    parts.retain(|(_, body)| !body.trim().is_empty());
    let attributed = |parts: &[(String, &str)]| -> Vec<String> {
        parts.iter().map(|(who, body)| format!("{who}:\n\n{body}")).collect()
    };
    match (changes, parts.as_slice()) {
        (_, []) => None,
        // One change request is kept as it was written, what others said
        // after it.
        ([one], [_, rest @ ..]) if !one.body.trim().is_empty() => {
            Some([vec![one.body.clone()], attributed(rest)].concat().join("\n\n"))
        }
        (_, all) => Some(attributed(all).join("\n\n")),
    }
}

/// The draft review pull request `pr` with review comments `comments`
/// gives: rejected when a reviewer still requests changes, a check failed,
/// or (with no approval) someone commented; approved when someone approved
/// and nothing of that holds.
pub(crate) fn review_of(pr: &PullRequest, comments: &[ReviewComment]) -> Result<Review, Nothing> {
    // Each reviewer's standing verdict: their latest approval or request
    // for changes, unless dismissed since.
    let mut standing: Vec<(String, &str)> = Vec::new();
    for r in &pr.reviews {
        let who = login(&r.author);
        if matches!(r.state.as_str(), "APPROVED" | "CHANGES_REQUESTED" | "DISMISSED") {
            standing.retain(|(w, _)| *w != who);
            standing.push((who, r.state.as_str()));
        }
    }
    let requesting: Vec<&str> =
        standing.iter().filter(|(_, s)| *s == "CHANGES_REQUESTED").map(|(w, _)| w.as_str()).collect();
    let approving: Vec<&str> = standing.iter().filter(|(_, s)| *s == "APPROVED").map(|(w, _)| w.as_str()).collect();
    let changes: Vec<&PrReview> = pr
        .reviews
        .iter()
        .filter(|r| r.state == "CHANGES_REQUESTED" && requesting.contains(&login(&r.author).as_str()))
        .collect();
    let remarks: Vec<&PrReview> =
        pr.reviews.iter().filter(|r| r.state == "COMMENTED" && !r.body.trim().is_empty()).collect();
    let checks = pr.status_check_rollup.as_deref().unwrap_or_default();
    let failed: Vec<&CheckContext> = checks.iter().filter(|c| c.state() == CheckState::Failed).collect();
    let pending = checks.iter().filter(|c| c.state() == CheckState::Pending).count();
    let on_lines: Vec<&ReviewComment> = comments.iter().filter(|c| c.line.is_some()).collect();
    let off_lines: Vec<&ReviewComment> = comments.iter().filter(|c| c.line.is_none()).collect();
    let commented = !remarks.is_empty() || !comments.is_empty();

    let verdict = if !changes.is_empty() || !failed.is_empty() || (commented && approving.is_empty()) {
        Verdict::Rejected
    } else if !approving.is_empty() {
        Verdict::Approved
    } else {
        let why = match pending {
            0 => "no review approves or requests changes, nobody commented and no check failed".to_string(),
            n => format!(
                "no review approves or requests changes, nobody commented and no check failed ({n} check{} still running)",
                crate::text::plural(n)
            ),
        };
        return Err(Nothing(why));
    };

    let line_comments: Vec<LineComment> = on_lines.iter().map(|c| line_comment(c)).collect();
    let critique = critique(&changes, &remarks, &off_lines);

    let failures: Vec<String> = failed.iter().map(|c| c.failure()).collect();
    let required_change = (verdict == Verdict::Rejected).then(|| required(&changes, &failed, &remarks, comments));
    let mut by: Vec<&str> = if !requesting.is_empty() { requesting.clone() } else { approving.clone() };
    if by.is_empty() && verdict == Verdict::Rejected && failed.is_empty() {
        by = remarks
            .iter()
            .map(|r| r.author.as_ref().map_or("ghost", |a| a.login.as_str()))
            .chain(comments.iter().map(|c| c.user.as_ref().map_or("ghost", |a| a.login.as_str())))
            .collect();
        by.dedup();
    }
    let head = if pr.head_ref_oid.len() >= 7 { format!(" (head {})", &pr.head_ref_oid[..7]) } else { String::new() };
    Ok(Review {
        verdict,
        by: by.join(", "),
        channel: Channel::GithubPr,
        required_change,
        critique,
        comments: line_comments,
        failures,
        source: Some(format!("pull request #{}{head}", pr.number)),
        ..Review::default()
    })
}

/// A rejection's required change: the first sentence of the latest
/// request for changes; else the failed checks named; else the first
/// sentence of the first comment.
fn required(
    changes: &[&PrReview],
    failed: &[&CheckContext],
    remarks: &[&PrReview],
    comments: &[ReviewComment],
) -> String {
    if let Some(s) = changes.iter().rev().find_map(|r| first_sentence(&r.body)) {
        return s;
    }
    if !failed.is_empty() {
        let mut names: Vec<String> = failed.iter().map(|c| format!("`{}`", c.shown_name())).collect();
        names.dedup();
        let s = crate::text::plural(names.len());
        return format!("Make the failing CI check{s} pass: {}.", name_list(&names));
    }
    let first = remarks
        .iter()
        .map(|r| r.body.as_str())
        .chain(comments.iter().map(|c| c.body.as_str()))
        .find_map(first_sentence);
    first.unwrap_or_else(|| "Address the pull request's review comments.".into())
}

/// The first sentence of a review's text: its first line that says
/// something (Markdown headings, quotes and list marks off), up to the
/// first `. `, `! ` or `? `; ended with a full stop; `None` when it says
/// nothing.
pub(crate) fn first_sentence(text: &str) -> Option<String> {
    let line =
        text.lines().map(|l| l.trim().trim_start_matches(['#', '>', '-', '*', ' '])).find(|l| !l.trim().is_empty())?;
    let line = line.trim();
    let mut end = line.len();
    for (i, c) in line.char_indices() {
        if matches!(c, '.' | '!' | '?') && line[i + 1..].starts_with(' ') {
            end = i + 1;
            break;
        }
    }
    let mut s = line[..end].trim().to_string();
    if !s.ends_with(['.', '!', '?']) {
        s.push('.');
    }
    Some(crate::text::clip(&s, crate::context::required::MAX_BYTES, " [...]").into_owned())
}

/// The review comments `gh api --paginate` printed: one JSON array, or
/// one per page one after the other.
pub(crate) fn parse_comments(json: &[u8]) -> Result<Vec<ReviewComment>, serde_json::Error> {
    let mut out = Vec::new();
    for page in serde_json::Deserializer::from_slice(json).into_iter::<Vec<ReviewComment>>() {
        out.extend(page?);
    }
    Ok(out)
}

/// The pull request `gh pr view --json` printed.
pub(crate) fn parse_view(json: &[u8]) -> Result<PullRequest, serde_json::Error> {
    serde_json::from_slice(json)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(login: &str, state: &str, body: &str) -> PrReview {
        PrReview { author: Some(Author { login: login.into() }), body: body.into(), state: state.into() }
    }

    fn run(name: &str, status: &str, conclusion: &str) -> CheckContext {
        CheckContext {
            typename: "CheckRun".into(),
            name: name.into(),
            workflow_name: "CI".into(),
            status: status.into(),
            conclusion: conclusion.into(),
            details_url: format!("https://github.com/o/r/actions/runs/1/job/{name}"),
            ..CheckContext::default()
        }
    }

    fn status(context: &str, state: &str) -> CheckContext {
        CheckContext {
            typename: "StatusContext".into(),
            context: context.into(),
            state: state.into(),
            target_url: "https://ci.example/1".into(),
            ..CheckContext::default()
        }
    }

    fn comment(login: &str, path: &str, line: Option<u32>, start: Option<u32>, body: &str) -> ReviewComment {
        ReviewComment {
            path: path.into(),
            line,
            start_line: start,
            body: body.into(),
            user: Some(Author { login: login.into() }),
        }
    }

    fn pr(reviews: Vec<PrReview>, checks: Option<Vec<CheckContext>>) -> PullRequest {
        PullRequest {
            number: 12,
            head_ref_oid: "0123456789abcdef0123456789abcdef01234567".into(),
            reviews,
            status_check_rollup: checks,
        }
    }

    #[test]
    fn first_sentence_of_a_review() {
        let cases: &[(&str, Option<&str>)] = &[
            (
                "Retry the 429 instead of swallowing it. The rest is fine.",
                Some("Retry the 429 instead of swallowing it."),
            ),
            ("Retry the 429", Some("Retry the 429.")),
            ("\n\n## Please retry on 429!\nmore", Some("Please retry on 429!")),
            ("- use a constant for 3.5 seconds", Some("use a constant for 3.5 seconds.")),
            ("> quoted? yes", Some("quoted?")),
            ("   \n  ", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(first_sentence(text).as_deref(), *want, "{text:?}");
        }
    }

    #[test]
    fn reviews_and_checks_decide_the_verdict() {
        let cr = || review("alice", "CHANGES_REQUESTED", "Retry the 429. It is swallowed now.");
        let ok = || review("bob", "APPROVED", "");
        let failed = || Some(vec![run("lint", "COMPLETED", "SUCCESS"), run("test", "COMPLETED", "FAILURE")]);
        let green = || Some(vec![run("test", "COMPLETED", "SUCCESS")]);
        let c = || vec![comment("carol", "src/a.py", Some(4), None, "Name this.")];
        type Case = (&'static str, PullRequest, Vec<ReviewComment>, Result<Verdict, ()>);
        let cases: Vec<Case> = vec![
            ("changes requested", pr(vec![cr()], None), vec![], Ok(Verdict::Rejected)),
            ("approved, green", pr(vec![ok()], green()), vec![], Ok(Verdict::Approved)),
            ("approved, with a comment", pr(vec![ok()], green()), c(), Ok(Verdict::Approved)),
            ("approved, a check failed", pr(vec![ok()], failed()), vec![], Ok(Verdict::Rejected)),
            (
                "changes requested, then approved",
                pr(vec![cr(), review("alice", "APPROVED", "")], None),
                vec![],
                Ok(Verdict::Approved),
            ),
            (
                "changes requested, then dismissed",
                pr(vec![cr(), review("alice", "DISMISSED", "")], None),
                vec![],
                Err(()),
            ),
            (
                "changes requested, then a comment",
                pr(vec![cr(), review("alice", "COMMENTED", "")], None),
                vec![],
                Ok(Verdict::Rejected),
            ),
            ("a failed check alone", pr(vec![], failed()), vec![], Ok(Verdict::Rejected)),
            ("a comment alone", pr(vec![], None), c(), Ok(Verdict::Rejected)),
            ("nothing", pr(vec![], green()), vec![], Err(())),
            ("pending", pr(vec![], Some(vec![run("test", "IN_PROGRESS", "")])), vec![], Err(())),
            ("an empty COMMENTED review", pr(vec![review("x", "COMMENTED", " ")], None), vec![], Err(())),
            ("a failed status", pr(vec![], Some(vec![status("ci/jenkins", "ERROR")])), vec![], Ok(Verdict::Rejected)),
            ("a cancelled run", pr(vec![], Some(vec![run("t", "COMPLETED", "CANCELLED")])), vec![], Err(())),
        ];
        for (what, pr, comments, want) in cases {
            let got = review_of(&pr, &comments).map(|r| r.verdict).map_err(|_| ());
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn a_change_request_gives_the_required_change_and_its_critique_verbatim() {
        let body = "Retry the 429 instead of swallowing it. See `http.py`.\n\nAlso log it.";
        let r = review_of(&pr(vec![review("alice", "CHANGES_REQUESTED", body)], None), &[]).expect("a review");
        assert_eq!(r.required_change.as_deref(), Some("Retry the 429 instead of swallowing it."));
        assert_eq!(r.critique.as_deref(), Some(body));
        assert_eq!(r.by, "alice");
        assert_eq!(r.channel, Channel::GithubPr);
        assert_eq!(r.source.as_deref(), Some("pull request #12 (head 0123456)"));
    }

    #[test]
    fn several_reviewers_are_joined_with_who_wrote_what() {
        let reviews = vec![
            review("alice", "CHANGES_REQUESTED", "Retry the 429."),
            review("dave", "COMMENTED", "Nit: naming."),
            review("bob", "CHANGES_REQUESTED", "Add a test for the retry."),
        ];
        let comments = vec![comment("erin", "docs/x.md", None, None, "Outdated remark.")];
        let r = review_of(&pr(reviews, None), &comments).expect("a review");
        assert_eq!(r.required_change.as_deref(), Some("Add a test for the retry."), "the latest request");
        assert_eq!(r.by, "alice, bob");
        assert_eq!(
            r.critique.as_deref(),
            Some(
                "alice requested changes:\n\nRetry the 429.\n\nbob requested changes:\n\nAdd a test for the retry.\n\n\
                 dave commented:\n\nNit: naming.\n\nerin on `docs/x.md` (not on a line of the diff):\n\nOutdated remark."
            )
        );
        assert!(r.comments.is_empty(), "a comment on no line is in the critique");
    }

    #[test]
    fn one_change_request_leads_the_critique_verbatim_and_the_rest_follows_attributed() {
        let reviews =
            vec![review("alice", "CHANGES_REQUESTED", "Retry the 429.\n"), review("dave", "COMMENTED", "Nit.")];
        let r = review_of(&pr(reviews, None), &[]).expect("a review");
        assert_eq!(r.critique.as_deref(), Some("Retry the 429.\n\n\ndave commented:\n\nNit."));
    }

    #[test]
    fn failed_checks_give_the_failures_and_the_required_change() {
        let checks = Some(vec![
            run("lint", "COMPLETED", "FAILURE"),
            run("test", "COMPLETED", "TIMED_OUT"),
            run("docs", "COMPLETED", "SUCCESS"),
            status("ci/jenkins", "FAILURE"),
        ]);
        let r = review_of(&pr(vec![], checks), &[]).expect("a review");
        assert_eq!(r.verdict, Verdict::Rejected);
        assert_eq!(
            r.required_change.as_deref(),
            Some("Make the failing CI checks pass: `lint`, `test` and `ci/jenkins`.")
        );
        assert_eq!(
            r.failures,
            [
                "check `CI / lint` failed (failure): https://github.com/o/r/actions/runs/1/job/lint",
                "check `CI / test` failed (timed out): https://github.com/o/r/actions/runs/1/job/test",
                "check `ci/jenkins` failed (failure): https://ci.example/1",
            ]
        );
        assert_eq!(r.by, "", "the reviewer is left to the caller");
        let one = review_of(&pr(vec![], Some(vec![run("lint", "COMPLETED", "FAILURE")])), &[]).expect("a review");
        assert_eq!(one.required_change.as_deref(), Some("Make the failing CI check pass: `lint`."));
    }

    #[test]
    fn review_comments_become_line_comments_by_their_authors() {
        let comments = vec![
            comment("carol", "src/http.py", Some(44), Some(40), "This hides the 429."),
            comment("dave", "src/http.py", Some(7), None, "Why a sleep here? Use backoff."),
            // A start past the end (as no API gives) is the one line.
            comment("dave", "src/a.py", Some(3), Some(9), "x"),
        ];
        let r = review_of(&pr(vec![], None), &comments).expect("a review");
        let got: Vec<(String, u32, u32, String, Option<String>)> =
            r.comments.iter().map(|c| (c.path.clone(), c.start, c.end, c.text.clone(), c.by.clone())).collect();
        assert_eq!(
            got,
            [
                ("src/http.py".into(), 40, 44, "This hides the 429.".into(), Some("carol".into())),
                ("src/http.py".into(), 7, 7, "Why a sleep here? Use backoff.".into(), Some("dave".into())),
                ("src/a.py".into(), 3, 3, "x".into(), Some("dave".into())),
            ]
        );
        assert_eq!(r.required_change.as_deref(), Some("This hides the 429."), "from the first comment");
        assert_eq!(r.by, "carol, dave");
    }

    #[test]
    fn nothing_to_record_says_what_is_missing() {
        let Err(Nothing(why)) = review_of(&pr(vec![], Some(vec![run("t", "QUEUED", "")])), &[]) else {
            panic!("nothing to record")
        };
        assert!(why.contains("1 check still running"), "{why}");
    }

    #[test]
    fn gh_output_is_read_in_its_documented_shapes() {
        let view = br#"{"headRefOid":"0123456789abcdef0123456789abcdef01234567","number":12,
            "reviews":[{"id":"PRR_1","author":{"login":"alice"},"authorAssociation":"MEMBER","body":"Retry it.",
              "submittedAt":"2026-05-01T12:00:00Z","includesCreatedEdit":false,"reactionGroups":[],
              "state":"CHANGES_REQUESTED","commit":{"oid":"0123456789abcdef0123456789abcdef01234567"}},
              {"id":"PRR_2","author":null,"body":"","state":"COMMENTED"}],
            "statusCheckRollup":[{"__typename":"CheckRun","completedAt":"2026-05-01T12:05:00Z","conclusion":"FAILURE",
              "detailsUrl":"https://github.com/o/r/actions/runs/1/job/2","name":"test","startedAt":"2026-05-01T12:00:00Z",
              "status":"COMPLETED","workflowName":"CI"},
              {"__typename":"StatusContext","context":"ci/jenkins","startedAt":"2026-05-01T12:00:00Z","state":"SUCCESS",
              "targetUrl":"https://ci.example/1"}],
            "url":"https://github.com/o/r/pull/12"}"#;
        let pr = parse_view(view).expect("a pull request");
        assert_eq!((pr.number, pr.reviews.len()), (12, 2));
        let checks = pr.status_check_rollup.as_deref().unwrap_or_default();
        assert_eq!(checks.iter().map(CheckContext::state).collect::<Vec<_>>(), [CheckState::Failed, CheckState::Fine]);
        let none = parse_view(br#"{"number":3,"reviews":[],"statusCheckRollup":null}"#).expect("no checks");
        assert!(none.status_check_rollup.is_none());

        let page = br#"[{"id":1,"path":"src/a.py","line":4,"start_line":null,"original_line":4,"side":"RIGHT",
            "body":"Name this.","user":{"login":"carol","type":"User"},"commit_id":"abc","diff_hunk":"@@ -1 +1 @@"}]"#;
        let two_pages =
            [&page[..], b"\n", &br#"[{"path":"b.py","line":null,"body":"old","user":{"login":"d"}}]"#[..]].concat();
        let cases: &[(&[u8], usize)] = &[(page, 1), (&two_pages, 2), (b"[]", 0), (b"", 0)];
        for (json, n) in cases {
            assert_eq!(parse_comments(json).expect("comments").len(), *n);
        }
        assert!(parse_comments(b"{\"message\":\"Not Found\"}").is_err());
        assert!(parse_view(b"not json").is_err());
    }
}
