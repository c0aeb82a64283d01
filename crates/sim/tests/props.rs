//! The [`Model`] contract of every model, checked on every step of many random runs, VOPR-style (TigerBeetle's
//! simulator: a seed picks a device and a workload, adverse conditions are injected, invariants are checked
//! as it runs, and a failure names the seed that reproduces it).
//!
//! Every model is driven behind [`Checked`], which asserts the contract on each call (times, at most
//! `max_in_flight` in flight, every completion once, in order, never early or late, `in_flight()` and
//! `next_event_ns` consistent); the driver adds what a wrapper cannot see: every request completes in the
//! end, and the model allocates nothing once built (a counting allocator, armed only inside model calls).
//!
//! The models have no faults of their own (`--inject` acts in the engine, above the device, where it turns
//! into other request streams: shorter, elsewhere or missing). What is injected here is what a device must
//! survive from its caller: bursts up to `max_in_flight` at one instant, a caller that wakes late and advances
//! over many events at once, or twice to the same time, long idle gaps, zero-length and unaligned requests,
//! requests at the end of the device, overlapping writes, durable writes, flushes and trims on tiny caches
//! that run out of room and extents.
//!
//! `VOPR_SEED=N` runs seed N alone and prints its device (with `VOPR_TRAP=1` it panics at the first allocation
//! inside a model call, so the backtrace names it); `VOPR_SEEDS=N` runs seeds 0..N (default 400).

mod common;
use iolab_rng::SplitMix64;
use iolab_sim::check::Checked;
use iolab_sim::{Done, Model, Request};
use proptest::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// The system allocator, counting the allocations (and reallocations) of the current thread while armed.
struct Counting;

/// `VOPR_TRAP=1` (with `VOPR_SEED`): panic at the first allocation inside a model call, to see where it is.
static TRAP: AtomicBool = AtomicBool::new(false);

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn note_allocation() {
    let _ = ARMED.try_with(|armed| {
        if armed.get() {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
            if TRAP.load(Ordering::Relaxed) {
                armed.set(false);
                panic!("an allocation inside a model call (VOPR_TRAP): the backtrace names it");
            }
        }
    });
}

// SAFETY: every call is passed on to the system allocator unchanged; counting touches only const-initialised
// thread-locals without destructors, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller's contract for `alloc` is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from the system allocator, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: as for `dealloc`; the caller's contract for `new_size` is the system allocator's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns what it returned and the allocations it made on this thread.
fn counted<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = ALLOCATIONS.with(Cell::get);
    ARMED.with(|a| a.set(true));
    let r = f();
    ARMED.with(|a| a.set(false));
    (r, ALLOCATIONS.with(Cell::get) - before)
}

/// A model under test and what its driver knows.
struct Harness {
    model: Checked,
    max: usize,
    size: u64,
    now: u64,
    /// Requests submitted (tags are 0, 1, 2, ...), and completed.
    submitted: u64,
    completed: Vec<bool>,
    out: Vec<Done>,
    /// Allocations made inside model calls.
    allocations: u64,
}

impl Harness {
    /// `target` built for `seed` with room for `max` requests, behind [`Checked`] (in release builds too).
    fn new(target: &str, seed: u64, max: usize) -> Harness {
        let spec = iolab_spec::TargetSpec::parse(target).unwrap_or_else(|e| panic!("{target}: {e}"));
        let size = match spec.base() {
            iolab_spec::TargetSpec::Sim(s) => s.size_bytes(),
            other => panic!("{target} is not emulated: {other:?}"),
        };
        let model = iolab_sim::build_target(&spec, seed, max).expect("an emulated target");
        Harness {
            model: Checked::new(model, max),
            max,
            size,
            now: 0,
            submitted: 0,
            completed: Vec::with_capacity(1024),
            out: Vec::with_capacity(16 * max + 256),
            allocations: 0,
        }
    }

    fn in_flight(&self) -> usize {
        self.model.in_flight()
    }

    /// `advance(t)`; the completions are checked by [`Checked`] and marked here.
    fn advance(&mut self, t: u64) {
        self.now = self.now.max(t);
        self.out.clear();
        let (model, out, now) = (&mut self.model, &mut self.out, self.now);
        self.allocations += counted(|| model.advance(now, out)).1;
        for d in &self.out {
            let done = &mut self.completed[d.tag as usize];
            assert!(!*done, "tag {} completed twice", d.tag);
            *done = true;
        }
    }

