//! What every page is made in: the document around its content, the
//! answer a page gives (a page, or what is missing and why), and the small
//! formatters the pages share.

use maud::{DOCTYPE, Markup, html};

use super::html as esc;
use crate::record::RecordError;
use crate::ui::Page;

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
    pub(super) fn page(self) -> Page {
        let (status, what) = match self {
            Missing::NotFound(what) => (404, what),
            Missing::Record(e) => (500, e.to_string()),
        };
        let title = if status == 404 { "Not found" } else { "The record cannot be read" };
        html_page(status, layout(title, None, html! { h1 { (title) } p.error { (esc::text(&what)) } }))
    }
}

pub(super) type PageAnswer = Result<Page, Missing>;

/// An HTML page with `status`.
pub(super) fn html_page(status: u16, body: Markup) -> Page {
    Page { status, content_type: "text/html; charset=utf-8", body: body.into_string().into_bytes() }
}

/// Plain text (a prompt, a check's output).
pub(super) fn text_page(body: Vec<u8>) -> Page {
    Page { status: 200, content_type: "text/plain; charset=utf-8", body }
}

/// The document around a page's content: its title, the navigation, the
/// stylesheet and the script. `live`, when given, is the URL the script
/// polls for the `#timeline` element (a task's page).
pub(super) fn layout(title: &str, live: Option<Markup>, content: Markup) -> Markup {
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
pub(super) fn cost(usd: Option<f64>) -> String {
    usd.map_or_else(|| "—".into(), |c| format!("${c:.4}"))
}

/// A commit id shortened for display.
pub(super) fn short(oid: &str) -> &str {
    &oid[..crate::text::floor_char_boundary(oid, 10)]
}
