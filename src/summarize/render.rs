//! The digest as text, within a budget of tokens (estimated as bytes / 4).
//!
//! The first line gives the tests' counts as the runners counted them
//! (`tests: 4 failed, 7 passed, 3 errors`) when the log holds them.
//! Priority when the budget is tight: that line, failing tests and error
//! locations (the key facts) first, then the runners' totals, then details.
//! Each section that lost lines ends with `[... N lines omitted]`.

use super::{Counts, Digest, Section};

/// `tests: 4 failed, 7 passed, 3 errors`: passed only when the runner said,
/// errors only when there were some.
pub fn counts_line(c: &Counts) -> String {
    let mut s = format!("tests: {} failed", c.failed);
    if let Some(p) = c.passed {
        s.push_str(&format!(", {p} passed"));
    }
    if c.errors > 0 {
        s.push_str(&format!(", {} error{}", c.errors, crate::text::plural(c.errors as usize)));
    }
    s
}

/// Bytes per token, as `--max-tokens` counts them (docs/commands.md,
/// `summarize`).
pub const BYTES_PER_TOKEN: usize = 4;

pub fn render(d: &Digest, max_tokens: usize) -> String {
    let budget = max_tokens.saturating_mul(BYTES_PER_TOKEN);
    let sections: [(&str, &Section); 4] =
        [("failed tests", &d.failed_tests), ("errors", &d.errors), ("totals", &d.totals), ("details", &d.details)];
    if sections.iter().all(|(_, s)| s.entries.is_empty()) {
        return match &d.counts {
            Some(c) => format!("{}\nno failures found in {} lines\n", counts_line(c), d.lines),
            None => format!("no failures found in {} lines\n", d.lines),
        };
    }
    // Decide what fits, in priority order; each omission mark is reserved.
    const MARK: usize = "  [... 1000000 lines omitted]\n".len();
    let mut out = String::new();
    if let Some(c) = &d.counts {
        let line = counts_line(c);
        if line.len() + 1 + MARK <= budget {
            out.push_str(&line);
            out.push('\n');
        }
    }
    let mut used = out.len();
    let mut kept: Vec<(usize, usize)> = Vec::new(); // (entries kept, omitted)
    for (title, s) in &sections {
        if s.entries.is_empty() {
            kept.push((0, s.dropped));
            continue;
        }
        let head = title.len() + 8;
        let mut n = 0;
        let mut cost = head;
        for e in &s.entries {
            let c = e.len() + 3;
            let rest_needs_mark = n + 1 < s.entries.len() || s.dropped > 0;
            if used + cost + c + if rest_needs_mark { MARK } else { 0 } > budget {
                break;
            }
            cost += c;
            n += 1;
        }
        let omitted = s.entries.len() - n + s.dropped;
        if n == 0 && used + head + MARK > budget {
            kept.push((0, omitted));
            continue;
        }
        used += cost + if omitted > 0 { MARK } else { 0 };
        kept.push((n, omitted));
    }
    let mut unshown = 0;
    for ((title, s), (n, omitted)) in sections.iter().zip(kept) {
        if s.entries.is_empty() && s.dropped == 0 {
            continue;
        }
        if n == 0 {
            unshown += omitted;
            continue;
        }
        out.push_str(&format!("{title} ({}):\n", s.entries.len() + s.dropped));
        for e in &s.entries[..n] {
            out.push_str("  ");
            out.push_str(e);
            out.push('\n');
        }
        if omitted > 0 {
            out.push_str(&format!("  [... {omitted} lines omitted]\n"));
        }
    }
    if unshown > 0 {
        out.push_str(&format!("[... {unshown} lines omitted]\n"));
    }
    out
}
