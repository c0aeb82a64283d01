//! The text summary of a run ([`RunResult`]), as `iolab run` prints it.

use std::fmt::Write as _;

use iolab_stats::LatSummary;

use crate::format::{format_bytes, format_count, format_duration_ns, format_rate, table};
use crate::model::{RunResult, TargetEnv};

/// Width of the label column of the key/value lines (`target  `, `workers `, `cpu     `).
const LABEL_WIDTH: usize = 8;

/// Renders the summary a storage engineer reads at a glance.
pub(crate) fn run(r: &RunResult) -> String {
    let mut out = String::new();
    header_lines(r, &mut out);
    out.push('\n');
    out.push_str(&op_table(r));
    if r.targets.len() > 1 {
        out.push('\n');
        out.push_str(&target_table(r));
    }
    if r.rate.is_some() {
        out.push('\n');
        out.push_str(&service_table(r));
    }
    if !r.hosts.is_empty() {
        out.push('\n');
        out.push_str(&host_table(r));
    }
    out.push('\n');
    tail_lines(r, &mut out);
    cache_lines(r, &mut out);
    if let Some(replay) = &r.replay {
        for (i, line) in replay.summary_lines().iter().enumerate() {
            labelled(&mut out, if i == 0 { "replay" } else { "" }, line);
        }
    }
    if let Some(ss) = &r.steady_state {
        labelled(&mut out, "steady", &super::steady_state_line(ss));
    }
    integrity_lines(r, &mut out);
    out.push_str(&super::verdict::groups_block(r));
    out.push_str(&super::loadgen::block(r));
    out.push_str(&super::verdict::verdict_block(r));
    if !r.warnings.is_empty() {
        out.push('\n');
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {}", w.message());
        if let Some(hint) = w.hint() {
            let _ = writeln!(out, "  hint: {hint}");
        }
    }
    out
}

/// The block cache, when the run had one ([`crate::cache::CacheResult::summary_lines`]).
fn cache_lines(r: &RunResult, out: &mut String) {
    let Some(c) = &r.cache else { return };
    for (i, line) in c.summary_lines().iter().enumerate() {
        labelled(out, if i == 0 { "cache" } else { "" }, line);
    }
}

/// `verify` and `inject` lines: blocks checked and failed, by class, with the first failed block; faults injected
/// and, with verification, how many of the live ones were found.
fn integrity_lines(r: &RunResult, out: &mut String) {
    if let Some(v) = &r.verify {
        let mut line = format!(
            "{} blocks of {} checked ({} in the read-back), {} failed ({} failed reads)",
            format_count(v.blocks_checked),
            format_bytes(v.block_bytes as u64),
            format_count(v.readback_blocks),
            format_count(v.mismatched_blocks),
            format_count(v.mismatches)
        );
        let c = &v.by_class;
        let classes: Vec<String> = [
            (c.corrupt_payload, "corrupt payload"),
            (c.torn_write, "torn write"),
            (c.lost_write, "lost write"),
            (c.misdirected_write, "misdirected write"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, k)| format!("{} {k}", format_count(*n)))
        .collect();
        if !classes.is_empty() {
            line.push_str(&format!(" ({})", classes.join(", ")));
        }
        if v.blocks_skipped_in_flight > 0 {
            line.push_str(&format!(
                "; {} skipped (read while being written)",
                format_count(v.blocks_skipped_in_flight)
            ));
        }
        if v.stopped {
            line.push_str("; stopped at the first mismatch");
        }
        labelled(out, "verify", &line);
        if let Some(d) = &v.durable {
            labelled(out, "durable", &durable_line(d));
        }
        if let Some(m) = v.first_mismatches.first() {
            let found = m.found.as_ref().map_or("no iolab header".to_string(), |h| {
                format!("generation {} for offset {} of target {}", h.generation, h.offset, h.target)
            });
            labelled(
                out,
                "",
                &format!(
                    "first: '{}' offset {} {}: expected generation {}, found {found}",
                    m.target,
                    m.offset,
                    m.class.as_str(),
                    m.expected.generation
                ),
            );
        }
    }
    if let Some(inj) = &r.inject {
        let parts: Vec<String> = inj
            .faults
            .iter()
            .map(|f| match (f.live, f.detected) {
                (Some(l), Some(d)) => format!("{}: {} (live {}, detected {})", f.spec, f.injected, l, d),
                _ => format!("{}: {}", f.spec, f.injected),
            })
            .collect();
        let whole_run = format!("over the whole run, ramp included; seed {}", inj.seed);
        labelled(out, "injected", &format!("{} ({whole_run})", parts.join(", ")));
    }
}

