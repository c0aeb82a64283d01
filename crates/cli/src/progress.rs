//! Live progress on stderr: one bar per phase of a run (fill, ramp, measure) and, for sweeps and
//! `--find-max`, an overall bar above them (indicatif's `MultiProgress`).
//!
//! Bars exist only when the caller says the output is live (stderr is a terminal and not `-q`); otherwise
//! every call here is a no-op and the existing one-line notices are printed plainly. Drawing must not
//! disturb the measurement, so:
//! - only the cli thread touches bars: the collection loop of [`iolab_run::execute`] (every 100 ms and on
//!   each interval) and the fill callback, which `iolab-device` calls on the opening thread every few MiB.
//!   Workers never see a bar, and there is no ticker thread (no steady tick);
//! - the draw target redraws at most [`DRAW_HZ`] times a second, so a run with many workers (many interval
//!   messages a second) still costs a few small writes a second; the result's CPU line counts them, as it
//!   counts the whole process.
//!
//! Why some state is process-wide: `execute` is one run, and sweeps and searches call it per point with
//! options shared by other commands; the overall bar and the "until steady" note therefore live here, set
//! by the caller around the runs, instead of widening `ExecOptions`.
//!
//! Ctrl-C: when bars are live the signal handler stays silent (see [`iolab_run::execute`]) and
//! [`announce_stop`] clears every bar before printing the "stopping" message itself, so the message and
//! the partial result are never drawn over. The pure parts (messages, ETA arithmetic, phases) are tested
//! below; the terminal path is checked by the CLI test `progress` through a pseudo-terminal.

use crate::stderr::clean;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use iolab_device::FillProgress;
use iolab_report::{format_bytes, format_duration_ns, format_rate};
use iolab_run::RunShape;
use iolab_stats::{IntervalStats, TimePoint};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Most redraws per second.
pub const DRAW_HZ: u8 = 4;

/// Least time between two updates from the collection loop, which may spin faster (one message per worker
/// per interval).
const MIN_TICK: Duration = Duration::from_millis(100);

/// The message the signal handler prints when it is not silenced; [`announce_stop`] prints the same.
const STOPPING: &str = "iolab: stopping: draining in-flight I/O (press Ctrl-C again to quit at once)";

/// Width of the bars, in cells; leaves room for the numbers in 80 columns.
const BAR_WIDTH: &str = "24";

// ---------------------------------------------------------------------------------------------------------
// Pure parts: formatting, phases, ETA.

/// A duration for people: `42s`, `3m05s`, `2h07m`.
pub fn format_clock(s: f64) -> String {
    let s = if s.is_finite() { s.max(0.0).round() as u64 } else { 0 };
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// One interval's numbers, as the line under the measure bar shows them:
/// `65,003 IOPS  266.3 MB/s  mean 492 µs  p99 891 µs`.
pub fn live_stats(p: &TimePoint) -> String {
    format!(
        "{} IOPS  {:.1} MB/s  mean {}  p99 {}",
        format_rate(p.iops, 0),
        p.mb_s,
        format_duration_ns(p.lat_mean_ns),
        format_duration_ns(p.lat_p99_ns.map(|v| v as f64))
    )
}

/// The phase of a run after its targets are open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Warm-up, excluded from the result.
    Ramp,
    /// The measured window.
    Measure,
}

/// The phase `elapsed_s` after the workers started. A virtual-clock run has no ramp to watch (it passes
/// in no wall time), nor has a run with no ramp.
pub fn phase_at(shape: &RunShape, elapsed_s: f64) -> Phase {
    if !shape.virtual_time && elapsed_s < shape.ramp_s {
        Phase::Ramp
    } else {
        Phase::Measure
    }
}

/// The measure bar's position and length: milliseconds of the duration for a timed run, else ops of
/// `--ios` or bytes of `--bytes`.
pub fn measure_position(shape: &RunShape, measured_s: f64, ops: u64, bytes: u64) -> (u64, u64) {
    let ms = |s: f64| if s.is_finite() { (s.max(0.0) * 1e3) as u64 } else { 0 };
    match (shape.duration_s, shape.ios, shape.bytes) {
        (Some(d), _, _) => (ms(measured_s).min(ms(d)), ms(d)),
        (None, Some(n), _) => (ops.min(n), n),
        (None, None, Some(n)) => (bytes.min(n), n),
        (None, None, None) => (0, 0),
    }
}

