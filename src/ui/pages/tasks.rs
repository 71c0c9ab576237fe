//! The task list: each task's state, attempts, lanes, base, last outcome,
//! review, cost and duration, filtered on the server by `?state=` (a state
//! or a review: `succeeded`, `escalated`, `running`, `stopped`, `new`,
//! `approved`, `rejected`, `landed`) and `?q=` (text in the id or the last
//! outcome, any case).

use maud::{Markup, html};

use super::html as esc;
use super::view::{Row, rows};
use super::{PageAnswer, Site, cost, html_page, layout, short};

/// The states and reviews the filter offers.
const STATES: &[&str] = &["running", "succeeded", "escalated", "stopped", "new", "approved", "rejected", "landed"];

/// Pure: whether `row` passes the filter.
pub(crate) fn keep(row: &Row, state: Option<&str>, query: Option<&str>) -> bool {
    let state_ok = match state.filter(|s| !s.is_empty()) {
        None => true,
        Some(s) => row.label == s || row.review == Some(s),
    };
    let query_ok = match query.map(str::trim).filter(|q| !q.is_empty()) {
        None => true,
        Some(q) => {
            let q = q.to_lowercase();
            row.id.to_lowercase().contains(&q)
                || row.last_outcome.as_deref().is_some_and(|o| o.to_lowercase().contains(&q))
        }
    };
    state_ok && query_ok
}

pub(super) fn page(site: &Site<'_>, state: Option<&str>, query: Option<&str>) -> PageAnswer {
    let all = rows(site.store, site.summaries)?;
    let shown: Vec<&Row> = all.iter().filter(|r| keep(r, state, query)).collect();
    let content = table(&shown, all.len(), state, query);
    Ok(html_page(200, layout("Tasks", None, content)))
}

/// The filter and the table of `shown` rows, of `total`. Pure.
pub(crate) fn table(shown: &[&Row], total: usize, state: Option<&str>, query: Option<&str>) -> Markup {
    html! {
        h1 { "Tasks" }
        form.filter method="get" action="/" {
            label { "State " select name="state" {
                option value="" selected[state.is_none_or(str::is_empty)] { "any" }
                @for s in STATES { option value=(s) selected[state == Some(*s)] { (s) } }
            } }
            " "
            label { "Search " input type="search" name="q" value=(esc::attr(query.unwrap_or(""))); }
            " "
            button type="submit" { "Filter" }
        }
        p.count { (shown.len()) " of " (total) " tasks" }
        table.tasks #tasks {
            thead { tr {
                th { "Task" } th { "State" } th { "Attempts" } th { "Lanes" } th { "Base" }
                th { "Last outcome" } th { "Review" } th { "Cost" } th { "Duration" }
            } }
            tbody {
                @for r in shown {
                    tr data-state=(r.label) {
                        td { a href=(esc::task_href(&r.id)) { (esc::text(&r.id)) } }
                        td.state { span class={ "badge " (r.label.split(' ').next().unwrap_or("")) } { (r.label) } }
                        td.num { (r.attempts) }
                        td.num { @if let Some(k) = r.lanes { a href=(esc::href(&["tasks", &r.id, "lanes"], &[])) { (k) } } }
                        td.mono { @if let Some(b) = &r.base { (esc::text(short(b))) } }
                        td { @if let Some(o) = &r.last_outcome { (esc::text(o)) } }
                        td { @if let Some(v) = r.review { span class={ "badge " (v) } { (v) } } }
                        td.num { (cost(r.cost_usd)) }
                        td.num { (crate::text::human_ms(r.duration_ms)) }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, label: &'static str, review: Option<&'static str>, outcome: Option<&str>) -> Row {
        Row {
            id: id.into(),
            label,
            attempts: 1,
            lanes: None,
            base: None,
            last_outcome: outcome.map(str::to_string),
            review,
            cost_usd: None,
            duration_ms: 0,
        }
    }

    #[test]
    fn the_filter_keeps_a_state_a_review_and_text_in_the_id_or_outcome() {
        let ok = row("fix-login", "succeeded", Some("approved"), Some("SUCCESS"));
        let bad = row("add-cache", "escalated", None, Some("CHECK_FAILURE"));
        for (state, q, want) in [
            (None, None, [true, true]),
            (Some(""), Some(" "), [true, true]),
            (Some("succeeded"), None, [true, false]),
            (Some("approved"), None, [true, false]),
            (Some("escalated"), None, [false, true]),
            (Some("landed"), None, [false, false]),
            (None, Some("LOGIN"), [true, false]),
            (None, Some("check_fail"), [false, true]),
            (Some("succeeded"), Some("cache"), [false, false]),
        ] {
            assert_eq!([keep(&ok, state, q), keep(&bad, state, q)], want, "{state:?} {q:?}");
        }
    }
}
