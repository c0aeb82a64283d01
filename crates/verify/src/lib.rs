//! iolab-verify: data integrity verification (`--verify`, `--journal`, `iolab verify`).
//!
//! With `--verify`, every verification block a run writes (`block_bytes`, 4 KiB by default, chosen by
//! [`Verifier::choose_block`] so that every op covers whole blocks) carries a header (magic, run id, target id,
//! block offset, write generation, timestamp, crc32c over header and payload) and a small tag at the start of
//! every 512-byte sector; the layout is in [`format`](mod@format). Reads check what they return against what the block may
//! hold, and the engine's read-back pass checks every written block after the run. A mismatch is classified
//! ([`MismatchClass`]: corrupt payload, torn write, lost write, misdirected write) and reported with the
//! expected and found headers and a hex dump.
//!
//! **No false alarm** is the first requirement. Workers may share a target and a region and keep hundreds of
//! writes in flight, so what a block "should" hold is defined with care ([`map`]): the [`Verifier`] keeps one
//! `AtomicU64` per block (**8 bytes per block**, [`VerifyResult::map_bytes_per_block`]), updated without locks at
//! the push and the completion of each write. A read is only judged for a block when no write to that block was
//! in flight from the read's push to its completion; a block whose last writes overlapped, or whose write
//! failed, is *racy*: only evidence with a valid checksum (an older generation than any that may remain, or
//! another block's header) can accuse it. Every rule is argued where it is decided, in [`format::classify`].
//!
//! With `--journal FILE`, the acknowledged generations are made durable in a crash-safe order ([`journal`]),
//! and [`Verifier::from_journal`] checks a target against them after a crash. Between the journal's
//! checkpoints, the writes the workload was told are durable (a synchronous write, or a write a completed
//! flush covers) are logged as they are acknowledged ([`durable`], `FILE.durable`), and the check requires
//! them too. [`Verifier::self_check`] checks only that each block is self-consistent. docs/VERIFY.md is the
//! user's description.
//!
//! The engine side (`iolab-engine`'s `VerifyEngine`) calls, per block: [`Verifier::begin_write`],
//! [`Verifier::stamp`] and [`Verifier::end_write`] for writes; [`Verifier::begin_read`] and
//! [`Verifier::end_read`] for reads; it counts in a [`Tally`] of its own (no shared counter per I/O) and adds it
//! with [`Verifier::add_tally`].

#![deny(missing_docs)]

pub mod durable;
pub mod format;
pub mod journal;
pub mod map;
pub mod periodic;

pub use format::Outcome;
pub use iolab_doc::verify::{
    ByClass, DurableLogResult, HeaderView, InjectCount, InjectResult, Mismatch, MismatchClass, VerifyResult,
    FIRST_MISMATCHES,
};

use format::Expect;
use map::State;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Default verification block.
pub const DEFAULT_BLOCK: u32 = 4096;
/// At most this many failed blocks are kept for [`Verifier::mismatch_blocks`] (1 Mi entries, 16 MiB).
pub const MISMATCH_BLOCKS_MAX: usize = 1 << 20;

/// What to do at a mismatch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailMode {
    /// Stop the run at the first mismatch.
    #[default]
    Stop,
    /// Count and go on.
    Continue,
}

/// One target under verification; its id is its index in [`VerifyConfig::targets`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetInfo {
    /// The target's name as in reports.
    pub name: String,
    /// Its size in bytes.
    pub size_bytes: u64,
}

/// How a run verifies.
#[derive(Debug)]
pub struct VerifyConfig {
    /// Verification block size (a power of two, 512 to 1 MiB).
    pub block_bytes: u32,
    /// The run's id (in every header).
    pub run_id: u64,
    /// The run's targets, by id.
    pub targets: Vec<TargetInfo>,
    /// Stop or continue at a mismatch.
    pub fail: FailMode,
    /// Keep acknowledged generations here (`--journal`): its directory held from the write gate's claim.
    pub journal: Option<journal::JournalPlace>,
}

/// Verification failures that are not mismatches (a journal that cannot be written or read).
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The journal file could not be used.
    #[error("journal '{path}': {reason}")]
    Journal {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// Bad settings.
    #[error("{0}")]
    Config(String),
}

/// A block's state as seen at the push of an op: what [`Verifier::end_write`] and [`Verifier::end_read`] need
/// back at its completion. Opaque; 8 bytes, so an engine keeps one per block of each slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ticket(u64);

