//! Line comments on the judged attempt's diff: `PATH:LINE` or
//! `PATH:FIRST-LAST` parsed ([`parse`]), the patch read into its files'
//! lines ([`files`]), and a comment judged against them ([`judge`]):
//! accepted with the diff lines it covers, or refused naming the changed
//! lines of that file nearest it (or the changed files, when the path is
//! not in the diff). Pure.
//!
//! Lines are numbered as in the new version of a file; a deleted file's as
//! in its old version. A comment must cover at least one changed line; a
//! removed line counts at the position of the line that now follows it.

use crate::model::LineComment;
use crate::text::plural;

/// A comment's place: a path and lines `start..=end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommentPlace {
    pub path: String,
    pub start: u32,
    pub end: u32,
}

/// How a comment's place is written.
const FORM: &str = "expected PATH:LINE or PATH:FIRST-LAST (as `src/app.py:40-44`)";

/// Why a comment's place cannot be read; completes "--comment SPEC: ...".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SpecError {
    #[error("{FORM}")]
    NoForm,
    #[error("no path; {FORM}")]
    NoPath,
    #[error("lines are numbered from 1")]
    LineZero,
    #[error("{0:?} is not a line number; {FORM}")]
    NotALine(String),
    #[error("the range {start}-{end} ends before it starts")]
    Backwards { start: u32, end: u32 },
}

/// `PATH:LINE` or `PATH:FIRST-LAST` (the last `:` splits, so a path may
/// hold one).
pub(crate) fn parse(spec: &str) -> Result<CommentPlace, SpecError> {
    let Some((path, lines)) = spec.rsplit_once(':') else { return Err(SpecError::NoForm) };
    let path = path.trim().trim_start_matches("./");
    if path.is_empty() {
        return Err(SpecError::NoPath);
    }
    let number = |s: &str| -> Result<u32, SpecError> {
        match s.trim().parse::<u32>() {
            Ok(0) => Err(SpecError::LineZero),
            Ok(n) => Ok(n),
            Err(_) => Err(SpecError::NotALine(s.trim().to_string())),
        }
    };
    let (start, end) = match lines.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => {
            let n = number(lines)?;
            (n, n)
        }
    };
    if end < start {
        return Err(SpecError::Backwards { start, end });
    }
    Ok(CommentPlace { path: path.to_string(), start, end })
}

/// One line of a file's patch: its text (with its `+`, `-` or ` `), the
/// line number it sits at, and whether it is a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiffLine {
    pub text: String,
    pub at: u32,
    pub changed: bool,
}

/// One file of a patch: its path (the new one; the old one for a deleted
/// file) and the lines of its hunks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct FileDiff {
    pub path: String,
    pub lines: Vec<DiffLine>,
}

/// A path as a `---`/`+++` line names it, without `a/`/`b/`; `None` for
/// `/dev/null`.
fn header_path(rest: &str) -> Option<String> {
    let p = rest.strip_suffix('\t').unwrap_or(rest);
    let p = match p.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
        Some(q) => unquote(q),
        None => p.to_string(),
    };
    if p == "/dev/null" {
        return None;
    }
    Some(p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(&p).to_string())
}

/// The inside of a path git quoted: C escapes, bytes past ASCII as three
/// octal digits (`caf\303\251`).
fn unquote(q: &str) -> String {
    let b = q.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let octal = b.get(i + 1..i + 4).filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let Some(d) = octal {
            out.push(d.iter().fold(0u8, |n, c| n.wrapping_mul(8).wrapping_add(c - b'0')));
            i += 4;
            continue;
        }
        out.push(match b[i + 1] {
            b'a' => 0x07,
            b'b' => 0x08,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 0x0b,
            b'f' => 0x0c,
            b'r' => b'\r',
            other => other,
        });
        i += 2;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `@@ -a[,b] +c[,d] @@`: (a, b, c, d).
fn hunk_header(line: &str) -> Option<(u32, u32, u32, u32)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}

