//! Plan tests: layer resolution, limits, binding, and the generator's output.

use super::*;
use crate::gen::{GenOp, OpGen, OpKind};
use iolab_rng::Rng;
use iolab_spec::{JobSpec, Place};

fn job(toml: &str) -> JobSpec {
    JobSpec::from_toml(toml, "t.toml").unwrap()
}

fn mem() -> TargetSpec {
    TargetSpec::parse("mem:64M").unwrap()
}

#[test]
fn defaults_are_randread_4k_qd32_ten_seconds_with_ramp() {
    let p = Plan::from_spec(&JobSpec::default(), Some(&mem())).unwrap();
    assert_eq!(p.duration_ns, Some(DEFAULT_DURATION_NS));
    assert_eq!(p.ramp_ns, DEFAULT_RAMP_NS);
    let w = &p.workers[0];
    assert_eq!(w.qd, 32);
    assert_eq!(w.specs[0].read_pct, 100.0);
    assert_eq!(w.specs[0].random_pct, 100.0);
    assert_eq!(w.specs[0].bs[0].size_bytes, 4096);
    assert!(p.direct);
}

#[test]
fn rw_shorthand_is_overridden_by_read_pct_in_the_same_layer() {
    let p = Plan::from_spec(&job("rw = 'randrw'\nread_pct = 70\n"), Some(&mem())).unwrap();
    assert_eq!(p.workers[0].specs[0].read_pct, 70.0);
    assert_eq!(p.workers[0].specs[0].random_pct, 100.0);
}

#[test]
fn more_specific_rw_beats_less_specific_read_pct() {
    let p = Plan::from_spec(&job("read_pct = 70\n[worker.log]\nrw = 'write'\n"), Some(&mem())).unwrap();
    assert_eq!(p.workers[0].specs[0].read_pct, 0.0);
    assert_eq!(p.workers[0].specs[0].random_pct, 0.0);
}

#[test]
fn cli_forced_layer_wins_over_worker_tables() {
    let mut j = job("[worker.a]\nqd = 4\n[worker.b]\nqd = 8\n");
    let mut cli = JobSpec::default();
    cli.forced.set("qd", "16", &Place::Flag("--qd".into())).unwrap();
    j.apply_overrides(&cli);
    let p = Plan::from_spec(&j, Some(&mem())).unwrap();
    assert!(p.workers.iter().all(|w| w.qd == 16));
}

#[test]
fn top_level_rate_is_split_over_workers() {
    let p = Plan::from_spec(&job("rate = 1000\nworkers = 4\n"), Some(&mem())).unwrap();
    assert!(p.workers.iter().all(|w| w.rate_iops == Some(250.0)));
    let p =
        Plan::from_spec(&job("rate = 1000\n[worker.a]\ncount = 2\n[worker.log]\nrate = 50\n"), Some(&mem()))
            .unwrap();
    assert_eq!(p.workers[0].rate_iops, Some(500.0));
    assert_eq!(p.workers[2].rate_iops, Some(50.0));
}

#[test]
fn ios_limit_is_shared_exactly() {
    let p = Plan::from_spec(&job("ios = 10\nworkers = 3\n"), Some(&mem())).unwrap();
    let total: u64 = p.workers.iter().map(|w| w.ios.unwrap()).sum();
    assert_eq!(total, 10);
    assert_eq!(p.duration_ns, None);
}

#[test]
fn missing_target_is_an_error_naming_the_flag() {
    let e = Plan::from_spec(&JobSpec::default(), None).unwrap_err();
    assert!(e.0.contains("--target"), "{e}");
}

#[test]
fn direct_io_block_size_must_be_sector_multiple() {
    let e = Plan::from_spec(&job("bs = 1000\n"), Some(&mem())).unwrap_err();
    assert!(e.0.contains("512"), "{e}");
    assert!(Plan::from_spec(&job("bs = 1000\ndirect = false\n"), Some(&mem())).is_ok());
}

