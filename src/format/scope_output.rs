//! Printing a scope report.
//!
//! JSON is a wire contract (docs/commands.md, `scope`):
//! `{"base", "head", "checked", "violations": [{"path", "old_path",
//! "status", "reason", "rule"}]}`, paths printed per [`crate::pathfmt`].
//!
//! `text` and `github` (a CI log, which a terminal may render) are for
//! people: every control character is made visible
//! ([`crate::text::visible`]), and in text, paths are [`shown`]. JSON and SARIF keep the text, escaped
//! by serde.

use std::io::{self, Write};

use serde::Serialize;

use crate::judge::scope::{MAX_SYMLINK_HOPS, Report, Resolved, Rules, Subject, Violation, landing};
use crate::model::Head;
use crate::model::ScopeReason;
use crate::pathfmt::{display, shown};
use crate::text::{VisibleWriter, plural};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeFormat {
    Text,
    Json,
    Github,
    Sarif,
}

/// What the report is about, for the header lines.
pub(crate) struct ScopeHeader<'a> {
    pub base: &'a str,
    pub head: &'a Head,
    pub rules: &'a Rules,
}

pub(crate) fn write(out: &mut dyn Write, format: ScopeFormat, header: &ScopeHeader, report: &Report) -> io::Result<()> {
    match format {
        ScopeFormat::Text => text(&mut VisibleWriter::new(out, true), header, report),
        ScopeFormat::Json => json(out, header, report),
        ScopeFormat::Github => github(&mut VisibleWriter::new(out, true), header, report),
        ScopeFormat::Sarif => sarif(out, header, report),
    }
}

/// One sentence on why a path violates the scope (without the path itself).
pub(crate) fn message(v: &Violation, rules: &Rules) -> String {
    let allow = if rules.allow_globs().is_empty() { "(none)".to_string() } else { rules.allow_globs().join(", ") };
    let judged = |what: String| match (&v.reason, &v.rule) {
        (ScopeReason::Denied, Some(rule)) => format!("{what} matches deny glob {rule}"),
        _ => format!("{what} is outside the allowed paths ({allow})"),
    };
    match (&v.reason, &v.subject) {
        (ScopeReason::ActsAfterLand, subject) => {
            let what = match subject {
                Subject::OldPath => {
                    format!("renamed from {}, which", display(v.old_path.as_deref().unwrap_or_default()))
                }
                _ => "it".to_string(),
            };
            let path = match subject {
                Subject::OldPath => display(v.old_path.as_deref().unwrap_or_default()).into_owned(),
                _ => display(&v.path).into_owned(),
            };
            format!(
                "{what} acts once the change lands ({}); {}",
                landing::why(v.rule.as_deref()),
                landing::how_to_allow(&path, v.rule.as_deref())
            )
        }
        (ScopeReason::GitInternal, _) => "git machinery (hooks, config or the worktree's git link) changed".into(),
        (ScopeReason::TooDeep, _) => {
            format!("a directory {} levels deep or more: cut out of the change", crate::model::MAX_TREE_DEPTH)
        }
        (ScopeReason::Submodule, _) => {
            "submodule changed (pointer moved or uncommitted changes inside) and its path is not allowed".into()
        }
        (ScopeReason::SymlinkEscape, Subject::Target { raw, resolved: Resolved::Loop }) => {
            format!("symlink {} cannot be resolved: more than {MAX_SYMLINK_HOPS} links followed (a loop)", display(raw))
        }
        (ScopeReason::SymlinkEscape, Subject::Target { raw, .. }) => {
            format!("symlink points to {}, outside the repository", display(raw))
        }
        (ScopeReason::SymlinkEscape, _) => "symlink points outside the repository".into(),
        (_, Subject::Path) => judged(match v.status {
            crate::model::Status::Deleted => "deleted path".into(),
            _ => "path".into(),
        }),
        (_, Subject::OldPath) => {
            judged(format!("renamed from {}, which", display(v.old_path.as_deref().unwrap_or_default())))
        }
        (_, Subject::Target { raw, resolved }) => {
            let to = match resolved {
                Resolved::Inside(p) if p.is_empty() => "the repository root".to_string(),
                Resolved::Inside(p) => display(p).into_owned(),
                Resolved::Outside | Resolved::Loop => "?".to_string(),
            };
            judged(format!("symlink target {} (resolves to {to})", display(raw)))
        }
    }
}

fn text(out: &mut dyn Write, h: &ScopeHeader, r: &Report) -> io::Result<()> {
    for v in &r.violations {
        let path = match &v.old_path {
            Some(old) => format!("{} -> {}", shown(old), shown(&v.path)),
            None => shown(&v.path).into_owned(),
        };
        writeln!(out, "{} {path}: {}: {}", v.status.letter(), v.reason.as_str(), message(v, h.rules))?;
    }
    for v in &r.flagged {
        writeln!(
            out,
            "{} {}: flagged, {}: {}",
            v.status.letter(),
            display(&v.path),
            v.reason.as_str(),
            message(v, h.rules)
        )?;
    }
    let range = format!("{}...{}", super::short(h.base), super::short(h.head.label()));
    let flagged = if r.flagged.is_empty() { String::new() } else { format!(", {} flagged", r.flagged.len()) };
    if r.violations.is_empty() {
        writeln!(out, "scope clean: {} changed path{} checked{flagged} ({range})", r.checked, plural(r.checked))
    } else {
        writeln!(
            out,
            "{} scope violation{} in {} changed path{}{flagged} ({range})",
            r.violations.len(),
            plural(r.violations.len()),
            r.checked,
            plural(r.checked)
        )
    }
}

