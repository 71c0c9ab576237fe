//! Reads and parses the files enrichment needs: each file once, on every
//! core. The only part of `enrich` that touches the filesystem.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Source;
use crate::syntax;

/// A file with a NUL byte in its first 8000 bytes is binary (git's rule).
const BINARY_SNIFF: usize = 8000;

/// Reads `files` (relative to `root`) and finds their scopes: for a file
/// in `near`, only those around its lines of interest (all that enrichment
/// looks at), else all.
pub(crate) fn load(root: &Path, files: &[String], near: &HashMap<String, Vec<usize>>) -> HashMap<String, Source> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len()).max(1);
    // Largest first: the last file a thread takes is a small one, so the
    // threads finish together.
    let mut order: Vec<(u64, &String)> =
        files.iter().map(|f| (std::fs::metadata(root.join(f)).map_or(0, |m| m.len()), f)).collect();
    order.sort_by_key(|o| std::cmp::Reverse(o.0));
    let files: Vec<&String> = order.into_iter().map(|(_, f)| f).collect();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(HashMap::with_capacity(files.len()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut local = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(rel) = files.get(i) else { break };
                    let lines = near.get(rel.as_str()).map(Vec::as_slice);
                    local.push(((*rel).clone(), read_one(&root.join(rel), rel, lines)));
                }
                if let Ok(mut r) = results.lock() {
                    r.extend(local);
                }
            });
        }
    });
    results.into_inner().unwrap_or_default()
}

/// Like [`load`], reading each file through `read` (one thread): the loop
/// reads the files of an attempt's snapshot commit this way.
pub(crate) fn load_with(files: &[String], read: &dyn Fn(&str) -> Option<Vec<u8>>) -> HashMap<String, Source> {
    files.iter().map(|rel| (rel.clone(), read(rel).map_or(Source::Unreadable, |b| parse(b, rel, None)))).collect()
}

fn read_one(path: &Path, rel: &str, lines: Option<&[usize]>) -> Source {
    match std::fs::read(path) {
        Ok(bytes) => parse(bytes, rel, lines),
        Err(_) => Source::Unreadable,
    }
}

fn parse(bytes: Vec<u8>, rel: &str, lines: Option<&[usize]>) -> Source {
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return Source::Unreadable;
    }
    let Ok(text) = String::from_utf8(bytes) else { return Source::Unreadable };
    let scopes = match syntax::language_for(rel.as_bytes()) {
        Some(lang) => match lines {
            Some(lines) => syntax::scopes_near(lang, text.as_bytes(), lines),
            None => syntax::scopes(lang, text.as_bytes()),
        }
        .unwrap_or_default(),
        None => Vec::new(),
    };
    Source::Text { text, scopes }
}