#[test]
fn huge_buffers_are_refused() {
    assert!(Plan::from_spec(&job("qd = 4096\nbs = '64M'\n"), Some(&mem())).is_err());
}

#[test]
fn virtual_clock_needs_sim_targets() {
    assert!(Plan::from_spec(&job("clock = 'virtual'\n"), Some(&mem())).is_err());
    let sim = TargetSpec::parse("sim:fixed").unwrap();
    assert!(Plan::from_spec(&job("clock = 'virtual'\n"), Some(&sim)).is_ok());
}

#[test]
fn bind_rejects_block_larger_than_target() {
    let p = Plan::from_spec(&job("bs = '8M'\n"), Some(&mem())).unwrap();
    let e = p.bind(&[TargetGeometry { size_bytes: 4 << 20, block_bytes: 512 }]).unwrap_err();
    assert!(e.0.contains("larger than target"), "{e}");
}

#[test]
fn bind_rejects_block_not_multiple_of_sector() {
    let p = Plan::from_spec(&job("bs = '2k'\n"), Some(&mem())).unwrap();
    let e = p.bind(&[TargetGeometry { size_bytes: 1 << 30, block_bytes: 4096 }]).unwrap_err();
    assert!(e.0.contains("4096-byte"), "{e}");
}

#[test]
fn generator_stays_inside_region_and_aligned() {
    let p = Plan::from_spec(
        &job("bs = '4k/50:64k/50'\noffset = '1M'\nlength = '8M'\nread_pct = 50\nrandom_pct = 80\n"),
        Some(&mem()),
    )
    .unwrap();
    let regions = p.bind(&[TargetGeometry { size_bytes: 64 << 20, block_bytes: 512 }]).unwrap();
    let mut g = OpGen::new(&p.workers[0], &regions[0], Rng::new(1));
    let (mut reads, mut n) = (0, 100_000);
    for _ in 0..n {
        let op = g.next_op();
        assert!(op.offset >= 1 << 20 && op.offset + op.len as u64 <= 9 << 20, "{op:?}");
        assert_eq!(op.offset % 512, 0);
        reads += u32::from(op.kind == crate::gen::OpKind::Read);
    }
    n /= 100;
    assert!((reads as i64 - 50 * n as i64).abs() < 1000, "reads {reads}");
}

#[test]
fn generator_sequential_is_contiguous_and_wraps() {
    let p = Plan::from_spec(&job("rw = 'read'\nbs = '4k'\n"), Some(&mem())).unwrap();
    let regions = p.bind(&[TargetGeometry { size_bytes: 16384, block_bytes: 512 }]).unwrap();
    let mut g = OpGen::new(&p.workers[0], &regions[0], Rng::new(1));
    let offs: Vec<u64> = (0..6).map(|_| g.next_op().offset).collect();
    assert_eq!(offs, vec![0, 4096, 8192, 12288, 0, 4096]);
}

/// Issue 36, item 8: `seq_skip` leaves a gap after each sequential I/O (fio's `rw=read:4k`) and, negative,
/// moves backwards (`rw=read:-8k`: from the first I/O at 0 to the end less 8k, then down), as fio's
/// `get_next_seq_offset` does.
#[test]
fn generator_sequential_skips_forwards_and_backwards() {
    let offsets = |skip: &str| {
        let p =
            Plan::from_spec(&job(&format!("rw = 'read'\nbs = '4k'\nseq_skip = '{skip}'\n")), Some(&mem()))
                .unwrap();
        let regions = p.bind(&[TargetGeometry { size_bytes: 32768, block_bytes: 512 }]).unwrap();
        let mut g = OpGen::new(&p.workers[0], &regions[0], Rng::new(1));
        (0..10).map(|_| g.next_op().offset / 4096).collect::<Vec<u64>>()
    };
    assert_eq!(offsets("4k"), vec![0, 2, 4, 6, 0, 2, 4, 6, 0, 2]);
    assert_eq!(offsets("-8k"), vec![0, 6, 5, 4, 3, 2, 1, 0, 6, 5]);
    let p = Plan::from_spec(&job("rw = 'read'\nseq_skip = '1000'\n"), Some(&mem())).unwrap();
    let e = p.bind(&[TargetGeometry { size_bytes: 1 << 20, block_bytes: 512 }]).unwrap_err();
    assert!(e.0.contains("'seq_skip' 1000"), "{e}");
}

