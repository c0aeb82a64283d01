//! Block I/O traces and miss-ratio curves.
//!
//! A *trace* is a file of records, one per op: when it was meant to start (and, when known, submitted and
//! completed), its kind, target, offset, length and result. This crate reads and writes iolab's own binary
//! format ([`binary`]: versioned, fixed-size little-endian records, a streaming [`TraceWriter`] for recording a
//! run), recognises and reads the formats users have by their content ([`open`]: the CloudPhysics/vscsi CSV,
//! the SNIA/MSR Cambridge CSV, fio iologs v2 and v3, blktrace binary output and `blkparse` text), exports CSV
//! ([`csv`]) and captures a live device's I/O through the kernel's block trace events ([`capture`], Linux,
//! root). A record that does not parse is a [`BadRecord`] with its line or record number, counted and kept
//! (the first [`BadRecords::KEPT`]), never dropped silently.
//!
//! [`mrc`] computes miss-ratio curves from a trace: exact LRU from stack distances, SHARDS spatial sampling,
//! and simulations of iolab's cache policies (ARC, S3-FIFO) at a set of sizes.

pub mod binary;
pub mod capture;
pub mod csv;
pub mod derive;
mod detect;
pub mod fidelity;
mod formats;
pub mod mrc;

pub use binary::{BackgroundWriter, TraceHeader, TraceReader, TraceSender, TraceWriter};
pub use detect::{detect, open, open_reader, Format, Trace};

use std::fmt;

/// What an op did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum TraceOp {
    /// A read.
    Read = 0,
    /// A write.
    Write = 1,
    /// A cache flush (fsync, SYNCHRONIZE CACHE, a preflush).
    Flush = 2,
    /// A discard (trim, UNMAP).
    Discard = 3,
    /// Anything else the source recorded (counted, never a reference to cached data).
    Other = 4,
}

impl TraceOp {
    /// Every kind, in code order.
    pub const ALL: [TraceOp; 5] =
        [TraceOp::Read, TraceOp::Write, TraceOp::Flush, TraceOp::Discard, TraceOp::Other];

    /// The name in CSV and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            TraceOp::Read => "read",
            TraceOp::Write => "write",
            TraceOp::Flush => "flush",
            TraceOp::Discard => "discard",
            TraceOp::Other => "other",
        }
    }

    /// The kind of a code of the binary format.
    pub fn from_code(code: u8) -> Option<TraceOp> {
        TraceOp::ALL.get(code as usize).copied()
    }

    /// The kind named `s` (as [`TraceOp::as_str`] writes it).
    pub fn from_name(s: &str) -> Option<TraceOp> {
        TraceOp::ALL.into_iter().find(|op| op.as_str() == s)
    }
}

/// One op of a trace. Times are nanoseconds since the trace's time origin (its first record for foreign
/// formats; see [`TraceHeader::clock_origin_unix_ns`] for iolab's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    /// When the op was meant to start: its intended start in an iolab run, the arrival or issue time of a
    /// foreign trace.
    pub start_ns: u64,
    /// When it was handed to the device, if recorded.
    pub submit_ns: Option<u64>,
    /// When it completed, if recorded.
    pub complete_ns: Option<u64>,
    /// Its kind.
    pub op: TraceOp,
    /// Index of its target in the trace's target names.
    pub target: u16,
    /// The worker that issued it (0 when the source has no such notion).
    pub worker: u16,
    /// Byte offset in the target.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
    /// Bytes transferred, or a negative errno, if recorded.
    pub result: Option<i32>,
}

impl TraceRecord {
    /// A record with only the fields every format has; the rest unknown.
    pub fn new(start_ns: u64, op: TraceOp, target: u16, offset: u64, len: u32) -> TraceRecord {
        TraceRecord {
            start_ns,
            submit_ns: None,
            complete_ns: None,
            op,
            target,
            worker: 0,
            offset,
            len,
            result: None,
        }
    }
}

/// A record that could not be read: where (a 1-based line number for text formats, a 0-based record number
/// for binary ones) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRecord {
    /// The line (text) or record (binary) number.
    pub line_or_record: u64,
    /// What was wrong, quoting the text when there is some.
    pub reason: String,
}

impl fmt::Display for BadRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.line_or_record, self.reason)
    }
}

/// Bad records met while reading: all are counted, the first [`BadRecords::KEPT`] kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BadRecords {
    /// How many there were.
    pub count: u64,
    /// The first of them.
    pub first: Vec<BadRecord>,
}

impl BadRecords {
    /// How many are kept with their reason.
    pub const KEPT: usize = 100;

    /// Counts one, keeping it if there is room.
    pub fn push(&mut self, line_or_record: u64, reason: impl Into<String>) {
        self.count += 1;
        if self.first.len() < Self::KEPT {
            self.first.push(BadRecord { line_or_record, reason: reason.into() });
        }
    }
}

/// Why a trace could not be read or written at all.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file's content is no format iolab reads.
    #[error("{path}: not a trace iolab reads ({why}); expected iolab's binary trace, a CloudPhysics CSV (version,time,op,size,lbn), an MSR Cambridge CSV (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), a fio iolog (v2 or v3), blktrace binary output or blkparse text")]
    Unrecognised {
        /// The file.
        path: String,
        /// What its start looked like.
        why: String,
    },
    /// The file is in a known format but broken beyond single records (a bad header).
    #[error("{path}: {why}")]
    Malformed {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl TraceError {
    pub(crate) fn io(path: &str, source: std::io::Error) -> TraceError {
        TraceError::Io { path: path.to_string(), source }
    }
}
