//! `--verify` end to end through `run_worker` on `mem:` (the in-process RAM disk): several workers sharing one
//! region with 32 ops in flight each, random overlapping writes and reads, never a false alarm; and damage put
//! into the RAM disk after a run is found by the read-back pass with the right class.

use iolab_device::MemStore;
use iolab_engine::verify::WorkerVerify;
use iolab_engine::{
    run_worker, EngineChoice, OpKind, WorkerControl, WorkerOutput, WorkerSetup, WorkerTask, WorkerTools,
};
use iolab_plan::{Plan, TargetGeometry};
use iolab_spec::{JobSpec, TargetSpec};
use iolab_verify::{FailMode, MismatchClass, TargetInfo, Verifier, VerifyConfig};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc, Barrier};
use std::time::Instant;

const SIZE: u64 = 1 << 20;
const BLOCK: u64 = 4096;

fn verifier(fail: FailMode) -> Arc<Verifier> {
    verifier_of_run(fail, 0xC0FFEE)
}

fn verifier_of_run(fail: FailMode, run_id: u64) -> Arc<Verifier> {
    Arc::new(
        Verifier::new(VerifyConfig {
            block_bytes: BLOCK as u32,
            run_id,
            targets: vec![TargetInfo { name: "mem".into(), size_bytes: SIZE }],
            fail,
            journal: None,
        })
        .expect("verifier"),
    )
}

/// Runs `job` (a TOML job file) over `store`: every worker in its own thread, all sharing `v`.
fn run(job: &str, store: &Arc<MemStore>, v: &Arc<Verifier>, readback: bool) -> Vec<WorkerOutput> {
    let spec = JobSpec::from_toml(job, "verify.toml").expect("job parses");
    let target = TargetSpec::parse("mem:1M").expect("target parses");
    let plan = Plan::from_spec(&spec, Some(&target)).expect("plan");
    let regions = plan.bind(&[TargetGeometry { size_bytes: SIZE, block_bytes: 512 }]).expect("bind");
    let n = plan.workers.len();
    let barrier = Arc::new(Barrier::new(n));
    let stop = Arc::new(AtomicBool::new(false));
    let epoch = Instant::now();
    let handles: Vec<_> = plan
        .workers
        .iter()
        .zip(regions)
        .map(|(w, regions)| {
            let (tx, _rx) = mpsc::channel();
            let wv = WorkerVerify {
                verifier: v.clone(),
                ids: w.targets.iter().map(|&t| t as u16).collect(),
                regions: regions.iter().map(|r| (r.offset, r.length)).collect(),
                readback,
                stop: stop.clone(),
                durable: None,
            };
            let setup = WorkerSetup {
                task: WorkerTask {
                    plan: w.clone(),
                    regions,
                    seed: plan.seed,
                    ramp_ns: 0,
                    duration_ns: plan.duration_ns,
                    interval_ns: 1_000_000_000,
                    boundaries: Vec::new(),
                    replay: None,
                    flow: None,
                },
                tools: WorkerTools { verify: Some(wv), ..WorkerTools::on(EngineChoice::Mem(store.clone())) },
                control: WorkerControl {
                    epoch,
                    barrier: barrier.clone(),
                    stop: stop.clone(),
                    finish: Arc::new(AtomicBool::new(false)),
                    stop_on_error: false,
                    events: tx,
                },
            };
            std::thread::spawn(move || run_worker(setup))
        })
        .collect();
    let seed = plan.seed;
    handles
        .into_iter()
        .map(|h| h.join().expect("worker thread").unwrap_or_else(|e| panic!("run_worker (seed {seed}): {e}")))
        .collect()
}

const SHARED: &str = "seed = 11\nworkers = 4\nqd = 32\nios = 40000\nbs = \"4k\"\nrw = \"randrw\"\n";

#[test]
fn shared_region_random_writes_and_reads_at_qd32_raise_no_false_alarm() {
    let store = Arc::new(MemStore::new(SIZE).expect("store"));
    let v = verifier(FailMode::Stop);
    let out = run(SHARED, &store, &v, true);
    let r = v.result();
    assert_eq!(r.mismatches, 0, "{:#?}", r.first_mismatches);
    assert!(!r.stopped);
    let writes: u64 = out.iter().map(|o| o.write.ops).sum();
    let reads: u64 = out.iter().map(|o| o.read.ops).sum();
    assert!(writes > 10_000 && reads > 10_000, "writes {writes}, reads {reads}");
    // 256 blocks under 128 ops in flight: many reads overlap writes, yet most blocks are still judged.
    assert!(r.blocks_checked > 5_000, "{r:?}");
    assert!(r.blocks_skipped_in_flight > 0, "{r:?}");
    // Each of the 4 workers reads back the whole shared region (all 256 blocks were written).
    assert!(r.readback_blocks > 0 && r.readback_blocks <= 4 * 256, "{r:?}");
    assert_eq!(r.map_bytes_per_block, 8.0);
}

