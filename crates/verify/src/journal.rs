//! The journal (`--journal FILE`): the acknowledged generation of every block, durable, so that `iolab verify
//! TARGET --journal FILE` after a crash, a `kill -9` or a reboot can check every block against its last
//! acknowledged write.
//!
//! # Format (version 1, little-endian)
//!
//! ```text
//!  0  8  magic "IOLABJNL"
//!  8  4  version (1)
//! 12  4  flags: bit 0 = final (written after the last write of the run completed)
//! 16  8  run id
//! 24  4  block_bytes
//! 28  4  target count T
//! 32  8  sequence (0 = the empty journal written before the first write, then 1, 2, ..)
//! 40     T target records: size_bytes u64, block count u64, name length u32, name (UTF-8)
//!        T generation arrays, one per target in order: block count x u32, the oldest generation whose data
//!        may be in the block (0: none required), then ceil(block count / 8) bytes, bit i%8 of byte i/8 set
//!        when block i was quiescent and clean (exactly that generation)
//! end-4  4  crc32c of everything before
//! ```
//!
//! 4.125 bytes per block: a 1 TiB target in 4 KiB blocks has a 1.1 GB journal.
//!
//! # Crash ordering
//!
//! A journal is written whole into `FILE.tmp` and renamed over `FILE`, so a crash leaves the previous journal
//! or the new one, never a mix. One checkpoint:
//!
//! 1. read the generation map into `FILE.tmp` (buffered, not yet durable): every generation recorded was
//!    acknowledged before this step read it;
//! 2. `fdatasync` every target file: every write acknowledged before step 2 began, so every generation in
//!    the journal, is now on stable media;
//! 3. `fdatasync` `FILE.tmp`, rename it to `FILE`, `fsync` the directory.
//!
//! A journal that is durable therefore never names a generation that was not durable first, so a crash can
//! never make a block look older than the journal says (no false lost write). Writes acknowledged after step 1
//! may or may not have landed, in whole or torn: `iolab verify` accepts any generation at least as new as the
//! journal's, and does not judge a block whose checksum fails when all its sectors are at least that new.
//! Only a final journal (flag bit 0, written after every write completed) vouches that a clean block holds
//! exactly its generation, so only then is a checksum failure at the journal's generation an error.

use crate::VerifyError;
use nix::fcntl::{openat, renameat, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::{unlinkat, UnlinkatFlags};
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Where a journal is kept: its directory, held open from the start of the run, and its name there. The
/// checkpoint's temporary file (`FILE.tmp`), the rename over the journal, the durable-write log beside it
/// (`FILE.durable`) and the directory's sync are all relative to the held directory, never to a path looked
/// up again: a directory swapped for a symlink mid-run changes nothing iolab writes.
#[derive(Debug)]
pub struct JournalPlace {
    dir: File,
    name: OsString,
    path: PathBuf,
}

impl JournalPlace {
    /// Holds the directory of the journal at `path`.
    pub fn hold(path: &Path) -> Result<JournalPlace, VerifyError> {
        let name = path.file_name().map(|n| n.to_os_string()).ok_or_else(|| err(path, "names no file"))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let held = OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC).open(&dir);
        let dir =
            held.map_err(|e| err(path, format!("cannot open its directory '{}': {e}", dir.display())))?;
        Ok(JournalPlace { dir, name, path: path.to_path_buf() })
    }

    /// The journal at `path` in `dir`, its directory as the write gate opened and held it at the claim
    /// (`WriteGate::journal`): the run writes where the gate checked.
    pub fn in_dir(dir: File, path: &Path) -> Result<JournalPlace, VerifyError> {
        let name = path.file_name().map(|n| n.to_os_string()).ok_or_else(|| err(path, "names no file"))?;
        Ok(JournalPlace { dir, name, path: path.to_path_buf() })
    }

    /// The journal's path (as given: for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The name of the file beside the journal with `suffix` (`.tmp`, `.durable`).
    fn beside(&self, suffix: &str) -> OsString {
        let mut n = self.name.clone();
        n.push(suffix);
        n
    }

    /// The path of that file, for messages.
    pub(crate) fn beside_path(&self, suffix: &str) -> PathBuf {
        let mut p = self.path.as_os_str().to_owned();
        p.push(suffix);
        PathBuf::from(p)
    }

    /// Creates the file beside the journal with `suffix`, O_EXCL|O_NOFOLLOW (so nothing at that name is
    /// followed or truncated), for appending with `append`.
    pub(crate) fn create_new(&self, suffix: &str, append: bool) -> std::io::Result<File> {
        let mut flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        if append {
            flags |= OFlag::O_APPEND;
        }
        Ok(File::from(openat(
            &self.dir,
            self.beside(suffix).as_os_str(),
            flags,
            Mode::from_bits_truncate(0o644),
        )?))
    }

    /// Removes the file beside the journal with `suffix` (a symlink there, not what it names); none there is
    /// no error.
    pub(crate) fn remove(&self, suffix: &str) -> std::io::Result<()> {
        match unlinkat(&self.dir, self.beside(suffix).as_os_str(), UnlinkatFlags::NoRemoveDir) {
            Err(nix::errno::Errno::ENOENT) => Ok(()),
            other => Ok(other?),
        }
    }

    /// Renames the file beside the journal with `suffix` over the journal.
    fn rename_over(&self, suffix: &str) -> std::io::Result<()> {
        Ok(renameat(&self.dir, self.beside(suffix).as_os_str(), &self.dir, self.name.as_os_str())?)
    }

    /// Makes the held directory's entries durable (a rename, a creation).
    pub(crate) fn sync(&self) -> Result<(), VerifyError> {
        self.dir.sync_all().map_err(|e| err(&self.path, format!("cannot sync its directory: {e}")))
    }
}

