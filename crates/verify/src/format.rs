//! What a verified block holds on the target, and how the contents of a block read back are judged.
//!
//! Every verification block (`block_bytes`, 512 B to 1 MiB, a power of two) that iolab writes starts with a
//! 48-byte header, and every further 512-byte sector of the block starts with a 16-byte sector tag. All
//! integers are little-endian.
//!
//! ```text
//! header (bytes 0..48 of the block)          sector tag (bytes 0..16 of sectors 1, 2, ..)
//!  0  8  magic "iolabVB1"                     0  4  tag magic "iLsT"
//!  8  8  run id                               4  4  write generation
//! 16  8  block offset in the target (bytes)   8  8  block offset in the target (bytes)
//! 24  4  write generation (1, 2, ..)
//! 28  2  target id (index in the run)
//! 30  1  log2(block_bytes)
//! 31  1  layout version (1)
//! 32  8  timestamp, ns since the run's epoch
//! 40  4  crc32c of the block, bytes 0..40 then 44..block_bytes
//! 44  4  reserved (0)
//! ```
//!
//! The checksum covers the header (except itself), the sector tags and the payload. The sector tags exist so
//! that a block whose checksum fails can tell a torn write (sectors carrying different generations: a write
//! reached the medium only in part) from damaged bytes (one generation throughout).
//!
//! [`classify`] is the single place that decides what a block's contents mean against what was expected
//! ([`Expect`]); every rule there is argued in a comment, since a wrong corruption call is the one thing a
//! verifier must never make.

use crate::{HeaderView, MismatchClass};

/// Header magic: "iolabVB1".
pub const MAGIC: u64 = u64::from_le_bytes(*b"iolabVB1");
/// Sector tag magic: "iLsT".
pub const TAG_MAGIC: u32 = u32::from_le_bytes(*b"iLsT");
/// Header length in bytes.
pub const HEADER_BYTES: usize = 48;
/// Sector tag length in bytes.
pub const TAG_BYTES: usize = 16;
/// The sector size the tags are spaced by.
pub const SECTOR_BYTES: usize = 512;
/// Layout version in byte 31.
pub const LAYOUT_VERSION: u8 = 1;
/// Where the checksum is.
const CRC_AT: usize = 40;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The checksum of a block as it should be stored: crc32c over bytes 0..40 and 44..end.
pub fn block_crc(block: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&block[..CRC_AT]), &block[CRC_AT + 4..])
}

/// What a write stamps into one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Run id.
    pub run_id: u64,
    /// Target id.
    pub target: u16,
    /// Block offset in bytes.
    pub offset: u64,
    /// Write generation.
    pub generation: u32,
    /// Timestamp, ns.
    pub timestamp_ns: u64,
}

