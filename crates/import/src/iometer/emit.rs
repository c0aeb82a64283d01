//! Writing the iolab job file from the model: keys with the Iometer settings they came from.

use super::lines::ValueLine;
use super::model::{checked, AccessSpec, Config, Cycle, SpecLine, Worker};
use super::{IcfError, IometerTarget};
use iolab_spec::units::format_size;
use iolab_spec::Place;
use std::collections::HashSet;

/// Keys whose values are written as TOML numbers.
const NUMBER_KEYS: &[&str] = &["qd", "burst", "read_pct", "random_pct", "weight", "seed"];

/// One iolab key, its value and the comments above it.
struct TranslatedKey {
    key: &'static str,
    text: String,
    origin: String,
    note: Option<String>,
}

impl TranslatedKey {
    /// An entry whose value iolab's own parser for `key` accepts; else a [`IcfError::BadValue`] at `at`.
    fn new(
        key: &'static str,
        text: String,
        at: &ValueLine,
        what: &str,
        file: &str,
    ) -> Result<TranslatedKey, IcfError> {
        let place = Place::Flag(key.to_string());
        if let Err(e) = iolab_spec::keys::check(key, &text, &place) {
            let expected = match e {
                iolab_spec::SpecError::InvalidValue { expected, .. } => {
                    format!("{expected} (iolab's '{key}' = {text})")
                }
                other => other.to_string(),
            };
            return Err(IcfError::BadValue {
                file: file.into(),
                line: at.line,
                what: what.into(),
                value: at.text.clone(),
                expected,
            });
        }
        let origin = format!("# iometer: {what} = {} (line {})", at.text, at.line);
        Ok(TranslatedKey { key, text, origin, note: None })
    }

    fn note(mut self, note: impl Into<String>) -> TranslatedKey {
        self.note = Some(note.into());
        self
    }

    fn write(&self, out: &mut String) {
        out.push_str(&self.origin);
        out.push('\n');
        if let Some(n) = &self.note {
            out.push_str(&format!("# note: {n}\n"));
        }
        let value =
            if NUMBER_KEYS.contains(&self.key) { self.text.clone() } else { crate::quote(&self.text) };
        out.push_str(&format!("{} = {value}\n", self.key));
    }
}

/// A bare TOML key (and an iolab target name): a letter first, then letters, digits, '_' and '-'.
fn bare_name(text: &str, prefix: &str) -> String {
    let mut s = String::new();
    for c in text.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' };
        if !(c == '_' && (s.is_empty() || s.ends_with('_'))) {
            s.push(c);
        }
    }
    let s = s.trim_end_matches('_').to_string();
    if s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s
    } else {
        format!("{prefix}{s}")
    }
}

/// The job file and its named targets.
pub fn job_file(
    cfg: &Config,
    file: &str,
    one_target: bool,
    warnings: &mut Vec<String>,
) -> Result<(String, Vec<IometerTarget>), IcfError> {
    let busy: Vec<_> = cfg.managers.iter().filter(|m| !m.workers.is_empty()).collect();
    if busy.len() > 1 {
        return Err(IcfError::Unsupported {
            file: file.into(),
            line: busy[1].line,
            what: format!("a second manager with workers ('{}')", busy[1].name),
            why: "iolab runs on one machine; save one configuration per manager and translate each".into(),
        });
    }
    let workers: Vec<&Worker> = busy.iter().flat_map(|m| &m.workers).collect();
    check_size(&workers, file)?;
    let mut targets: Vec<IometerTarget> = Vec::new();
    let mut tables = String::new();
    let mut table_names = HashSet::new();
    let mut active: Vec<&Worker> = Vec::new();
    if workers.iter().any(|w| w.specs.len() > 1) {
        // Several assigned specs: Iometer runs them as successive tests, each its own phase here.
        (tables, active) = test_phases(&workers, cfg, (file, one_target), &mut targets, warnings)?;
    } else {
        for w in &workers {
            let at = (file, one_target);
            if let Some(t) = worker_table(w, cfg, at, &mut table_names, &mut targets, warnings)? {
                tables.push_str(&t);
                active.push(w);
            }
        }
    }
    if active.is_empty() {
        return Err(IcfError::Syntax {
            file: file.into(),
            line: cfg.managers.first().map_or(1, |m| m.line),
            expected: "at least one disk worker with an access specification and a target (a configuration \
                       whose workers have no targets, a template, runs with one --target PATH)"
                .into(),
            found: "no worker that does I/O".into(),
        });
    }
    let version = cfg.version.as_deref().unwrap_or("(not named)");
    let mut out = format!(
        "# iolab job file translated from the Iometer configuration '{file}' (Iometer version {version}) by \
         iolab-import.\n# Each key is preceded by the Iometer setting it comes from. Map every target with \
         --target NAME=PATH. See docs/IOMETER.md.\n\n"
    );
    for e in run_entries(cfg, &active, file, warnings)? {
        e.write(&mut out);
    }
    out.push_str("\n[targets]\n");
    for t in &targets {
        out.push_str(&format!(
            "# iometer: target {} (line {}); map it with --target {}=PATH\n",
            t.iometer, t.line, t.name
        ));
        out.push_str(&format!("{} = {{}}\n", t.name));
    }
    out.push_str(&tables);
    cycling_warnings(cfg, &active, warnings);
    Ok((out, targets))
}

