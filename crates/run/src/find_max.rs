//! The find-max search (`iolab run --find-max`) as a pure state machine: the largest mailbox count (jobs
//! with `[exchange]`) or total open-loop rate whose verdict passes, as Jetstress's "maximum users" finds it.
//!
//! From the start value the search doubles until a step fails (or halves until one passes), then bisects the
//! interval between the largest pass and the smallest fail until it is at most the resolution (a share of the
//! passing value; mailbox counts never finer than 1). Then it confirms the boundary: the last pass and the
//! first fail are run again. A value counts as passing only when every run of it passed, so a repeat that
//! disagrees moves the boundary and the bisection goes on (at most [`CONFIRM_ROUNDS`] times); the answer is
//! the largest value that passed every time, and [`SearchOutcome::confirmed`] says whether both sides of the
//! boundary held. [`FindMax::next`] says which value to run,
//! [`FindMax::record`] folds the run's verdict, [`FindMax::finish`] says what was found; [`run`] drives it
//! with a [`Runner`], which builds each step's job and judges its result. [`document`] is the search's JSON
//! document (schema `iolab.findmax/1`).

use crate::runner::{ended_early, Runner};
use iolab_report::verdict::Verdict;
use iolab_report::RunResult;
use iolab_spec::JobSpec;

/// Most steps one search runs.
pub const MAX_STEPS: usize = 60;
/// Largest mailbox count a search tries.
const MAX_MAILBOXES: f64 = 1e7;
/// Most rounds of confirmation (the last pass and the first fail run again) one search runs.
pub const CONFIRM_ROUNDS: usize = 2;

/// What the search varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variable {
    /// The `[exchange]` mailbox count (whole numbers, at least 1).
    Mailboxes,
    /// The job's total open-loop rate, IOPS.
    RateIops,
}

impl Variable {
    /// The name in the document and the table: `mailboxes` or `rate_iops`.
    pub fn name(self) -> &'static str {
        match self {
            Variable::Mailboxes => "mailboxes",
            Variable::RateIops => "rate_iops",
        }
    }

    /// The finest step: one mailbox, or a thousandth of an IOPS.
    fn min_step(self) -> f64 {
        match self {
            Variable::Mailboxes => 1.0,
            Variable::RateIops => 1e-3,
        }
    }
}

/// One step to run: step `number` (from 1) at `value` of the variable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepRequest {
    /// The step's number, from 1.
    pub number: usize,
    /// The variable's value.
    pub value: f64,
    /// The value ran before: this step confirms the boundary.
    pub repeat: bool,
}

/// What one step produced.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The variable's value.
    pub value: f64,
    /// The run's verdict.
    pub verdict: Verdict,
    /// The run's measured time, s.
    pub measured_s: f64,
    /// The step ran a value already run, to confirm the boundary.
    pub repeat: bool,
}

/// What the search records of its runs for the catalog (the search document has no run of its own): the
/// job or profile name and the target names of its first step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFacts {
    /// `config.plan.name`.
    pub profile: Option<String>,
    /// Target display names.
    pub targets: Vec<String>,
}

impl RunFacts {
    /// The facts of one run.
    pub fn of(r: &RunResult) -> RunFacts {
        RunFacts {
            profile: r.config.plan().name,
            targets: r.env.targets.iter().map(|t| t.name.clone()).collect(),
        }
    }
}

