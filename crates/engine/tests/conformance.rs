//! Engine conformance: ONE suite, [`check`], run against every engine.
//!
//! Properties, each on a fresh engine from `make`:
//! - (a) every pushed op completes exactly once, with its `user_data`, and `result == len`;
//! - (b) write-then-read returns the written bytes, through `buffer_mut`, at several offsets, 4 KiB and 64 KiB;
//! - (c) `slot_count` ops can be in flight at once, and exactly that many come back;
//! - (d) `submit_and_reap(Some(deadline))` with nothing in flight returns at the deadline (real clocks: not
//!   before it; virtual time: jumps exactly to it);
//! - (e) a read at or across the end of a file returns a short count (file engines), never a panic;
//! - (f) `now_ns` never goes backwards (checked after every engine call, and in a tight loop).
//!
//! The data properties (the content checks of (a) and (b)) are skipped for `null:` and `sim:`, which keep no
//! data; (e) runs only for file engines (a `mem:` op past the end is a plan bug and panics by contract).
//!
//! Wrapped stacks run the same suite: cache over `mem:`, link over `sim:` and over `mem:`, fault injection
//! (with nothing to inject) over `mem:`, verification over `mem:`. A wrapper owes its caller the same contract
//! as the engine underneath.

mod common;
use common::PushNow;

use common::{initial_byte, TempTarget};
use iolab_device::MemStore;
use iolab_engine::buffers::Buffers;
use iolab_engine::mem::MemEngine;
use iolab_engine::sim::SimEngine;
use iolab_engine::sync::SyncEngine;
use iolab_engine::uring::{self, UringEngine};
use iolab_engine::{Completion, Engine, Op, RealClock};
use iolab_engine::{OpKind, WriteSync};
use iolab_spec::DataPattern;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

// The wrapped stacks.
use iolab_cache::{Cache, CacheConfig, CacheMode, CachePolicy};
use iolab_engine::cache::{CacheEngine, WorkerCache, WRITE_BACK_STAGING};
use iolab_engine::fault::{FaultEngine, Faults, WorkerFaults};
use iolab_engine::link::LinkEngine;
use iolab_engine::verify::{VerifyEngine, WorkerVerify};
use iolab_sim::LinkTiming;
use iolab_spec::LinkParams;
use iolab_verify::{FailMode, TargetInfo, Verifier, VerifyConfig};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// Slots (ops in flight at once) of every engine under test.
const SLOTS: u32 = 32;
/// Buffer size: the largest op of the suite.
const BUF: u32 = 64 << 10;
/// Size of file and `mem:` targets.
const SIZE: u64 = 4 << 20;
/// Tag in the high bits of every `user_data`, so an engine that truncates it to 32 bits fails (a).
const TAG: u64 = 0xC0DE_0000_0000_0000;

fn buffers() -> Buffers {
    Buffers::new(2 * SLOTS, BUF as u64, DataPattern::Random, 7)
}

/// What the suite may expect of one engine.
struct Profile {
    label: &'static str,
    /// Expected `Engine::name`.
    name: &'static str,
    virtual_time: bool,
    /// Where the data lives, for engines that keep it.
    data: Option<Backing>,
    /// The engine takes one op per slot, slot i on buffers 2i and 2i+1 ([`VerifyEngine`], as the worker
    /// uses them): (c) puts op i on buffer 2i instead of buffer i.
    slot_buffers: bool,
}

/// Reads the target's bytes at an offset, without the engine.
type Peek = Box<dyn Fn(u64, &mut [u8])>;

/// A view of the engine's target that does not go through the engine.
struct Backing {
    /// Reads the target's bytes at an offset.
    peek: Peek,
    /// The target's content before the suite wrote to it.
    initial: fn(u64) -> u8,
    /// A file: reads past the end are legal and short (e).
    file: bool,
}

/// Checks `now_ns` never goes backwards.
struct Mono {
    last: u64,
}

impl Mono {
    fn see<E: Engine>(&mut self, e: &E, after: &str) {
        let t = e.now_ns();
        assert!(t >= self.last, "now_ns went backwards after {after}: {} then {t}", self.last);
        self.last = t;
    }
}

fn op(i: u64, write: bool, offset: u64, len: u32, buf: u32) -> Op {
    Op {
        user_data: TAG | i << 32 | buf as u64,
        kind: if write { OpKind::Write } else { OpKind::Read },
        sync: WriteSync::None,
        target: 0,
        offset,
        len,
        buf,
    }
}

