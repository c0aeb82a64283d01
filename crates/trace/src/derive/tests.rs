use super::*;

fn rec(start_ns: u64, op: TraceOp, offset: u64, len: u32) -> TraceRecord {
    TraceRecord::new(start_ns, op, 0, offset, len)
}

/// A deriver fed `records` and finished.
fn derived(records: impl IntoIterator<Item = TraceRecord>) -> Deriver {
    let mut d = Deriver::new();
    for r in records {
        d.add(&r);
    }
    d.finish();
    d
}

/// A small deterministic generator (xorshift), so the tests need no seedable crate.
struct Xs(u64);
impl Xs {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn sequential_ops_follow_an_end_of_their_worker_and_direction() {
    let mut recs: Vec<TraceRecord> = (0..10).map(|i| rec(i * 1000, TraceOp::Write, i * 4096, 4096)).collect();
    recs.push(rec(20_000, TraceOp::Read, 1 << 30, 8192));
    let d = derived(recs);
    let t = &d.targets[0];
    assert_eq!(t.ops[&Class::WriteSeq], 9);
    assert_eq!(t.ops[&Class::WriteRandom], 1, "the first write starts nothing");
    assert_eq!(t.ops[&Class::ReadRandom], 1);
}

#[test]
fn ops_written_as_they_completed_are_taken_as_they_started() {
    // Pairs completed in reverse order: still one sequential stream.
    let mut recs = Vec::new();
    for i in 0..50u64 {
        for j in [1, 0] {
            let k = 2 * i + j;
            recs.push(rec(k * 1000, TraceOp::Read, k * 4096, 4096));
        }
    }
    let s = derived(recs).shape(0).unwrap();
    assert_eq!((s.reads, s.seq_reads), (100, 99));
}

#[test]
fn sizes_beyond_the_kept_fold_into_the_nearest() {
    let mut s = Sizes::default();
    for (size, n) in [
        (4096, 50),
        (8192, 30),
        (65536, 10),
        (4608, 1),
        (1 << 20, 5),
        (512, 2),
        (12288, 2),
        (8000, 1),
        (16384, 3),
        (2048, 1),
        (24576, 1),
        (1536, 1),
    ] {
        for _ in 0..n {
            s.add(size);
        }
    }
    let kept = s.kept();
    assert_eq!(kept.len(), MAX_SIZES);
    assert_eq!(kept.iter().map(|k| k.1).sum::<u64>(), 107);
    // Every power-of-two class keeps a size; 4608 and 8000 fold into 8192, of their class, not 4096.
    assert!(kept.contains(&(4096, 50)) && kept.contains(&(8192, 32)), "{kept:?}");
    assert!(kept.contains(&(24576, 1)) && kept.contains(&(2048, 1)), "{kept:?}");
}

#[test]
fn a_spread_widens_down_and_up_and_keeps_its_counts() {
    let mut s = Spread::default();
    s.add(500 << 30);
    s.add(10 << 30);
    s.add(900 << 30);
    assert_eq!(s.counts.iter().sum::<u64>(), 3);
    let z = s.zones(10 << 30, 901 << 30);
    assert!((z[0] - 1.0 / 3.0).abs() < 1e-9 && (z[ZONES - 1] - 1.0 / 3.0).abs() < 1e-9, "{z:?}");
}

#[test]
fn reads_and_writes_get_zone_maps_of_their_own_over_the_footprint() {
    // A trace at 100 GiB..110 GiB: random reads in its first tenth, random writes in its sixth.
    let base = 100u64 << 30;
    let mut x = Xs(7);
    let mut recs = Vec::new();
    for i in 0..20_000u64 {
        let (op, zone) = if i % 2 == 0 { (TraceOp::Read, 0) } else { (TraceOp::Write, 5) };
        let offset = base + zone * (1 << 30) + x.below(1 << 18) * 4096;
        recs.push(rec(i * 1_000_000, op, offset, 4096));
    }
    recs.push(rec(20_000 * 1_000_000, TraceOp::Read, base + (10 << 30) - 4096, 4096));
    let d = derived(recs);
    let s = d.shape(0).unwrap();
    assert_eq!(s.footprint_bytes, 10 << 30);
    assert!(s.read_zones[0] > 0.99 && s.write_zones[5] > 0.99, "{:?} {:?}", s.read_zones, s.write_zones);
    let job = d.job_toml("j", "t", &["sdb".into()], Loop::Open).unwrap();
    assert!(job.contains("sdb = { footprint = \"10g\" }"), "{job}");
    assert!(job.contains("dist = \"zones:99.99") || job.contains("dist = \"zones:100.000/10.000"), "{job}");
    assert!(job.contains(":100.000/10.000:0.000/10.000:0.000/10.000:0.000/10.000:0.000/10.000\""), "{job}");
}

#[test]
fn each_sequential_direction_gets_a_worker_of_its_own() {
    let mut recs = Vec::new();
    let mut x = Xs(3);
    for i in 0..3000u64 {
        recs.push(rec(i * 3_000_000, TraceOp::Read, i * 65536, 65536));
        recs.push(rec(i * 3_000_000 + 1_000_000, TraceOp::Write, (1 << 30) + x.below(1 << 16) * 4096, 4096));
        recs.push(rec(i * 3_000_000 + 2_000_000, TraceOp::Write, (2 << 30) + i * 8192, 8192));
    }
    let job = derived(recs).job_toml("j", "t", &["sdb".into()], Loop::Open).unwrap();
    for w in ["[worker.sdb]", "[worker.sdb_seq_reads]", "[worker.sdb_seq_writes]"] {
        assert!(job.contains(w), "{w}: {job}");
    }
    let read_worker =
        &job[job.find("[worker.sdb_seq_reads]").unwrap()..job.find("[worker.sdb_seq_writes]").unwrap()];
    assert!(read_worker.contains("rw = \"read\"") && !read_worker.contains("randread"), "{read_worker}");
}

#[test]
fn ops_arriving_in_bursts_become_bursts_of_the_same_cv2() {
    let mut recs = Vec::new();
    let mut x = Xs(11);
    let mut t = 0;
    for _ in 0..4000 {
        // Exponential gaps between the instants (Poisson), 1 ms on average.
        let u = (x.below(1 << 30) as f64 + 0.5) / (1u64 << 30) as f64;
        t += (-u.ln() * 1e6) as u64;
        for _ in 0..8 {
            recs.push(rec(t, TraceOp::Read, x.below(1 << 18) * 4096, 4096));
        }
    }
    let d = derived(recs);
    let cv2 = d.shape(0).unwrap().gaps_cv2.unwrap();
    assert_eq!(burst_of(cv2), 8, "CV² {cv2}");
    let job = d.job_toml("j", "t", &["sdb".into()], Loop::Open).unwrap();
    assert!(job.contains("\nburst = 8"), "{job}");
}

#[test]
fn a_trace_without_time_has_no_rate() {
    let d = derived([rec(0, TraceOp::Read, 0, 4096)]);
    let e = d.job_toml("j", "t.csv", &["sda".into()], Loop::Open).unwrap_err();
    assert!(e.contains("--closed"), "{e}");
    assert!(d.job_toml("j", "t.csv", &["sda".into()], Loop::Closed).is_ok());
}

#[test]
fn flushes_per_write_become_fdatasync() {
    let mut recs = Vec::new();
    for i in 0..100u64 {
        recs.push(rec(i * 1_000_000, TraceOp::Write, i * 4096, 4096));
        if i % 4 == 3 {
            recs.push(rec(i * 1_000_000 + 1, TraceOp::Flush, 0, 0));
        }
    }
    let job = derived(recs).job_toml("j", "t", &["/dev/sdb".into()], Loop::Open).unwrap();
    assert!(job.contains("fdatasync = 4"), "{job}");
    assert!(job.contains("[worker.sdb_seq_writes]") && job.contains("sdb = { footprint = \"1m\" }"), "{job}");
}

#[test]
fn weights_beyond_the_largest_are_scaled() {
    assert_eq!(weight(5, 100), 5);
    assert_eq!(weight(3_000_000, 4_000_000), 750_000);
    assert_eq!(weight(1, 4_000_000), 1);
}
