//! `iolab run --find-max`: the largest mailbox count (jobs with `[exchange]`) or total open-loop rate whose
//! verdict passes, as Jetstress's "maximum users" finds it.
//!
//! The search itself (doubling, bisection, resolution, step limit) and its JSON document are
//! [`iolab_run::find_max`]; this module checks the flags, builds each step's job (Exchange sizing at the
//! step's mailbox count, or the job's rates scaled to the step's rate), runs and judges it, draws the
//! progress, and prints the steps as a table.

use crate::args::RunArgs;
use crate::exec::ShowMode;
use crate::exit::{usage, ExitStatus};
use crate::output::{print, Outputs};
use crate::session::Session;
use anyhow::Result;
use iolab_report::RunResult;
use iolab_report::{CsvExporter, JsonExporter, TextExporter};
use iolab_run::find_max::{self, FindMax, StepRequest, Variable};
use iolab_run::verdict::apply_sizing;
use iolab_run::Runner;
use iolab_spec::verdict::VerdictSpec;
use iolab_spec::{JobSpec, Place};

/// `iolab run --find-max`: the largest mailbox count (or total rate) whose verdict passes.
pub fn find_max(args: &RunArgs) -> Result<ExitStatus> {
    if args.dry_run {
        return Err(usage("--find-max runs many jobs; --dry-run shows one (drop --find-max to see it)"));
    }
    let resolution_pct = iolab_spec::units::parse_percent(&args.profile.find_max_resolution)
        .ok()
        .filter(|p| *p > 0.0)
        .ok_or_else(|| {
            usage(format!(
                "invalid value '{}' for '--find-max-resolution': expected a percentage above 0 and at most 100, e.g. '2'",
                args.profile.find_max_resolution
            ))
        })?;
    let mut base = crate::job::build_job(args)?;
    if base.verdict.is_none() {
        base.verdict = Some(VerdictSpec::default());
    }
    if let Some(d) = &args.profile.find_max_duration {
        let place = Place::Flag("--find-max-duration".into());
        base.set_run("duration", d, &place).map_err(usage)?;
        base.ios = None;
        base.bytes = None;
    }
    let variable = if base.exchange.is_some() { Variable::Mailboxes } else { Variable::RateIops };
    let start = match &base.exchange {
        Some(x) => x.mailboxes.unwrap_or(1) as f64,
        None => find_max::total_rate(&base).ok_or_else(|| {
            usage("--find-max without [exchange] searches the open-loop rate; give a starting --rate (e.g. --rate 1k)")
        })?,
    };
    let base_rate = if variable == Variable::Mailboxes { 1.0 } else { start };
    let session = Session::of_run(args, None)?;
    let (started_at, _) = iolab_run::env::now_rfc3339();
    let live = session.shown().live;
    let mut runner = StepRunner {
        session,
        started_at: started_at.clone(),
        run_ids: Vec::new(),
        base,
        base_rate,
        variable,
        overall: crate::progress::OverallBar::search(live),
    };
    let quiet = args.quiet;
    if !quiet {
        eprintln!("{}", search_plan(&runner.base, variable, start, resolution_pct));
    }
    let found = find_max::run(FindMax::new(variable, start, resolution_pct), &mut runner)?;
    let StepRunner { session, run_ids, .. } = runner;
    if let (Some(why), false) = (&found.limited_by, quiet) {
        if !live {
            eprintln!("not run"); // ends the step's "mailboxes N ... " line
        }
        eprintln!("iolab: the search stopped at step {}: {why}", found.steps.len() + 1);
    }
    let mut doc = find_max::document(&found, &started_at);
    for (step, id) in doc.steps.iter_mut().zip(run_ids) {
        step.run_id = id;
    }
    let text = JsonExporter.render(&doc);
    let written = |outputs: &Outputs| {
        if !quiet && !outputs.on_stdout() {
            print(&TextExporter.render(&doc))?;
        }
        outputs.write(|| text.clone(), || CsvExporter.render(&doc).map_err(anyhow::Error::new))
    };
    let status = if found.max.is_some() { ExitStatus::Ok } else { ExitStatus::Fail };
    session.conclude((crate::saving::entry(&doc)?, &text), written, status)
}

/// What a search will do, said before its first step (issue 25: it grew a user's `db.edb` to 32 GB with no
/// notice): what it varies from where, how many steps of how long at most, and which files grow with it.
fn search_plan(base: &JobSpec, variable: Variable, start: f64, resolution_pct: f64) -> String {
    let ramp = base.ramp_ns.unwrap_or(1_000_000_000);
    let step_ns = ramp.saturating_add(base.duration_ns.unwrap_or(10_000_000_000));
    let most_s = step_ns as f64 / 1e9 * find_max::MAX_STEPS as f64;
    let what = match variable {
        Variable::Mailboxes => format!("mailboxes from {start:.0}"),
        Variable::RateIops => format!("the offered rate from {start:.0} IOPS"),
    };
    let files: Vec<String> = base
        .targets
        .iter()
        .filter_map(|(name, t)| match &t.spec {
            Some(iolab_spec::TargetSpec::Path { path }) => Some(format!("{name}={path}")),
            _ => None,
        })
        .collect();
    let grows = match (variable, files.is_empty()) {
        (Variable::Mailboxes, false) => format!(
            "; each step sizes the targets for its mailboxes, so these files grow (never shrink) as the search \
             climbs: {}{}",
            files.join(", "),
            space_text(base, &files)
        ),
        _ => String::new(),
    };
    let clock = if base.clock == Some(iolab_spec::ClockKind::Virtual) { " of virtual time" } else { "" };
    format!(
        "iolab: --find-max searches {what} to within {resolution_pct}%: at most {} steps of {:.0} s{clock} each \
         (ramp and measurement), so at most {:.0} min{clock}{grows}",
        find_max::MAX_STEPS,
        step_ns as f64 / 1e9,
        most_s / 60.0
    )
}

