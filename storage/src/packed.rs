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
use std::cell::RefCell;

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

thread_local! {
    /// One deflater of each kind and one inflater per thread, reset for each value: each holds
    /// some hundred KiB of tables, which a fresh one per value allocated and zeroed every time.
    static DEFLATER: RefCell<Compress> = RefCell::new(Compress::new(Compression::new(2), false));
    static QUICK_DEFLATER: RefCell<Compress> = RefCell::new(Compress::new(Compression::new(1), false));
    static INFLATER: RefCell<Decompress> = RefCell::new(Decompress::new(false));
}

/// First byte of every packed value.
const MARK: u8 = 0;
/// Second byte: the bytes follow as they are.
const RAW: u8 = 0;
/// Second byte: a raw deflate stream follows.
const DEFLATE: u8 = 1;
/// Shorter values are kept as they are: deflating them gains a few bytes at best.
const SMALL: usize = 128;

/// How values are deflated. Both forms are standard raw deflate behind the same header, so a
/// reader never needs to know which one wrote a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Packing {
    /// The fast level with codes fitted to each value ([`pack`]): the smaller form, where disk
    /// use counts.
    #[default]
    Small,
    /// The quickest level, with the fixed Huffman codes ([`pack_for_reading`]): about half the
    /// time of [`Packing::Small`] for a tenth or so more bytes, for values written on a report's
    /// synchronous way.
    Quick,
}

impl Packing {
    /// `bytes` packed this way.
    pub(crate) fn pack(self, bytes: &[u8]) -> Vec<u8> {
        match self {
            Packing::Small => pack(bytes),
            Packing::Quick => pack_for_reading(bytes),
        }
    }
}

/// `bytes` as they are stored: deflated (the fast level: most of the gain at a fraction of the
/// time) unless that would not make them smaller.
pub(crate) fn pack(bytes: &[u8]) -> Vec<u8> {
    pack_with(&DEFLATER, bytes)
}

/// [`pack`] for bytes read far more often than written (receipts: every poll of a final report
/// answers with one): deflated at the quickest level, whose stream uses the fixed Huffman codes,
/// so that reading it builds no code tables.
pub(crate) fn pack_for_reading(bytes: &[u8]) -> Vec<u8> {
    pack_with(&QUICK_DEFLATER, bytes)
}

fn pack_with(deflater: &'static std::thread::LocalKey<RefCell<Compress>>, bytes: &[u8]) -> Vec<u8> {
    if bytes.len() >= SMALL {
        let mut packed = Vec::with_capacity(bytes.len() / 2 + 16);
        packed.extend_from_slice(&[MARK, DEFLATE]);
        if deflate_into(deflater, bytes, &mut packed, bytes.len() + 2) {
            return packed;
        }
    }
    keep(bytes)
}

/// Appends `bytes` deflated to `out`; `false` once `out` reaches `give_up_at` bytes (no gain)
/// or the deflater fails.
fn deflate_into(
    deflater: &'static std::thread::LocalKey<RefCell<Compress>>,
    bytes: &[u8],
    out: &mut Vec<u8>,
    give_up_at: usize,
) -> bool {
    deflater.with(|deflater| {
        let mut deflater = deflater.borrow_mut();
        deflater.reset();
        loop {
            if out.len() >= give_up_at {
                return false;
            }
            out.reserve(256.max(bytes.len() / 4));
            let (read, written) = (deflater.total_in(), deflater.total_out());
            let rest = &bytes[usize::try_from(read).unwrap_or(bytes.len())..];
            match deflater.compress_vec(rest, out, FlushCompress::Finish) {
                Ok(Status::StreamEnd) => return out.len() < give_up_at,
                Ok(_) if deflater.total_in() > read || deflater.total_out() > written => {}
                _ => return false,
            }
        }
    })
}

/// `bytes` behind the header, not deflated: short values, values deflating would not shrink,
/// and the receipts of versions that kept them as they are.
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
        [MARK, DEFLATE, deflated @ ..] => inflate(deflated).map(Cow::Owned),
        [MARK, other, ..] => Err(format!("a value is packed in an unknown way ({other})")),
        [MARK] => Err("a packed value is cut short".to_string()),
        _ => Ok(Cow::Borrowed(stored)),
    }
}

/// The bytes a raw deflate stream holds; `Err` if it is damaged or cut short.
fn inflate(deflated: &[u8]) -> Result<Vec<u8>, String> {
    INFLATER.with(|inflater| {
        let mut inflater = inflater.borrow_mut();
        inflater.reset(false);
        let mut bytes = Vec::with_capacity(deflated.len() * 3);
        loop {
            if bytes.len() == bytes.capacity() {
                bytes.reserve(bytes.len().max(256));
            }
            let (read, written) = (inflater.total_in(), inflater.total_out());
            let rest = &deflated[usize::try_from(read).unwrap_or(deflated.len())..];
            // Not `Finish`: miniz_oxide then wants the whole output to fit the first call.
            match inflater.decompress_vec(rest, &mut bytes, FlushDecompress::None) {
                Ok(Status::StreamEnd) => return Ok(bytes),
                Ok(_) if inflater.total_in() > read || inflater.total_out() > written => {}
                // Room to write and nothing read or written: the stream ends early.
                Ok(_) => return Err("a packed value is cut short".to_string()),
                Err(e) => return Err(format!("a packed value cannot be inflated: {e}")),
            }
        }
    })
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
    fn one_thread_packs_value_after_value_as_standard_raw_deflate() {
        use std::io::Read as _;
        // Sizes around the buffer steps, and one far larger than any first reservation.
        let values: Vec<Vec<u8>> = [128, 300, 4_096, 70_000, 129, 250_000]
            .iter()
            .map(|&n| {
                (0..n)
                    .map(|i| b"<kind>Erika</kind>"[i % 18] ^ (i / 997) as u8)
                    .collect()
            })
            .collect();
        for value in &values {
            let packed = pack(value);
            assert_eq!(packed[..2], [MARK, DEFLATE], "{} bytes", value.len());
            assert_eq!(unpack(&packed).unwrap(), value.as_slice());
            // Any raw deflate reader reads it, and what another writer deflated reads here.
            let mut read = Vec::new();
            flate2::read::DeflateDecoder::new(&packed[2..])
                .read_to_end(&mut read)
                .unwrap();
            assert_eq!(&read, value);
            let mut other =
                flate2::write::DeflateEncoder::new(vec![MARK, DEFLATE], Compression::best());
            std::io::Write::write_all(&mut other, value).unwrap();
            assert_eq!(unpack(&other.finish().unwrap()).unwrap(), value.as_slice());
            // Packed for reading: the same format, its first block in the fixed Huffman codes
            // (block type 01 in bits 1 and 2 of the first byte).
            let quick = pack_for_reading(value);
            assert_eq!(quick[..2], [MARK, DEFLATE], "{} bytes", value.len());
            assert_eq!((quick[2] >> 1) & 0b11, 0b01, "{} bytes", value.len());
            assert_eq!(unpack(&quick).unwrap(), value.as_slice());
        }
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
