//! One file's patch, as `git diff` prints it.
//!
//! The hunks come from libgit2 (`Patch::from_blobs` where the blob objects
//! are at hand, else `Patch::from_buffers`, in memory); the
//! header lines follow git's `diff.c`: `old mode`/`new mode`, `new file
//! mode`, `deleted file mode`, `similarity index`/`rename from`/`rename to`,
//! `index A..B[ MODE]`, then `---`/`+++` or `Binary files ... differ`. A
//! type change is a deletion followed by an addition, as git shows it.
//! Abbreviated ids have 7 digits (git may print more in very large
//! repositories, where 7 are not unique).

use std::path::Path;

use git2::{Blob, DiffOptions, Oid, Patch};

use super::{GitError, ctx};

/// One side of a file: path, blob id, mode and content.
pub(super) struct FileSide<'a> {
    pub path: &'a [u8],
    pub id: Oid,
    pub mode: i32,
    pub data: &'a [u8],
    /// The blob object, where at hand: its patch then starts from it and
    /// its id, which libgit2 would otherwise compute again from `data`.
    pub blob: Option<&'a Blob<'a>>,
}

/// A patch's counts and text.
#[derive(Default)]
pub(super) struct FilePatch {
    pub additions: usize,
    pub deletions: usize,
    pub binary: bool,
    pub text: Vec<u8>,
    /// Lines deleted from the old version and added in the new (1-based).
    pub old_changed: Vec<usize>,
    pub new_changed: Vec<usize>,
    /// How many lines the patch text has (counted even when not rendered).
    pub line_count: usize,
}

/// What to compute besides counts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Want {
    /// The changed line numbers.
    pub lines: bool,
    /// The patch text.
    pub text: bool,
}

/// A header path with its `a/` or `b/` prefix, quoted as git quotes it.
fn header_path(prefix: &str, path: &[u8]) -> Vec<u8> {
    let mut full = prefix.as_bytes().to_vec();
    full.extend_from_slice(path);
    crate::pathfmt::quote_ascii(&full).into_bytes()
}

fn abbrev(id: Oid) -> String {
    let mut s = id.to_string();
    s.truncate(7);
    s
}

fn line(out: &mut Vec<u8>, parts: &[&[u8]]) {
    for p in parts {
        out.extend_from_slice(p);
    }
    out.push(b'\n');
}

/// The patch of one change. `similarity` is the percentage of a rename.
pub(super) fn file_patch(
    old: Option<&FileSide>,
    new: Option<&FileSide>,
    similarity: Option<u32>,
    want: Want,
    opts: &mut DiffOptions,
) -> Result<FilePatch, GitError> {
    let kind = |m: i32| m & 0o170000;
    if let (Some(o), Some(n)) = (old, new)
        && kind(o.mode) != kind(n.mode)
    {
        return type_change_patch(o, n, want, opts);
    }
    let (Some(any), other) = (old.or(new), new.or(old)) else {
        return Ok(FilePatch::default());
    };
    let a_path = header_path("a/", old.map_or(any.path, |o| o.path));
    let b_path = header_path("b/", other.map_or(any.path, |n| n.path));
    let mut text = header(old, new, similarity, &a_path, &b_path);
    let zero = Oid::ZERO_SHA1;
    let (old_id, new_id) = (old.map_or(zero, |o| o.id), new.map_or(zero, |n| n.id));
    let (old_data, new_data) = (old.map_or(&[][..], |o| o.data), new.map_or(&[][..], |n| n.data));
    if old_id == new_id && old_data == new_data {
        // Same content: only the mode or the name changed.
        return Ok(finish(text, want, FilePatch::default()));
    }
    // An empty path: with a blob, libgit2 would look the path up in the
    // repository's attributes (reading its index) for each file; buffers
    // never were, and the hunks are the same.
    let none = Some(Path::new(""));
    let patch = match (old.and_then(|o| o.blob), new.and_then(|n| n.blob)) {
        (Some(a), Some(b)) => Patch::from_blobs(a, none, b, none, Some(opts)),
        (Some(a), _) => Patch::from_blob_and_buffer(a, none, new_data, none, Some(opts)),
        _ => Patch::from_buffers(old_data, None, new_data, None, Some(opts)),
    };
    let mut patch = patch.map_err(ctx(|| "cannot compute a patch".into()))?;
    let (_, additions, deletions) = patch.line_stats().map_err(ctx(|| "cannot count lines".into()))?;
    let binary = patch.delta().flags().is_binary();
    let minus = if old.is_some() { a_path } else { b"/dev/null".to_vec() };
    let plus = if new.is_some() { b_path } else { b"/dev/null".to_vec() };
    if binary {
        line(&mut text, &[b"Binary files ", &minus, b" and ", &plus, b" differ"]);
        return Ok(finish(text, want, FilePatch { binary, ..FilePatch::default() }));
    }
    let (old_changed, new_changed, body_lines) = changed_lines(&patch, want)?;
    let header_lines = text.iter().filter(|&&b| b == b'\n').count();
    let counts = FilePatch { additions, deletions, binary, old_changed, new_changed, ..FilePatch::default() };
    if !want.text {
        return Ok(FilePatch { line_count: header_lines + body_lines, text: Vec::new(), ..counts });
    }
    let buf = patch.to_buf().map_err(ctx(|| "cannot print a patch".into()))?;
    if let Some(at) = find_hunks(&buf) {
        // git ends an unquoted name that holds a space with a tab, so that
        // patch(1) sees where it ends.
        let tab = |name: &[u8]| {
            if name.contains(&b' ') && !name.starts_with(b"\"") { &b"\t"[..] } else { &b""[..] }
        };
        line(&mut text, &[b"--- ", &minus, tab(&minus)]);
        line(&mut text, &[b"+++ ", &plus, tab(&plus)]);
        text.extend_from_slice(&buf[at..]);
    }
    Ok(finish(text, want, counts))
}

