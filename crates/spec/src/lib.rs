//! iolab-spec: what the user asked for.
//!
//! A [`JobSpec`] is built from a TOML job file, from command-line flags, or both (flags win). This crate
//! parses and checks each value where it is typed, so an error can name the flag or key, quote the
//! original text and say what was expected. It does no I/O beyond reading the job file and reads no clocks.
#![deny(missing_docs)]

pub mod cache;
pub mod consent;
pub mod durability;
pub mod error;
pub mod exchange;
pub mod inject;
pub mod input;
pub mod job;
pub mod loadgen;
pub mod phase;
pub mod profile;
pub mod rank;
pub mod sim;
pub mod sweep;
pub mod target;
pub mod throttle;
pub mod units;
pub mod verdict;

pub use cache::{CacheMode, CachePolicy, CacheSize, CacheSpec};
pub use consent::{Consent, NamedBy};
pub use durability::WriteSync;
pub use error::{Place, SpecError};
pub use inject::{InjectKind, InjectSpec, InjectWhen};
pub use job::*;
pub use rank::RankPlace;
pub use sim::{ArrayParams, HddParams, LinkParams, Member, Raid, SsdParams};
pub use target::{SimSpec, TargetSpec};
pub use throttle::ThrottleSpec;
pub use units::{
    Arrival, Band, BlockSizeWeight, BlockSizes, Dist, Zone, MAX_PHASES, MAX_WORKERS, MAX_WORKER_TABLES,
};
