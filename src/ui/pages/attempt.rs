//! An attempt's page: its diff with syntax highlighting, unified or side
//! by side, against the base or against the previous attempt (the two
//! snapshot commits compared through the git layer); each diff line with
//! `data-path` and `data-line` (its new-side number) for the script's line
//! comments; what each gate said with each check's digest and a link to its
//! full output; a link to the prompt it received. The prompt and a check's
//! output are served as text, cut at [`MAX_TEXT`] (the cut said), binary
//! output (NUL bytes) shown as such.

use std::io::Read;

use maud::{Markup, PreEscaped, html};

use super::diff::{self, LineKind};
use super::html as esc;
use super::view::task;
use super::{Missing, PageAnswer, Site, html_page, layout, short, text_page};
use crate::git::{DiffDepth, Oid};
use crate::model::AttemptRecord;
use crate::syntax::highlight::{NAMES, Span, highlight_lines};
use crate::ui::{Against, PageLayout};

/// The most of a prompt or a check's output a page shows.
const MAX_TEXT: u64 = 4 << 20;
/// The most patch lines an attempt's page shows; the files past it are
/// listed with their counts.
const MAX_DIFF_LINES: usize = 20_000;

fn not_found(what: String) -> Missing {
    Missing::NotFound(what)
}

/// The attempt `n` of record `id`.
fn record(site: &Site<'_>, id: &str, n: u32) -> Result<(AttemptRecord, Vec<AttemptRecord>), Missing> {
    let t = task(site.store, id)?;
    let r = t.attempts.iter().find(|r| r.number == n).cloned();
    match r {
        Some(r) => Ok((r, t.attempts)),
        None => Err(not_found(format!("task {id:?} has no completed attempt {n}"))),
    }
}

pub(super) fn page(site: &Site<'_>, id: &str, n: u32, against: Against, layout_: PageLayout) -> PageAnswer {
    let (r, all) = record(site, id, n)?;
    let ns = n.to_string();
    let link = |a: Against, l: PageLayout| {
        let a = if a == Against::Base { "base" } else { "previous" };
        let l = if l == PageLayout::Unified { "unified" } else { "split" };
        esc::href(&["tasks", id, "attempts", &ns], &[("against", a), ("layout", l)])
    };
    let previous = all.iter().rev().find(|p| p.number < n && p.commit.is_some());
    let (diff_markup, against_what) = diff_section(site, &r, previous, against, layout_);
    let content = html! {
        h1 { "Attempt " (n) " of " a href=(esc::task_href(id)) { (esc::text(id)) } }
        p.meta {
            span class={ "badge " (r.outcome.as_str().to_lowercase()) } { (r.outcome.as_str()) }
            " · " (crate::text::human_ms(r.duration_ms))
            @if let Some(c) = &r.commit { " · snapshot " code { (esc::text(short(c))) } }
            " · " a href=(esc::href(&["tasks", id, "attempts", &ns, "prompt"], &[])) { "the prompt it received" }
        }
        @if !r.reason.is_empty() { p.reason { (esc::text(&r.reason)) } }
        nav.diff-options {
            "Against: "
            a.current[against == Against::Base] href=(link(Against::Base, layout_)) { "the base" } " · "
            a.current[against == Against::Previous] href=(link(Against::Previous, layout_)) { "the previous attempt" }
            " | Layout: "
            a.current[layout_ == PageLayout::Unified] href=(link(against, PageLayout::Unified)) { "unified" } " · "
            a.current[layout_ == PageLayout::Split] href=(link(against, PageLayout::Split)) { "side by side" }
        }
        p.against { (against_what) }
        section #diff { (diff_markup) }
        section.checks {
            h2 { "Checks" }
            @if r.checks.is_empty() { p { "No check ran." } }
            @for c in &r.checks {
                div class={ "check " (if c.passed { "pass" } else { "fail" }) } {
                    h3 {
                        (esc::text(&c.name)) ": " (if c.passed { "passed" } else { "failed" })
                        " · " a href=(esc::href(&["tasks", id, "attempts", &ns, "checks", &c.name], &[])) { "full output" }
                    }
                    @if !c.digest.is_empty() { pre.digest { @for l in &c.digest { (esc::text(l)) "\n" } } }
                }
            }
        }
        section.gates { h2 { "Gates" } (super::task::gates(&r)) }
        section.actions {
            h2 { "Review" }
            p.hint { "Select lines in the diff to comment on them." }
            (super::task::review_form(site, id, n))
        }
    };
    Ok(html_page(200, layout(&format!("Attempt {n} of {id}"), None, content)))
}

