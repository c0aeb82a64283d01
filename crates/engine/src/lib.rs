//! iolab-engine: runs I/O. One worker thread drives one [`Engine`] with a fixed set of slots (its queue depth).
//!
//! The [`Engine`] contract follows fio's ioengine in Rust form, without its 29 optional hooks: ops are
//! [`Engine::push`]ed (queued, no syscall), then [`Engine::submit_and_reap`] submits everything queued and waits
//! for at least one completion or a deadline, in one system call where the engine allows it. The engine owns
//! the I/O buffers (allocated and aligned once, registered with the kernel where possible) and the clock, so an
//! emulated engine can run on virtual time. Engines:
//!
//! - [`uring::UringEngine`]: io_uring with registered files and buffers, SINGLE_ISSUER, COOP_TASKRUN and
//!   DEFER_TASKRUN where the kernel has them, batched submit and reap.
//! - [`sync::SyncEngine`]: pread/pwrite, one I/O at a time; `pwritev2` for synchronous writes and the
//!   BLKDISCARD ioctl for trims.
//! - [`mem::MemEngine`]: `mem:` (copies to and from an in-process RAM disk) and `null:` (copies nothing).
//! - [`sim::SimEngine`]: emulated devices (`sim:fixed`), on the real clock or on virtual time.
//!
//! The tree shows the stack: [`base`] holds the engines that issue I/O themselves (re-exported here as
//! [`uring`], [`sync`], [`mem`], [`sim`]), [`layer`] the layers stacked on one ([`fault`], [`link`], [`cache`],
//! [`verify`], bottom to top) and what they share. Beside them: [`buffers`], [`timeline`] (virtual time),
//! the tag table and random-stream salts, and the [`worker`].
//!
//! [`worker::run_worker`] is the loop that generates ops, keeps slots, stamps times and records statistics.
//!
//! Where `unsafe` is, and the contract each relies on: [`Engine::push`] is an `unsafe fn` whose `# Safety`
//! says a read's or write's buffer belongs to the engine (and the kernel) until its completion is reaped;
//! the worker keeps it with its slots (`worker/slots.rs`), the wrappers with buffers of their own. The io_uring
//! engine relies on it when it pushes an SQE and when it registers its buffers; the sync engine's `pwritev2`
//! and BLKDISCARD calls borrow memory for the call only; `timeline` runs workers as coroutines on virtual time.

#![deny(missing_docs)]

pub mod base;
pub mod buffers;
mod dedupe;
pub mod depth_search;
pub mod flow;
pub mod layer;
mod salts;
mod tags;
pub mod timeline;
pub mod worker;

pub use base::{mem, sim, sync, uring};
pub use layer::{cache, fault, link, verify};

/// One I/O handed to an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Returned unchanged in the [`Completion`]: slot index and generation.
    pub user_data: u64,
    /// What it does: read, write, flush (offset and length 0) or trim.
    pub kind: OpKind,
    /// A write's durability when it completes: plain, or synchronous (RWF_DSYNC, RWF_SYNC).
    pub sync: WriteSync,
    /// Index into the engine's targets.
    pub target: u16,
    /// Byte offset.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
    /// Index of the engine buffer that holds the data.
    pub buf: u32,
}

pub use iolab_plan::gen::OpKind;
pub use iolab_spec::WriteSync;

/// One finished I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The op's `user_data`.
    pub user_data: u64,
    /// Bytes transferred (>= 0) or a negated errno.
    pub result: i32,
    /// Served from the block cache ([`cache::CacheEngine`]) rather than the target.
    pub cached: bool,
    /// When the op completed, where the engine knows it before the caller comes back for it (a cache hit in
    /// RAM: when its copy was done); 0: when it is reaped.
    pub done_ns: u64,
    /// When the engine began serving it, where it knows (a cache hit in RAM: when its copy began); 0: its
    /// hand-over to the engine stands for it. From the op's intended start to here is iolab's own dispatch
    /// delay; from here to its completion, its service time.
    pub start_ns: u64,
}

/// Engine failures (not per-I/O errors, which are [`Completion`] results).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The engine could not be set up.
    #[error("{what}: {source}{}", hint_lines(.cause, .hint))]
    Setup {
        /// What failed.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
        /// The likely cause.
        cause: Option<String>,
        /// What to do.
        hint: Option<String>,
    },
    /// Submitting or waiting failed.
    #[error("io_uring_enter failed: {0}")]
    Submit(#[source] std::io::Error),
}

fn hint_lines(cause: &Option<String>, hint: &Option<String>) -> String {
    let mut s = String::new();
    if let Some(c) = cause {
        s.push_str(&format!("\n  likely cause: {c}"));
    }
    if let Some(h) = hint {
        s.push_str(&format!("\n  hint: {h}"));
    }
    s
}

