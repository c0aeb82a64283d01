//! `--inject` end to end: [`FaultEngine`] driven by `run_worker` over `mem:`, a temp file (`sync`) and
//! `sim:fixed` on virtual time, and directly over a `MemEngine` where a test needs to see one op's buffer.
//!
//! Each kind is checked against what the target really holds afterwards (a lost write left the block as it
//! was, a misdirected write landed elsewhere, a torn write stored exactly a prefix), and the ledger
//! (`Faults::damaged_blocks`) is checked against the same content, since it is what live and detected
//! counts are made of. Sequential write passes write each block exactly once, so nothing repairs the damage
//! and the expected counts are exact.

mod common;
use common::PushNow;

use common::{initial_byte, TempTarget};
use iolab_device::MemStore;
use iolab_engine::buffers::Buffers;
use iolab_engine::fault::{FaultEngine, Faults, WorkerFaults};
use iolab_engine::mem::MemEngine;
use iolab_engine::sim::SimTarget;
use iolab_engine::{
    run_worker, Completion, Engine, EngineChoice, Op, RealClock, WorkerControl, WorkerOutput, WorkerSetup,
    WorkerTask, WorkerTools,
};
use iolab_engine::{OpKind, WriteSync};
use iolab_plan::{Plan, TargetGeometry};
use iolab_spec::{DataPattern, InjectSpec, JobSpec, SimSpec, TargetSpec};
use iolab_verify::{InjectCount, InjectResult};
use std::sync::{mpsc, Arc};
use std::time::Instant;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;
const BLOCK: u32 = 4096;

fn specs(injects: &[&str]) -> Vec<InjectSpec> {
    injects.iter().map(|t| InjectSpec::parse(t).unwrap_or_else(|e| panic!("'{t}': {e}"))).collect()
}

/// Plans `job` (TOML) over a target of `size` bytes and runs its single worker on `engine` with `injects`.
/// `target` is what the plan is made for (a file is planned as a `mem:` target of its size).
fn run_with(
    job: &str,
    target: TargetSpec,
    size: u64,
    engine: EngineChoice,
    files: Vec<Arc<std::fs::File>>,
    injects: &[&str],
    seed_override: Option<u64>,
) -> (WorkerOutput, Arc<Faults>) {
    let spec = JobSpec::from_toml(job, "fault.toml").expect("job parses");
    let plan = Plan::from_spec(&spec, Some(&target)).expect("plan");
    let regions = plan.bind(&[TargetGeometry { size_bytes: size, block_bytes: 512 }]).expect("bind");
    assert_eq!(plan.workers.len(), 1, "test bug: one worker expected");
    let seed = seed_override.unwrap_or(plan.seed);
    let faults = Arc::new(Faults::new(specs(injects), seed, BLOCK));
    let w = plan.workers[0].clone();
    let wf = WorkerFaults {
        faults: faults.clone(),
        ids: vec![0],
        regions: regions[0].iter().map(|r| (r.offset, r.length)).collect(),
        worker: w.index,
        units: vec![512],
        verifier: None,
    };
    let (tx, _rx) = mpsc::channel();
    let setup = WorkerSetup {
        task: WorkerTask {
            plan: w,
            regions: regions[0].clone(),
            seed,
            ramp_ns: plan.ramp_ns,
            duration_ns: plan.duration_ns,
            interval_ns: 100_000_000,
            boundaries: Vec::new(),
            replay: None,
            flow: None,
        },
        tools: WorkerTools {
            engine,
            files,
            links: Vec::new(),
            cache: None,
            verify: None,
            faults: Some(wf),
            trace: None,
        },
        control: WorkerControl::alone(tx),
    };
    let out = run_worker(setup).unwrap_or_else(|e| panic!("run_worker (seed {seed}): {e}"));
    (out, faults)
}

fn run_mem(job: &str, size: u64, injects: &[&str]) -> (WorkerOutput, Arc<Faults>, Arc<MemStore>) {
    let store = Arc::new(MemStore::new(size).expect("mem store"));
    let (out, faults) = run_with(
        job,
        TargetSpec::Mem { size_bytes: size },
        size,
        EngineChoice::Mem(store.clone()),
        Vec::new(),
        injects,
        None,
    );
    (out, faults, store)
}