/// Counts an engine keeps for itself and adds to the verifier now and then ([`Verifier::add_tally`]), so that
/// no counter is shared per I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Blocks judged (ok or mismatch).
    pub blocks_checked: u64,
    /// Blocks not judged: a write to them was in flight, or their contents are undefined.
    pub blocks_skipped_in_flight: u64,
    /// Blocks that hold nothing of this run, as expected.
    pub blocks_never_written: u64,
    /// Blocks judged by the read-back pass (also in `blocks_checked`).
    pub readback_blocks: u64,
    /// Written blocks the read-back pass could not read (an I/O error or a short read): not judged.
    pub readback_unread: u64,
}

impl Tally {
    /// Counts one outcome.
    pub fn count(&mut self, o: Outcome, readback: bool) {
        match o {
            Outcome::Ok | Outcome::Bad(_) => {
                self.blocks_checked += 1;
                self.readback_blocks += u64::from(readback);
            }
            Outcome::NeverWritten => self.blocks_never_written += 1,
            Outcome::Skipped => self.blocks_skipped_in_flight += 1,
        }
    }
}

/// Where expected contents come from.
/// Blocks per bit of [`Mode::Run`]'s `touched`: one 4 KiB page of the generation map.
const CHUNK_BLOCKS: usize = 512;

enum Mode {
    /// A run that writes: the generation map, one state word per block ([`map`]), and per target a bit per
    /// [`CHUNK_BLOCKS`] blocks set when one of them is first written, so finding the written blocks of a
    /// large target does not read its whole map.
    Run { maps: Vec<Box<[AtomicU64]>>, touched: Vec<Box<[AtomicU64]>> },
    /// `iolab verify --journal`.
    Journal(journal::Journal),
    /// `iolab verify` without a journal.
    SelfCheck,
}

/// What `iolab verify --journal` took from the durable-write log beside the journal.
struct DurableCheck {
    /// The log file.
    log: String,
    /// Records read.
    records: u64,
    /// Per target: bitmap of the blocks whose floor the log raised above the journal's.
    raised: Vec<Vec<u8>>,
    /// Blocks raised.
    blocks_raised: u64,
    /// Bytes of a torn last batch, ignored.
    torn_tail_bytes: u64,
    /// Failed blocks among the raised ones.
    mismatched: AtomicU64,
}

impl DurableCheck {
    fn raised(&self, t: usize, i: u64) -> bool {
        self.raised.get(t).and_then(|b| b.get((i / 8) as usize)).is_some_and(|b| b & (1 << (i % 8)) != 0)
    }
}

/// The journal being kept.
struct JournalKeeper {
    /// Where: the directory held from the start of the run ([`journal::JournalPlace`]).
    place: journal::JournalPlace,
    /// Held for a whole checkpoint: one at a time. Never taken per I/O.
    state: Mutex<KeeperState>,
}

struct KeeperState {
    sequence: u64,
    files: Vec<Option<Arc<File>>>,
}

#[derive(Default)]
struct Counts {
    checked: AtomicU64,
    skipped: AtomicU64,
    never: AtomicU64,
    readback: AtomicU64,
    unread: AtomicU64,
    mismatches: AtomicU64,
    by_class: [AtomicU64; 4],
}

#[derive(Default)]
struct Log {
    first: Vec<Mismatch>,
    /// Each failed block once, in the order first found (at most [`MISMATCH_BLOCKS_MAX`]).
    blocks: Vec<(u16, u64)>,
    /// The same blocks, to count each once however often it is read.
    distinct: std::collections::HashSet<(u16, u64)>,
    /// Distinct failed blocks beyond what `distinct` holds (each failed read counts there).
    overflow: u64,
}

/// The run's verification state, shared by all workers.
pub struct Verifier {
    block_bytes: u32,
    shift: u32,
    run_id: u64,
    targets: Vec<TargetInfo>,
    fail: FailMode,
    mode: Mode,
    keeper: Option<JournalKeeper>,
    journal_name: Option<String>,
    /// The durable-write log a run keeps beside its journal ([`Verifier::start_durable_log`]).
    durable: Option<Arc<durable::DurableLog>>,
    /// What a check took from that log.
    durable_check: Option<DurableCheck>,
    counts: Counts,
    stop: AtomicBool,
    log: Mutex<Log>,
}

fn class_index(c: MismatchClass) -> usize {
    match c {
        MismatchClass::CorruptPayload => 0,
        MismatchClass::TornWrite => 1,
        MismatchClass::LostWrite => 2,
        MismatchClass::MisdirectedWrite => 3,
    }
}

fn check_block_bytes(b: u32) -> Result<(), VerifyError> {
    if b.is_power_of_two() && (512..=1 << 20).contains(&b) {
        Ok(())
    } else {
        Err(VerifyError::Config(format!(
            "verification block {b} bytes: expected a power of two from 512 to 1M"
        )))
    }
}

