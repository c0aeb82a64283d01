//! `iolab ai train` and `iolab ai checkpoint`: a DLIO workload (a YAML file or a built-in) with `--param` over it, read by
//! `iolab-ai`; the data directory claimed in the command's write gate with `--json` and the catalog before
//! anything is made; the run (`iolab_ai::run`: generate, train, remove); the document saved (as an
//! `ai_train` entry), printed and written. Exit 1 on a FAIL verdict, as a profile's verdict does. A
//! checkpoint run (`iolab_ai::checkpoint::run`) is refused before anything is made when its checkpoints do
//! not fit in the data directory's file system; it has no verdict.

use crate::args::ai::{AiArgs, AiWhat, CheckpointArgs, TrainArgs};
use crate::db_run::number;
use crate::exit::{usage, ExitStatus};
use crate::session::{Claims, Session};
use anyhow::Result;
use iolab_report::{Document, JsonExporter, TextExporter};

/// Runs `iolab ai`.
pub fn ai(args: &AiArgs) -> Result<ExitStatus> {
    match &args.what {
        AiWhat::Train(a) => train(a),
        AiWhat::Checkpoint(a) => checkpoint(a),
    }
}

/// Notices on stderr, unless quiet.
struct Said(bool);

impl iolab_ai::Notices for Said {
    fn notice(&self, text: &str) {
        if !self.0 {
            eprintln!("{text}");
        }
    }
}

fn train(a: &TrainArgs) -> Result<ExitStatus> {
    let mut loaded = iolab_ai::load(&a.config, &a.param).map_err(usage)?;
    loaded.config.accelerators = number("--num-accelerators", &a.num_accelerators, 1, 1024)?;
    iolab_ai::check(&loaded.config).map_err(ai_error)?;
    let given = a.keys.to_job().map_err(usage)?.seed;
    let seed = given.or(loaded.config.seed).unwrap_or_else(crate::points::fresh_seed);
    let quiet = a.quiet || a.json.as_deref() == Some("-");
    let mut session = open_session(a.json.as_deref(), &a.catalog, quiet)?;
    if let Some(target) = a.data_dir.as_deref().and_then(emulated) {
        return train_emulated(
            a,
            &loaded,
            (&target, a.data_dir.as_deref().unwrap_or_default()),
            seed,
            session,
        );
    }
    if a.find_max {
        return Err(usage(anyhow::anyhow!(
            "--find-max runs on an emulated device (--data-dir sim:...): on real storage each step would generate the dataset anew, which is not built yet"
        )));
    }
    let dir = data_dir(&a.data_dir);
    let held = session.gate_mut().database_dir("--data-dir", &dir, &[]).map_err(usage)?;
    let stop = crate::signals::stop_flag(quiet);
    let said = Said(quiet);
    iolab_ai::Notices::notice(
        &said,
        &format!("ai train {} ({}), seed {seed}", loaded.config.name, loaded.config.source),
    );
    let doc = iolab_ai::run(&loaded, held, seed, &stop, &said).map_err(ai_error)?;
    conclude(session, &doc, quiet, verdict_status(&doc))
}

/// An emulated device's target (`sim:`, or a `link:` in front of one) when `--data-dir` names one.
fn emulated(text: &str) -> Option<iolab_spec::TargetSpec> {
    match iolab_spec::TargetSpec::parse(text) {
        Ok(t @ (iolab_spec::TargetSpec::Sim(_) | iolab_spec::TargetSpec::Link { .. })) => Some(t),
        _ => None,
    }
}

/// Training (or `--find-max`) on an emulated device, on virtual time: nothing is claimed or written.
fn train_emulated(
    a: &TrainArgs,
    loaded: &iolab_ai::LoadedWorkload,
    target: (&iolab_spec::TargetSpec, &str),
    seed: u64,
    session: Session,
) -> Result<ExitStatus> {
    let quiet = a.quiet || a.json.as_deref() == Some("-");
    let said = Said(quiet);
    iolab_ai::Notices::notice(
        &said,
        &format!(
            "ai train {} ({}), seed {seed}, on the emulated {} (virtual time)",
            loaded.config.name, loaded.config.source, target.1
        ),
    );
    let doc = iolab_ai::run_emulated(loaded, target, seed, a.find_max, &said).map_err(ai_error)?;
    conclude(session, &doc, quiet, verdict_status(&doc))
}

/// Saves, prints and writes the document; exit 1 on a FAIL verdict.
fn conclude(session: Session, doc: &dyn Document, quiet: bool, status: ExitStatus) -> Result<ExitStatus> {
    let entry = crate::saving::entry(doc)?;
    let json = JsonExporter.render(doc);
    session.conclude(
        (entry, &json),
        |outputs| {
            if !quiet {
                crate::output::print(&TextExporter.render(doc))?;
            }
            outputs.write(|| json.clone(), || unreachable!("no --csv"))
        },
        status,
    )
}

/// Exit 1 on a training run's FAIL verdict, as a profile's verdict does.
fn verdict_status(doc: &iolab_report::ai::AiTrainResult) -> ExitStatus {
    match &doc.verdict {
        Some(v) if !v.passed => ExitStatus::Fail,
        _ => ExitStatus::Ok,
    }
}

/// The command's session: its `--json` and catalog claimed in the write gate before anything is made.
fn open_session(json: Option<&str>, catalog: &crate::args::CatalogFlags, quiet: bool) -> Result<Session> {
    Session::open(Claims {
        reads: None,
        job_file: None,
        json,
        csv: None,
        catalog,
        metrics: None,
        quiet,
        dry_run: false,
    })
}

/// `--data-dir`, else `iolab-ai-PID` in `$IOLAB_SCRATCH_DIR` or the current directory.
fn data_dir(given: &Option<String>) -> String {
    given.clone().unwrap_or_else(|| {
        let base = std::env::var("IOLAB_SCRATCH_DIR").unwrap_or_else(|_| ".".into());
        format!("{}/iolab-ai-{}", base.trim_end_matches('/'), std::process::id())
    })
}

fn checkpoint(a: &CheckpointArgs) -> Result<ExitStatus> {
    let mut loaded = iolab_ai::checkpoint::load(&a.config, &a.param).map_err(usage)?;
    let default = loaded.config.default_ranks(loaded.builtin_ranks).to_string();
    let ranks = a.num_accelerators.as_ref().unwrap_or(&default);
    loaded.config.ranks = number("--num-accelerators", ranks, 1, 4096)?;
    loaded.config.check().map_err(usage)?;
    let dir = data_dir(&a.data_dir);
    iolab_ai::checkpoint::check_space(&loaded.config, &dir).map_err(ai_error)?;
    let quiet = a.quiet || a.json.as_deref() == Some("-");
    let mut session = open_session(a.json.as_deref(), &a.catalog, quiet)?;
    let held = session.gate_mut().database_dir("--data-dir", &dir, &[]).map_err(usage)?;
    let stop = crate::signals::stop_flag(quiet);
    let said = Said(quiet);
    let c = &loaded.config;
    iolab_ai::Notices::notice(&said, &format!("ai checkpoint {} ({})", c.name, c.source));
    let doc = iolab_ai::checkpoint::run(&loaded, held, crate::points::fresh_seed(), &stop, &said)
        .map_err(ai_error)?;
    conclude(session, &doc, quiet, ExitStatus::Ok)
}

/// An `iolab-ai` error as the binary says it: the input's are exit-2 usage errors.
fn ai_error(e: iolab_ai::AiError) -> anyhow::Error {
    if e.is_usage() {
        usage(e)
    } else {
        anyhow::Error::new(e)
    }
}