/// What the data set takes per mailbox and how many mailboxes the file system of the first file has room
/// for: "; the data set takes 1.06 MiB a mailbox (1.00 GiB at 1,000); /srv has 40.0 GiB free, room for about
/// 38,000 mailboxes".
fn space_text(base: &JobSpec, files: &[String]) -> String {
    let Some(sizing) = base.exchange.as_ref().and_then(|x| x.resolve().ok()) else { return String::new() };
    let total = sizing.db_size_bytes.saturating_add(sizing.log_size_bytes);
    let per_mailbox = total as f64 / sizing.mailboxes.max(1) as f64;
    let mut text = format!(
        "; the data set takes {} a mailbox ({} at {})",
        iolab_report::format_bytes(per_mailbox as u64),
        iolab_report::format_bytes(total),
        iolab_report::format_count(sizing.mailboxes)
    );
    let first = files.first().and_then(|f| f.split_once('=')).map(|(_, p)| std::path::Path::new(p));
    let dir = first.and_then(|p| p.parent()).filter(|d| !d.as_os_str().is_empty());
    let dir = dir.unwrap_or_else(|| std::path::Path::new("."));
    if let Ok(st) = nix::sys::statvfs::statvfs(dir) {
        let free = st.blocks_available().saturating_mul(st.fragment_size());
        let room = (free as f64 / per_mailbox.max(1.0)) as u64;
        text.push_str(&format!(
            "; {} has {} free, room for about {} mailboxes",
            dir.display(),
            iolab_report::format_bytes(free),
            iolab_report::format_count(room)
        ));
    }
    text
}

/// Runs the search's steps for real: each on fresh targets, judged against the job's verdict, its progress
/// on the overall bar (or one stderr line per step without a terminal).
struct StepRunner {
    /// The catalog each step's run is saved in (none with `--no-save`).
    /// The search's session: its outputs and catalog, which no step's target or journal may be.
    session: Session,
    /// When the search began (RFC 3339): the `find-max` tag of its steps' runs.
    started_at: String,
    /// Each step's run in the catalog, by step number (from 1), when it was saved.
    run_ids: Vec<Option<String>>,
    /// The job of the start value.
    base: JobSpec,
    /// The base job's total rate (1 in a mailbox search), which a rate step scales.
    base_rate: f64,
    variable: Variable,
    overall: crate::progress::OverallBar,
}

impl StepRunner {
    /// The job of one step: Exchange sizing at its mailbox count, or the base job's rates scaled to its rate.
    fn job_at(&self, value: f64) -> Result<JobSpec> {
        let mut job = self.base.clone();
        if let Some(x) = job.exchange.as_mut() {
            x.mailboxes = Some(value as u64);
            let sizing = x.resolve().map_err(usage)?;
            apply_sizing(&mut job, &sizing);
        } else {
            find_max::scale_rates(&mut job, value / self.base_rate);
        }
        Ok(job)
    }

    /// Saves the step's whole run in the catalog, so the search's document can name it; a run not saved is
    /// said and counted as an output not written (exit 3 at the end), and the search goes on.
    fn save(&mut self, step: StepRequest, step_text: &str, result: &RunResult) {
        let Some(saver) = self.session.saver() else { return };
        let text = JsonExporter.render(result);
        let note = format!("find-max step {}: {step_text}", step.number);
        let saved =
            crate::saving::entry(result).and_then(|e| saver.save_step(e, &text, &self.started_at, &note));
        let id = match saved {
            Ok(id) => Some(id),
            Err(e) => {
                eprintln!("iolab: step {} was not saved in the catalog: {e:#}", step.number);
                self.session.not_written();
                None
            }
        };
        self.run_ids.resize(step.number - 1, None);
        self.run_ids.push(id);
    }
}

impl Runner<StepRequest> for StepRunner {
    type Error = anyhow::Error;

    fn run(&mut self, step: StepRequest) -> Result<RunResult> {
        let mut job = self.job_at(step.value)?;
        // Each step records into a file of its own: `run.s01.iolabtrace`, ...
        crate::points::tag_trace(&mut job, &format!("s{:02}", step.number));
        let step_text = format!(
            "{} {}{}",
            self.variable.name(),
            fmt_value(step.value, self.variable == Variable::Mailboxes),
            if step.repeat { " again, to confirm the boundary" } else { "" }
        );
        let ShowMode { quiet, live } = self.session.shown();
        if live {
            self.overall.begin(&step_text, true);
        } else if !quiet {
            eprint!("iolab: find-max step {}: {step_text} ... ", step.number);
        }
        let result = {
            let _scratch = iolab_device::ScratchGuard;
            // The step's own notices and bars stay off: the search's line says it.
            let opts = self.session.options(ShowMode { quiet: true, live });
            *self.session.run_with(job, opts)?
        };
        self.overall.end();
        let end = if iolab_run::runner::ended_early(self, &result) {
            "interrupted"
        } else if result.verdict.as_ref().is_some_and(|v| v.pass) {
            "PASS"
        } else {
            "FAIL"
        };
        if live {
            self.overall.println(&format!("iolab: find-max step {}: {step_text} ... {end}", step.number));
        } else if !quiet {
            eprintln!("{end}");
        }
        self.save(step, &step_text, &result);
        Ok(result)
    }

    fn stop_requested(&self) -> bool {
        crate::signals::stop_requested()
    }
}

/// A mailbox count (`1,234`) or a rate (`1.2k`).
fn fmt_value(v: f64, integer: bool) -> String {
    if integer {
        iolab_report::format_count(v as u64)
    } else {
        iolab_report::format_rate(v, 1)
    }
}