/// The diff's markup and what it is against.
fn diff_section(
    site: &Site<'_>,
    r: &AttemptRecord,
    previous: Option<&AttemptRecord>,
    against: Against,
    layout_: PageLayout,
) -> (Markup, String) {
    let Some(new) = r.commit.as_deref().and_then(|c| Oid::from_str(c).ok()) else {
        return (html! { p { "This attempt left no snapshot: no diff to show." } }, String::new());
    };
    let base = site.repo.parents(new).first().copied();
    let (old, what) =
        match (against, previous.and_then(|p| Some((p.number, Oid::from_str(p.commit.as_deref()?).ok()?)))) {
            (Against::Previous, Some((pn, oid))) => (Some(oid), format!("Against attempt {pn}.")),
            (Against::Previous, None) => (base, "No earlier attempt left a snapshot: against the base.".into()),
            (Against::Base, _) => (base, "Against the base.".into()),
        };
    let Some(old) = old else { return (html! { p { "The snapshot's base is not in the repository." } }, what) };
    match site.repo.compare_snapshots(old, new, DiffDepth::Patch { max_lines: MAX_DIFF_LINES }) {
        Ok(c) => {
            let files = diff::parse(&c.patch);
            let shown: std::collections::BTreeSet<String> =
                files.iter().filter_map(|f| f.new_path.clone().or_else(|| f.old_path.clone())).collect();
            let cut: Vec<_> = c
                .changes
                .changes
                .iter()
                .filter(|ch| !shown.contains(&*String::from_utf8_lossy(ch.path())) && !ch.binary)
                .collect();
            let markup = html! {
                @if files.is_empty() && c.changes.changes.is_empty() { p { "No change." } }
                @for f in &files { (file(site, old, new, f, layout_)) }
                @if c.patch_lines > MAX_DIFF_LINES && !cut.is_empty() {
                    div.cut {
                        p { "Not shown: the diff has " (c.patch_lines) " lines and the page shows at most " (MAX_DIFF_LINES) "." }
                        ul { @for ch in &cut { li { code { (esc::bytes(ch.path())) } " +" (ch.additions) " −" (ch.deletions) } } }
                    }
                }
            };
            (markup, what)
        }
        Err(e) => (html! { p.error { "The diff cannot be computed: " (esc::text(&e.to_string())) } }, what),
    }
}

/// A side's highlighting, when its language is one retry-run parses.
fn highlighted(site: &Site<'_>, commit: Oid, path: Option<&str>) -> Option<Vec<Vec<Span>>> {
    let path = path?;
    crate::syntax::language_for(path.as_bytes())?;
    let bytes = site.repo.blob_at(commit, path)?;
    highlight_lines(path.as_bytes(), &bytes)
}

