//! Tests whose names say error, failed and panic, some failing, in two test
//! binaries and the doc tests; one clippy warning in code that the library
//! and its unit tests both compile.

/// Parses a whole number.
///
/// ```
/// assert_eq!(counts::parse("42"), Ok(42));
/// ```
///
/// ```
/// assert_eq!(counts::parse(""), Ok(0)); // fails: an empty text is an error
/// ```
pub fn parse(text: &str) -> Result<u64, String> {
    if text.len() == 0 {
        return Err("empty input".to_string());
    }
    text.trim().parse::<u64>().map_err(|e| format!("parse error: {e}"))
}

/// The sum of the numbers, `None` when one of them is not a number.
pub fn total(texts: &[&str]) -> Option<u64> {
    texts.iter().map(|t| parse(t).ok()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_error_is_reported() {
        assert!(parse("x").unwrap_err().contains("error"));
    }

    #[test]
    fn failed_parse_gives_no_total() {
        assert_eq!(total(&["1", "y"]), None);
    }

    #[test]
    #[should_panic(expected = "panic")]
    fn panic_is_expected() {
        panic!("panic on purpose");
    }

    #[test]
    fn error_on_spaces() {
        assert_eq!(parse(" 7 "), Ok(70));
    }

    #[test]
    #[ignore]
    fn ignored_error_case() {}
}
