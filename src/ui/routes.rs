//! Requests to what they ask for: a page ([`Route`]), the live updates of
//! a task, a static asset, or an action (review, land). Pure: the path's
//! segments are read as record ids (checked as the record checks them),
//! attempt numbers as numbers, and a check's name as text the pages match
//! against the attempt's recorded checks; nothing here becomes a file
//! name. Anything else is not found.

use super::{Against, PageLayout, Route};
use crate::record::store::check_record_id;

/// The request's method, as far as the server cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Other,
}

/// What a request asks the server for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// A page, rendered by `pages`.
    Page(Route),
    /// `GET /tasks/<id>/live`: Server-Sent Events, one each time the
    /// record's log grows.
    Live { id: String },
    /// `GET /assets/<name>`: one of the files compiled into the binary.
    Asset { name: &'static str },
    /// `POST /tasks/<id>/review`.
    Review { id: String },
    /// `POST /tasks/<id>/land`.
    Land { id: String },
}

/// What `method` on `path` with `query` (its pairs, decoded, the token
/// already taken out) asks for; `None`: not found.
pub(crate) fn route(method: Method, path: &str, query: &[(String, String)]) -> Option<Endpoint> {
    let get = |r: Route| (method == Method::Get).then_some(Endpoint::Page(r));
    match path {
        "/" | "/tasks" => {
            return get(Route::Tasks { state: param(query, "state"), query: param(query, "q") });
        }
        "/stats" => return get(Route::Stats),
        _ => {}
    }
    if let Some(name) = path.strip_prefix("/assets/") {
        let name = super::assets::find(name)?.name;
        return (method == Method::Get).then_some(Endpoint::Asset { name });
    }
    let rest = path.strip_prefix("/tasks/")?;
    let segments: Vec<&str> = rest.split('/').collect();
    let (id, rest) = record_id(&segments)?;
    let lane = id.contains('/');
    match (method, rest) {
        (Method::Get, []) => Some(Endpoint::Page(Route::Task { id, refused: None })),
        (Method::Get, ["timeline"]) => Some(Endpoint::Page(Route::Timeline { id })),
        (Method::Get, ["live"]) => Some(Endpoint::Live { id }),
        (Method::Get, ["lanes"]) if !lane => Some(Endpoint::Page(Route::Lanes { id })),
        (Method::Post, ["review"]) if !lane => Some(Endpoint::Review { id }),
        (Method::Post, ["land"]) if !lane => Some(Endpoint::Land { id }),
        (Method::Get, ["attempts", n]) => {
            let n = number(n)?;
            let against = match param(query, "against").as_deref() {
                None | Some("base") => Against::Base,
                Some("previous") => Against::Previous,
                Some(_) => return None,
            };
            let layout = match param(query, "layout").as_deref() {
                None | Some("unified") => PageLayout::Unified,
                Some("split") => PageLayout::Split,
                Some(_) => return None,
            };
            Some(Endpoint::Page(Route::Attempt { id, n, against, layout }))
        }
        (Method::Get, ["attempts", n, "prompt"]) => Some(Endpoint::Page(Route::Prompt { id, n: number(n)? })),
        (Method::Get, ["attempts", n, "checks", check]) => {
            let n = number(n)?;
            let check = percent_encoding::percent_decode_str(check).decode_utf8().ok()?.into_owned();
            (!check.is_empty()).then_some(Endpoint::Page(Route::CheckOutput { id, n, check }))
        }
        _ => None,
    }
}

/// The record id at the head of `segments` (a task's, or a lane's
/// `<task>/lanes/<n>`, checked) and the segments after it.
fn record_id<'a, 'b>(segments: &'b [&'a str]) -> Option<(String, &'b [&'a str])> {
    if let [task, "lanes", n, rest @ ..] = segments
        && n.bytes().all(|b| b.is_ascii_digit())
        && !n.is_empty()
    {
        let id = format!("{task}/lanes/{n}");
        return check_record_id(&id).is_ok().then_some((id, rest));
    }
    let (task, rest) = segments.split_first()?;
    crate::record::store::check_task_name(task).is_ok().then(|| (task.to_string(), rest))
}

/// An attempt's number: digits as `u32` prints them, at least 1.
fn number(s: &str) -> Option<u32> {
    s.parse::<u32>().ok().filter(|n| *n >= 1 && n.to_string() == s)
}

/// The last value of `key` in `query`, unless empty.
fn param(query: &[(String, String)], key: &str) -> Option<String> {
    query.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.clone()).filter(|v| !v.is_empty())
}

