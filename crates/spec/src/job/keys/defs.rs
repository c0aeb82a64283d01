//! The definitions of the job keys, one per key ([`Key`]), in the order of the key lists: run keys, worker
//! keys, access-spec keys, then the consent flags of the command line.
//!
//! A definition's setter is the one parser of its key: job files, the command line, sweeps and imports all
//! go through it, so an error names the flag or key and quotes the text as typed. Its `good` and `bad`
//! texts are its unit test (`keys::tests`).

use super::parse::{parse_bool, positive_size, quoted, range_u32};
use super::{Count, Flag, Key, Sets};
use crate::cache::{CacheMode, CachePolicy, CacheSize};
use crate::durability::parse_flush_every;
use crate::error::{Place, SpecError};
use crate::inject::InjectSpec;
use crate::job::layer::{Layer, MAX_QD};
use crate::job::values::{ClockKind, DataPattern, Dedupe, EngineKind, Prealloc, Rw, VerifyFail};
use crate::target::{is_target_name, TargetSpec};
use crate::throttle::ThrottleSpec;
use crate::units::MIN_INTERVAL_NS;
use crate::units::{
    parse_bandwidth, parse_count, parse_duration_ns, parse_percent, parse_size, Arrival, BlockSizes, Dist,
    MAX_WORKERS,
};
use crate::WriteSync;

/// The error for `text` at `place`: `expected` says what would do.
fn invalid(place: &Place, text: &str, expected: &str) -> SpecError {
    SpecError::invalid(place, text, expected)
}

/// `target`: adds one target to the layer's.
fn add_target(l: &mut Layer, text: &str, at: &Place) -> Result<(), SpecError> {
    let t = quoted(TargetSpec::parse(text), text, at)?;
    l.target.get_or_insert_with(Vec::new).push(t);
    Ok(())
}

