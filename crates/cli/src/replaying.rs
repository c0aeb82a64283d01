//! A trace made ready to replay, for `iolab replay` and `iolab sweep --replay`: read into memory once (bad
//! records said), its devices mapped to targets (`--map DISK=TARGET`, or by position), and the workload
//! flags of a run set from it (block size the longest op, reads and/or writes, trims when it discards, as many
//! I/Os as records).

use crate::args::RunArgs;
use crate::exit::usage;
use anyhow::Result;
use iolab_report::format_count;
use iolab_run::replay::{ReplayRecord, ReplaySource, BYTES_PER_RECORD, MAX_LEN};
use iolab_trace::TraceOp;
use std::sync::Arc;

/// A trace read and mapped: the source to replay (its speed set per run) and what the run's flags need.
pub struct Loaded {
    /// The records and the map; `speed` is the caller's.
    pub src: ReplaySource,
    /// `--map`'s targets, in the order first named (the run's `--target`s); empty without `--map`.
    targets: Vec<String>,
    reads: usize,
    writes: usize,
    /// Discards, replayed as trims: the run destroys data as writes do.
    discards: usize,
    longest: u32,
}

/// Reads `trace_file` and applies `map` (`--map`) and `spread` (`--spread`); `run` is checked for what a
/// replay cannot take.
pub fn load(trace_file: &str, map: &[String], spread: bool, run: &RunArgs) -> Result<Loaded> {
    if run.job.is_some() {
        return Err(usage(
            "iolab replay takes its I/O from the trace: give the targets with --target, not a job file",
        ));
    }
    if let Some((flag, v)) = workload_given(run) {
        return Err(usage(format!(
            "'{flag} {v}': a replay takes its workload from the trace '{trace_file}' (its ops, sizes and times); give --speed, --qd or --workers instead"
        )));
    }
    if let (Some(first_map), Some(first_target)) = (map.first(), run.keys.all("target").next()) {
        return Err(usage(format!(
            "'--map {first_map}' and '--target {first_target}' both give the targets: with --map, each trace device names its target"
        )));
    }
    let mut t = crate::trace_file::open(trace_file)?;
    let records = load_records(&mut t, trace_file)?;
    crate::trace_file::report_bad(&t, trace_file);
    let (targets, by_device) = match map.is_empty() {
        true => (Vec::new(), None),
        false => {
            let (targets, by_device) = parse_map(map, t.targets())?;
            say_unmapped(t.targets(), &by_device, &records, run.quiet);
            (targets, Some(by_device.into()))
        }
    };
    let rw = |op| records.iter().filter(move |r| r.op == op && r.len <= MAX_LEN);
    let (reads, writes) = (rw(TraceOp::Read).count(), rw(TraceOp::Write).count());
    if reads + writes == 0 {
        return Err(usage(format!("{trace_file}: the trace has no reads or writes to replay")));
    }
    let longest = rw(TraceOp::Read).chain(rw(TraceOp::Write)).map(|r| r.len).max().unwrap_or(4096);
    let discards = records.iter().filter(|r| r.op == TraceOp::Discard && r.len > 0).count();
    let src = ReplaySource {
        path: trace_file.to_string(),
        records: Arc::new(records),
        speed: Some(1.0),
        targets: by_device,
        devices: t.targets().into(),
        spread,
    };
    Ok(Loaded { src, targets, reads, writes, discards, longest })
}

/// The job keys a replay takes from its trace: never the user's.
pub const FROM_THE_TRACE: [&str; 10] =
    ["bs", "rw", "read_pct", "random_pct", "trim_pct", "align", "dist", "rate", "arrival", "think"];

/// The first key of [`FROM_THE_TRACE`] that `run` gives: its flag and its value.
fn workload_given(run: &RunArgs) -> Option<(String, &str)> {
    FROM_THE_TRACE.iter().find_map(|&key| {
        let flag = iolab_spec::keys::find(key).and_then(|k| k.flag).map(|f| format!("--{}", f.long));
        flag.zip(run.keys.get(key))
    })
}

impl Loaded {
    /// Sets the workload flags of `run` from the trace: the targets of `--map`, the block size of the longest
    /// op, reads and/or writes, one worker and a depth of 64 unless given, as many I/Os as records unless a
    /// duration or a count is given. Fails when more workers are asked for than the trace has records.
    pub fn set_workload(&self, run: &mut RunArgs) -> Result<()> {
        let keys = &mut run.keys;
        if !self.targets.is_empty() {
            keys.set("target", self.targets.clone());
        }
        keys.set("bs", Some(self.longest.max(1).div_ceil(4096).saturating_mul(4096).to_string()));
        let rw = match (self.reads, self.writes) {
            (_, 0) => "randread",
            (0, _) => "randwrite",
            _ => "randrw",
        };
        keys.set("rw", Some(rw.to_string()));
        keys.set("read_pct", None);
        // The trace's discards come from the trace, as its reads and writes do; a share of trims in the plan
        // says the run destroys data (the write gate asks what a write asks).
        keys.set("trim_pct", (self.discards > 0).then(|| "1".to_string()));
        for (key, default) in [("workers", "1"), ("qd", "64")] {
            if !keys.is_given(key) {
                keys.set(key, Some(default.to_string()));
            }
        }
        let records = self.src.records.len();
        if let Some(w) = keys.get("workers").and_then(|w| w.parse::<usize>().ok()).filter(|&w| w > records) {
            return Err(usage(format!(
                "'--workers {w}': the trace '{}' has {records} records, fewer than the workers (each replays \
                 some); give at most --workers {records}",
                self.src.path
            )));
        }
        if !keys.is_given("duration") && !keys.is_given("ios") {
            keys.set("ios", Some(records.to_string()));
        }
        Ok(())
    }

