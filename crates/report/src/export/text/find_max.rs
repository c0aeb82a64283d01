//! The printed find-max search (as `iolab show` prints it): a table of its steps, with the failed checks'
//! reasons, and the result line.

use std::fmt::Write as _;

use crate::find_max::FindMaxResult;
use crate::format::{format_count, format_rate};

/// The search as a table of its steps and its result line.
pub(crate) fn find_max(f: &FindMaxResult) -> String {
    let variable = if f.variable.is_empty() { "value" } else { f.variable.as_str() };
    let fmt_value = |x: f64| {
        if f.by_mailboxes() {
            format_count(x.max(0.0) as u64)
        } else {
            format_rate(x, 1)
        }
    };
    let mut out = format!("find-max search over {variable}");
    if let Some(p) = &f.profile {
        let _ = write!(out, " · {p}");
    }
    if !f.started_at.is_empty() {
        let _ = write!(out, " · started {}", f.started_at);
    }
    out.push('\n');
    let _ =
        writeln!(out, "{:>4}  {:>12}  {:>12}  {:>12}  verdict", "step", variable, "target IOPS", "achieved");
    for (i, s) in f.steps.iter().enumerate() {
        let rate = |v: Option<f64>| v.map_or("-".to_string(), |v| format_rate(v, 1));
        let verdict = if s.pass { "PASS" } else { "FAIL" };
        let why = if s.reasons.is_empty() { String::new() } else { format!(" ({})", s.reasons.join("; ")) };
        let _ = writeln!(
            out,
            "{:>4}  {:>12}  {:>12}  {:>12}  {verdict}{why}",
            i + 1,
            fmt_value(s.value),
            rate(s.target_iops),
            rate(s.achieved_iops)
        );
    }
    match f.max {
        Some(m) => {
            let _ = writeln!(out, "max {variable} that passes: {}", fmt_value(m));
        }
        None => {
            let _ = writeln!(out, "no {variable} value passed");
        }
    }
    if f.interrupted {
        out.push_str("search interrupted; the max is the largest passing value so far\n");
    }
    out
}