/// The measure bar's text: elapsed and remaining, or done of total for count-limited runs. `note` replaces
/// the remaining time ("until steady").
pub fn measure_message(
    shape: &RunShape,
    measured_s: f64,
    ops: u64,
    bytes: u64,
    note: Option<&str>,
) -> String {
    match (shape.duration_s, shape.ios, shape.bytes) {
        (Some(limit), _, _) => match note {
            Some(note) => {
                format!("{} {note} (limit {})", format_clock(measured_s.floor()), format_clock(limit))
            }
            None => format!(
                "{}/{}, {} left",
                format_clock(measured_s.floor()),
                format_clock(limit),
                format_clock((limit - measured_s).ceil())
            ),
        },
        (None, Some(n), _) => format!(
            "{}/{} ops, {}{}",
            format_rate(ops as f64, 0),
            format_rate(n as f64, 0),
            format_clock(measured_s.floor()),
            count_eta(ops, n, measured_s)
        ),
        (None, None, Some(n)) => format!(
            "{}/{}, {}{}",
            format_bytes(bytes),
            format_bytes(n),
            format_clock(measured_s.floor()),
            count_eta(bytes, n, measured_s)
        ),
        (None, None, None) => format_clock(measured_s),
    }
}

/// `, ETA 12s` from the rate so far, or nothing before there is one.
fn count_eta(done: u64, total: u64, elapsed_s: f64) -> String {
    if done == 0 || elapsed_s <= 0.0 || done >= total {
        return String::new();
    }
    let rate = done as f64 / elapsed_s;
    format!(", ETA {}", format_clock((total - done) as f64 / rate))
}

/// The ramp bar's words: how far into the warm-up, in tenths of a second for a short ramp (a 1 s ramp read
/// "0s/1s" throughout when whole seconds were shown).
fn ramp_message(elapsed_s: f64, ramp_s: f64) -> String {
    let done = if ramp_s < 10.0 {
        format!("{:.1}s", (elapsed_s * 10.0).floor() / 10.0)
    } else {
        format_clock(elapsed_s.floor())
    };
    format!("{done}/{} warm-up, not measured", format_clock(ramp_s))
}

/// Seconds left in a sweep of `planned_s.len()` runs, in order. `planned_s[i]`: run i's planned ramp plus
/// duration (`None` when count-limited); `done`: runs finished, which took `done_elapsed_s` in all;
/// `current_s`: time into run `done`. Finished runs scale the plan (setup, fill and drain make a run longer
/// than planned; the factor is bounded to 1..10 so one slow fill cannot blow it up); a count-limited run is
/// assumed to take as long as the mean finished run. `None` when nothing is known yet.
pub fn sweep_eta_s(
    planned_s: &[Option<f64>],
    done: usize,
    done_elapsed_s: f64,
    current_s: f64,
) -> Option<f64> {
    let done = done.min(planned_s.len());
    let mean_done = (done > 0).then(|| done_elapsed_s / done as f64);
    let planned_done: Option<f64> = planned_s[..done].iter().copied().sum();
    let scale = match planned_done {
        Some(p) if done > 0 && p > 0.0 => (done_elapsed_s / p).clamp(1.0, 10.0),
        _ => 1.0,
    };
    let mut left = 0.0;
    for (i, planned) in planned_s.iter().enumerate().skip(done) {
        let estimate = match planned {
            Some(s) => s * scale,
            None => mean_done?,
        };
        left += if i == done { (estimate - current_s).max(0.0) } else { estimate };
    }
    Some(left)
}

/// The overall bar's text: the current point, then elapsed and ETA of the whole sweep.
pub fn overall_message(current: &str, elapsed_s: f64, eta_s: Option<f64>) -> String {
    let eta = eta_s.map_or_else(|| "-".to_string(), format_clock);
    format!("{current} · {} elapsed · ETA {eta}", format_clock(elapsed_s.floor()))
}

// ---------------------------------------------------------------------------------------------------------
// Process-wide state: the one MultiProgress, the overall bar, the measure note.

struct Overall {
    bar: ProgressBar,
    /// Planned seconds per run (`None` count-limited); empty for a search of unknown length.
    planned_s: Vec<Option<f64>>,
    started: Instant,
    done: usize,
    done_elapsed_s: f64,
    current: String,
    current_started: Option<Instant>,
}

impl Overall {
    fn refresh(&self) {
        let current_s = self.current_started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        let eta = if self.planned_s.is_empty() {
            None
        } else {
            sweep_eta_s(&self.planned_s, self.done, self.done_elapsed_s, current_s)
        };
        let message = overall_message(&self.current, self.started.elapsed().as_secs_f64(), eta);
        self.bar.set_message(clean(&message).into_owned());
    }
}

struct Shared {
    multi: MultiProgress,
    overall: Option<Overall>,
    measure_note: Option<String>,
}

static SHARED: Mutex<Option<Shared>> = Mutex::new(None);
static STOP_ANNOUNCED: AtomicBool = AtomicBool::new(false);

fn with_shared<R>(f: impl FnOnce(&mut Shared) -> R) -> R {
    let mut guard = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    let shared = guard.get_or_insert_with(|| Shared {
        multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(DRAW_HZ)),
        overall: None,
        measure_note: None,
    });
    f(shared)
}

