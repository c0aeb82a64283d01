//! The device models behind `sim:fixed`, `sim:hdd`, `sim:ssd` and `sim:array`.
//!
//! Each model is a plain struct implementing [`Model`]; [`build`] picks one from a [`SimSpec`]. All of them
//! allocate only when built (room for `max_in_flight` requests), never read a clock and never sleep, and
//! draw their randomness from [`crate::rng::SplitMix64`] seeded from the run's seed.

pub mod array;
pub mod dist;
pub mod fixed;
pub mod hdd;
pub mod ssd;

pub use array::Array;
pub use fixed::Fixed;
pub use hdd::Hdd;
pub use ssd::Ssd;

use crate::Model;
use iolab_spec::SimSpec;

/// Builds the model for `spec` (see [`crate::build`]).
pub fn build(spec: &SimSpec, seed: u64, max_in_flight: usize) -> Box<dyn Model> {
    match spec {
        SimSpec::Fixed { latency_ns, servers, .. } => {
            Box::new(Fixed::new(*latency_ns, *servers, max_in_flight))
        }
        SimSpec::Hdd(p) => Box::new(Hdd::new(p, seed, max_in_flight)),
        SimSpec::Ssd(p) => Box::new(Ssd::new(p, seed, max_in_flight)),
        SimSpec::Array(p) => Box::new(Array::new(p, seed, max_in_flight)),
    }
}
