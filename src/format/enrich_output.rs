//! Printing enriched diagnostics: `text` for people, and `json`, a wire
//! contract: `{"diagnostics": [{"tool", "path", "line", "column", "code",
//! "severity", "message", "scope", "snippet"}]}`.
//!
//! In text, the diagnostics of one scope are listed together, then their
//! shared snippet once.

use std::io::{self, Write};

use serde::Serialize;

use crate::enrich::Enriched;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EnrichFormat {
    Text,
    Json,
}

pub(crate) fn write(out: &mut impl Write, format: EnrichFormat, items: &[Enriched]) -> io::Result<()> {
    match format {
        EnrichFormat::Json => {
            #[derive(Serialize)]
            struct Doc<'a> {
                diagnostics: &'a [Enriched],
            }
            serde_json::to_writer_pretty(&mut *out, &Doc { diagnostics: items })?;
            writeln!(out)
        }
        // For people: what the tool printed, control characters made visible.
        EnrichFormat::Text => text(&mut crate::text::VisibleWriter::new(out, true), items),
    }
}

fn text(out: &mut impl Write, items: &[Enriched]) -> io::Result<()> {
    if items.is_empty() {
        return writeln!(out, "no diagnostics found");
    }
    // Groups in order of first appearance; a diagnostic without a snippet is its own group.
    let mut groups: Vec<Vec<&Enriched>> = Vec::new();
    for e in items {
        let same = |g: &Vec<&Enriched>| {
            let f = g[0];
            e.snippet.is_some() && f.snippet.is_some() && f.diagnostic.path == e.diagnostic.path && f.scope == e.scope
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.push(e),
            None => groups.push(vec![e]),
        }
    }
    for (i, g) in groups.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        for e in g {
            headline(out, e)?;
        }
        if let Some(s) = &g[0].scope {
            writeln!(out, "  in {} {} (lines {}-{})", s.kind, s.qualified_name, s.start_line, s.end_line)?;
        }
        if let Some(snippet) = &g[0].snippet {
            for line in snippet.lines() {
                writeln!(out, "  {line}")?;
            }
        }
    }
    Ok(())
}

/// `path:line:col: severity[code]: message (tool)`, further message lines indented.
fn headline(out: &mut impl Write, e: &Enriched) -> io::Result<()> {
    let d = &e.diagnostic;
    let mut loc = d.path.clone().unwrap_or_else(|| "(no file)".to_string());
    if let Some(l) = d.line {
        loc.push_str(&format!(":{l}"));
        if let Some(c) = d.column {
            loc.push_str(&format!(":{c}"));
        }
    }
    // `error[KeyError]: KeyError: 'x'` says it twice: drop the code then.
    let code = match d.code.as_deref() {
        Some(c) if !d.message.starts_with(c) => format!("[{c}]"),
        _ => String::new(),
    };
    let mut lines = d.message.lines();
    writeln!(out, "{loc}: {}{code}: {} ({})", d.severity.as_str(), lines.next().unwrap_or(""), d.tool)?;
    for more in lines {
        writeln!(out, "    {more}")?;
    }
    Ok(())
}