fn counts(f: &Faults, mismatch: Option<&[(u16, u64)]>) -> Vec<InjectCount> {
    f.result(mismatch).faults
}

fn injected(f: &Faults) -> Vec<u64> {
    counts(f, None).iter().map(|c| c.injected).collect()
}

/// A sequential write pass over 1 MiB: every block written exactly once.
fn seq_write(bs: &str, qd: u32, ios: u64) -> String {
    format!("seed = 1\nramp = \"0\"\nqd = {qd}\nbs = \"{bs}\"\nrw = \"write\"\nios = {ios}\n")
}

fn mem_bytes(store: &MemStore) -> Vec<u8> {
    let mut data = vec![0u8; store.size_bytes() as usize];
    store.read(0, &mut data);
    data
}

fn zero(chunk: &[u8]) -> bool {
    chunk.iter().all(|&b| b == 0)
}

/// Every damaged block is detected when verification reports exactly the ledger, none when it reports nothing.
fn assert_ledger_accounts(f: &Faults, spec: usize, live: u64) {
    let damaged = f.damaged_blocks();
    let all = &counts(f, Some(&damaged))[spec];
    assert_eq!((all.live, all.detected), (Some(live), Some(live)), "{all:?}");
    let none = &counts(f, Some(&[]))[spec];
    assert_eq!((none.live, none.detected), (Some(live), Some(0)), "{none:?}");
    let unverified = &counts(f, None)[spec];
    assert_eq!((unverified.live, unverified.detected), (None, None), "without --verify: {unverified:?}");
}

#[test]
fn lost_write_leaves_the_block_unchanged() {
    let (out, f, store) = run_mem(&seq_write("16k", 4, 64), MIB, &["lost-write@8"]);
    assert_eq!(out.write.ops, 64, "lost writes are acknowledged: {:?}", out.write);
    assert_eq!((out.write.errors, out.write.short), (0, 0));
    assert_eq!(injected(&f), vec![8]);
    let data = mem_bytes(&store);
    let zero_blocks: Vec<(u16, u64)> = data
        .chunks(BLOCK as usize)
        .enumerate()
        .filter(|(_, c)| zero(c))
        .map(|(i, _)| (0u16, i as u64 * BLOCK as u64))
        .collect();
    // 8 lost writes of 16 KiB: 32 blocks never stored, and they are exactly the ledger's.
    assert_eq!(zero_blocks.len(), 32);
    assert_eq!(f.damaged_blocks(), zero_blocks);
    // The 8th, 16th, ... write (offsets 7 * 16K, 15 * 16K, ...) are the lost ones.
    assert_eq!(zero_blocks[0].1, 7 * 16 * KIB);
    assert_ledger_accounts(&f, 0, 8);
}

#[test]
fn misdirected_write_lands_elsewhere_in_the_region() {
    let (out, f, store) = run_mem(&seq_write("4k", 1, 256), MIB, &["misdirected-write@16"]);
    assert_eq!((out.write.ops, out.write.errors), (256, 0));
    assert_eq!(injected(&f), vec![16]);
    let data = mem_bytes(&store);
    let damaged = f.damaged_blocks();
    let (mut misplaced, mut missing) = (0, 0);
    for (i, c) in data.chunks(BLOCK as usize).enumerate() {
        let at = i as u64 * BLOCK as u64;
        let stamped = u64::from_ne_bytes(c[..8].try_into().expect("8 bytes"));
        let in_ledger = damaged.contains(&(0, at));
        if zero(c) {
            missing += 1; // meant for here, stored elsewhere
            assert!(in_ledger, "block {at} was never stored but is not in the ledger");
        } else if stamped != at {
            misplaced += 1; // stored here, meant for `stamped`
            assert!(in_ledger, "block {at} holds the write for {stamped} but is not in the ledger");
            assert!(damaged.contains(&(0, stamped)), "its intended place {stamped} is in the ledger");
        } else {
            assert!(!in_ledger, "block {at} holds its own data but is in the ledger");
        }
    }
    // An intended place stays empty unless another misdirected write lands on it; a landing place written
    // later by the pass is repaired, one written earlier is not.
    assert!(missing >= 8, "{missing} intended places empty");
    assert!(misplaced >= 1, "no misdirected write survived");
    assert_eq!(damaged.len(), missing + misplaced);
    let live = counts(&f, Some(&damaged))[0].live.expect("live");
    assert!((8..=16).contains(&live), "live {live}");
    assert_ledger_accounts(&f, 0, live);
}

