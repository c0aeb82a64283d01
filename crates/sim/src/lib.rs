//! iolab-sim: emulated storage. Device models (`sim:fixed`, `sim:hdd`, `sim:ssd`, `sim:array`), the timing of a
//! storage link (`link:`), and the sparse store that keeps what was written to an emulated device.
//!
//! A model is a discrete-event simulation driven by its caller's clock (real or virtual nanoseconds): requests
//! are [`Model::submit`]ted at a time, [`Model::next_event_ns`] says when something next changes, and
//! [`Model::advance`] moves the model to a time and returns what completed by then, each with its exact
//! completion time. Models never read a clock and never sleep, so on virtual time a run is exact and
//! deterministic for its seed; the engine (iolab-engine `SimEngine`) does the waiting.
//!
//! Every device sits behind its write cache ([`wcache::Cached`]: volatile, power-loss protected or
//! write-through, per preset and `wcache=`), which answers flushes, durable writes and trims on the same clock.
//!
//! A device may be shared by several workers: [`SharedDevice`] puts one model behind a lock and routes each
//! completion back to the worker (client) that submitted it.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bench;
pub mod check;
pub mod link;
pub mod models;
pub mod shared;
pub mod store;
pub mod wcache;

pub use iolab_spec::sim::{WriteCache, WriteCacheParams};
pub use link::{LinkTiming, Linked};
pub use shared::SharedDevice;
pub use store::SparseStore;
pub use wcache::Cached;

/// What a request asks of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqKind {
    /// Read `len` bytes at `offset`.
    Read,
    /// Write `len` bytes at `offset`.
    Write,
    /// Make stable every write that completed before the flush was submitted (Linux `REQ_PREFLUSH`, SCSI
    /// SYNCHRONIZE CACHE, NVMe Flush); offset 0 and len 0. Writes still in flight are not covered.
    Flush,
    /// Discard `[offset, offset + len)` (TRIM, UNMAP, deallocate): a small fixed cost, and any dirty data of
    /// the range still in the write cache is dropped instead of written.
    Trim,
}

/// One request to an emulated device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The caller's tag, returned in [`Done`]. Below 2^62 (a write cache's own media requests use the top two
    /// bits); below 2^32 when the device is a [`SharedDevice`].
    pub tag: u64,
    /// Read, write, flush or trim.
    pub kind: ReqKind,
    /// For a write: FUA / `O_DSYNC` semantics, it completes only once its data, and every write completed
    /// before it was submitted, are on stable media. Ignored for other kinds.
    pub durable: bool,
    /// Byte offset on the device (0 for a flush).
    pub offset: u64,
    /// Length in bytes (0 for a flush).
    pub len: u32,
}

impl Request {
    /// A read.
    pub const fn read(tag: u64, offset: u64, len: u32) -> Request {
        Request { tag, kind: ReqKind::Read, durable: false, offset, len }
    }

    /// A plain (cached) write.
    pub const fn write(tag: u64, offset: u64, len: u32) -> Request {
        Request { tag, kind: ReqKind::Write, durable: false, offset, len }
    }

    /// A durable write (FUA / `O_DSYNC`).
    pub const fn durable_write(tag: u64, offset: u64, len: u32) -> Request {
        Request { tag, kind: ReqKind::Write, durable: true, offset, len }
    }

    /// A flush.
    pub const fn flush(tag: u64) -> Request {
        Request { tag, kind: ReqKind::Flush, durable: false, offset: 0, len: 0 }
    }

    /// A trim of `[offset, offset + len)`.
    pub const fn trim(tag: u64, offset: u64, len: u32) -> Request {
        Request { tag, kind: ReqKind::Trim, durable: false, offset, len }
    }

    /// What a media model (behind the write cache, see [`wcache`]) does: (write, bytes moved). Reads and
    /// writes are themselves; a flush or trim that reaches a media model directly is a command without data.
    pub fn media_op(&self) -> (bool, u32) {
        match self.kind {
            ReqKind::Read => (false, self.len),
            ReqKind::Write => (true, self.len),
            ReqKind::Flush | ReqKind::Trim => (true, 0),
        }
    }
}

