//! The hash chain of an event log (docs/record.md). Pure: bytes in,
//! lines or findings out.
//!
//! Each line is a JSON object with sorted keys: `seq` (from 1), `ts`,
//! `type`, `attempt` (where one applies), `prev` (hex sha256 of the previous
//! line's bytes without its newline; 64 zeros for the first) and the event's
//! own fields.
//!
//! A crash in the middle of an append leaves a last line without its
//! newline. The next writer does not drop it or glue onto it: it ends that
//! line with a newline and appends a `LogRepaired` event naming it (line
//! number, length, sha256) whose `prev` is the hash of the torn bytes, so
//! the chain runs through the torn line and verification accepts it as a
//! recorded crash, not as tampering.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};

use crate::hash::sha256_hex;

pub const ZERO: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The line (without newline) of an event. `fields` must be a JSON object;
/// its `seq`, `ts`, `type`, `attempt` and `prev` keys are overwritten.
pub fn encode(seq: u64, ts: &str, kind: &str, attempt: Option<u32>, prev: &str, fields: &Value) -> String {
    let mut map = match fields {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    map.insert("seq".into(), seq.into());
    map.insert("ts".into(), ts.into());
    map.insert("type".into(), kind.into());
    match attempt {
        Some(a) => map.insert("attempt".into(), a.into()),
        None => map.remove("attempt"),
    };
    map.insert("prev".into(), prev.into());
    Value::Object(map).to_string()
}

/// Where the log stands: what the next event must carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    /// Complete lines so far.
    pub lines: usize,
    /// The seq of the last event (0 when none).
    pub last_seq: u64,
    /// sha256 of the last complete line.
    pub prev: String,
    /// Bytes after the last newline: a torn write.
    pub torn: Option<Vec<u8>>,
}

/// The tail of a log, for appending. Reads only the structure, it does not
/// verify the chain (that is [`verify`]).
pub fn tail(log: &[u8]) -> Tail {
    let (lines, torn) = split(log);
    let torn = torn.map(<[u8]>::to_vec);
    let last_seq = lines
        .iter()
        .rev()
        .find_map(|l| serde_json::from_slice::<Value>(l).ok().and_then(|v| v.get("seq").and_then(Value::as_u64)))
        .unwrap_or(0);
    let prev = lines.last().map_or(ZERO.to_string(), |l| sha256_hex(l));
    Tail { lines: lines.len(), last_seq, prev, torn }
}

/// The complete lines of a log (without newlines) and the bytes after the
/// last newline, if any.
fn split(log: &[u8]) -> (Vec<&[u8]>, Option<&[u8]>) {
    match log.iter().rposition(|&b| b == b'\n') {
        Some(i) => (log[..i].split(|&b| b == b'\n').collect(), (i + 1 < log.len()).then(|| &log[i + 1..])),
        None => (Vec::new(), (!log.is_empty()).then_some(log)),
    }
}

/// One line of the log read back: the event's envelope and its whole JSON
/// value; [`LogLine::typed`] reads it as a [`super::Event`].
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// 1-based line number in the file.
    pub line: usize,
    pub seq: u64,
    pub kind: String,
    pub attempt: Option<u32>,
    pub value: Value,
}

impl LogLine {
    /// The event's own type and fields, typed; `None` for an event type
    /// this version does not know (kept, and shown raw).
    pub fn typed(&self) -> Option<super::Event> {
        super::Event::parse(&self.value)
    }
}

/// What verification found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Line N: the first place where the chain breaks, and how.
    Broken { line: usize, what: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    pub events: Vec<LogLine>,
    /// Lines torn by a crash and recorded as such by a later `LogRepaired`.
    pub repaired: Vec<usize>,
    /// A torn last line not yet repaired (the writer died mid-append).
    pub torn_tail: bool,
    /// The first break of the chain, if any.
    pub broken: Option<Finding>,
}

