//! Writing many new objects as one pack (through libgit2's pack writer and
//! indexer) instead of one loose file each: a snapshot of an attempt that
//! changed a thousand files writes one file, not a thousand blobs and a
//! thousand trees.
//!
//! The pack holds undeltified objects in zlib "stored" blocks: no
//! compression work here; `git gc` repacks them later like any other pack.

use sha1::{Digest, Sha1};

/// The kinds of object a pack here holds, numbered as in git's pack format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ObjectKind {
    Tree = 2,
    Blob = 3,
}

/// A version 2 pack of `objects`, with its SHA-1 trailer.
pub(super) fn pack<'a>(objects: impl ExactSizeIterator<Item = (ObjectKind, &'a [u8])>) -> Vec<u8> {
    let mut pack = Vec::new();
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    for (kind, data) in objects {
        // Object header: the kind and the size, little-endian base-128.
        let mut size = data.len();
        let mut byte = ((kind as u8) << 4) | (size & 0x0f) as u8;
        size >>= 4;
        while size > 0 {
            pack.push(byte | 0x80);
            byte = (size & 0x7f) as u8;
            size >>= 7;
        }
        pack.push(byte);
        zlib_stored(data, &mut pack);
    }
    let digest = Sha1::digest(&pack);
    pack.extend_from_slice(&digest);
    pack
}

/// `data` as a zlib stream of stored (uncompressed) deflate blocks.
fn zlib_stored(data: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&[0x78, 0x01]);
    let mut chunks = data.chunks(65_535).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        out.push(u8::from(chunks.peek().is_none()));
        let len = chunk.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= 65_521;
        b %= 65_521;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_known_value() {
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
    }
}
