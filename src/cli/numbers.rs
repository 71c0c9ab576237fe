//! The numbers of the command line, checked by the rules of the config
//! (docs/config.md, "Numbers"), for clap's `value_parser`.

use crate::config::{self, Count, ValueError, numbers};

fn whole(s: &str, c: Count) -> Result<u64, ValueError> {
    let n: i64 =
        s.trim().parse().map_err(|_| ValueError::OutOfRange(format!("{} takes a whole number, not {s:?}", c.key)))?;
    c.check(n)
}

pub(crate) fn max_attempts(s: &str) -> Result<u32, ValueError> {
    whole(s, Count { key: "--max-attempts", ..numbers::MAX_ATTEMPTS }).map(|n| n as u32)
}

pub(crate) fn max_processes(s: &str) -> Result<u64, ValueError> {
    whole(s, Count { key: "--max-processes", ..numbers::MAX_PROCESSES })
}

/// A count of at least one (`-j`, `--max-tokens`, `--max-file-size`).
pub(crate) fn at_least_one(s: &str) -> Result<usize, ValueError> {
    let c = Count { key: "the value", min: 1, max: u32::MAX as u64, instead_of_zero: "" };
    whole(s, c).map(|n| n as usize)
}

pub(crate) fn lanes(s: &str) -> Result<u32, ValueError> {
    let max = crate::config::lanes::MAX_LANES as u64;
    let c = Count { key: "--lanes", min: 1, max, instead_of_zero: "" };
    whole(s, c).map(|n| n as u32)
}

pub(crate) fn bytes(s: &str) -> Result<u64, ValueError> {
    whole(s, Count { key: "--max-file-size", min: 1, max: i64::MAX as u64, instead_of_zero: "" })
}

pub(crate) fn cost(s: &str) -> Result<f64, ValueError> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| ValueError::OutOfRange(format!("--max-cost takes a number of US dollars, not {s:?}")))?;
    config::check_cost("--max-cost", v)
}

/// A duration of more than zero, kept as written.
pub(crate) fn duration(s: &str) -> Result<String, ValueError> {
    config::check_nonzero_duration("--max-duration", s).map(|_| s.to_string())
}
