//! Output formats, each writing to any `impl Write`.
//!
//! - [`scope_output`]: `text`, `json`, `github`, `sarif` for `retry-run scope`.
//! - [`diff_output`]: `text`, `markdown`, `json` for `retry-run diff`.
//! - [`enrich_output`]: `text`, `json` for `retry-run enrich`.

pub(crate) mod diff_output;
pub(crate) mod enrich_output;
pub(crate) mod scope_output;

/// The first 12 hex digits of a SHA, for people; JSON keeps the full one.
pub(crate) fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