#[test]
fn generator_is_reproducible_from_the_seed() {
    let p = Plan::from_spec(&job("seed = 99\n"), Some(&mem())).unwrap();
    let regions = p.bind(&[TargetGeometry { size_bytes: 64 << 20, block_bytes: 512 }]).unwrap();
    let a: Vec<_> = {
        let mut g = OpGen::new(&p.workers[0], &regions[0], Rng::for_worker(p.seed, 0));
        (0..50).map(|_| g.next_op()).collect()
    };
    let mut g = OpGen::new(&p.workers[0], &regions[0], Rng::for_worker(99, 0));
    let b: Vec<_> = (0..50).map(|_| g.next_op()).collect();
    assert_eq!(a, b);
}

#[test]
fn access_spec_weights_are_honoured() {
    let p = Plan::from_spec(
        &job("[[spec]]\nbs = '4k'\nweight = 3\n[[spec]]\nbs = '64k'\nweight = 1\n"),
        Some(&mem()),
    )
    .unwrap();
    let regions = p.bind(&[TargetGeometry { size_bytes: 64 << 20, block_bytes: 512 }]).unwrap();
    let mut g = OpGen::new(&p.workers[0], &regions[0], Rng::new(4));
    let small = (0..40_000).filter(|_| g.next_op().len == 4096).count();
    assert!((small as i64 - 30_000).abs() < 600, "small {small}");
}

#[test]
fn huge_total_buffers_across_workers_are_refused() {
    let e = Plan::from_spec(&job("workers = 1024\nqd = 4096\n"), Some(&mem())).unwrap_err();
    assert!(e.0.contains("in all"), "{e}");
}

#[test]
fn named_targets_resolve_to_declared_targets_with_their_sizes() {
    let p = Plan::from_spec(
        &job("[targets]\ndb = { path = 'mem:64M' }\nlog = { path = '/tmp/x.log', size = '16M' }\n\
              [worker.db]\ntarget = '@db'\ncount = 2\n[worker.log]\ntarget = '@log'\nrw = 'write'\n"),
        None,
    )
    .unwrap();
    assert_eq!(p.targets.len(), 2);
    assert_eq!(p.targets[0].role.as_deref(), Some("db"));
    assert_eq!(p.targets[0].spec, TargetSpec::Mem { size_bytes: 64 << 20 });
    assert_eq!(p.targets[1].role.as_deref(), Some("log"));
    assert_eq!(p.targets[1].create_size, Some(16 << 20));
    assert!(p.targets[1].writes && !p.targets[1].reads);
    let groups: Vec<&str> = p.workers.iter().map(|w| w.group.as_str()).collect();
    assert_eq!(groups, ["db", "db", "log"]);
    assert_eq!(p.workers[1].name, "db.2");
}

#[test]
fn named_target_without_path_is_an_error_naming_the_flag() {
    let e = Plan::from_spec(&job("[targets]\ndb = { size = '1G' }\n[worker.db]\ntarget = '@db'\n"), None)
        .unwrap_err();
    assert!(e.0.contains("--target db=PATH"), "{}", e.0);
}

#[test]
fn forced_target_replaces_named_targets() {
    let mut j = job("[targets]\ndb = { size = '1G' }\n[worker.db]\ntarget = '@db'\n");
    j.forced.set("target", "mem:8M", &Place::Flag("--target".into())).unwrap();
    let p = Plan::from_spec(&j, None).unwrap();
    assert_eq!(p.targets.len(), 1);
    assert_eq!(p.targets[0].spec, TargetSpec::Mem { size_bytes: 8 << 20 });
}

