//! What verification (`iolab-verify`) and fault injection (`iolab-engine`'s `FaultEngine`) report, as they
//! appear in a run's JSON (`verify`, `inject`).

use serde::{Deserialize, Serialize};

/// Why a block failed verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MismatchClass {
    /// The block's header names it, but the checksum over header and payload fails (bit rot, a flipped bit).
    CorruptPayload,
    /// Sectors of one block carry different write generations: a write reached the medium only in part.
    TornWrite,
    /// The block holds an older generation than its last acknowledged write (or no iolab data at all where a
    /// write was acknowledged).
    LostWrite,
    /// The block's header names another offset or target: a write meant for elsewhere landed here.
    MisdirectedWrite,
}

impl MismatchClass {
    /// The name used in reports (`corrupt_payload`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            MismatchClass::CorruptPayload => "corrupt_payload",
            MismatchClass::TornWrite => "torn_write",
            MismatchClass::LostWrite => "lost_write",
            MismatchClass::MisdirectedWrite => "misdirected_write",
        }
    }
}

/// Mismatches by class.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByClass {
    /// [`MismatchClass::CorruptPayload`].
    pub corrupt_payload: u64,
    /// [`MismatchClass::TornWrite`].
    pub torn_write: u64,
    /// [`MismatchClass::LostWrite`].
    pub lost_write: u64,
    /// [`MismatchClass::MisdirectedWrite`].
    pub misdirected_write: u64,
}

impl ByClass {
    /// Adds one of `class`.
    pub fn add(&mut self, class: MismatchClass) {
        match class {
            MismatchClass::CorruptPayload => self.corrupt_payload += 1,
            MismatchClass::TornWrite => self.torn_write += 1,
            MismatchClass::LostWrite => self.lost_write += 1,
            MismatchClass::MisdirectedWrite => self.misdirected_write += 1,
        }
    }
    /// All classes together.
    pub fn total(&self) -> u64 {
        self.corrupt_payload + self.torn_write + self.lost_write + self.misdirected_write
    }
}

/// A block header as read or as expected, for a mismatch report.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeaderView {
    /// Target id (the target's index in the run).
    pub target: u16,
    /// Block offset in bytes.
    pub offset: u64,
    /// Write generation of the block.
    pub generation: u32,
    /// Run id, hex.
    pub run_id: String,
    /// When the write was stamped, ns since the run's epoch (0 when unknown).
    pub timestamp_ns: u64,
    /// crc32c as stored (found) or computed (expected), hex.
    pub checksum: String,
}

/// One failed block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// Target name.
    pub target: String,
    /// Byte offset of the block.
    pub offset: u64,
    /// What went wrong.
    pub class: MismatchClass,
    /// What the block should hold (the last acknowledged write; generation 0 when only self-consistency could
    /// be checked).
    pub expected: HeaderView,
    /// The header found, when the block holds one that parses.
    pub found: Option<HeaderView>,
    /// Generations found in the block's sectors, in order (shows a torn write).
    pub sector_generations: Vec<u32>,
    /// Hex dump of the block's first 128 bytes, 16 bytes per line.
    pub hex: String,
}

/// The `verify` block of a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyResult {
    /// Verification block size in bytes (each carries one header).
    pub block_bytes: u32,
    /// Blocks whose contents were checked (reads during the run and the read-back pass).
    pub blocks_checked: u64,
    /// Blocks read while a write to them was in flight: not checked, since either version may be read.
    pub blocks_skipped_in_flight: u64,
    /// Blocks read that iolab never wrote (no header, no acknowledged write): not checked.
    pub blocks_never_written: u64,
    /// Blocks checked by the read-back pass after the run (not timed).
    pub readback_blocks: u64,
    /// Written blocks the read-back pass could not read (an I/O error or a short read), so not checked.
    #[serde(default)]
    pub readback_unread_blocks: u64,
    /// Failed block reads: a damaged block read three times counts three times (the by-class counts are of
    /// these reads too).
    pub mismatches: u64,
    /// Distinct blocks that failed at least once (exact up to 1 Mi blocks; past that, each further failed
    /// read of a block not yet seen counts).
    #[serde(default)]
    pub mismatched_blocks: u64,
    /// Failed reads by class.
    pub by_class: ByClass,
    /// The first failed blocks (at most [`FIRST_MISMATCHES`]).
    pub first_mismatches: Vec<Mismatch>,
    /// Bytes of tracking state per block (generation map), as measured.
    pub map_bytes_per_block: f64,
    /// The journal file, when one was kept or read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<String>,
    /// The durable-write log beside the journal (`JOURNAL.durable`), when a run kept one (its workload made
    /// writes durable) or a check read one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable: Option<DurableLogResult>,
    /// The run stopped at the first mismatch (`--verify-fail stop`).
    pub stopped: bool,
}

/// The durable-write log (`JOURNAL.durable`, docs/VERIFY.md): in a run, the writes acknowledged durable (a
/// synchronous write, or a write a completed flush covers) that were logged; in `iolab verify --journal`, what
/// the log required beyond the journal's last checkpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DurableLogResult {
    /// The log file.
    pub log: String,
    /// A run: acknowledgments logged and made durable (one per block written). A check: records read.
    pub records: u64,
    /// A run: acknowledgments of durable writes that were not logged (more writes waiting for a flush than a
    /// worker keeps, or a log that could not keep up): after a crash, only the journal's checkpoints vouch
    /// for them.
    #[serde(default)]
    pub not_logged: u64,
    /// A check: blocks the log required to be newer than the journal did.
    #[serde(default)]
    pub blocks_raised: u64,
    /// A check: bytes at the log's end that were not a whole batch with a valid checksum (the batch a crash
    /// cut short), ignored.
    #[serde(default)]
    pub torn_tail_bytes: u64,
    /// A check: failed blocks among those the log raised: writes acknowledged durable after the journal's
    /// last checkpoint that are not there (counted in `by_class`, mostly as `lost_write`).
    #[serde(default)]
    pub mismatched_blocks: u64,
}

/// How many mismatches a result lists in full.
pub const FIRST_MISMATCHES: usize = 16;

/// Injected faults of one kind (`--inject`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectCount {
    /// The kind (`bit-flip-read`, `lost-write`, ...).
    pub kind: String,
    /// As given on the command line.
    pub spec: String,
    /// Ops the fault was injected into.
    pub injected: u64,
    /// With `--verify`: injections whose damage was still on the target (or in the read buffer) to be found, i.e.
    /// not overwritten by a later write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<u64>,
    /// With `--verify`: live injections that verification reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detected: Option<u64>,
}

/// The `inject` block of a result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectResult {
    /// The seed of the injection choices.
    pub seed: u64,
    /// Per `--inject` given.
    pub faults: Vec<InjectCount>,
    /// With `--verify`: failed blocks that no injection damaged (false alarms, or real damage by the storage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unexplained_mismatches: Option<u64>,
}