/// Journal magic.
pub const MAGIC: &[u8; 8] = b"IOLABJNL";
/// The version this code writes and reads.
pub const VERSION: u32 = 1;
const FLAG_FINAL: u32 = 1;

/// One target's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalTarget {
    /// Name as in the run.
    pub name: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Verification blocks.
    pub blocks: u64,
}

/// The header of a journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalHeader {
    /// Written after the run's last write completed.
    pub final_: bool,
    /// The run's id.
    pub run_id: u64,
    /// Verification block.
    pub block_bytes: u32,
    /// Checkpoint number.
    pub sequence: u64,
    /// Targets in run order.
    pub targets: Vec<JournalTarget>,
}

/// A journal read back.
#[derive(Clone, Debug)]
pub struct Journal {
    /// Its header.
    pub header: JournalHeader,
    /// Per target: per block, the oldest generation whose data may be there.
    pub floors: Vec<Vec<u32>>,
    /// Per target: bitmap of the blocks that were exactly their generation.
    pub exact: Vec<Vec<u8>>,
}

impl Journal {
    /// Block `i` of target `t` must be exactly its generation (final journal, quiescent and clean block).
    pub fn is_exact(&self, t: usize, i: u64) -> bool {
        self.header.final_ && self.exact[t][(i / 8) as usize] & (1 << (i % 8)) != 0
    }
}

fn err(path: &Path, reason: impl Into<String>) -> VerifyError {
    VerifyError::Journal { path: path.display().to_string(), reason: reason.into() }
}

/// A writer that checksums what passes through.
struct Crc<W: Write> {
    w: W,
    crc: u32,
}