/// Issue 36, item 8: `start_delay` is each worker's; a range is drawn per worker from the run's seed (the same
/// seed, the same delays), within the range. `flow` puts a worker in its group (`flow_id`, default 0) with
/// the default look-again time; `flow_sleep` without `flow` is refused.
#[test]
fn start_delays_are_drawn_per_worker_and_flow_needs_a_weight() {
    let delays = |seed: u64| {
        let p = Plan::from_spec(
            &job(&format!("seed = {seed}\nworkers = 8\nstart_delay = '1s-5s'\n")),
            Some(&mem()),
        )
        .unwrap();
        p.workers.iter().map(|w| w.start_delay_ns).collect::<Vec<u64>>()
    };
    let a = delays(7);
    assert_eq!(a, delays(7));
    assert!(a.iter().all(|d| (1_000_000_000..=5_000_000_000).contains(d)), "{a:?}");
    assert!(a.windows(2).any(|w| w[0] != w[1]), "each worker draws its own: {a:?}");
    let p = Plan::from_spec(&job("start_delay = '2s'\nflow = 3\n"), Some(&mem())).unwrap();
    assert_eq!(p.workers[0].start_delay_ns, 2_000_000_000);
    assert_eq!(p.workers[0].flow, Some(Flow { id: 0, weight: 3, sleep_ns: DEFAULT_FLOW_SLEEP_NS }));
    let e = Plan::from_spec(&job("flow_sleep = '1ms'\n"), Some(&mem())).unwrap_err();
    assert!(e.0.contains("'flow_id' and 'flow_sleep'"), "{e}");
}

/// Issue 36, item 8: the depth search needs its target, and is for closed loop.
#[test]
fn a_latency_target_is_closed_loop_and_its_window_needs_it() {
    let p = Plan::from_spec(&job("qd = 16\nlatency_target = '1ms'\nlatency_window = '1s'\n"), Some(&mem()))
        .unwrap();
    assert_eq!(
        p.workers[0].latency_target,
        Some(LatencyTarget { target_ns: 1_000_000, window_ns: 1_000_000_000, percentile: 100.0 })
    );
    let e = Plan::from_spec(&job("latency_window = '1s'\n"), Some(&mem())).unwrap_err();
    assert!(e.0.contains("give 'latency_target'"), "{e}");
    let e = Plan::from_spec(&job("rate = 100\nlatency_target = '1ms'\n"), Some(&mem())).unwrap_err();
    assert!(e.0.contains("closed loop"), "{e}");
}

/// Issue 36, item 8: `random_run = N` (fio's `rw=randread:N`) draws a random offset every N-th I/O and the
/// others follow the I/O before: sequentially by default, at the same offset with `:identical`; the first
/// N-1 follow the region's start, as fio's counter does.
#[test]
fn generator_random_runs_follow_each_random_offset() {
    let offsets = |run: &str| {
        let p = Plan::from_spec(
            &job(&format!("rw = 'randread'\nbs = '4k'\nrandom_run = '{run}'\n")),
            Some(&mem()),
        )
        .unwrap();
        let regions = p.bind(&[TargetGeometry { size_bytes: 1 << 30, block_bytes: 512 }]).unwrap();
        let mut g = OpGen::new(&p.workers[0], &regions[0], Rng::new(1));
        (0..12).map(|_| g.next_op().offset / 4096).collect::<Vec<u64>>()
    };
    let seq = offsets("4");
    assert_eq!(&seq[..3], &[0, 1, 2], "{seq:?}");
    for start in [3, 7] {
        assert_eq!(&seq[start + 1..start + 4], &[seq[start] + 1, seq[start] + 2, seq[start] + 3], "{seq:?}");
    }
    assert_ne!(seq[3], 3, "the run's first I/O is random: {seq:?}");
    let same = offsets("4:identical");
    assert_eq!(&same[..3], &[0, 0, 0], "{same:?}");
    assert!(same[4..7].iter().all(|o| *o == same[3]), "{same:?}");
    assert!(offsets("1").windows(2).all(|w| w[0] != w[1]));
}