/// The durable-write log's line: the writes acknowledged durable a run logged (and any it could not), or
/// those a check read and how many blocks they required newer than the journal did.
fn durable_line(d: &iolab_doc::DurableLogResult) -> String {
    let mut line = format!("'{}': {} writes acknowledged durable", d.log, format_count(d.records));
    if d.not_logged > 0 {
        line.push_str(&format!(
            "; {} not logged (only the journal's checkpoints vouch for them)",
            format_count(d.not_logged)
        ));
    }
    if d.blocks_raised > 0 {
        line.push_str(&format!(
            "; {} blocks required newer than the journal, {} of them failed",
            format_count(d.blocks_raised),
            format_count(d.mismatched_blocks)
        ));
    }
    if d.torn_tail_bytes > 0 {
        line.push_str(&format!("; a torn last batch of {} bytes ignored", format_count(d.torn_tail_bytes)));
    }
    line
}

/// The I/Os in flight when the window closed, in the units of the tables.
pub(crate) fn in_flight_line(end: &iolab_stats::InFlightAtEnd) -> String {
    format!(
        "{} {} in flight, the last done {} after the end (longest {}); not in the figures",
        format_count(end.ops),
        if end.ops == 1 { "I/O" } else { "I/Os" },
        format_duration_ns(end.drained_ns as f64),
        format_duration_ns(end.longest_ns as f64)
    )
}

/// One `label  text` line; a label as long as the column still gets a space after it.
fn labelled(out: &mut String, label: &str, rest: &str) {
    let width = LABEL_WIDTH.max(label.chars().count() + 1);
    let _ = writeln!(out, "{label:<width$}{rest}");
}

fn header_lines(r: &RunResult, out: &mut String) {
    let run_id: String = r.run_id.chars().take(8).collect();
    let mut first = format!(
        "iolab {} · run {run_id} · seed {} · measured {:.2} s",
        r.iolab_version, r.seed, r.measured_s
    );
    if r.ramp_s > 0.0 {
        let _ = write!(first, " after {:.2} s ramp", r.ramp_s);
    }
    if r.partial {
        first.push_str(" · partial (stopped early)");
    }
    let _ = writeln!(out, "{first}");
    if let Some(m) = &r.measured_by {
        // Not iolab's measurement: say whose it is before any number, and what differs.
        labelled(out, "source", &m.line());
        for n in &m.notes {
            let _ = writeln!(out, "{:<LABEL_WIDTH$}{} note: {n}", "", m.tool);
        }
    }

    for t in &r.env.targets {
        let mut description = target_description(t, &r.env.engine);
        if let Some(cache) = sim_write_cache(&r.config, &t.name) {
            description.push_str(&format!(", {cache}"));
        }
        labelled(out, "target", &format!("{}  {description}", t.name));
    }

    let workers = &r.workers;
    let qd_text = match workers.first() {
        Some(w0) if workers.iter().all(|w| w.qd == w0.qd) => format!("{} × qd {}", workers.len(), w0.qd),
        Some(_) => {
            let qds: Vec<String> = workers.iter().map(|w| w.qd.to_string()).collect();
            format!("{} (qd {})", workers.len(), qds.join(", "))
        }
        None => "0".to_string(),
    };
    labelled(
        out,
        "workers",
        &format!("{qd_text} (requested depth {}, achieved {:.1})", r.depth.requested, r.depth.achieved),
    );
}

/// An emulated target's write cache, as the plan resolved it (`config.plan.targets[].spec`, through any
/// links): `volatile write cache 256 MiB`, `power-loss protected write cache 1.00 GiB`, `write-through`;
/// `None` for other targets (and `sim:fixed`, write-through by construction, whose spec has no cache).
fn sim_write_cache(config: &crate::config::RunConfig, name: &str) -> Option<String> {
    let plan = config.plan();
    let mut spec = &plan.targets.iter().find(|t| t.name == name)?.spec;
    while spec.get("kind").and_then(|k| k.as_str()) == Some("link") {
        spec = spec.get("target")?;
    }
    let wcache = spec.get("wcache")?;
    let size = format_bytes(wcache.get("size_bytes").and_then(|v| v.as_u64()).unwrap_or(0));
    Some(match wcache.get("kind")?.as_str()? {
        "volatile" => format!("volatile write cache {size}"),
        "power_protected" => format!("power-loss protected write cache {size}"),
        _ => "write-through".to_string(),
    })
}

