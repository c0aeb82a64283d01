//! The device models behind `sim:fixed`, `sim:hdd`, `sim:ssd` and `sim:array`.
//!
//! Each model is a plain struct implementing [`Model`]; [`build`] picks one from a [`SimSpec`]. All of them
//! allocate only when built (room for `max_in_flight` requests), never read a clock and never sleep, and
//! draw their randomness from [`iolab_rng::SplitMix64`] seeded from the run's seed.

pub mod array;
pub mod dist;
pub mod fixed;
pub mod hdd;
pub mod ssd;

pub use array::Array;
pub use fixed::Fixed;
pub use hdd::Hdd;
pub use ssd::Ssd;

use crate::wcache::Cached;
use crate::Model;
use iolab_spec::SimSpec;

/// Builds the model for `spec` (see [`crate::build`]): the media model behind its write cache. The cache
/// drains up to as many writes at once as the media serves: `servers`, the drive's queue depth, the flash
/// channels, or two per member disk of an array.
pub fn build(spec: &SimSpec, seed: u64, max_in_flight: usize) -> Box<dyn Model> {
    let mif = max_in_flight;
    match spec {
        SimSpec::Fixed { latency_ns, servers, .. } => {
            let wc = iolab_spec::sim::fixed_write_cache(*latency_ns);
            Cached::build(&wc, *servers as usize, mif, |room| {
                Box::new(Fixed::new(*latency_ns, *servers, room))
            })
        }
        SimSpec::Hdd(p) => {
            Cached::build(&p.wcache, p.queue_depth as usize, mif, |room| Box::new(Hdd::new(p, seed, room)))
        }
        SimSpec::Ssd(p) => {
            Cached::build(&p.wcache, p.channels as usize, mif, |room| Box::new(Ssd::new(p, seed, room)))
        }
        SimSpec::Array(p) => {
            Cached::build(&p.wcache, 2 * p.disks as usize, mif, |room| Box::new(Array::new(p, seed, room)))
        }
    }
}
