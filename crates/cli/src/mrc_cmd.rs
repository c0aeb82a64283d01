//! `iolab mrc TRACE`: miss-ratio curves of a trace. The flags become `iolab-trace` options; the trace is read
//! once through an `MrcBuilder`; the curves become an `iolab.mrc/1` document (`iolab-report`), printed and
//! written through the write gate.

use crate::args::MrcArgs;
use crate::exit::{usage, ExitStatus};
use crate::output::{print, Outputs};
use anyhow::Result;
use iolab_cache::CachePolicy;
use iolab_device::{Access, WriteGate};
use iolab_report::mrc::{
    MrcAlignment, MrcCurve, MrcPoint, MrcRecommendation, MrcResult, MrcTrace, MRC_SCHEMA,
};
use iolab_report::{CsvExporter, JsonExporter, TextExporter};
use iolab_trace::mrc::{
    self, Alignment, CurvePoint, Method, MrcAnalysis, MrcBuilder, MrcOptions, Objects, Writes,
};

/// Distinct objects the automatic method keeps exactly before it samples (SHARDS fixed-size).
const AUTO_OBJECTS: usize = 1 << 21;
/// Records read from the trace at a time.
const BATCH: usize = 1024;
/// Records ahead of the one added whose first object is prefetched (`MrcBuilder::prefetch`).
const PREFETCH_AHEAD: usize = 8;
/// Sizes a policy is simulated at, at most, when --sizes does not say.
const SIMULATED_SIZES: usize = 16;

/// Runs `iolab mrc`.
pub fn mrc(args: &MrcArgs) -> Result<ExitStatus> {
    let options = options(args)?;
    let method = method(args)?;
    let policies = policies(&args.policy)?;
    let sizes = args.sizes.as_deref().map(|s| sizes(s, options.objects)).transpose()?;
    let mut gate = WriteGate::new();
    gate.claim("the trace", &args.trace, Access::Reads).map_err(usage)?;
    let outputs = Outputs::claim(&mut gate, args.json.as_deref(), args.csv.as_deref())?;

    let mut t = crate::trace_file::open(&args.trace)?;
    let mut builder = MrcBuilder::new(options, method, !policies.is_empty());
    let mut records = 0u64;
    let available = iolab_device::memory_headroom();
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        t.next_batch(&mut batch).map_err(usage)?;
        if batch.is_empty() {
            break;
        }
        for (i, r) in batch.iter().enumerate() {
            if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
                builder.prefetch(ahead);
            }
            records += 1;
            if !builder.has_room_for(r) {
                check_memory(&builder, r, (records, available), args)?;
                builder.try_reserve_for(r).map_err(|_| not_allocated(&builder, r, records, args))?;
            }
            builder.add(r);
        }
    }
    crate::trace_file::report_bad(&t, &args.trace);
    let (ops, installing_writes) = (builder.ops(), builder.installs());
    let alignment = alignment(builder.alignment(), options.objects);
    let built = builder.finish();
    let trace = MrcTrace {
        path: args.trace.clone(),
        format: t.format().name().to_string(),
        records,
        bad_records: t.bad.count,
        ops,
        references: built.references,
        objects: built.objects(),
        object: if matches!(options.objects, Objects::Requests) { "request" } else { "line" }.into(),
        line_bytes: match options.objects {
            Objects::Lines(b) => Some(b),
            Objects::Requests => None,
        },
        reads_only: options.writes != Writes::Count,
        writes: options.writes.name().into(),
        installing_writes,
        alignment,
    };
    let doc = document(trace, &built, &policies, sizes, options.objects);
    if !args.quiet && !outputs.on_stdout() {
        print(&TextExporter.render(&doc))?;
    }
    outputs.write(|| JsonExporter.render(&doc), || CsvExporter.render(&doc).map_err(anyhow::Error::new))?;
    Ok(ExitStatus::Ok)
}

