//! Printing enriched diagnostics: `text` for people, `json` per docs/commands.md, `enrich`
//! (`{"diagnostics": [{"tool", "path", "line", "column", "code",
//! "severity", "message", "scope", "snippet"}]}`).
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

pub fn write(out: &mut impl Write, format: EnrichFormat, items: &[Enriched]) -> io::Result<()> {
    match format {
        EnrichFormat::Json => {
            #[derive(Serialize)]
            struct Doc<'a> {
                diagnostics: &'a [Enriched],
            }
            serde_json::to_writer_pretty(&mut *out, &Doc { diagnostics: items })?;
            writeln!(out)
        }
        EnrichFormat::Text => text(out, items),
    }
}

/// The last snippet written, and its JSON string.
type Escaped = (Option<std::sync::Arc<str>>, Option<Box<serde_json::value::RawValue>>);

thread_local! {
    /// Snippets already written as JSON strings, by address: a scope's
    /// snippet is shared by all its diagnostics and escaped once.
    static ESCAPED: std::cell::RefCell<Escaped> = const { std::cell::RefCell::new((None, None)) };
}

/// Serializes a shared snippet: the same string as ever, escaped once for
/// the run of diagnostics that share it.
pub fn shared_snippet<S: serde::Serializer>(
    snippet: &Option<std::sync::Arc<str>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let Some(s) = snippet else { return serializer.serialize_none() };
    ESCAPED.with(|cell| {
        let mut cache = cell.borrow_mut();
        if !cache.0.as_ref().is_some_and(|last| std::sync::Arc::ptr_eq(last, s)) {
            let raw = serde_json::to_string(&**s).ok().and_then(|j| serde_json::value::RawValue::from_string(j).ok());
            *cache = (Some(std::sync::Arc::clone(s)), raw);
        }
        match &cache.1 {
            Some(raw) => serializer.serialize_some(raw),
            None => serializer.serialize_some(&**s),
        }
    })
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
