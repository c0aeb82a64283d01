//! Steady-state runs (`--steady-state METRIC:PCT`, fio's `steadystate=iops:PCT`): a job runs until its
//! intervals are steady, or until the rule's limit, whichever comes first.
//!
//! The run's measured time becomes the rule's limit (no I/O or byte count ends it); each finished interval
//! goes to a [`SteadyStateTracker`] (the rule itself, in `iolab_report::steady`), and the first steady window
//! ends the measurement, complete. `iolab run` runs a job this way, and `iolab sweep` preconditions with its
//! first point. The binary parses the flags into a [`SteadyStateRule`] and its [`Runner`] runs an
//! [`UntilSteady`] request, handing each interval to [`UntilSteady::interval`].

use crate::runner::Runner;
use iolab_report::steady::{SteadyStateResult, SteadyStateRule, SteadyStateTracker};
use iolab_report::RunResult;
use iolab_spec::JobSpec;
use iolab_stats::TimePoint;

/// A run to watch until steady: the job to run, and the tracker its intervals go to.
#[derive(Debug)]
pub struct UntilSteady<'a> {
    /// The job, bounded by the rule's limit.
    pub job: JobSpec,
    tracker: &'a mut SteadyStateTracker,
}

impl UntilSteady<'_> {
    /// One finished interval of the run (all workers merged); `true` when the window is steady and the
    /// measurement should end, complete.
    pub fn interval(&mut self, point: &TimePoint) -> bool {
        self.tracker.push(point.iops, point.lat_mean_ns)
    }
}

/// The job bounded by the rule: it lasts the rule's limit, and no I/O or byte count ends it earlier.
pub fn steady_job(mut job: JobSpec, rule: &SteadyStateRule) -> JobSpec {
    job.duration_ns = Some((rule.limit_s * 1e9) as u64);
    job.ios = None;
    job.bytes = None;
    job
}

/// Runs `job` with `runner` until steady by `rule` (or the rule's limit), over the job's intervals; returns
/// the run's result and what the rule found.
pub fn run_until_steady<R, E>(
    job: JobSpec,
    rule: &SteadyStateRule,
    runner: &mut R,
) -> Result<(RunResult, SteadyStateResult), E>
where
    R: for<'a> Runner<UntilSteady<'a>, Error = E> + ?Sized,
{
    let interval_ns = job.interval_ns.unwrap_or(iolab_plan::DEFAULT_INTERVAL_NS);
    let mut tracker = SteadyStateTracker::new(rule.clone(), interval_ns as f64 / 1e9);
    let result = runner.run(UntilSteady { job: steady_job(job, rule), tracker: &mut tracker })?;
    Ok((result, tracker.result()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::mock;

    /// Hands the run's intervals, one IOPS figure each, to the request until it says steady.
    struct Intervals {
        iops: Vec<f64>,
        fed: usize,
        job: Option<JobSpec>,
    }

    impl Runner<UntilSteady<'_>> for Intervals {
        type Error = String;
        fn run(&mut self, mut req: UntilSteady<'_>) -> Result<RunResult, String> {
            for &iops in &self.iops {
                self.fed += 1;
                let mut p = TimePoint::from_interval(&iolab_stats::IntervalStats::new(0), 1.0);
                p.iops = iops;
                if req.interval(&p) {
                    break;
                }
            }
            self.job = Some(req.job);
            let mut r = mock::result();
            r.measured_s = self.fed as f64;
            Ok(r)
        }
    }

    fn rule() -> SteadyStateRule {
        SteadyStateRule { metric: "iops".into(), max_dev_pct: 5.0, window_s: 3.0, limit_s: 60.0 }
    }

    #[test]
    fn steady_ends_when_the_window_holds() {
        let mut runner =
            Intervals { iops: vec![10.0, 50.0, 100.0, 101.0, 99.0, 100.0, 500.0], fed: 0, job: None };
        let job = JobSpec { ios: Some(5), ..JobSpec::default() };
        let (r, ss) = run_until_steady(job, &rule(), &mut runner).unwrap();
        assert_eq!(runner.fed, 5, "steady after 100, 101, 99");
        assert!(ss.reached);
        assert_eq!(ss.after_s, 5.0);
        assert_eq!(ss.window, [100.0, 101.0, 99.0]);
        assert_eq!(r.measured_s, 5.0);
        let ran = runner.job.unwrap();
        assert_eq!((ran.duration_ns, ran.ios), (Some(60_000_000_000), None), "the limit bounds the run");
    }

    #[test]
    fn steady_never_reached_runs_to_the_end() {
        let mut runner = Intervals { iops: vec![10.0, 100.0, 10.0, 100.0], fed: 0, job: None };
        let (_, ss) = run_until_steady(JobSpec::default(), &rule(), &mut runner).unwrap();
        assert_eq!(runner.fed, 4);
        assert!(!ss.reached);
    }
}