impl Verifier {
    fn with_mode(
        block_bytes: u32,
        run_id: u64,
        targets: Vec<TargetInfo>,
        fail: FailMode,
        mode: Mode,
    ) -> Verifier {
        Verifier {
            block_bytes,
            shift: block_bytes.trailing_zeros(),
            run_id,
            targets,
            fail,
            mode,
            keeper: None,
            journal_name: None,
            durable: None,
            durable_check: None,
            counts: Counts::default(),
            stop: AtomicBool::new(false),
            log: Mutex::new(Log::default()),
        }
    }

    /// A verifier for a run that writes (and reads) with headers. Allocates the generation map (8 bytes per
    /// block of every target) and, with a journal, writes an empty one (every block: nothing required) and
    /// makes it durable before returning, so no write of the run can precede it.
    pub fn new(cfg: VerifyConfig) -> Result<Verifier, VerifyError> {
        check_block_bytes(cfg.block_bytes)?;
        let mut maps = Vec::with_capacity(cfg.targets.len());
        for t in &cfg.targets {
            let blocks = t.size_bytes / cfg.block_bytes as u64;
            let n = usize::try_from(blocks)
                .map_err(|_| VerifyError::Config(format!("target '{}' is too large", t.name)))?;
            // Zeroed by the allocator (fresh pages from the kernel for a large map): only the blocks the run
            // touches take memory, so a multi-TiB target costs what is written, not 8 bytes a block up front.
            let map = bytemuck::allocation::try_zeroed_slice_box::<AtomicU64>(n).map_err(|_| {
                VerifyError::Config(format!(
                    "--verify needs {} bytes of memory to track target '{}' ({n} blocks of {} bytes, 8 bytes each); \
                     use a larger verification block or a smaller target",
                    n * 8,
                    t.name,
                    cfg.block_bytes
                ))
            })?;
            maps.push(map);
        }
        let touched = maps
            .iter()
            .map(|m| bytemuck::allocation::zeroed_slice_box::<AtomicU64>(m.len().div_ceil(CHUNK_BLOCKS * 64)))
            .collect();
        if cfg.targets.len() > u16::MAX as usize {
            return Err(VerifyError::Config("more than 65,535 targets".into()));
        }
        let n = cfg.targets.len();
        let mut v = Verifier::with_mode(
            cfg.block_bytes,
            cfg.run_id,
            cfg.targets,
            cfg.fail,
            Mode::Run { maps, touched },
        );
        if let Some(place) = cfg.journal {
            v.journal_name = Some(place.path().display().to_string());
            // A durable-write log of an earlier run goes first: from here on, any journal on disk has no log
            // beside it or one of its own run ([`durable`]).
            durable::remove(&place)?;
            // The empty journal: nothing required of any block. No target has been written by this run yet,
            // so nothing needs syncing first.
            let h = v.journal_header(false, 0);
            let tmp = journal::write_tmp(&place, &h, |_, _| (0, false))?;
            journal::commit(&place, tmp)?;
            v.keeper = Some(JournalKeeper {
                place,
                state: Mutex::new(KeeperState { sequence: 0, files: vec![None; n] }),
            });
        }
        Ok(v)
    }

    /// A verifier for `iolab verify TARGET --journal FILE`: expected generations come from the journal.
    /// `targets` are in the order of the run that wrote the journal, with their sizes now.
    pub fn from_journal(path: &Path, targets: Vec<TargetInfo>) -> Result<Verifier, VerifyError> {
        let j = journal::read(path)?;
        let jt = &j.header.targets;
        let err = |reason: String| VerifyError::Journal { path: path.display().to_string(), reason };
        if jt.len() != targets.len() {
            let names: Vec<&str> = jt.iter().map(|t| t.name.as_str()).collect();
            return Err(err(format!(
                "the journal is for {} target(s) ({}); {} given",
                jt.len(),
                names.join(", "),
                targets.len()
            )));
        }
        for (i, (t, r)) in targets.iter().zip(jt).enumerate() {
            if t.size_bytes / j.header.block_bytes as u64 != r.blocks {
                return Err(err(format!(
                    "target {} '{}' is {} bytes, but the journal's target '{}' was {} bytes: not the target this journal was written for",
                    i + 1,
                    t.name,
                    t.size_bytes,
                    r.name,
                    r.size_bytes
                )));
            }
        }
        let (block, run) = (j.header.block_bytes, j.header.run_id);
        let mut j = j;
        let log_path = durable::path_for(path);
        // A final journal vouches for every write of its run (the log is removed once it is written; one a
        // crash left beside it says nothing more).
        let log = if j.header.final_ { None } else { durable::read_for(&log_path, run, block)? };
        let durable_check = match log {
            None => None,
            Some(log) => Some(raise_floors(&mut j, &log, &log_path)?),
        };
        let mut v = Verifier::with_mode(block, run, targets, FailMode::Continue, Mode::Journal(j));
        v.journal_name = Some(path.display().to_string());
        v.durable_check = durable_check;
        Ok(v)
    }