/// Refuses record `n` when adding it may take the builder past `available` (the memory the command could
/// use as it started: MemAvailable, RLIMIT_AS or the cgroup's limit, the least), before anything is allocated
/// for it.
fn check_memory(
    b: &MrcBuilder,
    r: &iolab_trace::TraceRecord,
    (n, available): (u64, iolab_device::MemoryHeadroom),
    args: &MrcArgs,
) -> Result<()> {
    let need = b.memory_after(r);
    if available.fits(need) {
        return Ok(());
    }
    let gib = |x: u64| format!("{:.2} GiB", x as f64 / (1u64 << 30) as f64);
    let how = if args.exact { "the exact curve" } else { "the curve" };
    Err(usage(format!(
        "'{}': {how} needs up to {} of memory by record {n} ({} objects tracked, {} more references in this record of {} bytes at offset {}), \
         but only {} is available ({}); sample fewer objects (--sample 0.01, --sample-size 1M), or simulate no policy (--policy lru)",
        args.trace, gib(need), b.objects(), b.references_of(r), r.len, r.offset, gib(available.bytes), available.limit.describe()
    )))
}

/// The error for record `n`, whose memory could not be allocated although the estimate fitted.
fn not_allocated(b: &MrcBuilder, r: &iolab_trace::TraceRecord, n: u64, args: &MrcArgs) -> anyhow::Error {
    usage(format!(
        "'{}': memory for record {n} ({} references, {} objects tracked) could not be allocated; sample fewer objects (--sample 0.01, --sample-size 1M), or simulate no policy (--policy lru)",
        args.trace, b.references_of(r), b.objects()
    ))
}

fn options(args: &MrcArgs) -> Result<MrcOptions> {
    let objects = match (args.objects.as_deref(), args.line.as_deref()) {
        (Some("request"), _) => Objects::Requests,
        (Some("line"), None) | (None, None) => Objects::Lines(iolab_spec::cache::DEFAULT_CACHE_LINE),
        (Some(other), _) => {
            return Err(usage(format!("--objects '{other}': expected 'request' (or --line SIZE)")))
        }
        (_, Some(line)) => {
            let b =
                iolab_spec::units::parse_size(line).map_err(|e| usage(format!("--line '{line}': {e}")))?;
            if b == 0 {
                return Err(usage(format!("--line '{line}': a cache line of at least 1 byte, e.g. 4k")));
            }
            Objects::Lines(b)
        }
    };
    let writes = match (args.reads_only, args.writes.as_deref()) {
        (true, _) | (_, Some("ignore")) => Writes::Ignore,
        (_, None | Some("count")) => Writes::Count,
        (_, Some("install")) => Writes::Install,
        (_, Some(other)) => {
            return Err(usage(format!("--writes '{other}': expected 'count', 'install' or 'ignore'")))
        }
    };
    Ok(MrcOptions { objects, writes })
}

/// The document's account of how the counted requests sit on lines.
fn alignment(a: &Alignment, objects: Objects) -> Option<MrcAlignment> {
    let Objects::Lines(_) = objects else { return None };
    let common = a.common_start();
    Some(MrcAlignment {
        requests: a.requests(),
        partial: a.partial(),
        common_start_bytes: common.map(|(b, _)| b),
        common_start_requests: common.map_or(0, |(_, n)| n),
    })
}

fn method(args: &MrcArgs) -> Result<Method> {
    if args.exact {
        return Ok(Method::Exact);
    }
    if let Some(rate) = &args.sample {
        return match rate.trim().parse::<f64>() {
            Ok(r) if r > 0.0 && r <= 1.0 => Ok(Method::FixedRate(r)),
            _ => Err(usage(format!(
                "--sample '{rate}': expected a sampling rate above 0 and at most 1, e.g. 0.01"
            ))),
        };
    }
    if let Some(n) = &args.sample_size {
        return match iolab_spec::units::parse_count(n) {
            Ok(v) if v >= 1.0 && v.fract() == 0.0 => Ok(Method::FixedSize(v as usize)),
            _ => Err(usage(format!("--sample-size '{n}': expected a whole number of objects, e.g. 64k"))),
        };
    }
    Ok(Method::FixedSize(AUTO_OBJECTS))
}