#[test]
fn torn_write_stores_exactly_the_prefix() {
    let (out, f, store) = run_mem(&seq_write("16k", 2, 64), MIB, &["torn-write@4"]);
    assert_eq!(out.write.ops, 64);
    assert_eq!(out.write.bytes, 64 * 16 * KIB, "torn writes are acknowledged in full");
    assert_eq!(out.write.short, 0);
    assert_eq!(injected(&f), vec![16]);
    let data = mem_bytes(&store);
    let mut torn = 0;
    let mut expect_damaged = Vec::new();
    for (i, op) in data.chunks(16 * KIB as usize).enumerate() {
        let sectors: Vec<bool> = op.chunks(512).map(|s| !zero(s)).collect();
        let prefix = sectors.iter().take_while(|&&s| s).count();
        assert!(sectors[prefix..].iter().all(|&s| !s), "write {i}: data after the tear");
        if prefix == sectors.len() {
            continue;
        }
        torn += 1;
        let cut = prefix as u64 * 512;
        assert!(cut > 0 && cut % BLOCK as u64 != 0, "write {i}: cut at {cut}, not inside a block");
        let base = i as u64 * 16 * KIB;
        let mut b = (base + cut) / BLOCK as u64 * BLOCK as u64;
        while b < base + 16 * KIB {
            expect_damaged.push((0u16, b));
            b += BLOCK as u64;
        }
    }
    assert_eq!(torn, 16);
    assert_eq!(f.damaged_blocks(), expect_damaged, "the torn block and every block after it");
    assert_ledger_accounts(&f, 0, 16);
}

#[test]
fn eio_shows_up_as_errors_in_the_worker_stats() {
    let job = "seed = 3\nramp = \"0\"\nqd = 8\nbs = \"4k\"\nrw = \"randrw\"\nios = 4000\n";
    let (out, f, _) = run_mem(job, MIB, &["eio:0.05"]);
    let n = injected(&f)[0];
    assert!((100..=300).contains(&n), "about 5% of 4000: {n}");
    let errors = out.read.errors + out.write.errors;
    assert_eq!(errors, n, "read {:?} write {:?}", out.read.errors_by_errno, out.write.errors_by_errno);
    let eio = |s: &iolab_stats::OpStats| s.errors_by_errno.get(&libc::EIO).copied().unwrap_or(0);
    assert_eq!(eio(&out.read) + eio(&out.write), n);
    assert!(out.read.errors > 0 && out.write.errors > 0, "both reads and writes fail");
    assert_eq!(out.read.ops + out.write.ops + errors, 4000);
    let c = &counts(&f, Some(&[]))[0];
    assert_eq!((c.kind.as_str(), c.spec.as_str()), ("eio", "eio:0.05"));
    assert_eq!((c.live, c.detected), (None, None), "eio damages no data");
    assert!(f.damaged_blocks().is_empty());
}

fn run_sim(job: &str, injects: &[&str]) -> (WorkerOutput, Arc<Faults>) {
    let sim = SimSpec::Fixed { latency_ns: 100_000, servers: 8, size_bytes: 1 << 30 };
    let choice = EngineChoice::alone_on_virtual_time(vec![SimTarget::single(&sim, 1, 16, false)]);
    run_with(job, TargetSpec::Sim(sim), 1 << 30, choice, Vec::new(), injects, None)
}

const SIM_READS: &str =
    "seed = 1\nramp = \"0\"\nclock = \"virtual\"\nbs = \"4k\"\nrw = \"randread\"\nios = 1000\n";