/// Reads and verifies a whole log. Events up to the first break are returned.
pub fn verify(log: &[u8]) -> Verified {
    let (lines, torn) = split(log);
    let mut out = Verified { events: Vec::new(), repaired: Vec::new(), torn_tail: torn.is_some(), broken: None };
    let (hashes, mut parsed) = hashes_and_values(&lines);
    let mut prev_hash = ZERO.to_string();
    let mut prev_seq = 0u64;
    let mut i = 0;
    while i < lines.len() {
        let n = i + 1;
        let Some(v) = parsed[i].take() else {
            // A torn line is fine when the next line is the LogRepaired that names it.
            let repaired_by_next =
                lines.get(i + 1).and_then(|l| serde_json::from_slice::<Value>(l).ok()).is_some_and(|r| {
                    r.get("type").and_then(Value::as_str) == Some("LogRepaired")
                        && r.get("torn_line").and_then(Value::as_u64) == Some(n as u64)
                        && r.get("torn_sha256").and_then(Value::as_str) == Some(hashes[i].as_str())
                });
            if repaired_by_next {
                out.repaired.push(n);
                prev_hash = hashes[i].clone();
                i += 1;
                continue;
            }
            out.broken = Some(Finding::Broken { line: n, what: "is not a JSON event: edited or corrupted".into() });
            return out;
        };
        let seq = v.get("seq").and_then(Value::as_u64);
        let prev = v.get("prev").and_then(Value::as_str).unwrap_or("");
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if seq.is_none() || kind.is_empty() || v.get("ts").and_then(Value::as_str).is_none() {
            out.broken = Some(Finding::Broken { line: n, what: "lacks seq, ts or type: edited or inserted".into() });
            return out;
        }
        let seq = seq.unwrap_or(0);
        if prev != prev_hash {
            let what = if seq == prev_seq + 1 {
                if i == 0 {
                    "does not start the chain (its prev is not 64 zeros): lines before it were removed".to_string()
                } else {
                    format!("does not follow line {i}: line {i} was edited (its hash no longer matches)")
                }
            } else if seq > prev_seq + 1 && lines[i + 1..].iter().any(|l| seq_of(l) == Some(prev_seq + 1)) {
                format!("has seq {seq} after seq {prev_seq}: lines were reordered")
            } else if seq > prev_seq + 1 {
                format!(
                    "follows seq {prev_seq} but has seq {seq}: {} event(s) before it were removed",
                    seq - prev_seq - 1
                )
            } else if hashes.iter().skip(i + 1).any(|h| h == prev) {
                format!("has seq {seq} after seq {prev_seq}: lines were reordered")
            } else {
                format!("has seq {seq} after seq {prev_seq}: it or the line before it was inserted")
            };
            // An edit to line i shows at line i+1; name the edited line.
            let line = if seq == prev_seq + 1 && i > 0 { i } else { n };
            out.broken = Some(Finding::Broken { line, what });
            return out;
        }
        if seq != prev_seq + 1 {
            out.broken =
                Some(Finding::Broken { line: n, what: format!("has seq {seq} after seq {prev_seq}: renumbered") });
            return out;
        }
        out.events.push(LogLine {
            line: n,
            seq,
            kind: kind.to_string(),
            attempt: v.get("attempt").and_then(Value::as_u64).map(|a| a as u32),
            value: v,
        });
        prev_hash = hashes[i].clone();
        prev_seq = seq;
        i += 1;
    }
    out
}

/// Above this many bytes, a log's lines are hashed on a thread of their
/// own while they are parsed.
const HASH_ASIDE: usize = 64 * 1024;

/// Each line's sha256 and its JSON object (`None` where it is none), the
/// hashes computed beside the parsing for a long log.
fn hashes_and_values(lines: &[&[u8]]) -> (Vec<String>, Vec<Option<Value>>) {
    let hash = || lines.iter().map(|l| sha256_hex(l)).collect::<Vec<String>>();
    let parse =
        || lines.iter().map(|l| serde_json::from_slice::<Value>(l).ok().filter(Value::is_object)).collect::<Vec<_>>();
    let long = lines.iter().map(|l| l.len()).sum::<usize>() > HASH_ASIDE;
    if !long || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return (hash(), parse());
    }
    std::thread::scope(|s| {
        let hashing = s.spawn(hash);
        let values = parse();
        (hashing.join().unwrap_or_else(|_| hash()), values)
    })
}

fn seq_of(line: &[u8]) -> Option<u64> {
    serde_json::from_slice::<Value>(line).ok()?.get("seq")?.as_u64()
}

