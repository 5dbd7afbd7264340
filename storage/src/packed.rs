//! How payload bytes are kept on disk: deflated behind a two-byte header, or as they are when
//! deflating gains nothing.
//!
//! Payloads are text for the most part (a submission's JSON, a message's XML, a receipt PDF's
//! uncompressed page) and deflate to a third of their size or less. Fewer bytes in the log are
//! less to write, less for sled to copy when it rewrites a leaf, less disk, and less for the
//! first open after a busy run to replay.
//!
//! The header starts with a NUL byte, which no value written before packing begins with (they
//! are JSON, XML and PDF): those are read back as they are, so no migration is needed.

use std::borrow::Cow;
use std::io::{Read, Write};

use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;

/// First byte of every packed value.
const MARK: u8 = 0;
/// Second byte: the bytes follow as they are.
const RAW: u8 = 0;
/// Second byte: a raw deflate stream follows.
const DEFLATE: u8 = 1;
/// Shorter values are kept as they are: deflating them gains a few bytes at best.
const SMALL: usize = 128;

/// `bytes` as they are stored: deflated (the fast level: most of the gain at a fraction of the
/// time) unless that would not make them smaller.
pub(crate) fn pack(bytes: &[u8]) -> Vec<u8> {
    if bytes.len() >= SMALL {
        let mut header = Vec::with_capacity(bytes.len() / 2 + 2);
        header.extend_from_slice(&[MARK, DEFLATE]);
        let mut encoder = DeflateEncoder::new(header, Compression::fast());
        // Writing into a Vec fails only for want of memory, which aborts anyway.
        if let Ok(packed) = encoder.write_all(bytes).and_then(|()| encoder.finish()) {
            if packed.len() < bytes.len() + 2 {
                return packed;
            }
        }
    }
    keep(bytes)
}

/// `bytes` as they are stored when they are read far more often than written: behind the
/// header, not deflated. Receipts: every poll of a final report answers with one, and inflating
/// it there cost a fifth of the polls' throughput.
pub(crate) fn keep(bytes: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(bytes.len() + 2);
    raw.extend_from_slice(&[MARK, RAW]);
    raw.extend_from_slice(bytes);
    raw
}

/// The bytes [`pack`] (or [`keep`]) was given; a value written before packing is returned as it is. `Err`
/// (what is wrong) for a packed value that cannot be read.
pub(crate) fn unpack(stored: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    match stored {
        [MARK, RAW, bytes @ ..] => Ok(Cow::Borrowed(bytes)),
        [MARK, DEFLATE, deflated @ ..] => {
            let mut bytes = Vec::with_capacity(deflated.len() * 3);
            DeflateDecoder::new(deflated)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("a packed value cannot be inflated: {e}"))?;
            Ok(Cow::Owned(bytes))
        }
        [MARK, other, ..] => Err(format!("a value is packed in an unknown way ({other})")),
        [MARK] => Err("a packed value is cut short".to_string()),
        _ => Ok(Cow::Borrowed(stored)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_deflates_and_comes_back_whole() {
        let xml = "<nachricht><kind>Jürgen Müßig</kind></nachricht>".repeat(50);
        let packed = pack(xml.as_bytes());
        assert_eq!(packed[..2], [MARK, DEFLATE]);
        assert!(packed.len() < xml.len() / 5, "{} bytes", packed.len());
        assert_eq!(unpack(&packed).unwrap(), xml.as_bytes());
    }

    #[test]
    fn short_or_incompressible_values_are_kept_as_they_are() {
        for bytes in [
            b"{}".to_vec(),
            Vec::new(),
            // A value that deflate cannot shrink: every byte once, in a scrambled order.
            (0..=255u8).map(|b| b.wrapping_mul(167)).collect(),
        ] {
            let packed = pack(&bytes);
            assert_eq!(packed[..2], [MARK, RAW]);
            assert_eq!(unpack(&packed).unwrap(), bytes.as_slice());
        }
    }

    #[test]
    fn values_written_before_packing_read_as_they_are() {
        for old in [&b"%PDF-1.7"[..], b"<xml/>", b"{\"a\":1}", b""] {
            assert_eq!(unpack(old).unwrap(), old);
        }
    }

    #[test]
    fn damaged_packed_values_are_errors_not_panics() {
        assert!(unpack(&[MARK]).is_err());
        assert!(unpack(&[MARK, 7, 1, 2]).is_err());
        let mut packed = pack("<a>text text text</a>".repeat(20).as_bytes());
        packed.truncate(packed.len() / 2);
        assert!(unpack(&packed).is_err());
    }
}
