//! What every `iolab db` command shares in the binary, as glue: its flags turned into the library's plain
//! [`Setup`] ([`common`]), then one script ([`run`]) around the library's [`Harness`], which claims, makes,
//! runs and undoes the whole storage side: the command's session (`session.rs`, the one `iolab run` has:
//! `--json` and the catalog claimed in one write gate before anything is made; the document saved, printed
//! and written after), and how a workload is shown ([`Shown`]: notices, the bars of `progress::DbBars`,
//! `--metrics`). A leaf: it imports no command.

use crate::args::db::{DbCommonArgs, DbWindowKeys};
use crate::args::SomeKeys;
use crate::exit::{usage, ExitStatus};
use crate::progress::{DbBars, OverallBar};
use crate::session::{Claims, Session};
use anyhow::Result;
use iolab_db::harness::{DatabaseKind, Typed};
use iolab_db::{Harness, Live, Setup, Workload, WorkloadObserver};
use iolab_report::{Document, JsonExporter, TextExporter};
use std::time::Duration;

/// A whole number flag in `lo..=hi`.
pub fn number(flag: &str, text: &str, lo: u64, hi: u64) -> Result<u64> {
    let v = iolab_spec::units::parse_count(text)
        .map_err(|e| usage(format!("invalid value '{text}' for '{flag}': {e}")))?;
    if v.fract() != 0.0 || v < lo as f64 || v > hi as f64 {
        return Err(usage(format!(
            "invalid value '{text}' for '{flag}': expected a whole number in {lo}..={hi}"
        )));
    }
    Ok(v as u64)
}

/// An `iolab-db` error as the binary says it: the environment's and the input's are exit-2 usage errors;
/// a stop before there was anything to report says what became of what iolab made.
pub fn db_error(e: iolab_db::WorkloadError) -> anyhow::Error {
    match e {
        iolab_db::WorkloadError::Interrupted => {
            anyhow::anyhow!("interrupted before there was anything to report (what iolab made was removed)")
        }
        e if e.is_setup() => usage(e),
        e => anyhow::Error::new(e),
    }
}

/// `--ramp` and `--duration` of a database run, with its defaults (5 s and 60 s).
pub fn window(keys: &SomeKeys<DbWindowKeys>) -> Result<(Duration, Duration)> {
    let window = keys.to_job().map_err(usage)?;
    Ok((
        window.ramp_ns.map_or(Duration::from_secs(5), Duration::from_nanos),
        window.duration_ns.map_or(Duration::from_secs(60), Duration::from_nanos),
    ))
}

/// The flags every database command has, parsed: the storage side's setup and the seed.
pub struct Common {
    /// What the run asks of the storage side.
    pub setup: Setup,
    /// `--seed`, or a fresh one.
    pub seed: u64,
}

/// Parses the common flags, with `url` (`--url`, where the command has it).
pub fn common(c: &DbCommonArgs, url: Option<&str>) -> Result<Common> {
    let size = |flag: &str, text: &str| {
        iolab_spec::units::parse_size(text)
            .map_err(|e| usage(format!("invalid value '{text}' for '{flag}': {e}")))
    };
    let keys = c.keys.to_job().map_err(usage)?;
    let mut setup = Setup::new(DatabaseKind::parse(&c.database).map_err(db_error)?);
    setup.url = url.map(iolab_db::ServerUrl::parse).transpose().map_err(db_error)?;
    setup.dir = c.dir.clone();
    setup.shared_buffers_bytes = size("--shared-buffers", &c.shared_buffers)?;
    setup.keep = c.keep;
    setup.memory = match c.storage.memory.as_deref() {
        Some(text) => Some(Typed { value: size("--memory", text)?, text: text.to_string() }),
        None => None,
    };
    setup.throttle = keys.throttle;
    setup.capture = c.storage.capture.clone();
    Ok(Common { setup, seed: keys.seed.unwrap_or_else(crate::points::fresh_seed) })
}

/// What a command makes of its workload's document: the document (whose kind says how it is saved and
/// shown), and whether the run was good (exit 0; else 1).
pub struct DbOutcome<'a> {
    /// The document.
    pub doc: &'a dyn Document,
    /// Exit 0.
    pub good: bool,
}

/// How a command runs its workload: `headline` said first, `--metrics` served at `metrics` (tpcc),
/// `outcome` read from the document.
pub struct Command<'a, D> {
    /// The first notice (`db tpcc on sqlite, seed 7`).
    pub headline: String,
    /// `--metrics ADDR:PORT`.
    pub metrics: Option<&'a str>,
    /// Seconds each point is planned to take (its ramp and window), for a sweep's overall bar.
    pub point_s: Option<f64>,
    /// The document's kind, rendering and exit status.
    pub outcome: fn(&D) -> DbOutcome<'_>,
}

