//! How payload bytes are kept on disk: behind a header whose first two bytes say how, deflated
//! ([`Packing::Small`]) or compressed with LZ4 ([`Packing::Quick`], the length of the value
//! following in four more bytes), or as they are when compressing gains nothing.
//!
//! Payloads are text for the most part (a submission's JSON, a message's XML or FHIR JSON, a
//! receipt PDF's uncompressed page) and deflate to a third of their size or less, LZ4 to two
//! fifths. Fewer bytes in the log are
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
/// Second byte: the value's length (4 bytes, little-endian), then one LZ4 block.
const LZ4: u8 = 2;
/// Bytes before an LZ4 block: the mark, [`LZ4`] and the length.
const LZ4_HEADER: usize = 6;
/// No LZ4 block expands to more than this many times its size (a match of 255 bytes and more
/// takes one byte per 255), so a length beyond that is damage, never a value to make room for.
const MOST_EXPANSION: usize = 256;
/// Shorter values are kept as they are: deflating them gains a few bytes at best.
const SMALL: usize = 128;

/// How values are packed. The header says which form a value has, so a reader never needs to
/// know which one wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Packing {
    /// Deflated at the fast level with codes fitted to each value ([`pack`]): the smaller form,
    /// where disk use counts.
    #[default]
    Small,
    /// Compressed with LZ4 ([`pack_quick`]): a fifth to a seventh of [`Packing::Small`]'s time,
    /// for about a third more bytes, for values written on a sender's synchronous way and kept
    /// a short time (the reporting system's journal, the health modules' payloads).
    Quick,
}

impl Packing {
    /// `bytes` packed this way.
    pub(crate) fn pack(self, bytes: &[u8]) -> Vec<u8> {
        match self {
            Packing::Small => pack(bytes),
            Packing::Quick => pack_quick(bytes),
        }
    }