impl<W: Write> Write for Crc<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.w.write(b)?;
        self.crc = crc32c::crc32c_append(self.crc, &b[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// The temporary file a checkpoint writes before renaming it over the journal.
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Step 1 of a checkpoint: writes the journal into `FILE.tmp` (not yet durable) with `entry(t, i)` = (floor,
/// exact) for block i of target t, read now. Returns the open file for [`commit`].
pub fn write_tmp(
    place: &JournalPlace,
    h: &JournalHeader,
    mut entry: impl FnMut(usize, u64) -> (u32, bool),
) -> Result<File, VerifyError> {
    let (path, tmp) = (place.path(), tmp_path(place.path()));
    let io = |e: std::io::Error| err(path, format!("cannot write '{}': {e}", tmp.display()));
    let file = create_tmp(place).map_err(io)?;
    let mut w = Crc { w: BufWriter::with_capacity(1 << 20, file), crc: 0 };
    w.write_all(MAGIC).map_err(io)?;
    w.write_all(&VERSION.to_le_bytes()).map_err(io)?;
    w.write_all(&(if h.final_ { FLAG_FINAL } else { 0 }).to_le_bytes()).map_err(io)?;
    w.write_all(&h.run_id.to_le_bytes()).map_err(io)?;
    w.write_all(&h.block_bytes.to_le_bytes()).map_err(io)?;
    w.write_all(&(h.targets.len() as u32).to_le_bytes()).map_err(io)?;
    w.write_all(&h.sequence.to_le_bytes()).map_err(io)?;
    for t in &h.targets {
        w.write_all(&t.size_bytes.to_le_bytes()).map_err(io)?;
        w.write_all(&t.blocks.to_le_bytes()).map_err(io)?;
        w.write_all(&(t.name.len() as u32).to_le_bytes()).map_err(io)?;
        w.write_all(t.name.as_bytes()).map_err(io)?;
    }
    let mut bits = Vec::new();
    for (ti, t) in h.targets.iter().enumerate() {
        bits.clear();
        bits.resize(t.blocks.div_ceil(8) as usize, 0u8);
        for i in 0..t.blocks {
            let (floor, exact) = entry(ti, i);
            w.write_all(&floor.to_le_bytes()).map_err(io)?;
            if exact {
                bits[(i / 8) as usize] |= 1 << (i % 8);
            }
        }
        w.write_all(&bits).map_err(io)?;
    }
    let crc = w.crc;
    let mut inner = w.w;
    inner.write_all(&crc.to_le_bytes()).map_err(io)?;
    inner.into_inner().map_err(|e| io(e.into_error()))
}

/// Creates the checkpoint's temporary file with O_EXCL (which also refuses a symlink, dangling or not), so
/// nothing at that name is ever followed or truncated. One there already is a leftover of an interrupted
/// checkpoint (the write gate checked before the run that it is an iolab journal or absent) or a symlink
/// someone put there: the name is removed (a symlink, not what it points to) and created anew.
fn create_tmp(place: &JournalPlace) -> std::io::Result<File> {
    match place.create_new(".tmp", false) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            place.remove(".tmp")?;
            place.create_new(".tmp", false)
        }
        other => other,
    }
}

/// Step 3 of a checkpoint: makes `FILE.tmp` durable and renames it over the journal, then makes the rename
/// durable. Call only after the targets were synced (step 2).
pub fn commit(place: &JournalPlace, tmp_file: File) -> Result<(), VerifyError> {
    let (path, tmp) = (place.path(), tmp_path(place.path()));
    tmp_file.sync_data().map_err(|e| err(path, format!("cannot sync '{}': {e}", tmp.display())))?;
    drop(tmp_file);
    place
        .rename_over(".tmp")
        .map_err(|e| err(path, format!("cannot rename '{}' over it: {e}", tmp.display())))?;
    // Without this the rename may not survive a crash; the previous journal (older generations, still valid)
    // would then be read, which is safe, but the new one is what the user asked for.
    place.sync()
}

/// Most targets a journal may name, and the longest name: a header past them is damage, refused before
/// anything is allocated for it.
const MAX_TARGETS: u32 = 1 << 16;
/// The longest target name a journal may hold.
const MAX_NAME_BYTES: u32 = 4096;
/// The header up to the first target: magic, version, flags, run id, block size, target count, sequence.
const FIXED_HEADER_BYTES: u64 = 40;
/// A target's record before its name: size, blocks, name length.
const TARGET_RECORD_BYTES: u64 = 20;

/// A journal file read as a stream, its checksum kept as it goes: every read is of a size the header has
/// already checked against the file's length.
struct Stream<'a> {
    r: std::io::BufReader<std::io::Take<File>>,
    crc: u32,
    at: u64,
    len: u64,
    path: &'a Path,
}