#[test]
fn latency_spike_raises_max_latency_by_the_spike_on_virtual_time() {
    let job = format!("{SIM_READS}qd = 1\n");
    let (base, _) = run_sim(&job, &["eio@1000000"]);
    assert_eq!((base.read.lat.min(), base.read.lat.max()), (100_000, 100_000), "no spike: 100 us each");
    let (out, f) = run_sim(&job, &["latency-spike:50ms@100"]);
    assert_eq!(injected(&f), vec![10]);
    assert_eq!(out.read.ops, 1000);
    assert_eq!(out.read.lat.min(), 100_000);
    let max = out.read.lat.max();
    assert!(max.abs_diff(50_100_000) <= 50_100, "max {max} ns, expected 50.1 ms");
    // Closed loop at qd 1: 990 ops of 100 us and 10 of 50.1 ms.
    assert_eq!(out.window_ns, 990 * 100_000 + 10 * 50_100_000);
    let c = &counts(&f, Some(&[]))[0];
    assert_eq!((c.kind.as_str(), c.live), ("latency-spike", None));
}

#[test]
fn latency_spike_holds_one_completion_while_the_others_flow() {
    let job = format!("{SIM_READS}qd = 4\n");
    let (out, f) = run_sim(&job, &["latency-spike:20ms:0.01"]);
    let n = injected(&f)[0];
    assert!((2..=30).contains(&n), "about 1% of 1000: {n}");
    assert_eq!(out.read.ops, 1000);
    assert_eq!(out.read.lat.min(), 100_000);
    let max = out.read.lat.max();
    assert!((20_100_000..=20_200_000).contains(&max), "max {max} ns");
    // The other slots kept going: well under the time of the spikes and the ops one after another.
    let serial = n * 20_100_000 + (1000 - n) * 100_000;
    assert!(out.window_ns < serial / 2, "window {} ns for {n} spikes", out.window_ns);
}

const MIXED: &[&str] = &[
    "eio:0.01",
    "lost-write:0.02",
    "bit-flip-write@50",
    "torn-write:0.01",
    "misdirected-write:0.01",
    "bit-flip-read:0.01",
    "latency-spike:1ms:0.01",
];

fn mixed(seed: u64) -> (InjectResult, Vec<(u16, u64)>, u64) {
    let job = "seed = 1\nramp = \"0\"\nqd = 8\nbs = \"4k/50:16k/50\"\nrw = \"randrw\"\nios = 5000\n";
    let store = Arc::new(MemStore::new(4 * MIB).expect("mem store"));
    let (out, f) = run_with(
        job,
        TargetSpec::Mem { size_bytes: 4 * MIB },
        4 * MIB,
        EngineChoice::Mem(store),
        Vec::new(),
        MIXED,
        Some(seed),
    );
    let damaged = f.damaged_blocks();
    (f.result(Some(&damaged)), damaged, out.read.errors + out.write.errors)
}

#[test]
fn injection_choices_are_deterministic_for_a_seed() {
    let (a, da, ea) = mixed(11);
    let (b, db, eb) = mixed(11);
    assert_eq!(a, b, "same seed, same injections");
    assert_eq!(da, db, "same seed, same damaged blocks");
    assert_eq!(ea, eb);
    assert_eq!(a.seed, 11);
    for c in &a.faults {
        assert!(c.injected > 0, "{c:?}");
        if c.kind == "eio" || c.kind == "latency-spike" {
            assert_eq!((c.live, c.detected), (None, None), "{c:?}");
        } else if c.kind == "bit-flip-read" {
            // Its damage is in read buffers, not in the ledger this mismatch set was made from.
            assert!(c.live.is_some_and(|l| l > 0) && c.detected <= c.live, "{c:?}");
        } else {
            assert_eq!(c.live, c.detected, "the ledger is the mismatch set: {c:?}");
            assert!(c.live.is_some_and(|l| l <= c.injected), "{c:?}");
        }
    }
    let (c, dc, _) = mixed(12);
    assert!(c.faults != a.faults || dc != da, "another seed chooses differently");
}

#[test]
fn a_second_data_fault_on_the_same_op_is_not_applied() {
    // Ops 40 and 60 are hit by both; the first --inject given wins and the other is not counted.
    let (_, f, _) = run_mem(&seq_write("16k", 1, 64), MIB, &["lost-write@20", "torn-write@5"]);
    assert_eq!(injected(&f), vec![3, 12 - 3]);
}

