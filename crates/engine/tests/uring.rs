//! Real-kernel io_uring: `run_worker` with `EngineChoice::Uring` on a 16 MiB O_DIRECT temp file.
//!
//! Each test starts with [`require!`], which prints "skipped: ..." and returns when io_uring or O_DIRECT is
//! unavailable here (a container with io_uring disabled, a tmpfs temp dir). The tests run 0.3 s each, so
//! they are not `#[ignore]`d.

mod common;

use common::TempTarget;
use iolab_engine::{
    run_worker, EngineChoice, WorkerControl, WorkerOutput, WorkerSetup, WorkerTask, WorkerTools,
};
use iolab_plan::{Plan, TargetGeometry};
use iolab_spec::{JobSpec, TargetSpec};
use std::sync::mpsc;

const SIZE: u64 = 16 << 20;

/// Evaluates to the value of an `Ok`; on `Err(why)` prints "skipped: why" and returns from the test.
macro_rules! require {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(why) => {
                iolab_testkit::skip(why);
                return;
            }
        }
    };
}

/// A 16 MiB O_DIRECT temp file, when io_uring and O_DIRECT both work here.
fn uring_target() -> Result<TempTarget, String> {
    iolab_engine::uring::probe().map_err(|e| format!("io_uring unavailable: {e}"))?;
    let t = TempTarget::new(SIZE);
    match &t.direct_error {
        None => Ok(t),
        Some(e) => Err(format!("O_DIRECT unavailable in {}: {e}", std::env::temp_dir().display())),
    }
}

/// Runs the single worker of `job` (TOML, without a target) on `t` with io_uring.
fn run(t: &TempTarget, job: &str) -> WorkerOutput {
    let spec = JobSpec::from_toml(job, "test.toml").expect("job parses");
    let target = TargetSpec::parse(&t.tmp.path().display().to_string()).expect("target parses");
    let plan = Plan::from_spec(&spec, Some(&target)).expect("plan");
    let regions = plan.bind(&[TargetGeometry { size_bytes: SIZE, block_bytes: 4096 }]).expect("bind");
    let (tx, _rx) = mpsc::channel();
    let out = run_worker(WorkerSetup {
        task: WorkerTask {
            plan: plan.workers[0].clone(),
            regions: regions[0].clone(),
            seed: plan.seed,
            ramp_ns: plan.ramp_ns,
            duration_ns: plan.duration_ns,
            interval_ns: 100_000_000,
            boundaries: Vec::new(),
            replay: None,
            flow: None,
        },
        tools: WorkerTools { files: vec![t.file.clone()], ..WorkerTools::on(EngineChoice::Uring) },
        control: WorkerControl::alone(tx),
    })
    .unwrap_or_else(|e| panic!("run_worker (seed {}): {e}", plan.seed));
    assert_eq!(out.engine, "io_uring");
    out
}

/// IOPS x mean service time: the depth the device actually saw (Little's law).
fn depth(o: &WorkerOutput) -> f64 {
    let ops = o.read.ops + o.write.ops;
    let svc_ns = o.read.service_lat.sum_ns() + o.write.service_lat.sum_ns();
    if o.window_ns == 0 || ops == 0 {
        return 0.0;
    }
    (ops as f64 / (o.window_ns as f64 / 1e9)) * (svc_ns as f64 / ops as f64 / 1e9)
}

fn random_reads(qd: u32) {
    let t = require!(uring_target());
    let job =
        format!("duration = \"300ms\"\nramp = \"0\"\nseed = 1\nqd = {qd}\nbs = \"4k\"\nrw = \"randread\"\n");
    let o = run(&t, &job);
    let d = depth(&o);
    println!(
        "qd {qd}: {} reads in {} ms, mean service {:.0} us, depth {d:.1}, features {:?}",
        o.read.ops,
        o.window_ns / 1_000_000,
        o.read.service_lat.mean().unwrap_or(f64::NAN) / 1e3,
        o.features
    );
    assert!(o.read.ops > 0, "{o:?}");
    assert_eq!(o.read.errors, 0, "errors: {:?}", o.read.errors_by_errno);
    assert_eq!(o.read.short, 0, "short reads");
    assert_eq!(o.read.bytes, o.read.ops * 4096);
    assert_eq!(o.write.ops, 0);
    assert!(!o.stopped_early);
    if qd == 32 {
        assert!(d > 0.5 * qd as f64, "qd {qd} reached depth {d:.1} only");
    }
}

#[test]
fn uring_random_reads_qd1() {
    random_reads(1);
}

#[test]
fn uring_random_reads_qd32_reach_the_depth() {
    random_reads(32);
}

#[test]
fn uring_random_reads_qd256() {
    random_reads(256);
}

#[test]
fn uring_mixed_read_write_4k_64k() {
    let t = require!(uring_target());
    let job = "duration = \"300ms\"\nramp = \"0\"\nseed = 1\nqd = 16\nbs = \"4k/1:64k/1\"\nrw = \"randrw\"\n";
    let o = run(&t, job);
    println!("mixed: {} reads, {} writes, depth {:.1}", o.read.ops, o.write.ops, depth(&o));
    for (what, s) in [("read", &o.read), ("write", &o.write)] {
        assert!(s.ops > 0, "{what}: {o:?}");
        assert_eq!(s.errors, 0, "{what} errors: {:?}", s.errors_by_errno);
        assert_eq!(s.short, 0, "{what}: short I/Os");
        // Both sizes ran: the mean size is strictly between 4 KiB and 64 KiB.
        assert!(
            s.bytes > s.ops * 4096 && s.bytes < s.ops * 65536,
            "{what}: {} bytes in {} ops",
            s.bytes,
            s.ops
        );
        assert_eq!(s.bytes % 4096, 0, "{what}: bytes are whole 4 KiB blocks");
    }
}

#[test]
fn uring_writes_reach_the_file() {
    let t = require!(uring_target());
    assert_eq!(t.changed_bytes(), 0, "fresh file has its initial pattern");
    let job = "ios = 512\nseed = 1\nqd = 32\nbs = \"4k\"\nrw = \"randwrite\"\n";
    let o = run(&t, job);
    assert_eq!(o.write.ops, 512, "{o:?}");
    assert_eq!((o.write.errors, o.write.short), (0, 0));
    // Read back through the page cache (a direct write invalidates it): written blocks differ from the pattern.
    let changed = t.changed_bytes();
    println!("512 random 4 KiB writes changed {changed} bytes");
    assert!(changed > 100 * 4000, "only {changed} bytes changed");
}
