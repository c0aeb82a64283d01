//! Every salt the engine crate mixes into the run seed, in one place, so no two random streams of a worker
//! can share one by accident (each stream is `Rng::for_worker(seed ^ SALT, worker)`; the op stream itself is
//! unsalted). Changing a value changes every fixed-seed result (the golden test says so).

/// The arrival schedule of an open-loop worker and of a rate-mode transaction worker, independent of the op
/// stream.
pub(crate) const ARRIVAL: u64 = 0xA441_7A15_0000_0001;
/// The transaction stream (types and offsets), independent of the arrival stream.
pub(crate) const TXN: u64 = 0x7258_4E00_0000_0003;
/// The fault streams of `--inject` (one per spec, further mixed with the spec's index), independent of the op
/// and arrival streams.
pub(crate) const INJECT: u64 = 0x1A1E_C7ED_FA17_0001;
/// The draws of duplicate writes (`dedupe`: copy or unique, which working-set page), independent of the op
/// stream.
pub(crate) const DEDUPE: u64 = 0xDED0_9E00_0000_0001;
/// The data of unique writes under `dedupe` (the same for every worker, so a `global` working set is shared).
pub(crate) const DEDUPE_DATA: u64 = 0xDED0_DA7A_0000_0002;