    /// Moves time to `t` as an engine on virtual time does: through every event on the way.
    fn step_to(&mut self, t: u64) {
        while let Some(e) = self.model.next_event_ns().filter(|&e| e <= t) {
            self.advance(e);
        }
        self.advance(t);
    }

    /// Waits for room: advances to the next event until fewer than `max` are in flight.
    fn make_room(&mut self) {
        while self.in_flight() >= self.max {
            let t = self.model.next_event_ns().expect("requests in flight have an event");
            self.advance(t);
        }
    }

    /// Submits one request now, of `kind` (0-3 read, 4-6 write, 7 durable write, 8 flush, 9 trim), its range
    /// clamped to the device.
    fn submit(&mut self, kind: u8, offset: u64, len: u32) {
        let len = (len as u64).min(self.size) as u32;
        let offset = offset.min(self.size - len as u64);
        let tag = self.submitted;
        let req = match kind {
            0..=3 => Request::read(tag, offset, len),
            4..=6 => Request::write(tag, offset, len),
            7 => Request::durable_write(tag, offset, len),
            8 => Request::flush(tag),
            _ => Request::trim(tag, offset, len),
        };
        let (model, now) = (&mut self.model, self.now);
        self.allocations += counted(|| model.submit(now, req)).1;
        self.submitted += 1;
        self.completed.push(false);
    }

    /// Runs every event; every request must have completed.
    fn finish(&mut self) {
        while let Some(t) = self.model.next_event_ns() {
            self.advance(t);
        }
        assert_eq!(self.in_flight(), 0, "requests left in flight with no event");
        let missing = self.completed.iter().filter(|&&c| !c).count();
        assert_eq!(missing, 0, "{missing} of {} requests never completed", self.submitted);
    }
}

// ---- The seeded runs (VOPR) ----

fn pick<T: Copy>(g: &mut SplitMix64, xs: &[T]) -> T {
    xs[g.below(xs.len() as u64) as usize]
}

fn chance(g: &mut SplitMix64, p: f64) -> bool {
    g.next_f64() < p
}

/// A device (`,` between keys) or array member (`:`) write cache: the preset's, none, or a kind and maybe a
/// tiny size (64 KiB: writes wait for room and run out of extents).
fn wcache(g: &mut SplitMix64, sep: char) -> String {
    let kind = pick(g, &["", "none", "volatile", "plp"]);
    if kind.is_empty() {
        return String::new();
    }
    let size = if kind != "none" && chance(g, 0.5) { format!("{sep}wcache_size=64K") } else { String::new() };
    format!("{sep}wcache={kind}{size}")
}

/// A random emulated target, and the bytes of its stripe row when it is an array.
fn target(g: &mut SplitMix64) -> (String, Option<u64>) {
    let (device, row) = match g.below(4) {
        0 => {
            let (lat, servers) = (pick(g, &[1, 20, 100, 500]), pick(g, &[1, 2, 3, 8]));
            (format!("sim:fixed,latency={lat}us,servers={servers},size=64M"), None)
        }
        1 => {
            let (preset, size, ncq) =
                (pick(g, &["7k2", "10k", "15k"]), pick(g, &["64M", "1G"]), pick(g, &[1, 4, 32]));
            (format!("sim:hdd,{preset},size={size},ncq={ncq}{}", wcache(g, ',')), None)
        }
        2 => {
            let (preset, sigma, channels) =
                (pick(g, &["sata", "nvme"]), pick(g, &["0", "0.3", "1.5"]), pick(g, &[1, 4, 16]));
            let bw = pick(g, &["", ",read_bw=50", ",write_bw=20"]);
            (
                format!("sim:ssd,{preset},size=64M,sigma={sigma},channels={channels}{bw}{}", wcache(g, ',')),
                None,
            )
        }
        _ => array(g),
    };
    if chance(g, 0.3) {
        return (format!("link:{}:{device}", pick(g, &["fc1g", "fc8g", "10gbe", "fc64g"])), row);
    }
    (device, row)
}

fn array(g: &mut SplitMix64) -> (String, Option<u64>) {
    let raid = pick(g, &[0u32, 5, 10]);
    let disks = match raid {
        5 => 3 + g.below(4),
        10 => pick(g, &[2, 4, 6]),
        _ => 2 + g.below(5),
    };
    let data = match raid {
        5 => disks - 1,
        10 => disks / 2,
        _ => disks,
    };
    let stripe = pick(g, &[512u64, 4096, 16 << 10, 64 << 10]);
    let member = pick(g, &["hdd:10k", "hdd:15k:ncq=4", "ssd:sata", "ssd:nvme:sigma=0"]);
    let (controller, cache) = (pick(g, &["0", "50us"]), wcache(g, ','));
    let text = format!(
        "sim:array,raid={raid},disks={disks},stripe={stripe},member={member}:size=16M{},controller={controller}{cache}",
        wcache(g, ':')
    );
    (text, Some(stripe * data))
}