/// The files of a patch as git prints it (`diff --git`, `---`/`+++`,
/// hunks), each with its hunks' lines numbered.
pub(crate) fn files(patch: &str) -> Vec<FileDiff> {
    let mut out: Vec<FileDiff> = Vec::new();
    let (mut old_path, mut deleted) = (None::<String>, false);
    // Lines left in the current hunk (old side, new side), and the next
    // line numbers.
    let (mut old_left, mut new_left, mut old_at, mut new_at) = (0u32, 0u32, 0u32, 0u32);
    for line in patch.lines() {
        if old_left > 0 || new_left > 0 {
            let Some(file) = out.last_mut() else { break };
            let (mark, changed) = match line.as_bytes().first() {
                Some(b'+') => ('+', true),
                Some(b'-') => ('-', true),
                Some(b'\\') => continue,
                _ => (' ', false),
            };
            let at = match mark {
                '+' => {
                    new_left = new_left.saturating_sub(1);
                    new_at += 1;
                    new_at - 1
                }
                '-' => {
                    old_left = old_left.saturating_sub(1);
                    old_at += 1;
                    if deleted { old_at - 1 } else { new_at }
                }
                _ => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                    old_at += 1;
                    new_at += 1;
                    new_at - 1
                }
            };
            let text = if line.is_empty() { " ".to_string() } else { line.to_string() };
            file.lines.push(DiffLine { text, at, changed });
            continue;
        }
        if line.starts_with("diff --git ") {
            out.push(FileDiff::default());
            (old_path, deleted) = (None, false);
        } else if let Some(rest) = line.strip_prefix("--- ") {
            old_path = header_path(rest);
        } else if let Some(rest) = line.strip_prefix("+++ ") {
            let new = header_path(rest);
            deleted = new.is_none();
            if let Some(file) = out.last_mut() {
                file.path = new.or_else(|| old_path.clone()).unwrap_or_default();
            }
        } else if let Some(path) = line.strip_prefix("Binary files ") {
            // `Binary files a/x and b/x differ`: named, without lines.
            if let (Some(file), Some((_, b))) = (out.last_mut(), path.split_once(" and ")) {
                let b = b.strip_suffix(" differ").unwrap_or(b);
                let a = path.split_once(" and ").map(|(a, _)| a).unwrap_or_default();
                file.path = header_path(b).or_else(|| header_path(a)).unwrap_or_default();
            }
        } else if let Some((a, b, c, d)) = hunk_header(line) {
            (old_at, old_left, new_at, new_left) = (a.max(1), b, c.max(1), d);
            if b == 0 {
                old_at = a + 1;
            }
            if d == 0 {
                new_at = c + 1;
            }
        } else if let Some(rest) = line.strip_prefix("rename to ").or_else(|| line.strip_prefix("copy to "))
            && let Some(file) = out.last_mut().filter(|f| f.path.is_empty())
        {
            file.path = rest.to_string();
        }
    }
    out.retain(|f| !f.path.is_empty());
    out
}

/// Consecutive changed positions of `file` as ranges.
fn changed_ranges(file: &FileDiff) -> Vec<(u32, u32)> {
    let mut at: Vec<u32> = file.lines.iter().filter(|l| l.changed).map(|l| l.at).collect();
    at.sort_unstable();
    at.dedup();
    let mut out: Vec<(u32, u32)> = Vec::new();
    for n in at {
        match out.last_mut() {
            Some((_, e)) if *e + 1 >= n => *e = n,
            _ => out.push((n, n)),
        }
    }
    out
}

fn range_text((s, e): (u32, u32)) -> String {
    if s == e { s.to_string() } else { format!("{s}-{e}") }
}

/// Why a comment is refused: it does not point at a change of the diff.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("{place}: attempt {attempt}'s diff changes no file")]
    NoFileChanged { place: String, attempt: u32 },
    #[error("{place}: {path} is not in attempt {attempt}'s diff; {files}")]
    NotInDiff { place: String, path: String, attempt: u32, files: String },
    #[error(
        "{place}: attempt {attempt}'s diff of {path} has no lines to comment on (a binary file, or only its mode or name changed)"
    )]
    NoLines { place: String, path: String, attempt: u32 },
    #[error(
        "{place} is not on a changed line of attempt {attempt}'s diff; the changed lines of {path} nearest it: {nearest}"
    )]
    OffTheChanges { place: String, path: String, attempt: u32, nearest: String },
}

