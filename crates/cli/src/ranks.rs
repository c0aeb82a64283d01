//! Several hosts, one run (`mpirun -np N iolab run ...`, docs/MULTIHOST.md): the rank this process is, the
//! collectives every job execution runs through ([`sync`], given to `iolab_run::execute` by `exec.rs`), and
//! what a rank other than 0 leaves to rank 0: it prints nothing, writes no `--json`/`--csv` and saves
//! nothing in the catalog. A leaf: it depends on no command module.

use crate::args::{Command, RunArgs};
use iolab_run::RunSync;
use std::sync::{Arc, OnceLock};

/// This process's rank and the collectives, when it is one rank of several hosts' run.
static SYNC: OnceLock<Arc<dyn RunSync>> = OnceLock::new();

/// Joins the ranks when a launcher started this process (and MPI is compiled in); a rank other than 0 then
/// hands its output to rank 0 ([`follow`]).
pub fn join(command: &mut Command) -> Option<iolab_multihost::RankSession> {
    let session = iolab_multihost::init(options(command))?;
    let _ = SYNC.set(session.sync());
    if session.rank() != 0 {
        follow(command);
    }
    Some(session)
}

/// The collectives of a run over several hosts; `None` on one host.
pub fn sync() -> Option<Arc<dyn RunSync>> {
    SYNC.get().cloned()
}

/// True on every rank but 0 (which prints, writes and saves for all).
pub fn follower() -> bool {
    SYNC.get().is_some_and(|s| s.rank() != 0)
}

/// `--rate-per-rank` and `--stonewall` of the command that runs jobs.
fn options(command: &Command) -> iolab_multihost::RankOptions {
    run_args(command).map_or_else(Default::default, |a| iolab_multihost::RankOptions {
        rate_per_rank: a.rate_per_rank,
        stonewall: a.stonewall,
    })
}

/// The run options of a command that runs jobs.
fn run_args(command: &Command) -> Option<&RunArgs> {
    match command {
        Command::Run(a) => Some(a.as_ref()),
        Command::Sweep(a) => Some(&a.run),
        _ => None,
    }
}

/// A rank other than 0: quiet, no outputs, nothing saved, no metrics endpoint.
fn follow(command: &mut Command) {
    let args = match command {
        Command::Run(a) => a.as_mut(),
        Command::Sweep(a) => &mut a.run,
        _ => return,
    };
    args.quiet = true;
    args.json = None;
    args.csv = None;
    args.metrics = None;
    args.catalog.no_save = true;
}

/// Marks an error every rank of a run over several hosts returned alike (`iolab_run::Error::Ranks`): rank 0
/// says it, the others exit with its code in silence.
#[derive(Debug)]
pub struct Agreed;

impl std::fmt::Display for Agreed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("agreed by every rank")
    }
}

impl std::error::Error for Agreed {}

/// How an error ends this process when it is one rank of several: an error every rank returned alike is
/// said by rank 0 alone; any other is said by the rank that saw it, naming it, and ends every rank at once
/// (MPI_Abort), so none is left waiting. `None` when the error is to be handled as on one host.
pub fn end_on_error(
    session: &iolab_multihost::RankSession,
    e: &anyhow::Error,
    text: &str,
    code: i32,
) -> Option<i32> {
    if e.chain().any(|c| c.is::<Agreed>()) {
        return if session.rank() == 0 { None } else { Some(code) };
    }
    if session.size() == 1 {
        return None;
    }
    eprintln!("error: rank {} (host {}): {text}", session.rank(), session.host());
    session.abort(code)
}
