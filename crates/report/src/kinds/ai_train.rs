//! An AI training run (`iolab.aitrain/1`, [`AiTrainResult`], `iolab ai train`): kept in the catalog as
//! `ai_train` (typed `ai-train`), listed by its samples/s, MiB/s and AU; in the Markdown report as its text;
//! not compared yet.

use std::fmt::Write as _;

use serde_json::Value;

use crate::ai::{AiTrainResult, AI_TRAIN_SCHEMA};
use crate::export::json::pretty;
use crate::format::{counted, format_bytes, format_count, format_duration_ns, format_rate};
use crate::html::markdown;
use crate::plugin::catalog::{f64_at, str_at};
use crate::plugin::{
    parse_as, Better, Column, ColumnShown, ComparedPoint, ComparedTrial, Comparing, Document, EntryKind, Kind,
    Metric, Page, Part, Peers, ReportDoc, Stage, Unit, Warned,
};

/// The kind of AI training runs.
pub struct AiTrainKind;

/// The `iolab runs` column of a training run's accelerator utilization.
const AU: Column = Column {
    header: "AU",
    place: 35,
    shown: ColumnShown::WhenAny,
    figures: &["au_pct"],
    cell: |c| c.figure("au_pct").map_or("-".into(), |v| format!("{v:.1} %")),
};

/// The `iolab runs` column of a training run's samples per second.
const SAMPLES: Column = Column {
    header: "samples/s",
    place: 36,
    shown: ColumnShown::WhenAny,
    figures: &["samples_per_s"],
    cell: |c| c.figure("samples_per_s").map_or("-".into(), |v| format_rate(v, 1)),
};

impl Kind for AiTrainKind {
    fn schema(&self) -> &'static str {
        AI_TRAIN_SCHEMA
    }
    fn name(&self) -> &'static str {
        "ai train"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<AiTrainResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind { stored: "ai_train", typed: &["ai-train", "aitrain"], what: "`iolab ai train` runs" }]
    }
    /// The workload, the data directory, samples/s, MiB/s (as `mb_s`, 10^6 bytes) and AU.
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        c.profile = str_at(doc, "/workload");
        c.targets.extend(str_at(doc, "/config/data_dir"));
        c.set_figure("samples_per_s", f64_at(doc, "/training/samples_per_s"));
        c.set_figure("mb_s", f64_at(doc, "/training/mib_per_s").map(|m| m * 1_048_576.0 / 1e6));
        c.set_figure("au_pct", f64_at(doc, "/training/au_pct"));
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&AU, &SAMPLES]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, html_section)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, as_text)]
    }
    fn without_csv(&self) -> Option<&'static str> {
        Some("an AI training run: it has no CSV form (its timeline is in the JSON)")
    }
    fn compare(&self) -> Option<&'static dyn Comparing> {
        Some(&AiTrainKind)
    }
}

impl Comparing for AiTrainKind {
    fn name(&self) -> &'static str {
        "ai_train"
    }
    fn one(&self) -> &'static str {
        "an AI training run, iolab ai train"
    }
    fn many(&self) -> &'static str {
        "AI training runs"
    }
    fn peers(&self) -> Peers {
        Peers::OwnKind
    }
    fn metric_names(&self) -> &'static [(&'static str, &'static str)] {
        &[("au", "au"), ("samples", "samples_s"), ("mbs", "mb_s"), ("p99", "p99"), ("cpu", "client_cpu_s")]
    }
    fn points<'a>(&self, doc: &'a dyn Document) -> Vec<ComparedPoint<'a>> {
        vec![ComparedPoint { params: None, trials: vec![ComparedTrial::document(doc)] }]
    }
    fn side(
        &self,
        docs: &[&dyn Document],
        _letter: &str,
        _source: &str,
        notes: &mut Vec<String>,
    ) -> (Vec<String>, Vec<u64>) {
        let runs: Vec<&AiTrainResult> = docs.iter().filter_map(|d| d.as_any().downcast_ref()).collect();
        if runs.iter().any(|r| r.partial) {
            notes.push("a side holds a training run stopped early (partial)".into());
        }
        (Vec::new(), runs.iter().map(|r| r.seed).collect())
    }
    /// AU, samples/s and MB/s (the storage's), the read p99, and the client's CPU per accelerator.
    fn metrics(&self, _trials: &[Vec<ComparedTrial<'_>>]) -> Vec<Metric> {
        fn of(t: ComparedTrial<'_>) -> Option<&AiTrainResult> {
            t.get::<AiTrainResult>()
        }
        vec![
            Metric::new("au", "AU", "training", (Unit::Share, Better::Higher), move |t| {
                of(t)?.training.au_pct.map(|a| a / 100.0)
            }),
            Metric::new("samples_s", "samples/s", "training", (Unit::Iops, Better::Higher), move |t| {
                of(t).map(|r| r.training.samples_per_s)
            }),
            Metric::new("mb_s", "MB/s", "training", (Unit::MbS, Better::Higher), move |t| {
                of(t).map(|r| r.training.mib_per_s * 1.048_576)
            }),
            Metric::new("p99", "read p99", "training", (Unit::Ns, Better::Lower), move |t| {
                of(t)?.latency_ns.as_ref().map(|l| l.p99 as f64)
            }),
            Metric::new("client_cpu_s", "client CPU per accelerator", "client", (Unit::Ns, Better::Lower), move |t| {
                of(t).map(|r| r.client.cpu_s_per_accelerator * 1e9)
            }),
        ]
    }
}

