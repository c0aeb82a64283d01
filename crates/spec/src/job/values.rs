//! The values of the job keys that name one of a few choices: `rw`, `data`, `engine`, `prealloc`, `clock`,
//! `verify_fail`. Each key's definition ([`super::keys`]) parses its text into one of these.

use serde::{Deserialize, Serialize};

/// Fio-style read/write pattern shorthand; sets `read_pct` and `random_pct` unless those are given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    Randread,
    /// Random writes.
    Randwrite,
    /// Sequential mixed (50% reads unless `read_pct` says otherwise).
    Rw,
    /// Random mixed (50% reads unless `read_pct` says otherwise).
    Randrw,
}

impl Rw {
    /// (read %, random %) implied by the pattern.
    pub fn implied(self) -> (f64, f64) {
        match self {
            Rw::Read => (100.0, 0.0),
            Rw::Write => (0.0, 0.0),
            Rw::Randread => (100.0, 100.0),
            Rw::Randwrite => (0.0, 100.0),
            Rw::Rw => (50.0, 0.0),
            Rw::Randrw => (50.0, 100.0),
        }
    }
}

/// What written blocks contain.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DataPattern {
    /// Incompressible pseudo-random bytes, altered per write so no two writes are identical.
    #[default]
    Random,
    /// All zeros.
    Zero,
    /// `pct` percent of each 4 KiB chunk is zeros, the rest random (fio's buffer_compress_percentage).
    Compressible {
        /// Compressible share, 0..=100.
        pct: u8,
    },
}

/// A share of written blocks whose data repeats an earlier write's (fio's `dedupe_percentage`, `dedupe_mode`,
/// `dedupe_working_set_percentage`, `dedupe_global`): the `dedupe` key, `PCT[:set=PCT[:global]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dedupe {
    /// Percent of writes whose data is a copy of an earlier unique write's, 1..=100.
    pub pct: u8,
    /// Working-set mode (fio's `dedupe_mode=working_set`): a copy is of one of the worker's first unique
    /// writes, drawn uniformly, as many as this percent of its region in blocks of its smallest write size.
    /// `None`: a copy repeats the last unique write (fio's `repeat`, its default).
    pub working_set_pct: Option<u8>,
    /// The working set is shared by every worker whose `dedupe` says `global`, spread evenly among them
    /// (fio's `dedupe_global`): a copy may repeat another worker's write.
    pub global: bool,
}

impl Dedupe {
    /// Parses `PCT`, `PCT:set=PCT` or `PCT:set=PCT:global`; `Err` says what was expected.
    pub fn parse(text: &str) -> Result<Dedupe, String> {
        const EXPECTED: &str =
            "'PCT', 'PCT:set=PCT' or 'PCT:set=PCT:global' (e.g. '50:set=50:global'), each \
                                PCT a whole percentage, the two together at most 100";
        let mut parts = text.trim().split(':');
        let pct = |t: Option<&str>| t.and_then(|t| t.trim().trim_end_matches('%').parse::<u8>().ok());
        let Some(p) = pct(parts.next()).filter(|p| (1..=100).contains(p)) else {
            return Err(EXPECTED.into());
        };
        let set = match parts.next() {
            None => None,
            Some(s) => match pct(s.trim().strip_prefix("set=")) {
                Some(n) if n >= 1 && u16::from(n) + u16::from(p) <= 100 => Some(n),
                _ => return Err(EXPECTED.into()),
            },
        };
        let global = match parts.next() {
            None => false,
            Some("global") if set.is_some() => true,
            Some(_) => return Err(EXPECTED.into()),
        };
        if parts.next().is_some() {
            return Err(EXPECTED.into());
        }
        Ok(Dedupe { pct: p, working_set_pct: set, global })
    }
}

/// Which I/O engine runs file and device targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// io_uring where the kernel allows, else sync with a one-line notice.
    #[default]
    Auto,
    /// io_uring, or an error if unavailable.
    IoUring,
    /// pread/pwrite, one I/O at a time per worker.
    Sync,
}

impl EngineKind {
    /// What `text` names as the `engine` key (and `--engine`, `--ioengine`) takes it: iolab's names, and
    /// fio's asynchronous engines (libaio, posixaio), which run on io_uring ([`EngineKind::fio_note`]).
    pub fn named(text: &str) -> Option<EngineKind> {
        match text.trim() {
            "auto" => Some(EngineKind::Auto),
            "io_uring" | "uring" | "libaio" | "posixaio" => Some(EngineKind::IoUring),
            "sync" | "psync" => Some(EngineKind::Sync),
            _ => None,
        }
    }

    /// What a fio engine name becomes, said the same wherever it is given (a fio job file's `ioengine=libaio`,
    /// `iolab run --ioengine=libaio`): `None` for a name that is iolab's own.
    pub fn fio_note(text: &str) -> Option<String> {
        let name = text.trim();
        matches!(name, "libaio" | "posixaio").then(|| {
            format!("ioengine {name} is fio's: iolab has no {name} engine and runs the job on io_uring (asynchronous I/O, as {name}'s)")
        })
    }
}

/// How iolab lays out a file it creates (or the part it adds to a file it extends): the `prealloc` key,
/// `--prealloc` flag. fio's `fallocate=` option, plus whether the bytes are written before the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Prealloc {
    /// Reserve the whole size in one `fallocate(2)` call (contiguous where the file system can), then write
    /// data over it, so reads never hit holes or unwritten extents. The default (fio: `fallocate=native`
    /// and its layout writes).
    #[default]
    Fallocate,
    /// No reservation: the data is written sequentially, 1 MiB at a time, and the file system allocates as
    /// the writes come (fio: `fallocate=none` with its layout writes).
    Write,
    /// Reserved in one `fallocate(2)` call and never written: unwritten extents, which read as zeros without
    /// touching the device and which the file system converts as the run's writes land (each fdatasync then
    /// also commits that conversion). The layout of logs made ahead and filled as they go: etcd's WAL
    /// segments (`fallocate(fd, 0, 0, 64 MiB)`), fio's own files for a write job. A write smaller than a
    /// page then needs no read of the page first.
    Reserve,
    /// Nothing allocated or written: the file is created empty (a smaller one left as it is), and the run's own
    /// writes grow and allocate it, as appending writers do: the fragmenting case (fio: `fallocate=none` on a
    /// write job, which fio does not lay out). Reads of what the run has not written yet are short (past the
    /// end of the file) or hit holes.
    None,
}

impl Prealloc {
    /// The key's value, as typed: `fallocate`, `write`, `reserve` or `none`.
    pub fn as_str(self) -> &'static str {
        match self {
            Prealloc::Fallocate => "fallocate",
            Prealloc::Write => "write",
            Prealloc::Reserve => "reserve",
            Prealloc::None => "none",
        }
    }
}

/// Which clock runs the workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// The monotonic clock.
    #[default]
    Real,
    /// Virtual time: only for emulated (`sim:`) targets; time jumps from event to event, so runs are
    /// deterministic and take no wall time. For tests and what-if runs.
    Virtual,
}

/// What to do when verification finds a bad block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyFail {
    /// Stop the run at the first mismatch (the default).
    #[default]
    Stop,
    /// Count every mismatch and go on.
    Continue,
}
