//! iolab-sim: emulated storage. Device models (`sim:fixed`, `sim:hdd`, `sim:ssd`, `sim:array`), the timing of a
//! storage link (`link:`), and the sparse store that keeps what was written to an emulated device.
//!
//! A model is a discrete-event simulation driven by its caller's clock (real or virtual nanoseconds): requests
//! are [`Model::submit`]ted at a time, [`Model::next_event_ns`] says when something next changes, and
//! [`Model::advance`] moves the model to a time and returns what completed by then, each with its exact
//! completion time. Models never read a clock and never sleep, so on virtual time a run is exact and
//! deterministic for its seed; the engine (iolab-engine `SimEngine`) does the waiting.
//!
//! A device may be shared by several workers: [`SharedDevice`] puts one model behind a lock and routes each
//! completion back to the worker (client) that submitted it.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bench;
pub mod link;
pub mod models;
pub mod rng;
pub mod shared;
pub mod store;

pub use link::{LinkTiming, Linked};
pub use shared::SharedDevice;
pub use store::SparseStore;

/// One request to an emulated device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The caller's tag, returned in [`Done`]. Below 2^32 when the device is a [`SharedDevice`].
    pub tag: u64,
    /// Write (true) or read.
    pub write: bool,
    /// Byte offset on the device.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
}

/// One completed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// The request's tag.
    pub tag: u64,
    /// When it completed, on the caller's clock (never after the `now` passed to [`Model::advance`]).
    pub at_ns: u64,
}

/// A device model: a discrete-event simulation on its caller's clock.
///
/// Contract: calls come with non-decreasing times; `submit(now, ..)` is only called after `advance(now, ..)`
/// (so the model has processed everything up to `now`); at most `max_in_flight` (given at build) requests are
/// in the model at once, and nothing allocates once built.
pub trait Model: Send {
    /// A request arrives at the device at `now_ns`.
    fn submit(&mut self, now_ns: u64, req: Request);
    /// The earliest time at which a request may complete; None when the device is idle.
    fn next_event_ns(&self) -> Option<u64>;
    /// Moves the device to `now_ns` and appends every request completed by then, in completion order.
    fn advance(&mut self, now_ns: u64, done: &mut Vec<Done>);
    /// Requests submitted and not yet completed.
    fn in_flight(&self) -> usize;
    /// The mean service time of one request of `len` bytes on an idle device with uniformly random offsets
    /// over the whole device (the analytic figure tests and the precision table compare against).
    fn expected_service_ns(&self, write: bool, len: u32) -> f64;
}

/// Builds the model for `spec`, deterministic for `seed`, with room for `max_in_flight` requests.
pub fn build(spec: &iolab_spec::SimSpec, seed: u64, max_in_flight: usize) -> Box<dyn Model> {
    models::build(spec, seed, max_in_flight)
}

/// Builds the model for an emulated target: a `sim:` device, or a `link:` (any depth) in front of one, as one
/// [`Model`] whose completion times are those the host sees. None for targets that are not emulated
/// (paths, `mem:`, `null:`, unresolved names) or a link in front of one of those.
pub fn build_target(
    target: &iolab_spec::TargetSpec,
    seed: u64,
    max_in_flight: usize,
) -> Option<Box<dyn Model>> {
    match target {
        iolab_spec::TargetSpec::Sim(spec) => Some(build(spec, seed, max_in_flight)),
        iolab_spec::TargetSpec::Link { link, target } => {
            let inner = build_target(target, seed, max_in_flight)?;
            Some(Box::new(Linked::new(link, inner, max_in_flight)))
        }
        _ => None,
    }
}