/// Writes the header and the sector tags into `block` (whose length is the verification block) and then the
/// checksum over everything. The rest of the block (the worker's data pattern) is kept.
pub fn stamp(block: &mut [u8], s: &Stamp) {
    let len = block.len();
    debug_assert!(
        len.is_power_of_two() && len >= SECTOR_BYTES,
        "a verification block is a power of two >= 512"
    );
    block[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    block[8..16].copy_from_slice(&s.run_id.to_le_bytes());
    block[16..24].copy_from_slice(&s.offset.to_le_bytes());
    block[24..28].copy_from_slice(&s.generation.to_le_bytes());
    block[28..30].copy_from_slice(&s.target.to_le_bytes());
    block[30] = len.trailing_zeros() as u8;
    block[31] = LAYOUT_VERSION;
    block[32..40].copy_from_slice(&s.timestamp_ns.to_le_bytes());
    block[44..48].copy_from_slice(&[0; 4]);
    let mut at = SECTOR_BYTES;
    while at < len {
        block[at..at + 4].copy_from_slice(&TAG_MAGIC.to_le_bytes());
        block[at + 4..at + 8].copy_from_slice(&s.generation.to_le_bytes());
        block[at + 8..at + 16].copy_from_slice(&s.offset.to_le_bytes());
        at += SECTOR_BYTES;
    }
    let crc = block_crc(block);
    block[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
}

/// A header as found in a block (fields are only meaningful when `magic` holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The magic and the layout (version, block size) are iolab's and this verifier's.
    pub magic: bool,
    /// Run id.
    pub run_id: u64,
    /// Block offset.
    pub offset: u64,
    /// Generation.
    pub generation: u32,
    /// Target id.
    pub target: u16,
    /// Timestamp.
    pub timestamp_ns: u64,
    /// Stored checksum.
    pub crc: u32,
}

/// Reads the header at the start of `block`. `magic` is false unless the magic, the layout version and the
/// block size it names all match: a header written with another block size cannot be checked with this one.
pub fn parse(block: &[u8]) -> Header {
    Header {
        magic: u64_at(block, 0) == MAGIC
            && block[31] == LAYOUT_VERSION
            && u32::from(block[30]) == block.len().trailing_zeros(),
        run_id: u64_at(block, 8),
        offset: u64_at(block, 16),
        generation: u32_at(block, 24),
        target: u16::from_le_bytes([block[28], block[29]]),
        timestamp_ns: u64_at(block, 32),
        crc: u32_at(block, CRC_AT),
    }
}

/// The generation sector `i` of `block` carries, when its tag is iolab's and names block `offset` (sector 0:
/// the header's).
pub fn sector_generation(block: &[u8], offset: u64, i: usize) -> Option<u32> {
    let at = i * SECTOR_BYTES;
    if i == 0 {
        let h = parse(block);
        return (h.magic && h.offset == offset).then_some(h.generation);
    }
    (u32_at(block, at) == TAG_MAGIC && u64_at(block, at + 8) == offset).then(|| u32_at(block, at + 4))
}

/// Generations found in the block's sectors, in order, 0 where a sector holds no tag for this block.
pub fn sector_generations(block: &[u8], offset: u64) -> Vec<u32> {
    (0..block.len() / SECTOR_BYTES).map(|i| sector_generation(block, offset, i).unwrap_or(0)).collect()
}

/// The smallest and largest generation among the sectors that carry a tag for block `offset`.
fn sector_span(block: &[u8], offset: u64) -> Option<(u32, u32)> {
    let mut span: Option<(u32, u32)> = None;
    for i in 0..block.len() / SECTOR_BYTES {
        if let Some(g) = sector_generation(block, offset, i) {
            span = Some(span.map_or((g, g), |(lo, hi)| (lo.min(g), hi.max(g))));
        }
    }
    span
}

/// Any sector after the first carries a tag naming block `offset`: iolab data of this block is there even if
/// the header is gone.
fn tags_name_block(block: &[u8], offset: u64) -> bool {
    (1..block.len() / SECTOR_BYTES).any(|i| sector_generation(block, offset, i).is_some())
}

/// What a block may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Exactly generation `g`, with a valid checksum (0: never written, so no header of this block). Used for
    /// a block that was quiescent and clean during the read (no write in flight, its last write was issued
    /// alone and succeeded), and for a block of a final journal that was so at the end of the run.
    Exact(u32),
    /// The block's contents come from writes of generation >= floor (None: floor unknown), but which one, or
    /// which mix, is undefined: overlapping writes both completed, or a write failed. Only evidence with a valid
    /// checksum can accuse.
    Racy(Option<u32>),
    /// After a crash: the last durable acknowledged generation was `floor`; newer writes may have landed, in
    /// whole or torn.
    Crashed(u32),
    /// `iolab verify` without a journal: only self-consistency.
    SelfCheck,
}

/// What [`classify`] concluded about one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Holds what it may hold.
    Ok,
    /// Holds no data of this run, and none was expected.
    NeverWritten,
    /// Cannot be judged (undefined contents).
    Skipped,
    /// A mismatch.
    Bad(MismatchClass),
}

