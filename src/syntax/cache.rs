//! Scopes cached by git object id (docs/commands.md, `diff`): a blob's
//! scopes depend only on its bytes, the language's query and this version
//! of retry-run, so they are parsed once and kept in the user's cache
//! directory (`$XDG_CACHE_HOME/retry-run/scopes/<language>-<stamp>/`, else
//! `~/.cache/...`), one small file per blob, shared by every clone: the
//! repository itself is never written. The base's blobs are the same for
//! every attempt of a task and for every pull request on that base.
//!
//! An entry is read for every version of every changed file, so its format
//! is made to be read fast ([`encode`], [`decode`]): one line per scope,
//! numbers first, then each string with its length in front, so nothing is
//! escaped or searched for. An entry that does not decode is parsed again.
//!
//! The cache only saves time: a file that cannot be read or written is
//! parsed again, and `diff --no-cache` bypasses it; the output is the same.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

use rustix::fs::{Mode, OFlags};

use super::{LanguageDef, cache_stamp, scopes};
use crate::model::{ScopeRef, ScopeSpan};

pub(crate) struct ScopeCache {
    root: PathBuf,
    /// Each language's directory, by its index in [`super::LANGUAGES`]:
    /// the stamp is a hash, computed once.
    dirs: std::sync::OnceLock<Vec<PathBuf>>,
    /// The same directories, open where they exist, so that an entry is
    /// opened by its last two names rather than its whole path.
    open_dirs: std::sync::OnceLock<Vec<Option<OwnedFd>>>,
}

/// The entries' format; part of the stamp, so that another format is never read.
const FORMAT: &str = "lines-2";

impl ScopeCache {
    /// The user's cache; `None` when there is no cache directory (no
    /// `XDG_CACHE_HOME` and no `HOME`).
    pub(crate) fn open() -> Option<ScopeCache> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(ScopeCache {
            root: base.join("retry-run").join("scopes"),
            dirs: std::sync::OnceLock::new(),
            open_dirs: std::sync::OnceLock::new(),
        })
    }

    fn dirs(&self) -> &[PathBuf] {
        self.dirs.get_or_init(|| {
            super::LANGUAGES.iter().map(|l| self.root.join(format!("{}-{FORMAT}", cache_stamp(l)))).collect()
        })
    }

    fn language(def: &LanguageDef) -> Option<usize> {
        super::LANGUAGES.iter().position(|l| std::ptr::eq(l, def))
    }

    fn path(&self, def: &LanguageDef, id: &[u8]) -> PathBuf {
        let dir = match Self::language(def) {
            Some(i) => self.dirs()[i].clone(),
            None => self.root.join(format!("{}-{FORMAT}", cache_stamp(def))),
        };
        let hex = crate::hash::hex(id);
        dir.join(&hex[..2]).join(&hex[2..])
    }

    /// The bytes of the entry of `id`, if there is one.
    fn read(&self, def: &LanguageDef, id: &[u8]) -> Option<Vec<u8>> {
        let open = self.open_dirs.get_or_init(|| {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            self.dirs().iter().map(|d| rustix::fs::open(d, flags, Mode::empty()).ok()).collect()
        });
        let Some(dir) = Self::language(def).and_then(|i| open[i].as_ref()) else {
            return std::fs::read(self.path(def, id)).ok();
        };
        let hex = crate::hash::hex(id);
        let name = format!("{}/{}", &hex[..2], &hex[2..]);
        let fd = rustix::fs::openat(dir, name.as_str(), OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).ok()?;
        let mut bytes = Vec::with_capacity(4096);
        std::fs::File::from(fd).read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }

    /// The scopes of `source` (whose object id is `id`), handed to `f`:
    /// from the cache, borrowed from the entry's bytes as they are, else
    /// parsed and stored. A version that cannot be parsed has none (and is
    /// not stored).
    pub(crate) fn with_scopes<R>(
        &self,
        def: &'static LanguageDef,
        id: Option<&[u8]>,
        source: &[u8],
        f: impl FnOnce(&[ScopeRef]) -> R,
    ) -> R {
        let id = id.filter(|i| i.len() >= 2);
        let entry = id.and_then(|id| self.read(def, id));
        if let Some(refs) = entry.as_deref().and_then(decode) {
            return f(&refs);
        }
        let spans = scopes(def, source);
        if let (Some(id), Ok(spans)) = (id, &spans) {
            store(&self.path(def, id), spans);
        }
        let spans = spans.unwrap_or_default();
        f(&spans.iter().map(ScopeSpan::as_ref).collect::<Vec<_>>())
    }
}

