//! The sections of an ICF file read into a model: test setup, access specifications, managers and workers.

use super::lines::{comma_fields, fields, Item, Lines, ValueLine};
use super::IcfError;

/// A cycling setting: `start step type` or `start end step type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    pub start: u64,
    pub end: Option<u64>,
    pub step: u64,
    pub exponential: bool,
    pub at: ValueLine,
}

/// `'TEST SETUP`.
#[derive(Clone, Debug, Default)]
pub struct TestSetup {
    pub description: Option<ValueLine>,
    pub run_time: Option<(u64, ValueLine)>,
    pub ramp: Option<(u64, ValueLine)>,
    pub test_type: Option<ValueLine>,
    pub worker_cycling: Option<Cycle>,
    pub disk_cycling: Option<Cycle>,
    pub qd_cycling: Option<Cycle>,
}

/// One line of an access specification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecLine {
    pub at: ValueLine,
    pub size: u64,
    pub of_size: u64,
    pub reads: u64,
    pub random: u64,
    pub delay: u64,
    pub burst: u64,
    pub align: u64,
    pub reply: u64,
}

/// One access specification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessSpec {
    pub name: String,
    pub line: usize,
    pub lines: Vec<SpecLine>,
}

/// One target of a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub line: usize,
}

/// One worker.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Worker {
    pub name: String,
    pub line: usize,
    /// Outstanding I/Os per target, with the line.
    pub qd: Option<(u64, ValueLine)>,
    /// The fixed seed, when enabled.
    pub seed: Option<(u64, ValueLine)>,
    /// Maximum disk size and starting sector (sectors of 512 bytes), data pattern.
    pub disk: Option<(u64, u64, Option<u64>, ValueLine)>,
    pub specs: Vec<ValueLine>,
    pub targets: Vec<Target>,
}

/// One manager (one machine).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manager {
    pub name: String,
    pub line: usize,
    pub workers: Vec<Worker>,
}

/// The whole configuration.
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub version: Option<String>,
    pub setup: TestSetup,
    pub specs: Vec<AccessSpec>,
    pub managers: Vec<Manager>,
}

/// The sections this reader knows, by their header key.
const SECTIONS: &[&str] = &["test setup", "results display", "access specifications", "manager list"];

/// Reads the items of a file into a [`Config`]; unknown keys are skipped and recorded in `warnings`.
pub fn read(lines: Lines, file: &str, warnings: &mut Vec<String>) -> Result<Config, IcfError> {
    let mut cfg = Config { version: lines.version, ..Config::default() };
    let mut items = lines.items.into_iter().peekable();
    while let Some(head) = items.next() {
        let Some(section) = SECTIONS.iter().find(|s| head.norm == **s) else {
            warnings.push(format!(
                "line {}: unknown key '{}' outside any known section skipped",
                head.line, head.key
            ));
            continue;
        };
        let end = format!("end {section}");
        let mut body = Vec::new();
        loop {
            match items.next() {
                Some(i) if i.norm == end => break,
                Some(i) => body.push(i),
                None => {
                    return Err(IcfError::Syntax {
                        file: file.into(),
                        line: head.line,
                        expected: format!("an 'END {section} line closing the section that starts here"),
                        found: "the end of the file".into(),
                    })
                }
            }
        }
        match *section {
            "test setup" => cfg.setup = read_setup(&body, file, warnings)?,
            "access specifications" => cfg.specs = read_specs(&body, file, warnings)?,
            "manager list" => cfg.managers = read_managers(&body, file, warnings)?,
            _ => {} // results display: what Iometer's window shows; no effect on the I/O
        }
    }
    Ok(cfg)
}

fn bad(file: &str, at: &ValueLine, what: &str, expected: &str) -> IcfError {
    IcfError::BadValue {
        file: file.into(),
        line: at.line,
        what: what.into(),
        value: at.text.clone(),
        expected: expected.into(),
    }
}

/// `a * b + c`, or the value refused as too large: a product of numbers read from the file never wraps.
pub(crate) fn checked(
    file: &str,
    at: &ValueLine,
    what: &str,
    (a, b, c): (u64, u64, u64),
) -> Result<u64, IcfError> {
    a.checked_mul(b).and_then(|x| x.checked_add(c)).ok_or_else(|| {
        let expected = format!("a value that fits: {a} x {b} + {c} is too large for 64 bits");
        bad(file, at, what, &expected)
    })
}

fn number(file: &str, at: &ValueLine, field: &str, what: &str) -> Result<u64, IcfError> {
    field.trim().parse::<u64>().map_err(|_| bad(file, at, what, "whole numbers"))
}