/// Issue 36, item 8: `trim_then_write` issues each trim's write of the same block next (fio's trimwrite),
/// sequentially or at random offsets; it needs trim_pct 50 and read_pct 0.
#[test]
fn generator_pairs_each_trim_with_a_write_of_the_same_block() {
    let ops = |random: u32| {
        let text = format!(
            "rw = 'write'\ntrim_pct = 50\ntrim_then_write = true\nrandom_pct = {random}\nbs = '4k'\n"
        );
        let p = Plan::from_spec(&job(&text), Some(&mem())).unwrap();
        let regions = p.bind(&[TargetGeometry { size_bytes: 1 << 30, block_bytes: 512 }]).unwrap();
        let mut g = OpGen::new(&p.workers[0], &regions[0], Rng::new(1));
        (0..8)
            .map(|_| {
                let o = g.next_op();
                (o.kind, o.offset / 4096)
            })
            .collect::<Vec<_>>()
    };
    let (t, w) = (crate::gen::OpKind::Trim, crate::gen::OpKind::Write);
    assert_eq!(ops(0), vec![(t, 0), (w, 0), (t, 1), (w, 1), (t, 2), (w, 2), (t, 3), (w, 3)]);
    let random = ops(100);
    for pair in random.chunks(2) {
        assert_eq!((pair[0].0, pair[1].0, pair[0].1), (t, w, pair[1].1), "{random:?}");
    }
    let e = Plan::from_spec(&job("rw = 'write'\ntrim_then_write = true\n"), Some(&mem())).unwrap_err();
    assert!(e.0.contains("trim_pct = 50"), "{e}");
}

/// fio's strided zones for a sequential job of `bs`-byte I/Os on a file of `file` bytes, as io_u.c runs them
/// (`setup_strided_zone_mode` before each I/O, then `get_next_seq_offset`): the offsets until the job ends (an
/// I/O past the file's end) or `n` of them.
fn fio_strided(file: u64, bs: u64, (range, skip, zonesize): (u64, u64, u64), n: usize) -> Vec<u64> {
    let (mut file_offset, mut last_pos, mut zone_bytes) = (0u64, 0u64, 0u64);
    let mut out = Vec::new();
    while out.len() < n {
        if zone_bytes >= zonesize {
            zone_bytes = 0;
            file_offset += range + skip;
            if file_offset >= file {
                file_offset = 0;
            }
            last_pos = file_offset;
        }
        if last_pos >= file_offset + range {
            last_pos = file_offset;
        }
        if last_pos + bs > file {
            break;
        }
        out.push(last_pos);
        last_pos += bs;
        zone_bytes += bs;
    }
    out
}

/// The first `n` ops of the first worker of `toml` over a 1 GiB target.
fn first_ops(toml: &str, n: usize) -> Vec<GenOp> {
    let p = Plan::from_spec(&job(toml), Some(&mem())).unwrap();
    let regions = p.bind(&[TargetGeometry { size_bytes: 1 << 30, block_bytes: 512 }]).unwrap();
    let mut g = OpGen::new(&p.workers[0], &regions[0], Rng::new(7));
    (0..n).map(|_| g.next_op()).collect()
}

