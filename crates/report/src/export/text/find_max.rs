//! The printed find-max search, one rendering for both places it is shown (the end of `iolab run
//! --find-max` and `iolab show`): a table of its steps with the Jetstress-style latency checks, the failed
//! checks' reasons, then the result line with the failing value above the max and the resolution.

use std::fmt::Write as _;

use crate::find_max::{FindMaxResult, FindMaxStep};
use crate::format::{format_count, format_duration_ns, format_rate, table};

/// The latency checks shown per step, as (column, check name); `*` marks a per-interval maximum.
const CHECK_COLUMNS: [(&str, &str); 4] = [
    ("db read avg", "db_read_avg"),
    ("db read max*", "db_read_max"),
    ("log write avg", "log_write_avg"),
    ("log write max*", "log_write_max"),
];

/// The search as a table of its steps and its result line.
pub(crate) fn find_max(f: &FindMaxResult) -> String {
    let variable = if f.variable.is_empty() { "value" } else { f.variable.as_str() };
    let value = |x: f64| if f.by_mailboxes() { format_count(x.max(0.0) as u64) } else { format_rate(x, 1) };
    let mut out = format!("find-max search over {variable}");
    if let Some(p) = &f.profile {
        let _ = write!(out, " · {p}");
    }
    if !f.started_at.is_empty() {
        let _ = write!(out, " · started {}", f.started_at);
    }
    out.push('\n');
    let mut header = vec!["step", variable, "target IOPS", "achieved"];
    header.extend(CHECK_COLUMNS.iter().map(|(column, _)| *column));
    header.push("verdict");
    let saved = f.steps.iter().any(|s| s.run_id.is_some());
    if saved {
        header.push("run");
    }
    let rows: Vec<Vec<String>> = f
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut row = step_row(i, s, &value);
            if saved {
                row.push(s.run_id.clone().unwrap_or_else(|| "-".into()));
            }
            row
        })
        .collect();
    out.push_str(&table(&header, &rows));
    for (i, s) in f.steps.iter().enumerate().filter(|(_, s)| !s.reasons.is_empty()) {
        let _ = writeln!(out, "step {} failed: {}", i + 1, s.reasons.join("; "));
    }
    out.push_str(&result_line(f, variable, &value));
    if f.interrupted {
        out.push_str("search interrupted; the max is the largest passing value so far\n");
    }
    out
}

fn step_row(i: usize, s: &FindMaxStep, value: &dyn Fn(f64) -> String) -> Vec<String> {
    let rate = |v: Option<f64>| v.map_or("-".to_string(), |v| format_rate(v, 1));
    let number = if s.repeat { format!("{} (again)", i + 1) } else { (i + 1).to_string() };
    let mut row = vec![number, value(s.value), rate(s.target_iops), rate(s.achieved_iops)];
    for (_, name) in CHECK_COLUMNS {
        let worst =
            s.verdict.checks.iter().filter(|c| c.name == name).filter_map(|c| c.measured).reduce(f64::max);
        row.push(worst.map_or("-".to_string(), format_duration_ns));
    }
    row.push(if s.pass { "PASS" } else { "FAIL" }.to_string());
    row
}

/// How the boundary held: "passed 2 of 2 runs; FAIL at 20,000 in 2 of 2: confirmed".
fn boundary_text(f: &FindMaxResult, max: f64, fail_at: Option<f64>, value: &dyn Fn(f64) -> String) -> String {
    let runs = |v: f64| f.steps.iter().filter(move |s| s.value == v);
    let passed = runs(max).filter(|s| s.pass).count();
    let pass_side = format!("passed {passed} of {} runs", runs(max).count());
    let Some(fail) = fail_at else { return pass_side };
    let failed = runs(fail).filter(|s| !s.pass).count();
    let n = runs(fail).count();
    let held = if f.confirmed {
        "the boundary held when run again".to_string()
    } else if n >= 2 && failed < n {
        format!("{} passed {} of {n}: the limit lies within the run-to-run noise", value(fail), n - failed)
    } else {
        "not confirmed: the boundary was not run again".to_string()
    };
    format!("{pass_side}; FAIL at {} in {failed} of {n}; {held}", value(fail))
}

/// "noise: log_write_avg (log) moved 8.0% between runs of 19,750 (more than the 2% resolution: ...)".
fn noise_line(f: &FindMaxResult, value: &dyn Fn(f64) -> String) -> String {
    let Some(n) = &f.noise else { return String::new() };
    if n.spread_pct == 0.0 {
        return format!("noise: none; every check measured the same in each run of {}\n", value(n.value));
    }
    let wide = if n.spread_pct > f.resolution_pct {
        format!(
            "; that is more than the {}% resolution, so the answer is no finer than the noise: a longer \
             --find-max-duration (or --trials on a sweep) narrows it",
            f.resolution_pct
        )
    } else {
        String::new()
    };
    format!("noise: {} moved {:.1}% between runs of {}{wide}\n", n.check, n.spread_pct, value(n.value))
}

/// The mailbox size of a search over mailboxes (its steps' sizing), as the answer says it: a mailbox
/// count means nothing without it.
fn mailbox_size(f: &FindMaxResult) -> Option<String> {
    let s = f.steps.iter().find_map(|s| s.verdict.sizing.as_ref())?;
    f.by_mailboxes().then(|| crate::format::format_bytes(s.sizing.mailbox_size_bytes))
}

/// "max mailboxes that passes: 1,000 of 1.00 MiB each (FAIL at 1,100; resolution 10% or 1 mailboxes)", or
/// what was tried when nothing passed.
fn result_line(f: &FindMaxResult, variable: &str, value: &dyn Fn(f64) -> String) -> String {
    let unit = if f.by_mailboxes() { "mailboxes" } else { "IOPS" };
    let failed = f.steps.iter().filter(|s| !s.pass).map(|s| s.value);
    let first_line = |why: &str| why.lines().next().unwrap_or_default().to_string();
    match (f.max, &f.limited_by) {
        (Some(m), Some(why)) => format!(
            "max {variable} that passes: at least {} (the search stopped before it converged: {})\n",
            value(m),
            first_line(why)
        ),
        (None, Some(why)) => {
            format!("no {variable} value passed before the search stopped: {}\n", first_line(why))
        }
        (Some(m), None) => {
            let fail_at = failed.filter(|&v| v > m).reduce(f64::min);
            let mut line = format!(
                "max {variable} that passes: {}{} ({}; resolution {}% or 1 {unit})\n",
                value(m),
                mailbox_size(f).map(|s| format!(" of {s} each")).unwrap_or_default(),
                boundary_text(f, m, fail_at, value),
                f.resolution_pct
            );
            line.push_str(&noise_line(f, value));
            line
        }
        (None, None) => match f.steps.iter().map(|s| s.value).reduce(f64::min) {
            Some(smallest) => format!("no {variable} value passed (smallest tried: {})\n", value(smallest)),
            None => format!("no {variable} value passed\n"),
        },
    }
}