/// The comment `spec` with `text` on `files` (the diff of attempt
/// `attempt`): accepted, with the diff lines it covers; or refused, the
/// error naming the changed lines of the file nearest it, or the diff's
/// files.
pub(crate) fn judge(files: &[FileDiff], spec: &CommentPlace, text: &str, attempt: u32) -> Result<LineComment, Refused> {
    let place = format!("{}:{}", spec.path, range_text((spec.start, spec.end)));
    let Some(file) = files.iter().find(|f| f.path == spec.path) else {
        if files.is_empty() {
            return Err(Refused::NoFileChanged { place, attempt });
        }
        let names: Vec<String> = files.iter().take(10).map(|f| f.path.clone()).collect();
        let more = files.len().saturating_sub(10);
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        let files = format!("the file{} it changes: {}{more}", plural(files.len()), names.join(", "));
        return Err(Refused::NotInDiff { place, path: spec.path.clone(), attempt, files });
    };
    let ranges = changed_ranges(file);
    if ranges.is_empty() {
        return Err(Refused::NoLines { place, path: spec.path.clone(), attempt });
    }
    let hits = |(s, e): (u32, u32)| s <= spec.end && spec.start <= e;
    if !ranges.iter().any(|r| hits(*r)) {
        let distance = |(s, e): (u32, u32)| if e < spec.start { spec.start - e } else { s.saturating_sub(spec.end) };
        let mut nearest = ranges.clone();
        nearest.sort_by_key(|r| (distance(*r), r.0));
        nearest.truncate(3);
        nearest.sort_unstable();
        let list: Vec<String> = nearest.into_iter().map(range_text).collect();
        return Err(Refused::OffTheChanges { place, path: spec.path.clone(), attempt, nearest: list.join(", ") });
    }
    let lines = file.lines.iter().filter(|l| spec.start <= l.at && l.at <= spec.end).map(|l| l.text.clone()).collect();
    Ok(LineComment {
        path: spec.path.clone(),
        start: spec.start,
        end: spec.end,
        text: text.to_string(),
        lines,
        by: None,
    })
}

