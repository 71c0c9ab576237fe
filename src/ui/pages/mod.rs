//! The pages of the web view, rendered on the server from the record (read
//! through the library's own readers) into HTML in which every byte from
//! the record is escaped.

use super::{Page, Route, Site};

/// The page `route` asks for.
pub(crate) fn page(site: &Site<'_>, route: &Route) -> Page {
    let _ = (site, route);
    Page { status: 501, content_type: "text/plain; charset=utf-8", body: b"not yet".to_vec() }
}