#[derive(Serialize)]
struct JsonReport<'a> {
    base: &'a str,
    head: &'a str,
    checked: usize,
    violations: Vec<JsonViolation>,
    /// `[scope] acts_after_land = "flag"`: shown, not failing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    flagged: Vec<JsonViolation>,
}

#[derive(Serialize)]
struct JsonViolation {
    path: String,
    old_path: Option<String>,
    status: crate::model::Status,
    reason: ScopeReason,
    rule: Option<String>,
}

fn json(out: &mut dyn Write, h: &ScopeHeader, r: &Report) -> io::Result<()> {
    let list = |vs: &[Violation]| -> Vec<JsonViolation> {
        vs.iter()
            .map(|v| JsonViolation {
                path: display(&v.path).into_owned(),
                old_path: v.old_path.as_deref().map(|p| display(p).into_owned()),
                status: v.status,
                reason: v.reason,
                rule: v.rule.clone(),
            })
            .collect()
    };
    let report = JsonReport {
        base: h.base,
        head: h.head.label(),
        checked: r.checked,
        violations: list(&r.violations),
        flagged: list(&r.flagged),
    };
    serde_json::to_writer_pretty(&mut *out, &report)?;
    writeln!(out)
}

/// GitHub workflow-command escaping of a message (`%`, CR, LF).
pub(crate) fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// GitHub workflow-command escaping of a property value (also `:` and `,`).
pub(crate) fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn github(out: &mut dyn Write, h: &ScopeHeader, r: &Report) -> io::Result<()> {
    for v in &r.violations {
        let msg = format!("{}: {}", v.reason.as_str(), message(v, h.rules));
        writeln!(
            out,
            "::error file={},title=scope violation::{}",
            // The path as GitHub reads it (a newline as `%0A`), so that the
            // annotation lands on its file; other controls are shown by the
            // writer, as in text.
            escape_property(&display(&v.path)),
            escape_data(&msg)
        )?;
    }
    for v in &r.flagged {
        let msg = format!("{}: {}", v.reason.as_str(), message(v, h.rules));
        writeln!(
            out,
            "::warning file={},title=acts after the change lands::{}",
            escape_property(&display(&v.path)),
            escape_data(&msg)
        )?;
    }
    Ok(())
}

/// A repository path as a relative URI reference (RFC 3986): unreserved
/// characters and `/` as they are, every other byte percent-encoded, so
/// spaces, `#`, `%` and bytes that are not UTF-8 survive.
pub(crate) fn path_uri(path: &[u8]) -> String {
    let mut s = String::with_capacity(path.len());
    for &b in path {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

fn sarif(out: &mut dyn Write, h: &ScopeHeader, r: &Report) -> io::Result<()> {
    use serde_json::json;
    let rules = [
        (ScopeReason::GitInternal, "Git machinery (hooks, config, the worktree's git link) changed during an attempt."),
        (
            ScopeReason::Submodule,
            "A submodule pointer moved, or a submodule has uncommitted changes, and its path is not allowed.",
        ),
        (ScopeReason::SymlinkEscape, "A symlink points outside the repository (absolute, or leaving it through ..)."),
        (ScopeReason::Denied, "The change writes a path that a deny glob matches."),
        (
            ScopeReason::ActsAfterLand,
            "The change writes a file that git, an editor, CI, a shell or an agent executes or honours once it lands.",
        ),
        (ScopeReason::OutsideAllow, "The change writes a path that no allow glob matches."),
    ];
    let results: Vec<_> = r
        .violations
        .iter()
        .map(|v| (v, "error"))
        .chain(r.flagged.iter().map(|v| (v, "warning")))
        .map(|(v, level)| {
            json!({
                "ruleId": v.reason.as_str(),
                "level": level,
                "message": {"text": format!("{}: {}", display(&v.path), message(v, h.rules))},
                "locations": [{"physicalLocation": {"artifactLocation": {
                    "uri": path_uri(&v.path), "uriBaseId": "SRCROOT"}}}],
                "properties": {"status": v.status.letter(), "rule": v.rule},
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "retry-run",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules.iter().map(|(id, text)| json!({
                    "id": id.as_str(), "shortDescription": {"text": text}})).collect::<Vec<_>>(),
            }},
            "properties": {"base": h.base, "head": h.head.label(), "checked": r.checked},
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escaping() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        // `%` first, so an escape sequence in the input is not read as one.
        assert_eq!(escape_property("%3A"), "%253A");
    }

    #[test]
    fn uris() {
        assert_eq!(path_uri(b"src/a b#1%.rs"), "src/a%20b%231%25.rs");
        assert_eq!(path_uri("caf\u{e9}".as_bytes()), "caf%C3%A9");
        assert_eq!(path_uri(b"x\xff"), "x%FF");
        assert_eq!(path_uri(b"-dash/ok_~.txt"), "-dash/ok_~.txt");
    }
}