/// The pairs of a query string or a form body, decoded, in order.
pub(crate) fn pairs(encoded: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(encoded).into_owned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(r: Route) -> Option<Endpoint> {
        Some(Endpoint::Page(r))
    }

    fn id(s: &str) -> String {
        s.to_string()
    }

    #[test]
    fn requests_map_to_what_they_ask_for() {
        use Method::{Get, Other, Post};
        let task = |s: &str| page(Route::Task { id: id(s), refused: None });
        let attempt = |s: &str, n, against, layout| page(Route::Attempt { id: id(s), n, against, layout });
        let cases: Vec<(Method, &str, &str, Option<Endpoint>)> = vec![
            (Get, "/", "", page(Route::Tasks { state: None, query: None })),
            (
                Get,
                "/tasks",
                "state=escalated&q=login",
                page(Route::Tasks { state: Some(id("escalated")), query: Some(id("login")) }),
            ),
            (Get, "/", "state=&q=", page(Route::Tasks { state: None, query: None })),
            (Get, "/stats", "", page(Route::Stats)),
            (Get, "/tasks/fix-login", "", task("fix-login")),
            (Get, "/tasks/fix-login/lanes/2", "", task("fix-login/lanes/2")),
            (Get, "/tasks/fix-login/timeline", "", page(Route::Timeline { id: id("fix-login") })),
            (Get, "/tasks/fix-login/lanes/2/timeline", "", page(Route::Timeline { id: id("fix-login/lanes/2") })),
            (Get, "/tasks/fix-login/live", "", Some(Endpoint::Live { id: id("fix-login") })),
            (Get, "/tasks/fix-login/lanes", "", page(Route::Lanes { id: id("fix-login") })),
            (Get, "/tasks/fix-login/lanes/2/lanes", "", None),
            (Get, "/tasks/fix-login/attempts/3", "", attempt("fix-login", 3, Against::Base, PageLayout::Unified)),
            (
                Get,
                "/tasks/a/attempts/3",
                "against=previous&layout=split",
                attempt("a", 3, Against::Previous, PageLayout::Split),
            ),
            (
                Get,
                "/tasks/a/lanes/1/attempts/2",
                "against=base",
                attempt("a/lanes/1", 2, Against::Base, PageLayout::Unified),
            ),
            (Get, "/tasks/a/attempts/3", "against=head", None),
            (Get, "/tasks/a/attempts/3", "layout=wide", None),
            (Get, "/tasks/a/attempts/0", "", None),
            (Get, "/tasks/a/attempts/03", "", None),
            (Get, "/tasks/a/attempts/-1", "", None),
            (Get, "/tasks/a/attempts/99999999999", "", None),
            (Get, "/tasks/a/attempts/x", "", None),
            (Get, "/tasks/a/attempts/2/prompt", "", page(Route::Prompt { id: id("a"), n: 2 })),
            (
                Get,
                "/tasks/a/attempts/2/checks/pytest",
                "",
                page(Route::CheckOutput { id: id("a"), n: 2, check: id("pytest") }),
            ),
            (
                Get,
                "/tasks/a/attempts/2/checks/unit%20tests",
                "",
                page(Route::CheckOutput { id: id("a"), n: 2, check: id("unit tests") }),
            ),
            (Get, "/tasks/a/attempts/2/checks/", "", None),
            (Get, "/tasks/a/attempts/2/checks/%ff", "", None),
            (Get, "/tasks/a/attempts/2/checks/x/y", "", None),
            (Post, "/tasks/fix-login/review", "", Some(Endpoint::Review { id: id("fix-login") })),
            (Post, "/tasks/fix-login/land", "", Some(Endpoint::Land { id: id("fix-login") })),
            (Post, "/tasks/a/lanes/1/review", "", None),
            (Get, "/tasks/fix-login/review", "", None),
            (Post, "/tasks/fix-login", "", None),
            (Other, "/tasks/fix-login", "", None),
            (Get, "/assets/app.js", "", Some(Endpoint::Asset { name: "app.js" })),
            (Get, "/assets/app.css", "", Some(Endpoint::Asset { name: "app.css" })),
            (Get, "/assets/../Cargo.toml", "", None),
            (Get, "/assets/", "", None),
            (Post, "/assets/app.js", "", None),
            // Ids outside the record, and paths that are not pages.
            (Get, "/tasks/../../etc/passwd", "", None),
            (Get, "/tasks/%2e%2e/%2e%2e/etc/passwd", "", None),
            (Get, "/tasks/..", "", None),
            (Get, "/tasks/.hidden", "", None),
            (Get, "/tasks/a..b", "", None),
            (Get, "/tasks/-rf", "", None),
            (Get, "/tasks/x.lock", "", None),
            (Get, "/tasks/", "", None),
            (Get, "/tasks//attempts/1", "", None),
            (Get, "/tasks/a/", "", None),
            (Get, "/tasks/a/lanes/0", "", None),
            (Get, "/tasks/a/lanes/01", "", None),
            (Get, "/tasks/../lanes/1", "", None),
            (Get, "/tasks/a%2Fb", "", None),
            (Get, "/tasks/a/events.jsonl", "", None),
            (Get, "/etc/passwd", "", None),
            (Get, "//etc/passwd", "", None),
            (Get, "", "", None),
            (Get, "/favicon.ico", "", None),
        ];
        for (method, path, query, want) in cases {
            let got = route(method, path, &pairs(query.as_bytes()));
            assert_eq!(got, want, "{method:?} {path}?{query}");
        }
    }

    #[test]
    fn pairs_keep_repeated_fields_in_order() {
        let got = pairs(b"comment_path=a.py&comment_lines=1-2&comment_path=b%20c.py&x=%3Cscript%3E+y");
        let want =
            [("comment_path", "a.py"), ("comment_lines", "1-2"), ("comment_path", "b c.py"), ("x", "<script> y")];
        assert_eq!(got, want.map(|(k, v)| (k.to_string(), v.to_string())).to_vec());
    }
}
