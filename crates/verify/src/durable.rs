//! The durable-write log (`JOURNAL.durable`): the writes a run's workload was told are durable, kept on disk
//! as they are acknowledged, so that `iolab verify TARGET --journal JOURNAL` after a crash can require them
//! although no journal checkpoint has recorded them yet.
//!
//! A write is *acknowledged durable* when it completes as a synchronous write (O_DSYNC, O_SYNC), or when a
//! flush of its target that was issued after the write completed completes successfully: a flush makes
//! durable exactly what had completed before it was issued (`iolab-engine`'s `VerifyEngine` tracks which
//! writes each flush covers). The journal's checkpoints come every few seconds; without this log, a device
//! or a write-back cache that acknowledged a flush and then lost the data would go unseen whenever the crash
//! came before the next checkpoint.
//!
//! # Format (version 1, little-endian)
//!
//! ```text
//! header, 32 bytes:
//!  0  8  magic "IOLABDUR"
//!  8  4  version (1)
//! 12  4  block_bytes (the verification block the records count in)
//! 16  8  run id (the journal's)
//! 24  4  crc32c of bytes 0..24
//! 28  4  reserved, 0
//! then batches, appended:
//!  0  4  record count n (1 ..= 65,536)
//!  4  4  crc32c of the count's 4 bytes and the n records
//!  8     n records of 14 bytes: target id u16, block index u64 (offset / block_bytes), generation u32
//! ```
//!
//! A record says: the block must hold at least this generation. The generation is what the block could hold
//! no older than once the write is durable: the write's own generation when it was the only write to the
//! block in flight, else the oldest generation that overlapping writes may leave ([`crate::map`]'s floor),
//! so that writes landing in any order never raise a false alarm.
//!
//! # Crash ordering
//!
//! Workers hand acknowledgments over in batches ([`DurableLog::submit`]: one lock per flush or per batch of
//! synchronous writes, never one per I/O) to a queue; one thread appends the queue as batches and
//! `fdatasync`s the log every [`COMMIT_PERIOD`]. A record is queued only after its acknowledgment, so a crash
//! can lose the last few milliseconds of acknowledgments (they are then only vouched for by the journal's
//! next checkpoint, as before) but never make the log claim a write that was not acknowledged durable. A
//! batch cut short by the crash fails its checksum or its length, and it and anything after it are ignored
//! ([`decode`]).
//!
//! The log is created fresh, after the run's empty journal is durable and before its first write
//! ([`crate::Verifier::start_durable_log`]); a log left by an earlier run is removed before that empty journal
//! is written, so a crash at any point leaves a journal with no log or with its own run's. A final journal
//! (every write of the run completed and synced) supersedes the log, which is then removed.

use crate::journal::JournalPlace;
use crate::periodic::Periodic;
use crate::VerifyError;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Log magic.
pub const MAGIC: &[u8; 8] = b"IOLABDUR";
/// The version this code writes and reads.
pub const VERSION: u32 = 1;
/// Header length.
pub const HEADER_BYTES: usize = 32;
/// One record on disk.
pub const RECORD_BYTES: usize = 14;
/// Records per batch at most (917 KB): a count above it is damage, not a batch.
pub const BATCH_RECORDS_MAX: usize = 1 << 16;
/// Records waiting for the log thread at most (16 MiB of memory): past it, acknowledgments are counted as not
/// logged instead of queued (a log whose file system cannot keep up never holds the workers back).
pub const QUEUE_RECORDS_MAX: usize = 1 << 20;
/// How often the log thread appends what was queued and makes it durable: what a crash can lose of the
/// acknowledgments. 10 ms is about 100 `fdatasync`s a second of the log, while durable writes go on.
pub const COMMIT_PERIOD: Duration = Duration::from_millis(10);

/// One acknowledged durable write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The verifier's target id.
    pub target: u16,
    /// Block index (offset / block_bytes).
    pub block: u64,
    /// The oldest generation the block may hold now that the write is durable (see the module docs).
    pub generation: u32,
}

/// The log next to the journal at `journal`: `JOURNAL.durable`.
pub fn path_for(journal: &Path) -> PathBuf {
    let mut s = journal.as_os_str().to_owned();
    s.push(SUFFIX);
    PathBuf::from(s)
}

/// What the log's name adds to the journal's.
const SUFFIX: &str = ".durable";

fn err(path: &Path, reason: impl Into<String>) -> VerifyError {
    VerifyError::Journal { path: path.display().to_string(), reason: reason.into() }
}