/// Calls `submit_and_reap(None)` until `n` completions came back; fails on a hang (10 s or 100k calls).
fn reap_n<E: Engine>(e: &mut E, n: usize, mono: &mut Mono) -> Vec<Completion> {
    let mut out = Vec::new();
    let started = Instant::now();
    let mut calls = 0u32;
    while out.len() < n {
        e.submit_and_reap(None, &mut out).expect("submit_and_reap");
        mono.see(e, "submit_and_reap(None)");
        calls += 1;
        assert!(
            calls < 100_000 && started.elapsed() < Duration::from_secs(10),
            "only {} of {n} completions came back after {calls} calls",
            out.len()
        );
    }
    assert_eq!(out.len(), n, "more completions than ops in flight: {out:?}");
    // Nothing else may come back later.
    let mut extra = Vec::new();
    let deadline = e.now_ns() + 2_000_000;
    e.submit_and_reap(Some(deadline), &mut extra).expect("submit_and_reap");
    mono.see(e, "submit_and_reap(deadline) after the last completion");
    assert!(extra.is_empty(), "completions with nothing in flight: {extra:?}");
    out
}

/// Every op of `ops` came back exactly once, with `result == len`.
fn assert_each_once(ops: &[Op], got: &[Completion]) {
    let mut want: HashMap<u64, &Op> = ops.iter().map(|o| (o.user_data, o)).collect();
    assert_eq!(want.len(), ops.len(), "test bug: user_data not unique");
    for c in got {
        let o = want.remove(&c.user_data).unwrap_or_else(|| {
            panic!("completion {c:?} is for no op in flight (unknown or duplicated user_data)")
        });
        assert_eq!(c.result, o.len as i32, "result of {o:?}");
    }
    assert!(want.is_empty(), "never completed: {:?}", want.values().collect::<Vec<_>>());
}

