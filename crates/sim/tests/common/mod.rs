#![allow(dead_code)]
use iolab_sim::bench::{closed_loop, ClosedLoad, LoopMeasured};
use iolab_spec::{SimSpec, TargetSpec};

pub fn spec(s: &str) -> SimSpec {
    match TargetSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}")) {
        TargetSpec::Sim(x) => x,
        other => panic!("{s} is not a sim target: {other:?}"),
    }
}

pub fn run(s: &str, qd: usize, len: u32, write_fraction: f64, ios: u64, seed: u64) -> (LoopMeasured, f64) {
    let sp = spec(s);
    let mut m = iolab_sim::build(&sp, seed, 64);
    let r = closed_loop(
        m.as_mut(),
        &ClosedLoad {
            qd,
            len,
            write_fraction,
            region: sp.size_bytes(),
            warmup: ios / 10,
            ios,
            seed: seed ^ 0x55,
        },
    );
    (r, m.expected_service_ns(write_fraction >= 0.5, len))
}