/// The run on the report's page: AU, samples/s, accelerators (and `--find-max`'s answer), then its text.
fn html_section(p: &mut Page, d: &ReportDoc) {
    let Some(r) = d.body.as_any().downcast_ref::<AiTrainResult>() else { return };
    let t = &r.training;
    let verdict = match &r.verdict {
        Some(v) => format!("{} against {:.0} %", if v.passed { "PASS" } else { "FAIL" }, v.min_au_pct),
        None => "no verdict".into(),
    };
    let mut cards = vec![
        ("AU", t.au_pct.map_or("-".into(), |a| format!("{a:.2} %")), verdict),
        ("samples/s", format_rate(t.samples_per_s, 1), format!("{} MiB/s", format_rate(t.mib_per_s, 1))),
        ("accelerators", r.config.accelerators.to_string(), format!("batch {}", r.config.batch_size)),
    ];
    if let Some(f) = &r.find_max {
        cards.push(("find-max", f.accelerators.to_string(), format!("accelerators at AU >= {:.0} %", f.min_au_pct)));
    }
    let title = if r.emulated.is_some() { "AI training (emulated storage)" } else { "AI training" };
    crate::html::ai_page::ai_section(p, d, (title, "ai-train"), &cards);
}

/// The run in Markdown: its text.
fn as_text(p: &mut Page, d: &ReportDoc) {
    markdown::as_text(&mut p.out, "AI training", d);
}

impl Document for AiTrainResult {
    fn kind(&self) -> &'static dyn Kind {
        &AiTrainKind
    }
    fn text(&self) -> String {
        text(self)
    }
    fn json(&self) -> String {
        pretty(self) + "\n"
    }
    fn started_at(&self) -> String {
        self.started_at.clone()
    }
    fn iolab_version(&self) -> String {
        self.iolab_version.clone()
    }
    fn warnings(&self) -> Vec<Warned> {
        self.warnings.iter().map(Warned::of).collect()
    }
}

/// The printed result of `iolab ai train`: what ran, what it achieved, what it cost the client, the verdict.
pub fn text(r: &AiTrainResult) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "ai train {} ({}), seed {}", r.workload, r.source, r.seed);
    let _ = writeln!(o, "  {}", r.disclaimer);
    if let Some(e) = &r.emulated {
        let _ = writeln!(
            o,
            "  storage: emulated {e} on virtual time: every figure but the client's is the model's; nothing was written, no page cache"
        );
    }
    setup(&mut o, r);
    figures(&mut o, r);
    client_and_verdict(&mut o, r);
    if let Some(f) = &r.find_max {
        find_max(&mut o, f);
    }
    o
}

/// `--find-max`: each run of the search, then the answer.
fn find_max(o: &mut String, f: &crate::ai::AiFindMax) {
    for t in &f.tried {
        let _ = writeln!(
            o,
            "  {} {} accelerator(s), seed {}: AU {} {}",
            if t.confirmation { "confirm" } else { "try    " },
            t.accelerators,
            t.seed,
            t.au_pct.map_or("-".into(), |a| format!("{a:.2} %")),
            if t.passed { "PASS" } else { "FAIL" }
        );
    }
    let _ = writeln!(
        o,
        "find-max: {} accelerator(s) at AU >= {:.0} %{} (the document's figures are that run's)",
        f.accelerators,
        f.min_au_pct,
        if f.confirmed { ", confirmed with the next seed" } else { ", NOT confirmed (see warnings)" }
    );
}