impl Stream<'_> {
    /// Fills `buf` from the file (checksummed), or says it is truncated.
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), VerifyError> {
        self.r.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => {
                err(self.path, format!("truncated: {} bytes, more expected after byte {}", self.len, self.at))
            }
            _ => err(self.path, format!("cannot read: {e}")),
        })?;
        self.crc = crc32c::crc32c_append(self.crc, buf);
        self.at += buf.len() as u64;
        Ok(())
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], VerifyError> {
        let mut b = [0u8; N];
        self.fill(&mut b)?;
        Ok(b)
    }
    fn u32(&mut self) -> Result<u32, VerifyError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, VerifyError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// `n` bytes, `n` already checked against the file's length.
    fn bytes(&mut self, n: u64) -> Result<Vec<u8>, VerifyError> {
        let mut b = Vec::new();
        b.try_reserve_exact(n as usize).map_err(|_| self.too_large())?;
        b.resize(n as usize, 0);
        self.fill(&mut b)?;
        Ok(b)
    }
    /// `n` little-endian u32s, `n` already checked against the file's length, read in chunks.
    fn u32s(&mut self, n: u64) -> Result<Vec<u32>, VerifyError> {
        let mut v = Vec::new();
        v.try_reserve_exact(n as usize).map_err(|_| self.too_large())?;
        let mut chunk = vec![0u8; 64 << 10];
        let mut left = n as usize * 4;
        while left > 0 {
            let part = &mut chunk[..left.min(64 << 10)];
            self.fill(part)?;
            v.extend(part.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))));
            left -= part.len();
        }
        Ok(v)
    }
    fn too_large(&self) -> VerifyError {
        err(self.path, format!("too large to read into memory ({} bytes)", self.len))
    }
}

/// Reads and checks a journal.
///
/// Only a regular file is read, and only once its first bytes are a journal's magic. The header comes first,
/// in fixed-size reads: its version, block size, target count and name lengths are checked against hard caps
/// (65,536 targets, names of 4 KiB), and the length it describes against the file's, before anything is
/// allocated for the generation arrays, which are then streamed (a FIFO, `/dev/zero` or a sparse file of
/// gigabytes named as a journal is refused from its first bytes, never read whole).
pub fn read(path: &Path) -> Result<Journal, VerifyError> {
    let f = File::open(path).map_err(|e| err(path, format!("cannot open: {e}")))?;
    let meta = f.metadata().map_err(|e| err(path, format!("cannot inspect: {e}")))?;
    if !meta.is_file() {
        return Err(err(path, "not a regular file; expected the file a run wrote with --journal"));
    }
    let len = meta.len();
    let mut r = Stream { r: std::io::BufReader::new(f.take(len)), crc: 0, at: 0, len, path };
    let not_a_journal = || {
        err(path, "not an iolab journal (no IOLABJNL magic); expected the file a run wrote with --journal")
    };
    if len < 8 || &r.array::<8>()? != MAGIC {
        return Err(not_a_journal());
    }
    if len < FIXED_HEADER_BYTES + 4 {
        return Err(err(path, format!("truncated: {len} bytes")));
    }
    let version = r.u32()?;
    if version != VERSION {
        return Err(err(path, format!("journal version {version}; this iolab reads version {VERSION}")));
    }
    let flags = r.u32()?;
    let run_id = r.u64()?;
    let block_bytes = r.u32()?;
    if !block_bytes.is_power_of_two() || !(512..=1 << 20).contains(&block_bytes) {
        return Err(err(path, format!("damaged: block size {block_bytes}")));
    }
    let count = r.u32()?;
    if count > MAX_TARGETS {
        return Err(err(path, format!("damaged: {count} targets (at most {MAX_TARGETS})")));
    }
    let sequence = r.u64()?;
    let targets = read_targets(&mut r, count, block_bytes)?;
    check_length(&r, &targets)?;
    let mut floors = Vec::with_capacity(targets.len());
    let mut exact = Vec::with_capacity(targets.len());
    for t in &targets {
        floors.push(r.u32s(t.blocks)?);
        exact.push(r.bytes(t.blocks.div_ceil(8))?);
    }
    let computed = r.crc;
    if r.u32()? != computed {
        return Err(err(path, "damaged: its checksum does not match its contents"));
    }
    Ok(Journal {
        header: JournalHeader { final_: flags & FLAG_FINAL != 0, run_id, block_bytes, sequence, targets },
        floors,
        exact,
    })
}