/// The 32-byte header.
pub fn encode_header(run_id: u64, block_bytes: u32) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&block_bytes.to_le_bytes());
    h[16..24].copy_from_slice(&run_id.to_le_bytes());
    let crc = crc32c::crc32c(&h[..24]);
    h[24..28].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Appends `records` to `out` as batches of at most [`BATCH_RECORDS_MAX`].
pub fn encode_batches(records: &[Record], out: &mut Vec<u8>) {
    for chunk in records.chunks(BATCH_RECORDS_MAX) {
        let start = out.len();
        out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        for r in chunk {
            out.extend_from_slice(&r.target.to_le_bytes());
            out.extend_from_slice(&r.block.to_le_bytes());
            out.extend_from_slice(&r.generation.to_le_bytes());
        }
        let crc = crc32c::crc32c_append(crc32c::crc32c(&out[start..start + 4]), &out[start + 8..]);
        out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    }
}

/// A log read back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogContents {
    /// The run that wrote it.
    pub run_id: u64,
    /// Its verification block.
    pub block_bytes: u32,
    /// Every record of every whole batch, in order.
    pub records: Vec<Record>,
    /// Whole batches read.
    pub batches: u64,
    /// Bytes after the last whole batch (a batch a crash cut short): ignored.
    pub torn_tail_bytes: u64,
}

/// Decodes a log's bytes. The header must be whole and valid; batches are read while they are whole with a
/// valid checksum, and the rest is the torn tail.
pub fn decode(b: &[u8], path: &Path) -> Result<LogContents, VerifyError> {
    decode_from(b, b.len() as u64, path)
}

/// [`decode`] of a log read as a stream of `len` bytes: the 32-byte header first (magic, version, checksum),
/// then one batch at a time, each at most [`BATCH_RECORDS_MAX`] records, so nothing is read or allocated
/// beyond what whole, valid batches hold (a log of gigabytes of zeros stops at its first batch).
fn decode_from(mut r: impl Read, len: u64, path: &Path) -> Result<LogContents, VerifyError> {
    let mut h = [0u8; HEADER_BYTES];
    let got = read_up_to(&mut r, &mut h, path)?;
    if got < 8 || &h[..8] != MAGIC {
        return Err(err(path, "not an iolab durable-write log (no IOLABDUR magic)"));
    }
    if got < HEADER_BYTES {
        return Err(err(path, format!("truncated header: {got} bytes")));
    }
    let u32_at = |at: usize| u32::from_le_bytes(h[at..at + 4].try_into().expect("4 bytes"));
    let version = u32_at(8);
    if version != VERSION {
        return Err(err(
            path,
            format!("durable-write log version {version}; this iolab reads version {VERSION}"),
        ));
    }
    if crc32c::crc32c(&h[..24]) != u32_at(24) {
        return Err(err(path, "damaged header: its checksum does not match"));
    }
    let block_bytes = u32_at(12);
    let run_id = u64::from_le_bytes(h[16..24].try_into().expect("8 bytes"));
    let mut c = LogContents { run_id, block_bytes, ..LogContents::default() };
    let mut at = HEADER_BYTES as u64;
    let mut body = Vec::new();
    loop {
        let mut head = [0u8; 8];
        if read_up_to(&mut r, &mut head, path)? < head.len() {
            break;
        }
        let n = u32::from_le_bytes(head[..4].try_into().expect("4 bytes")) as usize;
        let stored = u32::from_le_bytes(head[4..].try_into().expect("4 bytes"));
        if n == 0 || n > BATCH_RECORDS_MAX {
            break;
        }
        body.resize(n * RECORD_BYTES, 0);
        if read_up_to(&mut r, &mut body, path)? < body.len()
            || crc32c::crc32c_append(crc32c::crc32c(&head[..4]), &body) != stored
        {
            break;
        }
        c.records
            .try_reserve(n)
            .map_err(|_| err(path, format!("too large to read into memory ({len} bytes)")))?;
        c.records.extend(body.chunks_exact(RECORD_BYTES).map(|r| Record {
            target: u16::from_le_bytes(r[..2].try_into().expect("2 bytes")),
            block: u64::from_le_bytes(r[2..10].try_into().expect("8 bytes")),
            generation: u32::from_le_bytes(r[10..14].try_into().expect("4 bytes")),
        }));
        c.batches += 1;
        at += (8 + n * RECORD_BYTES) as u64;
    }
    c.torn_tail_bytes = len.saturating_sub(at);
    Ok(c)
}

