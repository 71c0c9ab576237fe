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
mod layout;
mod stats;
pub(crate) mod svg;
mod task;
mod tasks;
pub(crate) mod view;

use super::{Page, Route, Site};
pub(crate) use layout::Missing;
use layout::{PageAnswer, cost, html_page, layout, short, text_page};

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

#[cfg(test)]
mod hostile;