#[test]
fn damage_after_a_run_is_found_by_the_read_back_with_its_class() {
    let store = Arc::new(MemStore::new(SIZE).expect("store"));
    let v = verifier(FailMode::Continue);
    // Overlapping random traffic first, then one sequential pass alone (qd 1): every block ends exact.
    run(SHARED, &store, &v, false);
    run("seed = 12\nqd = 1\nbytes = \"1M\"\nbs = \"64k\"\nrw = \"write\"\n", &store, &v, false);
    assert_eq!(v.result().mismatches, 0);
    let block = |b: u64| {
        let mut buf = vec![0u8; BLOCK as usize];
        store.read(b * BLOCK, &mut buf);
        buf
    };
    // Block 30 of this generation, then one more pass: block 30's earlier generation is at hand.
    let old30 = block(30);
    run("seed = 13\nqd = 1\nbytes = \"1M\"\nbs = \"4k\"\nrw = \"write\"\n", &store, &v, false);
    // Block 3: one flipped payload bit. Block 10: zeros (lost). Block 20: block 21's contents (misdirected).
    // Block 30: its second half from its earlier generation (torn).
    let mut b3 = block(3);
    b3[3000] ^= 0x08;
    store.write(3 * BLOCK, &b3);
    store.write(10 * BLOCK, &[0u8; BLOCK as usize]);
    store.write(20 * BLOCK, &block(21));
    let mut b30 = block(30);
    b30[2048..].copy_from_slice(&old30[2048..]);
    store.write(30 * BLOCK, &b30);
    let before = v.result().readback_blocks;
    // A read-only pass that reads little by itself; the read-back reads everything.
    run("seed = 14\nqd = 8\nios = 8\nbs = \"4k\"\nrw = \"randread\"\n", &store, &v, true);
    let r = v.result();
    assert_eq!(r.readback_blocks - before, 256, "{r:?}");
    let mut found = v.mismatch_blocks();
    found.sort_unstable();
    found.dedup();
    assert_eq!(found, vec![(0, 3 * BLOCK), (0, 10 * BLOCK), (0, 20 * BLOCK), (0, 30 * BLOCK)]);
    let class_of = |off: u64| r.first_mismatches.iter().find(|m| m.offset == off).map(|m| m.class);
    assert_eq!(class_of(3 * BLOCK), Some(MismatchClass::CorruptPayload));
    assert_eq!(class_of(10 * BLOCK), Some(MismatchClass::LostWrite));
    assert_eq!(class_of(20 * BLOCK), Some(MismatchClass::MisdirectedWrite));
    assert_eq!(class_of(30 * BLOCK), Some(MismatchClass::TornWrite));
    let m = r.first_mismatches.iter().find(|m| m.offset == 20 * BLOCK).expect("block 20");
    assert_eq!(m.found.as_ref().map(|h| h.offset), Some(21 * BLOCK));
    assert_eq!(m.target, "mem");
}

#[test]
fn stop_mode_raises_the_run_stop_at_a_mismatch() {
    let store = Arc::new(MemStore::new(SIZE).expect("store"));
    let v = verifier(FailMode::Stop);
    run("seed = 15\nqd = 1\nbytes = \"1M\"\nbs = \"64k\"\nrw = \"write\"\n", &store, &v, false);
    let mut b = vec![0u8; BLOCK as usize];
    store.read(0, &mut b);
    b[100] ^= 1;
    store.write(0, &b);
    let out = run("seed = 16\nqd = 4\nduration = \"10s\"\nbs = \"4k\"\nrw = \"read\"\n", &store, &v, true);
    let r = v.result();
    assert!(r.stopped && r.mismatches >= 1, "{r:?}");
    assert!(out[0].stopped_early, "the run stopped at the mismatch, long before its 10 s");
}

/// A mem engine whose reads fail on purpose: the first read of each offset with EAGAIN (a transient error),
/// and every read at `broken` with EIO.
struct FlakyReads {
    inner: iolab_engine::mem::MemEngine,
    reads: std::collections::HashMap<u64, (u64, bool)>,
    seen: std::collections::HashSet<u64>,
    broken: u64,
}