/// The search as a state machine.
#[derive(Clone, Debug)]
pub struct FindMax {
    variable: Variable,
    start: f64,
    resolution_pct: f64,
    value: f64,
    lo: Option<f64>,
    hi: Option<f64>,
    steps: Vec<Step>,
    facts: Option<RunFacts>,
    interrupted: bool,
    limited_by: Option<String>,
    ended: bool,
    /// Values to run again, to confirm the boundary (the next one first).
    repeats: Vec<f64>,
    /// Confirmation rounds begun.
    rounds: usize,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOutcome {
    /// What was searched.
    pub variable: Variable,
    /// The first value tried.
    pub start: f64,
    /// The resolution, percent of the passing value.
    pub resolution_pct: f64,
    /// Every step run, in order.
    pub steps: Vec<Step>,
    /// The largest value that passed; `None` when none did.
    pub max: Option<f64>,
    /// The smallest value that failed (in any of its runs), if any.
    pub fail_at: Option<f64>,
    /// Both sides of the boundary were run twice and held: every run at `max` passed and every run at
    /// `fail_at` failed.
    pub confirmed: bool,
    /// The value the search was at when it ended (without a pass, the smallest tried).
    pub last_value: f64,
    /// The user stopped the search (or a step ended early); `max` is the largest pass so far.
    pub interrupted: bool,
    /// Why the search stopped before it converged, when a step could not be run (no room for a larger data
    /// set, say): `max` is then a lower bound ("at least").
    pub limited_by: Option<String>,
    /// The job name and targets of the first step run.
    pub facts: Option<RunFacts>,
}

impl FindMax {
    /// A search of `variable` from `start`, bisecting down to `resolution_pct` percent of the passing value.
    pub fn new(variable: Variable, start: f64, resolution_pct: f64) -> Self {
        FindMax {
            variable,
            start,
            resolution_pct,
            value: start,
            lo: None,
            hi: None,
            steps: Vec::new(),
            facts: None,
            interrupted: false,
            limited_by: None,
            ended: false,
            repeats: Vec::new(),
            rounds: 0,
        }
    }

    /// The next step to run; `None` when the search is over (found, or [`MAX_STEPS`] run).
    pub fn next(&self) -> Option<StepRequest> {
        (!self.ended && self.steps.len() < MAX_STEPS).then(|| StepRequest {
            number: self.steps.len() + 1,
            value: self.value,
            repeat: self.steps.iter().any(|s| s.value == self.value),
        })
    }

    /// Folds the judged result of the step [`FindMax::next`] asked for (a result without a verdict fails),
    /// and chooses the next value.
    pub fn record(&mut self, result: &RunResult) {
        if self.ended {
            return;
        }
        self.facts.get_or_insert_with(|| RunFacts::of(result));
        let verdict = result.verdict.clone().unwrap_or_default();
        let repeat = self.steps.iter().any(|s| s.value == self.value);
        let step = Step { value: self.value, verdict, measured_s: result.measured_s, repeat };
        self.steps.push(step);
        (self.lo, self.hi) = boundary(&self.steps);
        if let Some(again) = self.repeats.pop() {
            self.value = again;
            return;
        }
        match self.next_value() {
            Some(next) => self.value = next,
            None => self.confirm_or_end(),
        }
    }

    /// At convergence: runs the sides of the boundary not yet run twice, or ends the search.
    fn confirm_or_end(&mut self) {
        let (Some(lo), Some(hi)) = (self.lo, self.hi) else {
            self.ended = true;
            return;
        };
        let runs = |v: f64| self.steps.iter().filter(|s| s.value == v).count();
        let mut wanted: Vec<f64> = [hi, lo].into_iter().filter(|&v| runs(v) < 2).collect();
        if wanted.is_empty() || self.rounds >= CONFIRM_ROUNDS {
            self.ended = true;
            return;
        }
        self.rounds += 1;
        self.value = wanted.pop().expect("one side wanted");
        self.repeats = wanted;
    }

    /// Doubling while every step passed, halving while every step failed, then bisection; `None` when the
    /// interval is down to the resolution (or the smallest value failed, or a mailbox count would repeat a
    /// side or pass [`MAX_MAILBOXES`]).
    fn next_value(&self) -> Option<f64> {
        let min_step = self.variable.min_step();
        let next = match (self.lo, self.hi) {
            (Some(l), None) => Some(l * 2.0),
            (None, Some(h)) => (h > min_step).then(|| (h / 2.0).max(min_step)),
            (Some(l), Some(h)) => {
                (h - l > (l * self.resolution_pct / 100.0).max(min_step)).then_some((l + h) / 2.0)
            }
            (None, None) => None,
        }?;
        if self.variable != Variable::Mailboxes {
            return Some(next);
        }
        let next = next.round().max(1.0);
        (Some(next) != self.lo && Some(next) != self.hi && next <= MAX_MAILBOXES).then_some(next)
    }

