//! iolab-multihost: several hosts, one run, over MPI. The binary calls [`init`] first thing: launched by
//! `mpirun` or `srun` (and built with the `mpi` feature) it joins the job's ranks and returns a
//! [`RankSession`], whose [`RankSession::sync`] is the [`iolab_run::RunSync`] that `iolab_run::execute` runs its
//! collectives through; otherwise (no launcher, or a build without MPI) it returns `None` and iolab runs on
//! this host alone, exactly as it always has.
//!
//! Every collective is a bounded wait: rank 0 gathers every rank's bytes, polling, and ends the whole run
//! (MPI_Abort) with a message naming the ranks that have not arrived once [`timeout_s`] has passed; the other
//! ranks wait for rank 0's answer a little longer than that, and end the run naming rank 0 if it never
//! comes. So a rank that dies or stalls never leaves the others hanging.

#![deny(missing_docs)]

#[cfg(feature = "mpi")]
mod ranks;

use std::sync::Arc;

/// Whether this build has MPI support (the `mpi` feature), for `iolab --version`.
pub const COMPILED: bool = cfg!(feature = "mpi");

/// The default bound on every wait for the other ranks, seconds (`IOLAB_MPI_TIMEOUT` changes it).
pub const DEFAULT_TIMEOUT_S: f64 = 60.0;

/// The bound on every wait for the other ranks: `IOLAB_MPI_TIMEOUT` (seconds) or [`DEFAULT_TIMEOUT_S`].
pub fn timeout_s() -> f64 {
    std::env::var("IOLAB_MPI_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|t| *t > 0.0)
        .unwrap_or(DEFAULT_TIMEOUT_S)
}

/// True when a launcher (`mpirun`, `srun --mpi=pmix`, ...) started this process as one rank of a job.
pub fn launched() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// This process's part in a run over several hosts: MPI stays initialised while it lives.
pub struct RankSession {
    #[cfg(feature = "mpi")]
    universe: mpi::environment::Universe,
    sync: Arc<dyn iolab_run::RunSync>,
    rank: u32,
    size: u32,
    host: String,
}

impl RankSession {
    /// The collectives for `iolab_run::ExecOptions::sync`.
    pub fn sync(&self) -> Arc<dyn iolab_run::RunSync> {
        self.sync.clone()
    }

    /// This rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// This rank's host.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Ends the whole job at once (every rank), after an error only this rank saw (one outside the run's
    /// collectives, such as a flag its host refused): the other ranks are not left waiting.
    pub fn abort(&self, code: i32) -> ! {
        #[cfg(feature = "mpi")]
        ranks::abort(code);
        #[cfg(not(feature = "mpi"))]
        std::process::exit(code)
    }

    /// Finishes MPI (every rank calls it before exiting).
    pub fn finish(self) {
        #[cfg(feature = "mpi")]
        drop(self.universe);
    }
}

/// How the ranks run jobs (from the command line of every rank).
#[derive(Clone, Copy, Debug, Default)]
pub struct RankOptions {
    /// `--rate-per-rank`: open-loop rates are per rank rather than totals split over the ranks.
    pub rate_per_rank: bool,
    /// `--stonewall`: every rank ends its measurement when the first rank's workers are done.
    pub stonewall: bool,
}

/// Joins the ranks of an MPI job when a launcher started this process and the build has MPI; `None`
/// otherwise.
pub fn init(options: RankOptions) -> Option<RankSession> {
    if !COMPILED || !launched() {
        return None;
    }
    #[cfg(feature = "mpi")]
    {
        let (universe, ranks) = ranks::Ranks::join(timeout_s(), options)?;
        let (rank, size, host) = (ranks.rank, ranks.size, ranks.host());
        Some(RankSession { universe, sync: Arc::new(ranks), rank, size, host })
    }
    #[cfg(not(feature = "mpi"))]
    {
        let _ = options;
        None
    }
}
