//! What a rejection must hold: a required change that is one sentence
//! (not empty, on one line). Pure.

/// Why a required change is refused, in words that complete "the
/// required change ...".
pub(crate) fn required_change(text: &str) -> Result<(), &'static str> {
    let t = text.trim();
    if t.is_empty() {
        Err("is empty: a rejection names the one change the next round must make")
    } else if t.contains(['\n', '\r']) {
        Err("spans several lines: give one imperative sentence, and put the rest in --critique")
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sentence_on_one_line() {
        // (required change, accepted)
        let cases = [
            ("Retry the 429 instead of swallowing it.", true),
            ("  Retry the 429  ", true),
            ("", false),
            ("   \t", false),
            ("Retry the 429.\nAlso log it.", false),
            ("Retry the 429.\r\n", true),
            ("Retry\rit", false),
        ];
        for (text, ok) in cases {
            assert_eq!(required_change(text).is_ok(), ok, "{text:?}");
        }
    }
}
