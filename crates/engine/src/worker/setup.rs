//! Building a worker's engine stack and running it: [`run_worker`].
//!
//! The base engine (io_uring, sync, `mem:`, `null:`, emulated) is built in one place ([`with_base`]) and
//! handed to one of two continuations: without layers it is driven directly, monomorphic, which is the path
//! whose CPU per I/O the benchmarks measure; with layers it is boxed and wrapped, base <- faults <- links <-
//! cache <- verify (each wrapper over a `Box<dyn Engine>`, so there is no generic instantiation per
//! combination). Then the driver runs (transactions when the plan has them, else the op loop) and the engine
//! finishes (a write-back cache writes its dirty lines back, the verifier reads back).

use super::interface::{EngineChoice, WorkerOutput, WorkerSetup};
use super::ops::drive_ops;
use super::txn::drive_transactions;
use crate::base::mem::MemEngine;
use crate::base::sim::{SimClock, SimEngine};
use crate::base::sync::SyncEngine;
use crate::base::uring::UringEngine;
use crate::buffers::Buffers;
use crate::layer::cache::CacheEngine;
use crate::layer::fault::FaultEngine;
use crate::layer::link::LinkEngine;
use crate::layer::verify::VerifyEngine;
use crate::{Engine, EngineError, RealClock};
use std::sync::atomic::Ordering;

/// Builds the worker's engine (in this thread: io_uring SINGLE_ISSUER rings belong to their creator), waits for
/// all workers at the barrier, then runs. A setup failure still passes the barrier and raises the stop flag, so
/// the other workers end at once.
pub fn run_worker(setup: WorkerSetup) -> Result<WorkerOutput, EngineError> {
    let w = &setup.task.plan;
    // A cache needs staging buffers for its write-backs (and a real cache device its own), as large as a line.
    let staging = setup.tools.cache.as_ref().map_or(0, |c| c.extra_buffers(w.qd));
    let line = setup.tools.cache.as_ref().map_or(0, |c| c.cache.config().line_bytes as u64);
    // Under --verify the data also depends on the run: a sector an earlier run with the same seed left behind
    // (a torn or lost write) then never equals what this run wrote there, so it cannot pass for it. Written
    // bytes are not reproducible under --verify anyway (headers carry the run id and a timestamp).
    let run_salt = setup.tools.verify.as_ref().map_or(0, |v| v.verifier.run_id());
    let data_seed = setup.task.seed ^ w.index as u64 ^ run_salt;
    let buffers = Buffers::new(2 * w.qd + staging, w.max_bs.max(line), w.data, data_seed);
    let slots = w.qd + setup.tools.cache.as_ref().map_or(0, |c| c.extra_slots());
    let clock = RealClock::new(setup.control.epoch);
    if !matches!(setup.tools.engine, EngineChoice::Sim { seat: Some(_), .. }) {
        // The kernel may fire this thread's timers up to its timer slack late (50 us by default): on the real
        // clock an open-loop arrival must not wait for that. Best effort: a refusal changes only the lag.
        let _ = nix::sys::prctl::set_timerslack(1);
    }
    let layered = setup.tools.cache.is_some()
        || setup.tools.links.iter().any(Option::is_some)
        || setup.tools.verify.is_some()
        || setup.tools.faults.is_some();
    if layered {
        with_base(&setup, buffers, slots, clock, Layered { s: &setup, slots })
    } else {
        with_base(&setup, buffers, slots, clock, Plain(&setup))
    }
}

/// What to do with the base engine once it is built: generic over its type, so the plain path stays
/// monomorphic.
trait WithBase {
    fn with<E: Engine + 'static>(self, base: E) -> Result<WorkerOutput, EngineError>;
}

/// Builds the base engine of `s` with room for `slots` ops over `buffers`, and hands it to `then`.
fn with_base<F: WithBase>(
    s: &WorkerSetup,
    buffers: Buffers,
    slots: u32,
    clock: RealClock,
    then: F,
) -> Result<WorkerOutput, EngineError> {
    match &s.tools.engine {
        EngineChoice::Uring => match UringEngine::new(slots, s.tools.files.clone(), buffers, clock) {
            Ok(e) => then.with(e.with_atomic_writes(s.task.plan.atomic)),
            Err(err) => {
                s.control.stop.store(true, Ordering::Relaxed);
                s.control.barrier.wait();
                Err(err)
            }
        },
        EngineChoice::Sync => then.with(
            SyncEngine::new(s.tools.files.clone(), buffers, clock).with_atomic_writes(s.task.plan.atomic),
        ),
        EngineChoice::Mem(store) => then.with(MemEngine::new(Some(store.clone()), buffers, slots, clock)),
        EngineChoice::Null => then.with(MemEngine::new(None, buffers, slots, clock)),
        EngineChoice::Sim { targets, client, seat } => {
            let c = match seat {
                Some(seat) => SimClock::Virtual(seat.clone()),
                None => SimClock::Real(clock),
            };
            then.with(SimEngine::new(targets.clone(), *client, slots, buffers, c))
        }
    }
}