/// The dataset and the training set-up.
fn setup(o: &mut String, r: &AiTrainResult) {
    let c = &r.config;
    let made = match r.emulated {
        Some(_) => format!("{} laid out on the model, not written", format_bytes(r.dataset.bytes)),
        None => format!(
            "{} generated in {:.2} s ({:.2} CPU-s)",
            format_bytes(r.dataset.bytes),
            r.dataset.generate_s,
            r.dataset.generate_cpu_s
        ),
    };
    let _ = writeln!(
        o,
        "  dataset: {} {} files x {} samples of {} (stdev {}) in {}: {made}",
        format_count(c.num_files),
        c.format,
        format_count(c.samples_per_file),
        format_bytes(c.record_length_bytes),
        format_bytes(c.record_length_bytes_stdev),
        c.data_dir,
    );
    let _ = writeln!(
        o,
        "  training: {}, batch {}, {} each, {}, computation {} per step, {}",
        counted(c.accelerators, "accelerator"),
        c.batch_size,
        counted(c.read_threads, "reader thread"),
        counted(c.epochs, "epoch"),
        format_duration_ns(c.computation_time_s * 1e9),
        match (&r.emulated, c.odirect) {
            (Some(_), _) => "every read to the emulated device",
            (None, true) => "O_DIRECT",
            (None, false) => "through the page cache",
        },
    );
    if let Some(t) = c.transfer_size_bytes {
        let _ = writeln!(
            o,
            "  reads: each accelerator's files as record streams (TensorFlow's reader), in reads of {}",
            format_bytes(t)
        );
    }
}

/// Steps, throughput, AU (per epoch when several) and the samples' read latency.
fn figures(o: &mut String, r: &AiTrainResult) {
    let t = &r.training;
    let _ = writeln!(
        o,
        "  steps: {} per accelerator per epoch; waited {:.3} s for data ({:.3} s of it in first steps, left out of AU), computed {:.3} s",
        t.steps_per_epoch, t.wait_s, t.first_wait_s, t.compute_s
    );
    let au = t.au_pct.map_or("- (see warnings)".into(), |a| format!("{a:.2} %"));
    let _ = writeln!(
        o,
        "  throughput: {} samples/s, {} MiB/s over {:.3} s ({} samples, {} read); AU {}",
        format_rate(t.samples_per_s, 1),
        format_rate(t.mib_per_s, 1),
        t.elapsed_s,
        format_count(t.samples),
        format_bytes(t.bytes_read),
        au
    );
    for e in t.epochs.iter().filter(|_| t.epochs.len() > 1) {
        let au = e.au_pct.map_or("-".into(), |a| format!("{a:.2} %"));
        let _ = writeln!(
            o,
            "    epoch {}: {} samples/s over {:.3} s, AU {au}",
            e.epoch,
            format_rate(e.samples_per_s, 1),
            e.elapsed_s
        );
    }
    if let Some(l) = &r.latency_ns {
        let what = if r.config.transfer_size_bytes.is_some() { "read latency (each read)" } else { "sample read latency" };
        let _ = writeln!(
            o,
            "  {what}: mean {}, p50 {}, p99 {}, max {}",
            format_duration_ns(l.mean),
            format_duration_ns(l.p50 as f64),
            format_duration_ns(l.p99 as f64),
            format_duration_ns(l.max as f64)
        );
    }
}

/// The client's own cost (apart from the storage's figures), what was ignored, the warnings and the verdict.
fn client_and_verdict(o: &mut String, r: &AiTrainResult) {
    let _ = writeln!(
        o,
        "  client (this process, not the storage): {:.2} CPU-s training ({:.2} per accelerator), peak RSS {}",
        r.client.cpu_s,
        r.client.cpu_s_per_accelerator,
        format_bytes(r.client.peak_rss_bytes)
    );
    for i in &r.ignored {
        let _ = writeln!(o, "  ignored: {}: {} ({})", i.key, i.value, i.why);
    }
    for w in &r.warnings {
        let _ = writeln!(o, "  warning: {w}");
    }
    if r.partial {
        let _ = writeln!(o, "  partial: stopped early; the figures cover the steps that ran");
    }
    match &r.verdict {
        Some(v) => {
            let _ = writeln!(
                o,
                "verdict: {} (AU {:.2} % {} the minimum {:.0} %)",
                if v.passed { "PASS" } else { "FAIL" },
                v.au_pct,
                if v.passed { "meets" } else { "is below" },
                v.min_au_pct
            );
        }
        None => {
            let _ = writeln!(o, "verdict: none (no minimum AU, or no AU)");
        }
    }
}

