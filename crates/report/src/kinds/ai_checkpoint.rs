//! An AI checkpoint run (`iolab.aicheckpoint/1`, [`AiCheckpointResult`], `iolab ai checkpoint`): DLIO's
//! checkpoint workloads (a transformer's model and optimizer state sharded over tensor, pipeline and
//! data-parallel ranks) written and read back by simulated ranks, with time per checkpoint and throughput per
//! rank, the run's figure being the slowest rank's, as MLPerf Storage rules. Kept in the catalog as
//! `ai_checkpoint` (typed `ai-checkpoint`), listed by its write and read GiB/s; in the Markdown report as its
//! text; not compared yet.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ai::{ClientCost, IgnoredOption};
use crate::export::json::pretty;
use crate::format::{counted, format_bytes, format_count};
use crate::html::markdown;
use crate::plugin::catalog::{f64_at, str_at};
use crate::plugin::{
    parse_as, Column, ColumnShown, Document, EntryKind, Kind, Page, Part, ReportDoc, Stage, Warned,
};

/// The schema of [`AiCheckpointResult`].
pub const AI_CHECKPOINT_SCHEMA: &str = "iolab.aicheckpoint/1";

/// At most this many ranks are printed in the text (all are in the JSON).
pub const TEXT_RANKS: usize = 16;

/// One checkpoint run (`iolab ai checkpoint`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AiCheckpointResult {
    /// Always [`AI_CHECKPOINT_SCHEMA`].
    pub schema: String,
    /// The iolab that ran it.
    pub iolab_version: String,
    /// The workload's name (the YAML's `model.name`, or the built-in's).
    pub workload: String,
    /// Where the workload came from: `built-in llama3-8b` or the YAML file's path.
    pub source: String,
    /// [`crate::ai::AI_DISCLAIMER`].
    pub disclaimer: String,
    /// When the first checkpoint started, RFC 3339.
    pub started_at: String,
    /// The workload as run.
    pub config: CheckpointView,
    /// Options of the workload that change no I/O, each with why.
    pub ignored: Vec<IgnoredOption>,
    /// One checkpoint's size, all ranks.
    pub checkpoint: CheckpointSize,
    /// How the reads were kept from the page cache.
    pub page_cache: PageCacheView,
    /// The writes' figures; `None` when none completed.
    pub write: Option<PhaseFigures>,
    /// The reads' figures; `None` when none was asked or completed.
    pub read: Option<PhaseFigures>,
    /// Each rank.
    pub ranks: Vec<RankFigures>,
    /// The client's own cost (this process), apart from the storage's figures.
    pub client: ClientCost,
    /// What a reader must know to trust the figures.
    pub warnings: Vec<String>,
    /// Stopped early (Ctrl-C): the figures cover the checkpoints that completed.
    pub partial: bool,
}

/// The workload as it ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointView {
    /// Transformer layers (`model.num_layers`).
    pub num_layers: u64,
    /// `model.transformer.hidden_size`.
    pub hidden_size: u64,
    /// `model.transformer.ffn_hidden_size`.
    pub ffn_hidden_size: u64,
    /// `model.transformer.vocab_size`.
    pub vocab_size: u64,
    /// `model.transformer.num_attention_heads`.
    pub num_attention_heads: u64,
    /// `model.transformer.num_kv_heads`.
    pub num_kv_heads: u64,
    /// The model's parameters (DLIO's `get_num_parameters`).
    pub parameters: u64,
    /// `model.model_datatype`.
    pub model_datatype: String,
    /// `model.optimizer_datatype`.
    pub optimizer_datatype: String,
    /// Tensor parallelism (TP).
    pub tensor: u64,
    /// Pipeline parallelism (PP).
    pub pipeline: u64,
    /// Data-parallel instances (DP).
    pub data: u64,
    /// ZeRO stage, 0 to 3.
    pub zero_stage: u64,
    /// `default` (ranks = TP × PP × DP) or `subset` (these ranks of a TP × PP × DP job).
    pub mode: String,
    /// Ranks run (simulated accelerators: threads on this host).
    pub ranks: u64,
    /// `checkpoint.num_checkpoints_write`.
    pub num_checkpoints_write: u64,
    /// `checkpoint.num_checkpoints_read`.
    pub num_checkpoints_read: u64,
    /// Each file fsynced before it is closed (`checkpoint.fsync`).
    pub fsync: bool,
    /// A rank's time ends when every rank is done (`checkpoint.rank_sync`).
    pub rank_sync: bool,
    /// Seconds waited before each checkpoint (DLIO's computation between checkpoints), not timed.
    pub time_between_checkpoints_s: f64,
    /// The checkpoints' directory.
    pub data_dir: String,
}