/// Reads into `buf` until it is full or the stream ends; returns the bytes read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8], path: &Path) -> Result<usize, VerifyError> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(err(path, format!("cannot read: {e}"))),
        }
    }
    Ok(filled)
}

/// Reads the log at `path` for the journal of run `run_id` with `block_bytes` blocks. None when there is no
/// log (a run without durable writes or flushes, a finished run, an older iolab), or when the log holds no
/// record (a log of another run that a crash left before its first write is no evidence either way). A log
/// of another run or block size that holds records is refused: it does not describe this journal's writes.
///
/// Only a regular file is read (a FIFO or a device named so is refused, never read).
pub fn read_for(path: &Path, run_id: u64, block_bytes: u32) -> Result<Option<LogContents>, VerifyError> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(path, format!("cannot open: {e}"))),
    };
    let meta = f.metadata().map_err(|e| err(path, format!("cannot inspect: {e}")))?;
    if !meta.is_file() {
        return Err(err(
            path,
            "not a regular file; expected the durable-write log a run wrote beside its journal",
        ));
    }
    let c = decode_from(std::io::BufReader::new(f.take(meta.len())), meta.len(), path)?;
    if c.records.is_empty() {
        return Ok(None);
    }
    if c.run_id != run_id || c.block_bytes != block_bytes {
        return Err(err(
            path,
            format!(
                "written by run {:016x} with {}-byte blocks, but the journal is of run {run_id:016x} with \
                 {block_bytes}-byte blocks; remove it to check against the journal alone",
                c.run_id, c.block_bytes
            ),
        ));
    }
    Ok(Some(c))
}

/// Removes what is at `path` (a log of an earlier run; the write gate checked that it is iolab's or absent):
/// the name, never what a symlink there points to.
pub fn remove(place: &JournalPlace) -> Result<(), VerifyError> {
    place.remove(SUFFIX).map_err(|e| err(&place.beside_path(SUFFIX), format!("cannot remove: {e}")))
}

struct Queue {
    records: Vec<Record>,
    /// The log thread stopped on an error: nothing more is queued.
    failed: bool,
}

/// The log a run keeps: a bounded queue the workers hand acknowledgments to, appended and made durable by
/// one thread ([`DurableLog::commit_every`]).
pub struct DurableLog {
    path: PathBuf,
    file: File,
    queue: Mutex<Queue>,
    logged: AtomicU64,
    not_logged: AtomicU64,
}

