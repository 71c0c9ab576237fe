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

/// Reads `files` (relative to `root`) and finds their scopes.
pub fn load(root: &Path, files: &[String]) -> HashMap<String, Source> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len()).max(1);
    let next = AtomicUsize::new(0);
    let results = Mutex::new(HashMap::with_capacity(files.len()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut local = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(rel) = files.get(i) else { break };
                    local.push((rel.clone(), read_one(&root.join(rel), rel)));
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
pub fn load_with(files: &[String], read: &dyn Fn(&str) -> Option<Vec<u8>>) -> HashMap<String, Source> {
    files.iter().map(|rel| (rel.clone(), read(rel).map_or(Source::Unreadable, |b| parse(b, rel)))).collect()
}

fn read_one(path: &Path, rel: &str) -> Source {
    match std::fs::read(path) {
        Ok(bytes) => parse(bytes, rel),
        Err(_) => Source::Unreadable,
    }
}

fn parse(bytes: Vec<u8>, rel: &str) -> Source {
    if bytes[..bytes.len().min(BINARY_SNIFF)].contains(&0) {
        return Source::Unreadable;
    }
    let Ok(text) = String::from_utf8(bytes) else { return Source::Unreadable };
    let scopes = match syntax::language_for(rel.as_bytes()) {
        Some(lang) => syntax::scopes(lang, text.as_bytes()).unwrap_or_default(),
        None => Vec::new(),
    };
    Source::Text { text, scopes }
}
