//! The layers stacked on a base engine, each an [`Engine`](crate::Engine) over the engine underneath (`inner`): they decide
//! what reaches it and when, and issue no I/O of their own but through it. From the bottom:
//! base <- [`fault`] (`--inject`) <- [`link`] (`link:`) <- [`cache`] (`--cache`) <- [`verify`] (`--verify`);
//! a layer a run does not ask for is not in the stack.
//!
//! What the layers share is here: the methods they pass through unchanged (`delegate_to_inner!`), and the
//! wait loop of a layer that holds completions back until their time (`HoldingEngine`, `held_submit_and_reap`).
//! Their tag table (which op a held or forwarded completion belongs to) is the crate's `tags`, which the
//! emulated base engine uses too.

pub mod cache;
pub mod fault;
pub mod link;
pub mod verify;

use crate::{Completion, EngineError};

/// The [`Engine`](crate::Engine) methods every wrapper passes unchanged to its `inner` engine (`name`, `now_ns`,
/// `buffer_mut`), written once; used inside each wrapper's `impl Engine`. `submit` and `finish` are not in it:
/// each wrapper writes them, so what it does there is a decision in its own code.
macro_rules! delegate_to_inner {
    () => {
        fn name(&self) -> &'static str {
            self.inner.name()
        }
        #[inline]
        fn now_ns(&self) -> u64 {
            self.inner.now_ns()
        }
        fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
            self.inner.buffer_mut(buf)
        }
    };
}
pub(crate) use delegate_to_inner;

/// `submit_and_reap` of a [`HoldingEngine`]: the shared wait loop ([`held_submit_and_reap`]), written
/// once; used inside the `impl Engine` of each ([`link::LinkEngine`], [`fault::FaultEngine`],
/// [`cache::CacheEngine`]).
macro_rules! reap_by_holding {
    () => {
        fn submit_and_reap(
            &mut self,
            deadline_ns: Option<u64>,
            out: &mut Vec<Completion>,
        ) -> Result<(), EngineError> {
            super::held_submit_and_reap(self, deadline_ns, out)
        }
    };
}
pub(crate) use reap_by_holding;

/// The [`HoldingEngine`] impl of a wrapper that holds completions in its own `release(now, out)`, takes what it
/// reaped underneath with `take_reaped(now, out)` and does nothing before a turn ([`link::LinkEngine`],
/// [`fault::FaultEngine`]): written once.
macro_rules! holding_by_release {
    ($engine:ident) => {
        impl<E: Engine> super::HoldingEngine for $engine<E> {
            fn before_turn(&mut self) {}
            fn clock(&self) -> u64 {
                self.inner.now_ns()
            }
            fn release(&mut self, now: u64, out: &mut Vec<Completion>) -> Option<u64> {
                $engine::release(self, now, out)
            }
            fn in_inner(&self) -> usize {
                self.in_inner
            }
            fn reap_inner(
                &mut self,
                wait: Option<u64>,
                out: &mut Vec<Completion>,
            ) -> Result<u64, EngineError> {
                self.inner.submit_and_reap(wait, &mut self.reaped)?;
                let now = self.inner.now_ns();
                self.take_reaped(now, out);
                Ok(now)
            }
        }
    };
}
pub(crate) use holding_by_release;

/// The deadline a wrapper engine ([`link::LinkEngine`], [`cache::CacheEngine`]) passes to the engine underneath:
/// `now` (submit, don't wait) when it already has something to return or its caller's deadline has passed;
/// else the earlier of its own next event and the caller's deadline (None: wait for a completion).
pub(crate) fn inner_deadline(
    ready: bool,
    now: u64,
    own_next: Option<u64>,
    deadline: Option<u64>,
) -> Option<u64> {
    if ready {
        return Some(now);
    }
    match (own_next, deadline) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A wrapper engine that holds some completions back until their time ([`link::LinkEngine`],
/// [`fault::FaultEngine`], [`cache::CacheEngine`]): what [`held_submit_and_reap`] needs from it.
pub(crate) trait HoldingEngine {
    /// What the wrapper does at the start of each turn of the wait loop, before reading the clock (the cache
    /// hands out write-backs); nothing for the others.
    fn before_turn(&mut self);
    /// The clock of the engine underneath.
    fn clock(&self) -> u64;
    /// Moves held completions due by `now` to `out`; returns when the next one is due.
    fn release(&mut self, now: u64, out: &mut Vec<Completion>) -> Option<u64>;
    /// Ops in the engine underneath.
    fn in_inner(&self) -> usize;
    /// One `submit_and_reap` underneath, waiting until `wait` at most, then takes its completions (into `out`
    /// or held); returns the time after it.
    fn reap_inner(&mut self, wait: Option<u64>, out: &mut Vec<Completion>) -> Result<u64, EngineError>;
}

/// `submit_and_reap` of a [`HoldingEngine`]: waits underneath, but not past its next held completion, and not
/// at all when it already has something to return (the call still submits what was pushed).
pub(crate) fn held_submit_and_reap<H: HoldingEngine>(
    h: &mut H,
    deadline_ns: Option<u64>,
    out: &mut Vec<Completion>,
) -> Result<(), EngineError> {
    let first = out.len();
    loop {
        h.before_turn();
        let now = h.clock();
        let next = h.release(now, out);
        let past_deadline = deadline_ns.is_some_and(|d| now >= d);
        let wait = inner_deadline(out.len() > first || past_deadline, now, next, deadline_ns);
        if wait.is_none() && h.in_inner() == 0 {
            return Ok(()); // nothing in flight anywhere and no deadline
        }
        let now = h.reap_inner(wait, out)?;
        h.release(now, out);
        if out.len() > first || past_deadline || deadline_ns.is_some_and(|d| now >= d) {
            return Ok(());
        }
    }
}