impl iolab_engine::Engine for FlakyReads {
    fn name(&self) -> &'static str {
        "flaky"
    }
    fn features(&self) -> Vec<String> {
        Vec::new()
    }
    fn now_ns(&self) -> u64 {
        self.inner.now_ns()
    }
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        self.inner.buffer_mut(buf)
    }
    unsafe fn push(&mut self, op: iolab_engine::Op) {
        self.reads.insert(op.user_data, (op.offset, op.kind == OpKind::Write));
        // SAFETY: the caller's promise for `op` passes on unchanged.
        unsafe { self.inner.push(op) };
    }
    fn submit_and_reap(
        &mut self,
        d: Option<u64>,
        out: &mut Vec<iolab_engine::Completion>,
    ) -> Result<(), iolab_engine::EngineError> {
        let from = out.len();
        self.inner.submit_and_reap(d, out)?;
        for c in &mut out[from..] {
            let (offset, write) = self.reads[&c.user_data];
            if write {
                continue;
            }
            if offset == self.broken {
                c.result = -libc::EIO;
            } else if self.seen.insert(offset) {
                c.result = -libc::EAGAIN;
            }
        }
        Ok(())
    }
    fn submit(&mut self) -> Result<(), iolab_engine::EngineError> {
        self.inner.submit()
    }
    fn finish(&mut self) -> Result<(), iolab_engine::EngineError> {
        self.inner.finish()
    }
}

/// The read-back pass reads a block again after a transient error (so damage there is still found), and counts
/// the blocks a hard error left unread instead of passing them silently.
#[test]
fn read_back_retries_transient_errors_and_counts_blocks_it_could_not_read() {
    use iolab_engine::buffers::Buffers;
    use iolab_engine::Engine;
    let store = Arc::new(MemStore::new(SIZE).expect("store"));
    let v = verifier(FailMode::Continue);
    run("seed = 17\nqd = 1\nbytes = \"1M\"\nbs = \"64k\"\nrw = \"write\"\n", &store, &v, false);
    // Damage block 20 (in the second 64 KiB run the read-back reads): one flipped payload bit.
    let mut b = vec![0u8; BLOCK as usize];
    store.read(20 * BLOCK, &mut b);
    b[1000] ^= 0x10;
    store.write(20 * BLOCK, &b);
    let buffers = Buffers::new(8, 64 * 1024, iolab_spec::DataPattern::Random, 1);
    let clock = iolab_engine::RealClock::new(Instant::now());
    let inner = iolab_engine::mem::MemEngine::new(Some(store.clone()), buffers, 8, clock);
    let flaky = FlakyReads { inner, reads: Default::default(), seen: Default::default(), broken: 0 };
    let wv = WorkerVerify {
        verifier: v.clone(),
        ids: vec![0],
        regions: vec![(0, SIZE)],
        readback: true,
        stop: Arc::new(AtomicBool::new(false)),
        durable: None,
    };
    let mut e = iolab_engine::verify::VerifyEngine::new(flaky, wv, 4);
    e.finish().expect("read-back");
    let r = v.result();
    // Runs of 16 blocks (the 64 KiB buffers): the one at offset 0 always fails, the other 15 fail once first.
    assert_eq!(r.readback_unread_blocks, 16, "{r:?}");
    assert_eq!(r.readback_blocks, 256 - 16, "{r:?}");
    assert_eq!(v.mismatch_blocks(), vec![(0, 20 * BLOCK)], "the damage behind a retried read is found");
}

/// Two runs with one seed write different payloads under --verify: a sector an earlier run left behind (a torn
/// write over it) can then never pass for this run's data. (Found as a flaky test: a torn write on a file that
/// a run with the same seed had written left sectors byte for byte equal to the ones it should have written.)
#[test]
fn runs_with_one_seed_write_different_payloads_under_verify() {
    let job = "seed = 21\nqd = 1\nbytes = \"64k\"\nbs = \"4k\"\nrw = \"write\"\n";
    let payload = |run_id: u64| {
        let store = Arc::new(MemStore::new(SIZE).expect("store"));
        run(job, &store, &verifier_of_run(FailMode::Stop, run_id), false);
        let mut b = vec![0u8; BLOCK as usize];
        store.read(0, &mut b);
        // Sector 1 after its tag: neither header nor tag, only the data pattern.
        b[512 + 16..1024].to_vec()
    };
    assert_eq!(payload(1), payload(1), "one run id: the same bytes (the data pattern comes from the seed)");
    assert_ne!(payload(1), payload(2), "another run: other bytes");
}
