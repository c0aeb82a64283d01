//! One fio job section (with the `[global]` options it inherits), resolved into iolab keys.

use super::entry::{Origin, TranslatedKey};
use super::ini::Section;
use super::units::{parse_bool, parse_size, parse_time_ns, per_direction};
use super::{FioError, Given, Note, Src};
use std::collections::BTreeMap;

mod depth;
mod durable;
mod io;
mod layout;
mod offsets;
mod pattern;
mod rate;
mod sizes;
mod start;
mod steady;
mod think;
mod writes;

/// A job's options by canonical name; a later option replaces an earlier one.
#[derive(Clone, Debug, Default)]
pub struct Opts(BTreeMap<String, Src>);

impl Opts {
    /// Sets an option (the later one wins, as in fio).
    pub fn insert(&mut self, canonical: String, src: Src) {
        self.0.insert(canonical, src);
    }
    /// Adds (and overrides with) every option of `other`.
    pub fn extend(&mut self, other: Opts) {
        self.0.extend(other.0);
    }
    /// The option, if set.
    pub fn get(&self, key: &str) -> Option<&Src> {
        self.0.get(key)
    }
}

/// The iolab keys of one fio job.
#[derive(Clone, Debug)]
pub struct Job {
    /// The section name.
    pub section: String,
    /// The section header's line.
    pub line: usize,
    /// The worker table name (fio's job name).
    pub name: String,
    /// Run-wide keys (must agree between jobs).
    pub run: Vec<TranslatedKey>,
    /// How many workers (fio's numjobs) and its origin.
    pub count: Option<TranslatedKey>,
    /// Per-clone target entries when fio would give every clone its own files; else one shared list.
    pub targets: Vec<Vec<TranslatedKey>>,
    /// Worker-level keys (region, queue depth, rate, data, and the single access spec's keys).
    pub worker: Vec<TranslatedKey>,
    /// Per-clone worker keys, when the clones are tables of their own with keys that differ (fio's
    /// `offset_increment`: each clone's own `offset`); empty otherwise.
    pub clones: Vec<Vec<TranslatedKey>>,
    /// Access specs, when reads and writes need specs of their own.
    pub specs: Vec<Vec<TranslatedKey>>,
    /// I/O limits of each of the job's workers (bytes, I/Os), for the run-wide totals.
    pub limits: Limits,
    /// Where fio and the translation may issue different I/O (see [`Note`]).
    pub notes: Vec<Note>,
    /// `stonewall` (or `wait_for_previous`) when set: the job waits for the jobs before it, so it starts a
    /// new phase (unless it is the first job).
    pub wall: Option<Src>,
}

/// fio's per-job end conditions other than time.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    /// Bytes per job (io_size, else size), with its origin.
    pub bytes: Option<(u64, Origin)>,
    /// I/Os per job (number_ios), with its origin.
    pub ios: Option<(u64, Origin)>,
}

/// Reading one job: its options and where errors point.
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    /// The fio file's name.
    pub file: &'a str,
    /// The job's options.
    pub opts: &'a Opts,
    /// The job section.
    pub section: &'a Section,
    /// kb_base (1024 or 1000).
    pub kb: u64,
    /// What the command line gives (the target's size).
    pub given: Given,
    /// The job issues trims only (`rw=trim`, `randtrim`): [`Ctx::pair`] gives the trim part of a per-direction
    /// option as the write part, since iolab's trims take the sizes, alignment, random share and rate of the
    /// access spec they are in.
    pub trims: bool,
}

