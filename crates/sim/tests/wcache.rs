//! Write caches on virtual time, exact to the nanosecond: what a write, a flush, a durable write and a trim
//! cost on a volatile, a power-loss protected and a write-through cache, computed from the parameters.

mod common;
use common::spec;
use iolab_sim::models::Fixed;
use iolab_sim::{Cached, Done, Model, Request, SharedDevice, WriteCache, WriteCacheParams};
use iolab_spec::sim::{NVME_WRITE_CACHE, SATA_WRITE_CACHE};

/// Media time of one write on the test device: a `sim:fixed` with one server.
const MEDIA_NS: u64 = 100_000;
/// The test cache takes 1 byte per ns (1,000 MB/s) and 10 us per write.
const CACHE_NS: u64 = 10_000;
const FLUSH_NS: u64 = 5_000;
const TRIM_NS: u64 = 2_000;
const BLK: u32 = 4096;

fn params(kind: WriteCache, size_bytes: u64) -> WriteCacheParams {
    WriteCacheParams::new(kind, size_bytes, CACHE_NS, 1000.0, FLUSH_NS, TRIM_NS)
}

/// A write-back cache (volatile or power-loss protected) over the test device.
fn cache(kind: WriteCache, size_bytes: u64) -> Cached {
    Cached::new(&params(kind, size_bytes), 1, 16, |room| Box::new(Fixed::new(MEDIA_NS, 1, room)))
}

/// The test device write-through, as [`Cached::build`] makes it (the [`iolab_sim::wcache::WriteThrough`]
/// model, which production uses).
fn write_through() -> Box<dyn Model> {
    Cached::build(&params(WriteCache::WriteThrough, 0), 1, 16, |room| Box::new(Fixed::new(MEDIA_NS, 1, room)))
}

/// Runs the device to `t` and returns what completed.
fn at(m: &mut dyn Model, t: u64) -> Vec<Done> {
    let mut out = Vec::new();
    m.advance(t, &mut out);
    out
}

/// Runs the device until nothing is pending and returns what completed.
fn settle(m: &mut dyn Model) -> Vec<Done> {
    let mut out = Vec::new();
    while let Some(t) = m.next_event_ns() {
        m.advance(t, &mut out);
    }
    out
}

fn d(tag: u64, at_ns: u64) -> Done {
    Done { tag, at_ns }
}

/// Write i (of 4 submitted together at 0) is in the cache after i + 1 transfers of 4096 ns, plus 10 us.
fn ack(i: u64) -> u64 {
    (i + 1) * BLK as u64 + CACHE_NS
}

/// Four 4 KiB writes at time 0, at offsets 0, 4K, 8K, 12K, with tags 0..4.
fn four_writes(m: &mut dyn Model) {
    for i in 0..4 {
        m.submit(0, Request::write(i, i * BLK as u64, BLK));
    }
}

#[test]
fn volatile_writes_complete_at_cache_speed_and_a_flush_waits_for_the_media() {
    let mut m = cache(WriteCache::Volatile, 1 << 20);
    four_writes(&mut m);
    assert_eq!(at(&mut m, 30_000), (0..4).map(|i| d(i, ack(i))).collect::<Vec<_>>());
    assert_eq!(m.dirty_bytes(), 4 * BLK as u64);
    m.submit(30_000, Request::flush(9));
    // Drains one at a time from the first write's completion: 4 media writes back to back.
    let stable = ack(0) + 4 * MEDIA_NS;
    assert_eq!(settle(&mut m), vec![d(9, stable + FLUSH_NS)]);
    assert_eq!(m.dirty_bytes(), 0);
}

#[test]
fn a_flush_covers_only_the_writes_completed_before_it() {
    let mut m = cache(WriteCache::Volatile, 1 << 20);
    four_writes(&mut m);
    // At 20 us writes 0 and 1 have completed, 2 and 3 not yet.
    assert_eq!(at(&mut m, 20_000).len(), 2);
    m.submit(20_000, Request::flush(9));
    let out = settle(&mut m);
    let flush = out.iter().find(|x| x.tag == 9).unwrap();
    assert_eq!(flush.at_ns, ack(0) + 2 * MEDIA_NS + FLUSH_NS);
}