/// The job keys, in the order of the key lists (which a suggestion for a mistyped key follows on a tie).
pub const KEYS: &[Key] = &[
    // ------------------------------------------------------------------------------------------------------
    // Run keys: the top of a job file.
    Key {
        name: "name",
        doc: "A name for the job: what `iolab runs` lists it by (as fio's --name names a job).",
        flag: Some(Flag::value("name", "NAME")),
        sets: Sets::Run(|job, text, _| {
            job.name = Some(text.to_string());
            Ok(())
        }),
        count: Count::One,
        good: &["oltp"],
        bad: &[],
    },
    Key {
        name: "duration",
        doc: "Measured time, after the ramp (e.g. 60s, 5m). Default 10s.",
        flag: Some(Flag::value("duration", "DUR").short('d').hyphens().aliases(&["runtime"])),
        sets: Sets::Phase(|job, text, at| {
            let v = quoted(parse_duration_ns(text), text, at)?;
            if v == 0 {
                return Err(invalid(at, text, "a duration above 0, e.g. '30s'"));
            }
            job.duration_ns = Some(v);
            Ok(())
        }),
        count: Count::One,
        good: &["30s", "5m"],
        bad: &["-5s", "0"],
    },
    Key {
        name: "ramp",
        doc: "Warm-up before measuring, excluded from every statistic. Default 1s for timed runs, 0 otherwise.",
        flag: Some(Flag::value("ramp", "DUR").hyphens().aliases(&["ramp_time", "ramp-time"])),
        sets: Sets::Phase(|job, text, at| {
            job.ramp_ns = Some(quoted(parse_duration_ns(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["5s", "0"],
        bad: &["soon"],
    },
    Key {
        name: "interval",
        doc: "Time-series interval: each worker's statistics are cut into windows this long (at least 10ms). \
              Default 1s.",
        flag: Some(Flag::value("interval", "DUR").hyphens()),
        sets: Sets::Run(|job, text, at| {
            let v = quoted(parse_duration_ns(text), text, at)?;
            if v < MIN_INTERVAL_NS {
                return Err(invalid(at, text, "a duration of at least 10ms, e.g. '1s'"));
            }
            job.interval_ns = Some(v);
            Ok(())
        }),
        count: Count::One,
        good: &["1s", "250ms"],
        bad: &["5ms", "soon"],
    },
    Key {
        name: "ios",
        doc: "Stop after this many measured I/Os in all, instead of a duration.",
        flag: Some(Flag::value("ios", "N").hyphens()),
        sets: Sets::Phase(|job, text, at| {
            let v = quoted(parse_count(text), text, at)?;
            if v < 1.0 || v.fract() != 0.0 {
                return Err(invalid(at, text, "a whole number of I/Os, at least 1, e.g. '1M'"));
            }
            job.ios = Some(v as u64);
            Ok(())
        }),
        count: Count::One,
        good: &["1M", "100"],
        bad: &["0", "1.5"],
    },
    Key {
        name: "bytes",
        doc: "Stop after this many measured bytes in all, instead of a duration.",
        flag: Some(Flag::value("bytes", "SIZE").hyphens()),
        sets: Sets::Phase(|job, text, at| {
            job.bytes = Some(positive_size(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["1G"],
        bad: &["0"],
    },
    Key {
        name: "seed",
        doc: "Seed of every random choice (offsets, sizes, mixes, arrivals). Default: fresh, printed in the \
              result.",
        flag: Some(Flag::value("seed", "N").hyphens().aliases(&["randseed"])),
        sets: Sets::Run(|job, text, at| {
            let t = text.trim();
            let v = match t.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => t.parse::<u64>().ok(),
            };
            job.seed = Some(v.ok_or_else(|| invalid(at, text, "a whole number from 0 to 2^64-1"))?);
            Ok(())
        }),
        count: Count::One,
        good: &["7", "0xff"],
        bad: &["-1", "0xg"],
    },
    Key {
        name: "engine",
        doc: "Engine for files and devices: auto (io_uring if the kernel allows, else sync with a notice), \
              io_uring, or sync (pread/pwrite, depth 1 per worker). fio's libaio and posixaio run on io_uring, \
              with a note.",
        flag: Some(
            Flag::value("engine", "ENGINE").aliases(&["ioengine"]).candidates(&["auto", "io_uring", "sync"]),
        ),
        sets: Sets::Run(|job, text, at| {
            let engine = EngineKind::named(text).ok_or_else(|| invalid(at, text, "'auto', 'io_uring' or 'sync'"))?;
            job.engine = Some(engine);
            Ok(())
        }),
        count: Count::One,
        good: &["io_uring", "psync", "libaio"],
        bad: &["aio", "net"],
    },
    Key {
        name: "direct",
        doc: "Use the page cache instead of O_DIRECT. Results then include cache hits; the report warns.",
        flag: Some(Flag::switch("buffered", "false")),
        sets: Sets::Run(|job, text, at| {
            job.direct = Some(parse_bool(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["false", "yes"],
        bad: &["maybe"],
    },
    Key {
        name: "prealloc",
        doc: "How a file iolab creates (or extends to --size) is laid out: fallocate (reserve it in one call, \
              then write data over it; the default), write (write data, the file system allocating as the \
              writes come), reserve (reserve it in one call and write nothing: unwritten extents, which read \
              as zeros without the device and are converted as the run writes them, as etcd's WAL segments \
              are made), or none (an empty file the run's own writes grow and allocate, as appending \
              writers do: the fragmenting case; reads of what the run has not written yet are short). fio's \
              fallocate= option. The result shows each file's extents before and after the run and the I/Os \
              that crossed an extent boundary.",
        flag: Some(
            Flag::value("prealloc", "fallocate|write|reserve|none")
                .candidates(&["fallocate", "write", "reserve", "none"]),
        ),
        sets: Sets::Run(|job, text, at| {
            job.prealloc = Some(match text.trim() {
                "fallocate" => Prealloc::Fallocate,
                "write" => Prealloc::Write,
                "reserve" => Prealloc::Reserve,
                "none" => Prealloc::None,
                _ => return Err(invalid(at, text, "'fallocate', 'write', 'reserve' or 'none'")),
            });
            Ok(())
        }),
        count: Count::One,
        good: &["none", "fallocate", "reserve"],
        bad: &["posix"],
    },
    Key {
        name: "clock",
        doc: "Clock: real, or virtual (emulated sim: targets only; deterministic, takes no wall time).",
        flag: Some(Flag::value("clock", "CLOCK")),
        sets: Sets::Run(|job, text, at| {
            job.clock = Some(match text.trim() {
                "real" => ClockKind::Real,
                "virtual" => ClockKind::Virtual,
                _ => return Err(invalid(at, text, "'real' or 'virtual'")),
            });
            Ok(())
        }),
        count: Count::One,
        good: &["virtual"],
        bad: &["wall"],
    },
    Key {
        name: "workers",
        doc: "Worker threads. Default 1.",
        flag: Some(Flag::value("workers", "N").short('w').hyphens().aliases(&["numjobs"])),
        sets: Sets::Run(|job, text, at| {
            job.workers = Some(range_u32(at, text, 1, MAX_WORKERS, "a whole number")?);
            Ok(())
        }),
        count: Count::One,
        good: &["4"],
        bad: &["0", "1025"],
    },
    Key {
        name: "cache",
        doc: "Put a block cache in front of the targets: a size ('8G') or a percentage of their total size \
              ('25%').",
        flag: Some(Flag::value("cache", "SIZE|PCT%").heading("Cache")),
        sets: Sets::Run(|job, text, at| {
            let t = text.trim();
            job.cache.size = Some(if t.ends_with('%') {
                CacheSize::Percent(quoted(parse_percent(t), text, at)?)
            } else if t == "0" || t == "off" || t == "none" {
                CacheSize::Bytes(0)
            } else {
                CacheSize::Bytes(parse_size(t).map_err(|_| {
                    invalid(at, text, "a size ('8G'), a percentage of the targets ('25%'), or 0")
                })?)
            });
            Ok(())
        }),
        count: Count::One,
        good: &["8G", "25%", "off"],
        bad: &["lots", "120%"],
    },
    Key {
        name: "cache_dev",
        doc: "Where the cache store lives: mem:SIZE (RAM, the default), an emulated device (sim:ssd) that \
              times hits, or (real targets only) a file or block device that carries the cache's reads and \
              writes for real; a missing file is created as a scratch file of the cache's size and removed \
              at exit. See docs/CACHE.md.",
        flag: Some(Flag::value("cache-dev", "TARGET").heading("Cache")),
        sets: Sets::Run(|job, text, at| {
            let t = quoted(TargetSpec::parse(text), text, at)?;
            if !matches!(t, TargetSpec::Mem { .. } | TargetSpec::Sim(_) | TargetSpec::Path { .. }) {
                return Err(invalid(
                    at,
                    text,
                    "'mem:SIZE' (RAM), an emulated device ('sim:ssd'), or a file or block device (real \
                     targets only)",
                ));
            }
            job.cache.dev = Some(t);
            Ok(())
        }),
        count: Count::One,
        good: &["mem:1G", "sim:ssd"],
        bad: &["null:1G"],
    },
    Key {
        name: "cache_line",
        doc: "Cache line size. Default 4K.",
        flag: Some(Flag::value("cache-line", "SIZE").heading("Cache")),
        sets: Sets::Run(|job, text, at| {
            let v = positive_size(at, text)?;
            if !v.is_power_of_two() || !(512..=(1 << 20)).contains(&v) {
                return Err(invalid(at, text, "a power of two from 512 to 1M, e.g. '4K'"));
            }
            job.cache.line_bytes = Some(v);
            Ok(())
        }),
        count: Count::One,
        good: &["4K", "1M"],
        bad: &["3K", "2M"],
    },
    Key {
        name: "cache_mode",
        doc: "write-through (default), write-around, write-back or read-only.",
        flag: Some(Flag::value("cache-mode", "MODE").heading("Cache").candidates(&[
            "write-through",
            "write-around",
            "write-back",
            "read-only",
        ])),
        sets: Sets::Run(|job, text, at| {
            job.cache.mode = Some(match text.trim() {
                "write-through" | "wt" => CacheMode::WriteThrough,
                "write-around" | "wa" => CacheMode::WriteAround,
                "write-back" | "wb" => CacheMode::WriteBack,
                "read-only" | "ro" => CacheMode::ReadOnly,
                _ => {
                    return Err(invalid(at, text, "'write-through', 'write-around', 'write-back' or 'read-only'"))
                }
            });
            Ok(())
        }),
        count: Count::One,
        good: &["write-back", "wt"],
        bad: &["write-sometimes"],
    },
    Key {
        name: "cache_policy",
        doc: "Eviction policy: lru (default), arc, s3-fifo (the paper's, 2-bit frequencies) or s3-fifo-1bit.",
        flag: Some(Flag::value("cache-policy", "POLICY").heading("Cache")),
        sets: Sets::Run(|job, text, at| {
            job.cache.policy = Some(match text.trim() {
                "lru" => CachePolicy::Lru,
                "arc" => CachePolicy::Arc,
                "s3-fifo" | "s3fifo" => CachePolicy::S3Fifo,
                "s3-fifo-1bit" => CachePolicy::S3Fifo1Bit,
                _ => return Err(invalid(at, text, "'lru', 'arc', 's3-fifo' or 's3-fifo-1bit'")),
            });
            Ok(())
        }),
        count: Count::One,
        good: &["arc", "s3-fifo-1bit"],
        bad: &["mru"],
    },
    Key {
        name: "cache_admit",
        doc: "Admit a line on its N-th miss. Default 1.",
        flag: Some(Flag::value("cache-admit", "N").heading("Cache")),
        sets: Sets::Run(|job, text, at| {
            job.cache.admit_after = Some(range_u32(at, text, 1, 255, "a number of misses")?);
            Ok(())
        }),
        count: Count::One,
        good: &["2"],
        bad: &["0", "256"],
    },
    Key {
        name: "cache_seq_cutoff",
        doc: "Bypass the cache for sequential streams longer than SIZE. Default 0 (never).",
        flag: Some(Flag::value("cache-seq-cutoff", "SIZE").heading("Cache")),
        sets: Sets::Run(|job, text, at| {
            job.cache.seq_cutoff_bytes = Some(quoted(parse_size(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["1M", "0"],
        bad: &["big"],
    },
    Key {
        name: "cache_max_mem",
        doc: "Cap on the RAM the cache may use.",
        flag: Some(Flag::value("cache-max-mem", "SIZE").heading("Cache")),
        sets: Sets::Run(|job, text, at| {
            job.cache.max_mem_bytes = Some(positive_size(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["1G"],
        bad: &["0"],
    },
    Key {
        name: "cache_shrink",
        doc: "Shrink the cache when the machine's available memory runs low (reported).",
        flag: Some(Flag::switch("cache-shrink", "true").heading("Cache")),
        sets: Sets::Run(|job, text, at| {
            job.cache.shrink = Some(parse_bool(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["true", "off"],
        bad: &["maybe"],
    },
    Key {
        name: "cache_dirty_max",
        doc: "Write-back: start writing dirty lines back above this share of lines. Default 50%.",
        flag: Some(Flag::value("cache-dirty-max", "PCT%").heading("Cache")),
        sets: Sets::Run(|job, text, at| {
            let p = quoted(parse_percent(text), text, at)?;
            if p <= 0.0 {
                return Err(invalid(at, text, "a percentage above 0, e.g. '50%'"));
            }
            job.cache.dirty_max_pct = Some(p);
            Ok(())
        }),
        count: Count::One,
        good: &["50%", "10"],
        bad: &["0%", "101%"],
    },
    Key {
        name: "throttle",
        doc: "Throttle block-device targets with the kernel's cgroup I/O limits (root): \
              rbps=100M,wbps=..,riops=..,wiops=..",
        flag: Some(Flag::value("throttle", "LIMITS")),
        sets: Sets::Run(|job, text, at| {
            job.throttle = Some(quoted(ThrottleSpec::parse(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["rbps=100M", "riops=2k,wiops=1k"],
        bad: &["fast"],
    },
    Key {
        name: "verify",
        doc: "Stamp a header (offset, generation, checksum) into every written block, check every block \
              read, and read back what was written after the run; mismatches are reported with their class \
              (docs/VERIFY.md).",
        flag: Some(Flag::switch("verify", "true").heading("Integrity")),
        sets: Sets::Run(|job, text, at| {
            job.integrity.verify = Some(parse_bool(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["true"],
        bad: &["maybe"],
    },
    Key {
        name: "verify_fail",
        doc: "At a mismatch: stop (default) or continue.",
        flag: Some(Flag::value("verify-fail", "stop|continue").heading("Integrity")),
        sets: Sets::Run(|job, text, at| {
            job.integrity.verify_fail = Some(match text.trim() {
                "stop" => VerifyFail::Stop,
                "continue" => VerifyFail::Continue,
                _ => return Err(invalid(at, text, "'stop' or 'continue'")),
            });
            Ok(())
        }),
        count: Count::One,
        good: &["continue"],
        bad: &["retry"],
    },
    Key {
        name: "journal",
        doc: "Keep acknowledged write generations in FILE, so `iolab verify TARGET --journal FILE` can check \
              the target after a crash or reboot. Implies --verify.",
        flag: Some(Flag::value("journal", "FILE").heading("Integrity")),
        sets: Sets::Run(|job, text, at| {
            if text.trim().is_empty() {
                return Err(invalid(at, text, "a file path for the journal"));
            }
            job.integrity.journal = Some(text.to_string());
            Ok(())
        }),
        count: Count::One,
        good: &["run.journal"],
        bad: &[" "],
    },
    Key {
        name: "inject",
        doc: "Inject a fault: KIND[:PROBABILITY|@N], repeatable. KIND alone hits each eligible I/O with \
              probability 0.001; KIND:P with probability P (0.001 or 0.1%); KIND@N every N-th eligible I/O \
              (eio@1000 fails every 1000th). Kinds: bit-flip-read, bit-flip-write, lost-write, \
              misdirected-write, torn-write, eio, latency-spike:DURATION, early-flush-ack (a write-back \
              cache's flushes; docs/FAULTS.md).",
        flag: Some(Flag::value("inject", "KIND[:P|@N]").heading("Integrity")),
        sets: Sets::Run(|job, text, at| {
            job.integrity.inject.push(quoted(InjectSpec::parse(text), text, at)?);
            Ok(())
        }),
        count: Count::Many,
        good: &["eio@1000", "bit-flip-read:0.1%"],
        bad: &["gremlins"],
    },
    Key {
        name: "stop_on_error",
        doc: "End the run at the first I/O error (by default errors are counted and the run goes on).",
        flag: Some(Flag::switch("stop-on-error", "true").heading("Integrity")),
        sets: Sets::Run(|job, text, at| {
            job.integrity.stop_on_error = Some(parse_bool(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["true"],
        bad: &["maybe"],
    },
    Key {
        name: "trace",
        doc: "Record every I/O of the run, the ramp's too (intended start, submit and completion times, op, \
              target, offset, length, result), into FILE in iolab's binary trace format; `iolab trace show \
              FILE` reads it and `iolab replay FILE` issues it again.",
        flag: Some(Flag::value("trace", "FILE")),
        sets: Sets::Run(|job, text, at| {
            if text.trim().is_empty() {
                return Err(invalid(at, text, "a file path for the trace"));
            }
            job.trace = Some(text.to_string());
            Ok(())
        }),
        count: Count::One,
        good: &["run.iolabtrace"],
        bad: &[""],
    },
    // ------------------------------------------------------------------------------------------------------
    // Worker keys: the top of a job file (every worker's default), [worker.NAME] tables.
    Key {
        name: "target",
        doc: "Target: a file path, a block device, mem:SIZE (in-process RAM disk), null:SIZE (no I/O: iolab's \
              own overhead) or sim:fixed,latency=DUR,servers=N,size=SIZE (emulated device). Repeatable. \
              Default: a 1 GiB scratch file in the current directory (or $IOLAB_SCRATCH_DIR), removed \
              afterwards. NAME=TARGET sets a target the job or profile declares in [targets] (e.g. --target \
              db=/data/db.edb --target log=/logs/l); a plain TARGET replaces every worker's targets.",
        flag: Some(Flag::value("target", "TARGET").short('t').aliases(&["filename"]).on_command_line(
            |job, text, at| match text.split_once('=') {
                // `--target db=/data/db.edb` names a target of the job's [targets]; `sim:fixed,latency=..`
                // and paths with '=' after a '/' or ':' are whole targets.
                Some((name, spec)) if is_target_name(name) => job.set_named_target(name, spec, at),
                _ => add_target(&mut job.forced, text, at),
            },
        )),
        sets: Sets::Worker(add_target),
        count: Count::AtLeastOne,
        good: &["mem:1G", "/data/f"],
        bad: &["", "mem:"],
    },
    Key {
        name: "size",
        doc: "Size of a file to create if missing (filled with data before any read). A read-only run never \
              creates a file without it.",
        flag: Some(Flag::value("size", "SIZE").hyphens()),
        sets: Sets::Worker(|l, text, at| {
            l.size = Some(positive_size(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["1G"],
        bad: &["0", "-1G"],
    },
    Key {
        name: "offset",
        doc: "Start of each worker's region in its targets. Default 0.",
        flag: Some(Flag::value("offset", "SIZE").hyphens()),
        sets: Sets::Worker(|l, text, at| {
            l.offset = Some(quoted(parse_size(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["0", "1M"],
        bad: &["-1M"],
    },
    Key {
        name: "length",
        doc: "Length of each worker's region. Default: to the end of the target.",
        flag: Some(Flag::value("length", "SIZE").hyphens()),
        sets: Sets::Worker(|l, text, at| {
            l.length = Some(positive_size(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["1G"],
        bad: &["0"],
    },
    Key {
        name: "band",
        doc: "A walk over bands of the region, as fio's zonemode=strided: 'SIZE:SKIP[:BYTES]'. The worker's I/O \
              stays in the band of SIZE bytes at the region's start (sequential I/O from its start, random I/O \
              within it) until it has moved BYTES bytes there (default SIZE; above SIZE the band is gone over \
              again), then moves to the band SIZE+SKIP further on; a band starting at or past the region's end \
              starts the walk over at the first, and so does an I/O that would run past the region's end \
              (where fio ends the job). '256M:2G' reads 256M, skips 2G, reads 256M, ... Default none.",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            l.band = Some(quoted(crate::units::Band::parse(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["256M:2G", "64k:0:128k"],
        bad: &["0:1G", "1G"],
    },
    Key {
        name: "qd",
        doc: "Outstanding I/Os per worker, 1-4096. Default 32. Check \"achieved depth\" in the result: a depth \
              the target never reaches is not a depth you tested.",
        flag: Some(
            Flag::value("qd", "N").visible_aliases(&["io-depth"]).aliases(&["iodepth"]).hyphens(),
        ),
        sets: Sets::Worker(|l, text, at| {
            l.qd = Some(range_u32(at, text, 1, MAX_QD, "a whole number")?);
            Ok(())
        }),
        count: Count::One,
        good: &["1", "4096"],
        bad: &["0", "4097", "-3"],
    },
    Key {
        name: "rate",
        doc: "Open loop: total I/O rate in IOPS (e.g. 5000, 10k) or as a bandwidth (e.g. 100MB/s, 10^6 bytes; \
              100MiB/s, 2^20), split over the workers; a bandwidth becomes IOPS at each worker's mean I/O \
              size. Latency is then measured from each I/O's scheduled start. Default: closed loop (as fast \
              as the queue depth allows).",
        flag: Some(Flag::value("rate", "RATE").hyphens().aliases(&["rate_iops", "rate-iops"])),
        sets: Sets::Worker(|l, text, at| {
            if let Some(bytes) = parse_bandwidth(text) {
                let bytes = quoted(bytes, text, at)?;
                if bytes > 1e12 {
                    return Err(invalid(at, text, "a bandwidth of at most 1TB/s"));
                }
                (l.rate, l.rate_bytes) = (None, Some(bytes));
                return Ok(());
            }
            let v = quoted(parse_count(text), text, at)?;
            if v <= 0.0 || v > 1e9 {
                return Err(invalid(
                    at,
                    text,
                    "an I/O rate above 0 and at most 1G IOPS, e.g. '5000' or '10k'",
                ));
            }
            (l.rate, l.rate_bytes) = (Some(v), None);
            Ok(())
        }),
        count: Count::One,
        good: &["5000", "10k", "100MB/s"],
        bad: &["0", "2G", "2TB/s"],
    },
    Key {
        name: "arrival",
        doc: "Open-loop inter-arrival times: fixed or poisson. Default fixed.",
        flag: Some(Flag::value("arrival", "LAW")),
        sets: Sets::Worker(|l, text, at| {
            l.arrival = Some(match text.trim() {
                "fixed" | "uniform" => Arrival::Fixed,
                "poisson" | "exponential" => Arrival::Poisson,
                _ => return Err(invalid(at, text, "'fixed' or 'poisson'")),
            });
            Ok(())
        }),
        count: Count::One,
        good: &["poisson", "fixed"],
        bad: &["bursty"],
    },
    Key {
        name: "think",
        doc: "Think time (closed loop): after each burst of --burst I/Os, wait for them to complete, then idle \
              this long before the next (fio's thinktime, Iometer's transfer delay), e.g. '10ms'.",
        flag: Some(Flag::value("think", "DURATION")),
        sets: Sets::Worker(|l, text, at| {
            let ns = quoted(parse_duration_ns(text), text, at)?;
            if ns == 0 || ns > 3_600_000_000_000 {
                return Err(invalid(at, text, "a think time above 0 and at most 1h, e.g. '10ms'"));
            }
            l.think = Some(ns);
            Ok(())
        }),
        count: Count::One,
        good: &["10ms"],
        bad: &["0", "2h"],
    },
    Key {
        name: "burst",
        doc: "I/Os per burst: between think times (fio's thinktime_blocks, Iometer's burst length), or with \
              'rate', arriving at one instant (the instants at rate/N, Poisson or fixed by 'arrival'). Default 1.",
        flag: Some(Flag::value("burst", "N")),
        sets: Sets::Worker(|l, text, at| {
            l.burst = Some(range_u32(at, text, 1, 1 << 20, "a whole number of I/Os")?);
            Ok(())
        }),
        count: Count::One,
        good: &["8"],
        bad: &["0"],
    },
    Key {
        name: "data",
        doc: "Written data: random (incompressible, default), zero, or compress:PCT.",
        flag: Some(Flag::value("data", "DATA")),
        sets: Sets::Worker(|l, text, at| {
            let t = text.trim();
            l.data = Some(match t {
                "random" => DataPattern::Random,
                "zero" | "zeros" => DataPattern::Zero,
                _ => match t.strip_prefix("compress:").map(parse_percent) {
                    Some(Ok(p)) => DataPattern::Compressible { pct: p.round() as u8 },
                    _ => {
                        return Err(invalid(at, text, "'random', 'zero' or 'compress:PCT' (e.g. compress:50)"))
                    }
                },
            });
            Ok(())
        }),
        count: Count::One,
        good: &["zero", "compress:50", "random"],
        bad: &["compress:x", "ones"],
    },
    Key {
        name: "dedupe",
        doc: "A share of writes whose data is a copy of an earlier write's, as fio's dedupe_percentage: 'PCT' \
              repeats the worker's last unique write (fio's dedupe_mode=repeat); 'PCT:set=SET' copies one of \
              its first unique writes, drawn uniformly, as many as SET percent of its region in blocks of its \
              smallest write size (dedupe_mode=working_set, dedupe_working_set_percentage); ':global' shares \
              that set among every worker that says so (dedupe_global). The rest of the writes are unique. \
              Not with --verify (each verified block carries its own header). Default none.",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            l.dedupe = Some(Dedupe::parse(text).map_err(|e| invalid(at, text, &e))?);
            Ok(())
        }),
        count: Count::One,
        good: &["50", "50:set=50", "34:set=50:global"],
        bad: &["0", "60:set=50", "50:global", "half"],
    },
    Key {
        name: "verify_backlog",
        doc: "With --verify, read back what was written as the run goes, as fio's verify_backlog: 'N' after \
              every N writes lets the worker's I/Os in flight complete, then reads those N blocks back (each \
              checked), then goes on; 'N:M' reads M of them (fio's verify_backlog_batch; more than N reads some \
              twice). The reads count as reads, not against ios or bytes. Default none (only the read-back at \
              the end).",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            let expected = "'N' or 'N:M' (e.g. '1024', '16:8'), each from 1 to 65536";
            let n = |t: &str| t.trim().parse::<u32>().ok().filter(|n| (1..=65536).contains(n));
            let (every, batch) = match text.split_once(':') {
                Some((a, b)) => (n(a), n(b)),
                None => (n(text), n(text)),
            };
            match (every, batch) {
                (Some(e), Some(b)) => l.verify_backlog = Some((e, b)),
                _ => return Err(invalid(at, text, expected)),
            }
            Ok(())
        }),
        count: Count::One,
        good: &["1024", "16:8", "1"],
        bad: &["0", "16:0", "many"],
    },
    Key {
        name: "atomic",
        doc: "Every write is atomic, as fio's atomic=1: issued with RWF_ATOMIC, so all of it or none of it \
              reaches the medium. A file or device must say it can (statx STATX_WRITE_ATOMIC) for every write \
              size, checked before anything is written; needs direct = true. On mem:, null: and sim: every \
              write is atomic by construction (each is one copy, never torn). Default false.",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            l.atomic = Some(parse_bool(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["true", "false"],
        bad: &["sometimes"],
    },
    Key {
        name: "fsync",
        doc: "Flush (fsync) after every N writes: the worker lets its I/Os in flight complete, then flushes \
              each target it wrote. 0: never (default). As fio's --fsync.",
        flag: Some(Flag::value("fsync", "N").hyphens()),
        sets: Sets::Worker(|l, text, at| {
            l.fsync = Some(parse_flush_every(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["4", "0"],
        bad: &["-1"],
    },
    Key {
        name: "fdatasync",
        doc: "As --fsync, with fdatasync (the data, and only the metadata needed to read it back).",
        flag: Some(Flag::value("fdatasync", "N").hyphens()),
        sets: Sets::Worker(|l, text, at| {
            l.fdatasync = Some(parse_flush_every(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["1"],
        bad: &["x"],
    },
    Key {
        name: "sync",
        doc: "Synchronous writes: 'dsync' (each write durable when it completes, as O_DSYNC), 'sync' (as \
              O_SYNC) or 'none' (default).",
        flag: Some(Flag::value("sync", "none|dsync|sync")),
        sets: Sets::Worker(|l, text, at| {
            l.sync = Some(WriteSync::parse(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["dsync", "none"],
        bad: &["always"],
    },
    Key {
        name: "start_delay",
        doc: "How long after the run's start the worker issues its first I/O, as fio's startdelay: '4s', or a \
              range '1s-5s' from which each worker draws its own delay (seeded by the run's seed). The \
              run's duration and ramp count from the run's start, so a delayed worker issues for less of \
              them. Default 0.",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            let (lo, hi) = match text.split_once('-') {
                Some((a, b)) => (quoted(parse_duration_ns(a), text, at)?, quoted(parse_duration_ns(b), text, at)?),
                None => {
                    let ns = quoted(parse_duration_ns(text), text, at)?;
                    (ns, ns)
                }
            };
            if lo > hi {
                return Err(invalid(at, text, "a delay, or a range LOW-HIGH with LOW at most HIGH, e.g. '1s-5s'"));
            }
            l.start_delay = Some((lo, hi));
            Ok(())
        }),
        count: Count::One,
        good: &["4s", "1s-5s", "0"],
        bad: &["5s-1s", "soon"],
    },
    Key {
        name: "latency_target",
        doc: "Searches the queue depth as it runs, as fio's latency_target: the worker starts at depth 1 and, \
              after each latency_window, doubles it (or bisects towards the lowest depth that missed) while \
              latency_percentile of the I/Os completed in the window took at most this long from submission, \
              and halves towards the highest depth that met it when they did not; qd is the most it tries. \
              E.g. '500us'. Closed loop only. Default none (the depth is qd).",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            let ns = quoted(parse_duration_ns(text), text, at)?;
            if ns == 0 {
                return Err(invalid(at, text, "a latency above 0, e.g. '500us'"));
            }
            l.latency_target = Some(ns);
            Ok(())
        }),
        count: Count::One,
        good: &["500us", "10ms"],
        bad: &["0", "fast"],
    },
    Key {
        name: "latency_window",
        doc: "How long each depth runs before latency_target's search decides (fio's latency_window), e.g. '5s'. \
              Default 0: at every completion, as fio.",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            l.latency_window = Some(quoted(parse_duration_ns(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["5s", "0"],
        bad: &["-1s"],
    },
    Key {
        name: "latency_percentile",
        doc: "The share of the I/Os of a window that must meet latency_target, percent (fio's \
              latency_percentile). Default 100: one I/O over the target steps the depth down at once.",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            let p = quoted(parse_percent(text), text, at)?;
            if p <= 0.0 {
                return Err(invalid(at, text, "a percentage above 0 and at most 100, e.g. '99.9'"));
            }
            l.latency_percentile = Some(p);
            Ok(())
        }),
        count: Count::One,
        good: &["99.9", "100"],
        bad: &["0", "101"],
    },
    Key {
        name: "flow",
        doc: "The worker's weight in its flow group, as fio's flow: the workers of a group (flow_id) issue \
              I/Os in the ratio of their weights; one that is ahead of its share issues nothing until the \
              others catch up (it waits for its I/Os in flight, then flow_sleep, then looks again). 1-1000, as fio; \
              default none (not in a group).",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            l.flow = Some(range_u32(at, text, 1, 1000, "a weight")?);
            Ok(())
        }),
        count: Count::One,
        good: &["1", "8"],
        bad: &["0", "1001"],
    },
    Key {
        name: "flow_id",
        doc: "The flow group a worker with a flow weight is in, as fio's flow_id. Default 0.",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            l.flow_id = Some(range_u32(at, text, 0, u32::MAX, "a whole number")?);
            Ok(())
        }),
        count: Count::One,
        good: &["0", "7"],
        bad: &["-1"],
    },
    Key {
        name: "flow_sleep",
        doc: "How long a worker ahead of its flow share waits, once its I/Os in flight completed, before it \
              looks again, as fio's flow_sleep: '1ms'. Default 10us (fio looks again at once).",
        flag: None,
        sets: Sets::Worker(|l, text, at| {
            let ns = quoted(parse_duration_ns(text), text, at)?;
            if ns == 0 || ns > 3_600_000_000_000 {
                return Err(invalid(at, text, "a time above 0 and at most 1h, e.g. '1ms'"));
            }
            l.flow_sleep = Some(ns);
            Ok(())
        }),
        count: Count::One,
        good: &["1ms"],
        bad: &["0", "2h"],
    },
    // ------------------------------------------------------------------------------------------------------
    // Access-spec keys: where worker keys are, and [[spec]] tables.
    Key {
        name: "bs",
        doc: "Block size: '4k', or a weighted split '4k/60:8k/20:64k/20'. Default 4k; at most 64M.",
        flag: Some(Flag::value("bs", "SIZE[/W:...]").hyphens().aliases(&["blocksize"])),
        sets: Sets::Spec(|l, text, at| {
            l.bs = Some(quoted(BlockSizes::parse(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["4k", "4k/60:8k/40"],
        bad: &["4q", "128M"],
    },
    Key {
        name: "rw",
        doc: "Pattern: read, write, randread, randwrite, rw, randrw (sets read and random %; --read-pct and \
              --random-pct win). Default randread.",
        flag: Some(Flag::value("rw", "PATTERN").candidates(&[
            "read",
            "write",
            "randread",
            "randwrite",
            "rw",
            "randrw",
        ])),
        sets: Sets::Spec(|l, text, at| {
            l.rw = Some(match text.trim() {
                "read" => Rw::Read,
                "write" => Rw::Write,
                "randread" => Rw::Randread,
                "randwrite" => Rw::Randwrite,
                "rw" | "readwrite" => Rw::Rw,
                "randrw" => Rw::Randrw,
                _ => return Err(invalid(at, text, "one of read, write, randread, randwrite, rw, randrw")),
            });
            Ok(())
        }),
        count: Count::One,
        good: &["randrw", "readwrite"],
        bad: &["sideways", "randred"],
    },
    Key {
        name: "read_pct",
        doc: "Share of reads, 0-100. Default 100.",
        flag: Some(Flag::value("read-pct", "PCT").hyphens().aliases(&["rwmixread"])),
        sets: Sets::Spec(|l, text, at| {
            l.read_pct = Some(quoted(parse_percent(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["70", "0"],
        bad: &["101", "-1"],
    },
    Key {
        name: "random_pct",
        doc: "Share of random offsets (the rest sequential), 0-100. Default 100.",
        flag: Some(Flag::value("random-pct", "PCT").hyphens()),
        sets: Sets::Spec(|l, text, at| {
            l.random_pct = Some(quoted(parse_percent(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["0", "100"],
        bad: &["-1"],
    },
    Key {
        name: "trim_pct",
        doc: "Share of ops that are trims (discards of the range), 0-100; reads and writes share the rest. A \
              trim destroys data as a write does. Default 0.",
        flag: Some(Flag::value("trim-pct", "PCT").hyphens()),
        sets: Sets::Spec(|l, text, at| {
            l.trim_pct = Some(quoted(parse_percent(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["5", "100"],
        bad: &["200"],
    },
    Key {
        name: "align",
        doc: "Alignment of random offsets. Default: each I/O's own size.",
        flag: Some(Flag::value("align", "SIZE").hyphens()),
        sets: Sets::Spec(|l, text, at| {
            l.align = Some(positive_size(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["4k"],
        bad: &["0"],
    },
    Key {
        name: "seq_skip",
        doc: "Bytes the sequential cursor skips after each sequential I/O, as fio's rw=read:SIZE: '8k' leaves \
              an 8k gap after each I/O; '-8k' moves it backwards (each I/O starts 8k before the end of the one \
              before). Past the region's end it starts again at its start; backwards, past its start it \
              starts again at its end less the skip. Default 0 (contiguous).",
        flag: None,
        sets: Sets::Spec(|l, text, at| {
            let t = text.trim();
            let (sign, size) = t.strip_prefix('-').map_or((1, t), |r| (-1, r));
            let n = quoted(crate::units::parse_size(size), text, at)?;
            let n = i64::try_from(n).map_err(|_| SpecError::invalid(at, text, "a skip below 8E"))?;
            l.seq_skip = Some(sign * n);
            Ok(())
        }),
        count: Count::One,
        good: &["8k", "-8k", "0"],
        bad: &["ten"],
    },
    Key {
        name: "trim_then_write",
        doc: "Trims and writes in pairs, as fio's rw=trimwrite and randtrimwrite: each trim (at the next \
              sequential or a random offset, by random_pct) is followed by a write of the same block, so \
              every write lands on a block just discarded. Needs trim_pct = 50 and read_pct = 0. Default false.",
        flag: None,
        sets: Sets::Spec(|l, text, at| {
            l.trim_then_write = Some(parse_bool(at, text)?);
            Ok(())
        }),
        count: Count::One,
        good: &["true", "false"],
        bad: &["sometimes"],
    },
    Key {
        name: "random_run",
        doc: "I/Os per random offset, as fio's rw=randread:N: every N-th I/O draws a random offset and the \
              others follow the one before, sequentially ('8', fio's rw_sequencer=sequential) or at the \
              same offset ('8:identical', rw_sequencer=identical). The first N-1 I/Os follow the region's \
              start, as fio's do. Default 1 (every random I/O draws its own offset).",
        flag: None,
        sets: Sets::Spec(|l, text, at| {
            let t = text.trim();
            let (n, identical) = match t.split_once(':') {
                Some((n, "identical")) => (n, true),
                Some((n, "sequential")) => (n, false),
                Some(_) => return Err(invalid(at, text, "N, N:sequential or N:identical, e.g. '8'")),
                None => (t, false),
            };
            l.random_run = Some((range_u32(at, n, 1, 1 << 20, "a whole number of I/Os")?, identical));
            Ok(())
        }),
        count: Count::One,
        good: &["8", "4:identical", "1"],
        bad: &["0", "8:twice"],
    },
    Key {
        name: "dist",
        doc: "Spread of random offsets: uniform, zipf:THETA, pareto:H, zones:IO%/SPACE%:..., or \
              sequence:B,B,...[:advance] (fio's sequence distribution: the k-th random I/O of a direction goes \
              to block B[k mod n], a block being 'align' or the I/O's size; with ':advance', fio's \
              random_sequence_stride=1, each cycle goes a group of n blocks further, starting over at the \
              first group past the region's end). Default uniform.",
        flag: Some(Flag::value("dist", "DIST")),
        sets: Sets::Spec(|l, text, at| {
            l.dist = Some(quoted(Dist::parse(text), text, at)?);
            Ok(())
        }),
        count: Count::One,
        good: &["zipf:1.1", "uniform"],
        bad: &["normal"],
    },
    Key {
        name: "weight",
        doc: "Relative weight of an access spec among the worker's specs.",
        flag: None,
        sets: Sets::Spec(|l, text, at| {
            l.weight = Some(range_u32(at, text, 0, 1_000_000, "a whole number")?);
            Ok(())
        }),
        count: Count::One,
        good: &["3", "0"],
        bad: &["-1"],
    },
    // ------------------------------------------------------------------------------------------------------
    // Consent: the command line alone (crate::consent).
    Key {
        name: "allow_write_device",
        doc: "Allow writes to a block device (its data is overwritten).",
        flag: Some(Flag::switch("allow-write-device", "true")),
        sets: Sets::Consent(|c| c.allow_write_device = true),
        count: Count::One,
        good: &["true"],
        bad: &[],
    },
    Key {
        name: "destroy_data",
        doc: "Also allow writes to a device or file that carries a filesystem, volume, partition-table or \
              database signature (never to one in use: mounted, swap, held open, locked or mapped).",
        flag: Some(Flag::switch("destroy-data", "true")),
        sets: Sets::Consent(|c| c.destroy_data = true),
        count: Count::One,
        good: &["true"],
        bad: &[],
    },
    Key {
        name: "overwrite",
        doc: "Allow a write job to write an existing file that iolab did not make (its data is overwritten).",
        flag: Some(Flag::switch("overwrite", "true")),
        sets: Sets::Consent(|c| c.overwrite = true),
        count: Count::One,
        good: &["true"],
        bad: &[],
    },
];