    /// A verifier for `iolab verify TARGET` without a journal: each block written by iolab is checked for
    /// self-consistency (checksum, offset, one generation across its sectors).
    ///
    /// # Panics
    /// When `block_bytes` is not a power of two from 512 to 1 MiB (the cli checks it).
    pub fn self_check(block_bytes: u32, targets: Vec<TargetInfo>) -> Verifier {
        check_block_bytes(block_bytes).expect("a valid verification block (checked by the caller)");
        Verifier::with_mode(block_bytes, 0, targets, FailMode::Continue, Mode::SelfCheck)
    }

    /// The verification block for a job: the largest power of two (<= 4 KiB, >= 512) dividing every block
    /// size and the alignment (0: none given); an error names the block size that cannot carry headers.
    pub fn choose_block(block_sizes: &[u32], align: u64) -> Result<u32, String> {
        if let Some(&s) = block_sizes.iter().find(|&&s| s == 0 || s % 512 != 0) {
            return Err(format!(
                "block size {s} is not a multiple of 512 bytes: every verified block carries a header and a tag \
                 in each 512-byte sector"
            ));
        }
        if align != 0 && align % 512 != 0 {
            return Err(format!(
                "alignment {align} is not a multiple of 512 bytes: verified writes must cover whole 512-byte blocks"
            ));
        }
        let mut b = DEFAULT_BLOCK;
        while b > 512 && (block_sizes.iter().any(|&s| s % b != 0) || (align != 0 && align % b as u64 != 0)) {
            b /= 2;
        }
        Ok(b)
    }

    /// Verification block size.
    pub fn block_bytes(&self) -> u32 {
        self.block_bytes
    }

    /// The run id in every header this verifier writes or expects.
    pub fn run_id(&self) -> u64 {
        self.run_id
    }

    /// The targets, by id.
    pub fn targets(&self) -> &[TargetInfo] {
        &self.targets
    }

    /// True once a mismatch was found and the fail mode is [`FailMode::Stop`].
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Target id and block offset of every failed block found so far, each once (at most 1 Mi entries).
    pub fn mismatch_blocks(&self) -> Vec<(u16, u64)> {
        self.log.lock().expect("mismatch log").blocks.clone()
    }

    /// The file behind target `id`, for the journal: [`Verifier::sync_journal`] and
    /// [`Verifier::checkpoint_journal`] `fdatasync` it before they record generations. Every target needs one
    /// when a journal is kept (a file, a block device; any descriptor of it will do, O_DIRECT or not). No
    /// effect without a journal.
    ///
    /// # Panics
    /// When `id` is not a target id.
    pub fn set_target_file(&self, id: u16, file: Arc<File>) {
        assert!((id as usize) < self.targets.len(), "target id {id} out of range (bug)");
        if let Some(k) = &self.keeper {
            k.state.lock().expect("journal state").files[id as usize] = Some(file);
        }
    }

    /// Starts the durable-write log beside the journal (`FILE.durable`, [`durable`]): call it before the run's
    /// first write, when the workload makes writes durable (synchronous writes or flushes); the engine hands it
    /// what was acknowledged durable ([`Verifier::durable_log`]). No effect without a journal.
    pub fn start_durable_log(&mut self) -> Result<(), VerifyError> {
        let Some(k) = &self.keeper else { return Ok(()) };
        let log = durable::DurableLog::create(&k.place, self.run_id, self.block_bytes)?;
        self.durable = Some(Arc::new(log));
        Ok(())
    }

    /// The durable-write log this run keeps, if any.
    pub fn durable_log(&self) -> Option<&Arc<durable::DurableLog>> {
        self.durable.as_ref()
    }

    /// Makes the journal durable (after the last write was acknowledged): a **final** checkpoint, which vouches
    /// that every block that was clean holds exactly its generation. Call it once, after every worker finished
    /// (nothing in flight and nothing more to be issued); during the run use [`Verifier::checkpoint_journal`].
    /// No effect without a journal.
    pub fn sync_journal(&self) -> Result<(), VerifyError> {
        self.checkpoint(true)
    }