/// What a seed's requests look like.
struct Workload {
    /// Weights of read, write, durable write, flush and trim (a run may have none of a kind).
    weights: [u64; 5],
    max_len: u32,
    /// Most offsets in the first 256 KiB, so writes overlap and trims cut cached extents.
    hot: bool,
    /// Where the last request ended: the next sequential offset.
    seq_next: u64,
}

impl Workload {
    fn new(g: &mut SplitMix64, max_len: u32) -> Workload {
        let weights: [u64; 5] = std::array::from_fn(|_| pick(g, &[0, 1, 4]));
        let weights = if weights.iter().sum::<u64>() == 0 { [1, 1, 0, 0, 0] } else { weights };
        Workload { weights, max_len, hot: chance(g, 0.5), seq_next: 0 }
    }

    /// Submits the next request, once there is room.
    fn submit(&mut self, g: &mut SplitMix64, h: &mut Harness) {
        h.make_room();
        let kind = kind(g, &self.weights);
        let len = length(g, self.max_len);
        let offset = match g.below(4) {
            0 => self.seq_next,
            _ if self.hot => g.below(256 << 10),
            1 => g.below(h.size) & !511,
            _ => g.below(h.size),
        };
        self.seq_next = offset + len as u64;
        h.submit(kind, offset, len);
    }
}

/// One seeded run: a random device, `max_in_flight`, request mix, lengths, offsets and pacing.
fn vopr(seed: u64, verbose: bool) {
    let mut g = SplitMix64::new(seed);
    let (text, row) = target(&mut g);
    let max = pick(&mut g, &[1usize, 2, 3, 8, 16, 32, 64, 300]);
    let max_len = pick(&mut g, &[4096u32, 16 << 10, 64 << 10, 1 << 20]);
    if verbose {
        println!("seed {seed}: {text}, max_in_flight {max}, requests up to {max_len} bytes");
    }
    let mut h = Harness::new(&text, g.next_u64(), max);
    let mut work = Workload::new(&mut g, max_len);
    for _ in 0..100 + g.below(200) {
        pace(&mut g, &mut h);
        // Now and then a burst at this instant, up to the room left.
        let room = h.max - h.in_flight().min(h.max - 1);
        let burst = if chance(&mut g, 0.1) { 1 + g.below(room as u64) } else { 1 };
        for _ in 0..burst {
            work.submit(&mut g, &mut h);
        }
    }
    h.finish();
    // Within the documented bound an array's members never outgrow the room it gave them (requests up to one
    // stripe row); past it a member's queue may grow once, which is the one allocation allowed.
    if row.is_none_or(|row| max_len as u64 <= row) {
        assert_eq!(
            h.allocations, 0,
            "seed {seed}: {text}: the model allocated {} times after build",
            h.allocations
        );
    }
}

/// Moves time before the next submission: not at all (a burst), a little, a lot, or very far, through every
/// event or jumping over them, sometimes advancing twice to the same time.
fn pace(g: &mut SplitMix64, h: &mut Harness) {
    let gap = match g.below(10) {
        0..=2 => 0,
        3..=6 => g.below(20_000),
        7 | 8 => g.below(3_000_000),
        _ => g.below(2_000_000_000),
    };
    let t = h.now + gap;
    match g.below(3) {
        0 => h.step_to(t),
        1 => h.advance(t),
        _ => {
            h.advance(t);
            h.advance(t);
        }
    }
}

fn kind(g: &mut SplitMix64, weights: &[u64; 5]) -> u8 {
    let mut x = g.below(weights.iter().sum());
    for (i, &w) in weights.iter().enumerate() {
        if x < w {
            return [0, 4, 7, 8, 9][i];
        }
        x -= w;
    }
    unreachable!()
}

/// Zero sometimes, odd sometimes, mostly a multiple of 512 up to `max_len`.
fn length(g: &mut SplitMix64, max_len: u32) -> u32 {
    match g.below(20) {
        0 => 0,
        1 => 1 + g.below(max_len as u64) as u32,
        _ => (1 + g.below(max_len as u64 / 512)) as u32 * 512,
    }
}