/// Issue 36, item 8: `band` walks fio's strided zones (`zonemode=strided`): the offsets of a sequential job
/// are fio's, from io_u.c's rule, for zones gone over once, in part (zonesize below zonerange) and twice
/// (above it), and the walk starts over at the region's end; random I/O stays in the band of the moment.
#[test]
fn generator_band_walks_fios_strided_zones() {
    let k = 1024u64;
    for (range, skip, bytes) in
        [(8 * k, 16 * k, 8 * k), (12 * k, 4 * k, 8 * k), (8 * k, 8 * k, 16 * k), (64 * k, 0, 64 * k)]
    {
        let band = iolab_spec::units::format_size;
        let toml = format!(
            "rw = 'read'\nbs = '4k'\nlength = '96k'\nband = '{}:{}:{}'\n",
            band(range),
            band(skip),
            band(bytes)
        );
        let ours: Vec<u64> = first_ops(&toml, 40).iter().map(|o| o.offset).collect();
        let fios = fio_strided(96 * k, 4 * k, (range, skip, bytes), 40);
        assert_eq!(&ours[..fios.len()], &fios[..], "band {range}:{skip}:{bytes}");
        assert!(fios.len() >= 20, "the case runs long enough to wrap: {fios:?}");
    }
    let random = first_ops("rw = 'randread'\nbs = '4k'\nlength = '96k'\nband = '8k:16k'\n", 16);
    for (i, op) in random.iter().enumerate() {
        let band_start = [0, 24, 48, 72][(i / 2) % 4] * k;
        assert!((band_start..band_start + 8 * k).contains(&op.offset), "op {i} at {}: {random:?}", op.offset);
    }
    let e = Plan::from_spec(&job("bs = '64k'\nband = '32k:1M'\n"), Some(&mem())).unwrap_err();
    assert!(e.0.contains("'band' 32K is smaller than its largest I/O (64K)"), "{e}");
    let e =
        Plan::from_spec(&job("rw = 'read'\nseq_skip = '4k'\nband = '1M:1M'\n"), Some(&mem())).unwrap_err();
    assert!(e.0.contains("'band' and 'seq_skip'"), "{e}");
}

/// Issue 36, item 8: `dist = "sequence:2,0,1"` (fio's `random_distribution=sequence:2,0,1`) gives the k-th
/// random I/O of a direction block 2, 0, 1, 2, ... exactly; with `:advance` (fio's `random_sequence_stride=1`)
/// each cycle a group of 3 blocks further, the groups starting over past the region's last whole one; reads
/// and writes count their own I/Os, as fio's `io_issues` per direction; a block past the region is refused.
#[test]
fn generator_sequence_gives_fios_blocks_in_order() {
    let blocks =
        |toml: &str, n| first_ops(toml, n).iter().map(|o| (o.kind, o.offset / 4096)).collect::<Vec<_>>();
    let only = |v: Vec<(OpKind, u64)>| v.into_iter().map(|(_, b)| b).collect::<Vec<u64>>();
    let fixed = only(blocks("rw = 'randread'\nbs = '4k'\nlength = '48k'\ndist = 'sequence:2,0,1'\n", 7));
    assert_eq!(fixed, [2, 0, 1, 2, 0, 1, 2]);
    let toml = "rw = 'randwrite'\nbs = '4k'\nlength = '48k'\ndist = 'sequence:2,0,1:advance'\n";
    assert_eq!(only(blocks(toml, 15)), [2, 0, 1, 5, 3, 4, 8, 6, 7, 11, 9, 10, 2, 0, 1]);
    let mixed = blocks("rw = 'randrw'\nbs = '4k'\nlength = '48k'\ndist = 'sequence:2,0,1'\n", 40);
    for kind in [OpKind::Read, OpKind::Write] {
        let mine: Vec<u64> = mixed.iter().filter(|(k, _)| *k == kind).map(|(_, b)| *b).collect();
        assert!(mine.len() > 6, "{mixed:?}");
        assert!(mine.iter().enumerate().all(|(i, b)| *b == [2, 0, 1][i % 3]), "{kind:?}: {mine:?}");
    }
    let p =
        Plan::from_spec(&job("bs = '4k'\nlength = '48k'\ndist = 'sequence:3,12'\n"), Some(&mem())).unwrap();
    let e = p.bind(&[TargetGeometry { size_bytes: 1 << 30, block_bytes: 512 }]).unwrap_err();
    assert!(e.0.contains("block 12 of 'dist = sequence:...' is past the end"), "{e}");
}
