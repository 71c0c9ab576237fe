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
//! Opening a file an entry costs more than decoding it (about 4 µs, 1,500
//! entries for a change of 1,000 files), so the entries a run used are also
//! kept together in one file per language directory, `pack` ([`Pack`]):
//! read whole once, each entry then found by halves. A run that found a
//! quarter or more of its entries outside the pack (or that used less than
//! a quarter of a pack over 1 MiB) writes a new one of the
//! entries it used, with as many bytes again of the old pack's others, in
//! place of the old (a temporary file renamed); the per-blob files stay
//! what entries are written as, and what the pack falls back on.
//!
//! The cache only saves time: a file that cannot be read or written is
//! parsed again, and `diff --no-cache` bypasses it; the output is the same.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

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
    /// Each language's pack, read the first time that language is looked up.
    packs: Vec<OnceLock<Option<Pack>>>,
    /// The entries this run used, by language, to pack when [`ScopeCache::finish`] is called.
    used: Mutex<Vec<Used>>,
}

/// An entry a lookup used: its id, and its bytes where they were not in the pack.
type UsedEntry = (Box<[u8]>, Option<Vec<u8>>);

/// The entries one language's lookups used in this run.
#[derive(Default)]
struct Used {
    entries: Vec<UsedEntry>,
    /// How many of them were not in the pack.
    misses: usize,
    /// Their bytes, all told.
    bytes: usize,
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
            packs: super::LANGUAGES.iter().map(|_| OnceLock::new()).collect(),
            used: Mutex::new(super::LANGUAGES.iter().map(|_| Used::default()).collect()),
        })
    }

    /// Language `i`'s pack, read whole the first time; `None` when there
    /// is none or it is not one [`Pack::encode`] wrote.
    fn pack(&self, i: usize) -> Option<&Pack> {
        let dir = self.dirs().get(i)?;
        self.packs.get(i)?.get_or_init(|| std::fs::read(dir.join(PACK)).ok().and_then(Pack::new)).as_ref()
    }

    /// Notes that language `i`'s entry `id` was used: found in the pack
    /// (`bytes` is `None`), else with the bytes it has.
    fn note(&self, i: usize, id: &[u8], len: usize, bytes: Option<Vec<u8>>) {
        if let Ok(mut used) = self.used.lock()
            && let Some(u) = used.get_mut(i)
        {
            u.misses += usize::from(bytes.is_some());
            u.bytes += len;
            u.entries.push((id.into(), bytes));
        }
    }

    /// Packs the entries this run used, for each language where a quarter
    /// or more of them were not in its pack, or where the pack is more than
    /// four times what it used (read whole for a few entries): one file,
    /// written whole (a temporary file renamed into place) or not at all.
    pub(crate) fn finish(&self) {
        let Ok(used) = self.used.lock() else { return };
        for (i, u) in used.iter().enumerate() {
            if u.entries.is_empty() {
                continue;
            }
            let (Some(dir), old) = (self.dirs().get(i), self.pack(i)) else { continue };
            let oversized = old.is_some_and(|p| p.bytes.len() > (4 * u.bytes).max(1 << 20));
            if u.misses * 4 < u.entries.len() && !oversized {
                continue;
            }
            let mut entries: Vec<(&[u8], &[u8])> = u
                .entries
                .iter()
                .filter_map(|(id, bytes)| Some((&id[..], bytes.as_deref().or_else(|| old?.get(id))?)))
                .collect();
            // The old pack's other entries come along up to as many bytes
            // again (those of another command, say): two working sets
            // used in turn then share one pack instead of each replacing it.
            let mut room: usize = entries.iter().map(|e| e.1.len()).sum();
            let ours: std::collections::HashSet<&[u8]> = entries.iter().map(|e| e.0).collect();
            for (id, bytes) in old.map(Pack::entries).into_iter().flatten().filter(|e| !ours.contains(e.0)) {
                if bytes.len() > room {
                    break;
                }
                room -= bytes.len();
                entries.push((id, bytes));
            }
            let bytes = Pack::encode(entries);
            if bytes.is_empty() {
                continue;
            }
            let tmp = dir.join(format!(".{PACK}.{}", std::process::id()));
            if std::fs::write(&tmp, bytes).is_err() || std::fs::rename(&tmp, dir.join(PACK)).is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
        }
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
        // Read until the end without asking the file's size first (two
        // system calls an entry, for entries mostly under 4 KiB).
        let mut file = std::fs::File::from(fd);
        let (mut bytes, mut len) = (vec![0; 4096], 0);
        loop {
            if len == bytes.len() {
                bytes.resize(len * 2, 0);
            }
            match file.read(&mut bytes[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        bytes.truncate(len);
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
        let lang = Self::language(def);
        let packed = lang.zip(id).and_then(|(i, id)| self.pack(i)?.get(id));
        if let Some((refs, len)) = packed.and_then(|p| Some((decode(p)?, p.len()))) {
            if let (Some(i), Some(id)) = (lang, id) {
                self.note(i, id, len, None);
            }
            return f(&refs);
        }
        if let Some(entry) = id.and_then(|id| self.read(def, id))
            && let Some(refs) = decode(&entry)
        {
            let r = f(&refs);
            drop(refs);
            if let (Some(i), Some(id)) = (lang, id) {
                self.note(i, id, entry.len(), Some(entry));
            }
            return r;
        }
        let spans = scopes(def, source);
        if let (Some(id), Ok(spans)) = (id, &spans) {
            let bytes = encode(spans);
            store(&self.path(def, id), &bytes);
            if let Some(i) = lang {
                self.note(i, id, bytes.len(), Some(bytes));
            }
        }
        let spans = spans.unwrap_or_default();
        f(&spans.iter().map(ScopeSpan::as_ref).collect::<Vec<_>>())
    }
}

/// The name of a language directory's pack.
const PACK: &str = "pack";

/// Entries by blob id, in one file: a header line ([`PACK_MAGIC`]), the
/// number of entries and the length of an id (little-endian `u32`s), a
/// table of `(id, offset, length)` sorted by id, then the entries' bytes
/// (each as [`encode`] wrote it), which the offsets count from.
struct Pack {
    bytes: Vec<u8>,
    count: usize,
    id_len: usize,
}

const PACK_MAGIC: &[u8] = b"retry-run scopes pack 1\n";

impl Pack {
    /// The pack in `bytes`; `None` unless its header, table and offsets
    /// hold together and its ids are sorted.
    fn new(bytes: Vec<u8>) -> Option<Pack> {
        let u32_at = |at: usize| -> Option<usize> {
            let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
            usize::try_from(u32::from_le_bytes(b)).ok()
        };
        let head = bytes.strip_prefix(PACK_MAGIC)?;
        let at = bytes.len() - head.len();
        let (count, id_len) = (u32_at(at)?, u32_at(at + 4)?);
        if id_len == 0 || id_len > 64 {
            return None;
        }
        let pack = Pack { count, id_len, bytes };
        let data = pack.data_start()?;
        if data > pack.bytes.len() {
            return None;
        }
        let mut last: Option<&[u8]> = None;
        for k in 0..count {
            let (id, off, len) = pack.record(k)?;
            if last.is_some_and(|l| l >= id) || off.checked_add(len)? > pack.bytes.len() - data {
                return None;
            }
            last = Some(id);
        }
        Some(pack)
    }

    fn table_start(&self) -> usize {
        PACK_MAGIC.len() + 8
    }

    fn data_start(&self) -> Option<usize> {
        self.count.checked_mul(self.id_len + 8)?.checked_add(self.table_start())
    }

    /// Record `k` of the table: its id, offset and length.
    fn record(&self, k: usize) -> Option<(&[u8], usize, usize)> {
        let at = self.table_start() + k * (self.id_len + 8);
        let rec = self.bytes.get(at..at + self.id_len + 8)?;
        let (id, nums) = rec.split_at(self.id_len);
        let n = |r: &[u8]| -> Option<usize> { usize::try_from(u32::from_le_bytes(r.try_into().ok()?)).ok() };
        Some((id, n(&nums[..4])?, n(&nums[4..])?))
    }

    /// Every entry, by id.
    fn entries(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let data = self.data_start().unwrap_or(self.bytes.len());
        (0..self.count).filter_map(move |k| {
            let (id, off, len) = self.record(k)?;
            Some((id, self.bytes.get(data + off..data + off + len)?))
        })
    }

    /// The bytes of the entry of `id`, if the pack holds one.
    fn get(&self, id: &[u8]) -> Option<&[u8]> {
        if id.len() != self.id_len {
            return None;
        }
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (at, off, len) = self.record(mid)?;
            match at.cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let data = self.data_start()?;
                    return self.bytes.get(data + off..data + off + len);
                }
            }
        }
        None
    }

    /// A pack of `entries` (id, bytes): sorted by id, each id once (the
    /// first given), ids of another length than the first left out; empty
    /// when a length does not fit in 32 bits.
    fn encode(mut entries: Vec<(&[u8], &[u8])>) -> Vec<u8> {
        let id_len = entries.first().map_or(20, |e| e.0.len());
        entries.retain(|e| e.0.len() == id_len);
        entries.sort_by(|a, b| a.0.cmp(b.0));
        entries.dedup_by(|a, b| a.0 == b.0);
        let fits = |n: usize| u32::try_from(n).ok();
        let data_len: usize = entries.iter().map(|e| e.1.len()).sum();
        let (Some(count), Some(idl), Some(_)) = (fits(entries.len()), fits(id_len), fits(data_len)) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(PACK_MAGIC.len() + 8 + entries.len() * (id_len + 8) + data_len);
        out.extend_from_slice(PACK_MAGIC);
        out.extend_from_slice(&count.to_le_bytes());
        out.extend_from_slice(&idl.to_le_bytes());
        let mut off = 0u32;
        for (id, bytes) in &entries {
            out.extend_from_slice(id);
            out.extend_from_slice(&off.to_le_bytes());
            let len = bytes.len() as u32; // fits: their sum does
            out.extend_from_slice(&len.to_le_bytes());
            off += len;
        }
        for (_, bytes) in &entries {
            out.extend_from_slice(bytes);
        }
        out
    }
}

