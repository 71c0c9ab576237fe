//! A task's page: its timeline of rounds, attempts (each with its outcome,
//! required change, what each gate said, self-checks, refused hosts, the
//! agent's last lines), reviews and lands, in the log's order, in an
//! element `#timeline` that `/tasks/<id>/timeline` renders alone (the
//! page's script swaps it in as the record grows: the root carries
//! `data-live="/tasks/<id>/live"`); then the review form (POST
//! `/tasks/<id>/review`) and the land form (POST `/tasks/<id>/land`).

use maud::{Markup, html};

use super::html as esc;
use super::view::{TaskView, TimelineItem, task};
use super::{PageAnswer, Site, cost, html_page, layout, short};
use crate::model::{AttemptRecord, Review};

pub(super) fn page(site: &Site<'_>, id: &str) -> PageAnswer {
    let t = task(site.store, id)?;
    let heading = t.title.clone().unwrap_or_else(|| t.id.clone());
    let result = t.state.result_attempt();
    let content = html! {
        h1 { (esc::text(&heading)) }
        p.meta {
            "Task " code { (esc::text(&t.id)) } " · "
            span class={ "badge " (t.label.split(' ').next().unwrap_or("")) } { (t.label) }
            @if let Some(r) = t.state.review_label() { " " span class={ "badge " (r) } { (r) } }
            " · " (t.state.last_attempt) " attempts · cost " (cost(t.state.cost_usd))
            @if t.state.lanes.is_some_and(|k| k > 1) {
                " · " a href=(esc::href(&["tasks", &t.id, "lanes"], &[])) { "lanes side by side" }
            }
        }
        section #timeline { (timeline_markup(&t)) }
        @if let Some(n) = result {
            section.actions {
                h2 { "Review attempt " (n) }
                (review_form(site, &t.id, n))
                h2 { "Land" }
                (land_form(site, &t.id))
            }
        }
    };
    let live = esc::href(&["tasks", id, "live"], &[]);
    Ok(html_page(200, layout(&heading, Some(live), content)))
}

