//! Rename detection as git does it (`diffcore-rename.c`), so that
//! `retry-run diff` and `git diff -M` pair the same files.
//!
//! 1. Exact renames: a deleted and an added entry with the same blob id
//!    (a source with the same basename preferred).
//! 2. Basename matches: among what is left, a basename found exactly once
//!    on each side pairs up when the two are at least 75% similar.
//! 3. The similarity matrix: every remaining source against every remaining
//!    destination (regular files only), pruned by size, scored by git's
//!    span hashing; each destination keeps its best 4 candidates, and the
//!    pairs are taken best first, each side used once. Skipped when the
//!    matrix would exceed `limit` squared (git's `diff.renameLimit`).
//!
//! Scores are on git's scale: 60000 is identical, 30000 (50%) the minimum.
//! The scoring functions are pure and unit-tested.

use std::collections::HashMap;

pub(super) const MAX_SCORE: u32 = 60000;
pub(super) const MIN_SCORE: u32 = 30000;
const MIN_BASENAME_SCORE: u32 = MIN_SCORE + (MAX_SCORE - MIN_SCORE) / 2;
const CANDIDATES_PER_DST: usize = 4;
const HASHBASE: u32 = 107927;

/// One side of a possible rename: a deleted (source) or added (destination)
/// entry.
#[derive(Debug, Clone)]
pub(super) struct RenameEnd<'a> {
    pub path: &'a [u8],
    /// The blob id, as hex or raw bytes: only compared for equality.
    pub id: &'a [u8],
    pub mode: i32,
}

fn is_regular(mode: i32) -> bool {
    matches!(mode, 0o100644 | 0o100755 | 0o100664)
}

use crate::pathfmt::basename;

/// git's binary test: a NUL byte in the first 8000 bytes.
pub(super) fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(8000)].contains(&0)
}

/// git's span hashes of a blob: chunks ending at a newline or at 64 bytes,
/// hashed, with the byte count of each hash (`hash_chars`).
pub(super) fn spanhash(data: &[u8]) -> Vec<(u32, u32)> {
    let text = !is_binary(data);
    let mut counts: HashMap<u32, u32> = HashMap::new();
    let (mut acc1, mut acc2, mut n) = (0u32, 0u32, 0u32);
    let mut i = 0;
    while i < data.len() {
        let c = u32::from(data[i]);
        i += 1;
        // A CR of a CRLF in text does not count.
        if text && c == u32::from(b'\r') && data.get(i) == Some(&b'\n') {
            continue;
        }
        let old1 = acc1;
        acc1 = (acc1 << 7) ^ (acc2 >> 25);
        acc2 = (acc2 << 7) ^ (old1 >> 25);
        acc1 = acc1.wrapping_add(c);
        n += 1;
        if n < 64 && c != u32::from(b'\n') {
            continue;
        }
        *counts.entry(acc1.wrapping_add(acc2.wrapping_mul(0x61)) % HASHBASE).or_default() += n;
        (acc1, acc2, n) = (0, 0, 0);
    }
    if n > 0 {
        *counts.entry(acc1.wrapping_add(acc2.wrapping_mul(0x61)) % HASHBASE).or_default() += n;
    }
    let mut v: Vec<(u32, u32)> = counts.into_iter().collect();
    v.sort_unstable();
    v
}