fn run_entries(
    cfg: &Config,
    active: &[&Worker],
    file: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<TranslatedKey>, IcfError> {
    let s = &cfg.setup;
    let mut out = Vec::new();
    if let Some(d) = s.description.as_ref().filter(|d| !d.text.is_empty()) {
        out.push(TranslatedKey::new("name", d.text.clone(), d, "'Test Description", file)?);
    }
    match &s.run_time {
        Some((0, at)) => warnings.push(format!(
            "line {}: 'Run Time 0 0 0 runs until stopped in Iometer; iolab's default duration applies (set --duration)",
            at.line
        )),
        Some((secs, at)) => out.push(TranslatedKey::new("duration", format!("{secs}s"), at, "'Run Time (h m s)", file)?),
        None => {}
    }
    if let Some((secs, at)) = &s.ramp {
        out.push(TranslatedKey::new("ramp", format!("{secs}s"), at, "'Ramp Up Time (s)", file)?);
    }
    let seeds: Vec<&(u64, ValueLine)> = active.iter().filter_map(|w| w.seed.as_ref()).collect();
    if let Some(first) = seeds.first() {
        if seeds.iter().all(|s| s.0 == first.0) {
            let e = TranslatedKey::new("seed", first.0.to_string(), &first.1, "fixed seed", file)?
                .note("Iometer seeds each worker; iolab has one run-wide seed");
            out.push(e);
        } else {
            warnings.push(format!(
                "line {}: workers use different fixed seeds; iolab has one run-wide seed, none is set",
                first.1.line
            ));
        }
    }
    Ok(out)
}

/// Refuses, before any table is written, more workers, tests (phases) or worker tables than a job holds.
fn check_size(workers: &[&Worker], file: &str) -> Result<(), IcfError> {
    let too_big = |line: usize, found: String, limit: String| {
        Err(IcfError::TooBig { file: file.into(), line, found, limit })
    };
    let max = iolab_spec::MAX_WORKERS as usize;
    if let Some(w) = workers.get(max) {
        return too_big(w.line, format!("{} workers", workers.len()), format!("a run has at most {max}"));
    }
    let Some(most) = workers.iter().max_by_key(|w| w.specs.len()) else { return Ok(()) };
    let tests = most.specs.len();
    if tests > iolab_spec::MAX_PHASES {
        let line = most.specs[iolab_spec::MAX_PHASES].line;
        let found =
            format!("worker '{}' has {tests} assigned access specs (one test, a phase, each)", most.name);
        return too_big(line, found, format!("a job has at most {} phases", iolab_spec::MAX_PHASES));
    }
    let tables = if tests > 1 { workers.len() * tests } else { workers.len() };
    if tables > iolab_spec::MAX_WORKER_TABLES {
        let found = format!("{} workers over {tests} tests make {tables} worker tables", workers.len());
        return too_big(most.line, found, format!("a job has at most {}", iolab_spec::MAX_WORKER_TABLES));
    }
    Ok(())
}

/// Whether worker `w`, with an access spec, runs: with a target of its own, or (`one_target`) on the one
/// `--target` given (a template's worker, said in a warning); else it is left out with a warning.
fn runs(w: &Worker, one_target: bool, warnings: &mut Vec<String>) -> bool {
    if !w.targets.is_empty() {
        return true;
    }
    warnings.push(if one_target {
        format!(
            "line {}: worker '{}' has no target (a template); it runs on the one --target given, as if the \
             configuration had assigned it that disk",
            w.line, w.name
        )
    } else {
        format!(
            "line {}: worker '{}' has no target; Iometer leaves it idle, so it is left out (give one --target \
             PATH to run a template's workers on it)",
            w.line, w.name
        )
    });
    one_target
}

/// The `[worker.NAME]` table of one worker, or `None` (with a warning) for an idle worker. `at`: the file's
/// name, and whether one `--target` is given for workers without targets.
fn worker_table(
    w: &Worker,
    cfg: &Config,
    (file, one_target): (&str, bool),
    names: &mut HashSet<String>,
    targets: &mut Vec<IometerTarget>,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, IcfError> {
    let Some(spec) = assigned_spec(w, cfg, file, warnings)? else { return Ok(None) };
    if !runs(w, one_target, warnings) {
        return Ok(None);
    }
    let name = crate::names::unique(bare_name(&w.name, "w_"), names);
    table_for(w, spec, &name, "worker", file, targets).map(Some)
}

/// The table of worker `w` running `spec`, named `[PREFIX.NAME]` (`worker` or `phase.worker`).
fn table_for(
    w: &Worker,
    spec: &AccessSpec,
    name: &str,
    prefix: &str,
    file: &str,
    targets: &mut Vec<IometerTarget>,
) -> Result<String, IcfError> {
    let mut out = format!("\n# iometer: 'Worker = {} (line {})\n[{prefix}.{name}]\n", w.name, w.line);
    let mut refs = Vec::new();
    for t in &w.targets {
        let known = targets.iter().find(|k| k.iometer == t.name).map(|k| k.name.clone());
        let tname = match known {
            Some(n) => n,
            None => {
                let mut taken: HashSet<String> = targets.iter().map(|k| k.name.clone()).collect();
                let n = crate::names::unique(bare_name(&t.name, "disk"), &mut taken);
                targets.push(IometerTarget { name: n.clone(), iometer: t.name.clone(), line: t.line });
                n
            }
        };
        out.push_str(&format!("# iometer: 'Target = {} (line {})\n", t.name, t.line));
        refs.push(crate::quote(&format!("@{tname}")));
    }
    match refs.as_slice() {
        [] => out.push_str("# iometer: no target (a template): the --target given\n"),
        [one] => out.push_str(&format!("target = {one}\n")),
        many => out.push_str(&format!("target = [{}]\n", many.join(", "))),
    }
    for e in worker_entries(w, file)?.into_iter().chain(think_entries(spec, file)?) {
        e.write(&mut out);
    }
    spec_tables(&mut out, &format!("{prefix}.{name}"), spec, file)?;
    Ok(out)
}

/// Workers with several assigned specs: Iometer runs test N with every worker's Nth assigned spec at once, a
/// worker with fewer specs (or the Idle spec there) idle (Worker::SetAccess, CGalileoView::StopTest in
/// Iometer's source). Each test becomes a `[[phase]]` named after the specs it runs. Returns the phase tables
/// and the workers that do I/O in any of them.
fn test_phases<'a>(
    workers: &[&'a Worker],
    cfg: &Config,
    (file, one_target): (&str, bool),
    targets: &mut Vec<IometerTarget>,
    warnings: &mut Vec<String>,
) -> Result<(String, Vec<&'a Worker>), IcfError> {
    let find = |v: &ValueLine| cfg.specs.iter().find(|s| s.name.eq_ignore_ascii_case(v.text.trim()));
    let mut names = HashSet::new();
    let mut busy: Vec<(&Worker, String)> = Vec::new();
    for w in workers {
        if w.specs.is_empty() {
            warnings.push(format!(
                "line {}: worker '{}' has no assigned access spec; Iometer leaves it idle, so it is left out",
                w.line, w.name
            ));
        } else if runs(w, one_target, warnings) {
            busy.push((w, crate::names::unique(bare_name(&w.name, "w_"), &mut names)));
        }
    }
    let tests = workers.iter().map(|w| w.specs.len()).max().unwrap_or(0);
    let mut out = String::new();
    let mut active: Vec<&Worker> = Vec::new();
    let mut phase_names = HashSet::new();
    for i in 0..tests {
        let mut tables = String::new();
        let mut run: Vec<(&AccessSpec, usize)> = Vec::new();
        for (w, name) in &busy {
            let Some(v) = w.specs.get(i) else {
                warnings.push(format!(
                    "line {}: worker '{}' has no access spec for test {} of {tests}; Iometer leaves it idle in \
                     that test, so phase {} leaves it out",
                    w.line,
                    w.name,
                    i + 1,
                    i + 1
                ));
                continue;
            };
            let spec = match find(v) {
                Some(s) => s,
                None if v.text.trim().eq_ignore_ascii_case("idle") => {
                    warnings.push(format!(
                        "line {}: worker '{}' runs Iometer's Idle spec in test {} of {tests}, so phase {} leaves it out",
                        v.line,
                        w.name,
                        i + 1,
                        i + 1
                    ));
                    continue;
                }
                None => {
                    return Err(IcfError::BadValue {
                        file: file.into(),
                        line: v.line,
                        what: format!("an access spec assigned to worker '{}'", w.name),
                        value: v.text.clone(),
                        expected: "the name of a spec in 'ACCESS SPECIFICATIONS".into(),
                    })
                }
            };
            tables.push_str(&table_for(w, spec, name, "phase.worker", file, targets)?);
            run.push((spec, v.line));
            if !active.iter().any(|a| std::ptr::eq(*a, *w)) {
                active.push(w);
            }
        }
        if run.is_empty() {
            warnings.push(format!(
                "test {} of {tests} runs no worker (every worker is idle in it); Iometer runs it without I/O, \
                 so it has no phase",
                i + 1
            ));
            continue;
        }
        let mut specs: Vec<&str> = Vec::new();
        for (s, _) in &run {
            if !specs.contains(&s.name.as_str()) {
                specs.push(&s.name);
            }
        }
        let lines: Vec<String> = run.iter().map(|(_, l)| l.to_string()).collect();
        let name = crate::names::unique(specs.join(" + "), &mut phase_names);
        out.push_str(&format!(
            "\n[[phase]]\n# iometer: test {} of {tests}: each worker's assigned access spec {} (lines {})\n\
             name = {}\n",
            i + 1,
            i + 1,
            lines.join(", "),
            crate::quote(&name)
        ));
        out.push_str(&tables);
    }
    Ok((out, active))
}

/// The one access spec a worker runs, `None` when it is idle (workers with several specs become phases).
fn assigned_spec<'a>(
    w: &Worker,
    cfg: &'a Config,
    file: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<&'a AccessSpec>, IcfError> {
    let find = |v: &ValueLine| cfg.specs.iter().find(|s| s.name.eq_ignore_ascii_case(v.text.trim()));
    match w.specs.as_slice() {
        [] => {
            warnings.push(format!("line {}: worker '{}' has no assigned access spec; Iometer leaves it idle, so it is left out", w.line, w.name));
            Ok(None)
        }
        [one] => match find(one) {
            Some(s) => Ok(Some(s)),
            None if one.text.eq_ignore_ascii_case("idle") => {
                warnings.push(format!("line {}: worker '{}' runs Iometer's Idle spec, so it is left out", one.line, w.name));
                Ok(None)
            }
            None => Err(IcfError::BadValue {
                file: file.into(),
                line: one.line,
                what: format!("the access spec assigned to worker '{}'", w.name),
                value: one.text.clone(),
                expected: "the name of a spec in 'ACCESS SPECIFICATIONS".into(),
            }),
        },
        [_, second, ..] => Err(IcfError::Unsupported {
            file: file.into(),
            line: second.line,
            what: format!("worker '{}' with {} assigned access specs", w.name, w.specs.len()),
            why: "several assigned specs are translated as phases (one per Iometer test), not as one worker table"
                .into(),
}),
    }
}

fn worker_entries(w: &Worker, file: &str) -> Result<Vec<TranslatedKey>, IcfError> {
    let mut out = Vec::new();
    if let Some((qd, at)) = &w.qd {
        let n = w.targets.len().max(1) as u64;
        let what = "'Number of outstanding IOs (per target)";
        let mut e =
            TranslatedKey::new("qd", checked(file, at, what, (*qd, n, 0))?.to_string(), at, what, file)?;
        if n > 1 {
            e = e.note(format!(
                "Iometer keeps {qd} I/Os outstanding on each of the {n} targets; iolab's qd is per worker, \
                 whose I/Os go round-robin over its targets, so qd = {qd} x {n}"
            ));
        }
        out.push(e);
    }
    if let Some((max, start, pattern, at)) = &w.disk {
        let what = "'Disk maximum size,starting sector (512-byte sectors)";
        if *start > 0 {
            out.push(TranslatedKey::new(
                "offset",
                format_size(checked(file, at, what, (*start, 512, 0))?),
                at,
                what,
                file,
            )?);
        }
        if *max > 0 {
            out.push(TranslatedKey::new(
                "length",
                format_size(checked(file, at, what, (*max, 512, 0))?),
                at,
                what,
                file,
            )?);
        }
        if let Some(p) = pattern {
            out.push(data_entry(*p, at, file)?);
        }
    }
    Ok(out)
}

fn data_entry(pattern: u64, at: &ValueLine, file: &str) -> Result<TranslatedKey, IcfError> {
    let what = "Data pattern";
    let (text, note) = match pattern {
        0 => ("zero", "Iometer writes one repeated byte per buffer; iolab's nearest pattern is zeros"),
        1 => ("random", "Iometer reuses one pseudo-random buffer; iolab writes fresh random data"),
        2 => ("random", "full random in both"),
        _ => {
            return Err(IcfError::BadValue {
                file: file.into(),
                line: at.line,
                what: what.into(),
                value: pattern.to_string(),
                expected: "0 (repeating bytes), 1 (pseudo random) or 2 (full random)".into(),
            })
        }
    };
    Ok(TranslatedKey::new("data", text.into(), at, what, file)?.note(note))
}

/// `think` and `burst` from the spec's transfer delay and burst length (those of every line the worker runs: iolab's
/// think time is per worker); none when the delay is 0.
fn think_entries(spec: &AccessSpec, file: &str) -> Result<Vec<TranslatedKey>, IcfError> {
    let lines: Vec<&SpecLine> = spec.lines.iter().filter(|l| l.of_size > 0).collect();
    let Some(first) = lines.first() else { return Ok(Vec::new()) };
    // Iometer's burst length 0 or 1: one I/O per delay.
    let key = |l: &SpecLine| (l.delay, if l.delay == 0 { 1 } else { l.burst.max(1) });
    if let Some(other) = lines.iter().find(|l| key(l) != key(first)) {
        let show = |l: &SpecLine| format!("line {}: delay {} ms, burst {}", l.at.line, l.delay, l.burst);
        return Err(IcfError::Unsupported {
            file: file.into(),
            line: other.at.line,
            what: format!(
                "access spec '{}' (line {}) whose lines differ in transfer delay or burst ({}; {})",
                spec.name,
                spec.line,
                show(first),
                show(other)
            ),
            why: "iolab's think time and burst are per worker, and the worker runs every line of its access spec; \
                  give the lines the same delay and burst"
                .into(),
        });
    }
    let (delay, burst) = key(first);
    if delay == 0 {
        return Ok(Vec::new());
    }
    let at = |n: u64| ValueLine { line: first.at.line, text: n.to_string() };
    let every = if lines.len() > 1 {
        format!(" (the same on all {} lines of the spec)", lines.len())
    } else {
        String::new()
    };
    let think = TranslatedKey::new("think", format!("{delay}ms"), &at(first.delay), "delay (ms)", file)?.note(format!(
        "Iometer waits the transfer delay between bursts of 'burst' I/Os{every}; iolab's worker issues a burst \
         (at most qd I/Os at a time), waits until all of its I/Os complete, and only then idles 'think' before \
         the next burst"
    ));
    let mut b = TranslatedKey::new("burst", burst.to_string(), &at(first.burst), "burst", file)?;
    if first.burst == 0 {
        b = b.note("Iometer's burst length 0 means 1 I/O per burst");
    }
    Ok(vec![think, b])
}

fn spec_tables(out: &mut String, worker: &str, spec: &AccessSpec, file: &str) -> Result<(), IcfError> {
    let sum: u64 = spec.lines.iter().map(|l| l.of_size).sum();
    if sum != 100 {
        return Err(IcfError::Unsupported {
            file: file.into(),
            line: spec.line,
            what: format!("access spec '{}' whose '% of size' values sum to {sum}", spec.name),
            why: "Iometer requires the lines of a spec to add up to 100%".into(),
        });
    }
    for l in spec.lines.iter().filter(|l| l.of_size > 0) {
        out.push_str(&format!(
            "# iometer: access spec '{}' (line {}), line {} (line {})\n",
            spec.name, spec.line, l.at.text, l.at.line
        ));
        out.push_str(&format!("[[{worker}.spec]]\n"));
        for e in spec_entries(l, file)? {
            e.write(out);
        }
    }
    Ok(())
}

fn spec_entries(l: &SpecLine, file: &str) -> Result<Vec<TranslatedKey>, IcfError> {
    let refuse = |what: String, why: &str| IcfError::Unsupported {
        file: file.into(),
        line: l.at.line,
        what,
        why: why.into(),
    };
    if l.reply != 0 {
        return Err(refuse(
            format!("a reply size of {} bytes", l.reply),
            "replies are for Iometer's network targets",
        ));
    }
    let at = &l.at;
    let field = |n: u64| ValueLine { line: at.line, text: n.to_string() };
    if l.size == 0 {
        return Err(IcfError::BadValue {
            file: file.into(),
            line: at.line,
            what: "an access specification line".into(),
            value: at.text.clone(),
            expected: "a transfer size above 0".into(),
        });
    }
    let mut out = vec![
        TranslatedKey::new("bs", format_size(l.size), &field(l.size), "size", file)?,
        TranslatedKey::new("weight", l.of_size.to_string(), &field(l.of_size), "% of size", file)?,
        TranslatedKey::new("read_pct", l.reads.to_string(), &field(l.reads), "% reads", file)?,
        TranslatedKey::new("random_pct", l.random.to_string(), &field(l.random), "% random", file)?,
    ];
    let align = if l.align == 0 {
        TranslatedKey::new("align", "512".into(), &field(0), "align", file)?
            .note("align 0 is Iometer's 'sector boundaries'; 512-byte sectors assumed")
    } else {
        TranslatedKey::new("align", format_size(l.align), &field(l.align), "align", file)?
    };
    out.push(align);
    Ok(out)
}

/// The values of a cycle from `start` up to `end`.
fn cycle_values(c: &Cycle, end: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut x = c.start.max(1);
    while x <= end && v.len() < 64 {
        v.push(x);
        let next = if c.exponential { x.saturating_mul(c.step) } else { x.saturating_add(c.step) };
        if next <= x {
            break;
        }
        x = next;
    }
    v
}

fn list(v: &[u64]) -> String {
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// Cycling test types, described with the `iolab sweep` flags that run the same cycle.
fn cycling_warnings(cfg: &Config, active: &[&Worker], warnings: &mut Vec<String>) {
    let s = &cfg.setup;
    let Some(tt) = &s.test_type else { return };
    let kind = tt.text.to_ascii_uppercase();
    let head = format!("line {}: Iometer test type {kind} runs a series of tests; a job file runs one (all workers, all targets, each worker's own queue depth)", tt.line);
    let qd_part = || -> String {
        let Some(c) = &s.qd_cycling else { return String::new() };
        let depths = cycle_values(c, c.end.unwrap_or(c.start));
        let counts: Vec<u64> = active.iter().map(|w| w.targets.len().max(1) as u64).collect();
        if counts.iter().all(|n| *n == counts[0]) {
            let Some(per_worker) =
                depths.iter().map(|d| d.checked_mul(counts[0])).collect::<Option<Vec<u64>>>()
            else {
                return format!(
                    "; the queue depth cycle (line {}) times {} targets is too large for 64 bits",
                    c.at.line, counts[0]
                );
            };
            format!(
                "; for the queue depth cycle (line {}) run `iolab sweep JOB --qd {}`",
                c.at.line,
                list(&per_worker)
            )
        } else {
            format!(
                "; the queue depth cycle (line {}) is {} per target, and iolab's qd is per worker: workers here have \
                 different target counts, so one --qd list cannot match it; split the job per target count",
                c.at.line,
                list(&depths)
            )
        }
    };
    let text = match kind.as_str() {
        "NORMAL" => return,
        "CYCLE_OUTSTANDING_IOS" => format!("{head}{}", qd_part()),
        "CYCLE_WORKERS" => match &s.worker_cycling {
            Some(c) => format!(
                "{head}; for the worker cycle, translate one worker and run `iolab sweep JOB --workers {}`",
                list(&cycle_values(c, active.len() as u64))
            ),
            None => head,
        },
        "CYCLE_OUTSTANDING_IOS_AND_TARGETS" => {
            format!("{head}{}; iolab has no sweep over targets: run the job once per target set", qd_part())
        }
        _ => format!("{head}; iolab has no sweep over targets or worker sets: run the job once per set"),
    };
    warnings.push(text);
}
