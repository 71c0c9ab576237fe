//! Printing a diff summary: `text`, `markdown` (for a PR comment), `json`.
//!
//! JSON is a wire contract: `{"base", "head", "files": [{"path",
//! "old_path", "status", "additions", "deletions", "binary",
//! "symbols": [{"kind", "name", "qualified_name", "change"}]}],
//! "totals": {"files", "additions", "deletions"}, "patch",
//! "patch_truncated"}`. The patch keeps at most `max_lines` lines and ends
//! with `[... N lines omitted]` when it was cut.
//!
//! `text` and `markdown` are for people: paths are [`shown`] and every
//! other character that could steer a terminal is made visible
//! ([`crate::text::visible`]; a CR ending a line of a CRLF file reads `\r`).
//! JSON keeps the text as it is, escaped by serde.

use std::io::{self, Write};

use serde::Serialize;

use crate::model::{DiffSummary, SymbolChange, SymbolChangeKind, Totals};
use crate::pathfmt::{display, shown};
use crate::text::{VisibleWriter, plural};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DiffFormat {
    Text,
    Markdown,
    Json,
}

/// A patch cut to at most `max_lines` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BoundedPatch {
    pub text: String,
    pub omitted: usize,
}

/// Keeps the first `max_lines` lines of `patch`, and says how many of the
/// `total` it cut (`patch` may already hold fewer than `total`).
pub(crate) fn bound_patch(patch: &str, total: usize, max_lines: usize) -> BoundedPatch {
    if total <= max_lines {
        return BoundedPatch { text: patch.to_string(), omitted: 0 };
    }
    let end = patch.match_indices('\n').nth(max_lines.wrapping_sub(1)).map_or(0, |(i, _)| i + 1);
    let end = if max_lines == 0 { 0 } else { end };
    let omitted = total - max_lines;
    BoundedPatch { text: format!("{}[... {omitted} lines omitted]\n", &patch[..end]), omitted }
}

pub(crate) fn write(out: &mut dyn Write, format: DiffFormat, d: &DiffSummary, max_lines: usize) -> io::Result<()> {
    let patch = bound_patch(&d.patch, d.patch_lines, max_lines);
    match format {
        DiffFormat::Text => text(&mut VisibleWriter::new(out, true), d, &patch),
        DiffFormat::Markdown => markdown(&mut VisibleWriter::new(out, true), d, &patch),
        DiffFormat::Json => json(out, d, &patch),
    }
}

fn file_label(c: &crate::model::Change, arrow: &str, wrap: &dyn Fn(&str) -> String) -> String {
    match c.old_path() {
        Some(old) => format!("{}{arrow}{}", wrap(&shown(old)), wrap(&shown(c.path()))),
        None => wrap(&shown(c.path())),
    }
}

/// `+` added, `~` modified, `-` removed.
fn symbol_mark(change: SymbolChangeKind) -> char {
    match change {
        SymbolChangeKind::Added => '+',
        SymbolChangeKind::Modified => '~',
        SymbolChangeKind::Removed => '-',
    }
}

