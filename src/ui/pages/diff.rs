//! A patch as `git diff` prints it (the git layer's text), read into files,
//! hunks and lines with their numbers on each side, for the attempt page.
//! Pure.

/// What a line of a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineKind {
    Context,
    Added,
    Deleted,
    /// `\ No newline at end of file`.
    Note,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HunkLine {
    pub kind: LineKind,
    pub old: Option<u32>,
    pub new: Option<u32>,
    /// Without its `+`/`-`/` ` prefix.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Hunk {
    pub header: String,
    pub lines: Vec<HunkLine>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct File {
    /// The `diff --git`, mode, index and rename lines.
    pub header: Vec<String>,
    /// From `--- a/…` and `+++ b/…` (as git quotes them); `None` for
    /// `/dev/null` or when the patch has no such line (binary).
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    /// `Binary files … differ`.
    pub binary: bool,
    pub hunks: Vec<Hunk>,
}

/// The start line of `-a,b` or `+c,d`.
fn start(field: &str) -> u32 {
    field[1..].split(',').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn side_path(rest: &str, prefix: &str) -> Option<String> {
    (rest != "/dev/null").then(|| rest.strip_prefix(prefix).unwrap_or(rest).to_string())
}

/// The files of a patch, in order.
pub(crate) fn parse(patch: &str) -> Vec<File> {
    let mut files: Vec<File> = Vec::new();
    let (mut old, mut new) = (0u32, 0u32);
    for l in patch.lines() {
        if l.starts_with("diff --git ") {
            files.push(File { header: vec![l.to_string()], ..File::default() });
            continue;
        }
        let Some(f) = files.last_mut() else { continue };
        if let Some(h) = f.hunks.last_mut()
            && let Some(kind) = match l.bytes().next() {
                Some(b' ') => Some(LineKind::Context),
                Some(b'+') => Some(LineKind::Added),
                Some(b'-') => Some(LineKind::Deleted),
                Some(b'\\') => Some(LineKind::Note),
                None => Some(LineKind::Context),
                _ => None,
            }
        {
            let (o, n) = match kind {
                LineKind::Context => (Some(old), Some(new)),
                LineKind::Added => (None, Some(new)),
                LineKind::Deleted => (Some(old), None),
                LineKind::Note => (None, None),
            };
            old += u32::from(o.is_some());
            new += u32::from(n.is_some());
            let text = if kind == LineKind::Note { l.to_string() } else { l.get(1..).unwrap_or("").to_string() };
            h.lines.push(HunkLine { kind, old: o, new: n, text });
            continue;
        }
        if l.starts_with("@@ ") {
            let mut fields = l.split(' ').skip(1);
            old = fields.next().map_or(0, start);
            new = fields.next().map_or(0, start);
            f.hunks.push(Hunk { header: l.to_string(), lines: Vec::new() });
        } else if let Some(rest) = l.strip_prefix("--- ") {
            f.old_path = side_path(rest, "a/");
        } else if let Some(rest) = l.strip_prefix("+++ ") {
            f.new_path = side_path(rest, "b/");
        } else if l.starts_with("Binary files ") {
            f.binary = true;
            f.header.push(l.to_string());
        } else {
            f.header.push(l.to_string());
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_hunks_and_line_numbers() {
        let patch = "diff --git a/m.py b/m.py\nindex 1..2 100644\n--- a/m.py\n+++ b/m.py\n@@ -3,3 +3,4 @@ def f():\n a\n-b\n+c\n+d\n e\n\\ No newline at end of file\ndiff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\ndiff --git a/img.png b/img.png\nBinary files a/img.png and b/img.png differ\n";
        let files = parse(patch);
        assert_eq!(files.len(), 3);
        let f = &files[0];
        assert_eq!((f.old_path.as_deref(), f.new_path.as_deref()), (Some("m.py"), Some("m.py")));
        let got: Vec<(LineKind, Option<u32>, Option<u32>, &str)> =
            f.hunks[0].lines.iter().map(|l| (l.kind, l.old, l.new, l.text.as_str())).collect();
        assert_eq!(
            got,
            [
                (LineKind::Context, Some(3), Some(3), "a"),
                (LineKind::Deleted, Some(4), None, "b"),
                (LineKind::Added, None, Some(4), "c"),
                (LineKind::Added, None, Some(5), "d"),
                (LineKind::Context, Some(5), Some(6), "e"),
                (LineKind::Note, None, None, "\\ No newline at end of file"),
            ]
        );
        assert_eq!((files[1].old_path.as_deref(), files[1].new_path.as_deref()), (None, Some("new.txt")));
        assert_eq!(files[1].hunks[0].lines[0].new, Some(1));
        assert!(files[2].binary && files[2].hunks.is_empty());
    }

    #[test]
    fn a_line_that_looks_like_a_header_inside_a_hunk_is_a_line() {
        let patch = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n---- a/y\n++++ b/y\n";
        let lines = &parse(patch)[0].hunks[0].lines;
        assert_eq!(lines[0].text, "--- a/y");
        assert_eq!(lines[1].text, "+++ b/y");
    }
}
