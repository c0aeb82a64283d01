//! Writing the iolab job file: keys with the fio options they came from, run-wide keys checked for agreement.

use super::entry::{Origin, TranslatedKey};
use super::job::{Job, Limits};
use super::FioError;
use std::collections::HashSet;

/// The iolab job file for the translated jobs: `[worker.NAME]` tables, or `[[phase]]` tables when a job after
/// the first has `stonewall` (each such job starts a phase; the jobs before the first one are phase 1).
pub fn job_file(file: &str, jobs: &[Job]) -> Result<String, FioError> {
    let mut out = format!(
        "# iolab job file translated from the fio job file '{file}' by iolab-import.\n\
         # Each key is preceded by the fio option (or fio default) it comes from. See docs/FIO.md.\n"
    );
    for n in jobs.iter().flat_map(|j| &j.notes) {
        out.push_str(&format!("# note ([{}], line {}): {}\n", n.section, n.line, n.text));
    }
    out.push('\n');
    check_tables(file, jobs)?;
    let phases = split_phases(jobs);
    if let Some(past) = phases.get(iolab_spec::MAX_PHASES) {
        return Err(FioError::TooBig {
            file: file.to_string(),
            found: format!(
                "{} stonewalls make {} phases (the one at line {} is phase {})",
                phases.len() - 1,
                phases.len(),
                past[0].line,
                iolab_spec::MAX_PHASES + 1
            ),
            limit: format!("a job has at most {}", iolab_spec::MAX_PHASES),
        });
    }
    if phases.len() > 1 {
        phased_file(file, &phases, &mut out)?;
        return Ok(out);
    }
    for e in run_entries(file, jobs)? {
        e.write(&mut out);
    }
    let mut names = HashSet::new();
    for job in jobs {
        write_tables(&mut out, "worker", job, &mut names);
    }
    Ok(out)
}

/// Refuses, before any is written, more worker tables than a job holds (one per job, or per clone when each
/// clone has files of its own).
fn check_tables(file: &str, jobs: &[Job]) -> Result<(), FioError> {
    let tables: usize = jobs.iter().map(|j| j.targets.len()).sum();
    if tables <= iolab_spec::MAX_WORKER_TABLES {
        return Ok(());
    }
    Err(FioError::TooBig {
        file: file.to_string(),
        found: format!(
            "{} jobs make {tables} worker tables (a job with files per clone makes one per clone)",
            jobs.len()
        ),
        limit: format!("a job has at most {}", iolab_spec::MAX_WORKER_TABLES),
    })
}

/// The jobs of each phase: a job with `stonewall` after the first starts a new one.
fn split_phases(jobs: &[Job]) -> Vec<&[Job]> {
    let mut starts: Vec<usize> = (1..jobs.len()).filter(|&i| jobs[i].wall.is_some()).collect();
    starts.insert(0, 0);
    starts.push(jobs.len());
    starts.windows(2).map(|w| &jobs[w[0]..w[1]]).collect()
}

/// The run settings a phase may set for itself (the other run keys are set once for every phase).
const PHASE_KEYS: &[&str] = &["duration", "ramp"];

/// A job file with phases: the run keys every phase shares at the top, then one `[[phase]]` table per phase
/// with its own `duration`, `ramp`, `ios` and `bytes` where they differ between phases, and its workers.
fn phased_file(file: &str, phases: &[&[Job]], out: &mut String) -> Result<(), FioError> {
    let all: Vec<Job> = phases.iter().flat_map(|p| p.iter().cloned()).collect();
    for e in run_entries_of(file, &all, |k| !PHASE_KEYS.contains(&k), Scope::File)? {
        e.write(out);
    }
    let mut own: Vec<Vec<TranslatedKey>> = Vec::new();
    for jobs in phases {
        own.push(run_entries_of(file, jobs, |k| PHASE_KEYS.contains(&k), Scope::Phase)?);
    }
    let mut limits: Vec<Vec<TranslatedKey>> = Vec::new();
    for jobs in phases {
        limits.push(limit_entries(file, jobs)?);
    }
    // A key every phase gives the same value stays at the top, except a duration beside a phase's size limit
    // (a phase with its own ios or bytes ends there and drops the file's duration, so it needs its own).
    let any_limit = limits.iter().any(|l| !l.is_empty());
    let mut shared = Vec::new();
    for key in PHASE_KEYS {
        let values: Vec<Option<&TranslatedKey>> =
            own.iter().map(|p| p.iter().find(|e| e.key == *key)).collect();
        let same = values.iter().all(|v| v.map(|e| &e.text) == values[0].map(|e| &e.text));
        if same && !(*key == "duration" && any_limit) {
            shared.extend(values[0].cloned());
            for p in &mut own {
                p.retain(|e| e.key != *key);
            }
        }
    }
    for e in &shared {
        e.write(out);
    }
    let mut phase_names = HashSet::new();
    for (i, jobs) in phases.iter().enumerate() {
        let first = &jobs[0];
        let name = crate::names::unique(first.name.clone(), &mut phase_names);
        out.push_str("\n[[phase]]\n");
        let origin = match &first.wall {
            Some(src) if i > 0 => Origin::Opt(src.clone()),
            _ => {
                Origin::Default("the jobs before the first stonewall run together as the first phase".into())
            }
        };
        out.push_str(&origin.comment());
        out.push('\n');
        out.push_str(&format!("name = {}\n", crate::quote(&name)));
        for e in own[i].iter().chain(&limits[i]) {
            e.write(out);
        }
        let mut names = HashSet::new();
        for job in jobs.iter() {
            write_tables(out, "phase.worker", job, &mut names);
        }
    }
    Ok(())
}