fn target_description(t: &TargetEnv, engine: &str) -> String {
    let mut parts = vec![t.kind.replace('_', " "), format_bytes(t.size_bytes)];
    if let Some(fs) = &t.fs_type {
        parts.push(fs.clone());
    }
    if let Some(model) = &t.device_model {
        parts.push(model.clone());
    }
    let in_process = matches!(t.kind.as_str(), "mem" | "null" | "sim");
    if let Some(huge) = t.huge_page_bytes {
        parts.push(if huge > 0 {
            format!("{} on huge pages", format_bytes(huge))
        } else {
            "4 KiB pages".into()
        });
    }
    if in_process {
        parts.push("in-process".to_string());
    } else {
        parts.push(if t.direct { "O_DIRECT".to_string() } else { "buffered".to_string() });
        parts.push(engine.to_string());
    }
    if t.created {
        let how = match t.layout.as_ref().and_then(|l| l.prealloc.as_deref()) {
            Some("none") => "created empty (--prealloc none)",
            Some("write") => "created (--prealloc write)",
            Some("reserve") => "created reserved, unwritten (--prealloc reserve)",
            _ => "created",
        };
        match t.fill_s {
            Some(s) => parts.push(format!("{how}, filled in {s:.2} s")),
            None => parts.push(how.to_string()),
        }
    }
    if let Some(l) = &t.layout {
        parts.push(l.summary());
    }
    parts.join(", ")
}

fn lat_cell(lat: Option<&LatSummary>, pick: impl Fn(&LatSummary) -> f64) -> String {
    lat.map_or_else(|| "-".to_string(), |l| format_duration_ns(pick(l)))
}

fn op_table(r: &RunResult) -> String {
    // In open loop the latency here is response time (it includes queueing delay); say so.
    let label = if r.rate.is_some() { "response" } else { "" };
    let header = [label, "ops", "IOPS", "MB/s", "mean", "p50", "p99", "p99.9", "max"];
    let rows: Vec<Vec<String>> = crate::durability::op_rows(r)
        .into_iter()
        .map(|(label, s)| {
            let lat = s.lat_ns.as_ref();
            let mut row =
                vec![label.to_string(), format_count(s.ops), format_rate(s.iops, 1), format_rate(s.mb_s, 1)];
            row.extend(lat_cells(lat));
            row
        })
        .collect();
    table(&header, &rows)
}

/// One row per target (reads and writes together), as Iometer shows disks: printed when there are several.
fn target_table(r: &RunResult) -> String {
    let header = ["target", "ops", "IOPS", "MB/s", "mean", "p50", "p99", "p99.9", "max"];
    let rows: Vec<Vec<String>> = r
        .targets
        .iter()
        .map(|t| {
            let s = &t.all;
            let mut row =
                vec![t.name.clone(), format_count(s.ops), format_rate(s.iops, 1), format_rate(s.mb_s, 1)];
            row.extend(lat_cells(s.lat_ns.as_ref()));
            row
        })
        .collect();
    table(&header, &rows)
}

/// A run over several hosts: one row per rank (its own totals, CPU and finishing time), then the ranks'
/// start skew and first and last finishing times ([`crate::hosts`], as the HTML and Markdown reports).
fn host_table(r: &RunResult) -> String {
    let mut out = table(&crate::hosts::HOST_COLUMNS, &crate::hosts::host_rows(r));
    if let Some(k) = &r.ranks {
        let _ = writeln!(out, "ranks   {}: {}", k.size, crate::hosts::ranks_line(k));
    }
    out
}

/// The mean, p50, p99, p99.9 and max cells of a latency summary, in table order.
fn lat_cells(lat: Option<&LatSummary>) -> [String; 5] {
    [
        lat_cell(lat, |l| l.mean),
        lat_cell(lat, |l| l.p50 as f64),
        lat_cell(lat, |l| l.p99 as f64),
        lat_cell(lat, |l| l.p999 as f64),
        lat_cell(lat, |l| l.max as f64),
    ]
}

/// Open loop: response time above includes queueing delay; service time is submission ->
/// completion, i.e. what the device took.
fn service_table(r: &RunResult) -> String {
    let header = ["service", "mean", "p50", "p99", "p99.9", "max"];
    let rows: Vec<Vec<String>> = crate::durability::op_rows(r)
        .into_iter()
        .map(|(label, s)| {
            let lat = s.service_lat_ns.as_ref();
            let mut row = vec![label.to_string()];
            row.extend(lat_cells(lat));
            row
        })
        .collect();
    table(&header, &rows)
}

