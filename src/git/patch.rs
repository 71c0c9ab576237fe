//! One file's patch, as `git diff` prints it.
//!
//! The hunks come from libgit2 (`Patch::from_buffers`, in memory); the
//! header lines follow git's `diff.c`: `old mode`/`new mode`, `new file
//! mode`, `deleted file mode`, `similarity index`/`rename from`/`rename to`,
//! `index A..B[ MODE]`, then `---`/`+++` or `Binary files ... differ`. A
//! type change is a deletion followed by an addition, as git shows it.
//! Abbreviated ids have 7 digits (git may print more in very large
//! repositories, where 7 are not unique).

use git2::{DiffOptions, Oid, Patch};

use super::{GitError, ctx};

/// One side of a file: path, blob id, mode and content.
pub(super) struct FileSide<'a> {
    pub path: &'a [u8],
    pub id: Oid,
    pub mode: i32,
    pub data: &'a [u8],
}

/// A patch's counts and text.
#[derive(Default)]
pub(super) struct FilePatch {
    pub additions: usize,
    pub deletions: usize,
    pub binary: bool,
    pub text: Vec<u8>,
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
    opts: &mut DiffOptions,
) -> Result<FilePatch, GitError> {
    let kind = |m: i32| m & 0o170000;
    if let (Some(o), Some(n)) = (old, new)
        && kind(o.mode) != kind(n.mode)
    {
        let mut a = file_patch(Some(o), None, None, opts)?;
        let b = file_patch(None, Some(n), None, opts)?;
        a.additions += b.additions;
        a.deletions += b.deletions;
        a.binary |= b.binary;
        a.text.extend_from_slice(&b.text);
        return Ok(a);
    }
    let (Some(any), other) = (old.or(new), new.or(old)) else {
        return Ok(FilePatch::default());
    };
    let a_path = header_path("a/", old.map_or(any.path, |o| o.path));
    let b_path = header_path("b/", other.map_or(any.path, |n| n.path));
    let mut text = Vec::new();
    line(&mut text, &[b"diff --git ", &a_path, b" ", &b_path]);
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
    let (old_data, new_data) = (old.map_or(&[][..], |o| o.data), new.map_or(&[][..], |n| n.data));
    if old_id == new_id && old_data == new_data {
        // Same content: only the mode or the name changed.
        return Ok(FilePatch { text, ..FilePatch::default() });
    }
    let mut patch = Patch::from_buffers(old_data, None, new_data, None, Some(opts))
        .map_err(ctx(|| "cannot compute a patch".into()))?;
    let (_, additions, deletions) = patch.line_stats().map_err(ctx(|| "cannot count lines".into()))?;
    let binary = patch.delta().flags().is_binary();
    let minus = if old.is_some() { a_path } else { b"/dev/null".to_vec() };
    let plus = if new.is_some() { b_path } else { b"/dev/null".to_vec() };
    if binary {
        line(&mut text, &[b"Binary files ", &minus, b" and ", &plus, b" differ"]);
        return Ok(FilePatch { additions: 0, deletions: 0, binary, text });
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
    Ok(FilePatch { additions, deletions, binary, text })
}

/// Where the first hunk starts in libgit2's patch text.
fn find_hunks(buf: &[u8]) -> Option<usize> {
    if buf.starts_with(b"@@") {
        return Some(0);
    }
    buf.windows(3).position(|w| w == b"\n@@").map(|i| i + 1)
}
