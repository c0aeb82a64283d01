//! `iolab sweep` arguments, and the steady-state flags `iolab run` and `iolab sweep` share.

use super::RunArgs;
use clap::Args;

/// `iolab sweep` options: every `iolab run` option, where `--qd`, `--bs`, `--workers`, `--rate` and `--cache`
/// take lists.
#[derive(Args, Debug, Default)]
pub struct SweepArgs {
    /// The run options (job file, target, ...). `--qd`, `--bs`, `--workers`, `--rate` and `--cache` take
    /// lists (`--cache 0,25%,50%,100%` is the seeds' cache-size table): comma lists ('1,2,4,8') and ranges 'FROM..TO:xF' (multiply by F) or 'FROM..TO:+STEP' (add STEP), mixed
    /// freely ('1,3..9:+3'). A block-size split ('4k/60:8k/40') is one value.
    #[command(flatten)]
    pub run: RunArgs,
    /// Sweeps a replay of this trace (any format 'iolab trace show' reads; read once): every point is what
    /// 'iolab replay TRACE' with the point's values gives, a run result with its replay block. Sweep
    /// --cache, --qd, --workers, --speed and --set cache_policy=..., not the workload (the trace's).
    #[arg(long, value_name = "TRACE")]
    pub replay: Option<String>,
    /// With --replay: the speeds, a list ('1x,2x,4x,max'; see 'iolab replay --speed'). Default 1x.
    #[arg(long, value_name = "LIST")]
    pub speed: Option<String>,
    /// With --replay: maps a trace device to a target, as 'iolab replay --map' does (DISK=TARGET,
    /// repeatable).
    #[arg(long, value_name = "DISK=TARGET")]
    pub map: Vec<String>,
    /// With --replay: spreads records sharing a start time over the trace clock's tick, as 'iolab replay
    /// --spread' does.
    #[arg(long)]
    pub spread: bool,
    /// Sweep any job key by name: KEY=VALUES, with VALUES a list as for --qd (e.g. 'read_pct=0,50,100',
    /// 'rw=randread,randwrite', 'size=1g..8g:x2'). Repeatable; several swept fields give the cross product:
    /// outermost first the non-load fields (bs, then --set keys in the order given), then workers, rate and
    /// qd innermost. At most 1000 points.
    #[arg(long = "set", value_name = "KEY=VALUES")]
    pub set: Vec<String>,
    /// Runs per point, 1-100. Trial t (from 0) of every point uses seed BASE+t, BASE being --seed (or the
    /// job's seed, or a fresh one), printed. With 2 or more, each metric gets its mean, a Student-t 95 %
    /// confidence interval and its spread (min..max, coefficient of variation). Default 1.
    #[arg(long, value_name = "N", default_value = "1", allow_hyphen_values = true)]
    pub trials: String,
    /// Knee rule, IOPS side: the knee is the first point after which IOPS grows by less than this percent
    /// while p99 latency grows by more than --knee-lat-growth. Default 10.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub knee_iops_gain: Option<String>,
    /// Knee rule, latency side (see --knee-iops-gain). Default 20.
    #[arg(long, value_name = "PCT", allow_hyphen_values = true)]
    pub knee_lat_growth: Option<String>,
    /// Marks, on each line of the load axis, the highest load whose p99 latency stays at or under this
    /// duration (e.g. '2ms'); points after the first one over it do not count.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true)]
    pub max_p99: Option<String>,
}

/// Steady-state options, shared by `iolab run` and `iolab sweep` (flattened into [`RunArgs`]).
#[derive(Args, Debug, Default, Clone)]
pub struct SteadyStateFlags {
    /// Run until the workload is steady (fio's steadystate=iops:PCT): METRIC:PCT, METRIC being iops (all ops
    /// per second) or lat (mean response time), steady when every interval of the last
    /// --steady-state-window is within PCT % of the window's mean. The run then ends, complete; the
    /// --steady-state-limit replaces --duration. The result's 'steady_state' says whether it was reached,
    /// after how long, and the window's values. In a sweep this preconditions once, with the first point's
    /// job, before the first point.
    #[arg(long, value_name = "METRIC:PCT", help_heading = "Steady state")]
    pub steady_state: Option<String>,
    /// Window of --steady-state. Default 30s; at least 2 intervals.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, help_heading = "Steady state")]
    pub steady_state_window: Option<String>,
    /// Longest a --steady-state run lasts (after the ramp), steady or not. Default 10m.
    #[arg(long, value_name = "DUR", allow_hyphen_values = true, help_heading = "Steady state")]
    pub steady_state_limit: Option<String>,
}