/// An offered rate: whole numbers without decimals.
fn offered_text(iops: f64) -> String {
    format_rate(iops, if iops.fract() == 0.0 { 0 } else { 1 })
}

/// The open-loop lines: offered and achieved over the open-loop workers, and per group when there are several
/// (closed-loop groups marked); an achieved rate above the offer is explained, not left to puzzle over.
fn rate_lines(r: &RunResult, out: &mut String) {
    let Some(rate) = &r.rate else { return };
    let who = if rate.groups.iter().any(|g| g.offered_iops.is_none()) { "open-loop workers: " } else { "" };
    let mut line = format!(
        "{who}offered {} IOPS ({}), achieved {}, backlog at end {}",
        offered_text(rate.offered_iops),
        rate.arrival,
        format_rate(rate.achieved_iops, 1),
        format_count(rate.backlog_at_end)
    );
    if rate.achieved_iops > rate.offered_iops * 1.01 {
        line.push_str(" (above the offer: arrivals queued during the ramp were served in the window)");
    }
    labelled(out, "rate", &line);
    if let Some(l) = &rate.lag_ns {
        let lag = format!(
            "p50 {} p99 {} max {} (iolab's delay in issuing each op after its arrival; in the response times)",
            format_duration_ns(l.p50 as f64),
            format_duration_ns(l.p99 as f64),
            format_duration_ns(l.max as f64)
        );
        labelled(out, "lag", &lag);
    }
    if let Some(p) = &rate.pacing {
        labelled(out, "pacing", &pacing_text(p));
    }
    for g in &rate.groups {
        let plural = if g.workers == 1 { "" } else { "s" };
        let what = match g.offered_iops {
            Some(o) => format!("offered {}, achieved {}", offered_text(o), format_rate(g.achieved_iops, 1)),
            None => format!("closed loop, {} IOPS", format_rate(g.achieved_iops, 1)),
        };
        labelled(out, "", &format!("{} ({} worker{plural}): {what}", g.group, g.workers));
    }
}

/// How the open-loop workers waited for their arrivals: the margin, its cap and the wake-ups it came from.
fn pacing_text(p: &crate::PacingResult) -> String {
    let late = p.wake_late_ns.as_ref().map_or("-".to_string(), |l| {
        format!(
            "p50 {} p99 {} max {}",
            format_duration_ns(l.p50 as f64),
            format_duration_ns(l.p99 as f64),
            format_duration_ns(l.max as f64)
        )
    });
    format!(
        "slept until margin {} before each arrival, then spun (cap {}; {}); {} wake-ups late {late}",
        format_duration_ns(p.margin_ns as f64),
        format_duration_ns(p.margin_cap_ns as f64),
        p.rule,
        format_count(p.wake_ups),
    )
}

fn tail_lines(r: &RunResult, out: &mut String) {
    rate_lines(r, out);
    let c = &r.cpu;
    let memory =
        c.peak_rss_bytes.map_or(String::new(), |b| format!(", peak memory {}", crate::format_bytes(b)));
    labelled(
        out,
        "cpu",
        &format!(
            "user {:.2} s, sys {:.2} s ({:.2} cores), {} per I/O{memory}",
            c.user_s,
            c.sys_s,
            c.cores_used,
            format_duration_ns(c.cpu_ns_per_io)
        ),
    );
    if let Some(end) = r.in_flight_at_end.filter(|e| e.ops > 0) {
        labelled(out, "at end", &in_flight_line(&end));
    }
    let e = &r.errors;
    if e.total > 0 || e.read.short > 0 || e.write.short > 0 {
        let detail = |d: &crate::model::ErrorDetail| {
            if d.by_errno.is_empty() {
                format_count(d.count)
            } else {
                let names: Vec<String> =
                    d.by_errno.iter().map(|(name, n)| format!("{name} {}", format_count(*n))).collect();
                format!("{} ({})", format_count(d.count), names.join(", "))
            }
        };
        labelled(
            out,
            "errors",
            &format!(
                "read {}, write {}; short read {}, short write {}",
                detail(&e.read),
                detail(&e.write),
                format_count(e.read.short),
                format_count(e.write.short)
            ),
        );
    }
}