fn style(template: &str) -> ProgressStyle {
    let template = template.replace("{bar}", &format!("{{bar:{BAR_WIDTH}}}"));
    ProgressStyle::with_template(&template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// Prints a one-line notice: above the bars when live (so they are not drawn over), else plainly.
pub fn notice(live: bool, line: &str) {
    if live {
        let printed = with_shared(|s| s.multi.println(clean(line)).is_ok());
        if printed {
            return;
        }
    }
    eprintln!("{line}");
}

/// Clears every bar and prints the "stopping" message, once per process. For live output only: the signal
/// handler prints the message itself otherwise.
pub fn announce_stop() {
    if STOP_ANNOUNCED.swap(true, Ordering::Relaxed) {
        return;
    }
    with_shared(|s| {
        if let Some(o) = s.overall.take() {
            o.bar.finish_and_clear();
            s.multi.remove(&o.bar);
        }
        let _ = s.multi.clear();
    });
    eprintln!("{STOPPING}");
}

/// Sets the note a measure bar shows instead of the remaining time, while it lives ("until steady").
pub struct MeasureNote(());

impl MeasureNote {
    /// Shows `note` on the measure bars of the runs started while the guard lives.
    pub fn set(note: &str) -> MeasureNote {
        with_shared(|s| s.measure_note = Some(note.to_string()));
        MeasureNote(())
    }
}

impl Drop for MeasureNote {
    fn drop(&mut self) {
        with_shared(|s| s.measure_note = None);
    }
}

/// The overall bar of a sweep or a search, above the bars of each run; cleared when dropped.
pub struct OverallBar {
    live: bool,
}

impl OverallBar {
    /// A sweep of `planned_s.len()` runs (points × trials, in order) with their planned seconds. Nothing
    /// is drawn unless `live`.
    pub fn sweep(live: bool, planned_s: Vec<Option<f64>>) -> OverallBar {
        let total = planned_s.len() as u64;
        OverallBar::start(live, "sweep", total, "{prefix:>8} [{bar}] {wide_msg}", planned_s)
    }

    /// A search of unknown length (`--find-max`): the step number and value, elapsed; no ETA.
    pub fn search(live: bool) -> OverallBar {
        OverallBar::start(live, "find-max", 0, "{prefix:>8} step {pos} {wide_msg}", Vec::new())
    }

    fn start(
        live: bool,
        prefix: &'static str,
        len: u64,
        template: &str,
        planned_s: Vec<Option<f64>>,
    ) -> OverallBar {
        if live {
            with_shared(|s| {
                let bar = s.multi.add(ProgressBar::new(len).with_style(style(template)).with_prefix(prefix));
                let o = Overall {
                    bar,
                    planned_s,
                    started: Instant::now(),
                    done: 0,
                    done_elapsed_s: 0.0,
                    current: "starting".into(),
                    current_started: None,
                };
                o.refresh();
                if let Some(old) = s.overall.replace(o) {
                    old.bar.finish_and_clear();
                    s.multi.remove(&old.bar);
                }
            });
        }
        OverallBar { live }
    }

    /// A run starts: `what` names it ("qd=8 bs=4k trial 2/3", "mailboxes 2,000", "preconditioning ...").
    /// `counted`: it is one of the planned runs (preconditioning is not), so its time counts for the ETA.
    pub fn begin(&self, what: &str, counted: bool) {
        if !self.live {
            return;
        }
        with_shared(|s| {
            if let Some(o) = s.overall.as_mut() {
                o.current = what.to_string();
                o.current_started = counted.then(Instant::now);
                if o.planned_s.is_empty() {
                    o.bar.set_position(o.done as u64 + 1);
                }
                o.refresh();
            }
        });
    }

    /// The run begun last has finished.
    pub fn end(&self) {
        if !self.live {
            return;
        }
        with_shared(|s| {
            if let Some(o) = s.overall.as_mut() {
                if let Some(t) = o.current_started.take() {
                    o.done += 1;
                    o.done_elapsed_s += t.elapsed().as_secs_f64();
                    if !o.planned_s.is_empty() {
                        o.bar.set_position(o.done as u64);
                    }
                }
                o.refresh();
            }
        });
    }

    /// Prints a line above the bars (or plainly when not live).
    pub fn println(&self, line: &str) {
        notice(self.live, line);
    }
}

impl Drop for OverallBar {
    fn drop(&mut self) {
        if !self.live {
            return;
        }
        with_shared(|s| {
            if let Some(o) = s.overall.take() {
                o.bar.finish_and_clear();
                s.multi.remove(&o.bar);
            }
        });
        if crate::signals::stop_requested() {
            announce_stop();
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// One run's bars.

/// The bars of one run (fill per created target, ramp, measure), owned by [`iolab_run::execute`]'s
/// thread. Every method is a no-op unless live; dropping clears the bars.
pub struct RunBars {
    multi: Option<MultiProgress>,
    shape: RunShape,
    note: Option<String>,
    ramp: Option<ProgressBar>,
    measure: Option<ProgressBar>,
    /// The last interval's numbers, under the measure bar.
    live: Option<ProgressBar>,
    fills: Vec<ProgressBar>,
    ops: u64,
    bytes: u64,
    /// Measured seconds according to the intervals received (virtual time's clock).
    interval_s_done: f64,
    /// Measured seconds at the last update.
    measured_s: f64,
    last_tick: Option<Instant>,
    stopped: bool,
}

impl RunBars {
    /// Bars for a run of `shape`, drawn only when `live`.
    pub fn new(live: bool, shape: RunShape) -> RunBars {
        let (multi, note) = if live {
            with_shared(|s| (Some(s.multi.clone()), s.measure_note.clone()))
        } else {
            (None, None)
        };
        RunBars::with_multi(multi, shape, note)
    }

    fn with_multi(multi: Option<MultiProgress>, shape: RunShape, note: Option<String>) -> RunBars {
        RunBars {
            multi,
            shape,
            note,
            ramp: None,
            measure: None,
            live: None,
            fills: Vec::new(),
            ops: 0,
            bytes: 0,
            interval_s_done: 0.0,
            measured_s: 0.0,
            last_tick: None,
            stopped: false,
        }
    }

    /// A fill callback for `open` (with a bar for `name`), or `None` when not live.
    pub fn fill_hook(&mut self, verb: &str, name: &str, total_bytes: u64) -> Option<FillProgress> {
        let multi = self.multi.as_ref()?;
        if self.stopped {
            return None;
        }
        let bar = multi.add(
            ProgressBar::new(total_bytes)
                .with_style(style(
                    "{prefix:>8} [{bar}] {bytes}/{total_bytes} {decimal_bytes_per_sec} ETA {eta} {wide_msg}",
                ))
                .with_prefix("fill")
                .with_message(clean(&format!("{verb} {name}")).into_owned()),
        );
        self.fills.push(bar.clone());
        let multi = multi.clone();
        Some(FillProgress(Arc::new(move |done, total| {
            if crate::signals::stop_requested() {
                announce_stop();
                return;
            }
            bar.set_length(total);
            bar.set_position(done);
            if done >= total {
                bar.finish_and_clear();
                multi.remove(&bar);
            }
        })))
    }

    /// Called by the collection loop (often): moves the ramp and measure bars to `elapsed` since the
    /// workers started, and refreshes the overall bar.
    pub fn tick(&mut self, elapsed: Duration) {
        if self.multi.is_none() || self.stopped {
            return;
        }
        let now = Instant::now();
        if self.last_tick.is_some_and(|t| now.duration_since(t) < MIN_TICK) {
            return;
        }
        self.last_tick = Some(now);
        self.update(elapsed.as_secs_f64());
        with_shared(|s| {
            if let Some(o) = &s.overall {
                o.refresh();
            }
        });
    }

    /// A finished interval of the whole run (all workers merged), `interval_s` long.
    pub fn interval(&mut self, s: &IntervalStats, interval_s: f64) {
        if self.multi.is_none() || self.stopped {
            return;
        }
        self.ops += s.read.ops + s.write.ops;
        self.bytes += s.read.bytes + s.write.bytes;
        self.interval_s_done += interval_s;
        let stats = live_stats(&TimePoint::from_interval(s, interval_s));
        if self.shape.virtual_time {
            self.update(self.shape.ramp_s + self.interval_s_done);
        }
        let Some(multi) = &self.multi else { return };
        let live = self.live.get_or_insert_with(|| {
            let bar = ProgressBar::new(0).with_style(style("{prefix:>8} {wide_msg}"));
            match &self.measure {
                Some(measure) => multi.insert_after(measure, bar),
                None => multi.add(bar),
            }
        });
        live.set_message(stats);
    }

    fn message(&self, measured_s: f64) -> String {
        measure_message(&self.shape, measured_s, self.ops, self.bytes, self.note.as_deref())
    }

    fn update(&mut self, elapsed_s: f64) {
        let Some(multi) = &self.multi else { return };
        match phase_at(&self.shape, elapsed_s) {
            Phase::Ramp => {
                let bar = self.ramp.get_or_insert_with(|| {
                    multi.add(
                        ProgressBar::new((self.shape.ramp_s * 1e3) as u64)
                            .with_style(style("{prefix:>8} [{bar}] {wide_msg}"))
                            .with_prefix("ramp"),
                    )
                });
                bar.set_position((elapsed_s * 1e3) as u64);
                bar.set_message(ramp_message(elapsed_s, self.shape.ramp_s));
            }
            Phase::Measure => {
                if let Some(ramp) = self.ramp.take() {
                    ramp.finish_and_clear();
                    multi.remove(&ramp);
                }
                let measured_s = if self.shape.virtual_time {
                    self.interval_s_done
                } else {
                    (elapsed_s - self.shape.ramp_s).max(0.0)
                };
                self.measured_s = measured_s;
                let (pos, len) = measure_position(&self.shape, measured_s, self.ops, self.bytes);
                let message = self.message(measured_s);
                let bar = self.measure.get_or_insert_with(|| {
                    let bar = ProgressBar::new(len)
                        .with_style(style("{prefix:>8} [{bar}] {wide_msg}"))
                        .with_prefix("measure");
                    match &self.live {
                        Some(live) => multi.insert_before(live, bar),
                        None => multi.add(bar),
                    }
                });
                bar.set_length(len);
                bar.set_position(pos);
                bar.set_message(clean(&message).into_owned());
            }
        }
    }

    /// The user asked to stop: clear the bars and say so, once; nothing is drawn afterwards.
    pub fn stop(&mut self) {
        if self.multi.is_none() || self.stopped {
            return;
        }
        self.clear();
        self.stopped = true;
        announce_stop();
    }

    fn clear(&mut self) {
        let Some(multi) = &self.multi else { return };
        let bars =
            self.fills.drain(..).chain(self.ramp.take()).chain(self.measure.take()).chain(self.live.take());
        for bar in bars {
            bar.finish_and_clear();
            multi.remove(&bar);
        }
    }
}

impl Drop for RunBars {
    fn drop(&mut self) {
        self.clear();
        if self.multi.is_some() && !self.stopped && crate::signals::stop_requested() {
            announce_stop();
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// A database run's bars (`iolab db`).

/// The build bar's words: rows loaded of about how many, the rate, the time left.
pub fn build_message(rows: u64, expected: u64, elapsed_s: f64) -> String {
    // The clock starts at the first chunk told, already loaded: no rate until it means something.
    let rate = if elapsed_s >= 0.25 { rows as f64 / elapsed_s } else { 0.0 };
    let eta = if rate > 0.0 && rows < expected {
        format!(", ETA {}", format_clock((expected - rows) as f64 / rate))
    } else {
        String::new()
    };
    let rate = if rate > 0.0 { format!(", {} rows/s", format_rate(rate, 0)) } else { String::new() };
    format!("{}/~{} rows{rate}{eta}", format_rate(rows as f64, 0), format_rate(expected as f64, 0))
}

/// The line under a database run's measure bar: its figures and users (`NOPM 5,606  TPM 12,845  4 users`).
pub fn db_live_stats(live: &iolab_db::Live) -> String {
    let figures: Vec<String> = live
        .figures
        .iter()
        .filter_map(|f| f.value.map(|v| format!("{} {}", f.shown, format_rate(v, 0))))
        .collect();
    if figures.is_empty() {
        return String::new();
    }
    format!("{}  {}", figures.join("  "), iolab_report::counted(live.users as u64, "user"))
}

/// The bars of a database run (`iolab db tpcc`): the build (rows loaded), then per run its ramp and measure
/// bars with NOPM and TPM under them, and for a sweep over users the overall bar above. Told from the
/// library's threads (the loaders, the driver), hence the lock; every method is a no-op unless live.
pub struct DbBars {
    multi: Option<MultiProgress>,
    state: Mutex<DbBarsState>,
}

#[derive(Default)]
struct DbBarsState {
    build: Option<ProgressBar>,
    build_started: Option<Instant>,
    loaded: u64,
    ramp: Option<ProgressBar>,
    measure: Option<ProgressBar>,
    stats: Option<ProgressBar>,
    stopped: bool,
}

impl DbBars {
    /// Bars drawn only when `live`.
    pub fn new(live: bool) -> DbBars {
        let multi = live.then(|| with_shared(|s| s.multi.clone()));
        DbBars { multi, state: Mutex::new(DbBarsState::default()) }
    }

    fn with_state(&self, f: impl FnOnce(&MultiProgress, &mut DbBarsState)) {
        let Some(multi) = &self.multi else { return };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.stopped {
            return;
        }
        if crate::signals::stop_requested() {
            state.clear(multi);
            state.stopped = true;
            announce_stop();
            return;
        }
        f(multi, &mut state);
    }

    /// The build loaded `rows` more rows of about `expected`.
    pub fn loaded(&self, rows: u64, expected: u64) {
        self.with_state(|multi, st| {
            st.loaded += rows;
            let started = *st.build_started.get_or_insert_with(Instant::now);
            let bar = st.build.get_or_insert_with(|| {
                multi.add(
                    ProgressBar::new(expected)
                        .with_style(style("{prefix:>8} [{bar}] {wide_msg}"))
                        .with_prefix("build"),
                )
            });
            bar.set_position(st.loaded.min(expected));
            bar.set_message(build_message(st.loaded, expected, started.elapsed().as_secs_f64()));
        });
    }

    /// A run starts: the build's bar and the last run's go.
    pub fn point(&self) {
        self.with_state(|multi, st| {
            st.clear(multi);
            with_shared(|s| {
                if let Some(o) = &s.overall {
                    o.refresh();
                }
            });
        });
    }

    /// Where the run is.
    pub fn running(&self, live: &iolab_db::Live) {
        self.with_state(|multi, st| {
            if live.measured_s <= 0.0 && live.elapsed_s < live.ramp_s {
                let bar = st.ramp.get_or_insert_with(|| {
                    multi.add(
                        ProgressBar::new((live.ramp_s * 1e3) as u64)
                            .with_style(style("{prefix:>8} [{bar}] {wide_msg}"))
                            .with_prefix("ramp"),
                    )
                });
                bar.set_position((live.elapsed_s * 1e3) as u64);
                bar.set_message(ramp_message(live.elapsed_s, live.ramp_s));
            } else {
                if let Some(ramp) = st.ramp.take() {
                    ramp.finish_and_clear();
                    multi.remove(&ramp);
                }
                let len = (live.duration_s * 1e3) as u64;
                let bar = st.measure.get_or_insert_with(|| {
                    multi.add(
                        ProgressBar::new(len)
                            .with_style(style("{prefix:>8} [{bar}] {wide_msg}"))
                            .with_prefix("measure"),
                    )
                });
                bar.set_position(((live.measured_s * 1e3) as u64).min(len));
                bar.set_message(format!(
                    "{}/{}, {} left",
                    format_clock(live.measured_s.floor()),
                    format_clock(live.duration_s),
                    format_clock((live.duration_s - live.measured_s).ceil())
                ));
                let stats = st.stats.get_or_insert_with(|| {
                    multi.insert_after(bar, ProgressBar::new(0).with_style(style("{prefix:>8} {wide_msg}")))
                });
                stats.set_message(db_live_stats(live));
            }
            with_shared(|s| {
                if let Some(o) = &s.overall {
                    o.refresh();
                }
            });
        });
    }

    /// Clears every bar (the run is over).
    pub fn finish(&self) {
        let Some(multi) = &self.multi else { return };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.clear(multi);
    }
}

impl DbBarsState {
    fn clear(&mut self, multi: &MultiProgress) {
        let bars = self
            .build
            .take()
            .into_iter()
            .chain(self.ramp.take())
            .chain(self.measure.take())
            .chain(self.stats.take());
        for bar in bars {
            bar.finish_and_clear();
            multi.remove(&bar);
        }
    }
}

impl Drop for DbBars {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(iops: f64, mb_s: f64, p99_ns: u64) -> TimePoint {
        TimePoint {
            t_s: 0.0,
            interval_s: 1.0,
            read_iops: iops,
            write_iops: 0.0,
            iops,
            mb_s,
            lat_mean_ns: Some(492_000.0),
            lat_p99_ns: Some(p99_ns),
            cache_hit_ratio: None,
            flush_iops: 0.0,
            trim_iops: 0.0,
        }
    }

    fn timed(ramp_s: f64, duration_s: f64) -> RunShape {
        RunShape { ramp_s, duration_s: Some(duration_s), ..RunShape::default() }
    }

    #[test]
    fn build_message_says_rows_rate_and_time_left() {
        assert_eq!(build_message(100_000, 400_000, 2.0), "100,000/~400,000 rows, 50,000 rows/s, ETA 6s");
        assert_eq!(build_message(0, 400_000, 0.0), "0/~400,000 rows");
        assert_eq!(build_message(10_000, 400_000, 0.001), "10,000/~400,000 rows", "no rate from one chunk");
        assert_eq!(build_message(410_000, 400_000, 4.1), "410,000/~400,000 rows, 100,000 rows/s");
    }

    #[test]
    fn db_live_stats_shows_the_figures_once_measuring() {
        let figure = |shown, value| iolab_db::workload::Figure { shown, metric: "", help: "", value };
        let mut live = iolab_db::Live { users: 4, ramp_s: 1.0, duration_s: 10.0, ..Default::default() };
        live.figures = vec![figure("NOPM", None), figure("TPM", None)];
        assert_eq!(db_live_stats(&live), "");
        live.figures = vec![figure("NOPM", Some(900.0)), figure("TPM", Some(2010.0))];
        assert_eq!(db_live_stats(&live), "NOPM 900  TPM 2,010  4 users");
    }

    #[test]
    fn db_bars_not_live_do_nothing() {
        let bars = DbBars::new(false);
        bars.loaded(10, 100);
        bars.point();
        bars.running(&iolab_db::Live::default());
        bars.finish();
    }

    #[test]
    fn format_clock_seconds_minutes_hours_and_nonsense() {
        assert_eq!(format_clock(0.4), "0s");
        assert_eq!(format_clock(42.0), "42s");
        assert_eq!(format_clock(185.0), "3m05s");
        assert_eq!(format_clock(7620.0), "2h07m");
        assert_eq!(format_clock(-3.0), "0s");
        assert_eq!(format_clock(f64::NAN), "0s");
        assert_eq!(format_clock(f64::INFINITY), "0s");
    }

    #[test]
    fn live_stats_shows_iops_mb_s_mean_and_p99() {
        let s = live_stats(&point(65_003.4, 266.25, 891_000));
        assert!(s.starts_with("65,003 IOPS  266.2 MB/s  mean 492"), "{s}");
        assert!(s.contains("  p99 891"), "{s}");
        assert!(s.contains("µs"), "{s}");
        assert!(!s.contains('\x1b'));
    }

    #[test]
    fn measure_message_timed_run_shows_elapsed_and_left() {
        assert_eq!(measure_message(&timed(1.0, 60.0), 12.0, 0, 0, None), "12s/1m00s, 48s left");
        assert_eq!(measure_message(&timed(1.0, 10.0), 11.0, 0, 0, None), "11s/10s, 0s left");
        // Elapsed rounds down and remaining up, so they always add up to the duration.
        assert_eq!(measure_message(&timed(1.0, 10.0), 2.6, 0, 0, None), "2s/10s, 8s left");
    }

    #[test]
    fn measure_message_steady_state_says_until_steady_with_limit() {
        let m = measure_message(&timed(1.0, 600.0), 12.0, 0, 0, Some("until steady"));
        assert_eq!(m, "12s until steady (limit 10m00s)");
    }

    #[test]
    fn measure_message_count_limited_runs_show_done_of_total_and_eta() {
        let ios = RunShape { ios: Some(1_000_000), ..RunShape::default() };
        assert_eq!(measure_message(&ios, 2.0, 250_000, 0, None), "250,000/1,000,000 ops, 2s, ETA 6s");
        assert_eq!(measure_message(&ios, 0.0, 0, 0, None), "0/1,000,000 ops, 0s");
        let bytes = RunShape { bytes: Some(4 << 30), ..RunShape::default() };
        let m = measure_message(&bytes, 1.0, 0, 1 << 30, None);
        assert_eq!(m, "1.00 GiB/4.00 GiB, 1s, ETA 3s");
    }

    #[test]
    fn measure_position_follows_time_or_count_and_never_passes_the_end() {
        assert_eq!(measure_position(&timed(1.0, 10.0), 2.5, 0, 0), (2500, 10_000));
        assert_eq!(measure_position(&timed(1.0, 10.0), 11.0, 0, 0), (10_000, 10_000));
        let ios = RunShape { ios: Some(100), bytes: Some(1 << 20), ..RunShape::default() };
        assert_eq!(measure_position(&ios, 1.0, 150, 0), (100, 100));
        let bytes = RunShape { bytes: Some(1 << 20), ..RunShape::default() };
        assert_eq!(measure_position(&bytes, 1.0, 7, 4096), (4096, 1 << 20));
        assert_eq!(measure_position(&RunShape::default(), 1.0, 7, 7), (0, 0));
    }

    /// Issue 25, item 9: a 1 s ramp's bar moves in words too, not "0s/1s" throughout.
    #[test]
    fn a_short_ramp_says_tenths_of_a_second() {
        assert!(ramp_message(0.46, 1.0).starts_with("0.4s/"), "{}", ramp_message(0.46, 1.0));
        assert!(ramp_message(0.91, 1.0).starts_with("0.9s/"));
        assert_ne!(ramp_message(0.2, 1.0), ramp_message(0.7, 1.0));
    }

    #[test]
    fn phase_ramp_then_measure_and_virtual_time_never_ramps() {
        let shape = timed(2.0, 10.0);
        assert_eq!(phase_at(&shape, 0.0), Phase::Ramp);
        assert_eq!(phase_at(&shape, 1.9), Phase::Ramp);
        assert_eq!(phase_at(&shape, 2.0), Phase::Measure);
        assert_eq!(phase_at(&timed(0.0, 10.0), 0.0), Phase::Measure);
        let virt = RunShape { virtual_time: true, ..timed(2.0, 10.0) };
        assert_eq!(phase_at(&virt, 0.0), Phase::Measure);
    }

    #[test]
    fn sweep_eta_from_plan_before_any_run_finishes() {
        let plan = vec![Some(11.0); 3];
        assert_eq!(sweep_eta_s(&plan, 0, 0.0, 0.0), Some(33.0));
        assert_eq!(sweep_eta_s(&plan, 0, 0.0, 5.0), Some(28.0));
        // Overrunning the current run's estimate never counts negative.
        assert_eq!(sweep_eta_s(&plan, 0, 0.0, 20.0), Some(22.0));
    }

    #[test]
    fn sweep_eta_scales_by_finished_runs_within_bounds() {
        let plan = vec![Some(10.0); 3];
        // The first run took 20 s for 10 planned: the rest are expected to take twice their plan.
        assert_eq!(sweep_eta_s(&plan, 1, 20.0, 0.0), Some(40.0));
        // Faster than planned is not trusted (the plan is a lower bound).
        assert_eq!(sweep_eta_s(&plan, 1, 5.0, 0.0), Some(20.0));
        // One slow fill does not blow the estimate up past 10x.
        assert_eq!(sweep_eta_s(&plan, 1, 1000.0, 0.0), Some(200.0));
        assert_eq!(sweep_eta_s(&plan, 3, 30.0, 0.0), Some(0.0));
        assert_eq!(sweep_eta_s(&plan, 7, 30.0, 0.0), Some(0.0));
        assert_eq!(sweep_eta_s(&[], 0, 0.0, 0.0), Some(0.0));
    }

    #[test]
    fn sweep_eta_count_limited_runs_use_the_mean_finished_run() {
        let plan = vec![None, None, None];
        assert_eq!(sweep_eta_s(&plan, 0, 0.0, 1.0), None);
        assert_eq!(sweep_eta_s(&plan, 1, 4.0, 1.0), Some(7.0));
    }

    #[test]
    fn overall_message_shows_point_elapsed_and_eta() {
        assert_eq!(overall_message("qd=8", 62.0, Some(190.0)), "qd=8 · 1m02s elapsed · ETA 3m10s");
        assert_eq!(overall_message("qd=8", 1.0, None), "qd=8 · 1s elapsed · ETA -");
    }

    fn hidden() -> Option<MultiProgress> {
        Some(MultiProgress::with_draw_target(ProgressDrawTarget::hidden()))
    }

    #[test]
    fn run_bars_ramp_then_measure_with_live_numbers() {
        let mut bars = RunBars::with_multi(hidden(), timed(1.0, 10.0), None);
        bars.update(0.5);
        let ramp = bars.ramp.clone().expect("a ramp bar during the ramp");
        assert_eq!((ramp.position(), ramp.length()), (500, Some(1000)));
        assert!(ramp.message().starts_with("0.5s/1s"), "{}", ramp.message());
        assert!(bars.measure.is_none());
        bars.update(3.0);
        assert!(bars.ramp.is_none() && ramp.is_finished(), "the ramp bar goes when the measurement starts");
        let measure = bars.measure.clone().expect("a measure bar");
        assert_eq!((measure.position(), measure.length()), (2000, Some(10_000)));
        assert_eq!(measure.message(), "2s/10s, 8s left");
        let mut s = IntervalStats::new(0);
        s.read.ops = 10;
        s.read.bytes = 1_000_000;
        bars.interval(&s, 1.0);
        bars.update(4.0);
        assert_eq!(measure.message(), "3s/10s, 7s left");
        let live = bars.live.clone().expect("a line with the last interval's numbers");
        assert!(live.message().starts_with("10 IOPS  1.0 MB/s  mean "), "{}", live.message());
        bars.clear();
        assert!(measure.is_finished() && live.is_finished());
    }

    #[test]
    fn run_bars_virtual_time_follows_intervals() {
        let shape = RunShape { virtual_time: true, ..timed(1.0, 10.0) };
        let mut bars = RunBars::with_multi(hidden(), shape, None);
        let mut s = IntervalStats::new(0);
        s.read.ops = 100;
        bars.interval(&s, 1.0);
        bars.interval(&s, 1.0);
        let measure = bars.measure.clone().expect("a measure bar");
        assert!(bars.ramp.is_none());
        assert_eq!(measure.position(), 2000);
        assert_eq!(measure.message(), "2s/10s, 8s left");
        let live = bars.live.clone().expect("a line with the last interval's numbers");
        assert!(live.message().starts_with("100 IOPS"), "{}", live.message());
    }

    #[test]
    fn run_bars_not_live_do_nothing() {
        let mut bars = RunBars::new(false, timed(1.0, 10.0));
        assert!(bars.fill_hook("creating", "f", 1 << 20).is_none());
        bars.tick(Duration::from_secs(5));
        bars.interval(&IntervalStats::new(0), 1.0);
        bars.stop();
        assert!(bars.ramp.is_none() && bars.measure.is_none() && bars.live.is_none() && !bars.stopped);
    }
}