/// The conformance suite. `make` builds a fresh engine with `SLOTS` slots over the given buffers.
fn check<E: Engine>(p: Profile, make: impl Fn(Buffers) -> E) {
    let label = p.label;
    let data = p.data.as_ref();
    if data.is_none() {
        println!("{label}: keeps no data; content checks of (a) and (b) skipped");
    }

    // Name and buffers.
    {
        let mut e = make(buffers());
        assert_eq!(e.name(), p.name, "{label}");
        assert!(!e.features().is_empty(), "{label}: features() is empty");
        for b in [0, 2 * SLOTS - 1] {
            let buf = e.buffer_mut(b);
            assert!(buf.len() >= BUF as usize, "{label}: buffer {b} is {} bytes", buf.len());
            assert_eq!(buf.as_ptr() as usize % 4096, 0, "{label}: buffer {b} not 4 KiB aligned");
        }
    }

    // (a) Each op completes exactly once with its user_data; result == len. Reads at even, writes at odd
    // 64 KiB blocks of the first 512 KiB, lengths 4 KiB and 64 KiB.
    {
        let mut e = make(buffers());
        let mut mono = Mono { last: e.now_ns() };
        let ops: Vec<Op> = (0..8u32)
            .map(|i| {
                let write = i % 2 == 1;
                let len = if i % 4 < 2 { 4096 } else { BUF };
                op(i as u64, write, i as u64 * BUF as u64, len, 2 * i + u32::from(write))
            })
            .collect();
        for (k, o) in ops.iter().enumerate() {
            if o.kind == OpKind::Read {
                e.buffer_mut(o.buf).fill(0xEE);
            }
            e.push_now(*o);
            mono.see(&e, "push");
            // The worker hands the first ops of a refill over early (`submit`), then pushes the rest.
            if k == 0 || k == 2 {
                e.submit().unwrap_or_else(|err| panic!("{label} (a): submit: {err}"));
            }
        }
        let got = reap_n(&mut e, ops.len(), &mut mono);
        assert_each_once(&ops, &got);
        if let Some(d) = data {
            for o in &ops {
                let len = o.len as usize;
                let mut on_target = vec![0u8; len];
                (d.peek)(o.offset, &mut on_target);
                let buf = &e.buffer_mut(o.buf)[..len];
                if o.kind == OpKind::Write {
                    assert!(buf == &on_target[..], "{label} (a): write of {o:?} did not reach the target");
                } else {
                    let want: Vec<u8> = (o.offset..o.offset + len as u64).map(d.initial).collect();
                    assert!(buf == &want[..], "{label} (a): read of {o:?} returned the wrong bytes");
                }
            }
        }
        println!("{label} (a): {} ops completed once each", ops.len());
    }

    // (b) Write then read back, one op at a time, several offsets, 4 KiB and 64 KiB.
    if let Some(d) = data {
        let mut e = make(buffers());
        let mut mono = Mono { last: e.now_ns() };
        let offsets = [1 << 20, (1 << 20) + 4096, (1 << 20) + 3 * BUF as u64, SIZE - BUF as u64];
        let mut k = 0u8;
        for len in [4096u32, BUF] {
            for (i, &offset) in offsets.iter().enumerate() {
                k += 1;
                let n = len as usize;
                let (wbuf, rbuf) = (2 * i as u32 + 1, 2 * i as u32);
                // Content unlike the initial one (and unlike the previous case at this offset).
                let content: Vec<u8> =
                    (0..n as u64).map(|j| initial_byte(offset + j).wrapping_add(k).wrapping_mul(3)).collect();
                e.buffer_mut(wbuf)[..n].copy_from_slice(&content);
                let w = op(k as u64, true, offset, len, wbuf);
                e.push_now(w);
                assert_each_once(&[w], &reap_n(&mut e, 1, &mut mono));
                let mut on_target = vec![0u8; n];
                (d.peek)(offset, &mut on_target);
                assert!(on_target == content, "{label} (b): {len}-byte write at {offset} not on the target");

                e.buffer_mut(rbuf)[..n].fill(0xEE);
                let r = op(k as u64 + 100, false, offset, len, rbuf);
                e.push_now(r);
                assert_each_once(&[r], &reap_n(&mut e, 1, &mut mono));
                assert!(
                    e.buffer_mut(rbuf)[..n] == content[..],
                    "{label} (b): {len}-byte read at {offset} did not return what was written"
                );
            }
        }
        println!("{label} (b): {k} write-read round trips");
    } else {
        println!("{label} (b): skipped (keeps no data)");
    }

    // (c) SLOTS ops in flight at once: all come back, no more, no fewer.
    {
        let mut e = make(buffers());
        let mut mono = Mono { last: e.now_ns() };
        let buf = |i: u32| if p.slot_buffers { 2 * i } else { i };
        let ops: Vec<Op> =
            (0..SLOTS).map(|i| op(i as u64, false, (2 << 20) + i as u64 * 4096, 4096, buf(i))).collect();
        for o in &ops {
            e.push_now(*o);
        }
        let got = reap_n(&mut e, ops.len(), &mut mono);
        assert_each_once(&ops, &got);
        if let Some(d) = data {
            for o in &ops {
                let want: Vec<u8> = (o.offset..o.offset + o.len as u64).map(d.initial).collect();
                assert!(e.buffer_mut(o.buf)[..4096] == want[..], "{label} (c): read of {o:?}");
            }
        }
        // A second full round on the same engine: slots free again after their completion.
        for o in &ops {
            e.push_now(Op { user_data: o.user_data ^ 1 << 48, ..*o });
        }
        let again: Vec<Op> = ops.iter().map(|o| Op { user_data: o.user_data ^ 1 << 48, ..*o }).collect();
        assert_each_once(&again, &reap_n(&mut e, again.len(), &mut mono));
        println!("{label} (c): {SLOTS} in flight at once, twice");
    }

    // (d) A deadline with nothing in flight.
    {
        let mut e = make(buffers());
        let mut mono = Mono { last: e.now_ns() };
        let mut out = Vec::new();
        if p.virtual_time {
            let t0 = e.now_ns();
            e.submit_and_reap(None, &mut out).expect("submit_and_reap");
            assert_eq!(e.now_ns(), t0, "{label} (d): no deadline, nothing in flight: time must not move");
            let d = t0 + 12_345_678;
            e.submit_and_reap(Some(d), &mut out).expect("submit_and_reap");
            assert_eq!(e.now_ns(), d, "{label} (d): virtual time must jump exactly to the deadline");
            e.submit_and_reap(Some(d - 1_000), &mut out).expect("submit_and_reap");
            assert_eq!(e.now_ns(), d, "{label} (d): a past deadline must not move virtual time");
            mono.see(&e, "deadline waits");
        } else {
            let wait = 20_000_000u64;
            let d = e.now_ns() + wait;
            e.submit_and_reap(Some(d), &mut out).expect("submit_and_reap");
            let t = e.now_ns();
            mono.see(&e, "deadline wait");
            // Timer slack may end the wait a hair early on some kernels; 200 us is "not much".
            assert!(t + 200_000 >= d, "{label} (d): returned {} us before the deadline", (d - t) / 1000);
            assert!(
                t < d + 500_000_000,
                "{label} (d): returned {} ms after the deadline",
                (t - d) / 1_000_000
            );
            println!(
                "{label} (d): returned {} us after a {} ms deadline",
                (t as i64 - d as i64) / 1000,
                wait / 1_000_000
            );
            // A deadline already past returns at once.
            let t0 = Instant::now();
            e.submit_and_reap(Some(e.now_ns().saturating_sub(1_000)), &mut out).expect("submit_and_reap");
            // A hang guard on a loaded machine: the bug this catches waits for a deadline that never comes.
            assert!(t0.elapsed() < Duration::from_millis(500), "{label} (d): a past deadline waited");
            mono.see(&e, "past deadline");
        }
        assert!(out.is_empty(), "{label} (d): completions with nothing in flight: {out:?}");
    }

    // (e) Reads at and across the end of a file: short counts, no panic.
    if data.is_some_and(|d| d.file) {
        let d = data.expect("checked");
        let mut e = make(buffers());
        let mut mono = Mono { last: e.now_ns() };
        let ops = [
            op(1, false, SIZE, 4096, 0),
            op(2, false, SIZE - 4096, BUF, 2),
            op(3, false, SIZE + (1 << 20), BUF, 4),
        ];
        for o in &ops {
            e.push_now(*o);
        }
        let got = reap_n(&mut e, ops.len(), &mut mono);
        let mut seen = Vec::new();
        for o in &ops {
            let c = got.iter().find(|c| c.user_data == o.user_data).expect("each op completes");
            assert!(
                c.result >= 0 && (c.result as u32) < o.len,
                "{label} (e): read {o:?} past the end gave {}",
                c.result
            );
            seen.push(c.result);
        }
        // The part before the end is the file's content.
        let n = seen[1] as usize;
        let mut on_target = vec![0u8; n];
        (d.peek)(SIZE - 4096, &mut on_target);
        assert!(e.buffer_mut(2)[..n] == on_target[..], "{label} (e): short read returned the wrong bytes");
        println!("{label} (e): reads past the end returned {seen:?}");
    }

    // (f) now_ns is monotone in a tight loop too (the suite checked it after every call above).
    {
        let e = make(buffers());
        let mut mono = Mono { last: e.now_ns() };
        for _ in 0..10_000 {
            mono.see(&e, "now_ns");
        }
    }
}