/// Writes the entry whole (a temporary file renamed into place), or not at all.
fn store(path: &std::path::Path, spans: &[ScopeSpan]) {
    let Some(dir) = path.parent() else { return };
    let bytes = encode(spans);
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".{}.{}", std::process::id(), path.file_name().and_then(|n| n.to_str()).unwrap_or("x")));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// An entry: per scope, `START END HEAD` and then `kind`, `qualified_name`,
/// `name` and `signature`, each as `LEN:BYTES`, and a newline.
fn encode(spans: &[ScopeSpan]) -> Vec<u8> {
    let mut out = Vec::with_capacity(spans.len() * 64);
    for s in spans {
        out.extend_from_slice(format!("{} {} {}", s.start_line, s.end_line, s.head()).as_bytes());
        for text in [&s.kind, &s.qualified_name, &s.name, &s.signature] {
            out.extend_from_slice(format!(" {}:", text.len()).as_bytes());
            out.extend_from_slice(text.as_bytes());
        }
        out.push(b'\n');
    }
    out
}

/// The scopes of an entry, borrowed from its bytes (checked as UTF-8 once);
/// `None` when it is not one [`encode`] wrote. The signature is not read:
/// what the cache serves needs none.
fn decode(data: &[u8]) -> Option<Vec<ScopeRef<'_>>> {
    /// A decimal number up to the byte `end`, and what follows that byte;
    /// read in one pass, digit by digit.
    fn number(data: &str, end: u8) -> Option<(usize, &str)> {
        let bytes = data.as_bytes();
        let mut n = 0usize;
        for (at, &c) in bytes.iter().enumerate().take(20) {
            if c.is_ascii_digit() {
                n = n * 10 + usize::from(c - b'0');
            } else if c == end && at > 0 {
                return Some((n, data.get(at + 1..)?));
            } else {
                return None;
            }
        }
        None
    }
    fn text(data: &str) -> Option<(&str, &str)> {
        let (len, rest) = number(data.strip_prefix(' ')?, b':')?;
        Some((rest.get(..len)?, rest.get(len..)?))
    }
    let mut data = std::str::from_utf8(data).ok()?;
    let mut spans = Vec::new();
    while !data.is_empty() {
        let (start_line, rest) = number(data, b' ')?;
        let (end_line, rest) = number(rest, b' ')?;
        let (head_line, rest) = number(rest, b' ')?;
        // `number` took the space before the first string: give it back.
        let rest = &data[data.len() - rest.len() - 1..];
        let (kind, rest) = text(rest)?;
        let (qualified_name, rest) = text(rest)?;
        let (name, rest) = text(rest)?;
        let (_signature, rest) = text(rest)?;
        data = rest.strip_prefix('\n')?;
        spans.push(ScopeRef { kind, name, qualified_name, start_line, end_line, head_line });
    }
    Some(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(kind: &str, q: &str, name: &str, sig: &str) -> ScopeSpan {
        ScopeSpan {
            kind: kind.into(),
            name: name.into(),
            qualified_name: q.into(),
            start_line: 3,
            end_line: 12,
            signature: sig.into(),
            head_line: 2,
        }
    }

    #[test]
    fn entries_decode_to_what_was_encoded_whatever_the_strings_hold() {
        let spans = vec![
            span("function", "f", "f", "def f(x):"),
            span("class", "A", "A", "class A(B, metaclass=M):"),
            span("function", "A.g", "g", "def g(self, a:\t'x y',\n b=\"12 3:\"):"),
            span("impl", "Ünïcode", "Ünïcode", ""),
        ];
        let bytes = encode(&spans);
        assert_eq!(decode(&bytes), Some(spans.iter().map(ScopeSpan::as_ref).collect()));
        assert_eq!(decode(b""), Some(vec![]));
    }

    #[test]
    fn a_damaged_entry_is_not_decoded() {
        let good = encode(&[span("function", "f", "f", "def f(x):")]);
        for cut in 1..good.len() {
            assert_eq!(decode(&good[..cut]), None, "cut at {cut}");
        }
        assert_eq!(decode(b"[{\"kind\":\"function\"}]"), None);
        assert_eq!(decode(b"1 2 2 3:abc 1:x 1:x 99:short\n"), None);
    }
}
