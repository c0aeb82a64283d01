use super::*;
use crate::derive::Deriver;
use crate::{TraceOp, TraceRecord};

/// A small deterministic generator (xorshift).
struct Xs(u64);
impl Xs {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// 20,000 ops at 1,000 a second over a 10 GiB footprint: random reads with `read_zone`, random writes with
/// `write_zone` (each picks the tenth of the footprint an op lands in), a flush after every 4th write.
fn shape(seed: u64, read_zone: fn(&mut Xs) -> u64, write_zone: fn(&mut Xs) -> u64) -> Shape {
    let mut x = Xs(seed);
    let mut d = Deriver::new();
    d.add(&TraceRecord::new(0, TraceOp::Read, 0, 0, 4096));
    d.add(&TraceRecord::new(1, TraceOp::Read, 0, (10 << 30) - 4096, 4096));
    let mut writes = 0;
    for i in 0..20_000u64 {
        let (op, zone) = if x.below(2) == 0 {
            (TraceOp::Read, read_zone(&mut x))
        } else {
            (TraceOp::Write, write_zone(&mut x))
        };
        let offset = zone * (1 << 30) + x.below(1 << 18) * 4096;
        d.add(&TraceRecord::new(i * 1_000_000 + 2, op, 0, offset, 4096));
        if op == TraceOp::Write {
            writes += 1;
            if writes % 4 == 0 {
                d.add(&TraceRecord::new(i * 1_000_000 + 3, TraceOp::Flush, 0, 0, 0));
            }
        }
    }
    d.finish();
    d.shape(0).unwrap()
}

fn failed(rows: &[PropertyCheck]) -> Vec<&'static str> {
    rows.iter().filter(|r| !r.pass).map(|r| r.property).collect()
}

#[test]
fn two_runs_of_one_shape_pass_every_property() {
    let a = shape(1, |_| 0, |_| 5);
    let b = shape(2, |_| 0, |_| 5);
    let rows = compare(&a, &b);
    assert_eq!(rows.len(), 13, "{rows:?}");
    assert!(failed(&rows).is_empty(), "{rows:#?}");
}

/// The derivation issue 36 found: one zone map for reads and writes. Each kind's zones then fail.
#[test]
fn merged_zone_maps_fail_the_zone_properties() {
    let trace = shape(1, |_| 0, |_| 5);
    let merged = shape(2, |x| if x.below(2) == 0 { 0 } else { 5 }, |x| if x.below(2) == 0 { 0 } else { 5 });
    let rows = compare(&trace, &merged);
    assert_eq!(failed(&rows), ["random read zones", "random write zones"], "{rows:#?}");
}

#[test]
fn a_lost_sequential_share_and_a_whole_device_footprint_fail() {
    let trace = Shape { seq_reads: 500, ..shape(1, |_| 0, |_| 5) };
    let mut run = shape(2, |_| 0, |_| 5);
    run.footprint_bytes *= 40;
    let rows = compare(&trace, &run);
    assert!(failed(&rows).contains(&"sequential reads (of reads)"), "{rows:#?}");
    assert!(failed(&rows).contains(&"footprint"), "{rows:#?}");
    let burst = Shape { gaps_cv2: Some(17.0), ..shape(1, |_| 0, |_| 5) };
    assert!(failed(&compare(&burst, &run)).contains(&"burstiness (ops per instant)"));
}