/// One completed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// The request's tag.
    pub tag: u64,
    /// When it completed, on the caller's clock (never after the `now` passed to [`Model::advance`]).
    pub at_ns: u64,
}

/// How full a device's write-back cache ([`wcache::Cached`]) got over a run: whether the media behind it was
/// ever the limit. A write waits for room only once the cache holds `size_bytes` of dirty data (or its
/// extents); until then every write completes at the cache's speed, whatever the media can take.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WriteCacheFill {
    /// The cache's size.
    pub size_bytes: u64,
    /// Volatile (lost on power failure), else power-loss protected.
    pub volatile: bool,
    /// Bytes of the writes it took.
    pub taken_bytes: u64,
    /// The most dirty data it held at once (on its way to the media included).
    pub peak_dirty_bytes: u64,
    /// Writes that found it full and waited for room: the media was the limit for them.
    pub waited_writes: u64,
    /// From the first write it took to the moment it held its most dirty data, on the caller's clock.
    pub growth_ns: u64,
}

/// A device model: a discrete-event simulation on its caller's clock.
///
/// Contract. The caller's side: calls come with non-decreasing times; `submit(now, ..)` is only called after
/// `advance(now, ..)` (so the model has processed everything up to `now`); at most `max_in_flight` (given at
/// build) requests are in the model at once. The model's side: every request completes exactly once, never
/// before its submission and never after the `now` of the `advance` that returns it, completions come in
/// time order (across calls too: none before an earlier `advance`'s `now`); after `advance(now)` the next
/// event is later than `now`, and there is one while requests are in flight; `in_flight()` is the requests
/// submitted minus those completed; nothing allocates once built. [`check::Checked`] asserts all but the
/// last on every call (in debug builds, around every model [`build`] and [`build_target`] return); the
/// property tests (crates/sim/tests/props.rs) check all of it over many seeds.
pub trait Model: Send {
    /// A request arrives at the device at `now_ns`.
    fn submit(&mut self, now_ns: u64, req: Request);
    /// The earliest time at which a request may complete or the device's state changes (a write cache
    /// draining in the background counts); None when nothing is pending.
    fn next_event_ns(&self) -> Option<u64>;
    /// Moves the device to `now_ns` and appends every request completed by then, in completion order.
    fn advance(&mut self, now_ns: u64, done: &mut Vec<Done>);
    /// Requests submitted and not yet completed.
    fn in_flight(&self) -> usize;
    /// The mean service time of one request of `len` bytes on an idle device with uniformly random offsets
    /// over the whole device (the analytic figure tests and the precision table compare against).
    fn expected_service_ns(&self, write: bool, len: u32) -> f64;
    /// How full the device's write-back cache got so far, when it has one (the outermost: an array's own
    /// cache, not its members'); None for a write-through device.
    fn write_cache_fill(&self) -> Option<WriteCacheFill> {
        None
    }
}

/// Builds the model for `spec`, deterministic for `seed`, with room for `max_in_flight` requests.
/// In debug builds the model is behind [`check::Checked`], which asserts the [`Model`] contract on every call.
pub fn build(spec: &iolab_spec::SimSpec, seed: u64, max_in_flight: usize) -> Box<dyn Model> {
    check::in_debug(models::build(spec, seed, max_in_flight), max_in_flight)
}

/// Builds the model for an emulated target: a `sim:` device, or a `link:` (any depth) in front of one, as one
/// [`Model`] whose completion times are those the host sees. None for targets that are not emulated
/// (paths, `mem:`, `null:`, unresolved names) or a link in front of one of those. In debug builds the model,
/// and each one a link is in front of, is behind [`check::Checked`].
pub fn build_target(
    target: &iolab_spec::TargetSpec,
    seed: u64,
    max_in_flight: usize,
) -> Option<Box<dyn Model>> {
    match target {
        iolab_spec::TargetSpec::Sim(spec) => Some(build(spec, seed, max_in_flight)),
        iolab_spec::TargetSpec::Link { link, target } => {
            let inner = build_target(target, seed, max_in_flight)?;
            Some(check::in_debug(Box::new(Linked::new(link, inner, max_in_flight)), max_in_flight))
        }
        _ => None,
    }
}