impl DurableLog {
    /// Creates the log beside the journal kept at `place` (`FILE.durable`, in its held directory) with
    /// O_EXCL (a name there already is removed first, never followed) and makes its header and its directory
    /// entry durable.
    pub fn create(place: &JournalPlace, run_id: u64, block_bytes: u32) -> Result<DurableLog, VerifyError> {
        remove(place)?;
        let path = place.beside_path(SUFFIX);
        let io = |e: std::io::Error| err(&path, format!("cannot create: {e}"));
        let mut file = place.create_new(SUFFIX, true).map_err(io)?;
        file.write_all(&encode_header(run_id, block_bytes)).map_err(io)?;
        file.sync_data().map_err(io)?;
        place.sync()?;
        Ok(DurableLog {
            path,
            file,
            queue: Mutex::new(Queue { records: Vec::new(), failed: false }),
            logged: AtomicU64::new(0),
            not_logged: AtomicU64::new(0),
        })
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Hands `records` (acknowledged durable) to the log and empties it. One lock; records past
    /// [`QUEUE_RECORDS_MAX`], or after the log failed, are counted as not logged.
    pub fn submit(&self, records: &mut Vec<Record>) {
        if records.is_empty() {
            return;
        }
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let room = if q.failed { 0 } else { QUEUE_RECORDS_MAX.saturating_sub(q.records.len()) };
        let taken = room.min(records.len());
        q.records.extend_from_slice(&records[..taken]);
        drop(q);
        self.not_logged.fetch_add((records.len() - taken) as u64, Ordering::Relaxed);
        records.clear();
    }

    /// Counts `n` acknowledgments of durable writes that were not handed to the log (a worker's list of writes
    /// waiting for their flush was full).
    pub fn not_logged(&self, n: u64) {
        self.not_logged.fetch_add(n, Ordering::Relaxed);
    }

    /// (records logged and durable, acknowledgments not logged).
    pub fn counts(&self) -> (u64, u64) {
        (self.logged.load(Ordering::Relaxed), self.not_logged.load(Ordering::Relaxed))
    }

    /// Appends what is queued and makes it durable. `spare` and `bytes` are the caller's buffers, reused.
    fn commit(&self, spare: &mut Vec<Record>, bytes: &mut Vec<u8>) -> Result<(), VerifyError> {
        {
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            std::mem::swap(&mut q.records, spare);
        }
        if spare.is_empty() {
            return Ok(());
        }
        bytes.clear();
        encode_batches(spare, bytes);
        let r = (&self.file).write_all(bytes).and_then(|()| self.file.sync_data());
        let n = spare.len() as u64;
        spare.clear();
        match r {
            Ok(()) => {
                self.logged.fetch_add(n, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                q.failed = true;
                let dropped = n + q.records.len() as u64;
                q.records = Vec::new();
                drop(q);
                self.not_logged.fetch_add(dropped, Ordering::Relaxed);
                Err(err(&self.path, format!("cannot append and sync: {e}")))
            }
        }
    }

    /// Starts the thread that commits the queue every `period` until [`DurableCommits::stop`], which commits
    /// once more.
    pub fn commit_every(self: &Arc<Self>, period: Duration) -> DurableCommits {
        let log = self.clone();
        let (mut spare, mut bytes) = (Vec::new(), Vec::new());
        Periodic::spawn("iolab-durable", "durable-write log", period, true, move || {
            log.commit(&mut spare, &mut bytes)
        })
    }
}

/// The thread of [`DurableLog::commit_every`].
pub type DurableCommits = Periodic;

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(target: u16, block: u64, generation: u32) -> Record {
        Record { target, block, generation }
    }

    #[test]
    fn a_log_round_trips_through_its_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let place = JournalPlace::hold(&dir.path().join("j")).expect("hold");
        let path = path_for(place.path());
        let log = Arc::new(DurableLog::create(&place, 0xABCD, 4096).expect("create"));
        let commits = log.commit_every(Duration::from_millis(1));
        let mut a = vec![rec(0, 1, 2), rec(1, u64::MAX / 4096, u32::MAX)];
        log.submit(&mut a);
        assert!(a.is_empty(), "handed over");
        std::thread::sleep(Duration::from_millis(20));
        let mut b: Vec<Record> = (0..BATCH_RECORDS_MAX as u64 + 3).map(|i| rec(2, i, 7)).collect();
        log.submit(&mut b);
        commits.stop().expect("stop");
        assert_eq!(log.counts(), (BATCH_RECORDS_MAX as u64 + 5, 0));
        let c = read_for(&path, 0xABCD, 4096).expect("read").expect("records");
        assert_eq!(c.records.len(), BATCH_RECORDS_MAX + 5);
        assert_eq!(c.records[..2], [rec(0, 1, 2), rec(1, u64::MAX / 4096, u32::MAX)]);
        assert_eq!(c.records[2 + BATCH_RECORDS_MAX + 2], rec(2, BATCH_RECORDS_MAX as u64 + 2, 7));
        assert!(c.batches >= 3, "the big hand-over is split into batches: {}", c.batches);
        assert_eq!(c.torn_tail_bytes, 0);
    }

