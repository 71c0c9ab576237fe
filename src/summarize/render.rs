//! The digest as text, within a budget of tokens (estimated as bytes / 4).
//!
//! Priority when the budget is tight: failing tests and error locations
//! (the key facts) first, then the runners' totals, then details. Each
//! section that lost lines ends with `[... N lines omitted]`.

use super::{Digest, Section};

/// Bytes per token, as `--max-tokens` counts them (docs/commands.md,
/// `summarize`).
pub const BYTES_PER_TOKEN: usize = 4;

pub fn render(d: &Digest, max_tokens: usize) -> String {
    let budget = max_tokens.saturating_mul(BYTES_PER_TOKEN);
    let sections: [(&str, &Section); 4] =
        [("failed tests", &d.failed_tests), ("errors", &d.errors), ("totals", &d.totals), ("details", &d.details)];
    if sections.iter().all(|(_, s)| s.entries.is_empty()) {
        return format!("no failures found in {} lines\n", d.lines);
    }
    // Decide what fits, in priority order; each omission mark is reserved.
    const MARK: usize = "  [... 1000000 lines omitted]\n".len();
    let mut used = 0;
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
    let mut out = String::new();
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