/// Writes the entry whole (a temporary file renamed into place), or not at all.
fn store(path: &std::path::Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
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
    fn a_pack_finds_each_entry_it_was_given_and_no_other() {
        let ids: Vec<[u8; 20]> = [9u8, 1, 200, 1, 77].iter().map(|&b| [b; 20]).collect();
        let bodies: Vec<Vec<u8>> = (0..ids.len()).map(|k| format!("entry {k}\n").into_bytes()).collect();
        let given: Vec<(&[u8], &[u8])> = ids.iter().zip(&bodies).map(|(i, b)| (&i[..], &b[..])).collect();
        let pack = Pack::new(Pack::encode(given)).expect("a pack");
        // Four distinct ids; for the repeated one, the first bytes given.
        let cases: [(u8, Option<&[u8]>); 6] = [
            (1, Some(b"entry 1\n")),
            (9, Some(b"entry 0\n")),
            (77, Some(b"entry 4\n")),
            (200, Some(b"entry 2\n")),
            (0, None),
            (255, None),
        ];
        for (b, want) in cases {
            assert_eq!(pack.get(&[b; 20]), want, "id {b}");
        }
        assert_eq!(pack.get(&[1; 32]), None, "an id of another length");
        let empty = Pack::new(Pack::encode(Vec::new())).expect("an empty pack");
        assert_eq!(empty.get(&[1; 20]), None);
    }

    #[test]
    fn a_damaged_pack_is_not_read() {
        let (a, b) = ([1u8; 20], [2u8; 20]);
        let good = Pack::encode(vec![(&a[..], &b"one\n"[..]), (&b[..], &b"two\n"[..])]);
        assert!(Pack::new(good.clone()).is_some());
        for cut in 0..good.len() {
            assert!(Pack::new(good[..cut].to_vec()).is_none(), "cut at {cut}");
        }
        // Ids out of order: the halving would miss entries.
        let table = PACK_MAGIC.len() + 8;
        let mut swapped = good.clone();
        swapped[table..table + 20].copy_from_slice(&b);
        swapped[table + 28..table + 48].copy_from_slice(&a);
        assert!(Pack::new(swapped).is_none());
        // An entry that runs past the end.
        let mut long = good.clone();
        long[table + 24] = 200;
        assert!(Pack::new(long).is_none());
        let mut other = good;
        other[0] = b'R';
        assert!(Pack::new(other).is_none());
    }

    #[test]
    fn a_run_that_found_its_entries_outside_the_pack_packs_them_and_the_next_reads_them_from_it() {
        let home = tempfile::tempdir().expect("tempdir");
        let cache = |root: &std::path::Path| ScopeCache {
            root: root.to_path_buf(),
            dirs: OnceLock::new(),
            open_dirs: OnceLock::new(),
            packs: super::super::LANGUAGES.iter().map(|_| OnceLock::new()).collect(),
            used: Mutex::new(super::super::LANGUAGES.iter().map(|_| Used::default()).collect()),
        };
        let def = super::super::language_for(b"a.py").expect("python");
        let lang = ScopeCache::language(def).expect("a listed language");
        let sources: Vec<String> = (0..6).map(|k| format!("def f{k}(x):\n    return {k}\n")).collect();
        let ids: Vec<[u8; 20]> = (0..6u8).map(|k| [k + 1; 20]).collect();
        let names = |c: &ScopeCache, k: usize| {
            c.with_scopes(def, Some(&ids[k]), sources[k].as_bytes(), |s| {
                s.iter().map(|r| r.qualified_name.to_string()).collect::<Vec<_>>()
            })
        };
        // The first run parses all six: each written as its own file, then packed.
        let first = cache(home.path());
        let parsed: Vec<_> = (0..6).map(|k| names(&first, k)).collect();
        assert_eq!(parsed[3], ["f3"]);
        first.finish();
        let pack_path = first.dirs()[lang].join(PACK);
        assert!(pack_path.is_file());
        // The next one finds them in the pack (each file gone, the same
        // scopes), and writes no pack again: nothing was missing.
        for id in &ids {
            std::fs::remove_file(first.path(def, id)).expect("remove entry");
        }
        let before = std::fs::metadata(&pack_path).and_then(|m| m.modified()).expect("mtime");
        let second = cache(home.path());
        assert_eq!((0..6).map(|k| names(&second, k)).collect::<Vec<_>>(), parsed);
        assert_eq!(second.used.lock().expect("lock")[lang].misses, 0);
        second.finish();
        assert_eq!(std::fs::metadata(&pack_path).and_then(|m| m.modified()).expect("mtime"), before);
        // Another command's entries (four of the six, and two new): packed
        // with the old pack's other two, so that both commands find theirs.
        let other = cache(home.path());
        let more: Vec<String> = (6..8).map(|k| format!("def g{k}(x):\n    return {k}\n")).collect();
        let more_ids: Vec<[u8; 20]> = (6..8u8).map(|k| [k + 1; 20]).collect();
        for k in 0..4 {
            names(&other, k);
        }
        for k in 0..2 {
            other.with_scopes(def, Some(&more_ids[k]), more[k].as_bytes(), |_| ());
        }
        other.finish();
        let pack = Pack::new(std::fs::read(&pack_path).expect("pack")).expect("a pack");
        for id in ids.iter().chain(&more_ids) {
            assert!(pack.get(id).is_some(), "{id:?}");
        }
        // A damaged pack is parsed around, never trusted.
        std::fs::write(&pack_path, b"retry-run scopes pack 1\ngarbage").expect("write");
        let third = cache(home.path());
        assert_eq!(names(&third, 2), ["f2"]);
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