impl Ctx<'_> {
    /// The option, if set.
    pub fn get(&self, key: &str) -> Option<&Src> {
        self.opts.get(key)
    }

    /// A "bad value" error for `src`.
    pub fn bad(&self, src: &Src, expected: impl Into<String>) -> FioError {
        FioError::BadValue {
            file: self.file.to_string(),
            option: src.key.clone(),
            value: src.text().to_string(),
            expected: expected.into(),
            section: src.section.clone(),
            line: src.line,
        }
    }

    /// An "unsupported" error for `src`.
    pub fn refuse(&self, src: &Src, why: impl Into<String>) -> FioError {
        FioError::Unsupported {
            file: self.file.to_string(),
            option: src.key.clone(),
            section: src.section.clone(),
            line: src.line,
            why: why.into(),
        }
    }

    /// An "unsupported" error for an option that is not set, pointing at the job's header.
    pub fn refuse_missing(&self, option: &str, why: impl Into<String>) -> FioError {
        FioError::Unsupported {
            file: self.file.to_string(),
            option: option.to_string(),
            section: self.section.name.clone(),
            line: self.section.line,
            why: why.into(),
        }
    }

    /// The option's value as text, refusing environment-variable forms fio would expand.
    pub fn text(&self, key: &str) -> Result<Option<(&str, &Src)>, FioError> {
        let Some(src) = self.get(key) else { return Ok(None) };
        let Some(v) = src.value.as_deref() else {
            return Err(self.bad(src, "a value ('option=value')"));
        };
        if let Some(name) = v.split_once("${").and_then(|(_, r)| r.split_once('}')).map(|(n, _)| n) {
            return Err(
                self.bad(src, format!("environment variable '{name}' to be set (fio reads it as empty)"))
            );
        }
        if v.contains('$') {
            return Err(self.bad(src, "a literal value (fio substitutes only ${NAME}, $pagesize, $mb_memory and $ncpus; write the value)"));
        }
        Ok(Some((v, src)))
    }

    /// A boolean option.
    pub fn flag(&self, key: &str) -> Result<Option<(bool, &Src)>, FioError> {
        let Some(src) = self.get(key) else { return Ok(None) };
        let b = parse_bool(src.value.as_deref()).ok_or_else(|| self.bad(src, "1 or 0"))?;
        Ok(Some((b, src)))
    }

    /// A size (refusing percentages, which need the target's size).
    pub fn size(&self, key: &str) -> Result<Option<(u64, &Src)>, FioError> {
        let Some((v, src)) = self.text(key)? else { return Ok(None) };
        if v.trim().ends_with('%') {
            return Err(self.refuse(
                src,
                "a share of the target's size needs the size of a target iolab has not probed; give bytes",
            ));
        }
        let n = parse_size(v, self.kb).ok_or_else(|| self.bad(src, size_expected()))?;
        Ok(Some((n, src)))
    }

    /// A time; a bare number is in `unit_ns`.
    pub fn time(&self, key: &str, unit_ns: u64) -> Result<Option<(u64, &Src)>, FioError> {
        let Some((v, src)) = self.text(key)? else { return Ok(None) };
        let ns = parse_time_ns(v, unit_ns)
            .ok_or_else(|| self.bad(src, "a time such as '60', '30s', '500ms', '250us', '10m' or '1h'"))?;
        Ok(Some((ns, src)))
    }

    /// A whole number.
    pub fn count(&self, key: &str) -> Result<Option<(u64, &Src)>, FioError> {
        let Some((v, src)) = self.text(key)? else { return Ok(None) };
        let n = parse_size(v, self.kb).ok_or_else(|| self.bad(src, "a whole number"))?;
        Ok(Some((n, src)))
    }

    /// The read and write parts of a per-direction option (`read,write[,trim]`); in a trim-only job the trim
    /// part stands in for the write part.
    pub fn pair(&self, key: &str) -> Result<Option<Pair<'_>>, FioError> {
        let Some((v, src)) = self.text(key)? else { return Ok(None) };
        let [r, w, t] = per_direction(v);
        Ok(Some((r, if self.trims { t } else { w }, src)))
    }

    /// An entry built from `src`, checked with iolab's own parser for `key`.
    pub fn entry(&self, key: &'static str, text: String, src: &Src) -> Result<TranslatedKey, FioError> {
        TranslatedKey::new(key, text, vec![Origin::Opt(src.clone())]).map_err(|e| self.bad(src, e))
    }
}

/// The read part, the write part and the option of a per-direction value.
pub type Pair<'a> = (Option<String>, Option<String>, &'a Src);