/// A change of a path's type (a file become a link, say): git prints it
/// as the old side deleted and the new one added.
fn type_change_patch(
    old: &FileSide,
    new: &FileSide,
    want: Want,
    opts: &mut DiffOptions,
) -> Result<FilePatch, GitError> {
    let mut a = file_patch(Some(old), None, None, want, opts)?;
    let b = file_patch(None, Some(new), None, want, opts)?;
    a.additions += b.additions;
    a.deletions += b.deletions;
    a.binary |= b.binary;
    a.text.extend_from_slice(&b.text);
    a.new_changed = b.new_changed;
    a.line_count += b.line_count;
    Ok(a)
}

/// The extended header, as git prints it: `diff --git`, the modes, the
/// rename and the `index` line.
fn header(
    old: Option<&FileSide>,
    new: Option<&FileSide>,
    similarity: Option<u32>,
    a_path: &[u8],
    b_path: &[u8],
) -> Vec<u8> {
    let mut text = Vec::new();
    line(&mut text, &[b"diff --git ", a_path, b" ", b_path]);
    match (old, new) {
        (None, Some(n)) => line(&mut text, &[format!("new file mode {:06o}", n.mode).as_bytes()]),
        (Some(o), None) => line(&mut text, &[format!("deleted file mode {:06o}", o.mode).as_bytes()]),
        (Some(o), Some(n)) if o.mode != n.mode => {
            line(&mut text, &[format!("old mode {:06o}", o.mode).as_bytes()]);
            line(&mut text, &[format!("new mode {:06o}", n.mode).as_bytes()]);
        }
        _ => {}
    }
    if let (Some(o), Some(n), Some(pct)) = (old, new, similarity) {
        line(&mut text, &[format!("similarity index {pct}%").as_bytes()]);
        line(&mut text, &[b"rename from ", &header_path("", o.path)[..]]);
        line(&mut text, &[b"rename to ", &header_path("", n.path)[..]]);
    }
    let zero = Oid::ZERO_SHA1;
    let (old_id, new_id) = (old.map_or(zero, |o| o.id), new.map_or(zero, |n| n.id));
    if old_id != new_id {
        let mut index = format!("index {}..{}", abbrev(old_id), abbrev(new_id));
        if let (Some(o), Some(n)) = (old, new)
            && o.mode == n.mode
        {
            index.push_str(&format!(" {:06o}", o.mode));
        }
        line(&mut text, &[index.as_bytes()]);
    }
    text
}

/// The changed lines' numbers on each side (when `want.lines`) and the
/// number of lines of the patch's body: its hunks, and the `---`/`+++`
/// lines when there is one.
fn changed_lines(patch: &Patch, want: Want) -> Result<(Vec<usize>, Vec<usize>, usize), GitError> {
    let (mut old_changed, mut new_changed) = (Vec::new(), Vec::new());
    let mut body_lines = 0;
    for h in 0..patch.num_hunks() {
        let n = patch.num_lines_in_hunk(h).map_err(ctx(|| "cannot read a hunk".into()))?;
        body_lines += 1 + n;
        if !want.lines {
            continue;
        }
        for l in 0..n {
            let line = patch.line_in_hunk(h, l).map_err(ctx(|| "cannot read a hunk line".into()))?;
            match line.origin() {
                '-' => old_changed.extend(line.old_lineno().map(|n| n as usize)),
                '+' => new_changed.extend(line.new_lineno().map(|n| n as usize)),
                _ => {}
            }
        }
    }
    if body_lines > 0 {
        body_lines += 2; // the ---/+++ lines
    }
    Ok((old_changed, new_changed, body_lines))
}

/// The patch with its text (kept only when wanted) and its line count.
fn finish(text: Vec<u8>, want: Want, counts: FilePatch) -> FilePatch {
    let line_count = text.iter().filter(|&&b| b == b'\n').count();
    FilePatch { line_count, text: if want.text { text } else { Vec::new() }, ..counts }
}

/// Where the first hunk starts in libgit2's patch text.
fn find_hunks(buf: &[u8]) -> Option<usize> {
    if buf.starts_with(b"@@") {
        return Some(0);
    }
    buf.windows(3).position(|w| w == b"\n@@").map(|i| i + 1)
}