#[test]
fn lost_and_torn_writes_on_a_file_with_sync() {
    let size = MIB;
    let tt = TempTarget::new(size);
    let (out, f) = run_with(
        &seq_write("16k", 1, 64),
        TargetSpec::Mem { size_bytes: size },
        size,
        EngineChoice::Sync,
        vec![tt.file.clone()],
        &["lost-write@8", "torn-write@5"],
        None,
    );
    assert_eq!((out.write.ops, out.write.errors, out.write.short), (64, 0, 0));
    // Op 40 is lost (the first --inject wins): 8 lost, 12 - 1 torn.
    assert_eq!(injected(&f), vec![8, 11]);
    let mut data = vec![0u8; size as usize];
    tt.peek(0, &mut data);
    let (mut lost, mut torn) = (0, 0);
    for (i, op) in data.chunks(16 * KIB as usize).enumerate() {
        let base = i as u64 * 16 * KIB;
        let old: Vec<bool> = op
            .chunks(512)
            .enumerate()
            .map(|(s, c)| {
                c.iter().enumerate().all(|(j, &b)| b == initial_byte(base + s as u64 * 512 + j as u64))
            })
            .collect();
        let prefix = old.iter().take_while(|&&o| !o).count();
        assert!(old[prefix..].iter().all(|&o| o), "write {i}: new data after old");
        match prefix {
            0 => lost += 1,
            32 => {}
            p => {
                torn += 1;
                assert_ne!(p * 512 % BLOCK as usize, 0, "write {i}: cut on a block boundary");
            }
        }
    }
    assert_eq!((lost, torn), (8, 11));
    let c = counts(&f, Some(&f.damaged_blocks()));
    assert_eq!((c[0].live, c[0].detected, c[1].live, c[1].detected), (Some(8), Some(8), Some(11), Some(11)));
}

// ---- FaultEngine driven directly, to see one op's buffer ----

struct Direct {
    engine: FaultEngine<MemEngine>,
    store: Arc<MemStore>,
    faults: Arc<Faults>,
}

fn direct(injects: &[&str]) -> Direct {
    let store = Arc::new(MemStore::new(MIB).expect("mem store"));
    let buffers = Buffers::new(8, 64 * KIB, DataPattern::Random, 5);
    let inner = MemEngine::new(Some(store.clone()), buffers, 8, RealClock::new(Instant::now()));
    let faults = Arc::new(Faults::new(specs(injects), 1, BLOCK));
    let wf = WorkerFaults {
        faults: faults.clone(),
        ids: vec![3],
        regions: vec![(0, MIB)],
        worker: 0,
        units: vec![512],
        verifier: None,
    };
    Direct { engine: FaultEngine::new(inner, wf, 8), store, faults }
}

fn reap_all(e: &mut impl Engine, n: usize) -> Vec<Completion> {
    let mut out = Vec::new();
    for _ in 0..100 {
        if out.len() >= n {
            break;
        }
        let now = e.now_ns();
        e.submit_and_reap(Some(now + 10_000_000), &mut out).expect("submit_and_reap");
    }
    assert_eq!(out.len(), n, "completions: {out:?}");
    out
}

fn op(user_data: u64, write: bool, offset: u64, len: u32, buf: u32) -> Op {
    Op {
        user_data,
        kind: if write { OpKind::Write } else { OpKind::Read },
        sync: WriteSync::None,
        target: 0,
        offset,
        len,
        buf,
    }
}

