//! A job as one rank of a run over several hosts runs it (`mpirun ... iolab run`): rank 0's job with every
//! path's `{rank}`, `{size}` and `{host}` put in, and its rates divided among the ranks.
//!
//! Typed, so that a field added to the job is either a path, a rate or neither by its type, never by its
//! name: every [`TargetSpec::Path`] (wherever a target sits: worker layers, `[targets]`, the cache device, a
//! transaction's steps, a link's target, phases), the journal and `--trace` are paths; every layer's `rate`
//! and `rate_bytes` are rates.

use crate::job::{JobSpec, Layer};
use crate::target::TargetSpec;

/// Where a rank runs: its number, how many ranks, its host name.
#[derive(Clone, Copy, Debug)]
pub struct RankPlace<'a> {
    /// This rank, from 0.
    pub rank: u32,
    /// Ranks in the run.
    pub size: u32,
    /// This rank's host name.
    pub host: &'a str,
}

impl RankPlace<'_> {
    /// `text` with `{rank}`, `{size}` and `{host}` put in.
    pub fn put(&self, text: &str) -> String {
        text.replace("{rank}", &self.rank.to_string())
            .replace("{size}", &self.size.to_string())
            .replace("{host}", self.host)
    }
}

impl JobSpec {
    /// The job rank `place` runs: placeholders put into every path (targets, journal, trace), and every rate
    /// divided by `rate_divisor` (the number of ranks, or 1 when each rank's rate is given per rank).
    pub fn for_rank(mut self, place: &RankPlace<'_>, rate_divisor: f64) -> JobSpec {
        self.each_target_mut(&mut |t| put_path(t, place));
        self.each_layer_mut(&mut |l| {
            l.rate = l.rate.map(|r| r / rate_divisor);
            l.rate_bytes = l.rate_bytes.map(|r| r / rate_divisor);
        });
        let journal = &mut self.integrity.journal;
        *journal = journal.as_deref().map(|j| place.put(j));
        self.trace = self.trace.as_deref().map(|t| place.put(t));
        for phase in &mut self.phases {
            let run = std::mem::take(&mut phase.run);
            phase.run = run.for_rank(place, rate_divisor);
        }
        self
    }

    /// Calls `f` on every worker layer and access spec of the job (not of its phases' own jobs).
    pub fn each_layer_mut(&mut self, f: &mut dyn FnMut(&mut Layer)) {
        f(&mut self.defaults);
        f(&mut self.forced);
        self.specs.iter_mut().for_each(&mut *f);
        let phase_tables = self.phases.iter_mut().flat_map(|p| &mut p.worker_tables);
        for w in self.worker_tables.iter_mut().chain(phase_tables) {
            f(&mut w.layer);
            w.specs.iter_mut().for_each(&mut *f);
        }
    }

    /// Calls `f` on every target the job names (not those of its phases' own jobs), wherever it sits.
    pub fn each_target_mut(&mut self, f: &mut dyn FnMut(&mut TargetSpec)) {
        self.each_layer_mut(&mut |l| l.target.iter_mut().flatten().for_each(&mut *f));
        self.targets.values_mut().filter_map(|t| t.spec.as_mut()).for_each(&mut *f);
        self.cache.dev.iter_mut().for_each(&mut *f);
        let steps = self.loadgen.iter_mut().flat_map(|l| &mut l.transactions).flat_map(|t| &mut t.steps);
        steps.filter_map(|s| s.target.as_mut()).for_each(f);
    }
}

/// Puts the placeholders into a path target, also one behind a link.
fn put_path(t: &mut TargetSpec, place: &RankPlace<'_>) {
    match t {
        TargetSpec::Path { path } => *path = place.put(path),
        TargetSpec::Link { target, .. } => put_path(target, place),
        _ => {}
    }
}
