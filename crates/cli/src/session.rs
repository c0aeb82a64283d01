//! One session of a command that runs jobs: `iolab run`, the points of a sweep (or the phases of a job),
//! a `--find-max` search and `iolab verify` all follow one script, written once here:
//!
//! 1. claim every path the command reads or writes besides its targets (the trace it replays, the job file,
//!    `--json`/`--csv`, the catalog) in one [`WriteGate`], before anything is created: a path refused, a
//!    collision or a bad catalog is an exit-2 error with nothing done;
//! 2. serve `--metrics` (not for a dry run);
//! 3. run each job with [`iolab_run::execute`] under that gate (each run adds its targets and journal to a
//!    copy of it), saying and counting the run's own outputs not written (`--trace`);
//! 4. save the command's document in the catalog, print it and write the outputs; then an output not
//!    written, anywhere in the session, ends the command with exit code 3, after everything else was kept.

use crate::args::{CatalogFlags, RunArgs};
use crate::exec::{run_error, ShowMode, Shown};
use crate::exit::{usage, ExitStatus};
use crate::output::Outputs;
use crate::saving::Saver;
use anyhow::Result;
use iolab_device::WriteGate;
use iolab_report::plugin::EntryKind;
use iolab_report::RunResult;
use iolab_run::{DryRun, ExecOptions, Executed};
use iolab_spec::JobSpec;
use std::sync::Arc;

/// What a session claims and how it shows its runs.
pub struct Claims<'a> {
    /// A file the command reads (the trace `iolab replay` replays).
    pub reads: Option<(&'a str, &'a str)>,
    /// The job file.
    pub job_file: Option<&'a str>,
    /// `--json` and `--csv`.
    pub json: Option<&'a str>,
    /// `--csv`.
    pub csv: Option<&'a str>,
    /// The catalog.
    pub catalog: &'a CatalogFlags,
    /// `--metrics`.
    pub metrics: Option<&'a str>,
    /// `--quiet`.
    pub quiet: bool,
    /// `--dry-run`: nothing is saved or served.
    pub dry_run: bool,
}

/// One command's session (the module doc says the script).
pub struct Session {
    gate: WriteGate,
    outputs: Outputs,
    saver: Option<Saver>,
    shown: ShowMode,
    /// The runs' own outputs not written so far (each said on stderr).
    unwritten: usize,
}

impl Session {
    /// Claims the paths and opens the catalog (and serves `--metrics`): steps 1 and 2 of the script.
    pub fn open(c: Claims<'_>) -> Result<Session> {
        let mut gate = WriteGate::new();
        if let Some((what, path)) = c.reads {
            gate.claim(what, path, iolab_device::Access::Reads).map_err(usage)?;
        }
        crate::output::claim_job_file(&mut gate, c.job_file)?;
        let outputs = Outputs::claim(&mut gate, c.json, c.csv)?;
        let saver = Saver::open(c.catalog, c.quiet, c.dry_run, &mut gate)?;
        if !c.dry_run {
            crate::metrics::serve(c.metrics)?;
        }
        let live = !c.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let shown = ShowMode { quiet: c.quiet, live };
        Ok(Session { gate, outputs, saver, shown, unwritten: 0 })
    }

    /// The session of `iolab run` (and of the sweeps and searches made of its flags), reading `reads` when
    /// it replays a trace.
    pub fn of_run(args: &RunArgs, reads: Option<&str>) -> Result<Session> {
        Session::open(Claims {
            reads: reads.map(|p| ("the trace to replay", p)),
            job_file: args.job.as_deref(),
            json: args.json.as_deref(),
            csv: args.csv.as_deref(),
            catalog: &args.catalog,
            metrics: args.metrics.as_deref(),
            quiet: args.quiet,
            dry_run: args.dry_run,
        })
    }

    /// The session's write gate, for a command's further claims before anything is made (a database
    /// run's directories and captures: `iolab_db::Harness::claim`).
    pub fn gate_mut(&mut self) -> &mut WriteGate {
        &mut self.gate
    }

