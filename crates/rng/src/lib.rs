//! iolab-rng: the pseudo-random numbers of iolab, in one place, with no dependency.
//!
//! They are written out here rather than taken from a crate so that a seed printed by any iolab version
//! reproduces the same offsets, sizes, arrivals, faults, database rows and emulated service times forever
//! (crates change their streams between major versions). There are two generators and one mixing step:
//!
//! - [`splitmix64`], one step of SplitMix64 (Steele, Lea and Flood, 2014): the step both generators are
//!   built on, and what the run, its ranks and workers derive their seeds with.
//! - [`Rng`], xoshiro256** (Blackman and Vigna, 2018) seeded through [`splitmix64`]: the generator of the
//!   workload (iolab-plan's offsets, sizes and arrivals, the engine's faults and transactions, iolab-db's
//!   rows and transactions).
//! - [`SplitMix64`], the stream of [`splitmix64`] steps itself: the emulated devices' randomness
//!   (iolab-sim: an HDD's platter phase, an SSD's service times, an array member's seed), small and fully
//!   determined by its seed.
//!
//! Every stream is pinned by a test for two seeds; changing one changes what every printed seed reproduces.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod splitmix;
mod xoshiro;

pub use splitmix::{splitmix64, SplitMix64};
pub use xoshiro::Rng;