/// The expected form of a fio size.
pub fn size_expected() -> &'static str {
    "a size such as '4096', '4k', '8m' or '1g' (k = 1024 with kb_base=1024)"
}

/// What an overflow of numbers read from the file says: the operation and that its result is too large.
fn too_large(a: u64, op: &str, b: u64) -> String {
    format!("values that fit: {a} {op} {b} is too large for 64 bits")
}

/// Resolves one job section into iolab keys.
pub fn resolve(file: &str, section: &Section, opts: &Opts, given: Given) -> Result<Job, FioError> {
    let kb = kb_base(file, section, opts)?;
    let cx = Ctx { file, opts, section, kb, given, trims: false };
    // stonewall and wait_for_previous (its alias): this job waits for the jobs before it; the later one wins.
    let mut wall = None;
    for key in ["stonewall", "wait_for_previous"] {
        if let Some((on, src)) = cx.flag(key)? {
            if wall.as_ref().is_none_or(|(_, w): &(bool, Src)| w.line < src.line) {
                wall = Some((on, src.clone()));
            }
        }
    }
    let wall = wall.filter(|(on, _)| *on).map(|(_, src)| src);
    let name = match cx.text("name")? {
        Some((n, _)) => n.to_string(),
        None => section.name.clone(),
    };
    let engine = layout::engine(&cx)?;
    let pattern = pattern::pattern(&cx)?;
    let cx = Ctx { trims: pattern.trim_pct == 100.0, ..cx };
    let mut job = Job {
        section: section.name.clone(),
        line: section.line,
        name: name.clone(),
        run: Vec::new(),
        count: None,
        targets: Vec::new(),
        worker: Vec::new(),
        clones: Vec::new(),
        specs: Vec::new(),
        limits: Limits::default(),
        notes: Vec::new(),
        wall,
    };
    if let (Some((text, src)), Some(_)) = (cx.text("ioengine")?, &engine.src) {
        if let Some(note) = iolab_spec::EngineKind::fio_note(text) {
            job.notes.push(Note { section: src.section.clone(), line: src.line, text: note });
        }
    }
    layout::targets(&cx, &name, &engine, &mut job)?;
    layout::run_keys(&cx, &engine, &pattern, &mut job)?;
    io::access(&cx, &engine, &pattern, &mut job)?;
    offsets::offset_increment(&cx, &mut job)?;
    offsets::band(&cx, &mut job)?;
    offsets::sprandom(&cx, &pattern, &mut job)?;
    start::start_delay(&cx, &mut job)?;
    start::flow(&cx, &mut job)?;
    depth::latency_target(&cx, &mut job)?;
    durable::durability(&cx, &pattern, &mut job)?;
    writes::dedupe(&cx, &pattern, &mut job)?;
    writes::atomic(&cx, &pattern, &mut job)?;
    writes::backlog(&cx, &mut job)?;
    steady::steady_note(&cx, &mut job)?;
    Ok(job)
}

fn kb_base(file: &str, section: &Section, opts: &Opts) -> Result<u64, FioError> {
    let Some(src) = opts.get("kb_base") else { return Ok(1024) };
    match src.text().trim() {
        "1024" => Ok(1024),
        "1000" => Ok(1000),
        _ => Err(Ctx { file, opts, section, kb: 1024, given: Given::default(), trims: false }
            .bad(src, "1024 or 1000")),
    }
}

/// The iolab engine for a job, and where it came from.
#[derive(Clone, Debug)]
pub struct TranslatedEngine {
    /// `io_uring`, `sync` or `null`.
    pub kind: &'static str,
    /// The `ioengine` option, or `None` for fio's default (psync).
    pub src: Option<Src>,
}

impl TranslatedEngine {
    /// The origin of the engine choice.
    pub fn origin(&self) -> Origin {
        match &self.src {
            Some(s) => Origin::Opt(s.clone()),
            None => Origin::Default("ioengine not set: fio's default is psync".into()),
        }
    }
}