    /// Whether `--json` or `--csv` is standard output, which then carries no text summary.
    pub fn outputs_on_stdout(&self) -> bool {
        self.outputs.on_stdout()
    }

    /// How the session's runs are shown.
    pub fn shown(&self) -> ShowMode {
        self.shown
    }

    /// The catalog, unless `--no-save` (or a dry run).
    pub fn saver(&self) -> Option<&Saver> {
        self.saver.as_ref()
    }

    /// Options to run a job in this session, shown as `shown` says: the process's Ctrl-C flag, the session's
    /// gate, and the ranks when under MPI.
    pub fn options<'a>(&self, shown: ShowMode) -> ExecOptions<'a> {
        let stop = crate::signals::stop_flag(shown.quiet || shown.live);
        let mut opts = ExecOptions::new(stop, Box::new(Shown::new(shown.quiet, shown.live)));
        opts.gate = self.gate.clone();
        opts.sync = crate::ranks::sync();
        opts
    }

    /// Checks `job` as `--dry-run` does: plan, probe and bind against the session's gate; nothing is created
    /// or shown, and no signal handler is installed.
    pub fn dry_run(&self, job: JobSpec) -> Result<DryRun> {
        let mut opts = ExecOptions::new(Arc::default(), Box::new(iolab_run::Silent));
        opts.gate = self.gate.clone();
        opts.sync = crate::ranks::sync();
        match iolab_run::execute(job, true, &mut opts).map_err(run_error)? {
            Executed::DryRun(d) => Ok(*d),
            Executed::Done { .. } => anyhow::bail!("a dry run ran (bug)"),
        }
    }

    /// Runs `job` (step 3) with the session's display, replaying `replay` when given.
    pub fn run(
        &mut self,
        job: JobSpec,
        replay: Option<iolab_run::replay::ReplaySource>,
    ) -> Result<Box<RunResult>> {
        let mut opts = self.options(self.shown);
        opts.replay = replay;
        self.run_with(job, opts)
    }

    /// Runs `job` with `opts` (from [`Session::options`], changed by the caller: a check, an interval hook).
    pub fn run_with(&mut self, job: JobSpec, mut opts: ExecOptions<'_>) -> Result<Box<RunResult>> {
        match iolab_run::execute(job, false, &mut opts).map_err(run_error)? {
            Executed::Done { result, unwritten } => {
                for e in &unwritten {
                    eprintln!("iolab: {e}; the run's result is kept (exit code 3)");
                }
                self.unwritten += unwritten.len();
                Ok(result)
            }
            Executed::DryRun(_) => anyhow::bail!("a run ended as a dry run (bug)"),
        }
    }

    /// Saves nothing in the catalog, saying why on stderr (when it would have saved): a run interrupted
    /// before it measured any I/O has nothing to keep.
    pub fn skip_save(&mut self, why: &str) {
        if self.saver.take().is_some() {
            eprintln!("iolab: not saved in the catalog: {why}");
        }
    }

    /// Counts one output of the session not written (said by the caller).
    pub fn not_written(&mut self) {
        self.unwritten += 1;
    }

    /// Step 4: saves `json` in the catalog as an `entry` entry, then `write`s (prints and writes the outputs);
    /// every error after both were tried, then exit code 3 when any output of the session was not written,
    /// else `status`.
    pub fn conclude(
        &self,
        (entry, json): (&EntryKind, &str),
        write: impl FnOnce(&Outputs) -> Result<()>,
        status: ExitStatus,
    ) -> Result<ExitStatus> {
        let saved = crate::saving::save(self.saver.as_ref(), entry, json);
        let written = write(&self.outputs);
        saved?;
        written?;
        if self.unwritten > 0 {
            return Err(crate::exit::outputs_not_written(self.unwritten));
        }
        Ok(status)
    }
}