/// Judges `block` (the verification block at `offset` of target `id`) against `expect`. `run_id` None accepts
/// any run (self-check); `check_target` false ignores the header's target id (self-check: the target may have
/// had another index in the run that wrote it).
pub fn classify(
    block: &[u8],
    id: u16,
    offset: u64,
    run_id: Option<u64>,
    check_target: bool,
    expect: Expect,
) -> Outcome {
    use MismatchClass::*;
    use Outcome::*;
    // The lowest generation whose data may be in the block: None when nothing of this run is required
    // (never written, floor unknown, self-check).
    let required = match expect {
        Expect::Exact(g) | Expect::Crashed(g) | Expect::Racy(Some(g)) => Some(g).filter(|&g| g > 0),
        Expect::Racy(None) | Expect::SelfCheck => None,
    };
    let h = parse(block);
    if !h.magic {
        return match (expect, required) {
            // Nothing of this run was required: whatever was there before (zeros, another program's data).
            (Expect::SelfCheck, _) | (Expect::Exact(0) | Expect::Crashed(0) | Expect::Racy(Some(0)), _) => {
                NeverWritten
            }
            // Racy: a failed write may have left anything (the requirement: a failed write never accuses).
            (Expect::Racy(_), _) => Skipped,
            // A write was acknowledged (and, after a crash, made durable) and every write carries the magic,
            // which no mix of iolab writes can remove (the magic is the same bytes in all of them). Tags of
            // this block further in: the header itself was damaged; none: the write is lost.
            (_, Some(_)) => Bad(if tags_name_block(block, offset) { CorruptPayload } else { LostWrite }),
            (_, None) => NeverWritten,
        };
    }
    // Another run's block: not evidence of this run's writes.
    if run_id.is_some_and(|r| r != h.run_id) {
        return match (expect, required) {
            // Floor unknown: could be data from before the run that a failed write left.
            (Expect::Racy(None), _) => Skipped,
            // Data from before this run where this run's generation >= 1 was required: the write was lost.
            // Racy(Some(f > 0)): every write since generation f overwrote every byte or failed, and neither
            // brings back another run's block with a valid header.
            (_, Some(_)) => Bad(LostWrite),
            (_, None) => NeverWritten,
        };
    }
    let crc = block_crc(block);
    if crc == h.crc {
        // A valid checksum: the block is exactly what one write stamped (a mix of writes fails the checksum,
        // except with probability 2^-32, which would only hide an error, never raise one).
        if h.offset != offset || (check_target && h.target != id) {
            // This run's write for another block. No legitimate sequence writes a block's bytes with another
            // block's header: each write stamps its own blocks (and a racy mix of writes of *this* block has
            // this block's offset and target in every variant).
            return Bad(MisdirectedWrite);
        }
        return match required {
            // Older than the oldest data that may be there: an acknowledged write did not reach the medium.
            // Exact(g): the last write, g, was issued alone and acknowledged, and completed before the read
            // was issued. Racy(f): all writes since f overwrote or failed; a failure never brings back older
            // content than it found. Crashed(f): f was durable before the journal said so.
            Some(f) if h.generation < f => Bad(LostWrite),
            // Newer than required: only possible after a crash (a write landed but was not acknowledged or
            // not yet journaled) and then legitimate; in a run it cannot happen and is not an error of the
            // device either.
            _ => Ok,
        };
    }
    // The magic holds but the checksum fails: the block's bytes are not one write's.
    match expect {
        // Racy: overlapping writes mix at any granularity (a RAM disk at 8 bytes), a failed write in part.
        Expect::Racy(_) => Skipped,
        // A never-written block with an iolab header that fails its checksum: data from an earlier run (which
        // may have been torn by a crash then). Not this run's business.
        Expect::Exact(0) => NeverWritten,
        Expect::Exact(_) | Expect::SelfCheck => match sector_span(block, offset) {
            Some((lo, hi)) if lo != hi => Bad(TornWrite),
            _ => Bad(CorruptPayload),
        },
        Expect::Crashed(f) => match sector_span(block, offset) {
            // A sector older than the durable generation: part of an acknowledged, durable write is gone.
            Some((lo, hi)) if lo < f => Bad(if lo != hi { TornWrite } else { LostWrite }),
            // Every sector is at least as new as what was durable: a write in flight at the crash landed in
            // part (at sector or, through the page cache, finer granularity). Undefined, not an error.
            _ => Skipped,
        },
    }
}

/// A header for a mismatch report.
pub fn view(h: &Header) -> HeaderView {
    HeaderView {
        target: h.target,
        offset: h.offset,
        generation: h.generation,
        run_id: format!("{:016x}", h.run_id),
        timestamp_ns: h.timestamp_ns,
        checksum: format!("{:08x}", h.crc),
    }
}

