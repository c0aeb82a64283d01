//! `--verify` end to end through `run_worker` on `mem:` (the in-process RAM disk): several workers sharing one
//! region with 32 ops in flight each, random overlapping writes and reads, never a false alarm; and damage put
//! into the RAM disk after a run is found by the read-back pass with the right class.

use iolab_engine::verify::WorkerVerify;
use iolab_engine::{run_worker, EngineChoice, WorkerOutput, WorkerSetup};
use iolab_plan::{Plan, TargetGeometry};
use iolab_spec::{JobSpec, TargetSpec};
use iolab_target::MemStore;
use iolab_verify::{FailMode, MismatchClass, TargetInfo, Verifier, VerifyConfig};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc, Barrier};
use std::time::Instant;

const SIZE: u64 = 1 << 20;
const BLOCK: u64 = 4096;

fn verifier(fail: FailMode) -> Arc<Verifier> {
    Arc::new(
        Verifier::new(VerifyConfig {
            block_bytes: BLOCK as u32,
            run_id: 0xC0FFEE,
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
            };
            let setup = WorkerSetup {
                plan: w.clone(),
                regions,
                files: Vec::new(),
                engine: EngineChoice::Mem(store.clone()),
                links: Vec::new(),
                cache: None,
                verify: Some(wv),
                faults: None,
                stop_on_error: false,
                seed: plan.seed,
                ramp_ns: 0,
                duration_ns: plan.duration_ns,
                interval_ns: 1_000_000_000,
                epoch,
                stop: stop.clone(),
                finish: Arc::new(AtomicBool::new(false)),
                barrier: barrier.clone(),
                events: tx,
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