/// The engine contract. Callers keep at most `slot_count` ops in flight (pushed and not yet completed).
pub trait Engine {
    /// Short name for reports ("io_uring", "sync", "mem", "null", "sim").
    fn name(&self) -> &'static str;
    /// Features in effect (ring flags, registered files and buffers, virtual time...).
    fn features(&self) -> Vec<String>;
    /// Nanoseconds since the run's epoch, on this engine's clock.
    fn now_ns(&self) -> u64;
    /// Buffer `buf` (the length of the largest block size), to fill before a write. Only for a buffer no op
    /// in flight uses: see [`Engine::push`].
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8];
    /// Queues one op. Never blocks and never fails.
    ///
    /// # Safety
    ///
    /// A read or write hands buffer `op.buf` to the engine, and with io_uring to the kernel, which writes a
    /// read's data into it (or reads a write's from it) at any moment until the op completes. From this call
    /// until `submit_and_reap` has returned the op's completion, the caller must not read or write that
    /// buffer (through [`Engine::buffer_mut`] or a slice taken before) and must not push another op on it.
    /// A flush or a trim uses no buffer. (The worker keeps this with its slots: a slot's two buffers belong
    /// to its op from push to reap, `worker/slots.rs`; a wrapper that pushes ops of its own uses buffers of
    /// its own for them.)
    unsafe fn push(&mut self, op: Op);
    /// Whether [`Engine::push`] would complete `op` by itself, at once, without the engine underneath (a read
    /// every line of which is in the block cache's RAM, a write a write-back cache would absorb): the worker
    /// pushes those first in a refill, so they are served before the refill's other ops go to the kernel. A
    /// guess that may be wrong either way (another worker may evict or fill a line in between): it orders
    /// pushes, it decides nothing. No engine but the cache's serves at push.
    fn serves_at_push(&self, _op: &Op) -> bool {
        false
    }
    /// Submits queued ops and appends completions to `out`: waits for at least one while any op is in flight,
    /// but not past `deadline_ns` (on this engine's clock) when given. With nothing in flight it waits until
    /// the deadline.
    fn submit_and_reap(
        &mut self,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError>;
    /// Hands what was pushed to the target now, without waiting and without reaping: how the worker gets the
    /// first replacements of a burst of completions out while it is still refilling the rest. Engines that
    /// only act in [`Engine::submit_and_reap`] (in-process and emulated targets) do nothing here; a wrapper
    /// passes it to the engine underneath (what it pushed there goes out too).
    ///
    /// No default, like [`Engine::finish`]: a wrapper that forgot to pass it on would silently lose the
    /// early-submit path, so every engine says what it does.
    fn submit(&mut self) -> Result<(), EngineError>;
    /// Called once when the worker is done and nothing of its own is in flight: writes back what the engine
    /// still holds (a write-back cache's dirty lines) and waits for it; a wrapper then finishes the engine
    /// underneath.
    fn finish(&mut self) -> Result<(), EngineError>;
}

/// A boxed engine is an engine: how wrappers ([`link::LinkEngine`], [`cache::CacheEngine`]) stack over any
/// base engine without a generic instantiation per combination. It forwards every method, `submit` and
/// `finish` included.
impl<E: Engine + ?Sized> Engine for Box<E> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn features(&self) -> Vec<String> {
        (**self).features()
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        (**self).now_ns()
    }
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        (**self).buffer_mut(buf)
    }
    #[inline]
    unsafe fn push(&mut self, op: Op) {
        // SAFETY: the caller's promise for `op` is the one the boxed engine asks.
        unsafe { (**self).push(op) }
    }
    #[inline]
    fn serves_at_push(&self, op: &Op) -> bool {
        (**self).serves_at_push(op)
    }
    fn submit_and_reap(
        &mut self,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        (**self).submit_and_reap(deadline_ns, out)
    }
    fn submit(&mut self) -> Result<(), EngineError> {
        (**self).submit()
    }
    fn finish(&mut self) -> Result<(), EngineError> {
        (**self).finish()
    }
}

/// The monotonic clock of real engines: nanoseconds since an epoch shared by all workers of a run.
#[derive(Clone, Copy, Debug)]
pub struct RealClock {
    epoch: std::time::Instant,
}

impl RealClock {
    /// A clock counting from `epoch`.
    pub fn new(epoch: std::time::Instant) -> RealClock {
        RealClock { epoch }
    }
    /// Nanoseconds since the epoch.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Sleeps until `deadline_ns` (no-op when None or past): how in-process engines wait with nothing in flight.
    pub fn sleep_until(&self, deadline_ns: Option<u64>) {
        if let Some(d) = deadline_ns {
            let now = self.now_ns();
            if d > now {
                std::thread::sleep(std::time::Duration::from_nanos(d - now));
            }
        }
    }
}

pub use worker::{
    run_on_timeline, run_worker, EngineChoice, Pacing, ReadSources, ReplayOps, TxnStats, WorkerControl,
    WorkerEvent, WorkerOutcome, WorkerOutput, WorkerSetup, WorkerTask, WorkerTools, WorkerTrace, MARGIN_RULE,
};