#[test]
fn vopr_every_model_keeps_its_contract_over_many_seeds() {
    if let Some(seed) = std::env::var("VOPR_SEED").ok().and_then(|s| s.parse().ok()) {
        TRAP.store(std::env::var_os("VOPR_TRAP").is_some(), Ordering::Relaxed);
        return vopr(seed, true);
    }
    let seeds: u64 = std::env::var("VOPR_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(400);
    let failed: Vec<u64> =
        (0..seeds).filter(|&seed| std::panic::catch_unwind(|| vopr(seed, false)).is_err()).collect();
    if let Some(&first) = failed.first() {
        eprintln!("failing seeds: {failed:?}");
        vopr(first, true); // again, naming the device, to fail with its message
        panic!("seed {first} failed once only: a model is not deterministic for its seed");
    }
}

// ---- Shrinking cases (proptest) over fixed devices ----

const TARGETS: &[&str] = &[
    "sim:fixed,latency=50us,servers=3,size=64M",
    "sim:hdd,7k2,size=64M,ncq=4",
    "sim:hdd,15k,size=1G",
    "sim:ssd,sata,size=64M",
    "sim:ssd,sata,size=64M,wcache_size=64K",
    "sim:hdd,15k,size=1G,wcache=plp,wcache_size=64K",
    "sim:ssd,nvme,size=64M,sigma=1.5,read_bw=50",
    "sim:array,disks=3,stripe=4K,member=hdd:10k:size=16M",
    "sim:array,disks=4,raid=0,stripe=8K,member=ssd:sata:size=16M",
    "sim:array,disks=4,raid=10,stripe=4K,member=hdd:15k:size=16M",
    "sim:array,disks=5,stripe=16K,member=ssd:nvme:size=16M,size=32M",
];

#[derive(Clone, Debug)]
struct Step {
    gap_ns: u64,
    /// 0-3 read, 4-6 write, 7 durable write, 8 flush, 9 trim.
    kind: u8,
    block: u64,
    blocks: u32,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (0u64..3_000_000, 0u8..10, 0u64..4096, 0u32..40).prop_map(|(gap_ns, kind, block, blocks)| Step {
            gap_ns,
            kind,
            block,
            blocks,
        }),
        1..120,
    )
}

fn check(target: &str, steps: &[Step], link: Option<&str>) {
    let text = match link {
        Some(l) => format!("link:{l}:{target}"),
        None => target.to_string(),
    };
    let mut h = Harness::new(&text, 17, 16);
    for s in steps {
        h.step_to(h.now + s.gap_ns);
        h.make_room();
        h.submit(s.kind, s.block * 4096, s.blocks * 512);
    }
    h.finish();
    assert_eq!(h.allocations, 0, "{text}: the model allocated after build");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn every_request_completes_exactly_once(which in 0..TARGETS.len(), steps in steps()) {
        check(TARGETS[which], &steps, None);
    }

    #[test]
    fn every_request_completes_exactly_once_behind_a_link(which in 0..TARGETS.len(), steps in steps(),
                                                          link in prop::sample::select(vec!["fc1g", "fc8g", "10gbe"])) {
        check(TARGETS[which], &steps, Some(link));
    }
}

/// A write-through device's flush and trim completions are merged into the media's in time order without
/// allocating, however many complete in one `advance` (a stable sort did this, and allocated past 256).
#[test]
fn write_through_merges_many_completions_without_allocating() {
    let mut h = Harness::new("sim:fixed,latency=100us,servers=8,size=64M", 1, 600);
    for i in 0..500 {
        h.submit(if i % 50 == 0 { 8 } else { 0 }, i * 4096, 4096);
    }
    h.advance(1_000_000_000);
    assert_eq!(h.out.len(), 500, "all complete by then");
    h.finish();
    assert_eq!(h.allocations, 0, "the model allocated after build");
}

/// A RAID-5 array whose members cache writes serves reads spanning many rows: a member then gets more requests
/// than the room the array gave it (each parity unit on the way starts a new one), which its media queue takes
/// (growing once); the member's write cache, whose slots hold only flushes and durable writes, is untouched.
#[test]
fn members_with_a_write_cache_take_reads_over_many_rows() {
    let target = "sim:array,raid=5,disks=3,stripe=4K,member=hdd:10k:size=16M:wcache=volatile,wcache=none";
    let mut h = Harness::new(target, 1, 8);
    for i in 0..8 {
        h.submit(0, i << 20, 1 << 20);
    }
    h.finish();
}
