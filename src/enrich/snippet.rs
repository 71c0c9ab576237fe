//! The snippet (docs/commands.md, `enrich`): the header line of every
//! enclosing scope, a few lines around each error, elision marks between,
//! line numbers and a `>` on error lines. Pure.

use crate::model::ScopeSpan;

/// Lines shown before and after an error line.
pub(crate) const CONTEXT: usize = 2;
/// Longer source lines are cut (minified code would flood the output).
const MAX_LINE_BYTES: usize = 200;

/// Renders the snippet for `errors` (1-based lines, any order) in `lines`,
/// inside the scopes of `chain` (outermost first; empty at module level).
pub(crate) fn render(lines: &[&str], chain: &[&ScopeSpan], errors: &[usize]) -> String {
    let n = lines.len();
    if n == 0 {
        return String::new();
    }
    let (lo, hi) = match chain.last() {
        Some(s) => (s.start_line.max(1), s.end_line.min(n)),
        None => (1, n),
    };
    let mut shown: Vec<usize> = chain.iter().map(|s| s.start_line).filter(|&l| l >= 1 && l <= n).collect();
    for &e in errors {
        let e = e.clamp(1, n);
        shown.extend(e.saturating_sub(CONTEXT).max(lo)..=(e + CONTEXT).min(hi.max(e)));
    }
    shown.sort_unstable();
    shown.dedup();
    let width = shown.last().map_or(1, |l| l.to_string().len()).max(3);
    let mut out = String::new();
    let mut prev: Option<usize> = None;
    for &l in &shown {
        match prev {
            Some(p) if l == p + 2 => line(&mut out, lines, p + 1, width, errors),
            Some(p) if l > p + 2 => out.push_str(&format!("  {:>width$} |\n", "...")),
            _ => {}
        }
        line(&mut out, lines, l, width, errors);
        prev = Some(l);
    }
    out
}

fn line(out: &mut String, lines: &[&str], l: usize, width: usize, errors: &[usize]) {
    let marker = if errors.contains(&l) { '>' } else { ' ' };
    let text = lines.get(l - 1).copied().unwrap_or("");
    let text = text.strip_suffix('\r').unwrap_or(text);
    let cut = crate::text::clip(text, MAX_LINE_BYTES, " [...]");
    let sep = if cut.is_empty() { "|" } else { "| " };
    out.push_str(&format!("{marker} {l:>width$} {sep}{cut}\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: usize, end: usize) -> ScopeSpan {
        ScopeSpan {
            kind: "function".into(),
            name: "f".into(),
            qualified_name: "f".into(),
            start_line: start,
            end_line: end,
            signature: String::new(),
            head_line: start,
        }
    }

    #[test]
    fn headers_context_elision_and_markers() {
        let src: Vec<String> = (1..=30).map(|i| format!("line{i}")).collect();
        let lines: Vec<&str> = src.iter().map(String::as_str).collect();
        let (outer, inner) = (span(2, 30), span(10, 30));
        let got = render(&lines, &[&outer, &inner], &[20, 22]);
        let want = "    2 | line2\n  ... |\n   10 | line10\n  ... |\n   18 | line18\n   19 | line19\n> 20 | line20\n   21 | line21\n> 22 | line22\n   23 | line23\n   24 | line24\n";
        let want = want.replace("> 20", ">  20").replace("> 22", ">  22");
        assert_eq!(got, want);
    }

    #[test]
    fn context_stays_inside_the_innermost_scope_and_one_line_gaps_are_filled() {
        let lines = ["def f():", "    a = 1", "    b = 2", "    return c", "", "x = 1"];
        let f = span(1, 4);
        let got = render(&lines, &[&f], &[4]);
        assert_eq!(got, "    1 | def f():\n    2 |     a = 1\n    3 |     b = 2\n>   4 |     return c\n");
    }

    #[test]
    fn module_level_errors_and_out_of_range_lines() {
        let lines = ["import os", "x = 1"];
        assert_eq!(render(&lines, &[], &[1]), ">   1 | import os\n    2 | x = 1\n");
        assert_eq!(render(&lines, &[], &[99]), "    1 | import os\n    2 | x = 1\n");
        assert_eq!(render(&[], &[], &[1]), "");
    }

    #[test]
    fn long_lines_are_cut_on_a_char_boundary() {
        let long = "é".repeat(300);
        let got = render(&[long.as_str()], &[], &[1]);
        assert!(got.ends_with(" [...]\n") && got.len() < 260, "{got}");
    }
}
