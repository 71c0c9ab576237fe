//! The review's pure parts: the judged attempt, the draft completed, a
//! source's comments placed on the diff, what is said.

use super::*;
use crate::judge::review::comments::files;

const PATCH: &str = include_str!("../judge/review/testdata/two_files_changed_one_added_one_deleted.patch");

fn attempt(n: u32) -> AttemptRecord {
    let mut r = AttemptRecord::interrupted(n, 0);
    r.commit = Some(format!("c{n}"));
    r
}

fn rejection(attempt: u32, rc: &str) -> Review {
    Review { verdict: Verdict::Rejected, attempt, required_change: Some(rc.into()), ..Review::default() }
}

#[test]
fn the_judged_attempt_is_the_one_asked_for_else_the_result() {
    let attempts = [attempt(1), attempt(2), attempt(4)];
    let succeeded = TaskState {
        finished: Some((
            Event::TaskSucceeded {
                commit: "c".into(),
                branch: "b".into(),
                worktree: String::new(),
                tolerated: Vec::new(),
                warnings: Vec::new(),
            },
            Some(2),
        )),
        ..TaskState::default()
    };
    let none = TaskState::default();
    // (asked, state, Ok(number) or Err(message))
    let cases: Vec<(Option<u32>, &TaskState, Result<u32, &str>)> = vec![
        (None, &succeeded, Ok(2)),
        (Some(4), &succeeded, Ok(4)),
        (Some(1), &none, Ok(1)),
        (None, &none, Err("task t has no result to review: its latest round did not succeed")),
        (Some(3), &succeeded, Err("task t has no attempt 3 (its attempts: 1-2, 4)")),
    ];
    for (asked, state, want) in cases {
        let got = judged_attempt("t", asked, state, &attempts).map(|a| a.number).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(str::to_string), "{asked:?}");
    }
    let e = judged_attempt("t", None, &none, &attempts).unwrap_err();
    assert!(e.is_usage() && e.hint().is_some_and(|h| h.contains("--attempt N")), "{e}");
}

#[test]
fn a_draft_is_completed_checked_and_its_repeat_said() {
    let earlier = [rejection(1, "Retry the 429."), rejection(2, "Log it")];
    let done = |d: Review| finish(d, 3, "abc".into(), "Ann <a@x>".into(), &earlier);
    let r = done(rejection(0, "  retry the 429 ")).expect("a rejection");
    assert_eq!(
        (r.attempt, r.commit.as_str(), r.by.as_str(), r.required_change.as_deref(), r.repeats),
        (3, "abc", "Ann <a@x>", Some("retry the 429"), Some(1))
    );
    assert_eq!(done(rejection(0, "Keep the retry bounded.")).expect("new").repeats, None);
    // (draft, the error's words)
    let bad = [
        (rejection(0, ""), "the required change is empty"),
        (rejection(0, "Retry.\nAnd log."), "spans several lines"),
        (
            Review { verdict: Verdict::Rejected, source: Some("pull request #12".into()), ..Review::default() },
            "the review from pull request #12 rejects the result without a required change",
        ),
    ];
    for (draft, words) in bad {
        let e = done(draft).expect_err(words);
        assert!(e.to_string().contains(words) && e.is_usage(), "{e}");
    }
    let approved = done(Review { verdict: Verdict::Approved, ..Review::default() }).expect("an approval");
    assert_eq!((approved.repeats, approved.required_change), (None, None));
}

#[test]
fn a_sources_comments_off_the_diff_become_critique_lines() {
    let comment = |path: &str, start: u32, end: u32, by: Option<&str>| LineComment {
        path: path.into(),
        start,
        end,
        text: format!("on {path}"),
        by: by.map(str::to_string),
        ..LineComment::default()
    };
    let draft = Review {
        verdict: Verdict::Rejected,
        critique: Some("Changes requested.".into()),
        comments: vec![
            comment("app.py", 11, 0, Some("bob")),
            comment("app.py", 6, 6, None),
            comment("lib.py", 1, 2, Some("eve")),
        ],
        ..Review::default()
    };
    let placed = place(&files(PATCH), draft, 2);
    assert_eq!(placed.comments.len(), 1);
    assert_eq!(
        (placed.comments[0].start, placed.comments[0].end, placed.comments[0].by.as_deref()),
        (11, 11, Some("bob"))
    );
    assert_eq!(placed.comments[0].lines, ["+    return c"]);
    assert_eq!(
        placed.critique.as_deref(),
        Some(
            "Changes requested.\n\nComments on lines the attempt did not change:\n- app.py:6: on app.py\n- lib.py:1-2 (eve): on lib.py\n"
        )
    );
}

#[test]
fn says_what_was_recorded_and_what_comes_next() {
    let mut r = rejection(2, "Retry the 429.");
    r.commit = "0123456789".into();
    r.by = "Ann <a@x>".into();
    r.critique = Some("x".into());
    r.comments = vec![LineComment::default(), LineComment::default()];
    assert_eq!(
        said("fix-login", &r),
        "task fix-login: attempt 2 (0123456) rejected by Ann <a@x>: \"Retry the 429.\" (with a critique and 2 line comments); `retry-run run --id fix-login --again` starts the next round, which leads with it"
    );
    let a = Review {
        verdict: Verdict::Approved,
        attempt: 2,
        commit: "0123456789".into(),
        by: "Ann".into(),
        ..Review::default()
    };
    assert_eq!(
        said("fix-login", &a),
        "task fix-login: attempt 2 (0123456) approved by Ann; `retry-run land fix-login` brings it onto your branch"
    );
    assert_eq!(numbers([5, 1, 2, 3, 9, 10].into_iter()), "1-3, 5, 9-10");
}