/// One database command from its flags to its outputs (the module doc says the script); `setup` is
/// [`common`]'s, `workload` the command's own.
pub fn run<W: Workload>(
    c: &DbCommonArgs,
    setup: Setup,
    workload: W,
    cmd: Command<'_, W::Document>,
) -> Result<ExitStatus> {
    let database = setup.database.name();
    let mut session = Session::open(Claims {
        reads: None,
        job_file: None,
        json: c.json.as_deref(),
        csv: None,
        catalog: &c.catalog,
        metrics: None,
        // The JSON on stdout keeps the terminal for itself, as --quiet does.
        quiet: c.quiet || c.json.as_deref() == Some("-"),
        dry_run: false,
    })?;
    let harness = Harness::claim(setup, &workload, session.gate_mut()).map_err(db_error)?;
    crate::metrics::serve_db(cmd.metrics, workload.name(), database)?;
    let quiet = c.quiet || session.outputs_on_stdout();
    let live = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let stop = crate::signals::stop_flag(quiet || live);
    let shown = Shown::new(quiet, live, &workload, cmd.point_s);
    shown.notice(&cmd.headline);
    let ran = harness.run(workload, &shown, &stop);
    drop(shown);
    let ran = ran.map_err(db_error)?;
    let outcome = (cmd.outcome)(&ran.document);
    let entry = crate::saving::entry(outcome.doc)?;
    let json = JsonExporter.render(outcome.doc);
    let status = if outcome.good { ExitStatus::Ok } else { ExitStatus::Fail };
    for _ in ran.captures.iter().filter(|c| c.result.is_err()) {
        session.not_written();
    }
    session.conclude(
        (entry, &json),
        |outputs| {
            if !quiet {
                crate::output::print(&TextExporter.render(outcome.doc))?;
            }
            outputs.write(|| json.clone(), || unreachable!("no --csv"))?;
            say_captures(&ran.captures, quiet, live);
            Ok(())
        },
        status,
    )
}

/// Says what each window's capture wrote (unless quiet), and every capture not written.
fn say_captures(captures: &[iolab_db::harness::CaptureWritten], quiet: bool, live: bool) {
    for c in captures {
        match &c.result {
            Ok(n) if !quiet => crate::progress::notice(
                live,
                &format!("iolab: captured {} ops into {}", iolab_report::format_count(*n), c.path),
            ),
            Ok(_) => {}
            Err(e) => eprintln!("iolab: --capture {}: {e}", c.path),
        }
    }
}

/// How a database run is shown: notices on stderr (unless quiet; above the bars when live), the bars of
/// [`DbBars`] and, for several user counts, the sweep's overall bar; `--metrics` fed as it goes.
pub struct Shown {
    quiet: bool,
    live: bool,
    bars: DbBars,
    overall: Option<OverallBar>,
}

impl Shown {
    /// The display of `workload`'s run (an overall bar when it sweeps over users).
    fn new<W: Workload>(quiet: bool, live: bool, workload: &W, point_s: Option<f64>) -> Shown {
        let users = workload.users();
        let overall = (users.len() > 1).then(|| OverallBar::sweep(live, vec![point_s; users.len()]));
        Shown { quiet, live, bars: DbBars::new(live), overall }
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        self.bars.finish();
    }
}

impl WorkloadObserver for Shown {
    fn notice(&self, text: &str) {
        if !self.quiet {
            crate::progress::notice(self.live, &format!("iolab: {text}"));
        }
    }

    fn loaded(&self, rows: u64, expected: u64) {
        if let Some(m) = crate::metrics::current_db() {
            m.loaded(rows);
        }
        self.bars.loaded(rows, expected);
    }

    fn point(&self, index: usize, count: usize, users: u32) {
        if let Some(m) = crate::metrics::current_db() {
            m.point(users);
        }
        if let Some(o) = &self.overall {
            if index > 0 {
                o.end();
            }
            o.begin(&format!("users {users} ({}/{count})", index + 1), true);
        }
        self.bars.point();
    }

    fn live(&self, live: &Live) {
        if let Some(m) = crate::metrics::current_db() {
            m.running(live);
        }
        self.bars.running(live);
    }
}

#[cfg(test)]
mod tests {
    use crate::args::db::DbWhat;
    use crate::args::{Cli, Command};
    use clap::Parser;

    /// The database commands parse `--seed`, `-d` and `--ramp` with `iolab run`'s own parsers: `0xff`, `2m`.
    #[test]
    fn db_flags_spelled_as_run_s_parse_as_run_s() {
        let cli = Cli::try_parse_from(["iolab", "db", "tpcc", "--seed", "0xff", "-d", "2m", "--ramp", "0"])
            .unwrap();
        let Command::Db(db) = cli.command else { panic!("db") };
        let DbWhat::Tpcc(a) = db.what else { panic!("tpcc") };
        assert_eq!(super::common(&a.common, None).unwrap().seed, 255);
        let (ramp, duration) = super::window(&a.window).unwrap();
        assert_eq!((ramp.as_secs(), duration.as_secs()), (0, 120));
        let run = Cli::try_parse_from(["iolab", "run", "--seed", "0xff", "-d", "2m"]).unwrap();
        let Command::Run(r) = run.command else { panic!("run") };
        let job = r.keys.to_job().unwrap();
        assert_eq!((job.seed, job.duration_ns), (Some(255), Some(120_000_000_000)));
        let bad = Cli::try_parse_from(["iolab", "db", "tpch", "--seed", "soon"]).unwrap();
        let Command::Db(db) = bad.command else { panic!("db") };
        let DbWhat::Tpch(a) = db.what else { panic!("tpch") };
        let e = super::common(&a.common, None).err().expect("refused").to_string();
        assert!(e.contains("invalid value 'soon' for '--seed'"), "{e}");
    }
}