    #[test]
    fn a_torn_last_batch_is_ignored_and_the_batches_before_it_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.durable");
        let mut bytes = encode_header(9, 512).to_vec();
        encode_batches(&[rec(0, 5, 1), rec(0, 6, 1)], &mut bytes);
        let whole = bytes.len();
        encode_batches(&[rec(0, 7, 3)], &mut bytes);
        // Every cut inside the last batch: it is ignored, the first is kept.
        for cut in whole..bytes.len() {
            let c = decode(&bytes[..cut], &path).expect("decode");
            assert_eq!(
                (c.records.len(), c.batches, c.torn_tail_bytes),
                (2, 1, (cut - whole) as u64),
                "cut {cut}"
            );
        }
        // A damaged byte in the last batch (a crash leaving garbage, not a short file): ignored as well.
        let mut damaged = bytes.clone();
        *damaged.last_mut().expect("a byte") ^= 0x40;
        let c = decode(&damaged, &path).expect("decode");
        assert_eq!((c.records, c.torn_tail_bytes), (vec![rec(0, 5, 1), rec(0, 6, 1)], 22));
        // Zeros after the last batch (a file extended but never written): a torn tail too.
        let mut zeros = bytes.clone();
        zeros.extend_from_slice(&[0; 100]);
        assert_eq!(decode(&zeros, &path).expect("decode").records.len(), 3);
        std::fs::write(&path, &bytes).expect("write");
        assert_eq!(read_for(&path, 9, 512).expect("read").expect("records").records.len(), 3);
    }

    #[test]
    fn a_log_of_another_run_is_refused_unless_it_holds_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j.durable");
        let mut bytes = encode_header(1, 4096).to_vec();
        std::fs::write(&path, &bytes).expect("write");
        assert_eq!(read_for(&path, 2, 4096).expect("an empty log is no evidence"), None);
        encode_batches(&[rec(0, 0, 1)], &mut bytes);
        std::fs::write(&path, &bytes).expect("write");
        let e = read_for(&path, 2, 4096).unwrap_err().to_string();
        assert!(e.contains("0000000000000001") && e.contains("remove it"), "{e}");
        let e = read_for(&path, 1, 512).unwrap_err().to_string();
        assert!(e.contains("4096-byte blocks"), "{e}");
        assert!(read_for(&path, 1, 4096).expect("read").is_some());
        assert_eq!(read_for(&dir.path().join("none"), 1, 4096).expect("absent"), None);
        // Not a log at all, a damaged header, and something that is not a file.
        std::fs::write(&path, b"IOLABJNL and more bytes than a header has, 32").expect("write");
        assert!(read_for(&path, 1, 4096).unwrap_err().to_string().contains("not an iolab durable-write log"));
        bytes[13] ^= 1;
        std::fs::write(&path, &bytes).expect("write");
        assert!(read_for(&path, 1, 4096).unwrap_err().to_string().contains("damaged header"));
        assert!(read_for(Path::new("/dev/zero"), 1, 4096)
            .unwrap_err()
            .to_string()
            .contains("not a regular file"));
    }

    #[test]
    fn a_full_queue_counts_what_it_cannot_take() {
        let dir = tempfile::tempdir().expect("tempdir");
        let place = JournalPlace::hold(&dir.path().join("j")).expect("hold");
        let log = DurableLog::create(&place, 1, 4096).expect("create");
        let mut a = vec![rec(0, 0, 1); QUEUE_RECORDS_MAX - 1];
        log.submit(&mut a);
        let mut b = vec![rec(0, 1, 1); 3];
        log.submit(&mut b);
        assert_eq!(log.counts(), (0, 2));
        log.not_logged(5);
        assert_eq!(log.counts(), (0, 7));
    }

    #[test]
    fn creating_a_log_never_follows_a_symlink_at_its_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep me").expect("write");
        let path = dir.path().join("j.durable");
        std::os::unix::fs::symlink(&victim, &path).expect("symlink");
        DurableLog::create(&JournalPlace::hold(&dir.path().join("j")).expect("hold"), 1, 4096)
            .expect("create");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"keep me");
        assert_eq!(std::fs::read(&path).expect("log").len(), HEADER_BYTES);
    }

    /// Issue 35, class 11: a log of gigabytes (its header, then zeros, as a sparse file reads) is read only
    /// as far as its first batch head; one of another version is refused from its header alone.
    #[test]
    fn a_huge_log_is_read_no_further_than_its_first_batch() {
        struct Counted<R>(R, u64);
        impl<R: Read> Read for Counted<R> {
            fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.read(b)?;
                self.1 += n as u64;
                Ok(n)
            }
        }
        let len = 2u64 << 30;
        let zeros = || std::io::repeat(0).take(len - HEADER_BYTES as u64);
        let path = Path::new("huge.durable");
        let h = encode_header(7, 4096);
        let mut r = Counted((&h[..]).chain(zeros()), 0);
        let c = decode_from(&mut r, len, path).expect("a log with no batch");
        assert!(c.records.is_empty() && c.torn_tail_bytes == len - HEADER_BYTES as u64);
        assert!(r.1 <= 64, "read {} bytes", r.1);
        let mut h = encode_header(7, 4096);
        h[8] = 9;
        let mut r = Counted((&h[..]).chain(zeros()), 0);
        let e = decode_from(&mut r, len, path).unwrap_err().to_string();
        assert!(e.contains("version 9"), "{e}");
        assert!(r.1 <= HEADER_BYTES as u64, "read {} bytes", r.1);
    }
}