    /// A receipt packed this way: [`Packing::Small`] deflates it with the fixed codes
    /// ([`pack_for_reading`]), since every poll of a final report reads it.
    pub(crate) fn pack_receipt(self, bytes: &[u8]) -> Vec<u8> {
        match self {
            Packing::Small => pack_for_reading(bytes),
            Packing::Quick => pack_quick(bytes),
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

/// `bytes` as they are stored, compressed with LZ4 (one block behind the header and the length)
/// unless that would not make them smaller. LZ4 zeroes an 8 KiB table per value (16 KiB beyond
/// 64 KiB), where deflate clears a 128 KiB one, however short the value.
pub(crate) fn pack_quick(bytes: &[u8]) -> Vec<u8> {
    let length = match u32::try_from(bytes.len()) {
        Ok(length) if bytes.len() >= SMALL => length,
        _ => return keep(bytes),
    };
    let most = LZ4_HEADER + lz4_flex::block::get_maximum_output_size(bytes.len());
    let mut packed = vec![0; most];
    packed[..2].copy_from_slice(&[MARK, LZ4]);
    packed[2..LZ4_HEADER].copy_from_slice(&length.to_le_bytes());
    match lz4_flex::block::compress_into(bytes, &mut packed[LZ4_HEADER..]) {
        // Smaller than the value kept as it is, behind its two bytes.
        Ok(written) if LZ4_HEADER + written < bytes.len() + 2 => {
            packed.truncate(LZ4_HEADER + written);
            packed
        }
        _ => keep(bytes),
    }
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

/// The bytes [`pack`], [`pack_quick`], [`pack_for_reading`] or [`keep`] was given; a value
/// written before packing is returned as it is. `Err` (what is wrong) for a packed value that
/// cannot be read.
pub(crate) fn unpack(stored: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    match stored {
        [MARK, RAW, bytes @ ..] => Ok(Cow::Borrowed(bytes)),
        [MARK, DEFLATE, deflated @ ..] => inflate(deflated).map(Cow::Owned),
        [MARK, LZ4, a, b, c, d, block @ ..] => {
            decompress(block, u32::from_le_bytes([*a, *b, *c, *d]) as usize).map(Cow::Owned)
        }
        [MARK, LZ4, ..] => Err("a packed value is cut short".to_string()),
        [MARK, other, ..] => Err(format!("a value is packed in an unknown way ({other})")),
        [MARK] => Err("a packed value is cut short".to_string()),
        _ => Ok(Cow::Borrowed(stored)),
    }
}

/// The `length` bytes an LZ4 block holds; `Err` if it is damaged, cut short, or claims more than
/// a block of its size can hold.
fn decompress(block: &[u8], length: usize) -> Result<Vec<u8>, String> {
    if length > block.len().saturating_mul(MOST_EXPANSION) {
        return Err(format!(
            "a packed value claims {length} bytes from {} bytes",
            block.len()
        ));
    }
    let mut bytes = vec![0; length];
    match lz4_flex::block::decompress_into(block, &mut bytes) {
        Ok(written) if written == length => Ok(bytes),
        Ok(written) => Err(format!(
            "a packed value holds {written} bytes, not {length}"
        )),
        Err(e) => Err(format!("a packed value cannot be decompressed: {e}")),
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
    fn values_packed_quick_come_back_as_standard_lz4_blocks() {
        // Sizes around the threshold, and ones beyond 64 KiB (another hash table in the encoder).
        for n in [128, 129, 300, 4_096, 70_000, 250_000] {
            let value: Vec<u8> = (0..n)
                .map(|i| b"<kind>Erika</kind>"[i % 18] ^ (i / 997) as u8)
                .collect();
            let packed = pack_quick(&value);
            assert_eq!(packed[..2], [MARK, LZ4], "{n} bytes");
            assert_eq!(packed[2..6], (n as u32).to_le_bytes(), "{n} bytes");
            assert!(packed.len() < n / 2, "{n} bytes packed to {}", packed.len());
            assert_eq!(unpack(&packed).unwrap(), value.as_slice(), "{n} bytes");
            // Any LZ4 block reader reads it.
            let read = lz4_flex::block::decompress(&packed[6..], n).unwrap();
            assert_eq!(read, value, "{n} bytes");
        }
    }

    #[test]
    fn the_most_compressible_value_stays_within_the_expansion_bound() {
        // A run of one byte is LZ4's best case: some 255 bytes out per byte in.
        let zeros = vec![0u8; 1 << 20];
        let packed = pack_quick(&zeros);
        assert!(
            packed.len() - 6 < zeros.len() / 250,
            "{} bytes",
            packed.len()
        );
        assert_eq!(unpack(&packed).unwrap(), zeros.as_slice());
    }

    #[test]
    fn short_or_incompressible_values_are_kept_as_they_are() {
        for bytes in [
            b"{}".to_vec(),
            Vec::new(),
            // A value that deflate cannot shrink: every byte once, in a scrambled order.
            (0..=255u8).map(|b| b.wrapping_mul(167)).collect(),
        ] {
            for packed in [pack(&bytes), pack_quick(&bytes)] {
                assert_eq!(packed[..2], [MARK, RAW]);
                assert_eq!(unpack(&packed).unwrap(), bytes.as_slice());
            }
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
        let value = "<a>text text text</a>".repeat(20);
        let mut packed = pack(value.as_bytes());
        packed.truncate(packed.len() / 2);
        assert!(unpack(&packed).is_err());
        assert!(unpack(&[MARK, LZ4, 1, 2]).is_err());
        let quick = pack_quick(value.as_bytes());
        assert!(unpack(&quick[..quick.len() / 2]).is_err());
        // A length the block cannot hold: refused before any room is made for it.
        let mut claims = quick.clone();
        claims[2..6].copy_from_slice(&u32::MAX.to_le_bytes());
        let error = unpack(&claims).unwrap_err();
        assert!(error.contains("claims 4294967295 bytes"), "{error}");
        // A length the block does not fill.
        let mut longer = quick.clone();
        longer[2..6].copy_from_slice(&(value.len() as u32 + 1).to_le_bytes());
        assert!(unpack(&longer).is_err());
    }
}