/// RFC 3339 UTC with milliseconds (`2026-11-22T10:04:05.123Z`) of a Unix
/// time; `millis` above 999 count as 999, a time past chrono's last year
/// as that year's end.
pub fn rfc3339(secs: u64, millis: u32) -> String {
    let t = i64::try_from(secs).ok().and_then(|s| DateTime::<Utc>::from_timestamp(s, millis.min(999) * 1_000_000));
    t.unwrap_or(DateTime::<Utc>::MAX_UTC).to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Seconds since the epoch of an RFC 3339 time (`2026-11-22T10:04:05.123Z`,
/// `2026-11-22T12:04:05+02:00`), its offset applied; `None` for a time
/// that is not one (month 13, 30 February, no offset) or is before 1970.
pub fn parse_rfc3339(ts: &str) -> Option<u64> {
    u64::try_from(DateTime::parse_from_rfc3339(ts).ok()?.timestamp()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn log(n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        let mut prev = ZERO.to_string();
        for seq in 1..=n {
            let line = encode(seq, "2026-11-22T10:00:00Z", "Thing", Some(seq as u32), &prev, &json!({"x": seq}));
            prev = sha256_hex(line.as_bytes());
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        out
    }

    fn lines(b: &[u8]) -> Vec<Vec<u8>> {
        b.split(|&c| c == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect()
    }

    fn join(ls: &[Vec<u8>]) -> Vec<u8> {
        ls.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect()
    }

    fn broken_line(b: &[u8]) -> Option<usize> {
        verify(b).broken.map(|Finding::Broken { line, .. }| line)
    }

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_348_800, 5), "2026-11-22T12:00:00.005Z");
        assert_eq!(rfc3339(951_782_400, 999), "2000-02-29T00:00:00.999Z");
        for s in [0u64, 951_782_400, 1_795_348_800] {
            assert_eq!(parse_rfc3339(&rfc3339(s, 7)), Some(s));
        }
        assert_eq!(parse_rfc3339("2026-11-22T10:00:00Z"), Some(1_795_341_600));
    }

    #[test]
    fn parsing_honours_offsets_and_refuses_what_is_no_time() {
        let noon = Some(1_795_348_800);
        assert_eq!(parse_rfc3339("2026-11-22T12:00:00.005Z"), noon);
        assert_eq!(parse_rfc3339("2026-11-22T14:00:00+02:00"), noon);
        assert_eq!(parse_rfc3339("2026-11-22T07:30:00.250-04:30"), noon);
        for bad in [
            "2026-13-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "2026-11-22T24:00:01Z",
            "2026-11-22T12:00:00",
            "2026-11-22",
            "1969-12-31T23:59:59Z",
            "",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_whole_log_verifies_with_sorted_keys() {
        let l = log(5);
        let v = verify(&l);
        assert_eq!((v.events.len(), v.broken, v.torn_tail), (5, None, false));
        let first = String::from_utf8(lines(&l)[0].clone()).unwrap_or_default();
        assert!(first.starts_with("{\"attempt\":1,\"prev\":\"0000"), "{first}");
        assert_eq!(tail(&l).last_seq, 5);
        assert_eq!(verify(b"").events.len(), 0);
    }

    #[test]
    fn edits_removals_reorders_and_insertions_name_the_first_bad_line() {
        let ls = lines(&log(6));
        let mut edited = ls.clone();
        edited[2] = String::from_utf8_lossy(&edited[2]).replace("\"x\":3", "\"x\":4").into_bytes();
        assert_eq!(broken_line(&join(&edited)), Some(3));

        let mut removed = ls.clone();
        removed.remove(3);
        assert_eq!(broken_line(&join(&removed)), Some(4));
        assert!(format!("{:?}", verify(&join(&removed)).broken).contains("removed"));

        let mut first_removed = ls.clone();
        first_removed.remove(0);
        assert_eq!(broken_line(&join(&first_removed)), Some(1));

        let mut reordered = ls.clone();
        reordered.swap(2, 3);
        assert_eq!(broken_line(&join(&reordered)), Some(3));

        let mut inserted = ls.clone();
        inserted.insert(2, ls[1].clone());
        assert_eq!(broken_line(&join(&inserted)), Some(3));

        let mut garbage = ls.clone();
        garbage.insert(4, b"not json".to_vec());
        assert_eq!(broken_line(&join(&garbage)), Some(5));
    }

    #[test]
    fn a_long_log_hashed_beside_its_parsing_verifies_and_breaks_alike() {
        let l = log(3_000);
        assert!(l.len() > HASH_ASIDE, "{} bytes", l.len());
        let v = verify(&l);
        assert!(v.broken.is_none());
        assert_eq!((v.events.len(), v.events[2_999].seq), (3_000, 3_000));
        let mut ls = lines(&l);
        ls[1_500] = String::from_utf8_lossy(&ls[1_500]).replace("\"x\":1501", "\"x\":1502").into_bytes();
        let edited = verify(&join(&ls));
        assert_eq!(broken_line(&join(&ls)), Some(1_501));
        assert_eq!(edited.events.len(), 1_501, "the edit shows at the next line");
        ls[1_500] = b"not json".to_vec();
        assert_eq!(broken_line(&join(&ls)), Some(1_501));
        assert_eq!(verify(&join(&ls)).events.len(), 1_500);
    }

    #[test]
    fn a_torn_tail_is_reported_and_a_repaired_one_accepted() {
        let mut l = log(3);
        l.extend_from_slice(b"{\"seq\":4,\"ty");
        let v = verify(&l);
        assert!(v.torn_tail && v.broken.is_none() && v.events.len() == 3);
        let t = tail(&l);
        assert_eq!((t.lines, t.last_seq), (3, 3));
        let torn = t.torn.clone().unwrap_or_default();
        // The repair: end the torn line, then a LogRepaired chained to it.
        l.push(b'\n');
        let repair = encode(
            4,
            "2026-11-22T10:00:01Z",
            "LogRepaired",
            None,
            &sha256_hex(&torn),
            &json!({"torn_line": 4, "torn_bytes": torn.len(), "torn_sha256": sha256_hex(&torn)}),
        );
        l.extend_from_slice(repair.as_bytes());
        l.push(b'\n');
        let v = verify(&l);
        assert_eq!((v.broken, v.repaired, v.torn_tail, v.events.len()), (None, vec![4], false, 4));
    }
}