/// One checkpoint, all ranks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointSize {
    /// Bytes (DLIO's "checkpoint size", all ranks).
    pub bytes: u64,
    /// Of which the model's state.
    pub model_bytes: u64,
    /// Of which the optimizer's state.
    pub optimizer_bytes: u64,
    /// Files.
    pub files: u64,
    /// Ranks that write (ZeRO 0: the first TP × PP).
    pub writing_ranks: u64,
}

/// How the reads were kept from the page cache.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PageCacheView {
    /// `dropped` (synced and `POSIX_FADV_DONTNEED` before the reads) or `o_direct` (read with O_DIRECT).
    pub method: String,
    /// Bytes of the files to read still in the page cache after the drop (`mincore`); `None` with O_DIRECT.
    pub cached_bytes_before_reads: Option<u64>,
}

/// The figures of the writes or of the reads, over the ranks that write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    /// Checkpoints completed.
    pub checkpoints: u64,
    /// Seconds a checkpoint took, the slowest rank's mean (MLPerf Storage's duration: the maximum across
    /// ranks).
    pub duration_max_s: f64,
    /// The ranks' mean seconds, averaged.
    pub duration_mean_s: f64,
    /// GiB/s, the slowest rank's (MLPerf Storage's throughput: the minimum across ranks); a rank's GiB/s is
    /// the checkpoint's bytes (all ranks) over its time, as DLIO computes it, averaged over checkpoints.
    pub gib_per_s_min: f64,
    /// The ranks' GiB/s, averaged.
    pub gib_per_s_mean: f64,
    /// The fastest rank's GiB/s.
    pub gib_per_s_max: f64,
    /// Seconds from the first checkpoint's start to the last one's end, waits between them included.
    pub elapsed_s: f64,
}

/// One rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    /// From 0.
    pub rank: u64,
    /// Its tensor-parallel rank.
    pub tensor_rank: u64,
    /// Its pipeline stage.
    pub pipeline_rank: u64,
    /// Its data-parallel rank.
    pub data_rank: u64,
    /// Files it writes a checkpoint.
    pub files: u64,
    /// Bytes it writes a checkpoint.
    pub bytes: u64,
    /// Its writes; `None` for a rank that writes nothing.
    pub write: Option<RankPhase>,
    /// Its reads; `None` for a rank that reads nothing.
    pub read: Option<RankPhase>,
}

/// One rank's writes or reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankPhase {
    /// Seconds of each checkpoint, in order.
    pub seconds: Vec<f64>,
    /// Their mean.
    pub mean_s: f64,
    /// The checkpoint's bytes (all ranks) over each time, averaged (DLIO's per-rank figure).
    pub gib_per_s: f64,
    /// The rank's own bytes over its mean time.
    pub own_gib_per_s: f64,
}

impl AiCheckpointResult {
    /// Checks what must hold of a document as it is assembled.
    pub fn assert_consistent(&self) {
        assert_eq!(self.ranks.len() as u64, self.config.ranks, "a row a rank");
        let bytes: u64 = self.ranks.iter().map(|r| r.bytes).sum();
        assert_eq!(bytes, self.checkpoint.bytes, "the ranks' bytes make the checkpoint");
        let c = &self.checkpoint;
        assert_eq!(c.model_bytes + c.optimizer_bytes, c.bytes, "model and optimizer make the checkpoint");
        for (phase, f) in [("write", &self.write), ("read", &self.read)] {
            let Some(f) = f else { continue };
            assert!(f.gib_per_s_min <= f.gib_per_s_mean + 1e-9, "{phase}: min <= mean");
            assert!(f.gib_per_s_mean <= f.gib_per_s_max + 1e-9, "{phase}: mean <= max");
            assert!(f.duration_mean_s <= f.duration_max_s + 1e-9, "{phase}: mean <= max");
            for r in &self.ranks {
                let p = if phase == "write" { &r.write } else { &r.read };
                if let Some(p) = p {
                    assert_eq!(p.seconds.len() as u64, f.checkpoints, "{phase}: rank {}'s checkpoints", r.rank);
                }
            }
        }
    }
}

/// The kind of AI checkpoint runs.
pub struct AiCheckpointKind;