/// Reads the header's `count` target records, each name at most [`MAX_NAME_BYTES`] and within the file.
fn read_targets(r: &mut Stream<'_>, count: u32, block_bytes: u32) -> Result<Vec<JournalTarget>, VerifyError> {
    let mut targets = Vec::new();
    for _ in 0..count {
        if r.at + TARGET_RECORD_BYTES > r.len {
            return Err(err(r.path, format!("truncated: {} bytes, more targets expected", r.len)));
        }
        let size_bytes = r.u64()?;
        let blocks = r.u64()?;
        let n = r.u32()?;
        if n > MAX_NAME_BYTES || r.at + u64::from(n) > r.len {
            return Err(err(r.path, format!("damaged: a target name of {n} bytes")));
        }
        let name = String::from_utf8_lossy(&r.bytes(u64::from(n))?).into_owned();
        if blocks != size_bytes / block_bytes as u64 {
            return Err(err(
                r.path,
                format!("damaged: target '{name}' has {blocks} blocks for {size_bytes} bytes"),
            ));
        }
        targets.push(JournalTarget { name, size_bytes, blocks });
    }
    Ok(targets)
}

/// Refuses a journal whose header describes another length than the file's: the generation arrays (4 bytes
/// and a bit a block) and the checksum must end exactly at its end.
fn check_length(r: &Stream<'_>, targets: &[JournalTarget]) -> Result<(), VerifyError> {
    let arrays = targets.iter().try_fold(0u64, |sum, t| {
        sum.checked_add(t.blocks.checked_mul(4)?)?.checked_add(t.blocks.div_ceil(8))
    });
    let described = arrays.and_then(|a| a.checked_add(r.at + 4));
    match described {
        Some(d) if d == r.len => Ok(()),
        Some(d) if d > r.len => {
            Err(err(r.path, format!("truncated: {} bytes of the {d} its header describes", r.len)))
        }
        Some(d) => Err(err(r.path, format!("damaged: {} bytes after the generation arrays", r.len - d))),
        None => Err(err(r.path, "damaged: its header describes more blocks than a file can hold")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checkpoint file's name was opened with create+truncate, following a symlink: whoever put one at
    /// `FILE.tmp` had the file it names truncated and overwritten.
    #[test]
    fn a_checkpoint_never_follows_what_is_at_its_temporary_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep me").expect("write");
        std::os::unix::fs::symlink(&victim, tmp_path(&path)).expect("symlink");
        let h = JournalHeader { final_: true, run_id: 1, block_bytes: 4096, sequence: 1, targets: vec![] };
        let f = write_tmp(&JournalPlace::hold(&path).unwrap(), &h, |_, _| (0, false)).expect("write");
        commit(&JournalPlace::hold(&path).unwrap(), f).expect("commit");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"keep me");
        assert!(read(&path).is_ok());
    }

    /// Issue 35, class 3: the journal's directory is held from the start of the run. Swapped for a symlink
    /// to another directory mid-run, the next checkpoint and the durable-write log still land where the run
    /// began; the other directory gets nothing.
    #[test]
    fn checkpoints_land_in_the_held_directory_though_it_was_swapped_for_a_symlink() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (kept, moved, elsewhere) =
            (dir.path().join("kept"), dir.path().join("moved"), dir.path().join("elsewhere"));
        std::fs::create_dir(&kept).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        let place = JournalPlace::hold(&kept.join("j")).unwrap();
        let h = JournalHeader { final_: false, run_id: 7, block_bytes: 4096, sequence: 1, targets: vec![] };
        commit(&place, write_tmp(&place, &h, |_, _| (0, false)).unwrap()).unwrap();
        std::fs::rename(&kept, &moved).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &kept).unwrap();
        let h = JournalHeader { sequence: 2, ..h };
        commit(&place, write_tmp(&place, &h, |_, _| (0, false)).unwrap()).unwrap();
        crate::durable::DurableLog::create(&place, 7, 4096).unwrap();
        assert_eq!(read(&moved.join("j")).unwrap().header.sequence, 2);
        assert!(moved.join("j.durable").exists());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing through the symlink");
    }

    #[test]
    fn journal_round_trips_and_rejects_damage() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("j");
        let h = JournalHeader {
            final_: true,
            run_id: 0xABCD,
            block_bytes: 4096,
            sequence: 3,
            targets: vec![
                JournalTarget { name: "a".into(), size_bytes: 40960, blocks: 10 },
                JournalTarget { name: "bb".into(), size_bytes: 8192, blocks: 2 },
            ],
        };
        let f = write_tmp(&JournalPlace::hold(&path).unwrap(), &h, |t, i| {
            (t as u32 * 100 + i as u32, i % 3 == 0)
        })
        .expect("write");
        commit(&JournalPlace::hold(&path).unwrap(), f).expect("commit");
        assert!(!tmp_path(&path).exists());
        let j = read(&path).expect("read");
        assert_eq!(j.header, h);
        assert_eq!(j.floors[0], (0..10).collect::<Vec<u32>>());
        assert_eq!(j.floors[1], vec![100, 101]);
        assert!(j.is_exact(0, 0) && !j.is_exact(0, 1) && j.is_exact(0, 9) && j.is_exact(1, 0));

        let mut bytes = std::fs::read(&path).expect("bytes");
        bytes[60] ^= 1;
        std::fs::write(&path, &bytes).expect("write");
        assert!(read(&path).unwrap_err().to_string().contains("checksum"));
        std::fs::write(&path, b"hello world, not a journal at all").expect("write");
        assert!(read(&path).unwrap_err().to_string().contains("not an iolab journal"));
    }
}