/// Bytes of `dst` copied from `src`, by span hashes (`diffcore_count_changes`).
fn copied(src: &[(u32, u32)], dst: &[(u32, u32)]) -> u64 {
    let (mut i, mut j, mut total) = (0, 0, 0u64);
    while i < src.len() && j < dst.len() {
        match src[i].0.cmp(&dst[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                total += u64::from(src[i].1.min(dst[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    total
}

/// Whether two sizes are too far apart to reach the minimum score.
fn size_pruned(a: usize, b: usize) -> bool {
    let (max, min) = (a.max(b) as u64, a.min(b) as u64);
    max * u64::from(MAX_SCORE - MIN_SCORE) < (max - min) * u64::from(MAX_SCORE)
}

/// git's similarity score of two blobs (`estimate_similarity`).
#[cfg(test)]
fn score(src: &[u8], dst: &[u8]) -> u32 {
    score_hashed(&spanhash(src), src.len(), &spanhash(dst), dst.len())
}

fn score_hashed(src: &[(u32, u32)], src_len: usize, dst: &[(u32, u32)], dst_len: usize) -> u32 {
    let max = src_len.max(dst_len);
    if max == 0 || size_pruned(src_len, dst_len) {
        return 0;
    }
    (copied(src, dst) * u64::from(MAX_SCORE) / max as u64) as u32
}

/// The blobs of the endpoints, by index into the sources (`Left`) or the
/// destinations (`Right`).
pub(super) trait Blobs<'l, E> {
    /// The blob's size in bytes, which must be the length of its [`Blobs::load`].
    fn size(&mut self, side: ListSide, i: usize) -> Result<usize, E>;
    fn load(&mut self, side: ListSide, i: usize) -> Result<std::borrow::Cow<'l, [u8]>, E>;
}

/// Pairs sources with destinations. Returns `(source, destination, score)`
/// triples. Like git, a pair whose sizes are too far apart to reach the
/// score it needs is pruned on its sizes alone, without reading either
/// blob.
pub(super) fn detect<'l, E>(
    sources: &[RenameEnd],
    destinations: &[RenameEnd],
    limit: usize,
    blobs: &mut dyn Blobs<'l, E>,
) -> Result<Vec<(usize, usize, u32)>, E> {
    let mut found =
        Pairing { pairs: Vec::new(), src_used: vec![false; sources.len()], dst_used: vec![false; destinations.len()] };
    exact_renames(sources, destinations, &mut found);
    // Remaining regular files take part in inexact detection.
    let srcs: Vec<usize> = (0..sources.len()).filter(|&i| !found.src_used[i] && is_regular(sources[i].mode)).collect();
    let dsts: Vec<usize> =
        (0..destinations.len()).filter(|&j| !found.dst_used[j] && is_regular(destinations[j].mode)).collect();
    if srcs.is_empty() || dsts.is_empty() {
        return Ok(found.pairs);
    }
    let sizes = (vec![None; sources.len()], vec![None; destinations.len()]);
    let mut scorer = Scorer { blobs, sizes, src_data: HashMap::new(), dst_data: HashMap::new() };
    same_basenames(sources, destinations, &srcs, &dsts, &mut scorer, &mut found)?;
    // The matrix, unless the pairs left are too many.
    let srcs: Vec<usize> = srcs.into_iter().filter(|&i| !found.src_used[i]).collect();
    let dsts: Vec<usize> = dsts.into_iter().filter(|&j| !found.dst_used[j]).collect();
    if srcs.is_empty() || dsts.is_empty() || srcs.len().saturating_mul(dsts.len()) > limit.saturating_mul(limit) {
        return Ok(found.pairs);
    }
    matrix(sources, destinations, &srcs, &dsts, &mut scorer, &mut found)?;
    Ok(found.pairs)
}

/// The pairs found so far, and which sources and destinations they use.
struct Pairing {
    pairs: Vec<(usize, usize, u32)>,
    src_used: Vec<bool>,
    dst_used: Vec<bool>,
}

impl Pairing {
    fn pair(&mut self, i: usize, j: usize, score: u32) {
        self.src_used[i] = true;
        self.dst_used[j] = true;
        self.pairs.push((i, j, score));
    }
}

/// The first step: exact renames, by blob id; empty blobs never pair.
/// Among sources with the destination's blob, one with its basename first.
fn exact_renames(sources: &[RenameEnd], destinations: &[RenameEnd], found: &mut Pairing) {
    let mut by_id: HashMap<(&[u8], bool), Vec<usize>> = HashMap::new();
    for (i, s) in sources.iter().enumerate() {
        if s.mode != 0o160000 {
            by_id.entry((s.id, is_regular(s.mode))).or_default().push(i);
        }
    }
    const EMPTY_BLOB: &[u8] = b"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";
    for (j, d) in destinations.iter().enumerate() {
        if d.mode == 0o160000 || d.id == EMPTY_BLOB {
            continue;
        }
        let Some(cands) = by_id.get(&(d.id, is_regular(d.mode))) else {
            continue;
        };
        let free = cands.iter().copied().filter(|&i| !found.src_used[i]);
        let pick =
            free.clone().find(|&i| basename(sources[i].path) == basename(d.path)).or_else(|| free.clone().next());
        if let Some(i) = pick {
            found.pair(i, j, MAX_SCORE);
        }
    }
}

/// Span hashes and sizes of the files read so far, by index.
type Hashed = HashMap<usize, (Vec<(u32, u32)>, usize)>;

/// Scores pairs, reading each blob's size and content at most once.
struct Scorer<'b, 'l, E> {
    blobs: &'b mut dyn Blobs<'l, E>,
    /// Each source's and destination's size, by index, once read: the
    /// matrix asks for every pair's, so a lookup is an index, not a hash.
    sizes: (Vec<Option<usize>>, Vec<Option<usize>>),
    src_data: Hashed,
    dst_data: Hashed,
}

impl<E> Scorer<'_, '_, E> {
    fn size(&mut self, side: ListSide, k: usize) -> Result<usize, E> {
        let known = if side == ListSide::Left { &mut self.sizes.0 } else { &mut self.sizes.1 };
        if let Some(Some(n)) = known.get(k) {
            return Ok(*n);
        }
        let n = self.blobs.size(side, k)?;
        if let Some(slot) = known.get_mut(k) {
            *slot = Some(n);
        }
        Ok(n)
    }

    /// The score of a pair, 0 when their sizes rule it out.
    fn score(&mut self, i: usize, j: usize) -> Result<u32, E> {
        let (a, b) = (self.size(ListSide::Left, i)?, self.size(ListSide::Right, j)?);
        if a.max(b) == 0 || size_pruned(a, b) {
            return Ok(0);
        }
        for (side, k, cache) in [(ListSide::Left, i, &mut self.src_data), (ListSide::Right, j, &mut self.dst_data)] {
            if let std::collections::hash_map::Entry::Vacant(slot) = cache.entry(k) {
                let data = self.blobs.load(side, k)?;
                slot.insert((spanhash(&data), data.len()));
            }
        }
        let (s, d) = (&self.src_data[&i], &self.dst_data[&j]);
        Ok(score_hashed(&s.0, s.1, &d.0, d.1))
    }
}

/// The second step: basenames unique on both sides, paired when similar
/// enough.
fn same_basenames<E>(
    sources: &[RenameEnd],
    destinations: &[RenameEnd],
    srcs: &[usize],
    dsts: &[usize],
    scorer: &mut Scorer<'_, '_, E>,
    found: &mut Pairing,
) -> Result<(), E> {
    let mut src_names: HashMap<&[u8], Vec<usize>> = HashMap::new();
    for &i in srcs {
        src_names.entry(basename(sources[i].path)).or_default().push(i);
    }
    let mut dst_names: HashMap<&[u8], Vec<usize>> = HashMap::new();
    for &j in dsts {
        dst_names.entry(basename(destinations[j].path)).or_default().push(j);
    }
    for &j in dsts {
        let name = basename(destinations[j].path);
        let (Some([i]), Some([_])) = (src_names.get(name).map(Vec::as_slice), dst_names.get(name).map(Vec::as_slice))
        else {
            continue;
        };
        let i = *i;
        let sc = scorer.score(i, j)?;
        if sc >= MIN_BASENAME_SCORE {
            found.pair(i, j, sc);
        }
    }
    Ok(())
}

/// The third step: every remaining source against every remaining
/// destination; each destination's best candidates, then the best pairs
/// first.
fn matrix<E>(
    sources: &[RenameEnd],
    destinations: &[RenameEnd],
    srcs: &[usize],
    dsts: &[usize],
    scorer: &mut Scorer<'_, '_, E>,
    found: &mut Pairing,
) -> Result<(), E> {
    let mut candidates: Vec<(u32, bool, usize, usize)> = Vec::new(); // (score, same basename, dst, src)
    for &j in dsts {
        let mut best: Vec<(u32, bool, usize, usize)> = Vec::new();
        for &i in srcs {
            let sc = scorer.score(i, j)?;
            if sc >= MIN_SCORE {
                best.push((sc, basename(sources[i].path) == basename(destinations[j].path), j, i));
            }
        }
        best.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.3.cmp(&b.3)));
        best.truncate(CANDIDATES_PER_DST);
        candidates.extend(best);
    }
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3)));
    for (sc, _, j, i) in candidates {
        if !found.src_used[i] && !found.dst_used[j] {
            found.pair(i, j, sc);
        }
    }
    Ok(())
}

