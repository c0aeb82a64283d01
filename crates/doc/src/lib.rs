//! iolab-doc: the parts of iolab's result documents that stages other than the report fill in, so that a
//! producer and the report share them without depending on each other (the report never compiles the block
//! cache or the verifier, and the run never the catalog).
//!
//! - [`cache`]: the block cache's counters ([`CacheStats`], `iolab-cache`'s `Cache::stats`);
//! - [`verify`]: what verification and fault injection found ([`VerifyResult`], [`InjectResult`]);
//! - [`exchange`]: Exchange sizing as a verdict and a dry run carry it ([`ExchangeSizing`]);
//! - [`job_text`]: what the job files iolab writes (imports, `profiles derive`) need of TOML;
//! - [`listing`]: what a catalog lists a document by ([`Columns`]), computed by the report's kinds;
//! - [`throttle`]: the kernel I/O limits a run had (`--throttle`, [`Throttled`]);
//! - [`time`]: document time, RFC 3339 and the dates users type for `--since`/`--until`;
//! - [`workload`]: a workload in words, read from a result's plan (`randread 4k`).
//!
//! A leaf: it depends on no other iolab crate. Every type here is a plain serde model; a field's name is its
//! name in the JSON documents (docs/schema), so renaming one is a change of the document format.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod cache;
pub mod exchange;
pub mod job_text;
pub mod listing;
pub mod throttle;
pub mod time;
pub mod verify;
pub mod workload;

pub use cache::CacheStats;
pub use exchange::ExchangeSizing;
pub use listing::Columns;
pub use throttle::{Throttled, ThrottledDevice};
pub use verify::{
    ByClass, DurableLogResult, HeaderView, InjectCount, InjectResult, Mismatch, MismatchClass, VerifyResult,
};
