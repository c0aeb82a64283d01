//! "How many accelerators can this storage feed" (`--find-max` on an emulated device): training runs on
//! virtual time with more and more accelerators, doubling from one until AU falls under the workload's
//! minimum, then halving the gap between the last pass and the first fail; the answer and one more are run
//! again with the next seed (the confirmation, as the Exchange search confirms its boundary). The document is
//! the answer's run, with every run of the search in `find_max`.

use crate::config::LoadedWorkload;
use crate::document::{emulate, Notices};
use crate::AiError;
use iolab_report::ai::{AiFindMax, AiFleetStep, AiTrainResult};
use iolab_spec::TargetSpec;

/// Searches for the most accelerators `target` feeds at `loaded`'s minimum AU.
pub fn find_max(
    loaded: &LoadedWorkload,
    target: (&TargetSpec, &str),
    seed: u64,
    notices: &dyn Notices,
) -> Result<AiTrainResult, AiError> {
    let c = &loaded.config;
    let min_au = c.min_au.ok_or_else(|| {
        AiError::Config(
            "--find-max searches against the workload's minimum AU, and it names none: give --param metric.au=0.90"
                .into(),
        )
    })?;
    let limit = c.num_files * c.samples_per_file / (2 * c.batch_size);
    if limit == 0 {
        return Err(AiError::Config(format!(
            "--find-max: the dataset's {} samples give no accelerator two steps of reader.batch_size={} (AU needs two); give more files (--param dataset.num_files_train=N)",
            c.num_files * c.samples_per_file,
            c.batch_size
        )));
    }
    let mut s = Search { loaded, target, notices, min_au, tried: Vec::new() };
    let (mut lo, mut hi, mut best) = (0u64, None::<u64>, None::<AiTrainResult>);
    let mut n = 1;
    while hi.is_none() {
        let (passed, doc) = s.try_with(n, seed, false)?;
        if passed {
            (lo, best) = (n, Some(doc));
            if n == limit {
                break;
            }
            n = (2 * n).min(limit);
        } else {
            hi = Some(n);
            best.get_or_insert(doc);
        }
    }
    while let Some(h) = hi.filter(|&h| h - lo > 1) {
        let m = lo + (h - lo) / 2;
        let (passed, doc) = s.try_with(m, seed, false)?;
        if passed {
            (lo, best) = (m, Some(doc));
        } else {
            hi = Some(m);
        }
    }
    let again = seed.wrapping_add(1);
    let low_holds = lo == 0 || s.try_with(lo, again, true)?.0;
    let next_fails = lo == limit || !s.try_with(lo + 1, again, true)?.0;
    let mut doc = best.expect("the search ran at least once");
    let confirmed = low_holds && next_fails;
    if !confirmed {
        doc.warnings.push(format!(
            "the confirmation did not agree with the search (seed {again}: {lo} accelerators {}, {} {}): the answer is at the edge of the run-to-run noise of this workload on this device",
            if low_holds { "passed" } else { "failed" },
            lo + 1,
            if next_fails { "failed" } else { "passed" },
        ));
    }
    if lo == limit {
        doc.warnings.push(format!(
            "every run passed up to {limit} accelerators, the most this dataset allows (two steps each): the storage may feed more; give more files (--param dataset.num_files_train=N)"
        ));
    }
    doc.find_max =
        Some(AiFindMax { accelerators: lo, min_au_pct: min_au * 100.0, tried: s.tried, confirmed, limit });
    Ok(doc)
}

/// The runs of a search.
struct Search<'a> {
    loaded: &'a LoadedWorkload,
    target: (&'a TargetSpec, &'a str),
    notices: &'a dyn Notices,
    min_au: f64,
    tried: Vec<AiFleetStep>,
}

impl Search<'_> {
    /// Trains with `n` accelerators and `seed`; whether AU reached the minimum, and the document.
    fn try_with(&mut self, n: u64, seed: u64, confirmation: bool) -> Result<(bool, AiTrainResult), AiError> {
        let mut l = self.loaded.clone();
        l.config.accelerators = n;
        let doc = emulate(&l, self.target, seed)?;
        let au = doc.training.au_pct;
        let passed = au.is_some_and(|a| a >= self.min_au * 100.0);
        self.notices.notice(&format!(
            "find-max: {n} accelerator(s), seed {seed}: AU {} ({})",
            au.map_or("-".into(), |a| format!("{a:.2} %")),
            if passed { "PASS" } else { "FAIL" }
        ));
        self.tried.push(AiFleetStep { accelerators: n, seed, au_pct: au, passed, confirmation });
        Ok((passed, doc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TrainConfig;

    struct Quiet;
    impl Notices for Quiet {
        fn notice(&self, _: &str) {}
    }

    /// One server of 10 ms a read: 100 reads a second. An accelerator computes 35 ms a step on a batch of
    /// one sample: it needs 28.6 reads a second, so three are fed (85.7) and four are not: the device
    /// limits each step to 40 ms, AU 87.5 % < 90 %.
    #[test]
    fn the_most_accelerators_a_device_feeds_is_found_and_confirmed() {
        let loaded = LoadedWorkload {
            config: TrainConfig {
                num_files: 400,
                samples_per_file: 1,
                record_length: 4096,
                batch_size: 1,
                read_threads: 1,
                prefetch: 2,
                computation_s: 0.035,
                min_au: Some(0.90),
                ..TrainConfig::default()
            },
            ignored: Vec::new(),
        };
        let target = TargetSpec::parse("sim:fixed,latency=10ms,servers=1,size=1G").unwrap();
        let doc =
            find_max(&loaded, (&target, "sim:fixed,latency=10ms,servers=1,size=1G"), 5, &Quiet).unwrap();
        let f = doc.find_max.as_ref().unwrap();
        assert_eq!(f.accelerators, 3, "{:?}", f.tried);
        assert!(f.confirmed);
        let tried: Vec<(u64, bool, bool)> =
            f.tried.iter().map(|t| (t.accelerators, t.passed, t.confirmation)).collect();
        assert_eq!(
            tried,
            [
                (1, true, false),
                (2, true, false),
                (4, false, false),
                (3, true, false),
                (3, true, true),
                (4, false, true)
            ]
        );
        let four = f.tried[2].au_pct.unwrap();
        assert!((four - 87.5).abs() < 1.0, "four accelerators: AU {four}");
        assert_eq!(doc.config.accelerators, 3, "the document is the answer's run");
        assert_eq!(doc.emulated.as_deref(), Some("sim:fixed,latency=10ms,servers=1,size=1G"));
    }

    #[test]
    fn a_workload_without_a_minimum_au_cannot_be_searched() {
        let loaded = LoadedWorkload { config: TrainConfig::default(), ignored: Vec::new() };
        let target = TargetSpec::parse("sim:fixed,latency=1ms,servers=1,size=1G").unwrap();
        let e = find_max(&loaded, (&target, "x"), 1, &Quiet).err().unwrap().to_string();
        assert!(e.contains("--param metric.au=0.90"), "{e}");
    }
}