/// A line's code, its spans wrapped in `hl-<name>` classes.
fn code(text: &str, spans: Option<&Vec<Span>>) -> Markup {
    let Some(spans) = spans.filter(|s| {
        s.iter().all(|sp| sp.end <= text.len() && text.is_char_boundary(sp.start) && text.is_char_boundary(sp.end))
    }) else {
        return html! { (esc::text(text)) };
    };
    let mut out = String::with_capacity(text.len() * 2);
    let mut at = 0;
    for sp in spans {
        if sp.start > at {
            out.push_str(&esc::text(&text[at..sp.start]).0);
        }
        let inner = esc::text(&text[sp.start.max(at)..sp.end]).0;
        match sp.name {
            Some(i) => {
                let class = NAMES[i].split('.').next().unwrap_or("");
                out.push_str(&format!(r#"<span class="hl-{class}">{inner}</span>"#));
            }
            None => out.push_str(&inner),
        }
        at = sp.end.max(at);
    }
    if at < text.len() {
        out.push_str(&esc::text(&text[at..]).0);
    }
    PreEscaped(out)
}

fn file(site: &Site<'_>, old: Oid, new: Oid, f: &diff::File, layout_: PageLayout) -> Markup {
    let (old_hl, new_hl) = if f.binary {
        (None, None)
    } else {
        (highlighted(site, old, f.old_path.as_deref()), highlighted(site, new, f.new_path.as_deref()))
    };
    file_markup(f, layout_, old_hl, new_hl)
}

/// Pure: one file's diff, with each side's highlighting when there is one.
pub(crate) fn file_markup(
    f: &diff::File,
    layout_: PageLayout,
    old_hl: Option<Vec<Vec<Span>>>,
    new_hl: Option<Vec<Vec<Span>>>,
) -> Markup {
    let path = f.new_path.as_deref().or(f.old_path.as_deref()).unwrap_or("");
    let side = |kind: LineKind, o: Option<u32>, n: Option<u32>| -> Option<&Vec<Span>> {
        match kind {
            LineKind::Deleted => old_hl.as_ref()?.get(o? as usize - 1),
            _ => new_hl.as_ref()?.get(n? as usize - 1),
        }
    };
    html! {
        div.file data-path=(esc::attr(path)) {
            h3.file-name { (esc::text(path)) }
            @for h in f.header.iter().skip(1) { div.file-header { (esc::text(h)) } }
            @if f.binary { p.binary { "Binary file: not shown." } }
            @if !f.binary && f.hunks.is_empty() && f.header.len() <= 1 { p { "No content change." } }
            @for h in &f.hunks {
                table class={ "hunk " (if layout_ == PageLayout::Split { "split" } else { "unified" }) } {
                    tr.hunk-header { td colspan=(if layout_ == PageLayout::Split { 4 } else { 3 }) { (esc::text(&h.header)) } }
                    @if layout_ == PageLayout::Unified {
                        @for l in &h.lines {
                            @let class = match l.kind { LineKind::Added => "add", LineKind::Deleted => "del", LineKind::Context => "ctx", LineKind::Note => "note" };
                            tr class=(class) data-path=(esc::attr(path)) data-line=[l.new] {
                                td.ln { @if let Some(o) = l.old { (o) } }
                                td.ln { @if let Some(n) = l.new { (n) } }
                                td.code { (code(&l.text, side(l.kind, l.old, l.new))) }
                            }
                        }
                    } @else {
                        @for (left, right) in split_rows(&h.lines) {
                            tr data-path=(esc::attr(path)) data-line=[right.and_then(|r| r.new)] {
                                @if let Some(l) = left {
                                    td.ln { @if let Some(o) = l.old { (o) } }
                                    td class={ "code " (if l.kind == LineKind::Deleted { "del" } else { "ctx" }) } { (code(&l.text, side(l.kind, l.old, l.new))) }
                                } @else { td.ln {} td.code.empty {} }
                                @if let Some(l) = right {
                                    td.ln { @if let Some(n) = l.new { (n) } }
                                    td class={ "code " (match l.kind { LineKind::Added => "add", LineKind::Note => "note", _ => "ctx" }) } { (code(&l.text, side(l.kind, l.old, l.new))) }
                                } @else { td.ln {} td.code.empty {} }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Pure: a hunk's lines as side-by-side rows: context on both sides, each
/// run of deletions beside the additions that follow it.
pub(crate) fn split_rows(lines: &[diff::HunkLine]) -> Vec<(Option<&diff::HunkLine>, Option<&diff::HunkLine>)> {
    let mut rows = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match lines[i].kind {
            LineKind::Context => {
                rows.push((Some(&lines[i]), Some(&lines[i])));
                i += 1;
            }
            LineKind::Note => {
                rows.push((None, Some(&lines[i])));
                i += 1;
            }
            LineKind::Deleted | LineKind::Added => {
                let dels: Vec<&diff::HunkLine> =
                    lines[i..].iter().take_while(|l| l.kind == LineKind::Deleted).collect();
                i += dels.len();
                let adds: Vec<&diff::HunkLine> = lines[i..].iter().take_while(|l| l.kind == LineKind::Added).collect();
                i += adds.len();
                for k in 0..dels.len().max(adds.len()) {
                    rows.push((dels.get(k).copied(), adds.get(k).copied()));
                }
            }
        }
    }
    rows
}

/// At most [`MAX_TEXT`] bytes of `path`, and the file's size.
fn read_capped(path: &std::path::Path) -> std::io::Result<(Vec<u8>, u64)> {
    let f = std::fs::File::open(path)?;
    let size = f.metadata()?.len();
    let mut bytes = Vec::new();
    f.take(MAX_TEXT).read_to_end(&mut bytes)?;
    Ok((bytes, size))
}

/// Text as served: binary (a NUL byte) said rather than shown, a cut said.
pub(crate) fn as_text(bytes: Vec<u8>, size: u64) -> Vec<u8> {
    if bytes.contains(&0) {
        return format!("(binary output, {size} bytes, not shown)\n").into_bytes();
    }
    let mut out = bytes;
    if size > out.len() as u64 {
        out.extend_from_slice(format!("\n[… cut: {} bytes shown of {size}]\n", out.len()).as_bytes());
    }
    out
}

/// The prompt attempt `n` received, as text.
pub(super) fn prompt(site: &Site<'_>, id: &str, n: u32) -> PageAnswer {
    let _ = record(site, id, n)?;
    let path = site.store.attempt(id, n).prompt();
    let (bytes, size) = read_capped(&path).map_err(|_| not_found(format!("attempt {n} of {id:?} has no prompt")))?;
    Ok(text_page(as_text(bytes, size)))
}

/// A check's full output, for a check the attempt recorded only.
pub(super) fn check_output(site: &Site<'_>, id: &str, n: u32, check: &str) -> PageAnswer {
    let (r, _) = record(site, id, n)?;
    if !r.checks.iter().any(|c| c.name == check) {
        return Err(not_found(format!("attempt {n} of {id:?} ran no check {check:?}")));
    }
    let path = site.store.attempt(id, n).check_out(check);
    let (bytes, size) =
        read_capped(&path).map_err(|_| not_found(format!("the output of check {check:?} was not kept")))?;
    Ok(text_page(as_text(bytes, size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletions_sit_beside_the_additions_that_follow() {
        let l = |kind, text: &str| diff::HunkLine { kind, old: None, new: None, text: text.into() };
        let lines = [
            l(LineKind::Context, "a"),
            l(LineKind::Deleted, "b"),
            l(LineKind::Deleted, "c"),
            l(LineKind::Added, "C"),
            l(LineKind::Added, "D"),
            l(LineKind::Added, "E"),
            l(LineKind::Context, "f"),
        ];
        let got: Vec<(Option<&str>, Option<&str>)> =
            split_rows(&lines).iter().map(|(a, b)| (a.map(|x| x.text.as_str()), b.map(|x| x.text.as_str()))).collect();
        assert_eq!(
            got,
            [
                (Some("a"), Some("a")),
                (Some("b"), Some("C")),
                (Some("c"), Some("D")),
                (None, Some("E")),
                (Some("f"), Some("f"))
            ]
        );
    }

    #[test]
    fn text_is_cut_and_binary_is_said() {
        assert_eq!(as_text(b"ok\n".to_vec(), 3), b"ok\n");
        assert!(String::from_utf8(as_text(b"a\0b".to_vec(), 3)).unwrap_or_default().contains("binary output, 3 bytes"));
        assert!(
            String::from_utf8(as_text(b"abc".to_vec(), 10))
                .unwrap_or_default()
                .ends_with("[… cut: 3 bytes shown of 10]\n")
        );
    }
}
