//! Cutting text for display without splitting a character. Pure.

use std::borrow::Cow;

/// The largest char boundary of `s` at or before `i`.
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `s` when it has at most `max` bytes, else its first `max` bytes (on a
/// char boundary) followed by `mark`.
pub fn clip<'a>(s: &'a str, max: usize, mark: &str) -> Cow<'a, str> {
    if s.len() <= max { Cow::Borrowed(s) } else { Cow::Owned(format!("{}{mark}", &s[..floor_char_boundary(s, max)])) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_on_char_boundaries() {
        assert_eq!(clip("abc", 3, "..."), "abc");
        assert_eq!(clip("abcd", 3, "..."), "abc...");
        assert_eq!(clip("éé", 3, "~"), "é~");
        assert_eq!(floor_char_boundary("é", 1), 0);
        assert_eq!(floor_char_boundary("ab", 9), 2);
    }
}
