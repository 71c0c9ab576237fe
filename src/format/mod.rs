//! Output formats, each writing to any `impl Write`.
//!
//! - [`scope`]: `text`, `json`, `github`, `sarif` for `retry-run scope`.
//! - [`diff`]: `text`, `markdown`, `json` for `retry-run diff`.
//! - [`enrich`]: `text`, `json` for `retry-run enrich`.

pub mod diff;
pub mod enrich;
pub mod scope;

/// The first 12 hex digits of a SHA, for people; JSON keeps the full one.
pub(crate) fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