#[cfg(test)]
mod bounded_tests {
    use super::*;

    /// Issue 24, item 8: a journal is read only when it is a regular file with the magic; `/dev/zero` is
    /// refused at once instead of read until memory runs out.
    #[test]
    fn a_journal_that_is_not_a_regular_file_is_refused_unread() {
        let e = read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("big");
        std::fs::write(&other, vec![0u8; 1 << 20]).unwrap();
        let e = read(&other).unwrap_err().to_string();
        assert!(e.contains("not an iolab journal"), "{e}");
    }

    /// Issue 35, class 11: a journal's header is checked before its body is read: a sparse file of 2 GiB
    /// holding only the magic and another version, and one whose header describes more than the file holds,
    /// are refused from their first bytes.
    #[test]
    fn a_journal_is_refused_from_its_header_before_its_body_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let mut head = MAGIC.to_vec();
        head.extend_from_slice(&7u32.to_le_bytes());
        std::fs::write(&path, &head).unwrap();
        File::options().write(true).open(&path).unwrap().set_len(2 << 30).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("journal version 7"), "{e}");
        // A valid header naming a target of 2^40 blocks, then nothing: refused by its length.
        let h = JournalHeader {
            final_: true,
            run_id: 1,
            block_bytes: 4096,
            sequence: 1,
            targets: vec![JournalTarget { name: "t".into(), size_bytes: 4096 << 40, blocks: 1 << 40 }],
        };
        let mut b = MAGIC.to_vec();
        for v in [VERSION, FLAG_FINAL] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&h.run_id.to_le_bytes());
        b.extend_from_slice(&h.block_bytes.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&h.sequence.to_le_bytes());
        b.extend_from_slice(&h.targets[0].size_bytes.to_le_bytes());
        b.extend_from_slice(&h.targets[0].blocks.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.push(b't');
        b.extend_from_slice(&[0u8; 64]);
        std::fs::write(&path, &b).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("truncated") && e.contains("its header describes"), "{e}");
    }
}