/// The worker tables of one job (one per clone when every clone has its own files), under `prefix`
/// (`worker` or `phase.worker`).
fn write_tables(out: &mut String, prefix: &str, job: &Job, names: &mut HashSet<String>) {
    for (i, targets) in job.targets.iter().enumerate() {
        let base = if job.targets.len() > 1 { format!("{}.{i}", job.name) } else { job.name.clone() };
        let name = crate::names::unique(table_name(&base), names);
        write_table(out, prefix, &name, job, (targets, job.clones.get(i)));
    }
}

/// One worker table: the job's keys, with `targets` and the clone's own keys (`own`) when it has any.
fn write_table(
    out: &mut String,
    prefix: &str,
    name: &str,
    job: &Job,
    (targets, own): (&[TranslatedKey], Option<&Vec<TranslatedKey>>),
) {
    out.push_str(&format!("\n# fio job [{}] (line {})\n[{prefix}.{name}]\n", job.section, job.line));
    if job.targets.len() == 1 {
        if let Some(c) = &job.count {
            c.write(out);
        }
    }
    write_targets(out, targets);
    for e in own.into_iter().flatten().chain(&job.worker) {
        e.write(out);
    }
    for spec in &job.specs {
        out.push_str(&format!("[[{prefix}.{name}.spec]]\n"));
        for e in spec {
            e.write(out);
        }
    }
}

/// `target`: one string, or an array when fio gives the job several files.
fn write_targets(out: &mut String, targets: &[TranslatedKey]) {
    let mut comments: Vec<String> = Vec::new();
    for o in targets.iter().flat_map(|e| &e.origins) {
        let c = o.comment();
        if !comments.contains(&c) {
            comments.push(c);
        }
    }
    for c in comments {
        out.push_str(&c);
        out.push('\n');
    }
    let values: Vec<String> = targets.iter().map(|e| crate::quote(&e.text)).collect();
    match values.as_slice() {
        [] => {}
        [one] => out.push_str(&format!("target = {one}\n")),
        many => out.push_str(&format!("target = [{}]\n", many.join(", "))),
    }
}

/// A TOML bare key from a fio job name: letters, digits, '_' and '-'; anything else becomes '_'.
fn table_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if s.is_empty() {
        "job".into()
    } else {
        s
    }
}

/// What a run key is set for: the whole file, or one phase.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// A file without phases.
    Run,
    /// Every phase of a file with phases.
    File,
    /// One phase.
    Phase,
}

/// The run-wide keys: every job must agree on each, since iolab sets them once per run.
fn run_entries(file: &str, jobs: &[Job]) -> Result<Vec<TranslatedKey>, FioError> {
    let mut out = run_entries_of(file, jobs, |_| true, Scope::Run)?;
    out.extend(limit_entries(file, jobs)?);
    Ok(out)
}

/// The run keys `pick` selects, each the value every job of `jobs` agrees on.
fn run_entries_of(
    file: &str,
    jobs: &[Job],
    pick: impl Fn(&str) -> bool,
    scope: Scope,
) -> Result<Vec<TranslatedKey>, FioError> {
    let mut keys: Vec<&'static str> = Vec::new();
    for e in jobs.iter().flat_map(|j| &j.run) {
        if pick(e.key) && !keys.contains(&e.key) {
            keys.push(e.key);
        }
    }
    let mut out = Vec::new();
    for key in keys {
        let first = jobs.iter().find_map(|j| j.run.iter().find(|e| e.key == key)).cloned();
        for job in jobs {
            let mine = job.run.iter().find(|e| e.key == key);
            if mine.map(|e| &e.text) != first.as_ref().map(|e| &e.text) {
                return Err(disagree(file, key, job, mine, first.as_ref(), scope));
            }
        }
        out.extend(first);
    }
    Ok(out)
}

