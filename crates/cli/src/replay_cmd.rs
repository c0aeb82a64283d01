//! `iolab replay TRACE`: the trace read into memory and mapped ([`crate::replaying`]), the workload flags set
//! from it (one worker unless `--workers`, block size the longest op, reads and/or writes, as many I/Os as
//! records), then run as `iolab run` runs a job, with the records in place of the generator
//! (`iolab_run::replay`).

use crate::args::ReplayArgs;
use crate::exit::ExitStatus;
use crate::replaying::{load, parse_speed};
use anyhow::Result;

/// Runs `iolab replay`.
pub fn replay(args: &ReplayArgs) -> Result<ExitStatus> {
    let speed = parse_speed(args.speed.as_deref().unwrap_or("1x"))?;
    let loaded = load(&args.trace_file, &args.map, args.spread, &args.run)?;
    let mut run = args.run.clone();
    loaded.set_workload(&mut run)?;
    crate::run::run_replay(&run, loaded.at(speed))
}
