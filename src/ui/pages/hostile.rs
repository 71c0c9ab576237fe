//! Hostile strings from the record through every page's renderer: each
//! appears only escaped. The record is written through the library's own
//! writers (`Store::log`, `write_file`) in a repository made by the git
//! layer; the diff is rendered from a patch with the same strings.

use super::diff;
use super::view::{TaskView, TimelineItem};
use crate::model::{AttemptRecord, Outcome, Review};
use crate::ui::PageLayout;

/// What an agent might write, and what must never come out unescaped.
const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "\" onmouseover=\"alert(1)",
    "' onfocus='alert(1)",
    "javascript:alert(1)",
    "</textarea><script>alert(2)</script>",
    "nul\0byte",
    "bidi\u{202e}txt.exe",
    "<img src=x onerror=alert(3)>",
];

/// Fails when `page` holds any hostile string raw (or a NUL or bidi
/// control at all), or a `javascript:` link.
fn assert_escaped(page: &str, what: &str) {
    for bad in [
        "<script>alert",
        "<img src=x",
        "onmouseover=\"",
        "onfocus='",
        "</textarea><",
        "\0",
        "\u{202e}",
        "href=\"javascript:",
    ] {
        assert!(!page.contains(bad), "{what}: {bad:?} unescaped in\n{page}");
    }
    assert!(
        page.contains("&lt;script&gt;") || page.contains("%3Cscript%3E"),
        "{what}: the hostile text is shown, escaped"
    );
}

fn hostile_attempt(n: u32) -> AttemptRecord {
    let all = HOSTILE.join(" ");
    let mut r = AttemptRecord::new(n);
    r.outcome = Outcome::CheckFailure;
    r.reason = all.clone();
    let mut c = crate::model::CheckResult::new(&all, crate::model::CheckKind::default(), false);
    c.digest = HOSTILE.iter().map(|s| s.to_string()).collect();
    r.checks.push(c);
    r.agent = Some(crate::model::AgentRun {
        output_tail: HOSTILE.iter().map(|s| s.to_string()).collect(),
        refused_hosts: vec![all.clone()],
        ..Default::default()
    });
    r
}

#[test]
fn the_timeline_shows_hostile_record_text_only_escaped() {
    let all = HOSTILE.join(" ");
    let review = Review {
        required_change: Some(all.clone()),
        critique: Some(all.clone()),
        by: all.clone(),
        comments: vec![crate::model::LineComment {
            path: all.clone(),
            start: 1,
            end: 2,
            text: all.clone(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let t = TaskView {
        id: "t".into(),
        title: Some(all.clone()),
        state: Default::default(),
        label: "escalated",
        items: vec![
            TimelineItem::Round { first: 1, max: 3, base: all.clone(), lanes: None },
            TimelineItem::Attempt(Box::new(hostile_attempt(1))),
            TimelineItem::Aborted { n: 2, reason: all.clone() },
            TimelineItem::Review(Box::new(review)),
            TimelineItem::Ended { what: "escalated", detail: all.clone() },
            TimelineItem::Lane { lane: 1, ending: all.clone(), attempts: 1 },
            TimelineItem::Chosen { lane: 1, attempt: 1, why: all.clone() },
        ],
        attempts: vec![],
    };
    assert_escaped(&super::task::timeline_markup(&t).into_string(), "timeline");
    assert_escaped(&super::task::gates(&hostile_attempt(3)).into_string(), "gates");
}

#[test]
fn a_diff_shows_hostile_paths_and_lines_only_escaped() {
    let mut patch = String::new();
    for s in HOSTILE {
        patch.push_str(&format!("diff --git a/{s} b/{s}\n--- a/{s}\n+++ b/{s}\n@@ -1 +1 @@\n-{s}\n+{s}\n"));
    }
    let files = diff::parse(&patch);
    assert_eq!(files.len(), HOSTILE.len());
    for layout in [PageLayout::Unified, PageLayout::Split] {
        let page: String =
            files.iter().map(|f| super::attempt::file_markup(f, layout, None, None).into_string()).collect();
        assert_escaped(&page, "diff");
    }
}

#[test]
fn charts_show_hostile_labels_only_escaped() {
    let mut s = crate::stats::Stats::default();
    for h in HOSTILE {
        s.cost_by_task.insert(h.to_string(), 1.0);
        s.by_feedback.insert(h.to_string(), Default::default());
    }
    for (title, svg) in super::stats::charts(&s) {
        if title.starts_with("Cost") || title.contains("feedback") {
            assert_escaped(&svg, title);
        }
    }
}

#[test]
fn the_task_list_shows_hostile_fields_only_escaped() {
    let all = HOSTILE.join(" ");
    let row = super::view::Row {
        id: all.clone(),
        label: "succeeded",
        attempts: 1,
        lanes: Some(2),
        base: Some(all.clone()),
        last_outcome: Some(all.clone()),
        review: None,
        cost_usd: None,
        duration_ms: 0,
    };
    assert_escaped(&super::tasks::table(&[&row], 1, None, Some(&all)).into_string(), "tasks");
}

#[test]
fn forms_carry_the_token_escaped_and_links_stay_on_the_site() {
    let store = crate::record::Store::new(std::path::Path::new("/nonexistent"));
    let repo_dir = std::env::temp_dir().join(format!("retry-run-ui-hostile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&repo_dir);
    crate::git::demo_repo::create(&repo_dir, &[("a.txt", "a\n")], "init").expect("a repository");
    let repo = crate::git::Repo::find(&repo_dir).expect("found");
    let summaries = crate::record::Summaries::new(store.clone());
    let site =
        crate::ui::Site { repo: &repo, store: &store, summaries: &summaries, token: "tok\"><script>alert(1)</script>" };
    let form = super::task::review_form(&site, "javascript:alert(1)", 1).into_string();
    assert!(form.contains(r#"name="token" value="tok&quot;&gt;&lt;script&gt;"#), "{form}");
    assert!(form.contains(r#"action="/tasks/javascript%3Aalert%281%29/review""#), "{form}");
    let _ = std::fs::remove_dir_all(&repo_dir);
}