/// Hex dump of the first 128 bytes of `block`, 16 bytes per line, each line prefixed with its offset.
pub fn hex_dump(block: &[u8]) -> String {
    let mut s = String::with_capacity(8 * 60);
    for (i, line) in block[..block.len().min(128)].chunks(16).enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(&format!("{:04x}:", i * 16));
        for b in line {
            s.push_str(&format!(" {b:02x}"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamped(len: usize, offset: u64, generation: u32) -> Vec<u8> {
        let mut b: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        stamp(&mut b, &Stamp { run_id: 9, target: 1, offset, generation, timestamp_ns: 5 });
        b
    }

    #[test]
    fn stamp_then_parse_round_trips_and_checksum_holds() {
        let b = stamped(4096, 8192, 3);
        let h = parse(&b);
        assert!(h.magic);
        assert_eq!((h.run_id, h.offset, h.generation, h.target, h.timestamp_ns), (9, 8192, 3, 1, 5));
        assert_eq!(block_crc(&b), h.crc);
        assert_eq!(sector_generations(&b, 8192), vec![3; 8]);
        assert_eq!(classify(&b, 1, 8192, Some(9), true, Expect::Exact(3)), Outcome::Ok);
    }

    #[test]
    fn header_of_another_block_size_is_not_a_header() {
        let b = stamped(4096, 0, 1);
        assert!(!parse(&b[..512]).magic);
    }

    #[test]
    fn classify_each_class() {
        use MismatchClass::*;
        let good = stamped(4096, 4096, 5);
        let c = |b: &[u8], e| classify(b, 1, 4096, Some(9), true, e);
        // Flipped payload bit.
        let mut b = good.clone();
        b[2000] ^= 1;
        assert_eq!(c(&b, Expect::Exact(5)), Outcome::Bad(CorruptPayload));
        // Torn: the second half from generation 4.
        let old = stamped(4096, 4096, 4);
        let mut b = good.clone();
        b[2048..].copy_from_slice(&old[2048..]);
        assert_eq!(c(&b, Expect::Exact(5)), Outcome::Bad(TornWrite));
        // Lost: generation 4 where 5 was acknowledged; zeros where 5 was acknowledged.
        assert_eq!(c(&old, Expect::Exact(5)), Outcome::Bad(LostWrite));
        assert_eq!(c(&[0u8; 4096], Expect::Exact(5)), Outcome::Bad(LostWrite));
        // Misdirected: block 8192's write here, or target 0's.
        assert_eq!(c(&stamped(4096, 8192, 5), Expect::Exact(5)), Outcome::Bad(MisdirectedWrite));
        let mut t0 = good.clone();
        stamp(&mut t0, &Stamp { run_id: 9, target: 0, offset: 4096, generation: 5, timestamp_ns: 5 });
        assert_eq!(c(&t0, Expect::Exact(5)), Outcome::Bad(MisdirectedWrite));
        // Never written.
        assert_eq!(c(&[0u8; 4096], Expect::Exact(0)), Outcome::NeverWritten);
    }

    #[test]
    fn racy_and_crashed_blocks_accept_mixes_but_not_older_data() {
        let new = stamped(4096, 4096, 7);
        let old = stamped(4096, 4096, 6);
        let mut mix = new.clone();
        mix[1024..].copy_from_slice(&old[1024..]);
        let c = |b: &[u8], e| classify(b, 1, 4096, Some(9), true, e);
        assert_eq!(c(&mix, Expect::Racy(Some(6))), Outcome::Skipped);
        assert_eq!(c(&mix, Expect::Crashed(6)), Outcome::Skipped);
        assert_eq!(c(&mix, Expect::Crashed(7)), Outcome::Bad(MismatchClass::TornWrite));
        assert_eq!(c(&old, Expect::Racy(Some(6))), Outcome::Ok);
        assert_eq!(c(&old, Expect::Racy(Some(7))), Outcome::Bad(MismatchClass::LostWrite));
        assert_eq!(c(&new, Expect::Crashed(6)), Outcome::Ok);
        assert_eq!(c(&[0; 4096], Expect::Racy(Some(3))), Outcome::Skipped);
        assert_eq!(c(&[0; 4096], Expect::Crashed(0)), Outcome::NeverWritten);
    }

    #[test]
    fn hex_dump_has_eight_lines_of_sixteen() {
        let d = hex_dump(&stamped(512, 0, 1));
        assert_eq!(d.lines().count(), 8);
        assert!(d.starts_with("0000: 69 6f 6c 61 62 56 42 31"), "{d}");
    }
}
