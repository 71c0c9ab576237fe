//! Content hashes: lowercase hex sha256, for the event log's chain,
//! manifests, fingerprints and cache keys. Pure.

use sha2::{Digest, Sha256};

/// The sha256 of `bytes`, as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// `bytes` as lowercase hex digits, two a byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

/// [`hex`] read back: `None` unless `text` is pairs of lowercase hex
/// digits.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes.chunks(2).map(|p| Some(digit(p[0])? << 4 | digit(p[1])?)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_reads_back() {
        for bytes in [&b""[..], b"a/.gitattributes", b"\n\xff\x00 x"] {
            assert_eq!(unhex(&hex(bytes)).as_deref(), Some(bytes));
        }
        for bad in ["a", "0g", "AB", "0 "] {
            assert_eq!(unhex(bad), None, "{bad}");
        }
    }

    #[test]
    fn known_digests() {
        let cases: &[(&[u8], &str)] = &[
            (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ];
        for (bytes, want) in cases {
            assert_eq!(sha256_hex(bytes), *want);
        }
        assert_eq!(hex(&[0, 9, 10, 255]), "00090aff");
    }
}