fn symbol_cell(c: &crate::model::Change) -> String {
    c.symbols
        .iter()
        .flatten()
        .map(|s| {
            let change = match s.change {
                SymbolChangeKind::Added => "added",
                SymbolChangeKind::Modified => "modified",
                SymbolChangeKind::Removed => "removed",
            };
            format!("{} ({change})", code(&s.qualified_name))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn totals_line(t: &Totals) -> String {
    format!(
        "{} file{} changed, {} insertion{}(+), {} deletion{}(-)",
        t.files,
        plural(t.files),
        t.additions,
        plural(t.additions),
        t.deletions,
        plural(t.deletions),
    )
}

fn text(out: &mut dyn Write, d: &DiffSummary, patch: &BoundedPatch) -> io::Result<()> {
    let cs = &d.changes;
    writeln!(out, "diff {}...{}", super::short(&cs.base), super::short(cs.head.label()))?;
    let labels: Vec<String> = cs.changes.iter().map(|c| file_label(c, " -> ", &|s| s.to_string())).collect();
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0).min(60);
    for (c, label) in cs.changes.iter().zip(&labels) {
        let counts = if c.binary { "binary".to_string() } else { format!("+{} -{}", c.additions, c.deletions) };
        writeln!(out, "{}  {label:<width$}  {counts}", c.status.letter())?;
        for s in c.symbols.iter().flatten() {
            writeln!(out, "     {} {} {}", symbol_mark(s.change), s.kind, s.qualified_name)?;
        }
    }
    writeln!(out, "{}", totals_line(&cs.totals()))?;
    if !patch.text.is_empty() {
        writeln!(out)?;
        out.write_all(patch.text.as_bytes())?;
    }
    Ok(())
}

/// An inline code span that survives backticks in the text.
fn code(s: &str) -> String {
    let longest = longest_run(s, '`');
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    // `|` would end a table cell even inside a code span.
    format!("{fence}{pad}{}{pad}{fence}", s.replace('|', "\\|").replace('\n', " "))
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        cur = if c == ch { cur + 1 } else { 0 };
        best = best.max(cur);
    }
    best
}

fn markdown(out: &mut dyn Write, d: &DiffSummary, patch: &BoundedPatch) -> io::Result<()> {
    let cs = &d.changes;
    let t = cs.totals();
    writeln!(out, "### Diff summary\n")?;
    writeln!(
        out,
        "{}...{}: **{}**\n",
        code(super::short(&cs.base)),
        code(super::short(cs.head.label())),
        totals_line(&t)
    )?;
    if !cs.changes.is_empty() {
        writeln!(out, "| Status | File | + | - | Symbols |")?;
        writeln!(out, "|:--|:--|--:|--:|:--|")?;
        for c in &cs.changes {
            let label = file_label(c, " \u{2192} ", &code);
            let symbols = symbol_cell(c);
            if c.binary {
                writeln!(out, "| {} | {label} | binary | | {symbols} |", c.status.letter())?;
            } else {
                writeln!(out, "| {} | {label} | {} | {} | {symbols} |", c.status.letter(), c.additions, c.deletions)?;
            }
        }
        writeln!(out)?;
    }
    if !patch.text.is_empty() {
        let fence = "`".repeat(longest_run(&patch.text, '`').max(2) + 1);
        writeln!(out, "<details><summary>Patch</summary>\n")?;
        writeln!(out, "{fence}diff")?;
        out.write_all(patch.text.as_bytes())?;
        if !patch.text.ends_with('\n') {
            writeln!(out)?;
        }
        writeln!(out, "{fence}\n\n</details>")?;
    }
    Ok(())
}

#[derive(Serialize)]
struct JsonDiff<'a> {
    base: &'a str,
    head: &'a str,
    files: Vec<JsonFile<'a>>,
    totals: Totals,
    patch: &'a str,
    patch_truncated: bool,
}

/// One file, borrowed from the summary: its paths as they print, its
/// symbols as they are (no copy of every symbol's strings).
#[derive(Serialize)]
struct JsonFile<'a> {
    path: std::borrow::Cow<'a, str>,
    old_path: Option<std::borrow::Cow<'a, str>>,
    status: crate::model::Status,
    additions: usize,
    deletions: usize,
    binary: bool,
    /// The scopes the change touched; empty for a language without a grammar.
    symbols: &'a [SymbolChange],
}