/// A comment that does not hit the diff, kept as a critique line
/// (a pull request's comment on lines the attempt did not change).
pub(crate) fn as_critique_line(c: &LineComment) -> String {
    let by = c.by.as_ref().map(|b| format!(" ({b})")).unwrap_or_default();
    format!("{}:{}{by}: {}", c.path, range_text((c.start, c.end.max(c.start))), c.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `git diff --cached --no-renames -U1` (git 2.47) of a repository
    /// where `app.py` changed lines 3 and 10-11, `logo.png` changed,
    /// `new.py` was added and `old.py` deleted.
    const PATCH: &str = include_str!("testdata/two_files_changed_one_added_one_deleted.patch");

    #[test]
    fn parses_path_line_and_ranges() {
        let ok = |p: &str, s: u32, e: u32| Ok(CommentPlace { path: p.into(), start: s, end: e });
        let cases: Vec<(&str, Result<CommentPlace, SpecError>)> = vec![
            ("app.py:3", ok("app.py", 3, 3)),
            ("src/app.py:10-12", ok("src/app.py", 10, 12)),
            ("./src/app.py:4", ok("src/app.py", 4, 4)),
            ("a:b.py:7", ok("a:b.py", 7, 7)),
            ("app.py: 2 - 5", ok("app.py", 2, 5)),
        ];
        for (spec, want) in cases {
            assert_eq!(parse(spec), want, "{spec}");
        }
        // (spec, a word of the error)
        let bad = [
            ("app.py", "expected PATH:LINE"),
            (":3", "no path"),
            ("app.py:x", "\"x\" is not a line number"),
            ("app.py:0", "numbered from 1"),
            ("app.py:5-2", "ends before it starts"),
            ("app.py:3-", "\"\" is not a line number"),
        ];
        for (spec, word) in bad {
            let e = parse(spec).expect_err(spec).to_string();
            assert!(e.contains(word), "{spec}: {e}");
        }
    }

    #[test]
    fn reads_the_files_and_numbers_their_lines() {
        let f = files(PATCH);
        let names: Vec<&str> = f.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(names, ["app.py", "logo.png", "new.py", "old.py"]);
        let changed = |i: usize| -> Vec<(u32, &str)> {
            f[i].lines.iter().filter(|l| l.changed).map(|l| (l.at, l.text.as_str())).collect()
        };
        assert_eq!(
            changed(0),
            [(3, "-x = 1"), (3, "+x = 2"), (10, "-    return a"), (10, "+    c = a + b"), (11, "+    return c")]
        );
        assert!(f[1].lines.is_empty());
        assert_eq!(changed(2), [(1, "+def g():"), (2, "+    return 1")]);
        assert_eq!(changed(3), [(1, "-print(1)"), (2, "-print(2)")]);
        // Context lines keep the new version's numbers.
        assert_eq!(f[0].lines.iter().find(|l| l.text == " # end").map(|l| l.at), Some(12));
    }

    #[test]
    fn judges_comments_against_the_diff() {
        let f = files(PATCH);
        // (spec, Ok(the diff lines it carries) or Err(words of the refusal))
        type Want<'a> = Result<Vec<&'a str>, Vec<&'a str>>;
        let cases: Vec<(&str, Want)> = vec![
            ("app.py:3", Ok(vec!["-x = 1", "+x = 2"])),
            ("app.py:10-11", Ok(vec!["-    return a", "+    c = a + b", "+    return c"])),
            ("app.py:2-3", Ok(vec!["", "-x = 1", "+x = 2"])),
            ("new.py:2", Ok(vec!["+    return 1"])),
            ("old.py:1-2", Ok(vec!["-print(1)", "-print(2)"])),
            ("app.py:5", Err(vec!["app.py:5 is not on a changed line of attempt 2's diff", "nearest it: 3, 10-11"])),
            ("app.py:12-40", Err(vec!["app.py:12-40 is not on a changed line", "nearest it: 3, 10-11"])),
            (
                "lib.py:1",
                Err(vec!["lib.py is not in attempt 2's diff", "files it changes: app.py, logo.png, new.py, old.py"]),
            ),
            ("logo.png:1", Err(vec!["has no lines to comment on"])),
        ];
        for (spec, want) in cases {
            let got = judge(&f, &parse(spec).expect(spec), "why", 2);
            match (got, want) {
                (Ok(c), Ok(lines)) => {
                    let lines: Vec<String> =
                        lines.iter().map(|l| if l.is_empty() { " ".to_string() } else { l.to_string() }).collect();
                    assert_eq!(c.lines, lines, "{spec}");
                    assert_eq!(c.text, "why");
                }
                (Err(e), Err(words)) => {
                    let e = e.to_string();
                    for w in words {
                        assert!(e.contains(w), "{spec}: {e}");
                    }
                }
                (got, _) => panic!("{spec}: {got:?}"),
            }
        }
        assert!(judge(&[], &parse("a:1").unwrap(), "", 1).unwrap_err().to_string().contains("changes no file"));
    }

    #[test]
    fn reads_paths_git_quoted() {
        // `git diff --cached` (git 2.47) of four files added, named as git
        // quotes them: past ASCII, with spaces, a quote, a tab.
        let patch = include_str!("testdata/four_files_added_with_quoted_names.patch");
        let names: Vec<String> = files(patch).into_iter().map(|f| f.path).collect();
        assert_eq!(names, ["café.txt", "dir with space/a b.txt", "say \"hi\".txt", "tab\there"]);
        let f = files(patch);
        let c = judge(&f, &parse("dir with space/a b.txt:1").expect("spec"), "x", 1).expect("on the diff");
        assert_eq!(c.lines, ["+x"]);
    }

    #[test]
    fn a_comment_off_the_diff_becomes_a_critique_line() {
        let c = LineComment {
            path: "a.py".into(),
            start: 4,
            end: 6,
            text: "why?".into(),
            by: Some("ann".into()),
            ..LineComment::default()
        };
        assert_eq!(as_critique_line(&c), "a.py:4-6 (ann): why?");
    }
}