/// The `iolab runs` column of a checkpoint run's write throughput (the slowest rank's).
const WRITE: Column = Column {
    header: "ckpt write GiB/s",
    place: 37,
    shown: ColumnShown::WhenAny,
    figures: &["ckpt_write_gib_s"],
    cell: |c| c.figure("ckpt_write_gib_s").map_or("-".into(), |v| format!("{v:.2}")),
};

/// The `iolab runs` column of a checkpoint run's read throughput (the slowest rank's).
const READ: Column = Column {
    header: "ckpt read GiB/s",
    place: 38,
    shown: ColumnShown::WhenAny,
    figures: &["ckpt_read_gib_s"],
    cell: |c| c.figure("ckpt_read_gib_s").map_or("-".into(), |v| format!("{v:.2}")),
};

impl Kind for AiCheckpointKind {
    fn schema(&self) -> &'static str {
        AI_CHECKPOINT_SCHEMA
    }
    fn name(&self) -> &'static str {
        "ai checkpoint"
    }
    fn parse(&self, doc: Value) -> Result<Box<dyn Document>, String> {
        parse_as::<AiCheckpointResult>(self, doc)
    }
    fn entries(&self) -> &'static [EntryKind] {
        &[EntryKind {
            stored: "ai_checkpoint",
            typed: &["ai-checkpoint", "aicheckpoint"],
            what: "`iolab ai checkpoint` runs",
        }]
    }
    /// The workload, the data directory, the write and read GiB/s (the slowest rank's).
    fn columns(&self, doc: &Value, c: &mut iolab_doc::Columns) {
        c.profile = str_at(doc, "/workload");
        c.targets.extend(str_at(doc, "/config/data_dir"));
        c.set_figure("ckpt_write_gib_s", f64_at(doc, "/write/gib_per_s_min"));
        c.set_figure("ckpt_read_gib_s", f64_at(doc, "/read/gib_per_s_min"));
    }
    fn listing(&self) -> &'static [&'static Column] {
        &[&WRITE, &READ]
    }
    fn html(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, html_section)]
    }
    fn markdown(&self) -> &'static [Part] {
        &[Part::Each(Stage::DatabaseEach, as_text)]
    }
    fn without_csv(&self) -> Option<&'static str> {
        Some("an AI checkpoint run: it has no CSV form (its ranks are in the JSON)")
    }
}

/// The run in Markdown: its text.
/// The run on the report's page: the slowest rank's write and read GiB/s, the ranks, then its text.
fn html_section(p: &mut Page, d: &ReportDoc) {
    let Some(r) = d.body.as_any().downcast_ref::<AiCheckpointResult>() else { return };
    let mut cards = Vec::new();
    for (k, phase) in [("write GiB/s", &r.write), ("read GiB/s", &r.read)] {
        if let Some(f) = phase {
            cards.push((k, format!("{:.2}", f.gib_per_s_min), format!("slowest rank; mean {:.2}", f.gib_per_s_mean)));
        }
    }
    cards.push(("ranks", r.ranks.len().to_string(), "simulated accelerators".into()));
    crate::html::ai_page::ai_section(p, d, ("AI checkpoint", "ai-checkpoint"), &cards);
}

fn as_text(p: &mut Page, d: &ReportDoc) {
    markdown::as_text(&mut p.out, "AI checkpoint", d);
}

impl Document for AiCheckpointResult {
    fn kind(&self) -> &'static dyn Kind {
        &AiCheckpointKind
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

/// The printed result of `iolab ai checkpoint`: the model and its sharding, the checkpoint, the writes and
/// reads (the slowest rank's figures first), the ranks, and what it cost the client.
pub fn text(r: &AiCheckpointResult) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "ai checkpoint {} ({})", r.workload, r.source);
    let _ = writeln!(o, "  {}", r.disclaimer);
    setup(&mut o, r);
    for (name, f) in [("write", &r.write), ("read", &r.read)] {
        match f {
            Some(f) => phase(&mut o, name, f),
            None => {
                let _ = writeln!(o, "  {name}: none");
            }
        }
    }
    ranks(&mut o, r);
    let _ = writeln!(
        o,
        "  client (this process, not the storage): {:.2} CPU-s ({:.3} per rank), peak RSS {}",
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
        let _ = writeln!(o, "  partial: stopped early; the figures cover the checkpoints that completed");
    }
    o
}

