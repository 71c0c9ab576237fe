//! What one proposed check's run on the base says: its tests' totals and
//! failing ids, the diagnostics already there, or that it cannot start or
//! work here. Pure.

use std::fmt::Write;

use super::candidates::Candidate;
use super::trial::{TRIAL_SECS, TrialRan};

/// What one run on the base says about a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BaseSays {
    /// It runs: what it found, in a line.
    Keep(String),
    /// It cannot start: why, in a line.
    Leave(String),
}

/// Signs in an output that a command could not start, or could not do
/// its work for a reason of the environment (a tool or module missing,
/// the network refused, a path it must write kept read-only), each with
/// what to do when there is more to say than the line itself.
const CANNOT_START: [(&str, &str); 12] = [
    ("No module named", ""),
    ("No such file or directory", ""),
    ("command not found", ""),
    (": not found", ""),
    ("Permission denied", ""),
    ("CONNECT tunnel failed", "the sandbox's proxy refused a host it needs: add the host to the check's `network`"),
    ("Could not resolve host", "it needs the network: add the host to the check's `network`"),
    ("Temporary failure in name resolution", "it needs the network: add the host to the check's `network`"),
    ("Network is unreachable", "it needs the network: add the host to the check's `network`"),
    ("Read-only file system", "the sandbox keeps that path read-only: list its directory in `sandbox.writable`"),
    (
        "--offline was specified",
        "it needs dependencies that are not vendored: commit Cargo.lock and vendor them, or drop --offline and give it the registry's hosts in `network`",
    ),
    ("Operation not permitted", ""),
];

/// What `ran` (the candidate `c` on the base) says: its tests' totals and
/// failing ids, or its diagnostics already on the base, counted as `run`
/// counts them ([`crate::outcome::check::counted`]: errors, not notes);
/// or that it cannot start or work here (exit 126 or 127, or a failure
/// printing one of [`CANNOT_START`] with no test or diagnostic read).
pub(crate) fn judge(c: &Candidate, ran: &TrialRan) -> BaseSays {
    let tests = crate::judge::test_results::read(&ran.output);
    let enriched: Vec<crate::enrich::Enriched> = crate::diagnostics::parse_as(None, &ran.output)
        .into_iter()
        .map(|diagnostic| crate::enrich::Enriched { diagnostic, scope: None, snippet: None })
        .collect();
    let counted = crate::outcome::check::counted(&enriched).count();
    let first_sign = || {
        let (line, fix) = ran.output.lines().find_map(|l| {
            // Node writes the system's words in lower case (`EROFS: read-only file system`).
            let lower = l.to_ascii_lowercase();
            CANNOT_START.iter().find(|(s, _)| lower.contains(&s.to_ascii_lowercase())).map(|(_, fix)| (l, fix))
        })?;
        let line = crate::text::clip(line.trim(), 200, "...").into_owned();
        Some(if fix.is_empty() { line } else { format!("{line} ({fix})") })
    };
    let name = &c.name;
    if ran.timed_out {
        return BaseSays::Keep(format!(
            "{name}: did not finish within {} minutes on the base; raise its timeout if it needs longer",
            TRIAL_SECS / 60
        ));
    }
    let failed = ran.exit_code != Some(0);
    let nothing_read = tests.ran.is_none() && tests.passed.is_empty() && tests.failed.is_empty() && counted == 0;
    if matches!(ran.exit_code, Some(126 | 127)) || (failed && nothing_read && first_sign().is_some()) {
        let why = first_sign().unwrap_or_else(|| format!("exit {}", ran.exit_code.unwrap_or(-1)));
        return BaseSays::Leave(format!("{name}: left out, `{}` cannot start here: {why}", c.run));
    }
    if c.kind == "test" {
        if c.name == "pytest" && ran.exit_code == Some(5) {
            return BaseSays::Keep(format!("{name}: collected no tests on the base"));
        }
        let failing = tests.failed.len() as u64;
        let passed = match tests.ran {
            Some(n) => n.saturating_sub(failing),
            None => tests.passed.len() as u64,
        };
        let mut line = format!("{name}: {} passed", thousands(passed));
        if failing > 0 {
            let shown: Vec<&str> = tests.failed.iter().take(3).map(String::as_str).collect();
            let more = if failing > 3 { format!(" and {} more", failing - 3) } else { String::new() };
            let _ = write!(line, ", {} failing: {}{more}", thousands(failing), shown.join(", "));
        } else if failed {
            let _ = write!(line, ", but it exits {} on the base", ran.exit_code.unwrap_or(-1));
        }
        return BaseSays::Keep(line);
    }
    let n = counted as u64;
    BaseSays::Keep(match (n, failed) {
        (0, false) => format!("{name}: no diagnostic on the base"),
        (0, true) => format!("{name}: exits {} on the base, with no diagnostic read", ran.exit_code.unwrap_or(-1)),
        (1, _) => format!("{name}: 1 diagnostic already on the base: only new ones will fail an attempt"),
        _ => format!("{name}: {} diagnostics already on the base: only new ones will fail an attempt", thousands(n)),
    })
}

/// `1204` as `1,204`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