    /// The source at `speed`.
    pub fn at(&self, speed: Option<f64>) -> ReplaySource {
        ReplaySource { speed, ..self.src.clone() }
    }
}

/// `--map` (each `DISK=TARGET`, repeatable, several in one flag separated by commas) against the trace's
/// device names: the distinct targets in the order first named, and per device its target's index (`None`:
/// unmapped). A comma starts a new mapping only before a device's name or index followed by `=`, so a
/// target's own commas (`sim:fixed,latency=100us`) stay in it, and so do a device's (blktrace's `8,16`).
fn parse_map(map: &[String], devices: &[String]) -> Result<(Vec<String>, Vec<Option<u16>>)> {
    let mut targets: Vec<String> = Vec::new();
    let mut by_device = vec![None; devices.len()];
    for flag in map {
        for (disk, target) in split_map(flag, devices)? {
            let d = device_index(&disk, devices).ok_or_else(|| unknown_device(flag, &disk, devices))?;
            if by_device[d].is_some() {
                return Err(usage(format!(
                    "invalid value '{flag}' for '--map': trace device '{}' is mapped twice; map each once",
                    devices[d]
                )));
            }
            let spec = iolab_spec::TargetSpec::parse(&target).map_err(|e| {
                usage(format!("invalid value '{flag}' for '--map': target '{target}': expected {e}"))
            })?;
            // One run target per distinct target, however it is written ('mem:1G', 'mem:1g').
            let same = |t: &String| iolab_spec::TargetSpec::parse(t).is_ok_and(|s| s == spec);
            let i = targets.iter().position(same).unwrap_or_else(|| {
                targets.push(target.clone());
                targets.len() - 1
            });
            by_device[d] = Some(i as u16);
        }
    }
    Ok((targets, by_device))
}

/// One `--map` value split into its (device, target) pairs (see [`parse_map`]).
fn split_map(flag: &str, devices: &[String]) -> Result<Vec<(String, String)>> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            flag.match_indices(',').map(|(i, _)| i + 1).filter(|&i| disk_at(&flag[i..], devices).is_some()),
        )
        .collect();
    let mut pairs = Vec::new();
    for (k, &start) in starts.iter().enumerate() {
        let piece = &flag[start..starts.get(k + 1).map_or(flag.len(), |&next| next - 1)];
        let disk = disk_at(piece, devices).or_else(|| piece.split_once('=').map(|(d, _)| d)).ok_or_else(|| {
            usage(format!(
                "invalid value '{flag}' for '--map': expected DISK=TARGET (a trace device's name or index, then a target), e.g. '0=/dev/sdb'"
            ))
        })?;
        let target = piece[disk.len() + 1..].trim();
        if target.is_empty() {
            return Err(usage(format!(
                "invalid value '{flag}' for '--map': trace device '{}' is given no target",
                disk.trim()
            )));
        }
        pairs.push((disk.trim().to_string(), target.to_string()));
    }
    Ok(pairs)
}

/// The trace device (its longest name, or an index) that `text` starts with, followed by `=`.
fn disk_at<'a>(text: &'a str, devices: &[String]) -> Option<&'a str> {
    let named = devices
        .iter()
        .filter(|d| text.strip_prefix(d.as_str()).is_some_and(|rest| rest.starts_with('=')))
        .map(String::len)
        .max();
    let index = || text.find('=').filter(|&i| text[..i].parse::<usize>().is_ok_and(|n| n < devices.len()));
    named.or_else(index).map(|n| &text[..n])
}

/// The index of the trace device named `disk`, or given by its index (`0`, `1`).
fn device_index(disk: &str, devices: &[String]) -> Option<usize> {
    devices
        .iter()
        .position(|d| d == disk)
        .or_else(|| disk.parse::<usize>().ok().filter(|&i| i < devices.len()))
}

/// The error for a `--map` naming no device of the trace: the trace's devices listed.
fn unknown_device(flag: &str, disk: &str, devices: &[String]) -> anyhow::Error {
    let listed: Vec<String> = devices.iter().enumerate().map(|(i, d)| format!("'{d}' ({i})")).collect();
    usage(format!(
        "invalid value '{flag}' for '--map': the trace has no device '{disk}'; its devices (name, or index) are {}",
        listed.join(", ")
    ))
}