#[test]
fn an_idle_volatile_flush_costs_the_command_alone() {
    let mut m = cache(WriteCache::Volatile, 1 << 20);
    m.submit(1_000, Request::flush(1));
    assert_eq!(settle(&mut m), vec![d(1, 1_000 + FLUSH_NS)]);
}

#[test]
fn power_protected_flushes_cost_the_fixed_amount() {
    let mut m = cache(WriteCache::PowerProtected, 1 << 20);
    four_writes(&mut m);
    assert_eq!(at(&mut m, 30_000), (0..4).map(|i| d(i, ack(i))).collect::<Vec<_>>());
    m.submit(30_000, Request::flush(9));
    assert_eq!(at(&mut m, 50_000), vec![d(9, 30_000 + FLUSH_NS)]);
    // The data still drains in the background.
    assert!(m.dirty_bytes() > 0 && m.next_event_ns().is_some());
    settle(&mut m);
    assert_eq!(m.dirty_bytes(), 0);
}

#[test]
fn a_durable_write_costs_media_time_on_volatile_and_cache_time_on_plp() {
    let mut v = cache(WriteCache::Volatile, 1 << 20);
    v.submit(0, Request::durable_write(1, 0, BLK));
    assert_eq!(settle(&mut v), vec![d(1, MEDIA_NS)]);
    assert_eq!(v.expected_service_ns(true, BLK), (BLK as u64 + CACHE_NS) as f64, "a plain write's figure");

    let mut p = cache(WriteCache::PowerProtected, 1 << 20);
    p.submit(0, Request::durable_write(1, 0, BLK));
    assert_eq!(at(&mut p, 1_000_000), vec![d(1, ack(0))]);

    let mut w = write_through();
    w.submit(0, Request::durable_write(1, 0, BLK));
    assert_eq!(settle(w.as_mut()), vec![d(1, MEDIA_NS)]);
}

#[test]
fn a_durable_write_on_volatile_also_waits_for_earlier_writes() {
    let mut m = cache(WriteCache::Volatile, 1 << 20);
    m.submit(0, Request::write(0, 0, BLK));
    m.submit(0, Request::write(1, 1 << 20, BLK));
    assert_eq!(at(&mut m, 20_000).len(), 2);
    m.submit(20_000, Request::durable_write(2, 1 << 21, BLK));
    // Media (one server, FIFO): write 0's drain from ack(0), the durable write queued behind it, then write
    // 1's drain (one drain at a time, after write 0's). The durable write completes when write 1 is stable.
    let durable_on_media = ack(0) + 2 * MEDIA_NS;
    let write1_stable = ack(0) + 3 * MEDIA_NS;
    assert!(durable_on_media < write1_stable);
    assert_eq!(settle(&mut m), vec![d(2, write1_stable)]);
}

#[test]
fn a_trim_drops_dirty_data_so_the_next_flush_has_less_to_do() {
    let mut m = cache(WriteCache::Volatile, 1 << 20);
    four_writes(&mut m);
    at(&mut m, 30_000);
    // Write 0 is on its way to the media; writes 1 and 2 are dropped, write 3 stays.
    m.submit(30_000, Request::trim(8, BLK as u64, 2 * BLK));
    assert_eq!(m.dirty_bytes(), 2 * BLK as u64);
    m.submit(30_000, Request::flush(9));
    assert_eq!(settle(&mut m), vec![d(8, 30_000 + TRIM_NS), d(9, ack(0) + 2 * MEDIA_NS + FLUSH_NS)]);
}

#[test]
fn a_trim_inside_an_extent_splits_it() {
    let mut m = cache(WriteCache::Volatile, 1 << 20);
    m.submit(0, Request::write(0, 0, BLK));
    m.submit(0, Request::write(1, 1 << 20, BLK));
    at(&mut m, 20_000);
    m.submit(20_000, Request::trim(8, (1 << 20) + 1024, 1024));
    assert_eq!(m.dirty_bytes(), 2 * BLK as u64 - 1024);
    m.submit(20_000, Request::flush(9));
    // Write 0, then the two pieces of write 1, each one media write.
    let out = settle(&mut m);
    assert_eq!(out.last(), Some(&d(9, ack(0) + 3 * MEDIA_NS + FLUSH_NS)));
}

