//! Escaping for the web view: every byte from the record reaches a page
//! through [`text`] (element content) or [`attr`] (a quoted attribute
//! value), and every link is built by [`href`] from ids percent-encoded
//! segment by segment, so no link can leave the site or carry a scheme
//! (`javascript:`) from the record. Pure.
//!
//! Both escape `&`, `<`, `>`, `"` and `'`, and first make the characters
//! a reader cannot see visible (controls, NUL, bidirectional overrides,
//! as `crate::text::visible` shows them in the terminal). The results are
//! [`maud::PreEscaped`], which the templates splice as they are; a plain
//! string spliced by mistake is still escaped by maud.

use maud::PreEscaped;

fn escape_into(out: &mut String, s: &str) {
    for c in crate::text::visible(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// `s` as element content.
pub(crate) fn text(s: &str) -> PreEscaped<String> {
    let mut out = String::with_capacity(s.len() + 8);
    escape_into(&mut out, s);
    PreEscaped(out)
}

/// Bytes as element content: invalid UTF-8 replaced (U+FFFD), then as [`text`].
pub(crate) fn bytes(b: &[u8]) -> PreEscaped<String> {
    text(&String::from_utf8_lossy(b))
}

/// `s` as the value of a double-quoted attribute.
pub(crate) fn attr(s: &str) -> PreEscaped<String> {
    text(s)
}

/// A path segment percent-encoded: only unreserved characters are kept.
fn segment(out: &mut String, s: &str) {
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// A link inside the site: `/` then each segment percent-encoded (a `/`
/// in an id becomes `%2F`), then the query pairs, each encoded the same
/// way. Always starts with `/`, never with `//`: no scheme, no other host.
pub(crate) fn href(segments: &[&str], query: &[(&str, &str)]) -> PreEscaped<String> {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        segment(&mut out, s);
    }
    if out.is_empty() {
        out.push('/');
    }
    for (i, (k, v)) in query.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        segment(&mut out, k);
        out.push('=');
        segment(&mut out, v);
    }
    attr(&out)
}

/// The id of a task as link segments: a lane's record (`t/lanes/2`) is its
/// task's link.
pub(crate) fn task_href(id: &str) -> PreEscaped<String> {
    href(&["tasks", id], &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_escape_markup_and_show_hidden_characters() {
        for (input, want) in [
            ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
            ("\" onmouseover=\"x", "&quot; onmouseover=&quot;x"),
            ("' onfocus='x", "&#39; onfocus=&#39;x"),
            ("a & b", "a &amp; b"),
            ("nul\0here", "nul\\x00here"),
            ("abc\u{202e}def", "abc\\u{202e}def"),
            ("</textarea>", "&lt;/textarea&gt;"),
            ("plain é", "plain é"),
        ] {
            assert_eq!(text(input).0, want, "{input:?}");
            assert_eq!(attr(input).0, want, "{input:?}");
        }
    }

    #[test]
    fn links_are_ids_percent_encoded_under_the_site() {
        for (segs, query, want) in [
            (&["tasks", "fix-1"][..], &[][..], "/tasks/fix-1"),
            (&["tasks", "javascript:alert(1)"], &[], "/tasks/javascript%3Aalert%281%29"),
            (&["tasks", "a/../../etc"], &[], "/tasks/a%2F..%2F..%2Fetc"),
            (&["tasks", "\" x=\"<"], &[], "/tasks/%22%20x%3D%22%3C"),
            (&[], &[("q", "a b&c")], "/?q=a%20b%26c"),
            (&["tasks", "t", "attempts", "2"], &[("against", "previous")], "/tasks/t/attempts/2?against=previous"),
        ] {
            let got = href(segs, query).0;
            assert_eq!(got, want);
            assert!(got.starts_with('/') && !got.starts_with("//"));
        }
    }
}