fn json(out: &mut dyn Write, d: &DiffSummary, patch: &BoundedPatch) -> io::Result<()> {
    let cs = &d.changes;
    let doc = JsonDiff {
        base: &cs.base,
        head: cs.head.label(),
        files: cs
            .changes
            .iter()
            .map(|c| JsonFile {
                path: display(c.path()),
                old_path: c.old_path().map(display),
                status: c.status,
                additions: c.additions,
                deletions: c.deletions,
                binary: c.binary,
                symbols: c.symbols.as_deref().unwrap_or_default(),
            })
            .collect(),
        totals: cs.totals(),
        patch: &patch.text,
        patch_truncated: patch.omitted > 0,
    };
    // Serialized into memory first, then written at once: through `out`
    // (a `dyn Write`) each of the document's many small pieces would be a
    // call of its own.
    // About what the pretty form takes: a file's fields, a symbol's, the patch.
    let guess = doc.files.iter().map(|f| 256 + 2 * f.path.len() + 160 * f.symbols.len()).sum::<usize>();
    let mut bytes = Vec::with_capacity(guess + doc.patch.len() + doc.patch.len() / 8 + 256);
    serde_json::to_writer_pretty(&mut bytes, &doc)?;
    bytes.push(b'\n');
    out.write_all(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounding() {
        let p = "a\nb\nc\nd\n";
        assert_eq!(bound_patch(p, 4, 10), BoundedPatch { text: p.into(), omitted: 0 });
        assert_eq!(bound_patch(p, 4, 4).omitted, 0);
        assert_eq!(bound_patch(p, 4, 2), BoundedPatch { text: "a\nb\n[... 2 lines omitted]\n".into(), omitted: 2 });
        assert_eq!(bound_patch(p, 4, 0), BoundedPatch { text: "[... 4 lines omitted]\n".into(), omitted: 4 });
        assert_eq!(bound_patch("", 0, 0).omitted, 0);
        // A last line without a newline still counts.
        assert_eq!(bound_patch("a\nb", 2, 1).text, "a\n[... 1 lines omitted]\n");
        // Only the leading lines were rendered; the total says how many exist.
        assert_eq!(bound_patch(p, 1000, 3).text, "a\nb\nc\n[... 997 lines omitted]\n");
    }

    #[test]
    fn code_spans() {
        assert_eq!(code("a.rs"), "`a.rs`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("a|b"), "`a\\|b`");
    }

    fn planted() -> DiffSummary {
        use crate::model::{Change, ChangeSet, EntryKind, Head, Side, Status};
        let change = Change {
            status: Status::Added,
            old: None,
            new: Some(Side { path: b"src/evil\x1b[31m\x07.txt".to_vec(), kind: EntryKind::File }),
            symlink_target: None,
            submodule_dirty: false,
            binary: false,
            additions: 2,
            deletions: 0,
            symbols: None,
        };
        DiffSummary {
            changes: ChangeSet { base: "a".repeat(40), head: Head::Commit("b".repeat(40)), changes: vec![change] },
            patch: "+\x1b]52;c;aGk=\x07\x1b[2J\n+crlf\r\n+\u{9b}2J \u{202e}gnp.exe\n".into(),
            patch_lines: 3,
        }
    }

    #[test]
    fn text_and_markdown_show_controls_json_keeps_them() {
        let d = planted();
        for format in [DiffFormat::Text, DiffFormat::Markdown] {
            let mut out = Vec::new();
            write(&mut out, format, &d, 100).unwrap();
            let out = String::from_utf8(out).unwrap();
            assert!(!out.chars().any(crate::text::is_hidden), "{format:?}: {out:?}");
            assert!(out.contains("\"src/evil\\033[31m\\a.txt\""), "{format:?}: {out}");
            assert!(out.contains("+\\x1b]52;c;aGk=\\x07\\x1b[2J\n+crlf\\r\n+\\u{9b}2J \\u{202e}gnp.exe\n"), "{out}");
        }
        let mut out = Vec::new();
        write(&mut out, DiffFormat::Json, &d, 100).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["files"][0]["path"], "src/evil\x1b[31m\x07.txt");
        assert_eq!(v["patch"], d.patch.as_str());
    }
}
