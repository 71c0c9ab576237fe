//! The pages of the web view, rendered on the server from the record (read
//! through the library's own readers, `view.rs`) into HTML in which every
//! byte from the record is escaped (`html.rs`).
//!
//! One file per page: `tasks.rs` (the list), `task.rs` (a task's timeline,
//! its review and land forms), `attempt.rs` (an attempt's diff, its checks;
//! its prompt and a check's full output as text), `lanes.rs`, `stats.rs`
//! (charts drawn by `svg.rs`). Templates are maud's, compiled into the
//! binary; every page links `/assets/app.css` and `/assets/app.js` and
//! carries no inline script or style.

mod attempt;
mod diff;
pub(crate) mod html;
mod lanes;
mod stats;
pub(crate) mod svg;
mod task;
mod tasks;
pub(crate) mod view;

use maud::{DOCTYPE, Markup, html};

use self::html as esc;
use super::{Page, Route, Site};
use crate::record::RecordError;

/// The page `route` asks for.
pub(crate) fn page(site: &Site<'_>, route: &Route) -> Page {
    let answer = match route {
        Route::Tasks { state, query } => tasks::page(site, state.as_deref(), query.as_deref()),
        Route::Task { id, .. } => task::page(site, id),
        Route::Timeline { id } => task::timeline_fragment(site, id),
        Route::Attempt { id, n, against, layout } => attempt::page(site, id, *n, *against, *layout),
        Route::Prompt { id, n } => attempt::prompt(site, id, *n),
        Route::CheckOutput { id, n, check } => attempt::check_output(site, id, *n, check),
        Route::Lanes { id } => lanes::page(site, id),
        Route::Stats => stats::page(site),
    };
    answer.unwrap_or_else(|e| e.page())
}

/// Why a page cannot be shown.
#[derive(Debug)]
pub(crate) enum Missing {
    /// No such task, attempt or check in the record: 404.
    NotFound(String),
    /// The record cannot be read: 500, with what failed.
    Record(RecordError),
}

impl From<RecordError> for Missing {
    fn from(e: RecordError) -> Missing {
        if e.is_usage() { Missing::NotFound(e.to_string()) } else { Missing::Record(e) }
    }
}

impl Missing {
    fn page(self) -> Page {
        let (status, what) = match self {
            Missing::NotFound(what) => (404, what),
            Missing::Record(e) => (500, e.to_string()),
        };
        let title = if status == 404 { "Not found" } else { "The record cannot be read" };
        html_page(status, layout(title, None, html! { h1 { (title) } p.error { (esc::text(&what)) } }))
    }
}

type Answer = Result<Page, Missing>;

/// An HTML page with `status`.
fn html_page(status: u16, body: Markup) -> Page {
    Page { status, content_type: "text/html; charset=utf-8", body: body.into_string().into_bytes() }
}

/// Plain text (a prompt, a check's output).
fn text_page(body: Vec<u8>) -> Page {
    Page { status: 200, content_type: "text/plain; charset=utf-8", body }
}

/// The document around a page's content: its title, the navigation, the
/// stylesheet and the script. `live`, when given, is the URL the script
/// polls for the `#timeline` element (a task's page).
fn layout(title: &str, live: Option<Markup>, content: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (esc::text(title)) " · retry-run" }
                link rel="stylesheet" href="/assets/app.css";
                script src="/assets/app.js" defer {}
            }
            body {
                nav.top {
                    a href="/" { "Tasks" }
                    " "
                    a href="/stats" { "Stats" }
                }
                @if let Some(live) = live {
                    main #root data-live=(live) { (content) }
                } @else {
                    main #root { (content) }
                }
            }
        }
    }
}

/// Money as shown: `$0.0123`, `—` when unknown.
fn cost(usd: Option<f64>) -> String {
    usd.map_or_else(|| "—".into(), |c| format!("${c:.4}"))
}

/// A commit id shortened for display.
fn short(oid: &str) -> &str {
    &oid[..crate::text::floor_char_boundary(oid, 10)]
}

#[cfg(test)]
mod hostile;