/// Keys of the test setup that do not change the I/O of the workers a file lists.
const SETUP_SKIPPED: &[&str] = &[
    "default disk workers to spawn",
    "default network workers to spawn",
    "default workers to spawn",
    "record results",
];

fn read_setup(items: &[Item], file: &str, warnings: &mut Vec<String>) -> Result<TestSetup, IcfError> {
    let mut s = TestSetup::default();
    for item in items {
        if item.is("test description") {
            s.description = item.values.first().cloned();
        } else if item.is("run time") {
            let v = item.value(file, "hours minutes seconds")?;
            let f = fields(&v.text);
            if f.len() != 3 {
                return Err(bad(file, v, "'Run Time", "three numbers: hours minutes seconds"));
            }
            let n = |x: &str| number(file, v, x, "'Run Time");
            let what = "'Run Time";
            let minutes = checked(file, v, what, (n(f[0])?, 60, n(f[1])?))?;
            s.run_time = Some((checked(file, v, what, (minutes, 60, n(f[2])?))?, v.clone()));
        } else if item.is("ramp up time") {
            let v = item.value(file, "seconds")?;
            s.ramp = Some((number(file, v, &v.text, "'Ramp Up Time")?, v.clone()));
        } else if item.is("test type") {
            s.test_type = Some(item.value(file, "a test type such as NORMAL")?.clone());
        } else if item.is("worker cycling") {
            s.worker_cycling = Some(cycle(item, file, false)?);
        } else if item.is("disk cycling") {
            s.disk_cycling = Some(cycle(item, file, false)?);
        } else if item.is("queue depth cycling") {
            s.qd_cycling = Some(cycle(item, file, true)?);
        } else if !SETUP_SKIPPED.iter().any(|k| item.is(k)) {
            warnings.push(format!("line {}: unknown test setup key '{}' skipped", item.line, item.key));
        }
    }
    Ok(s)
}

fn cycle(item: &Item, file: &str, with_end: bool) -> Result<Cycle, IcfError> {
    let shape = if with_end { "start end step type" } else { "start step type" };
    let v = item.value(file, shape)?;
    let f = fields(&v.text);
    let want = if with_end { 4 } else { 3 };
    let expected = format!("{shape}, e.g. '1 1 LINEAR' (type LINEAR or EXPONENTIAL)");
    if f.len() != want {
        return Err(bad(file, v, &format!("'{}", item.key), &expected));
    }
    let n = |x: &str| number(file, v, x, &format!("'{}", item.key));
    let exponential = match f[want - 1].to_ascii_uppercase().as_str() {
        "LINEAR" => false,
        "EXPONENTIAL" => true,
        _ => return Err(bad(file, v, &format!("'{}", item.key), &expected)),
    };
    let start = n(f[0])?;
    let (end, step) = if with_end { (Some(n(f[1])?), n(f[2])?) } else { (None, n(f[1])?) };
    Ok(Cycle { start, end, step, exponential, at: v.clone() })
}

fn read_specs(items: &[Item], file: &str, warnings: &mut Vec<String>) -> Result<Vec<AccessSpec>, IcfError> {
    let mut specs: Vec<AccessSpec> = Vec::new();
    for item in items {
        if item.is("access specification name") {
            let v = item.value(file, "NAME,DEFAULT ASSIGNMENT")?;
            // The name may hold commas; the default assignment is after the last one.
            let name = v.text.rsplit_once(',').map_or(v.text.as_str(), |(n, _)| n).trim();
            specs.push(AccessSpec { name: name.to_string(), line: v.line, lines: Vec::new() });
        } else if item.is("size,") {
            let Some(spec) = specs.last_mut() else {
                return Err(IcfError::Syntax {
                    file: file.into(),
                    line: item.line,
                    expected: "an 'Access specification name line before the spec's lines".into(),
                    found: format!("'{}", item.key),
                });
            };
            for v in &item.values {
                spec.lines.push(spec_line(v, file)?);
            }
        } else {
            warnings
                .push(format!("line {}: unknown access specification key '{}' skipped", item.line, item.key));
        }
    }
    Ok(specs)
}

fn spec_line(v: &ValueLine, file: &str) -> Result<SpecLine, IcfError> {
    let f = comma_fields(&v.text);
    let expected = "eight whole numbers: size,% of size,% reads,% random,delay,burst,align,reply";
    if f.len() != 8 {
        return Err(bad(file, v, "an access specification line", expected));
    }
    let mut n = [0u64; 8];
    for (slot, text) in n.iter_mut().zip(&f) {
        *slot = text.parse().map_err(|_| bad(file, v, "an access specification line", expected))?;
    }
    let [size, of_size, reads, random, delay, burst, align, reply] = n;
    Ok(SpecLine { at: v.clone(), size, of_size, reads, random, delay, burst, align, reply })
}

