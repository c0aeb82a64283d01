//! Phases: a job whose `[[phase]]` tables run one after another, each with its own workers and its own
//! result (fio's `stonewall`, Iometer's list of access specifications run in order).
//!
//! ```toml
//! duration = "30s"            # run settings are every phase's, unless a phase sets its own
//! target = "/data/f"
//!
//! [[phase]]
//! name = "fill"
//! bytes = "8G"
//! [phase.worker.writer]
//! rw = "write"
//! bs = "1M"
//!
//! [[phase]]
//! name = "oltp"
//! [phase.worker.db]
//! count = 4
//! rw = "randrw"
//! read_pct = 70
//! ```
//!
//! Each phase becomes a complete job ([`JobSpec::phase_jobs`]): the file's run settings and defaults, the
//! phase's worker tables, and the phase's own `duration`, `ramp`, `ios` or `bytes` where it sets them. A
//! command-line value wins over both.

use crate::job::{JobSpec, PhaseSpec};

impl JobSpec {
    /// The jobs a job with phases runs, in order, each with its phase's name; a job without phases is one job
    /// named `None`. Each phase's job is the file's job with the phase's workers and run settings; its name is
    /// the job's name (or file) and the phase's (`oltp.toml [load]`).
    pub fn phase_jobs(&self) -> Vec<(Option<String>, JobSpec)> {
        if self.phases.is_empty() {
            return vec![(None, self.clone())];
        }
        let base = self.name.clone().or_else(|| self.file.clone()).unwrap_or_else(|| "job".into());
        // The job without its phases and tables (one copy), cloned once per phase: linear in the phases, never
        // a copy of every phase in each phase's job.
        let mut shell = self.clone();
        shell.phases = Vec::new();
        shell.worker_tables = Vec::new();
        self.phases.iter().map(|p| (Some(p.name.clone()), shell.phase_job(p, &base))).collect()
    }

    fn phase_job(&self, p: &PhaseSpec, base: &str) -> JobSpec {
        let mut job = self.clone();
        job.worker_tables = p.worker_tables.clone();
        if p.run.ramp_ns.is_some() {
            job.ramp_ns = p.run.ramp_ns;
        }
        if p.run.duration_ns.is_some() {
            job.duration_ns = p.run.duration_ns;
        }
        if p.run.ios.is_some() || p.run.bytes.is_some() {
            // A phase bounded by a size (a fill) ends there, not at the file's duration.
            job.ios = p.run.ios;
            job.bytes = p.run.bytes;
            if p.run.duration_ns.is_none() {
                job.duration_ns = None;
            }
        }
        job.name = Some(format!("{base} [{}]", p.name));
        job
    }
}

#[cfg(test)]
mod tests {
    use crate::job::JobSpec;

    const JOB: &str = r#"
duration = "30s"
[[phase]]
name = "fill"
bytes = "1G"
[phase.worker.w]
rw = "write"
[[phase]]
[phase.worker.r]
count = 2
rw = "randread"
"#;

    #[test]
    fn each_phase_is_a_job_with_its_own_workers_and_bounds() {
        let job = JobSpec::from_toml(JOB, "p.toml").unwrap();
        let phases = job.phase_jobs();
        assert_eq!(phases.len(), 2);
        let (name, fill) = &phases[0];
        assert_eq!(name.as_deref(), Some("fill"));
        assert_eq!((fill.bytes, fill.duration_ns), (Some(1 << 30), None), "a fill ends at its bytes");
        assert_eq!(fill.worker_tables.len(), 1);
        assert_eq!(fill.name.as_deref(), Some("p.toml [fill]"));
        let (name, second) = &phases[1];
        assert_eq!(name.as_deref(), Some("phase 2"));
        assert_eq!((second.bytes, second.duration_ns), (None, Some(30_000_000_000)));
        assert_eq!(second.worker_tables[0].count, 2);
        assert!(second.phases.is_empty());
    }

    #[test]
    fn the_command_line_wins_over_every_phase() {
        let mut job = JobSpec::from_toml(JOB, "p.toml").unwrap();
        let cli = JobSpec { duration_ns: Some(1_000_000_000), workers: Some(3), ..JobSpec::default() };
        job.apply_overrides(&cli);
        for (_, j) in job.phase_jobs() {
            assert_eq!((j.duration_ns, j.bytes), (Some(1_000_000_000), None));
            assert!(j.worker_tables.iter().all(|w| w.count == 3));
        }
    }

    #[test]
    fn phase_tables_refuse_what_they_cannot_hold() {
        let e = JobSpec::from_toml("[[phase]]\nqd = 4\n", "p.toml").unwrap_err().to_string();
        assert!(e.contains("qd") && e.contains("[[phase]] #1"), "{e}");
        let e = JobSpec::from_toml("[worker.a]\n[[phase]]\n[phase.worker.b]\n", "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("[phase.worker.NAME]"), "{e}");
    }

    /// A job file with `n` phases of one worker each.
    fn phases(n: usize) -> String {
        (0..n).map(|i| format!("[[phase]]\n[phase.worker.w{i}]\n")).collect()
    }

    #[test]
    fn phases_and_worker_tables_are_bounded_before_they_are_read() {
        use crate::units::{MAX_PHASES, MAX_WORKERS, MAX_WORKER_TABLES};
        assert_eq!(JobSpec::from_toml(&phases(MAX_PHASES), "p.toml").unwrap().phases.len(), MAX_PHASES);
        let e = JobSpec::from_toml(&phases(MAX_PHASES + 1), "p.toml").unwrap_err().to_string();
        assert!(e.contains("1001 [[phase]] tables") && e.contains("at most 1000 phases"), "{e}");
        let tables =
            |n: usize, prefix: &str| -> String { (0..n).map(|i| format!("[{prefix}.w{i}]\n")).collect() };
        let e = JobSpec::from_toml(&tables(MAX_WORKERS as usize + 1, "worker"), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("1025 worker tables") && e.contains("at most 1024 workers"), "{e}");
        let phase = format!("[[phase]]\n{}", tables(MAX_WORKERS as usize + 1, "phase.worker"));
        let e = JobSpec::from_toml(&phase, "p.toml").unwrap_err().to_string();
        assert!(e.contains("1025 worker tables"), "{e}");
        let wide = format!("[[phase]]\n{}", tables(1000, "phase.worker")).repeat(5);
        let e = JobSpec::from_toml(&wide, "p.toml").unwrap_err().to_string();
        assert!(
            e.contains("5000 [phase.worker.NAME] tables") && e.contains(&MAX_WORKER_TABLES.to_string()),
            "{e}"
        );
    }

    #[test]
    fn each_phase_job_holds_its_own_tables_only() {
        use crate::units::MAX_PHASES;
        let job = JobSpec::from_toml(&phases(MAX_PHASES), "p.toml").unwrap();
        let jobs = job.phase_jobs();
        assert_eq!(jobs.len(), MAX_PHASES);
        assert!(jobs.iter().all(|(_, j)| j.phases.is_empty() && j.worker_tables.len() == 1));
    }
}