#[test]
fn write_through_writes_take_media_time_and_flushes_the_fixed_cost() {
    let mut m = write_through();
    m.submit(0, Request::write(0, 0, BLK));
    m.submit(0, Request::flush(1));
    m.submit(0, Request::trim(2, 0, BLK));
    assert_eq!(settle(m.as_mut()), vec![d(2, TRIM_NS), d(1, FLUSH_NS), d(0, MEDIA_NS)]);
    assert_eq!(m.expected_service_ns(true, BLK), MEDIA_NS as f64);
}

#[test]
fn a_full_cache_makes_writes_wait_for_room() {
    let mut m = cache(WriteCache::Volatile, 2 * BLK as u64);
    for i in 0..3 {
        m.submit(0, Request::write(i, i * BLK as u64, BLK));
    }
    // Write 2 is taken when write 0 reaches the media, then transferred and acknowledged.
    let room = ack(0) + MEDIA_NS;
    assert_eq!(at(&mut m, 1_000_000)[..3], [d(0, ack(0)), d(1, ack(1)), d(2, room + BLK as u64 + CACHE_NS)]);
}

/// `sim:ssd,sata` (volatile) with a fixed service and one channel: the flush ends when the flash has
/// written both writes, each its 65 us median after the previous one.
#[test]
fn sata_preset_flush_waits_for_the_flash() {
    let c = SATA_WRITE_CACHE;
    assert_eq!(c.kind, WriteCache::Volatile);
    let media = match spec("sim:ssd,sata,sigma=0,channels=1") {
        iolab_spec::SimSpec::Ssd(p) => p,
        _ => unreachable!(),
    };
    let mut m = iolab_sim::build(&spec("sim:ssd,sata,sigma=0,channels=1"), 1, 8);
    m.submit(0, Request::write(0, 0, BLK));
    m.submit(0, Request::write(1, 1 << 20, BLK));
    let xfer = BLK as f64 * 1e3 / c.mb_s;
    let acks = [xfer.round() as u64 + c.write_ns, (2.0 * xfer).round() as u64 + c.write_ns];
    assert_eq!(at(m.as_mut(), 100_000), vec![d(0, acks[0]), d(1, acks[1])]);
    m.submit(100_000, Request::flush(9));
    let stable = acks[0] + 2 * media.write_ns;
    assert_eq!(settle(m.as_mut()), vec![d(9, stable + c.flush_ns)]);
    // The same drive with wcache=plp: the flush costs its fixed amount.
    let mut p = iolab_sim::build(&spec("sim:ssd,sata,sigma=0,channels=1,wcache=plp"), 1, 8);
    p.submit(0, Request::write(0, 0, BLK));
    at(p.as_mut(), 100_000);
    p.submit(100_000, Request::flush(9));
    assert_eq!(at(p.as_mut(), 10_000_000), vec![d(9, 100_000 + c.flush_ns)]);
}

#[test]
fn nvme_preset_is_power_protected() {
    let c = NVME_WRITE_CACHE;
    let mut m = iolab_sim::build(&spec("sim:ssd,nvme"), 1, 8);
    m.submit(0, Request::durable_write(0, 0, BLK));
    let ack = (BLK as f64 * 1e3 / c.mb_s).round() as u64 + c.write_ns;
    assert_eq!(at(m.as_mut(), 1_000_000), vec![d(0, ack)]);
    m.submit(1_000_000, Request::flush(1));
    assert_eq!(at(m.as_mut(), 2_000_000), vec![d(1, 1_000_000 + c.flush_ns)]);
}

