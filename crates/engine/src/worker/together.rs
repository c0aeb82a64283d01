//! The workers of a run on virtual time, all on one thread: [`run_on_timeline`].
//!
//! Each worker runs [`run_worker`] as a coroutine with a stack of its own; the run's
//! [`Timeline`](crate::timeline::Timeline) says whose turn it is, and a worker switches out only where it
//! would wait ([`Seat`](crate::timeline::Seat)'s `join` and `wait`). So a virtual-time run costs what its
//! workers' own work costs, with no thread hand-off between turns, and its order of events is the timeline's.

use super::interface::{EngineChoice, WorkerOutput, WorkerSetup};
use super::setup::run_worker;
use crate::timeline::{with_yielder, Timeline};
use crate::EngineError;
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult};
use std::sync::Arc;

/// Each worker's stack: what a thread gets by default, reserved and touched only as used.
const STACK_BYTES: usize = 8 << 20;

/// How a worker ended, as its thread would have returned it: its output, or the engine error that ended it.
pub type WorkerOutcome = Result<WorkerOutput, EngineError>;

/// Runs `setups` (all on virtual time, with seats on one timeline, whose barrier is their own) on this
/// thread, turn by turn, until every worker has ended; their results in the order of `setups`. A worker that
/// panics ends the run with that panic (the others are unwound, leaving their seats).
pub fn run_on_timeline(setups: Vec<WorkerSetup>) -> Vec<WorkerOutcome> {
    let Some(timeline) = setups.first().map(timeline_of) else { return Vec::new() };
    let mut by_seat: Vec<Option<usize>> = vec![None; setups.len()];
    let mut workers = Vec::with_capacity(setups.len());
    for (i, setup) in setups.into_iter().enumerate() {
        let seat = seat_index(&setup);
        by_seat[seat] = Some(i);
        let stack =
            DefaultStack::new(STACK_BYTES).expect("a worker's stack (virtual memory) can be reserved");
        workers.push(Coroutine::with_stack(stack, move |y, ()| with_yielder(y, || run_worker(setup))));
    }
    let mut results: Vec<Option<WorkerOutcome>> = (0..workers.len()).map(|_| None).collect();
    // Each worker first runs up to its place on the timeline (or to its end, when its setup fails).
    for (i, w) in workers.iter_mut().enumerate() {
        if let CoroutineResult::Return(r) = w.resume(()) {
            results[i] = Some(r);
        }
    }
    while let Some(seat) = timeline.holder() {
        let i = by_seat[seat].expect("every seat has its worker");
        if let CoroutineResult::Return(r) = workers[i].resume(()) {
            results[i] = Some(r);
        }
    }
    // The timeline runs out of turns only when every worker has left, which it does at its end.
    results.into_iter().map(|r| r.expect("a worker left the timeline before its end (bug)")).collect()
}

/// The timeline of a virtual-time setup.
fn timeline_of(setup: &WorkerSetup) -> Arc<Timeline> {
    match &setup.tools.engine {
        EngineChoice::Sim { seat: Some(seat), .. } => seat.timeline().clone(),
        _ => panic!("run_on_timeline needs workers on virtual time (bug)"),
    }
}

fn seat_index(setup: &WorkerSetup) -> usize {
    match &setup.tools.engine {
        EngineChoice::Sim { seat: Some(seat), .. } => seat.index(),
        _ => panic!("run_on_timeline needs workers on virtual time (bug)"),
    }
}
