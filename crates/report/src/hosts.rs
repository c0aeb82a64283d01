//! The per-host rows of a run over several hosts (MPI ranks, `hosts[]`) and the ranks' start skew and
//! finishing times (`ranks`): one model for the text summary, the HTML page and the Markdown report, so
//! the three name and fill the columns alike.

use crate::format::{format_count, format_duration_ns, format_rate};
use crate::model::{HostResult, RanksResult, RunResult};

/// The columns of the host table, in order. `mean` and `p99` are the host's response times over all its
/// ops ("-" when it has none); `cpu s` its process's user + system seconds; `done s` when its workers had
/// finished, seconds from the common start.
pub(crate) const HOST_COLUMNS: [&str; 10] =
    ["rank", "host", "ops", "IOPS", "MB/s", "mean", "p99", "cpu s", "done s", "warnings"];

/// Columns holding numbers (right-aligned): all but the host name.
pub(crate) fn numeric_column(i: usize) -> bool {
    i != 1
}

/// One row per rank, in rank order, its cells as [`HOST_COLUMNS`]; empty for a single-host run.
pub(crate) fn host_rows(r: &RunResult) -> Vec<Vec<String>> {
    r.hosts.iter().map(host_row).collect()
}

fn host_row(h: &HostResult) -> Vec<String> {
    let s = &h.total.all;
    let lat = |f: fn(&iolab_stats::LatSummary) -> f64| {
        s.lat_ns.as_ref().map_or_else(|| "-".to_string(), |l| format_duration_ns(f(l)))
    };
    vec![
        h.rank.to_string(),
        h.host.clone(),
        format_count(s.ops),
        format_rate(s.iops, 1),
        format_rate(s.mb_s, 1),
        lat(|l| l.mean),
        lat(|l| l.p99 as f64),
        format!("{:.2}", h.cpu.user_s + h.cpu.sys_s),
        format!("{:.3}", h.done_s),
        h.warnings.len().to_string(),
    ]
}

/// The ranks together, after their count: `start skew 20.0 µs, first done 10.000 s, last done 10.010 s`, and
/// ` (stonewall)` when the first rank done ended the measurement on all.
pub(crate) fn ranks_line(k: &RanksResult) -> String {
    format!(
        "start skew {}, first done {:.3} s, last done {:.3} s{}",
        format_duration_ns(k.start_skew_s * 1e9),
        k.first_done_s,
        k.last_done_s,
        if k.stonewall { " (stonewall)" } else { "" }
    )
}
