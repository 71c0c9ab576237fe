//! `cargo test` panics: `thread 'name' panicked at path:line:col:` and the
//! message on the lines after it (Rust ≥ 1.73), or the older
//! `thread 'name' panicked at 'message', path:line:col`.

use super::{Diagnostic, Severity, lines, location_prefix};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut collecting = false;
    for line in lines(text) {
        if collecting {
            let stop = line.is_empty() || line.starts_with("note: ") || line.starts_with("stack backtrace:");
            match out.last_mut() {
                Some(d) if !stop => {
                    if !d.message.ends_with(": ") {
                        d.message.push('\n');
                    }
                    d.message.push_str(line);
                    continue;
                }
                _ => collecting = false,
            }
        }
        let Some(rest) = line.strip_prefix("thread '") else { continue };
        let Some((name, rest)) = rest.split_once('\'') else { continue };
        let Some(at) = rest.find("panicked at ") else { continue };
        let rest = &rest[at + "panicked at ".len()..];
        let prefix = if name == "main" { String::new() } else { format!("{name}: ") };
        if let Some(loc) = rest.strip_suffix(':')
            && let Some((path, l, c, "")) = location_prefix(loc)
        {
            out.push(Diagnostic::new("cargo-test", Severity::Error, prefix).at(path, Some(l), c));
            collecting = true;
        } else if let Some((msg, loc)) = rest.rsplit_once(", ")
            && let Some((path, l, c, "")) = location_prefix(loc)
        {
            let msg = msg.trim_matches('\'');
            out.push(Diagnostic::new("cargo-test", Severity::Error, format!("{prefix}{msg}")).at(path, Some(l), c));
        }
    }
    for d in &mut out {
        let trimmed = d.message.trim_end().trim_end_matches(':').to_string();
        d.message = if trimmed.is_empty() { "panicked".to_string() } else { trimmed };
    }
    out
}