fn read_managers(items: &[Item], file: &str, warnings: &mut Vec<String>) -> Result<Vec<Manager>, IcfError> {
    let mut managers: Vec<Manager> = Vec::new();
    for item in items {
        if item.is("manager id") {
            let v = item.value(file, "ID,NAME")?;
            let name = v.text.split_once(',').map_or(v.text.as_str(), |(_, n)| n).trim();
            managers.push(Manager { name: name.to_string(), line: v.line, workers: Vec::new() });
            continue;
        }
        let Some(m) = managers.last_mut() else {
            return Err(out_of_place(file, item, "a 'Manager ID, manager name line first"));
        };
        if item.is("worker") && item.norm == "worker" {
            let v = item.value(file, "the worker's name")?;
            m.workers.push(Worker { name: v.text.clone(), line: v.line, ..Worker::default() });
            continue;
        }
        if item.is("manager network address") || item.is("end manager") {
            continue;
        }
        let Some(w) = m.workers.last_mut() else {
            return Err(out_of_place(file, item, "a 'Worker line first"));
        };
        worker_item(w, item, file, warnings)?;
    }
    Ok(managers)
}

fn out_of_place(file: &str, item: &Item, expected: &str) -> IcfError {
    IcfError::Syntax {
        file: file.into(),
        line: item.line,
        expected: expected.into(),
        found: format!("'{}", item.key),
    }
}

/// Keys of a worker that only mark structure.
const WORKER_MARKERS: &[&str] = &[
    "default target settings for worker",
    "end default target settings for worker",
    "end assigned access specs",
    "target assignments",
    "end target assignments",
    "end target",
    "end worker",
];

fn worker_item(w: &mut Worker, item: &Item, file: &str, warnings: &mut Vec<String>) -> Result<(), IcfError> {
    if WORKER_MARKERS.contains(&item.norm.as_str()) {
        return Ok(());
    }
    if item.is("worker type") || item.is("target type") {
        let v = item.value(file, "DISK")?;
        if !v.text.eq_ignore_ascii_case("disk") {
            return Err(IcfError::Unsupported {
                file: file.into(),
                line: v.line,
                what: format!("'{} {}", item.key, v.text),
                why: "iolab drives disks and files only; Iometer's network (TCP, VI) workers and targets have no equivalent".into(),
            });
        }
    } else if item.is("number of outstanding ios") {
        default_settings(w, item, file)?;
    } else if item.is("disk maximum size") {
        let v = item.value(file, "maximum size,starting sector")?;
        let f = fields(&v.text);
        if f.len() < 2 {
            return Err(bad(file, v, "'Disk maximum size,starting sector", "two or three whole numbers"));
        }
        let n = |x: &str| number(file, v, x, "'Disk maximum size,starting sector");
        let pattern = f.get(2).map(|p| n(p)).transpose()?;
        w.disk = Some((n(f[0])?, n(f[1])?, pattern, v.clone()));
    } else if item.is("assigned access specs") {
        w.specs.extend(item.values.iter().cloned());
    } else if item.norm == "target" {
        let v = item.value(file, "the target's name")?;
        w.targets.push(Target { name: v.text.clone(), line: v.line });
    } else {
        warnings.push(format!(
            "line {}: unknown worker key '{}' skipped (worker '{}')",
            item.line, item.key, w.name
        ));
    }
    Ok(())
}

/// `'Number of outstanding IOs,test connection rate,transactions per connection[,use fixed seed,fixed seed value]`.
fn default_settings(w: &mut Worker, item: &Item, file: &str) -> Result<(), IcfError> {
    let v = item.value(file, "outstanding IOs,test connection rate,transactions per connection")?;
    let f = comma_fields(&v.text);
    let what = "'Number of outstanding IOs";
    if f.len() < 3 {
        return Err(bad(
            file,
            v,
            what,
            "at least three fields: outstanding IOs,ENABLED|DISABLED,transactions",
        ));
    }
    w.qd = Some((number(file, v, f[0], what)?, v.clone()));
    if f[1].eq_ignore_ascii_case("enabled") {
        return Err(IcfError::Unsupported {
            file: file.into(),
            line: v.line,
            what: "test connection rate ENABLED".into(),
            why: "iolab keeps its targets open for the whole run; it cannot close and reopen them every N transactions".into(),
        });
    }
    if f.len() >= 5 && f[3].eq_ignore_ascii_case("enabled") {
        w.seed = Some((number(file, v, f[4], what)?, v.clone()));
    }
    Ok(())
}