    /// A checkpoint of the journal while writes go on: records the generations acknowledged so far, after
    /// making them durable (see [`journal`] for the order). Safe to call at any time from any thread; one
    /// checkpoint runs at a time. No effect without a journal.
    pub fn checkpoint_journal(&self) -> Result<(), VerifyError> {
        self.checkpoint(false)
    }

    fn journal_header(&self, final_: bool, sequence: u64) -> journal::JournalHeader {
        journal::JournalHeader {
            final_,
            run_id: self.run_id,
            block_bytes: self.block_bytes,
            sequence,
            targets: self
                .targets
                .iter()
                .map(|t| journal::JournalTarget {
                    name: t.name.clone(),
                    size_bytes: t.size_bytes,
                    blocks: t.size_bytes / self.block_bytes as u64,
                })
                .collect(),
        }
    }

    fn checkpoint(&self, final_: bool) -> Result<(), VerifyError> {
        let (Some(k), Mode::Run { maps, .. }) = (&self.keeper, &self.mode) else {
            return Ok(());
        };
        let mut st = k.state.lock().expect("journal state");
        let files: Vec<Arc<File>> = st
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                f.clone().ok_or_else(|| VerifyError::Journal {
                    path: k.place.path().display().to_string(),
                    reason: format!(
                        "target '{}' has no file to make durable (the journal needs file or device targets)",
                        self.targets[i].name
                    ),
                })
            })
            .collect::<Result<_, _>>()?;
        st.sequence += 1;
        let h = self.journal_header(final_, st.sequence);
        // 1. Read the map: every generation recorded here was acknowledged before this read.
        let tmp = journal::write_tmp(&k.place, &h, |t, i| {
            map::journal_entry(State::from_word(maps[t][i as usize].load(Ordering::Acquire)))
        })?;
        // 2. Make every acknowledged write durable: all that step 1 recorded, and perhaps more.
        for (i, f) in files.iter().enumerate() {
            f.sync_data().map_err(|e| VerifyError::Journal {
                path: k.place.path().display().to_string(),
                reason: format!("cannot fdatasync target '{}': {e}", self.targets[i].name),
            })?;
        }
        // 3. Only now may the journal become durable and replace the previous one.
        journal::commit(&k.place, tmp)?;
        if final_ {
            // The final journal vouches for every write of the run: the durable-write log says nothing more.
            // Stop its thread (`DurableCommits::stop`) before this.
            durable::remove(&k.place)?;
        }
        Ok(())
    }

    /// Starts a thread that calls [`Verifier::checkpoint_journal`] every `period` until
    /// [`JournalCheckpoints::stop`]. Without a journal the thread does nothing.
    pub fn checkpoint_every(self: &Arc<Self>, period: std::time::Duration) -> JournalCheckpoints {
        let v = self.clone();
        periodic::Periodic::spawn("iolab-journal", "journal", period, false, move || v.checkpoint_journal())
    }

    fn word(&self, target: u16, offset: u64) -> &AtomicU64 {
        let Mode::Run { maps, .. } = &self.mode else {
            panic!("a write in a read-only check (bug)");
        };
        debug_assert_eq!(offset & (self.block_bytes as u64 - 1), 0, "unaligned block offset (bug)");
        maps.get(target as usize).and_then(|m| m.get((offset >> self.shift) as usize)).unwrap_or_else(|| {
            panic!("block {offset} of target {target} is outside the verified targets (bug)")
        })
    }

    /// A write to the block at `offset` of target `id` is about to be handed to the engine: allocates its
    /// generation. Call before the data can reach the target, and call [`Verifier::end_write`] exactly once
    /// with the ticket when it completes (also when it failed).
    ///
    /// # Panics
    /// In a read-only check ([`Verifier::from_journal`], [`Verifier::self_check`]), or for a block outside the
    /// targets.
    pub fn begin_write(&self, target: u16, offset: u64) -> Ticket {
        self.touch(target, offset);
        let w = self.word(target, offset);
        let prev = w
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |x| {
                Some(map::push_write(State::from_word(x)).word())
            })
            .expect("the update always succeeds");
        // Release fence: a reader whose data loads see any byte of this write, and who then issues an acquire
        // fence, sees this update (so its read counts as overlapping this write).
        fence(Ordering::SeqCst);
        Ticket(map::push_write(State::from_word(prev)).word())
    }

    /// Stamps the header and the sector tags of the write `ticket` into `block` (the whole verification block
    /// at `offset`, holding the data to write) and computes its checksum.
    pub fn stamp(&self, block: &mut [u8], target: u16, offset: u64, ticket: Ticket, timestamp_ns: u64) {
        debug_assert_eq!(block.len(), self.block_bytes as usize);
        let generation = State::from_word(ticket.0).issued;
        format::stamp(
            block,
            &format::Stamp { run_id: self.run_id, target, offset, generation, timestamp_ns },
        );
    }

    /// The write `ticket` completed; `ok`: the block was written whole (no error, not short of it).
    ///
    /// Returns what the block may hold no older than once this write is durable (0: nothing, as after a failed
    /// write): the write's generation when it was the only write to the block in flight, else the oldest
    /// generation overlapping writes may leave. What a [`durable::Record`] carries once a flush or the write's
    /// own sync made it durable.
    pub fn end_write(&self, target: u16, offset: u64, ticket: Ticket, ok: bool) -> u32 {
        let after_push = State::from_word(ticket.0);
        // Release: whoever sees this update also sees the data written.
        let before = self
            .word(target, offset)
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |x| {
                Some(map::complete_write(State::from_word(x), after_push, ok).word())
            })
            .expect("the update always succeeds");
        if !ok {
            return 0;
        }
        // The state this completion left. Writes pushed later are newer and cannot bring older data back;
        // writes in flight now overlapped this one, so the block is racy and its floor is what they may leave.
        map::journal_entry(map::complete_write(State::from_word(before), after_push, ok)).0
    }

    /// A read of the block at `offset` of target `id` is about to be handed to the engine: snapshots the block's
    /// state.
    pub fn begin_read(&self, target: u16, offset: u64) -> Ticket {
        match &self.mode {
            // Acquire: the read's data loads come after this (and see what any write it saw completed wrote).
            Mode::Run { .. } => Ticket(self.word(target, offset).load(Ordering::Acquire)),
            _ => Ticket(0),
        }
    }

    /// What `block` may hold, for a read pushed with `ticket` that has now completed: None when a write to the
    /// block overlapped the read.
    fn expectation(&self, target: u16, offset: u64, ticket: Ticket) -> Option<Expect> {
        match &self.mode {
            Mode::Run { .. } => {
                // Acquire fence: pairs with the writer's fence in begin_write (see there).
                fence(Ordering::SeqCst);
                let now = State::from_word(self.word(target, offset).load(Ordering::Acquire));
                let s = map::read_window(State::from_word(ticket.0), now)?;
                Some(if s.racy { Expect::Racy(s.floor()) } else { Expect::Exact(s.issued) })
            }
            Mode::Journal(j) => {
                let (t, i) = (target as usize, offset >> self.shift);
                let floor = *j.floors.get(t).and_then(|f| f.get(i as usize))?;
                Some(if j.is_exact(t, i) { Expect::Exact(floor) } else { Expect::Crashed(floor) })
            }
            Mode::SelfCheck => Some(Expect::SelfCheck),
        }
    }

    /// Judges the block a read pushed with `ticket` returned (`block`: the whole verification block at
    /// `offset`), counts the outcome in `tally` (`readback`: by the read-back pass) and records a mismatch.
    pub fn end_read(
        &self,
        target: u16,
        offset: u64,
        ticket: Ticket,
        block: &[u8],
        tally: &mut Tally,
        readback: bool,
    ) -> Outcome {
        debug_assert_eq!(block.len(), self.block_bytes as usize);
        let outcome = match self.expectation(target, offset, ticket) {
            None => Outcome::Skipped,
            Some(e) => {
                let self_check = matches!(self.mode, Mode::SelfCheck);
                let run = (!self_check).then_some(self.run_id);
                let o = format::classify(block, target, offset, run, !self_check, e);
                if let Outcome::Bad(class) = o {
                    self.record(target, offset, class, e, block);
                }
                o
            }
        };
        tally.count(outcome, readback);
        outcome
    }

    /// Marks the chunk of the block at `offset` as written (a load first: the bit is set once per chunk).
    fn touch(&self, target: u16, offset: u64) {
        let Mode::Run { touched, .. } = &self.mode else { return };
        let chunk = (offset >> self.shift) as usize / CHUNK_BLOCKS;
        let (word, bit) = (&touched[target as usize][chunk / 64], 1u64 << (chunk % 64));
        if word.load(Ordering::Acquire) & bit == 0 {
            word.fetch_or(bit, Ordering::AcqRel);
        }
    }

    /// The first block at or after `from` and before `end` (offsets, block-aligned) that this run has written,
    /// skipping chunks no write touched: what the read-back pass reads. In read-only checks, `from`.
    pub fn next_written(&self, target: u16, from: u64, end: u64) -> Option<u64> {
        let Mode::Run { touched, .. } = &self.mode else { return (from < end).then_some(from) };
        let chunk_bytes = (CHUNK_BLOCKS as u64) << self.shift;
        let bits = &touched[target as usize];
        let mut at = from;
        while at < end {
            let chunk = (at / chunk_bytes) as usize;
            let word = bits[chunk / 64].load(Ordering::Acquire) >> (chunk % 64);
            if word == 0 {
                // No chunk from here to the end of this word was written.
                at = ((chunk / 64 + 1) * 64) as u64 * chunk_bytes;
                continue;
            }
            if word & 1 == 0 {
                at = (chunk as u64 + u64::from(word.trailing_zeros())) * chunk_bytes;
                continue;
            }
            let chunk_end = ((chunk as u64 + 1) * chunk_bytes).min(end);
            while at < chunk_end {
                if self.written(target, at) {
                    return Some(at);
                }
                at += 1 << self.shift;
            }
        }
        None
    }

    /// True when the block at `offset` has been written by this run (a write was issued to it): what the
    /// read-back pass reads. In read-only checks, always true.
    pub fn written(&self, target: u16, offset: u64) -> bool {
        match &self.mode {
            Mode::Run { .. } => {
                State::from_word(self.word(target, offset).load(Ordering::Acquire)).issued > 0
            }
            _ => true,
        }
    }

    /// True when the verifier knows exactly what the block at `offset` holds now: written by this run, not racy,
    /// no write in flight. Fault injection flips bits in reads only there, so that every flip can be judged.
    /// In read-only checks, true for every block.
    pub fn exact(&self, target: u16, offset: u64) -> bool {
        match &self.mode {
            Mode::Run { .. } => {
                let s = State::from_word(self.word(target, offset).load(Ordering::Acquire));
                s.issued > 0 && !s.racy && s.in_flight == 0
            }
            _ => true,
        }
    }

    /// For a write to the block at `offset` that is in flight now (begun, not ended): true when it is the only
    /// write in flight and the block is not racy, so once it ends the verifier knows exactly what the block must
    /// hold. Fault injection counts damage only there: elsewhere the block may legitimately hold older data.
    /// In read-only checks, true.
    pub fn judges_write(&self, target: u16, offset: u64) -> bool {
        match &self.mode {
            Mode::Run { .. } => {
                let s = State::from_word(self.word(target, offset).load(Ordering::Acquire));
                !s.racy && s.in_flight <= 1
            }
            _ => true,
        }
    }

    /// Adds an engine's counts.
    pub fn add_tally(&self, t: &Tally) {
        let c = &self.counts;
        c.checked.fetch_add(t.blocks_checked, Ordering::Relaxed);
        c.skipped.fetch_add(t.blocks_skipped_in_flight, Ordering::Relaxed);
        c.never.fetch_add(t.blocks_never_written, Ordering::Relaxed);
        c.readback.fetch_add(t.readback_blocks, Ordering::Relaxed);
        c.unread.fetch_add(t.readback_unread, Ordering::Relaxed);
    }

    fn record(&self, target: u16, offset: u64, class: MismatchClass, e: Expect, block: &[u8]) {
        self.counts.mismatches.fetch_add(1, Ordering::Relaxed);
        self.counts.by_class[class_index(class)].fetch_add(1, Ordering::Relaxed);
        if self.fail == FailMode::Stop {
            self.stop.store(true, Ordering::Relaxed);
        }
        let mut log = self.log.lock().expect("mismatch log");
        if log.distinct.len() < MISMATCH_BLOCKS_MAX {
            if log.distinct.insert((target, offset)) {
                log.blocks.push((target, offset));
                if let Some(d) =
                    self.durable_check.as_ref().filter(|d| d.raised(target as usize, offset >> self.shift))
                {
                    d.mismatched.fetch_add(1, Ordering::Relaxed);
                }
            }
        } else if !log.distinct.contains(&(target, offset)) {
            log.overflow += 1;
        }
        if log.first.len() < FIRST_MISMATCHES {
            let h = format::parse(block);
            let generation = match e {
                Expect::Exact(g) | Expect::Crashed(g) | Expect::Racy(Some(g)) => g,
                Expect::Racy(None) | Expect::SelfCheck => 0,
            };
            log.first.push(Mismatch {
                target: self
                    .targets
                    .get(target as usize)
                    .map_or_else(|| format!("#{target}"), |t| t.name.clone()),
                offset,
                class,
                expected: HeaderView {
                    target,
                    offset,
                    generation,
                    run_id: format!("{:016x}", self.run_id),
                    timestamp_ns: 0,
                    checksum: format!("{:08x}", format::block_crc(block)),
                },
                found: h.magic.then(|| format::view(&h)),
                sector_generations: format::sector_generations(block, offset),
                hex: format::hex_dump(block),
            });
        }
    }

    /// Tracking bytes per block: the generation map (a run) or the journal's arrays (a check), measured.
    fn map_bytes_per_block(&self) -> f64 {
        let (bytes, blocks) = match &self.mode {
            Mode::Run { maps, .. } => (
                maps.iter().map(|m| std::mem::size_of_val(&**m)).sum::<usize>(),
                maps.iter().map(|m| m.len()).sum::<usize>(),
            ),
            Mode::Journal(j) => (
                j.floors.iter().map(|f| f.len() * 4).sum::<usize>()
                    + j.exact.iter().map(Vec::len).sum::<usize>(),
                j.floors.iter().map(Vec::len).sum::<usize>(),
            ),
            Mode::SelfCheck => (0, 0),
        };
        if blocks == 0 {
            0.0
        } else {
            bytes as f64 / blocks as f64
        }
    }

    /// The `verify` block of the result.
    pub fn result(&self) -> VerifyResult {
        let c = &self.counts;
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        VerifyResult {
            block_bytes: self.block_bytes,
            blocks_checked: n(&c.checked),
            blocks_skipped_in_flight: n(&c.skipped),
            blocks_never_written: n(&c.never),
            readback_blocks: n(&c.readback),
            readback_unread_blocks: n(&c.unread),
            mismatches: n(&c.mismatches),
            mismatched_blocks: {
                let log = self.log.lock().expect("mismatch log");
                log.distinct.len() as u64 + log.overflow
            },
            by_class: ByClass {
                corrupt_payload: n(&c.by_class[0]),
                torn_write: n(&c.by_class[1]),
                lost_write: n(&c.by_class[2]),
                misdirected_write: n(&c.by_class[3]),
            },
            first_mismatches: self.log.lock().expect("mismatch log").first.clone(),
            map_bytes_per_block: self.map_bytes_per_block(),
            journal: self.journal_name.clone(),
            durable: self.durable_result(),
            stopped: self.stop_requested(),
        }
    }

    /// The result's `durable` block: what a run logged, or what a check took from the log.
    fn durable_result(&self) -> Option<DurableLogResult> {
        if let Some(l) = &self.durable {
            let (records, not_logged) = l.counts();
            return Some(DurableLogResult {
                log: l.path().display().to_string(),
                records,
                not_logged,
                ..DurableLogResult::default()
            });
        }
        self.durable_check.as_ref().map(|d| DurableLogResult {
            log: d.log.clone(),
            records: d.records,
            blocks_raised: d.blocks_raised,
            torn_tail_bytes: d.torn_tail_bytes,
            mismatched_blocks: d.mismatched.load(Ordering::Relaxed),
            ..DurableLogResult::default()
        })
    }
}

