//! The static files of the web view, compiled into the binary and served
//! from `/assets/<name>` with long cache headers: a small hand-written
//! script (live updates, line comments) and the style sheet. No build
//! step, no CDN: nothing is fetched from the network.
//!
//! The files live beside the pages that use them (`pages/assets/`). What
//! the script expects of the pages:
//! - live updates: the page's root with `data-live="/tasks/<id>/live"`;
//!   each time the server says the record grew, `/tasks/<id>/timeline` is
//!   fetched, parsed (never evaluated) and its `#timeline` put in place of
//!   the page's (as the server escaped it);
//! - line comments: a diff line's element with `data-path` and
//!   `data-line` (its line in the new file); a click adds a comment row
//!   (`comment_path`, `comment_lines`, `comment_text`) to the `#comments`
//!   box of the form `#review-form`, filled with the path and line, ready
//!   for its text.

/// A file served from `/assets/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Asset {
    pub name: &'static str,
    pub content_type: &'static str,
    pub body: &'static str,
}

const ASSETS: &[Asset] = &[
    Asset { name: "app.js", content_type: "text/javascript; charset=utf-8", body: include_str!("pages/assets/app.js") },
    Asset { name: "app.css", content_type: "text/css; charset=utf-8", body: include_str!("pages/assets/app.css") },
];

/// The asset named `name`, exactly.
pub(crate) fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assets_are_found_by_their_exact_name() {
        let cases = [
            ("app.js", Some("text/javascript; charset=utf-8")),
            ("app.css", Some("text/css; charset=utf-8")),
            ("app.JS", None),
            ("../app.js", None),
            ("", None),
        ];
        for (name, want) in cases {
            assert_eq!(find(name).map(|a| a.content_type), want, "{name}");
        }
    }

    #[test]
    fn the_script_builds_no_html_from_strings_it_did_not_get_from_the_server() {
        // Text goes into the page as text (textContent, value), never as
        // markup, apart from the server's own escaped fragment.
        let js = find("app.js").map(|a| a.body).unwrap_or_default();
        assert!(!js.contains("eval(") && !js.contains("document.write") && !js.contains("new Function"));
        assert!(!js.contains("innerHTML") && !js.contains("outerHTML"), "no markup is set from strings");
        assert_eq!(js.matches("parseFromString").count(), 1, "only the server's fragment is parsed as markup");
    }
}
