//! iolab-cache: a block cache in front of any target, shared by all workers of a run.
//!
//! The cache is engine- and clock-agnostic: it decides and copies, the engine (iolab-engine `CacheEngine`)
//! issues the I/Os. A read either hits (every line of it is cached: the data is copied into the caller's
//! buffer now) or is forwarded to the target with a [`ForwardTicket`]; a write is absorbed (write-back) or forwarded
//! with a ticket. When a forwarded op completes, the caller hands the ticket back ([`Cache::finish`]), and the
//! cache fills lines from a read, updates or invalidates lines after a write, and overlays cached lines that
//! are newer than the target onto the read's buffer. Dirty lines go back to the target through
//! [`Cache::next_write_back`] / [`Cache::finish_write_back`].
//!
//! Coherence rule: a read issued after a write was acknowledged never returns older data, whatever the
//! interleaving of concurrent ops: a fill whose lines were written while it was in flight is not inserted, a
//! dirty line stays readable until its write-back is acknowledged, and a read that reaches the target gets
//! newer cached lines copied over what the target returned.
//!
//! How each part of that holds (docs/CACHE.md has the full rules): every forwarded op notes, per line, a
//! write count of the line's bucket at issue; writes and write-backs bump it at start and end, and forwarded
//! writes are also counted as in flight. A fill or write-allocate happens only if the count did not move and
//! no forwarded write to the line is in flight. A forwarded read keeps a copy of the lines that were dirty
//! when it was issued, for the case where they were written back and evicted before it completed. A clean
//! line that raced with another write is dropped, so the target decides. In write-back mode a forwarded write
//! puts its bytes into the cached lines at issue (dirty), so every write-back from then on carries them.
//!
//! Policies ([`policy`]): LRU, ARC and S3-FIFO (1-bit). The index is sharded by line, one lock per shard
//! (one shard below 1024 lines, so the policy is exact). The policy's index is the only map from line to
//! data: each resident key carries its data slot. Data lives in per-shard chunks allocated as lines are first
//! filled; nothing is allocated per op on the hit path or the steady-state miss path.
//!
//! Obligations of the caller: finish every ticket exactly once (with `ok = false` on error) and every write-back
//! exactly once; until then the lines involved stay marked in flight (no fills there) or being written back.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod cache;
mod counts;
mod index;
mod line;
mod lock;
pub mod policy;
mod registry;
pub mod seq;
mod shard;
mod slab;
#[cfg(test)]
mod tests;
mod write_back;

pub use cache::{Cache, CacheConfig, CacheError, DeviceIo, ForwardTicket, ReadOutcome, WriteOutcome};
pub use iolab_doc::CacheStats;
pub use iolab_spec::{CacheMode, CachePolicy};
pub use seq::SeqDetector;
pub use write_back::WriteBack;