/// The model, its sharding, the checkpoint and how reads avoid the page cache.
fn setup(o: &mut String, r: &AiCheckpointResult) {
    let c = &r.config;
    let _ = writeln!(
        o,
        "  model: {} parameters ({}, hidden {}, ffn {}, vocab {}, {} heads, {} kv heads), {} model, {} optimizer",
        format_count(c.parameters),
        counted(c.num_layers, "layer"),
        c.hidden_size,
        c.ffn_hidden_size,
        c.vocab_size,
        c.num_attention_heads,
        c.num_kv_heads,
        c.model_datatype,
        c.optimizer_datatype
    );
    let _ = writeln!(
        o,
        "  parallelism: TP {} x PP {} x DP {}, ZeRO stage {}, {} ({} mode) in {}",
        c.tensor,
        c.pipeline,
        c.data,
        c.zero_stage,
        counted(c.ranks, "rank"),
        c.mode,
        c.data_dir
    );
    let k = &r.checkpoint;
    let cache = match (r.page_cache.method.as_str(), r.page_cache.cached_bytes_before_reads) {
        ("o_direct", _) => "read with O_DIRECT".to_string(),
        (_, Some(b)) => format!("dropped from the page cache before the reads ({} still cached)", format_bytes(b)),
        _ => "dropped from the page cache before the reads".to_string(),
    };
    let _ = writeln!(
        o,
        "  checkpoint: {} ({} model, {} optimizer) in {} from {}; {} written{}, {} read, {cache}",
        format_bytes(k.bytes),
        format_bytes(k.model_bytes),
        format_bytes(k.optimizer_bytes),
        counted(k.files, "file"),
        counted(k.writing_ranks, "rank"),
        c.num_checkpoints_write,
        if c.fsync { " (fsync)" } else { " (no fsync)" },
        c.num_checkpoints_read,
    );
}

/// One phase: the slowest rank's figures, then the mean and the fastest.
fn phase(o: &mut String, name: &str, f: &PhaseFigures) {
    let _ = writeln!(
        o,
        "  {name}: {:.2} GiB/s (the slowest rank's; mean {:.2}, max {:.2}), {:.3} s a checkpoint (the slowest rank's; mean {:.3}), {} in {:.2} s",
        f.gib_per_s_min,
        f.gib_per_s_mean,
        f.gib_per_s_max,
        f.duration_max_s,
        f.duration_mean_s,
        counted(f.checkpoints, "checkpoint"),
        f.elapsed_s
    );
}

/// The ranks' table, the first [`TEXT_RANKS`].
fn ranks(o: &mut String, r: &AiCheckpointResult) {
    let _ = writeln!(o, "  rank  tp  pp  dp  files  bytes        write s  write GiB/s  read s  read GiB/s");
    let cell = |p: &Option<RankPhase>| {
        p.as_ref().map_or(("-".to_string(), "-".to_string()), |p| {
            (format!("{:.3}", p.mean_s), format!("{:.2}", p.gib_per_s))
        })
    };
    for k in r.ranks.iter().take(TEXT_RANKS) {
        let (ws, wg) = cell(&k.write);
        let (rs, rg) = cell(&k.read);
        let _ = writeln!(
            o,
            "  {:>4}  {:>2}  {:>2}  {:>2}  {:>5}  {:<11}  {ws:>7}  {wg:>11}  {rs:>6}  {rg:>10}",
            k.rank,
            k.tensor_rank,
            k.pipeline_rank,
            k.data_rank,
            k.files,
            format_bytes(k.bytes)
        );
    }
    if r.ranks.len() > TEXT_RANKS {
        let _ = writeln!(o, "  ... {} more ranks in the JSON", r.ranks.len() - TEXT_RANKS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> AiCheckpointResult {
        serde_json::from_str(include_str!("testdata/ai_checkpoint.json")).expect("an ai-checkpoint document")
    }

    #[test]
    fn a_written_document_matches_its_schema_and_reads_back() {
        let d = sample();
        d.assert_consistent();
        let v: Value = serde_json::from_str(&d.json()).unwrap();
        crate::schema_check::check_document(&v, include_str!("../../../../docs/schema/iolab.aicheckpoint.v1.json"));
        assert_eq!(crate::kinds::parse(v).unwrap().kind().name(), "ai checkpoint");
    }

    #[test]
    fn the_text_leads_with_the_slowest_rank_and_lists_the_ranks() {
        let mut d = sample();
        let t = text(&d);
        assert!(t.contains("GiB/s (the slowest rank's; mean"), "{t}");
        assert!(t.contains("  rank  tp  pp  dp  files"), "{t}");
        assert!(t.contains("read, dropped from the page cache before the reads (0 B still cached)"), "{t}");
        let extra = d.ranks[0].clone();
        d.ranks.extend(std::iter::repeat_n(extra, 20));
        assert!(text(&d).contains("... 12 more ranks in the JSON"));
    }
}