/// Which list an index of [`detect`]'s loader refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum ListSide {
    Left,
    Right,
}

/// A score as the percentage git prints in `similarity index N%`.
pub(super) fn percent(score: u32) -> u32 {
    score * 100 / MAX_SCORE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_is_max_and_unrelated_is_low() {
        let a = b"one\ntwo\nthree\nfour\n";
        assert_eq!(score(a, a), MAX_SCORE);
        assert!(score(a, b"five\nsix\nseven\neight\n") < MIN_SCORE);
        assert_eq!(score(b"", b""), 0);
    }

    #[test]
    fn half_changed_is_about_half() {
        let src = b"a1\na2\na3\na4\na5\na6\na7\na8\n";
        let dst = b"a1\na2\na3\na4\nb5\nb6\nb7\nb8\n";
        assert_eq!(percent(score(src, dst)), 50);
    }

    #[test]
    fn crlf_counts_like_lf_in_text() {
        assert_eq!(score(b"x\r\ny\r\n", b"x\ny\n"), MAX_SCORE * 4 / 6);
        assert_eq!(spanhash(b"x\r\ny\r\n"), spanhash(b"x\ny\n"));
    }

    #[test]
    fn sizes_too_far_apart_are_pruned() {
        assert!(size_pruned(100, 49));
        assert!(!size_pruned(100, 50));
    }

    fn ep<'a>(path: &'a str, id: &'a str) -> RenameEnd<'a> {
        RenameEnd { path: path.as_bytes(), id: id.as_bytes(), mode: 0o100644 }
    }

    #[test]
    fn exact_prefers_same_basename_then_inexact_best_first() {
        let sources = [ep("a/x.rs", "1"), ep("b/y.rs", "1"), ep("c/long.txt", "2"), ep("d/other.txt", "3")];
        let dests = [ep("z/y.rs", "1"), ep("e/new.txt", "4")];
        let content = |side: ListSide, i: usize| -> Result<std::borrow::Cow<'static, [u8]>, ()> {
            Ok(std::borrow::Cow::Owned(match (side, i) {
                (ListSide::Left, 2) => b"l1\nl2\nl3\nl4\nl5\nl6\n".to_vec(),
                (ListSide::Left, 3) => b"o1\no2\no3\n".to_vec(),
                (ListSide::Right, 1) => b"l1\nl2\nl3\nl4\nl5\nX\n".to_vec(),
                _ => b"?\n".to_vec(),
            }))
        };
        struct Content<F>(F);
        impl<F: FnMut(ListSide, usize) -> Result<std::borrow::Cow<'static, [u8]>, ()>> Blobs<'static, ()> for Content<F> {
            fn size(&mut self, side: ListSide, i: usize) -> Result<usize, ()> {
                Ok((self.0)(side, i)?.len())
            }
            fn load(&mut self, side: ListSide, i: usize) -> Result<std::borrow::Cow<'static, [u8]>, ()> {
                (self.0)(side, i)
            }
        }
        let got = detect(&sources, &dests, 1000, &mut Content(content)).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0, got[0].1, got[0].2), (1, 0, MAX_SCORE));
        assert_eq!((got[1].0, got[1].1), (2, 1));
        assert_eq!(percent(got[1].2), 83);
    }

    #[test]
    fn pairs_pruned_by_size_are_never_read() {
        // Sizes only: reading any blob is an error.
        struct SizesOnly;
        impl Blobs<'static, String> for SizesOnly {
            fn size(&mut self, side: ListSide, _: usize) -> Result<usize, String> {
                Ok(if side == ListSide::Left { 1400 } else { 8 })
            }
            fn load(&mut self, side: ListSide, i: usize) -> Result<std::borrow::Cow<'static, [u8]>, String> {
                Err(format!("read {side:?} {i}"))
            }
        }
        let sources = [ep("src/a.py", "1"), ep("src/b.py", "2")];
        let dests = [ep("docs/a.py", "3"), ep("docs/n.md", "4")];
        assert_eq!(detect(&sources, &dests, 1000, &mut SizesOnly), Ok(vec![]));
    }
}