/// The policies to simulate besides LRU (which comes from stack distances).
fn policies(list: &str) -> Result<Vec<CachePolicy>> {
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim) {
        let p = match name {
            "lru" => continue,
            "arc" => CachePolicy::Arc,
            "s3-fifo" | "s3fifo" => CachePolicy::S3Fifo,
            "s3-fifo-1bit" => CachePolicy::S3Fifo1Bit,
            _ => {
                return Err(usage(format!(
                    "--policy '{list}': '{name}' is none of lru, arc, s3-fifo, s3-fifo-1bit"
                )))
            }
        };
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// `--sizes` in objects: bytes over the line (a whole number of lines, at least one), or counts.
fn sizes(list: &str, objects: Objects) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim) {
        let n = match objects {
            Objects::Lines(line) => {
                let b = iolab_spec::units::parse_size(item)
                    .map_err(|e| usage(format!("--sizes '{list}': '{item}': {e}")))?;
                if b < line {
                    return Err(usage(format!(
                        "--sizes '{list}': '{item}' is less than one {line}-byte line"
                    )));
                }
                b / line
            }
            Objects::Requests => match iolab_spec::units::parse_count(item) {
                Ok(v) if v >= 1.0 => v as u64,
                _ => {
                    return Err(usage(format!(
                        "--sizes '{list}': '{item}': expected a count of objects, e.g. 10k"
                    )))
                }
            },
        };
        out.push(n);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn point(p: &CurvePoint, objects: Objects) -> MrcPoint {
    match objects {
        Objects::Lines(line) => {
            MrcPoint { cache_bytes: Some(p.objects * line), cache_objects: None, miss_ratio: p.miss_ratio }
        }
        Objects::Requests => {
            MrcPoint { cache_bytes: None, cache_objects: Some(p.objects), miss_ratio: p.miss_ratio }
        }
    }
}

fn curve(policy: &str, method: &str, rate: f64, points: &[CurvePoint], objects: Objects) -> MrcCurve {
    MrcCurve {
        policy: policy.into(),
        method: method.into(),
        sample_rate: rate,
        points: points.iter().map(|p| point(p, objects)).collect(),
        knee: mrc::knee(points).map(|p| point(&p, objects)),
    }
}

/// The document: LRU at every size, the policies at up to [`SIMULATED_SIZES`] of them, the recommendation.
fn document(
    trace: MrcTrace,
    built: &MrcAnalysis,
    policies: &[CachePolicy],
    sizes: Option<Vec<u64>>,
    objects: Objects,
) -> MrcResult {
    let given = sizes.is_some();
    let sizes = sizes.unwrap_or_else(|| mrc::default_sizes(built.objects()));
    let lru = built.lru_curve(&sizes);
    let mut curves = vec![curve("lru", built.method_name(), built.rate, &lru, objects)];
    let sim_sizes = if given { sizes.clone() } else { mrc::thin_sizes(&sizes, SIMULATED_SIZES) };
    let none = mrc::References::default();
    let kept = built.kept.as_ref().unwrap_or(&none);
    for &p in policies {
        let points = mrc::simulate(p, kept, built.rate, &sim_sizes);
        let method = if built.exact { "simulation" } else { "miniature-simulation" };
        curves.push(curve(p.as_str(), method, built.rate, &points, objects));
    }
    let recommendation = mrc::recommend(&lru).map(|r| MrcRecommendation {
        point: point(&r.point, objects),
        hit_ratio: 1.0 - r.point.miss_ratio,
        best_hit_ratio: r.best_hit_ratio,
        share_of_best: mrc::SHARE_OF_BEST,
    });
    MrcResult {
        schema: MRC_SCHEMA.into(),
        iolab_version: env!("CARGO_PKG_VERSION").into(),
        trace,
        curves,
        recommendation,
    }
}