fn disagree(
    file: &str,
    key: &str,
    job: &Job,
    mine: Option<&TranslatedKey>,
    first: Option<&TranslatedKey>,
    scope: Scope,
) -> FioError {
    let src = mine.or(first).and_then(|e| {
        e.origins.iter().find_map(|o| match o {
            Origin::Opt(s) => Some(s.clone()),
            Origin::Default(_) => None,
        })
    });
    let show = |e: Option<&TranslatedKey>| e.map_or("(not set)".to_string(), |e| e.text.clone());
    let (mine, first) = (show(mine), show(first));
    let why = match scope {
        Scope::Run => format!(
            "iolab sets '{key}' once for the whole run, and the jobs disagree ({mine} here, {first} in the first \
             job); split them into job files of their own"
        ),
        Scope::File => format!(
            "iolab sets '{key}' once for every phase of a job file, and the jobs disagree ({mine} here, {first} \
             in the first job); split them into job files of their own"
        ),
        Scope::Phase => format!(
            "iolab sets '{key}' once per phase, and the jobs of this phase (the jobs from one stonewall to the \
             next run together) disagree ({mine} here, {first} in the phase's first job); put a stonewall \
             between them, or split them into job files of their own"
        ),
    };
    match src {
        Some(s) => {
            FioError::Unsupported { file: file.into(), option: s.key, section: s.section, line: s.line, why }
        }
        None => FioError::Unsupported {
            file: file.into(),
            option: key.into(),
            section: job.section.clone(),
            line: job.line,
            why,
        },
    }
}

/// Picks one limit of a job.
type LimitOf = fn(&Limits) -> &Option<(u64, Origin)>;

/// `bytes` and `ios`: fio limits each job; iolab splits a run-wide total evenly, so every worker must have
/// the same limit.
fn limit_entries(file: &str, jobs: &[Job]) -> Result<Vec<TranslatedKey>, FioError> {
    let mut out = Vec::new();
    let pick: [(&'static str, LimitOf); 2] = [("bytes", |l| &l.bytes), ("ios", |l| &l.ios)];
    for (key, get) in pick {
        let first = get(&jobs[0].limits).clone();
        let mut workers = 0u64;
        for job in jobs {
            let mine = get(&job.limits);
            if mine.as_ref().map(|m| m.0) != first.as_ref().map(|f| f.0) {
                let e = |l: &Option<(u64, Origin)>| l.as_ref().map(|(n, _)| n.to_string());
                return Err(FioError::Unsupported {
                    file: file.into(),
                    option: if key == "bytes" { "io_size".into() } else { "number_ios".into() },
                    section: job.section.clone(),
                    line: job.line,
                    why: format!(
                        "iolab shares one run-wide '{key}' limit evenly among workers, and this job's limit \
                         ({}) differs from the first job's ({})",
                        e(mine).unwrap_or_else(|| "none".into()),
                        e(&first).unwrap_or_else(|| "none".into())
                    ),
                });
            }
            workers += job.workers();
        }
        if let Some((n, origin)) = first {
            let Some(total) = n.checked_mul(workers) else {
                let mut e = limit_error(
                    file,
                    &jobs[0],
                    key,
                    format!("a limit that fits: {n} x {workers} workers is too large for 64 bits"),
                );
                if let (Origin::Opt(src), FioError::BadValue { option, value, section, line, .. }) =
                    (&origin, &mut e)
                {
                    (*option, *value, *section, *line) =
                        (src.key.clone(), src.text().to_string(), src.section.clone(), src.line);
                }
                return Err(e);
            };
            let text = if key == "bytes" { iolab_spec::units::format_size(total) } else { total.to_string() };
            let e = TranslatedKey::new(key, text, vec![origin])
                .map_err(|x| limit_error(file, &jobs[0], key, x))?
                .with_note(format!(
                    "fio's limit is per job; iolab's is the total over all {workers} workers"
                ));
            out.push(e);
        }
    }
    Ok(out)
}

fn limit_error(file: &str, job: &Job, key: &str, expected: String) -> FioError {
    FioError::BadValue {
        file: file.into(),
        option: key.into(),
        value: String::new(),
        expected,
        section: job.section.clone(),
        line: job.line,
    }
}

impl Job {
    /// The number of iolab workers this job becomes.
    pub fn workers(&self) -> u64 {
        let count = self.count.as_ref().and_then(|c| c.text.parse::<u64>().ok()).unwrap_or(1);
        if self.targets.len() > 1 {
            self.targets.len() as u64
        } else {
            count
        }
    }
}