fn differing_bits(a: &[u8], b: &[u8]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

#[test]
fn bit_flip_write_stores_one_flipped_bit() {
    let mut d = direct(&["bit-flip-write@1"]);
    let sent = d.engine.buffer_mut(1)[..8192].to_vec();
    d.engine.push_now(op(0xABCD, true, 8192, 8192, 1));
    let c = reap_all(&mut d.engine, 1);
    assert_eq!(c[0], Completion { user_data: 0xABCD, result: 8192, cached: false, done_ns: 0, start_ns: 0 });
    let mut stored = vec![0u8; 8192];
    d.store.read(8192, &mut stored);
    assert_eq!(differing_bits(&sent, &stored), 1);
    let byte = sent.iter().zip(&stored).position(|(a, b)| a != b).expect("a flipped byte") as u64;
    let block = (8192 + byte) / BLOCK as u64 * BLOCK as u64;
    assert_eq!(d.faults.damaged_blocks(), vec![(3, block)], "target id 3, the flipped bit's block");
    let c = &d.faults.result(Some(&[(3, block)])).faults[0];
    assert_eq!((c.injected, c.live, c.detected), (1, Some(1), Some(1)));
}

#[test]
fn a_later_write_covering_the_block_repairs_it() {
    let mut d = direct(&["lost-write@2"]);
    for (i, ud) in [1u64, 2, 3].iter().enumerate() {
        d.engine.push_now(op(*ud, true, 0, 8192, 1));
        let c = reap_all(&mut d.engine, 1);
        assert_eq!((c[0].user_data, c[0].result), (*ud, 8192));
        let expect: Vec<(u16, u64)> = if i == 1 { vec![(3, 0), (3, 4096)] } else { Vec::new() };
        assert_eq!(d.faults.damaged_blocks(), expect, "after write {ud}");
    }
    let c = &d.faults.result(Some(&[])).faults[0];
    assert_eq!((c.injected, c.live, c.detected), (1, Some(0), Some(0)));
}

#[test]
fn bit_flip_read_flips_the_returned_data_only() {
    let mut d = direct(&["bit-flip-read@1"]);
    let content: Vec<u8> = (0..16384u32).map(|i| (i * 7 % 256) as u8).collect();
    d.store.write(16384, &content);
    d.engine.push_now(op(77, false, 16384, 16384, 0));
    let c = reap_all(&mut d.engine, 1);
    assert_eq!((c[0].user_data, c[0].result), (77, 16384));
    let got = d.engine.buffer_mut(0)[..16384].to_vec();
    assert_eq!(differing_bits(&content, &got), 1, "one bit flipped in the returned data");
    let mut stored = vec![0u8; 16384];
    d.store.read(16384, &mut stored);
    assert_eq!(stored, content, "the medium is untouched");
    let byte = content.iter().zip(&got).position(|(a, b)| a != b).expect("flipped") as u64;
    let block = (16384 + byte) / BLOCK as u64 * BLOCK as u64;
    assert!(d.faults.damaged_blocks().is_empty());
    let f = d.faults.clone();
    drop(d); // the worker's read records are merged when its engine goes
    let c = &f.result(Some(&[(3, block)])).faults[0];
    assert_eq!((c.injected, c.live, c.detected), (1, Some(1), Some(1)));
    let c = &f.result(Some(&[(3, block ^ BLOCK as u64)])).faults[0];
    assert_eq!((c.live, c.detected), (Some(1), Some(0)), "another block's mismatch does not count");
}

#[test]
fn bit_flip_read_racing_a_write_is_not_live() {
    let mut d = direct(&["bit-flip-read@1"]);
    d.engine.push_now(op(1, true, 0, 16384, 1));
    d.engine.push_now(op(2, false, 0, 16384, 0));
    reap_all(&mut d.engine, 2);
    let f = d.faults.clone();
    drop(d);
    let c = &f.result(Some(&[(3, 0), (3, 4096), (3, 8192), (3, 12288)])).faults[0];
    assert_eq!((c.injected, c.live, c.detected), (1, Some(0), Some(0)), "the verifier cannot check it");
}

#[test]
fn eio_and_lost_write_complete_without_the_target() {
    let mut d = direct(&["eio@2", "lost-write@1"]);
    d.engine.push_now(op(10, true, 0, 4096, 1)); // lost
    d.engine.push_now(op(11, true, 4096, 4096, 1)); // eio (first given wins)
    d.engine.push_now(op(12, false, 0, 4096, 0)); // read: eio's 3rd eligible op, not hit
    let mut c = reap_all(&mut d.engine, 3);
    c.sort_by_key(|c| c.user_data);
    let got: Vec<(u64, i32)> = c.iter().map(|c| (c.user_data, c.result)).collect();
    assert_eq!(got, vec![(10, 4096), (11, -libc::EIO), (12, 4096)]);
    let mut stored = vec![0u8; 8192];
    d.store.read(0, &mut stored);
    assert!(zero(&stored), "neither write reached the store");
    assert_eq!(injected(&d.faults), vec![1, 1]);
}
