//! The worker: one thread, one engine stack, `qd` slots, driven until the end of the run.
//!
//! Its parts, each depending only on those listed before it (no module imports one after it):
//!
//! - `pace`: how a worker waits for a scheduled arrival on the real clock (sleep until a margin chosen from
//!   measured wake-ups, then spin);
//! - `interface`: what the cli hands a worker ([`WorkerSetup`], [`EngineChoice`]) and gets back
//!   ([`WorkerEvent`], [`WorkerOutput`], [`ReadSources`], [`TxnStats`], [`Pacing`]);
//! - `slots`: the `qd` in-flight records, their free list, pushing, early submission, retries;
//! - `window`: the measurement window ([ramp end, end), stop and finish) and the time series, one
//!   implementation for both drivers;
//! - `record`: `--trace`, each completed op into a batch for the run's trace writer thread;
//! - `ops`: the op loop (closed and open loop, I/O and byte limits, and `iolab replay`'s ops in place of the
//!   generator);
//! - `txn`: the transaction driver (LoadGen-style users);
//! - `setup`: building the engine stack and [`run_worker`], which picks the driver;
//! - `together`: the workers of a virtual-time run as coroutines on one thread ([`run_on_timeline`]).
//!
//! The random streams a worker draws from are salted in one place, `crate::salts`.

mod backlog;
mod interface;
mod ops;
mod pace;
mod record;
mod setup;
mod slots;
mod together;
mod txn;
mod window;

pub use interface::{
    EngineChoice, ReadSources, ReplayOps, TxnStats, WorkerControl, WorkerEvent, WorkerOutput, WorkerSetup,
    WorkerTask, WorkerTools, WorkerTrace,
};
pub use pace::{Pacing, MARGIN_RULE};
pub use setup::run_worker;
pub use together::{run_on_timeline, WorkerOutcome};