/// Reads every record of `t`, its memory checked against MemAvailable before it is taken: for an iolab trace,
/// once for the records its size holds (reserved exactly); for the others, each time the list doubles.
fn load_records(t: &mut iolab_trace::Trace, path: &str) -> Result<Vec<ReplayRecord>> {
    let available = iolab_device::memory_headroom();
    let mut records = Vec::new();
    if t.format() == iolab_trace::Format::Iolab {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let n = size / iolab_trace::binary::RECORD_SIZE as u64;
        check_memory(n, available, path)?;
        records.try_reserve_exact(n as usize).map_err(|_| not_allocated(n, path))?;
    }
    while let Some(r) = t.next_record().map_err(usage)? {
        if records.len() == records.capacity() {
            let more = records.len().max(1024);
            check_memory((records.len() + more) as u64, available, path)?;
            records
                .try_reserve_exact(more)
                .map_err(|_| not_allocated((records.len() + more) as u64, path))?;
        }
        records.push(ReplayRecord::from(&r));
    }
    Ok(records)
}

/// Refuses a load of `n` records that would take more than `available` allows.
fn check_memory(n: u64, available: iolab_device::MemoryHeadroom, path: &str) -> Result<()> {
    let need = n.saturating_mul(BYTES_PER_RECORD);
    if available.fits(need) {
        return Ok(());
    }
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
    Err(usage(format!(
        "'{path}': replaying {} records needs {} ({BYTES_PER_RECORD} bytes a record), but only {} is available \
         ({}); replay part of the trace (iolab trace convert can cut it) or use a machine with more memory",
        format_count(n),
        mib(need),
        mib(available.bytes),
        available.limit.describe()
    )))
}

/// The error for an allocation of `n` records that failed although the estimate fitted.
fn not_allocated(n: u64, path: &str) -> anyhow::Error {
    usage(format!(
        "'{path}': memory for {} records ({} bytes a record) could not be allocated; replay part of the trace \
         (iolab trace convert can cut it) or use a machine with more memory",
        format_count(n),
        BYTES_PER_RECORD
    ))
}

/// Says on stderr which trace devices `--map` leaves out and how many records they hold (skipped as
/// `unmapped`).
fn say_unmapped(devices: &[String], by_device: &[Option<u16>], records: &[ReplayRecord], quiet: bool) {
    let mut counts = vec![0u64; devices.len()];
    for r in records {
        if let Some(c) = counts.get_mut(r.target as usize) {
            *c += 1;
        }
    }
    let left: Vec<String> = (0..devices.len())
        .filter(|&d| by_device[d].is_none())
        .map(|d| format!("'{}' ({} records)", devices[d], format_count(counts[d])))
        .collect();
    if !left.is_empty() && !quiet {
        eprintln!(
            "iolab: replay: --map leaves out {}; their records are skipped (unmapped)",
            left.join(", ")
        );
    }
}

/// `--speed`: `2x`, `0.5x`, `1000x` (the `x` may be left out) or `max` (`None`).
pub fn parse_speed(text: &str) -> Result<Option<f64>> {
    if text == "max" {
        return Ok(None);
    }
    match text.trim_end_matches('x').parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(Some(s)),
        _ => Err(usage(format!(
            "invalid value '{text}' for '--speed': expected a factor such as 1x, 2x, 1000x or 0.5x, or 'max'"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn devices() -> Vec<String> {
        vec!["web/0".into(), "web/1".into(), "8,16".into()]
    }

    #[test]
    fn a_comma_starts_a_mapping_only_before_a_device() {
        let map = ["web/0=sim:fixed,latency=1ms,size=1G,2=/dev/sdc".to_string(), "1=/dev/sdc".to_string()];
        let (targets, by_device) = parse_map(&map, &devices()).unwrap();
        assert_eq!(targets, ["sim:fixed,latency=1ms,size=1G", "/dev/sdc"]);
        assert_eq!(by_device, [Some(0), Some(1), Some(1)]);
        // A name wins over an index; a name with a comma is found whole.
        let (_, by_device) = parse_map(&["8,16=/dev/sdb".to_string()], &devices()).unwrap();
        assert_eq!(by_device, [None, None, Some(0)]);
    }

    #[test]
    fn bad_maps_quote_what_was_typed() {
        let err = |m: &str| format!("{:#}", parse_map(&[m.to_string()], &devices()).unwrap_err());
        assert!(err("web/9=/dev/sdb").contains("'web/9=/dev/sdb'"), "{}", err("web/9=/dev/sdb"));
        assert!(err("3=/dev/sdb").contains("no device '3'"));
        assert!(err("web/0").contains("expected DISK=TARGET"));
        assert!(err("web/0=").contains("is given no target"));
        assert!(err("0=a,web/0=b").contains("mapped twice"));
        assert!(err("0=sim:bogus").contains("target 'sim:bogus': expected"), "{}", err("0=sim:bogus"));
    }

    #[test]
    fn one_target_however_it_is_written() {
        let (targets, by_device) = parse_map(&["0=mem:1G,1=mem:1g".to_string()], &devices()).unwrap();
        assert_eq!((targets.len(), by_device), (1, vec![Some(0), Some(0), None]));
    }
}