/// No layers: the base engine is driven directly.
struct Plain<'a>(&'a WorkerSetup);

impl WithBase for Plain<'_> {
    fn with<E: Engine + 'static>(self, mut base: E) -> Result<WorkerOutput, EngineError> {
        run(&mut base, self.0)
    }
}

/// Layers over the boxed base engine: base <- faults <- links <- cache <- verify; the base has room for
/// `slots` ops (the worker's and the cache's own).
struct Layered<'a> {
    s: &'a WorkerSetup,
    slots: u32,
}

impl WithBase for Layered<'_> {
    fn with<E: Engine + 'static>(self, base: E) -> Result<WorkerOutput, EngineError> {
        let (s, slots) = (self.s, self.slots);
        let base: Box<dyn Engine> = Box::new(base);
        let faulty: Box<dyn Engine> = match &s.tools.faults {
            Some(wf) if wf.hits_target_io() => Box::new(FaultEngine::new(base, wf.clone(), slots)),
            _ => base,
        };
        let linked: Box<dyn Engine> = if s.tools.links.iter().any(Option::is_some) {
            Box::new(LinkEngine::new(faulty, &s.tools.links, slots))
        } else {
            faulty
        };
        let cached: Box<dyn Engine> = match &s.tools.cache {
            Some(wc) => {
                let early = s.tools.faults.as_ref().and_then(|wf| wf.early_flush_ack());
                Box::new(CacheEngine::new(linked, wc.clone(), s.task.plan.qd).with_early_flush_ack(early))
            }
            None => linked,
        };
        match &s.tools.verify {
            Some(wv) => run(&mut VerifyEngine::new(cached, wv.clone(), s.task.plan.qd), s),
            None => run(&mut { cached }, s),
        }
    }
}

/// Drives the worker (transactions when its plan has them, else the op loop), then lets the engine finish.
fn run<E: Engine>(engine: &mut E, s: &WorkerSetup) -> Result<WorkerOutput, EngineError> {
    let out =
        if s.task.plan.loadgen.is_some() { drive_transactions(engine, s)? } else { drive_ops(engine, s)? };
    engine.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Completion, Op};
    use iolab_plan::{Plan, TargetGeometry};
    use iolab_spec::{JobSpec, TargetSpec};

    /// `null:` under a recorder: how many ops each `submit` and each `submit_and_reap` handed over.
    struct Recorder {
        inner: MemEngine,
        since: u32,
        submits: Vec<u32>,
        waits: Vec<u32>,
    }

    impl Engine for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn features(&self) -> Vec<String> {
            Vec::new()
        }
        fn now_ns(&self) -> u64 {
            self.inner.now_ns()
        }
        fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
            self.inner.buffer_mut(buf)
        }
        unsafe fn push(&mut self, op: Op) {
            self.since += 1;
            // SAFETY: the caller's promise for `op` passes on unchanged.
            unsafe { self.inner.push(op) }
        }
        fn submit(&mut self) -> Result<(), EngineError> {
            self.submits.push(std::mem::take(&mut self.since));
            Ok(())
        }
        fn submit_and_reap(&mut self, d: Option<u64>, out: &mut Vec<Completion>) -> Result<(), EngineError> {
            self.waits.push(std::mem::take(&mut self.since));
            self.inner.submit_and_reap(d, out)
        }
        fn finish(&mut self) -> Result<(), EngineError> {
            self.inner.finish()
        }
    }

    /// A refill of all 32 slots (every op of `null:` completes in the next call) goes out as 1, 2, 4, 8 and
    /// 16 ops by `submit` and the last one with the wait, turn after turn.
    #[test]
    fn a_full_refill_goes_out_early_in_doubling_chunks() {
        let job = "ios = 320\nramp = \"0\"\nseed = 1\nqd = 32\nbs = \"4k\"\nrw = \"randread\"\n";
        let spec = JobSpec::from_toml(job, "test.toml").expect("job parses");
        let target = TargetSpec::parse("null:16M").expect("target parses");
        let plan = Plan::from_spec(&spec, Some(&target)).expect("plan");
        let regions = plan.bind(&[TargetGeometry { size_bytes: 16 << 20, block_bytes: 512 }]).expect("bind");
        let (setup, _rx) =
            WorkerSetup::for_test(&plan, regions[0].clone(), EngineChoice::Null, 1_000_000_000);
        let clock = RealClock::new(setup.control.epoch);
        let inner = MemEngine::new(None, Buffers::new(64, 4096, setup.task.plan.data, 1), 32, clock);
        let mut e = Recorder { inner, since: 0, submits: Vec::new(), waits: Vec::new() };
        let out = run(&mut e, &setup).expect("run");
        assert_eq!(out.read.ops, 320);
        assert_eq!(e.submits, [1, 2, 4, 8, 16].repeat(10), "early submits");
        assert_eq!(e.waits[..10], [1; 10], "what each wait handed over");
        assert!(e.waits[10..].iter().all(|&n| n == 0), "nothing is pushed while draining: {:?}", e.waits);
    }
}