fn clock() -> RealClock {
    RealClock::new(Instant::now())
}

fn file_profile(label: &'static str, name: &'static str, t: &Arc<TempTarget>) -> Profile {
    let t2 = t.clone();
    Profile {
        label,
        name,
        virtual_time: false,
        data: Some(Backing { peek: Box::new(move |o, b| t2.peek(o, b)), initial: initial_byte, file: true }),
        slot_buffers: false,
    }
}

#[test]
fn sync_engine_conforms() {
    let t = Arc::new(TempTarget::new(SIZE));
    let file = t.file.clone();
    check(file_profile("sync", "sync", &t), |b| SyncEngine::new(vec![file.clone()], b, clock()));
}

#[test]
fn uring_engine_conforms() {
    if let Err(e) = uring::probe() {
        iolab_testkit::skip(format_args!("io_uring unavailable: {e}"));
        return;
    }
    let t = Arc::new(TempTarget::new(SIZE));
    let file = t.file.clone();
    println!("uring: temp file O_DIRECT: {}", t.direct);
    check(file_profile("uring", "io_uring", &t), |b| {
        UringEngine::new(SLOTS, vec![file.clone()], b, clock()).expect("UringEngine::new after a good probe")
    });
}

/// io_uring's `submit` starts the I/O without waiting or reaping: a write handed over with it reaches the file
/// before anything is reaped, and its completion is then reaped exactly once.
#[test]
fn uring_submit_starts_io_without_reaping() {
    if let Err(e) = uring::probe() {
        iolab_testkit::skip(format_args!("io_uring unavailable: {e}"));
        return;
    }
    let t = TempTarget::new(1 << 20);
    let mut e = UringEngine::new(SLOTS, vec![t.file.clone()], buffers(), clock()).expect("UringEngine::new");
    e.buffer_mut(1)[..4096].fill(0x5A);
    let w = op(0, true, 8192, 4096, 1);
    e.push_now(w);
    e.submit().expect("submit");
    let mut seen = [0u8; 4096];
    let started = std::time::Instant::now();
    loop {
        t.peek(8192, &mut seen);
        if seen.iter().all(|&b| b == 0x5A) {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 5,
            "a write handed over with submit() did not reach the file in 5 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let mut mono = Mono { last: e.now_ns() };
    let got = reap_n(&mut e, 1, &mut mono);
    assert_each_once(&[w], &got);
    // Nothing left over: a second submit with nothing pushed is a no-op.
    e.submit().expect("empty submit");
}

/// Pushes a 4 KiB write through `e` (buffer 1, at 8192), calls `submit` and waits, without reaping, until the
/// file holds what the buffer held at push; then reaps it exactly once.
fn submit_reaches_the_file<E: Engine>(label: &str, mut e: E, t: &TempTarget) {
    e.buffer_mut(1)[..4096].fill(0x5A);
    let w = op(0, true, 8192, 4096, 1);
    e.push_now(w);
    // What goes out (a verifier has stamped its header into the buffer by now).
    let want = e.buffer_mut(1)[..4096].to_vec();
    e.submit().expect("submit");
    let mut seen = vec![0u8; 4096];
    let started = Instant::now();
    loop {
        t.peek(8192, &mut seen);
        if seen == want {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 5,
            "{label}: a write handed over with submit() did not reach the file"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut mono = Mono { last: e.now_ns() };
    assert_each_once(&[w], &reap_n(&mut e, 1, &mut mono));
}

/// Every wrapper passes `submit` to the io_uring engine underneath: the early-submit path survives the stack.
#[test]
fn wrappers_over_uring_pass_submit_through() {
    if let Err(e) = uring::probe() {
        iolab_testkit::skip(format_args!("io_uring unavailable: {e}"));
        return;
    }
    let t = TempTarget::new(1 << 20);
    let ring = |n: u32| {
        let b = Buffers::new(n, BUF as u64, DataPattern::Random, 7);
        UringEngine::new(SLOTS + WRITE_BACK_STAGING, vec![t.file.clone()], b, clock())
            .expect("UringEngine::new")
    };
    let wc = write_through();
    submit_reaches_the_file("cache", CacheEngine::new(ring(2 * SLOTS + WRITE_BACK_STAGING), wc, SLOTS), &t);
    submit_reaches_the_file("link", LinkEngine::new(ring(2 * SLOTS), &[None], SLOTS), &t);
    let wf = WorkerFaults {
        faults: Arc::new(Faults::new(Vec::new(), 1, 4096)),
        ids: vec![0],
        regions: vec![(0, 1 << 20)],
        worker: 0,
        units: vec![512],
        verifier: None,
    };
    submit_reaches_the_file("fault", FaultEngine::new(ring(2 * SLOTS), wf, SLOTS), &t);
    let wv = worker_verify(&verifier(1 << 20));
    submit_reaches_the_file("verify", VerifyEngine::new(ring(2 * SLOTS), wv, SLOTS), &t);
}

/// io_uring checks an op's buffer bounds at push, where its `unsafe` relies on them: an op longer than its
/// buffer, or on a buffer the engine does not have, panics instead of reaching the kernel.
#[test]
fn uring_push_outside_the_buffers_panics() {
    if let Err(e) = uring::probe() {
        iolab_testkit::skip(format_args!("io_uring unavailable: {e}"));
        return;
    }
    let t = TempTarget::new(1 << 20);
    for (what, bad) in
        [("too long", op(0, false, 0, BUF + 4096, 0)), ("no such buffer", op(0, false, 0, 4096, 2 * SLOTS))]
    {
        let mut e =
            UringEngine::new(SLOTS, vec![t.file.clone()], buffers(), clock()).expect("UringEngine::new");
        let pushed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.push_now(bad)));
        assert!(pushed.is_err(), "{what}: push of {bad:?} did not panic");
        let mut out = Vec::new();
        e.submit_and_reap(Some(e.now_ns()), &mut out).expect("submit_and_reap");
        assert!(out.is_empty(), "{what}: the op reached the kernel: {out:?}");
    }
}

#[test]
fn uring_engine_registers_files_and_buffers_as_root() {
    if let Err(e) = uring::probe() {
        iolab_testkit::skip(format_args!("io_uring unavailable: {e}"));
        return;
    }
    let t = TempTarget::new(1 << 20);
    let e = UringEngine::new(SLOTS, vec![t.file.clone()], buffers(), clock()).expect("UringEngine::new");
    let features = e.features();
    println!("io_uring features: {features:?}");
    assert!(features.iter().any(|f| f.starts_with("ring:")), "{features:?}");
    // Root (CAP_IPC_LOCK) has no locked-memory limit for registered buffers.
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false);
    if root {
        assert!(features.iter().any(|f| f == "registered_files"), "{features:?}");
        assert!(features.iter().any(|f| f == "registered_buffers"), "{features:?}");
    } else {
        println!("not root: registered files and buffers not required");
    }
}

#[test]
fn mem_engine_conforms() {
    let store = Arc::new(MemStore::new(SIZE).expect("MemStore::new"));
    let s2 = store.clone();
    let p = Profile {
        label: "mem",
        name: "mem",
        virtual_time: false,
        data: Some(Backing { peek: Box::new(move |o, b| s2.read(o, b)), initial: |_| 0, file: false }),
        slot_buffers: false,
    };
    check(p, |b| MemEngine::new(Some(store.clone()), b, SLOTS, clock()));
}

#[test]
fn null_engine_conforms() {
    let p = Profile { label: "null", name: "null", virtual_time: false, data: None, slot_buffers: false };
    check(p, |b| MemEngine::new(None, b, SLOTS, clock()));
}

#[test]
fn sim_engine_on_virtual_time_conforms() {
    let p =
        Profile { label: "sim virtual", name: "sim", virtual_time: true, data: None, slot_buffers: false };
    check(p, |b| SimEngine::fixed(100_000, 4, SLOTS, b, None));
}

#[test]
fn sim_engine_on_real_clock_conforms() {
    let p = Profile { label: "sim real", name: "sim", virtual_time: false, data: None, slot_buffers: false };
    check(p, |b| SimEngine::fixed(50_000, 8, SLOTS, b, Some(clock())));
}

/// A `mem:` target of `SIZE` bytes and the profile of an engine stack over it (named "mem").
fn mem_target(label: &'static str) -> (Arc<MemStore>, Profile) {
    let store = Arc::new(MemStore::new(SIZE).expect("MemStore::new"));
    let s2 = store.clone();
    let p = Profile {
        label,
        name: "mem",
        virtual_time: false,
        data: Some(Backing { peek: Box::new(move |o, b| s2.read(o, b)), initial: |_| 0, file: false }),
        slot_buffers: false,
    };
    (store, p)
}

/// A write-through cache of 1 MiB in 4 KiB lines over one target (what the suite writes reaches the target
/// before it completes), with its staging buffers after the suite's.
fn write_through() -> WorkerCache {
    let config = CacheConfig {
        capacity_bytes: 1 << 20,
        line_bytes: 4096,
        mode: CacheMode::WriteThrough,
        policy: CachePolicy::default(),
        admit_after: 1,
        dirty_max_pct: 50.0,
        targets: 1,
        keep_data: true,
    };
    WorkerCache {
        cache: Arc::new(Cache::new(config).expect("cache")),
        ids: vec![0],
        dev: None,
        dev_size: 0,
        seq_cutoff: 0,
        first_staging_buf: 2 * SLOTS,
        real_dev: None,
    }
}

/// A verifier of 4 KiB blocks over one target of `size` bytes.
fn verifier(size: u64) -> Arc<Verifier> {
    let config = VerifyConfig {
        block_bytes: 4096,
        run_id: 1,
        targets: vec![TargetInfo { name: "target".into(), size_bytes: size }],
        fail: FailMode::Continue,
        journal: None,
    };
    Arc::new(Verifier::new(config).expect("verifier"))
}

/// One worker's view of `verifier`: the whole target, no read-back.
fn worker_verify(verifier: &Arc<Verifier>) -> WorkerVerify {
    let size = verifier.targets()[0].size_bytes;
    WorkerVerify {
        verifier: verifier.clone(),
        ids: vec![0],
        regions: vec![(0, size)],
        readback: false,
        stop: Arc::new(AtomicBool::new(false)),
        durable: None,
    }
}

/// A link of 400 MB/s and 20 us per command.
fn link() -> Option<iolab_engine::link::SharedLink> {
    let params = LinkParams { preset: "test".into(), mb_s: 400.0, latency_ns: 20_000 };
    Some(Arc::new(Mutex::new(LinkTiming::new(&params))))
}

#[test]
fn cache_over_mem_conforms() {
    let (store, p) = mem_target("cache over mem");
    check(p, |_| {
        // Room for the cache's write-back staging buffers after the suite's.
        let wc = write_through();
        let b = Buffers::new(2 * SLOTS + WRITE_BACK_STAGING, BUF as u64, DataPattern::Random, 7);
        let inner = MemEngine::new(Some(store.clone()), b, SLOTS + wc.extra_slots(), clock());
        CacheEngine::new(inner, wc, SLOTS)
    });
}

#[test]
fn link_over_sim_on_virtual_time_conforms() {
    let p =
        Profile { label: "link over sim", name: "sim", virtual_time: true, data: None, slot_buffers: false };
    check(p, |b| LinkEngine::new(SimEngine::fixed(100_000, 4, SLOTS, b, None), &[link()], SLOTS));
}

#[test]
fn link_over_mem_conforms() {
    let (store, p) = mem_target("link over mem");
    check(p, |b| LinkEngine::new(MemEngine::new(Some(store.clone()), b, SLOTS, clock()), &[link()], SLOTS));
}

#[test]
fn fault_over_mem_without_faults_conforms() {
    let (store, p) = mem_target("fault over mem");
    let faults = Arc::new(Faults::new(Vec::new(), 1, 4096));
    check(p, |b| {
        let wf = WorkerFaults {
            faults: faults.clone(),
            ids: vec![0],
            regions: vec![(0, SIZE)],
            worker: 0,
            units: vec![512],
            verifier: None,
        };
        FaultEngine::new(MemEngine::new(Some(store.clone()), b, SLOTS, clock()), wf, SLOTS)
    });
    assert!(faults.result(None).faults.is_empty());
}

/// Verification stamps a header into every block a write carries, so the bytes on the target are not the
/// ones the suite put in the buffer: its content checks are skipped (tests/verify.rs checks that data path),
/// and the verifier must have found nothing wrong in what the suite did.
#[test]
fn verify_over_mem_conforms() {
    let store = Arc::new(MemStore::new(SIZE).expect("MemStore::new"));
    let verifier = verifier(SIZE);
    let p = Profile {
        label: "verify over mem",
        name: "mem",
        virtual_time: false,
        data: None,
        slot_buffers: true,
    };
    check(p, |b| {
        VerifyEngine::new(
            MemEngine::new(Some(store.clone()), b, SLOTS, clock()),
            worker_verify(&verifier),
            SLOTS,
        )
    });
    let r = verifier.result();
    assert_eq!(r.mismatches, 0, "{r:?}");
}

/// Sim-specific: on virtual time, `servers` ops are served per `latency`, FIFO, and time ends exactly at
/// the last completion (ceil(32 / 4) x 100 us).
#[test]
fn sim_virtual_time_serves_fifo_at_capacity() {
    let mut e = SimEngine::fixed(100_000, 4, SLOTS, buffers(), None);
    for i in 0..SLOTS {
        e.push_now(op(i as u64, false, 0, 4096, i));
    }
    let mut done_at = Vec::new();
    let mut out = Vec::new();
    while done_at.len() < SLOTS as usize {
        let before = out.len();
        e.submit_and_reap(None, &mut out).expect("submit_and_reap");
        done_at.extend(std::iter::repeat_n(e.now_ns(), out.len() - before));
    }
    let order: Vec<u64> = out.iter().map(|c| c.user_data & 0xFFFF).collect();
    assert_eq!(order, (0..SLOTS as u64).collect::<Vec<_>>(), "FIFO order");
    for (i, t) in done_at.iter().enumerate() {
        assert_eq!(*t, (i as u64 / 4 + 1) * 100_000, "completion {i}");
    }
}