    /// Ends the search before its next step (Ctrl-C, or a step that ended early): the steps run so far stand.
    pub fn interrupt(&mut self) {
        self.interrupted = true;
        self.ended = true;
    }

    /// Ends the search because the step [`FindMax::next`] asked for could not be run (`reason`): the steps
    /// run so far stand, and what passed is a lower bound.
    pub fn limit(&mut self, reason: String) {
        self.limited_by = Some(reason);
        self.ended = true;
    }

    /// What the search found.
    pub fn finish(self) -> SearchOutcome {
        SearchOutcome {
            confirmed: confirmed(&self.steps, self.lo, self.hi),
            variable: self.variable,
            start: self.start,
            resolution_pct: self.resolution_pct,
            steps: self.steps,
            max: self.lo,
            fail_at: self.hi,
            last_value: self.value,
            interrupted: self.interrupted,
            limited_by: self.limited_by,
            facts: self.facts,
        }
    }
}

/// The boundary the steps show: the smallest value that failed in any run, and the largest value below it
/// that passed in every run.
fn boundary(steps: &[Step]) -> (Option<f64>, Option<f64>) {
    let hi = steps.iter().filter(|s| !s.verdict.pass).map(|s| s.value).reduce(f64::min);
    let held = |v: f64| steps.iter().filter(|s| s.value == v).all(|s| s.verdict.pass);
    let lo = steps
        .iter()
        .filter(|s| s.verdict.pass && hi.is_none_or(|h| s.value < h) && held(s.value))
        .map(|s| s.value)
        .reduce(f64::max);
    (lo, hi)
}

/// Both sides of the boundary ran at least twice, and every run agreed (the pass side passed, the fail side
/// failed).
fn confirmed(steps: &[Step], lo: Option<f64>, hi: Option<f64>) -> bool {
    let (Some(lo), Some(hi)) = (lo, hi) else { return false };
    let runs = |v: f64| steps.iter().filter(move |s| s.value == v);
    runs(lo).count() >= 2
        && runs(hi).count() >= 2
        && runs(lo).all(|s| s.verdict.pass)
        && runs(hi).all(|s| !s.verdict.pass)
}

/// Runs the search with `runner`, which runs and judges each step, until found, out of steps or stopped. A
/// step that cannot be run ends the search with what the earlier steps found ([`SearchOutcome::limited_by`]);
/// only when the first step fails is the search an error, since it found nothing.
pub fn run<R: Runner<StepRequest> + ?Sized>(
    mut search: FindMax,
    runner: &mut R,
) -> Result<SearchOutcome, R::Error>
where
    R::Error: std::fmt::Display,
{
    while let Some(step) = search.next() {
        let result = match runner.run(step) {
            Ok(r) => r,
            Err(e) if search.steps.is_empty() => return Err(e),
            Err(e) => {
                search.limit(e.to_string());
                break;
            }
        };
        if ended_early(runner, &result) {
            search.interrupt();
            break;
        }
        search.record(&result);
    }
    Ok(search.finish())
}

/// Scales every open-loop rate of the job by `factor` (forced, top-level and worker-table rates): the job of
/// a rate search's step.
pub fn scale_rates(job: &mut JobSpec, factor: f64) {
    let layers = [&mut job.forced, &mut job.defaults]
        .into_iter()
        .chain(job.worker_tables.iter_mut().map(|w| &mut w.layer));
    for l in layers {
        for r in [&mut l.rate, &mut l.rate_bytes].into_iter().flatten() {
            *r *= factor;
        }
    }
}

/// The job's total offered rate, IOPS, as the plan would split it; `None` in closed loop, or when a rate is a
/// bandwidth (`rate = "100MB/s"`: its IOPS depend on the plan's block sizes, and a search needs a start in IOPS).
pub fn total_rate(job: &JobSpec) -> Option<f64> {
    let layers =
        || [&job.forced, &job.defaults].into_iter().chain(job.worker_tables.iter().map(|w| &w.layer));
    if layers().any(|l| l.rate_bytes.is_some()) {
        return None;
    }
    if let Some(r) = job.forced.rate {
        return Some(r);
    }
    let own: f64 = job.worker_tables.iter().filter_map(|w| w.layer.rate.map(|r| r * w.count as f64)).sum();
    let shared = job.defaults.rate.unwrap_or(0.0);
    let total = own + shared;
    (total > 0.0).then_some(total)
}

/// The search's document (`iolab.findmax/1`, [`iolab_report::find_max::FindMaxResult`]); `started_at` is
/// when the search began (RFC 3339).
pub fn document(found: &SearchOutcome, started_at: &str) -> iolab_report::find_max::FindMaxResult {
    use iolab_report::find_max::{FindMaxResult, FindMaxStep};
    let mut doc =
        FindMaxResult::new(found.variable.name(), found.start, found.resolution_pct, started_at.into());
    doc.interrupted = found.interrupted;
    doc.limited_by = found.limited_by.clone();
    doc.max = found.max;
    doc.profile = found.facts.as_ref().and_then(|r| r.profile.clone());
    doc.targets = found.facts.as_ref().map(|r| r.targets.clone());
    doc.confirmed = found.confirmed;
    doc.steps = found
        .steps
        .iter()
        .map(|s| FindMaxStep {
            repeat: s.repeat,
            ..FindMaxStep::new(s.value, s.measured_s, s.verdict.clone())
        })
        .collect();
    doc.noise = iolab_report::find_max::FindMaxNoise::of(&doc.steps);
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::mock;

    /// A device that passes every value up to `capacity`; stops (Ctrl-C) after `stop_after` steps if given.
    struct Capacity {
        capacity: f64,
        asked: Vec<f64>,
        stop_after: Option<usize>,
        fail_run_at: Option<usize>,
    }

    impl Capacity {
        fn new(capacity: f64) -> Self {
            Capacity { capacity, asked: Vec::new(), stop_after: None, fail_run_at: None }
        }
    }

    impl Runner<StepRequest> for Capacity {
        type Error = String;
        fn run(&mut self, step: StepRequest) -> Result<RunResult, String> {
            assert_eq!(step.number, self.asked.len() + 1);
            self.asked.push(step.value);
            if self.fail_run_at == Some(step.number) {
                return Err("the device went away".into());
            }
            let mut r = mock::result();
            let pass = step.value <= self.capacity;
            r.verdict = Some(Verdict { pass, ..Verdict::default() });
            Ok(r)
        }
        fn stop_requested(&self) -> bool {
            self.stop_after.is_some_and(|n| self.asked.len() >= n)
        }
    }

    #[test]
    fn find_max_mailboxes_converges_on_capacity_within_resolution() {
        let mut dev = Capacity::new(1234.0);
        let found = run(FindMax::new(Variable::Mailboxes, 100.0, 2.0), &mut dev).unwrap();
        let max = found.max.unwrap();
        let fail = found.fail_at.unwrap();
        assert!(max <= 1234.0 && fail > 1234.0, "{max} {fail}");
        assert!(fail - max <= (max * 0.02).max(1.0), "{max} {fail}");
        assert_eq!(&dev.asked[..5], [100.0, 200.0, 400.0, 800.0, 1600.0], "doubling first");
        assert!(!found.interrupted);
        assert_eq!(found.steps.len(), dev.asked.len());
    }

    /// Issue 25, item 6: the search ended on one run each side of the boundary (16,000 at 0.58 ms, 20,000
    /// FAIL, 19,750 PASS at 1.23 ms: "19,750, resolution 2%"). It now runs the last pass and the first fail
    /// again, and says the boundary held.
    #[test]
    fn find_max_confirms_the_boundary_by_running_both_sides_again() {
        let mut dev = Capacity::new(1234.0);
        let found = run(FindMax::new(Variable::Mailboxes, 100.0, 2.0), &mut dev).unwrap();
        let (max, fail) = (found.max.unwrap(), found.fail_at.unwrap());
        let n = dev.asked.len();
        assert_eq!(&dev.asked[n - 2..], [max, fail], "the last pass, then the first fail, again");
        assert_eq!(dev.asked.iter().filter(|&&v| v == max).count(), 2);
        assert!(found.confirmed);
        assert!(found.steps[n - 2].repeat && found.steps[n - 1].repeat && !found.steps[n - 3].repeat);
        let doc = document(&found, "2025-01-01T00:00:00Z");
        assert!(doc.confirmed && doc.steps[n - 1].repeat);
    }

    /// A device whose verdict at the boundary flips from run to run: the answer is the largest value that
    /// passed every time it ran, the search goes on below a repeat that failed, and it never says confirmed.
    #[test]
    fn find_max_a_repeat_that_disagrees_moves_the_boundary_and_is_not_confirmed() {
        struct Flaky(Vec<f64>);
        impl Runner<StepRequest> for Flaky {
            type Error = String;
            fn run(&mut self, step: StepRequest) -> Result<RunResult, String> {
                let seen = self.0.iter().filter(|&&v| v == step.value).count();
                self.0.push(step.value);
                // Passes up to 1,000 the first time a value runs, only up to 900 after that.
                let pass = step.value <= if seen == 0 { 1000.0 } else { 900.0 };
                let mut r = mock::result();
                r.verdict = Some(Verdict { pass, ..Verdict::default() });
                Ok(r)
            }
        }
        let mut dev = Flaky(Vec::new());
        let found = run(FindMax::new(Variable::Mailboxes, 100.0, 2.0), &mut dev).unwrap();
        let max = found.max.unwrap();
        let runs = |v: f64| found.steps.iter().filter(move |s| s.value == v);
        assert!(runs(max).all(|s| s.verdict.pass), "{:?}", dev.0);
        assert!(max <= 1000.0 && max < found.fail_at.unwrap());
        assert!(runs(found.fail_at.unwrap()).any(|s| !s.verdict.pass));
        assert!(dev.0.len() < MAX_STEPS, "{:?}", dev.0);
        assert!(!found.confirmed || (max <= 900.0 && runs(max).count() >= 2), "{:?}", dev.0);
    }

    #[test]
    fn find_max_rate_halves_until_a_pass() {
        let mut dev = Capacity::new(300.0);
        let found = run(FindMax::new(Variable::RateIops, 1000.0, 5.0), &mut dev).unwrap();
        assert_eq!(&dev.asked[..3], [1000.0, 500.0, 250.0]);
        let (max, fail) = (found.max.unwrap(), found.fail_at.unwrap());
        assert!(max <= 300.0 && fail > 300.0 && fail - max <= max * 0.05, "{max} {fail}");
    }

    #[test]
    fn find_max_nothing_passes_ends_at_smallest_value() {
        let mut dev = Capacity::new(0.5);
        let found = run(FindMax::new(Variable::Mailboxes, 8.0, 2.0), &mut dev).unwrap();
        assert_eq!(dev.asked, [8.0, 4.0, 2.0, 1.0]);
        assert_eq!((found.max, found.last_value), (None, 1.0));
    }

    #[test]
    fn find_max_stops_on_the_step_limit() {
        let mut dev = Capacity::new(f64::INFINITY);
        let found = run(FindMax::new(Variable::RateIops, 1.0, 2.0), &mut dev).unwrap();
        assert_eq!(dev.asked.len(), MAX_STEPS);
        assert_eq!(found.max, Some(2f64.powi(MAX_STEPS as i32 - 1)));
        assert_eq!(found.fail_at, None);
    }

    #[test]
    fn find_max_mailboxes_stop_at_ten_million() {
        let mut dev = Capacity::new(f64::INFINITY);
        let found = run(FindMax::new(Variable::Mailboxes, 1.0, 2.0), &mut dev).unwrap();
        assert_eq!(found.max, Some(2f64.powi(23)));
        assert_eq!(
            dev.asked.iter().copied().reduce(f64::max),
            Some(2f64.powi(23)),
            "none over the limit runs"
        );
    }

    #[test]
    fn find_max_interrupted_keeps_the_steps_found() {
        let mut dev = Capacity { stop_after: Some(3), ..Capacity::new(1000.0) };
        let found = run(FindMax::new(Variable::Mailboxes, 100.0, 2.0), &mut dev).unwrap();
        assert!(found.interrupted);
        assert_eq!(found.steps.len(), 2, "the interrupted step is not judged");
        assert_eq!(found.max, Some(200.0));
        assert_eq!(found.last_value, 400.0);
    }

    #[test]
    fn find_max_failing_first_step_returns_the_runner_error() {
        let mut dev = Capacity { fail_run_at: Some(1), ..Capacity::new(1000.0) };
        let e = run(FindMax::new(Variable::Mailboxes, 100.0, 2.0), &mut dev).unwrap_err();
        assert_eq!(e, "the device went away");
    }

    /// Issue 14, item 11: a step that could not run (the README's Exchange search ran out of space at 64,000
    /// mailboxes) ended the search with an error, and none of the passing steps was printed or saved. The
    /// search now ends with what it found, as a lower bound, and says why.
    #[test]
    fn find_max_failing_later_step_keeps_what_was_found_as_a_lower_bound() {
        let mut dev = Capacity { fail_run_at: Some(3), ..Capacity::new(1000.0) };
        let found = run(FindMax::new(Variable::Mailboxes, 100.0, 2.0), &mut dev).unwrap();
        assert_eq!(found.steps.iter().map(|s| s.value).collect::<Vec<_>>(), [100.0, 200.0]);
        assert_eq!(found.max, Some(200.0));
        assert_eq!(found.limited_by.as_deref(), Some("the device went away"));
        assert!(!found.interrupted);
        let doc = serde_json::to_value(document(&found, "2025-01-01T00:00:00Z")).unwrap();
        assert_eq!(doc["limited_by"], "the device went away");
    }

    #[test]
    fn find_max_state_machine_keeps_steps_before_a_failed_run() {
        let mut dev = Capacity { fail_run_at: Some(3), ..Capacity::new(1000.0) };
        let mut search = FindMax::new(Variable::Mailboxes, 100.0, 2.0);
        while let Some(step) = search.next() {
            match dev.run(step) {
                Ok(r) => search.record(&r),
                Err(_) => {
                    search.interrupt();
                    break;
                }
            }
        }
        let found = search.finish();
        assert_eq!(found.steps.iter().map(|s| s.value).collect::<Vec<_>>(), [100.0, 200.0]);
        assert_eq!(found.max, Some(200.0));
    }

    #[test]
    fn document_has_schema_variable_and_steps() {
        let mut dev = Capacity::new(150.0);
        let found = run(FindMax::new(Variable::Mailboxes, 100.0, 20.0), &mut dev).unwrap();
        let doc = serde_json::to_value(document(&found, "2025-01-01T00:00:00Z")).unwrap();
        assert_eq!(doc["schema"], "iolab.findmax/1");
        assert_eq!(doc["variable"], "mailboxes");
        assert_eq!(doc["steps"].as_array().unwrap().len(), found.steps.len());
        assert_eq!(doc["steps"][0]["pass"], true);
        assert_eq!(doc["targets"][0], "sim:fixed,latency=100us,servers=4,size=64M");
    }
}