/// The timeline alone, for the page's live updates.
pub(super) fn timeline_fragment(site: &Site<'_>, id: &str) -> PageAnswer {
    let t = task(site.store, id)?;
    Ok(html_page(200, html! { section #timeline { (timeline_markup(&t)) } }))
}

pub(crate) fn timeline_markup(t: &TaskView) -> Markup {
    html! {
        ol.timeline {
            @for item in &t.items { li { (entry(&t.id, item)) } }
            @if t.items.is_empty() { li.empty { "Nothing recorded yet." } }
        }
    }
}

fn entry(id: &str, item: &TimelineItem) -> Markup {
    match item {
        TimelineItem::Round { first, max, base, lanes } => html! {
            div.round {
                "Round from attempt " (first) " (up to " (max) " attempts) on " code { (esc::text(short(base))) }
                @if let Some(k) = lanes.filter(|k| *k > 1) { ", in " (k) " lanes" }
            }
        },
        TimelineItem::Attempt(r) => attempt(id, r),
        TimelineItem::Started(n) => html! { div.attempt.running { "Attempt " (n) " running…" } },
        TimelineItem::Aborted { n, reason } => {
            html! { div.aborted { "Attempt " (n) " aborted: " (esc::text(reason)) } }
        }
        TimelineItem::Review(r) => review(r),
        TimelineItem::Landed(l) => html! {
            div.landed {
                "Landed attempt " (l.attempt) " onto " code { (esc::text(&l.onto)) } " (" (l.how.as_str()) "): "
                code { (esc::text(short(&l.commit))) }
            }
        },
        TimelineItem::Ended { what, detail } => html! {
            div class={ "ended " (what) } { "Task " (what) @if !detail.is_empty() { ": " (esc::text(detail)) } }
        },
        TimelineItem::Lane { lane, ending, attempts } => {
            html! { div.lane { "Lane " (lane) " " (esc::text(ending)) " after " (attempts) " attempts" } }
        }
        TimelineItem::Chosen { lane, attempt, why } => html! {
            div.chosen { "Chose lane " (lane) ", attempt " (attempt) @if !why.is_empty() { ": " (esc::text(why)) } }
        },
    }
}

/// One completed attempt in the timeline.
fn attempt(id: &str, r: &AttemptRecord) -> Markup {
    let n = r.number.to_string();
    let outcome = r.outcome.as_str();
    html! {
        div.attempt id={ "attempt-" (r.number) } {
            h3 {
                a href=(esc::href(&["tasks", id, "attempts", &n], &[])) { "Attempt " (r.number) }
                " " span class={ "badge " (outcome.to_lowercase()) } { (outcome) }
                " " span.dur { (crate::text::human_ms(r.duration_ms)) }
            }
            @if !r.reason.is_empty() { p.reason { (esc::text(&r.reason)) } }
            (gates(r))
        }
    }
}

/// What each gate said, the self-checks, refused hosts and the agent's
/// last lines: shared with the attempt page.
pub(super) fn gates(r: &AttemptRecord) -> Markup {
    html! {
        @if let Some(v) = &r.verifier {
            div.verifier {
                "Verifier: " (esc::text(v.verdict.as_deref().unwrap_or("no answer")))
                @if let Some(c) = v.confidence { " (confidence " (format!("{c:.2}")) ")" }
                @if let Some(rc) = &v.required_change { p.required { strong { "Required change: " } (esc::text(rc)) } }
                @if let Some(c) = &v.critique { p.critique { (esc::text(c)) } }
            }
        }
        @if !r.checks.is_empty() {
            ul.checks {
                @for c in &r.checks {
                    li class=(if c.passed { "pass" } else { "fail" }) {
                        (esc::text(&c.name)) ": " (if c.passed { "passed" } else { "failed" })
                        @if c.flaky { " (flaky)" }
                        @for f in c.failures.iter().take(20) { div.failure { (esc::text(&f.label)) } }
                    }
                }
            }
        }
        @if !r.scope.is_empty() {
            ul.scope { @for f in &r.scope { li { (esc::text(&f.path)) " — " (f.reason.as_str()) } } }
        }
        @if !r.self_checks.is_empty() {
            details.self-checks {
                summary { (r.self_checks.len()) " self-checks" }
                ul { @for s in &r.self_checks {
                    li { (esc::text(&s.tool)) ": "
                        @match (&s.refused, s.passed) {
                            (Some(why), _) => { "refused (" (esc::text(why)) ")" },
                            (None, Some(true)) => { "green" },
                            (None, Some(false)) => { "red" },
                            (None, None) => { "" },
                        }
                        @if !s.summary.is_empty() { " — " (esc::text(&s.summary)) }
                    }
                } }
            }
        }
        @if let Some(a) = &r.agent {
            @if !a.refused_hosts.is_empty() {
                p.refused { "Refused hosts: " @for (i, h) in a.refused_hosts.iter().enumerate() { @if i > 0 { ", " } code { (esc::text(h)) } } }
            }
            @if !a.output_tail.is_empty() {
                details.agent-tail {
                    summary { "The agent's last lines" }
                    pre { @for l in &a.output_tail { (esc::text(l)) "\n" } }
                }
            }
        }
    }
}

fn review(r: &Review) -> Markup {
    html! {
        div class={ "review " (r.verdict.as_str()) } {
            strong { (r.verdict.as_str()) } " attempt " (r.attempt) " by " (esc::text(&r.by)) " via " (r.channel.as_str())
            @if let Some(rc) = &r.required_change { p.required { strong { "Required change: " } (esc::text(rc)) } }
            @if let Some(c) = &r.critique { p.critique { (esc::text(c)) } }
            @if !r.comments.is_empty() {
                ul.comments { @for c in &r.comments {
                    li { code { (esc::text(&c.path)) ":" (c.start) @if c.end != c.start { "-" (c.end) } } " " (esc::text(&c.text)) }
                } }
            }
        }
    }
}

/// The review form for attempt `n`: approve or reject (the button pressed
/// is `verdict`), a required change and a critique; line comments are
/// added by the attempt page's script as `comment_path`, `comment_lines`
/// (`12` or `12-15`, new side) and `comment_text` fields, repeated.
pub(super) fn review_form(site: &Site<'_>, id: &str, n: u32) -> Markup {
    html! {
        form.review #review-form method="post" action=(esc::href(&["tasks", id, "review"], &[])) {
            input type="hidden" name="token" value=(esc::attr(site.token));
            input type="hidden" name="attempt" value=(n);
            div #comments {}
            label { "Required change" textarea name="required_change" rows="3" {} }
            label { "Critique" textarea name="critique" rows="4" {} }
            button type="submit" name="verdict" value="approve" { "Approve" }
            " "
            button type="submit" name="verdict" value="reject" { "Reject" }
        }
    }
}

fn land_form(site: &Site<'_>, id: &str) -> Markup {
    html! {
        form.land #land-form method="post" action=(esc::href(&["tasks", id, "land"], &[])) {
            input type="hidden" name="token" value=(esc::attr(site.token));
            label { "Onto " input type="text" name="onto" placeholder="the checkout's branch"; }
            " "
            label { input type="checkbox" name="merge" value="1"; " merge commit" }
            " "
            button type="submit" { "Land" }
        }
    }
}