/// Raises each block the log names to the generation it was acknowledged durable at, where that is newer
/// than the journal's floor: after a crash, the block must hold it or something newer (classified as
/// [`format::Expect::Crashed`], the journal's rule, with the higher floor).
fn raise_floors(
    j: &mut journal::Journal,
    log: &durable::LogContents,
    path: &Path,
) -> Result<DurableCheck, VerifyError> {
    let mut raised: Vec<Vec<u8>> = j.floors.iter().map(|f| vec![0u8; f.len().div_ceil(8)]).collect();
    let mut blocks_raised = 0;
    for r in &log.records {
        let floor = j
            .floors
            .get_mut(r.target as usize)
            .and_then(|f| f.get_mut(usize::try_from(r.block).ok()?))
            .ok_or_else(|| VerifyError::Journal {
                path: path.display().to_string(),
                reason: format!(
                    "damaged: a record names block {} of target {}, which the journal does not have",
                    r.block, r.target
                ),
            })?;
        if r.generation > *floor {
            *floor = r.generation;
            let bits = &mut raised[r.target as usize][(r.block / 8) as usize];
            if *bits & (1 << (r.block % 8)) == 0 {
                *bits |= 1 << (r.block % 8);
                blocks_raised += 1;
            }
        }
    }
    Ok(DurableCheck {
        log: path.display().to_string(),
        records: log.records.len() as u64,
        raised,
        blocks_raised,
        torn_tail_bytes: log.torn_tail_bytes,
        mismatched: AtomicU64::new(0),
    })
}

/// The thread of [`Verifier::checkpoint_every`].
pub type JournalCheckpoints = periodic::Periodic;

#[cfg(test)]
mod tests;