/// A volatile disk acknowledges a random write from its cache; with `wcache=none` it waits for the platter.
#[test]
fn hdd_preset_caches_writes_unless_told_not_to() {
    let first = |s: &str, req: Request| {
        let mut m = iolab_sim::build(&spec(s), 3, 8);
        m.submit(0, req);
        settle(m.as_mut()).iter().find(|x| x.tag == req.tag).unwrap().at_ns
    };
    let w = Request::write(0, 123 << 20, BLK);
    let cached = first("sim:hdd", w);
    assert_eq!(cached, (BLK as f64 * 1e3 / 550.0).round() as u64 + 200_000);
    assert!(first("sim:hdd,wcache=none", w) > 2 * cached);
    assert!(first("sim:hdd", Request::durable_write(0, 123 << 20, BLK)) > 2 * cached);
}

/// Kinds cross a link unchanged: a flush and a durable write behind `link:fc4g` cost what they cost on the
/// device, plus the link; had the link turned them into reads or plain writes they would cost far less.
#[test]
fn a_link_passes_flushes_and_durable_writes_through() {
    let c = SATA_WRITE_CACHE;
    let t = iolab_spec::TargetSpec::parse("link:fc4g:sim:ssd,sata,sigma=0,channels=1").unwrap();
    let mut m = iolab_sim::build_target(&t, 1, 8).unwrap();
    // 4096 bytes at 400 MB/s = 10,240 ns on the wire, then 5 us of latency.
    let arrive = 10_240 + 5_000;
    m.submit(0, Request::write(0, 0, BLK));
    let ack = (arrive as f64 + BLK as f64 * 1e3 / c.mb_s).round() as u64 + c.write_ns;
    assert_eq!(at(m.as_mut(), 50_000), vec![d(0, ack)]);
    m.submit(50_000, Request::flush(1));
    assert_eq!(settle(m.as_mut()), vec![d(1, ack + 65_000 + c.flush_ns)]);

    let mut m = iolab_sim::build_target(&t, 1, 8).unwrap();
    m.submit(0, Request::durable_write(0, 0, BLK));
    assert_eq!(settle(m.as_mut()), vec![d(0, arrive + 65_000)]);
}

#[test]
fn a_shared_device_passes_kinds_through() {
    let dev = SharedDevice::new(Box::new(cache(WriteCache::Volatile, 1 << 20)), 2, 8);
    dev.submit(0, 0, Request::write(7, 0, BLK));
    let mut out = Vec::new();
    dev.poll(0, 20_000, &mut out);
    assert_eq!(out, vec![d(7, ack(0))]);
    dev.submit(1, 20_000, Request::flush(3));
    let mut t = 20_000;
    out.clear();
    loop {
        let next = dev.poll(1, t, &mut out);
        if !out.is_empty() {
            break;
        }
        t = next.expect("the flush is pending");
    }
    assert_eq!(out, vec![d(3, ack(0) + MEDIA_NS + FLUSH_NS)]);
}

/// Issue 36, item 3: the cache says how full it got. Four writes into a 1 MiB cache: all taken, all dirty at
/// once (the media drains one at a time, from the first write's completion), none waited, and the peak came
/// with the fourth write's admission at time 0. Into a cache of three blocks the fourth waits for room.
#[test]
fn the_cache_reports_what_it_took_its_dirty_peak_and_the_writes_that_waited() {
    let mut m = cache(WriteCache::Volatile, 1 << 20);
    four_writes(&mut m);
    settle(&mut m);
    let f = m.write_cache_fill().expect("a write-back cache");
    assert_eq!((f.size_bytes, f.volatile), (1 << 20, true));
    assert_eq!((f.taken_bytes, f.peak_dirty_bytes, f.waited_writes, f.growth_ns), (4 * 4096, 4 * 4096, 0, 0));
    let mut small = cache(WriteCache::PowerProtected, 3 * BLK as u64);
    four_writes(&mut small);
    settle(&mut small);
    let f = small.write_cache_fill().expect("a write-back cache");
    assert_eq!(
        (f.volatile, f.taken_bytes, f.peak_dirty_bytes, f.waited_writes),
        (false, 4 * 4096, 3 * 4096, 1)
    );
    assert_eq!(write_through().write_cache_fill(), None, "nothing to fill");
}
