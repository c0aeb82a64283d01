//! Every translation is read back with iolab's own job parser and checked for its meaning.

use super::*;
use iolab_spec::{Arrival, DataPattern, Dist, EngineKind, JobSpec, Layer, TargetSpec, VerifyFail, WriteSync};

fn tr(text: &str) -> (Translation, JobSpec) {
    let t = translate(text, "job.fio").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let job = JobSpec::from_toml(&t.toml, "job.fio").unwrap_or_else(|e| panic!("{e}\n{}", t.toml));
    (t, job)
}

fn err(text: &str) -> FioError {
    match translate(text, "job.fio") {
        Ok(t) => panic!("translated, expected an error:\n{}", t.toml),
        Err(e) => e,
    }
}

/// A job with the given options on a 1 GiB file, time based.
fn one(opts: &str) -> (Translation, JobSpec) {
    tr(&format!("[j]\nfilename=/data/f\nsize=1g\ntime_based\nruntime=10\n{opts}\n"))
}

fn layer(job: &JobSpec) -> &Layer {
    &job.worker_tables[0].layer
}

fn sizes(l: &Layer) -> Vec<(u64, u32)> {
    l.bs.as_ref().unwrap().0.iter().map(|b| (b.size_bytes, b.weight)).collect()
}

fn refused(e: FioError, option: &str, line: usize) {
    match &e {
        FioError::Unsupported { option: o, line: l, .. } => {
            assert_eq!((o.as_str(), *l), (option, line), "{e}")
        }
        other => panic!("expected Unsupported {option} at line {line}, got {other}"),
    }
}

#[test]
fn numjobs_and_rwmixread_make_workers_with_the_mix() {
    let (t, job) = one("numjobs=4\nrw=randrw\nrwmixread=60\nioengine=libaio\niodepth=16");
    let w = &job.worker_tables[0];
    assert_eq!(w.count, 4);
    assert_eq!(w.layer.read_pct, Some(60.0));
    assert_eq!(w.layer.random_pct, Some(100.0));
    assert_eq!(w.layer.qd, Some(16));
    assert_eq!(job.engine, Some(EngineKind::IoUring));
    assert!(t.toml.contains("# fio: numjobs=4 (section [j], line 6)\ncount = 4"), "{}", t.toml);
    assert!(t.toml.contains("# fio: rwmixread=60 (section [j], line 8)"), "{}", t.toml);
}

#[test]
fn global_options_are_inherited_and_overridden() {
    let (t, job) = tr("[global]\nioengine=io_uring\niodepth=8\nbs=8k\nsize=1g\nruntime=30\ntime_based\nfilename=/d/f\n\n[a]\nrw=randread\n[b]\nrw=randwrite\niodepth=2\n");
    assert_eq!(job.worker_tables.len(), 2);
    assert_eq!(job.worker_tables[0].layer.qd, Some(8));
    assert_eq!(job.worker_tables[1].layer.qd, Some(2));
    assert_eq!(job.worker_tables[1].layer.read_pct, Some(0.0));
    assert_eq!(sizes(&job.worker_tables[0].layer), vec![(8192, 1)]);
    assert_eq!(job.duration_ns, Some(30_000_000_000));
    assert!(t.toml.contains("# fio: iodepth=8 (section [global], line 3)"), "{}", t.toml);
}

#[test]
fn filename_list_becomes_several_targets_with_escapes() {
    let (_, job) = one("filename=/a/x:/b/y\\:z");
    let t = layer(&job).target.clone().unwrap();
    assert_eq!(t, vec![TargetSpec::Path { path: "/a/x".into() }, TargetSpec::Path { path: "/b/y:z".into() }]);
    // fio divides size among the files.
    assert_eq!(layer(&job).size, Some(512 << 20));
}

#[test]
fn directory_and_default_file_names_per_clone() {
    let (_, job) = tr("[db]\ndirectory=/mnt/t\nsize=64m\nnumjobs=2\nrw=read\n");
    assert_eq!(job.worker_tables.len(), 2, "each clone has its own file");
    assert_eq!(layer(&job).target, Some(vec![TargetSpec::Path { path: "/mnt/t/db.0.0".into() }]));
    assert_eq!(
        job.worker_tables[1].layer.target,
        Some(vec![TargetSpec::Path { path: "/mnt/t/db.1.0".into() }])
    );
    assert_eq!(job.bytes, Some(128 << 20), "size per job, two jobs");
    let (_, job) = tr("[db]\ndirectory=/mnt/t\nfilename=f1\nsize=64m\n");
    assert_eq!(layer(&job).target, Some(vec![TargetSpec::Path { path: "/mnt/t/f1".into() }]));
    let (_, job) = tr("[db]\nsize=64m\nnrfiles=2\n");
    assert_eq!(layer(&job).target.as_ref().unwrap().len(), 2);
}

#[test]
fn size_offset_and_filesize_make_the_region() {
    let (_, job) = one("offset=256m");
    let l = layer(&job);
    assert_eq!((l.offset, l.length, l.size), (Some(256 << 20), Some(1 << 30), Some(1280 << 20)));
    let (_, job) = one("filesize=2g");
    assert_eq!(layer(&job).size, Some(2 << 30));
    let (_, job) = tr("[j]\nfilename=/dev/nvme0n1\nsize=4g\nrw=randread\n");
    assert_eq!((layer(&job).size, layer(&job).length), (None, Some(4 << 30)), "no size on a device");
    refused(err("[j]\nfilename=/f\nsize=50%\n"), "size", 3);
    refused(err("[j]\nfilename=/f\nsize=1g\nfilesize=1g-2g\n"), "filesize", 4);
}

#[test]
fn io_size_and_number_ios_limit_the_run() {
    let (_, job) = tr("[j]\nfilename=/f\nsize=1g\nio_size=256m\nnumjobs=2\n");
    assert_eq!((job.bytes, job.duration_ns), (Some(512 << 20), None));
    let (_, job) = tr("[j]\nfilename=/f\nsize=1g\nnumber_ios=1000\nruntime=5\n");
    assert_eq!((job.ios, job.duration_ns), (Some(1000), Some(5_000_000_000)));
    refused(err("[j]\nfilename=/dev/sdb\nruntime=60\n"), "size", 1);
    refused(err("[a]\nfilename=/f\nsize=1g\n[b]\nfilename=/g\nsize=2g\n"), "io_size", 4);
    refused(err("[j]\nfilename=/f\nsize=1g\nio_size=1m\ntime_based\nruntime=1\n"), "io_size", 4);
}

#[test]
fn rw_patterns_map_and_trimwrite_is_refused() {
    for (rw, read, random) in [
        ("read", 100.0, 0.0),
        ("write", 0.0, 0.0),
        ("randread", 100.0, 100.0),
        ("randwrite", 0.0, 100.0),
        ("rw", 50.0, 0.0),
        ("readwrite", 50.0, 0.0),
        ("randrw", 50.0, 100.0),
        ("read:0", 100.0, 0.0),
    ] {
        let (_, job) = one(&format!("rw={rw}"));
        assert_eq!((layer(&job).read_pct, layer(&job).random_pct), (Some(read), Some(random)), "{rw}");
    }
    let (_, job) = one("readwrite=randrw\nrwmixwrite=30");
    assert_eq!(layer(&job).read_pct, Some(70.0));
    assert!(matches!(err("[j]\nfilename=/f\nsize=1g\nrw=sideways\n"), FioError::BadValue { line: 4, .. }));
    let (_, job) = one("");
    assert_eq!(layer(&job).read_pct, Some(100.0), "fio's default is read");
}

#[test]
fn bs_forms_and_per_direction_sizes() {
    let (_, job) = one("bs=64k");
    assert_eq!(sizes(layer(&job)), vec![(65536, 1)]);
    let (_, job) = one("blocksize=16k,16k");
    assert_eq!(sizes(layer(&job)), vec![(16384, 1)]);
    let (_, job) = one("rw=randread\nbs=8k,64k");
    assert_eq!(sizes(layer(&job)), vec![(8192, 1)], "only reads are issued");
    let (t, job) = one("rw=randrw\nrwmixread=70\nbs=8k,64k");
    let specs = &job.worker_tables[0].specs;
    assert_eq!(specs.len(), 2, "{}", t.toml);
    assert_eq!(
        (specs[0].read_pct, specs[0].weight, sizes(&specs[0])),
        (Some(100.0), Some(70), vec![(8192, 1)])
    );
    assert_eq!(
        (specs[1].read_pct, specs[1].weight, sizes(&specs[1])),
        (Some(0.0), Some(30), vec![(65536, 1)])
    );
    let (_, job) = one("rw=randwrite\nbs=,8k");
    assert_eq!(sizes(layer(&job)), vec![(8192, 1)]);
    assert!(matches!(err("[j]\nfilename=/f\nsize=1g\nbs=4q\n"), FioError::BadValue { line: 4, .. }));
}

#[test]
fn bssplit_shares_and_remainders() {
    let (_, job) = one("bssplit=4k/10:64k/50:32k/40");
    assert_eq!(sizes(layer(&job)), vec![(4096, 1), (32768, 4), (65536, 5)]);
    assert_eq!(layer(&job).align, Some(4096), "fio aligns to the smallest size");
    let (_, job) = one("bssplit=4k/60:8k");
    assert_eq!(sizes(layer(&job)), vec![(4096, 3), (8192, 2)]);
    let (_, job) = one("bssplit=4k/50:1k/:32k/");
    assert_eq!(sizes(layer(&job)), vec![(1024, 1), (4096, 2), (32768, 1)]);
    let (_, job) = one("rw=randrw\nbssplit=2k/50:4k/50,4k/90:8k/10");
    let specs = &job.worker_tables[0].specs;
    assert_eq!(sizes(&specs[0]), vec![(2048, 1), (4096, 1)]);
    assert_eq!(sizes(&specs[1]), vec![(4096, 9), (8192, 1)]);
    assert!(matches!(err("[j]\nfilename=/f\nsize=1g\nbssplit=4k/60:8k/60\n"), FioError::BadValue { .. }));
}

#[test]
fn bsrange_gives_fio_shares() {
    let (_, job) = one("bsrange=4k-16k");
    assert_eq!(sizes(layer(&job)), vec![(4096, 1), (8192, 1), (12288, 1), (16384, 1)]);
    let (_, job) = one("blocksize_range=16k:4k");
    assert_eq!(sizes(layer(&job)).len(), 4, "swapped bounds");
    refused(err("[j]\nfilename=/f\nsize=1g\nbsrange=512-1m\n"), "bsrange", 4);
}

#[test]
fn blockalign_sets_align() {
    let (_, job) = one("rw=randread\nbs=8k\nblockalign=4k");
    assert_eq!(layer(&job).align, Some(4096));
    let (_, job) = one("ba=512");
    assert_eq!(layer(&job).align, Some(512));
}

#[test]
fn engines_map_and_set_queue_depth() {
    for (e, kind, qd) in [
        ("libaio", EngineKind::IoUring, 32),
        ("io_uring", EngineKind::IoUring, 32),
        ("posixaio", EngineKind::IoUring, 32),
        ("psync", EngineKind::Sync, 1),
        ("sync", EngineKind::Sync, 1),
        ("pvsync", EngineKind::Sync, 1),
        ("pvsync2", EngineKind::Sync, 1),
    ] {
        let (_, job) = one(&format!("ioengine={e}\niodepth=32"));
        assert_eq!((job.engine, layer(&job).qd), (Some(kind), Some(qd)), "{e}");
    }
    let (_, job) = one("");
    assert_eq!((job.engine, layer(&job).qd), (Some(EngineKind::Sync), Some(1)), "fio's default psync");
    let (_, job) = one("ioengine=libaio");
    assert_eq!(layer(&job).qd, Some(1), "fio's default iodepth");
    let (_, job) = tr("[j]\nioengine=null\nsize=1g\nruntime=5\ntime_based\n");
    assert_eq!(layer(&job).target, Some(vec![TargetSpec::Null { size_bytes: 1 << 30 }]));
}

#[test]
fn refused_engines_name_engine_section_and_line() {
    for e in [
        "net",
        "netsplice",
        "http",
        "rdma",
        "rbd",
        "libcufile",
        "sg",
        "nbd",
        "spdk",
        "mmap",
        "splice",
        "cpuio",
    ] {
        match err(&format!("[global]\nsize=1g\n[j1]\nioengine={e}\n")) {
            FioError::UnsupportedEngine { engine, section, line, .. } => {
                assert_eq!((engine.as_str(), section.as_str(), line), (e, "j1", 4));
            }
            other => panic!("{e}: {other}"),
        }
    }
}

#[test]
fn runtime_time_based_and_ramp() {
    let (t, job) = tr("[j]\nfilename=/f\nsize=1g\ntime_based\nruntime=2m\nramp_time=5\n");
    assert_eq!((job.duration_ns, job.ramp_ns), (Some(120_000_000_000), Some(5_000_000_000)));
    assert_eq!(job.bytes, None);
    assert!(t.toml.contains("# fio: time_based (section [j], line 4)") || t.toml.contains("runtime=2m"));
    let (_, job) = one("");
    assert_eq!(job.ramp_ns, Some(0), "fio's default ramp is 0");
    refused(err("[j]\nfilename=/f\nsize=1g\ntime_based\n"), "time_based", 4);
    assert!(matches!(err("[j]\nfilename=/f\nsize=1g\nruntime=forever\n"), FioError::BadValue { .. }));
}

#[test]
fn direct_and_buffered() {
    assert_eq!(one("direct=1").1.direct, Some(true));
    assert_eq!(one("buffered=0").1.direct, Some(true));
    assert_eq!(one("buffered=1").1.direct, Some(false));
    assert_eq!(one("").1.direct, Some(false), "fio's default is buffered");
}

#[test]
fn rates_become_iops_with_arrivals() {
    let (_, job) = one("rw=randread\nrate_iops=500\nrate_process=poisson");
    assert_eq!((layer(&job).rate, layer(&job).arrival), (Some(500.0), Some(Arrival::Poisson)));
    let (_, job) = one("rw=randread\nbs=4k\nrate=4m");
    assert_eq!((layer(&job).rate, layer(&job).arrival), (Some(1024.0), Some(Arrival::Fixed)));
    let (_, job) = one("rw=randrw\nrwmixread=75\nrate_iops=300,100");
    assert_eq!(layer(&job).rate, Some(400.0));
    let (_, job) = one("rw=randwrite\nrate_iops=,250");
    assert_eq!(layer(&job).rate, Some(250.0));
    refused(err("[j]\nfilename=/f\nsize=1g\nrw=randrw\nrate_iops=500\n"), "rate_iops", 5);
    refused(err("[j]\nfilename=/f\nsize=1g\nrw=randrw\nrate_iops=100,100\nrwmixread=70\n"), "rate_iops", 5);
    refused(err("[j]\nfilename=/f\nsize=1g\nbssplit=4k/50:8k/50\nrate=1m\n"), "rate", 5);
    assert!(matches!(
        err("[j]\nfilename=/f\nsize=1g\nrate_iops=5\nrate_process=bursty\n"),
        FioError::BadValue { .. }
    ));
}

#[test]
fn random_distributions() {
    let (_, job) = one("rw=randread\nrandom_distribution=zipf:1.2");
    assert_eq!(layer(&job).dist, Some(Dist::Zipf { theta: 1.2 }));
    let (_, job) = one("rw=randread\nrandom_distribution=pareto:0.2");
    assert_eq!(layer(&job).dist, Some(Dist::Pareto { h: 0.2 }));
    let (_, job) = one("rw=randread\nrandom_distribution=zoned:60/10:30/20:8/30:2/40");
    assert!(matches!(layer(&job).dist, Some(Dist::Zones { ref zones }) if zones.len() == 4));
    let (_, job) = one("rw=randread\nrandom_distribution=random");
    assert_eq!(layer(&job).dist, None);
    refused(
        err("[j]\nfilename=/f\nsize=1g\nrw=randread\nrandom_distribution=normal:10\n"),
        "random_distribution",
        5,
    );
    refused(
        err("[j]\nfilename=/f\nsize=1g\nrandom_distribution=zoned_abs:50/1g:50/2g\n"),
        "random_distribution",
        4,
    );
    refused(err("[j]\nfilename=/f\nsize=1g\nrandom_distribution=zipf:1.2:0.5\n"), "random_distribution", 4);
    assert!(matches!(
        err("[j]\nfilename=/f\nsize=1g\nrw=randread\nrandom_distribution=zoned:50/10\n"),
        FioError::BadValue { .. }
    ));
}

#[test]
fn percentage_random_sets_random_share() {
    let (_, job) = one("rw=randread\npercentage_random=30");
    assert_eq!(layer(&job).random_pct, Some(30.0));
}

#[test]
fn seeds_follow_randseed_and_randrepeat() {
    assert_eq!(one("randseed=1234").1.seed, Some(1234));
    assert_eq!(one("randrepeat=1").1.seed, Some(0x89));
    assert_eq!(one("").1.seed, Some(0x89), "fio repeats by default");
    assert_eq!(one("randrepeat=0").1.seed, None);
}

#[test]
fn verify_turns_on_iolab_verification() {
    let (_, job) = one("rw=randwrite\nverify=crc32c\nverify_fatal=1");
    assert_eq!((job.integrity.verify, job.integrity.verify_fail), (Some(true), Some(VerifyFail::Stop)));
    let (_, job) = one("rw=write\nverify=md5");
    assert_eq!(job.integrity.verify_fail, Some(VerifyFail::Continue), "fio's default goes on");
    assert_eq!(one("verify=0").1.integrity.verify, None);
    assert_eq!(one("verify=md5\ndo_verify=0").1.integrity.verify, None);
    refused(err("[j]\nfilename=/f\nsize=1g\nverify=md5\nverify_only=1\n"), "verify_only", 5);
}

/// Each phase of a translated job as (name, [(worker table, count, read share)], duration in s, bytes, ios).
type PhaseView = (String, Vec<(String, u32, Option<f64>)>, Option<u64>, Option<u64>, Option<u64>);

fn phases(job: &JobSpec) -> Vec<PhaseView> {
    job.phase_jobs()
        .into_iter()
        .map(|(name, j)| {
            let workers =
                j.worker_tables.iter().map(|w| (w.name.clone(), w.count, w.layer.read_pct)).collect();
            (name.unwrap_or_default(), workers, j.duration_ns.map(|d| d / 1_000_000_000), j.bytes, j.ios)
        })
        .collect()
}

fn w(name: &str, count: u32, read: f64) -> (String, u32, Option<f64>) {
    (name.to_string(), count, Some(read))
}

#[test]
fn a_stonewall_on_the_first_job_and_new_group_change_nothing() {
    let (_, job) = one("stonewall");
    assert_eq!(job.worker_tables.len(), 1);
    assert!(job.phases.is_empty());
    let (t, job) = tr("[a]\nfilename=/f\nsize=1g\nnew_group\n[b]\nfilename=/g\nsize=1g\nnew_group\n");
    assert_eq!(t.ignored[0].option, "new_group");
    assert!(job.phases.is_empty());
    assert_eq!(job.worker_tables.len(), 2);
}

#[test]
fn two_stonewalled_phases_with_their_own_runtimes() {
    let text = "[global]\nfilename=/data/f\nsize=1g\ntime_based\n\
                [fill]\nrw=write\nruntime=30\n\
                [mix]\nstonewall\nrw=randrw\nrwmixread=70\nnumjobs=4\nruntime=60\nramp_time=5\n\
                [scan]\nrw=read\nruntime=60\nramp_time=5\n";
    let (t, job) = tr(text);
    assert!(job.worker_tables.is_empty(), "{}", t.toml);
    assert_eq!(
        phases(&job),
        vec![
            ("fill".into(), vec![w("fill", 1, 0.0)], Some(30), None, None),
            ("mix".into(), vec![w("mix", 4, 70.0), w("scan", 1, 100.0)], Some(60), None, None),
        ]
    );
    assert_eq!(job.phases[0].run.ramp_ns, Some(0));
    assert_eq!(job.phases[1].run.ramp_ns, Some(5_000_000_000));
    assert!(job.duration_ns.is_none() && job.ramp_ns.is_none(), "{}", t.toml);
    assert_eq!(job.phase_jobs()[1].1.name.as_deref(), Some("job.fio [mix]"));
    // The phase says which stonewall started it; keys keep their fio comments.
    assert!(
        t.toml.contains("[[phase]]\n# fio: stonewall (section [mix], line 9)\nname = \"mix\"\n"),
        "{}",
        t.toml
    );
    assert!(t.toml.contains("# fio: runtime=60 (section [mix], line 13)\nduration = \"1m\"\n"), "{}", t.toml);
    assert!(
        t.toml.contains("[phase.worker.mix]\n# fio: numjobs=4 (section [mix], line 12)\ncount = 4\n"),
        "{}",
        t.toml
    );
}

#[test]
fn three_phases_with_size_limits_and_shared_keys() {
    let text = "[global]\nfilename=/data/f\nsize=1g\ndirect=1\nioengine=libaio\niodepth=8\n\
                [fill]\nrw=write\nbs=1m\n\
                [read]\nstonewall\nrw=randread\nnumjobs=2\ntime_based\nruntime=20\n\
                [mixed]\nwait_for_previous\nrw=randrw\nrwmixread=50\nio_size=256m\nnumjobs=2\n";
    let (t, job) = tr(text);
    assert_eq!(
        phases(&job),
        vec![
            ("fill".into(), vec![w("fill", 1, 0.0)], None, Some(1 << 30), None),
            ("read".into(), vec![w("read", 2, 100.0)], Some(20), None, None),
            ("mixed".into(), vec![w("mixed", 2, 50.0)], None, Some(512 << 20), None),
        ]
    );
    // Keys every phase agrees on stay at the top, once.
    assert_eq!(job.engine, Some(EngineKind::IoUring));
    assert_eq!(t.toml.matches("engine = ").count(), 1, "{}", t.toml);
    assert_eq!(t.toml.matches("ramp = ").count(), 1, "{}", t.toml);
    assert!(
        t.toml.contains("# fio: wait_for_previous (section [mixed], line 17)\nname = \"mixed\""),
        "{}",
        t.toml
    );
}

#[test]
fn a_stonewall_in_global_puts_every_job_in_a_phase_of_its_own() {
    let text = "[global]\nstonewall\nfilename=/f\nsize=1g\ntime_based\nruntime=10\n[a]\nrw=read\n[b]\nrw=write\n[c]\nrw=randrw\n";
    let (t, job) = tr(text);
    assert_eq!(
        phases(&job),
        vec![
            ("a".into(), vec![w("a", 1, 100.0)], Some(10), None, None),
            ("b".into(), vec![w("b", 1, 0.0)], Some(10), None, None),
            ("c".into(), vec![w("c", 1, 50.0)], Some(10), None, None),
        ]
    );
    // The same runtime everywhere: one top-level duration, none in the phases.
    assert_eq!(t.toml.matches("duration = ").count(), 1, "{}", t.toml);
    assert!(job.phases.iter().all(|p| p.run.duration_ns.is_none()));
    assert!(t.toml.contains("# fio: stonewall (section [global], line 2)\nname = \"b\""), "{}", t.toml);
}

#[test]
fn phase_names_are_unique_and_disagreements_within_a_phase_are_refused() {
    let (_, job) = tr("[global]\nstonewall\nfilename=/f\nsize=1g\n[a]\n[a]\n");
    let names: Vec<String> = phases(&job).into_iter().map(|p| p.0).collect();
    assert_eq!(names, ["a", "a_2"]);
    // Within one phase a runtime (or a size limit) must still agree.
    let e = err("[a]\nfilename=/f\nsize=1g\n[b]\nstonewall\nfilename=/f\nsize=1g\nruntime=5\n[c]\nfilename=/f\nsize=1g\nruntime=6\n");
    refused(e.clone(), "runtime", 12);
    assert!(e.to_string().contains("once per phase"), "{e}");
    refused(
        err("[a]\nfilename=/f\nsize=1g\n[b]\nstonewall\nfilename=/f\nsize=1g\n[c]\nfilename=/f\nsize=2g\n"),
        "io_size",
        8,
    );
    // Keys set once for every phase must agree between phases too.
    let e = err("[a]\nfilename=/f\nsize=1g\ndirect=1\n[b]\nstonewall\nfilename=/f\nsize=1g\ndirect=0\n");
    refused(e.clone(), "direct", 9);
    assert!(e.to_string().contains("every phase"), "{e}");
    // stonewall=0 is no wall.
    let (_, job) = tr("[a]\nfilename=/f\nsize=1g\n[b]\nstonewall=0\nfilename=/f\nsize=1g\n");
    assert!(job.phases.is_empty());
}

#[test]
fn thinktime_zero_translates_as_without_it() {
    let base = "[j]\nfilename=/data/f\nsize=1g\ntime_based\nruntime=10\n";
    let (plain, _) = tr(base);
    let (zero, job) = tr(&format!("{base}thinktime=0\n"));
    assert_eq!(zero.toml, plain.toml);
    assert_eq!((layer(&job).think, layer(&job).burst), (None, None));
    // thinktime_blocks and the other think-time options do nothing without a think time.
    let (blocks, job) =
        tr(&format!("{base}thinktime=0\nthinktime_blocks=8\nthinktime_spin=0\nrate_ignore_thinktime=1\n"));
    assert_eq!(blocks.toml, plain.toml);
    assert_eq!((layer(&job).think, layer(&job).burst), (None, None));
}

#[test]
fn thinktime_is_think_and_thinktime_blocks_is_burst() {
    // A bare number is microseconds, as in fio.
    let (t, job) = one("thinktime=100");
    assert_eq!((layer(&job).think, layer(&job).burst), (Some(100_000), Some(1)));
    assert!(t.toml.contains("# fio: thinktime=100 (section [j], line 6)\n# note: "), "{}", t.toml);
    assert!(t.toml.contains("think = \"100us\"\n"), "{}", t.toml);
    assert!(
        t.toml.contains("# fio: thinktime_blocks not set: fio's default is 1\nburst = 1\n"),
        "{}",
        t.toml
    );
    let (t, job) = one(
        "ioengine=libaio\niodepth=16\nthinktime=10ms\nthinktime_blocks=8\nthinktime_blocks_type=complete",
    );
    let l = layer(&job);
    assert_eq!((l.think, l.burst, l.qd), (Some(10_000_000), Some(8), Some(16)));
    assert!(t.toml.contains("# fio: thinktime_blocks=8 (section [j], line 9)\nburst = 8\n"), "{}", t.toml);
    // From [global], with reads and writes in specs of their own.
    let (_, job) =
        tr("[global]\nthinktime=2s\nthinktime_spin=0\nthinktime_iotime=0\n[j]\nfilename=/f\nsize=1g\n\
                       rw=randrw\nbs=4k,8k\nthinktime_blocks=4\n");
    let w = &job.worker_tables[0];
    assert_eq!((w.layer.think, w.layer.burst, w.specs.len()), (Some(2_000_000_000), Some(4), 2));
}

#[test]
fn thinktime_in_phases() {
    let (_, job) = tr("[global]\nfilename=/f\nsize=1g\ntime_based\nruntime=5\n[a]\nrw=read\n\
                       [b]\nstonewall\nrw=randread\nthinktime=1ms\nthinktime_blocks=2\n");
    let phases = job.phase_jobs();
    assert_eq!(phases.len(), 2);
    let (a, b) = (&phases[0].1.worker_tables[0].layer, &phases[1].1.worker_tables[0].layer);
    assert_eq!((a.think, a.burst), (None, None));
    assert_eq!((b.think, b.burst), (Some(1_000_000), Some(2)));
}

#[test]
fn think_time_options_without_an_equivalent_are_refused() {
    let j = "[j]\nfilename=/f\nsize=1g\n";
    refused(err(&format!("{j}thinktime=100\nthinktime_spin=50\n")), "thinktime_spin", 5);
    refused(err(&format!("{j}thinktime=100\nthinktime_iotime=1\n")), "thinktime_iotime", 5);
    refused(err(&format!("{j}thinktime=100\nthinktime_blocks_type=issue\n")), "thinktime_blocks_type", 5);
    match err(&format!("{j}thinktime=100\nthinktime_blocks=0\n")) {
        FioError::BadValue { option, line, .. } => {
            assert_eq!((option.as_str(), line), ("thinktime_blocks", 5))
        }
        other => panic!("{other}"),
    }
    match err(&format!("{j}thinktime=2h\n")) {
        FioError::BadValue { option, line, .. } => assert_eq!((option.as_str(), line), ("thinktime", 4)),
        other => panic!("{other}"),
    }
    // Think time is closed loop only.
    let e = err(&format!("{j}rate_iops=500\nthinktime=100\n"));
    refused(e.clone(), "thinktime", 5);
    assert!(e.to_string().contains("closed loop"), "{e}");
    refused(err(&format!("{j}bs=4k\nrate=1m\nthinktime=100\n")), "thinktime", 6);
    refused(
        err(&format!("{j}rate_iops=500\nthinktime=100\nrate_ignore_thinktime=1\n")),
        "rate_ignore_thinktime",
        6,
    );
    // A rate of 0 is no rate.
    let (_, job) = tr(&format!("{j}rate_iops=0\nthinktime=100\n"));
    assert_eq!((layer(&job).think, layer(&job).rate), (Some(100_000), None));
}

#[test]
fn data_options() {
    assert_eq!(layer(&one("zero_buffers").1).data, Some(DataPattern::Zero));
    assert_eq!(
        layer(&one("buffer_compress_percentage=50").1).data,
        Some(DataPattern::Compressible { pct: 50 })
    );
}

#[test]
fn kb_base_changes_prefixes() {
    assert_eq!(sizes(layer(&one("bs=4KiB\nbuffered=1").1)), vec![(4000, 1)]);
    assert_eq!(sizes(layer(&one("kb_base=1000\nbs=4KiB").1)), vec![(4096, 1)]);
}

#[test]
fn ignored_options_are_listed_once_each() {
    let (t, _) = tr("[global]\ndescription=x\ngroup_reporting\nwrite_lat_log=lat\nlog_avg_msec=1000\n\
                     per_job_logs=0\nlat_percentiles=1\npercentile_list=99:99.9\nclat_percentiles=1\nthread\n\
                     [j]\nname=myjob\nfilename=/f\nsize=1g\n");
    let names: Vec<&str> = t.ignored.iter().map(|i| i.option.as_str()).collect();
    assert_eq!(
        names,
        [
            "description",
            "group_reporting",
            "write_lat_log",
            "log_avg_msec",
            "per_job_logs",
            "lat_percentiles",
            "percentile_list",
            "clat_percentiles",
            "thread"
        ]
    );
    assert_eq!((t.ignored[1].section.as_str(), t.ignored[1].line), ("global", 3));
    assert!(t.ignored.iter().all(|i| !i.why.is_empty()));
    assert!(t.toml.contains("[worker.myjob]"), "fio's name option names the job");
}

#[test]
fn refused_options_name_option_section_and_line() {
    for (opt, val) in [
        ("trim_percentage", "10"),
        ("iodepth_batch_submit", "8"),
        ("zonemode", "zbd"),
        ("thinktime_spin", "4"),
        ("wait_for", "a"),
        ("norandommap", "0"),
        ("buffer_pattern", "0xdeadbeef"),
        ("read_iolog", "x.log"),
    ] {
        refused(err(&format!("[j]\nfilename=/f\nsize=1g\n{opt}={val}\n")), opt, 4);
    }
    one("fsync=0\nloops=1\nnorandommap\nfile_service_type=roundrobin\nend_fsync=0\nsync=none");
}

#[test]
fn unknown_options_are_refused() {
    match err("[j]\nfilename=/f\nsize=1g\nrwmixreed=60\n") {
        FioError::UnknownOption { option, section, line, .. } => {
            assert_eq!((option.as_str(), section.as_str(), line), ("rwmixreed", "j", 4))
        }
        other => panic!("{other}"),
    }
}

#[test]
fn run_wide_values_must_agree() {
    refused(err("[a]\nfilename=/f\nsize=1g\ndirect=1\n[b]\nfilename=/g\nsize=1g\ndirect=0\n"), "direct", 8);
    refused(
        err("[a]\nfilename=/f\nsize=1g\nruntime=5\n[b]\nfilename=/g\nsize=1g\nruntime=6\n"),
        "runtime",
        8,
    );
}

#[test]
fn syntax_errors_have_line_numbers() {
    let cases = [
        ("rw=read\n[j]\n", 1),
        ("[j]\nfilename=/f\n[oops\n", 3),
        ("[j]\n=value\n", 2),
        ("[global]\nbs=4k\n", 2),
        ("[j]\nsize=1g\nbs 4k\n", 3),
    ];
    for (text, line) in cases {
        match err(text) {
            FioError::Syntax { line: l, .. } => assert_eq!(l, line, "{text}"),
            other => panic!("{text}: {other}"),
        }
    }
    let unset = "[j]\nfilename=${IOLAB_TEST_SURELY_UNSET}\nsize=1g\n";
    assert!(err(unset).to_string().contains("'IOLAB_TEST_SURELY_UNSET' to be set"), "{}", err(unset));
    assert!(err("[j]\nfilename=$DEV\nsize=1g\n").to_string().contains("fio substitutes only"));
}

#[test]
fn errors_quote_what_was_written() {
    let e = err("[global]\nsize=1g\nfilename=/f\n[seq]\nioengine=rbd\n");
    assert_eq!(
        e.to_string(),
        "job.fio, line 5, [seq]: ioengine 'rbd' is not a block engine iolab has (iolab runs libaio, io_uring and posixaio jobs on io_uring, psync/sync/pvsync/pvsync2/vsync on sync, and null on a null: target)"
    );
    let e = err("[j]\nfilename=/f\nsize=1g\niodepth=9999\nioengine=libaio\n");
    assert!(e.to_string().contains("invalid value '9999' for fio option 'iodepth'"), "{e}");
}

#[test]
fn every_key_has_its_fio_comment() {
    let (t, _) = tr("[global]\nioengine=libaio\ndirect=1\n[j]\nfilename=/f\nsize=1g\nrw=randrw\nbs=8k\n");
    let lines: Vec<&str> = t.toml.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.contains(" = ") && !l.starts_with('#') {
            assert!(i > 0 && lines[i - 1].starts_with("# "), "no comment above '{l}':\n{}", t.toml);
        }
    }
}

const FIO_EXAMPLES: &[&str] = &[
    "[global]\nioengine=libaio\ndirect=1\n\n[randread]\nrw=randread\nbs=4k\niodepth=32\nfilename=/dev/nvme0n1\n",
    "; fio sequential write\n[seqwrite]\nrw=write\nsize=1g\ntime_based\nruntime=60\n",
    "[job1]\nfilename=/tmp/x\nreadwrite=randrw\nrwmixread=70\nnumjobs=4\ngroup_reporting\n",
    "[global]\ndescription=\"a test\"\nbs=4k\n[a]\nrw=read\n",
];

#[test]
fn looks_like_fio_recognises_fio_job_files() {
    for text in FIO_EXAMPLES {
        assert!(looks_like_fio(text), "{text}");
    }
}

#[test]
fn looks_like_fio_rejects_iolab_job_files() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../profiles");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("profiles/") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(!looks_like_fio(&text), "{}", path.display());
            n += 1;
        }
    }
    assert!(n > 10, "read {n} profiles");
    for text in [
        "duration = \"30s\"\nqd = 16\nbs = \"4k\"\n",
        "[worker.db]\ncount = 4\nrw = \"randread\"\n",
        "target = \"mem:1G\"\n[[spec]]\nbs = \"8k\"\n",
        "",
    ] {
        assert!(!looks_like_fio(text), "{text}");
    }
}

#[test]
fn translations_of_fio_examples_are_recognised_as_iolab_files() {
    let (t, _) = tr(FIO_EXAMPLES[1]);
    assert!(!looks_like_fio(&t.toml), "{}", t.toml);
}

#[test]
#[ignore = "prints a translation"]
fn print_example() {
    let (t, _) = tr("[global]\nioengine=libaio\ndirect=1\nruntime=60\ntime_based\ngroup_reporting\nfilename=/dev/nvme0n1\n[db]\nrw=randrw\nrwmixread=70\nbssplit=8k/80:64k\nnumjobs=4\niodepth=16\nrandom_distribution=zipf:1.1\n");
    println!("{}", t.toml);
}

#[test]
fn job_sections_and_worker_tables_are_bounded_before_translation() {
    let jobs = |n: usize| -> String {
        let mut t = String::from("[global]\nstonewall\nrw=randread\nsize=1m\n");
        t.extend((0..n).map(|i| format!("[j{i}]\n")));
        t
    };
    let (_, job) = tr(&jobs(iolab_spec::MAX_PHASES));
    assert_eq!(job.phases.len(), iolab_spec::MAX_PHASES);
    let e = err(&jobs(1001)).to_string();
    assert!(e.contains("1001 phases") && e.contains("line 1005") && e.contains("at most 1000"), "{e}");
    let e = err(&jobs(2000)).to_string();
    assert!(
        e.contains("line 1029") && e.contains("at most 1024 job sections") && e.contains("[j1024]"),
        "{e}"
    );
    let clones = "[db]\ndirectory=/mnt/t\nsize=1m\nnumjobs=1000\nrw=read\n".repeat(5);
    let e = err(&clones).to_string();
    assert!(e.contains("5 jobs make 5000 worker tables") && e.contains("at most 4096"), "{e}");
}

#[test]
fn identical_job_names_stay_unique_quickly() {
    let text = format!("[global]\nrw=read\nsize=1m\n{}", "[same]\n".repeat(1000));
    let started = std::time::Instant::now();
    let (_, job) = tr(&text);
    assert_eq!(job.worker_tables.len(), 1000);
    // A hang guard (the old code was quadratic in the names and took minutes), not a speed test.
    assert!(started.elapsed().as_secs() < 120, "{:?}", started.elapsed());
}

/// Issue 24, item 13: sums and products of numbers read from the file are checked; an overflow is refused,
/// quoting the value, never wrapped or saturated.
#[test]
fn numbers_that_overflow_are_refused_quoting_the_value() {
    let big = "9223372036854775808"; // 2^63
    let cases = [
        format!("[j]\nioengine=null\nsize={big}\noffset={big}\nrw=read\n"),
        format!("[j]\nfilename=/data/f\nsize={big}\noffset={big}\nrw=read\n"),
        format!("[j]\nfilename=/data/f\nsize=1g\nbsrange={big}-18446744073709551615\nrw=read\n"),
        format!("[global]\nfilename=/data/f\nsize=1g\nio_size={big}\nnumjobs=4\n[j]\nrw=read\n"),
    ];
    for text in &cases {
        let e = err(text).to_string();
        assert!(e.contains("too large") && e.contains(big), "{text}: {e}");
    }
}

/// Issue 25, item 12: the engine is checked before any other option, so a job for another engine is refused
/// for its engine, named, not for an option of that engine's world.
#[test]
fn the_engine_is_checked_before_any_other_option() {
    let engine = |e: FioError| match e {
        FioError::UnsupportedEngine { engine, section, line, .. } => (engine, section, line),
        other => panic!("expected UnsupportedEngine, got {other}"),
    };
    let e = engine(err("[global]\nioengine=cpuio\n[burn]\ncpuload=50\ncpuchunks=1000\n"));
    assert_eq!(e, ("cpuio".into(), "global".into(), 2));
    let e = engine(err("[j]\nzonemode=zbd\nexec_prerun=ls\nioengine=exec\n"));
    assert_eq!(e, ("exec".into(), "j".into(), 4));
    // A job that sets a block engine over [global]'s is not refused for [global]'s; the one that inherits it is.
    let e = engine(err("[global]\nioengine=net\n[a]\nioengine=libaio\nsize=1m\n[b]\nflow=1\n"));
    assert_eq!(e, ("net".into(), "global".into(), 2));
    let msg = err("[j]\nioengine=ime_psync\n").to_string();
    assert!(msg.contains("'ime_psync'") && msg.contains("not a block engine"), "{msg}");
}

const NOTE_BSSPLIT: &str = "rw=randread\nbssplit=4k/50:16k/30:64k/20";

/// Issue 25, item 12: fio's random map (on by default) shortens I/Os to fit the gaps it leaves, so a random
/// job with several block sizes issues other sizes in fio than it says; the translation says so.
#[test]
fn random_jobs_with_several_sizes_on_fios_random_map_get_a_note() {
    let (t, _) = one(NOTE_BSSPLIT);
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    let n = &t.notes[0];
    assert_eq!((n.section.as_str(), n.line), ("j", 7));
    assert!(n.text.contains("norandommap=1") && n.text.contains("57%"), "{}", n.text);
    assert!(t.toml.contains("norandommap=1"), "the job file says it too:\n{}", t.toml);
    for quiet in [
        "rw=randread\nbssplit=4k/50:16k/30:64k/20\nnorandommap=1",
        "rw=randread\nbssplit=4k/50:16k/30:64k/20\nnorandommap",
        "rw=read\nbssplit=4k/50:16k/30:64k/20",
        "rw=randread\nbs=4k",
        "rw=randwrite\nbs=4k,8k",
    ] {
        let (t, _) = one(quiet);
        assert!(t.notes.is_empty(), "{quiet}: {:?}", t.notes);
    }
    let (t, _) = one("rw=randrw\nbsrange=4k-64k");
    assert_eq!(t.notes.len(), 1, "bsrange is several sizes too");
}

/// Issue 25, item 12: a job on a device with no size does fio's one pass over it when the command line gives
/// the target (and so its size), as `iolab run jesd219.fio --target mem:256M` does.
#[test]
fn a_job_without_size_does_one_pass_over_the_target_given() {
    let text = "[JESD219]\nioengine=libaio\ndirect=1\nrw=randrw\nnorandommap\nrandrepeat=0\nrwmixread=40\n\
                iodepth=256\nnumjobs=4\nbssplit=512/4:4k/86:64k/10\nblockalign=4k\nfilename=/dev/nvme0n1\n";
    refused(err(text), "size", 1);
    let t = translate_given(text, "job.fio", Given { target_bytes: Some(256 << 20), target_fixed: false })
        .unwrap();
    let job = JobSpec::from_toml(&t.toml, "job.fio").unwrap();
    assert_eq!(job.bytes, Some(4 * (256 << 20)), "one pass per job, four jobs:\n{}", t.toml);
    assert!(t.toml.contains("one pass"), "{}", t.toml);
    let with_offset = format!("{text}offset=16m\n");
    let t = translate_given(
        &with_offset,
        "job.fio",
        Given { target_bytes: Some(256 << 20), target_fixed: false },
    )
    .unwrap();
    let job = JobSpec::from_toml(&t.toml, "job.fio").unwrap();
    assert_eq!(job.bytes, Some(4 * (240 << 20)));
    let past = format!("{text}offset=1g\n");
    refused(
        translate_given(&past, "job.fio", Given { target_bytes: Some(256 << 20), target_fixed: false })
            .unwrap_err(),
        "offset",
        13,
    );
    // A size in the file wins over the target's.
    let sized = format!("{text}size=64m\n");
    let t = translate_given(&sized, "job.fio", Given { target_bytes: Some(256 << 20), target_fixed: false })
        .unwrap();
    assert_eq!(JobSpec::from_toml(&t.toml, "job.fio").unwrap().bytes, Some(4 * (64 << 20)));
}

/// Issue 25, item 15: fio ends a line at its first ';' or '#', so a comment after a value is not the value.
#[test]
fn comments_after_a_value_end_it_as_in_fio() {
    let (_, job) = tr("[j]\nfilename=/data/f\t; or /dev/sda\nsize=1g # the region\nnumjobs=4\t; four\n");
    assert_eq!(job.worker_tables[0].count, 4);
    assert_eq!(layer(&job).target, Some(vec![TargetSpec::Path { path: "/data/f".into() }]));
}

/// Issue 25, item 15: `loops=N` repeats the job's pass N times; `fill_device` is one pass over the target.
#[test]
fn loops_multiply_the_limits_and_fill_device_is_one_pass_over_the_target() {
    let (t, job) = tr("[j]\nfilename=/data/f\nrw=randrw\nsize=256k\nloops=500\n");
    assert_eq!(job.bytes, Some(500 * (256 << 10)));
    assert!(t.toml.contains("times 500 (loops, line 5)"), "{}", t.toml);
    let (_, job) = tr("[j]\nfilename=/data/f\nsize=1m\nnumber_ios=10\nloops=3\n");
    assert_eq!(job.ios, Some(30));
    assert!(matches!(err("[j]\nfilename=/f\nsize=1m\nloops=0\n"), FioError::BadValue { .. }));
    let fill = "[w]\nfilename=/dev/sdx\nrw=write\nsize=1m\nfill_device=1\n";
    refused(err(fill), "fill_device", 5);
    let t = translate_given(fill, "job.fio", Given { target_bytes: Some(64 << 20), target_fixed: false })
        .unwrap();
    assert_eq!(JobSpec::from_toml(&t.toml, "job.fio").unwrap().bytes, Some(64 << 20));
}

/// Issue 25, item 15: `wait_for` naming the only job running before is a stonewall; naming one of several is
/// refused, saying which jobs run.
#[test]
fn wait_for_the_only_job_before_is_a_phase() {
    let text =
        "[global]\nfilename=/data/f\nsize=1m\nruntime=10\ntime_based\n[writers]\nrw=write\nnumjobs=2\n\
                [readers]\nwait_for=writers\nrw=randread\n[again]\nwait_for=readers\nrw=write\n";
    let (_, job) = tr(text);
    assert_eq!(phases(&job).len(), 3, "{:?}", phases(&job));
    let e = err("[global]\nfilename=/f\nsize=1m\n[a]\n[b]\n[c]\nwait_for=a\n");
    refused(e.clone(), "wait_for", 7);
    assert!(e.to_string().contains("[\"a\", \"b\"]"), "{e}");
}

/// Issue 25, item 15: `steadystate` (`ss`) runs the whole runtime, with a note giving iolab's flags.
#[test]
fn steadystate_is_a_note_with_the_flags_that_stop_the_same_way() {
    let (t, _) = one("ss=iops:10%\nss_dur=30s\nss_ramp=10s");
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(
        t.notes[0]
            .text
            .contains("--steady-state iops:10% --steady-state-window 30s --steady-state-limit 10s"),
        "{:?}",
        t.notes
    );
    assert!(t.toml.contains("# note ([j], line 6): fio ends this job once iops is steady"), "{}", t.toml);
    let (t, _) = one("steadystate=bw_slope:1%\nsteadystate_duration=10s");
    assert!(t.notes[0].text.contains("not a slope"), "{:?}", t.notes);
    assert!(matches!(err("[j]\nfilename=/f\nsize=1m\nsteadystate=speed:1%\n"), FioError::BadValue { .. }));
}

/// Issue 25, item 15: a zone share left out is the rest of 100%, as fio fills it (fio's rand-zones.fio).
#[test]
fn zoned_shares_left_out_are_the_rest() {
    let (_, job) = one("rw=randread\nrandom_distribution=zoned:50/5:30/15:20/");
    let (_, full) = one("rw=randread\nrandom_distribution=zoned:50/5:30/15:20/80");
    assert_eq!(layer(&job).dist, layer(&full).dist);
    assert!(layer(&job).dist.is_some());
}

/// Issue 25, item 15: options of fio's examples that do not change the I/O are ignored, each with why.
#[test]
fn options_of_fios_examples_that_do_not_change_the_io_are_ignored_with_why() {
    let opts = [
        "threads=1",
        "io_submit_mode=offload",
        "random_generator=lfsr",
        "exitall",
        "exit_what=stonewall",
        "ratemin=1024",
        "ignore_error=,ENOSPC",
        "error_dump=0",
        "allow_file_create=0",
        "prioclass=3",
        "prio=7",
        "verify_dump=1",
    ];
    let (t, _) = one(&opts.join("\n"));
    let names: Vec<&str> = t.ignored.iter().map(|i| i.option.as_str()).collect();
    let want: Vec<&str> = opts.iter().map(|o| o.split('=').next().unwrap()).collect();
    assert_eq!(names, want);
    assert!(t.ignored.iter().all(|i| !i.why.is_empty()));
    assert!(t.ignored.iter().any(|i| i.why.contains("ionice")));
}

/// Issue 25, item 15: fio's per-command priorities (`cmdprio_*`, cmdprio-percentage.fio and cmdprio-bssplit.fio)
/// put a priority on a share of the I/Os; the I/Os issued are the same, so they are ignored, each saying that
/// iolab issues every I/O at one priority, and the translation is the one without them.
#[test]
fn per_command_priorities_are_ignored_with_why() {
    let opts = [
        "cmdprio_percentage=20",
        "cmdprio_class=1",
        "cmdprio=0",
        "cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0",
        "cmdprio_hint=1",
    ];
    let (t, job) = one(&format!("rw=randread\nbs=128k\n{}", opts.join("\n")));
    let names: Vec<&str> = t.ignored.iter().map(|i| i.option.as_str()).collect();
    let want: Vec<&str> = opts.iter().map(|o| o.split('=').next().unwrap()).collect();
    assert_eq!(names, want);
    assert!(t.ignored.iter().all(|i| i.why.contains("at the process's priority")), "{:?}", t.ignored);
    assert_eq!(job, one("rw=randread\nbs=128k").1, "the same I/O as without them");
}

/// Issue 25, item 15: `exitall` is ignored when every job runs for its runtime (they end together, as in
/// iolab); with size limits fio stops every job when the first ends, and the translation says so.
#[test]
fn exitall_with_size_limits_gets_a_note() {
    let (t, _) = one("exitall");
    assert!(t.notes.is_empty() && t.ignored.iter().any(|i| i.option == "exitall"), "{:?}", t.notes);
    let (t, _) = tr("[global]\nfilename=/data/f\nsize=64m\nexitall=1\n[a]\nrw=read\n[b]\nrw=randread\n");
    assert_eq!(t.notes.len(), 2, "{:?}", t.notes);
    assert!(t.notes[0].text.contains("time_based=1"), "{:?}", t.notes);
    let (t, _) = tr("[global]\nfilename=/data/f\nsize=64m\nexitall=0\n[a]\n");
    assert!(t.notes.is_empty());
}

#[test]
fn fsync_fdatasync_and_sync_become_iolabs_durability_keys() {
    let (t, job) = one("rw=randwrite\nfsync=32");
    assert_eq!((layer(&job).fsync, layer(&job).fdatasync), (Some(32), None));
    assert!(t.toml.contains("# fio: fsync=32 (section [j], line 7)\nfsync = 32"), "{}", t.toml);
    let (_, job) = one("rw=write\nfdatasync=1");
    assert_eq!((layer(&job).fsync, layer(&job).fdatasync), (None, Some(1)));
    for (v, mode) in [("1", WriteSync::Sync), ("sync", WriteSync::Sync), ("dsync", WriteSync::Dsync)] {
        let (_, job) = one(&format!("rw=randrw\nsync={v}"));
        assert_eq!(layer(&job).sync, Some(mode), "sync={v}");
    }
    for v in ["0", "none"] {
        let (_, job) = one(&format!("rw=write\nsync={v}"));
        assert_eq!(layer(&job).sync, None, "sync={v}");
    }
    // fio flushes and syncs after writes only: a read job gets neither key.
    let (t, job) = one("rw=randread\nfsync=4\nsync=1");
    assert_eq!((layer(&job).fsync, layer(&job).sync), (None, None), "{}", t.toml);
    // fsync=0 turns it off, as in iolab.
    let (_, job) = one("rw=write\nfsync=0\nfdatasync=8");
    assert_eq!((layer(&job).fsync, layer(&job).fdatasync), (None, Some(8)));
}

#[test]
fn durability_values_iolab_cannot_take_are_refused_quoting_them() {
    refused(err("[j]\nfilename=/f\nsize=1g\nrw=write\nfsync=4\nfdatasync=8\n"), "fdatasync", 6);
    let msg = err("[j]\nfilename=/f\nsize=1g\nrw=write\nfsync=4\nfdatasync=8\n").to_string();
    assert!(msg.contains("keep one"), "{msg}");
    let e = err("[j]\nfilename=/f\nsize=1g\nrw=write\nsync=fua\n");
    assert!(matches!(&e, FioError::BadValue { value, line: 5, .. } if value == "fua"), "{e}");
    let e = err("[j]\nfilename=/f\nsize=1g\nrw=write\nfsync=2000000\n");
    assert!(matches!(&e, FioError::BadValue { value, .. } if value == "2000000"), "{e}");
}

#[test]
fn end_of_job_flushes_are_refused_unless_the_job_flushes_as_it_goes() {
    for opt in ["end_fsync", "fsync_on_close"] {
        let e = err(&format!("[j]\nfilename=/f\nsize=1g\nrw=write\n{opt}=1\n"));
        refused(e.clone(), opt, 5);
        assert!(e.to_string().contains("fsync=N or fdatasync=N"), "{e}");
        for (with, says) in [
            ("fdatasync=1", "after every write"),
            ("fsync=16", "fewer than 16"),
            ("sync=dsync", "durable when it completes"),
        ] {
            let (t, _) = one(&format!("rw=randwrite\n{with}\n{opt}=1"));
            assert_eq!(t.notes.len(), 1, "{}", t.toml);
            assert!(t.notes[0].text.starts_with(opt) && t.notes[0].text.contains(says), "{:?}", t.notes);
            assert!(t.toml.contains("# note ([j], line 8): "), "{}", t.toml);
        }
        let (t, _) = one(&format!("rw=randread\n{opt}=1"));
        assert!(t.notes[0].text.contains("writes nothing"), "{:?}", t.notes);
    }
}

#[test]
fn write_barrier_is_ignored_with_why() {
    let (t, job) = one("rw=write\nwrite_barrier=8");
    assert_eq!((layer(&job).fsync, layer(&job).fdatasync), (None, None));
    let i = t.ignored.iter().find(|i| i.option == "write_barrier").expect("listed as ignored");
    assert!(i.why.contains("libpmem") && i.why.contains("not a flush"), "{}", i.why);
}

#[test]
fn trim_and_randtrim_are_trim_jobs_with_the_trim_sizes() {
    let (t, job) = one("rw=randtrim\nbs=4k");
    let l = layer(&job);
    assert_eq!(
        (l.trim_pct, l.random_pct, sizes(l)),
        (Some(100.0), Some(100.0), vec![(4096, 1)]),
        "{}",
        t.toml
    );
    assert!(
        t.toml.contains("# fio: rw=randtrim (section [j], line 6)\n# note: every op is a trim"),
        "{}",
        t.toml
    );
    let (_, job) = one("rw=trim");
    assert_eq!((layer(&job).trim_pct, layer(&job).random_pct), (Some(100.0), Some(0.0)));
    // bs=read,write,trim: a trim job takes the third part; two parts give trims the second, as fio.
    for (bs, trim) in [("4k,8k,64k", 65536), ("4k,8k", 8192), ("4k,8k,", 4096), (",,1m", 1 << 20)] {
        let (_, job) = one(&format!("rw=trim\nbs={bs}"));
        assert_eq!(sizes(layer(&job)), vec![(trim, 1)], "bs={bs}");
    }
    let (_, job) = one("rw=randtrim\nbssplit=4k,4k,8k/50:64k/50");
    assert_eq!(sizes(layer(&job)), vec![(8192, 1), (65536, 1)]);
    let (_, job) = one("rw=randtrim\npercentage_random=100,100,50");
    assert_eq!(layer(&job).random_pct, Some(50.0));
    // The trim part of other jobs' options changes nothing: fio issues no trims there.
    let (_, job) = one("rw=randwrite\nbs=4k,8k,1m");
    assert_eq!((sizes(layer(&job)), layer(&job).trim_pct), (vec![(8192, 1)], None));
    // fio flushes after writes only: fsync in a trim job asks for nothing.
    let (_, job) = one("rw=trim\nfsync=1");
    assert_eq!(layer(&job).fsync, None);
}

/// Issue 36, item 8: `rw=trimwrite` and `randtrimwrite` are trim-then-write pairs (`trim_then_write`, half
/// the ops trims, no reads), sequential or random.
#[test]
fn trimwrite_is_trim_then_write_pairs() {
    for (rw, random) in [("trimwrite", 0.0), ("randtrimwrite", 100.0)] {
        let (t, job) = tr(&format!("[j]\nfilename=/f\nsize=1g\nrw={rw}\n"));
        let l = layer(&job);
        assert_eq!(
            (l.trim_then_write, l.trim_pct, l.read_pct),
            (Some(true), Some(50.0), Some(0.0)),
            "{}",
            t.toml
        );
        assert_eq!(l.random_pct, Some(random));
        assert!(t.toml.contains("followed by a write of the same block"), "{}", t.toml);
    }
}

#[test]
fn etcd_disk_check_imports_as_buffered_fdatasync_writes() {
    let text = include_str!("../../../../docs/etcd-disk-check.fio");
    let (t, job) = tr(text);
    let l = layer(&job);
    assert_eq!(
        (l.fdatasync, l.fsync, l.sync, l.read_pct, l.random_pct, l.qd),
        (Some(1), None, None, Some(0.0), Some(0.0), Some(1)),
        "{}",
        t.toml
    );
    assert_eq!(sizes(l), vec![(2300, 1)]);
    assert_eq!(job.direct, Some(false), "fio's default is buffered I/O; bs=2300 needs it");
    assert_eq!(job.engine, Some(EngineKind::Sync));
    assert_eq!(job.bytes, Some(22 << 20), "one pass over size=22m");
    assert_eq!(l.target.as_ref().map(Vec::len), Some(1), "{}", t.toml);
    assert!(t.toml.contains("target = \"test-data/mytest.0.0\""), "{}", t.toml);
    assert!(t.notes.is_empty() && t.ignored.is_empty(), "{:?} {:?}", t.notes, t.ignored);
}

/// Issue 36, item 7: on a target of fixed size (a device, `mem:`), fio's `size` is the region, clamped to the
/// target with a note; the one pass ends at the target's end; an offset past the end is refused.
#[test]
fn size_on_a_fixed_target_is_its_region_clamped_to_the_target() {
    let fixed = Given { target_bytes: Some(16 << 20), target_fixed: true };
    let t = translate_given("[j]\nrw=read\nsize=8m\n", "job.fio", fixed).unwrap();
    let job = JobSpec::from_toml(&t.toml, "job.fio").unwrap();
    assert_eq!(job.bytes, Some(8 << 20));
    assert!(t.toml.contains("length = \"8M\"") && !t.toml.contains("\nsize ="), "{}", t.toml);
    assert!(t.notes.is_empty(), "{:?}", t.notes);
    let t = translate_given("[j]\nrw=read\noffset=4m\nsize=100g\n", "job.fio", fixed).unwrap();
    let job = JobSpec::from_toml(&t.toml, "job.fio").unwrap();
    assert_eq!(job.bytes, Some(12 << 20));
    assert!(t.toml.contains("length = \"12M\""), "{}", t.toml);
    assert_eq!(t.notes.len(), 1, "{:?}", t.notes);
    assert!(t.notes[0].text.contains("size=100g runs past the end"), "{:?}", t.notes);
    assert!(t.toml.contains("# note ([j], line 4): size=100g"), "{}", t.toml);
    assert!(t.toml.contains("# note: cut to the end of the target given"), "{}", t.toml);
    let e = translate_given("[j]\nrw=read\noffset=16m\nsize=1m\n", "job.fio", fixed).unwrap_err();
    refused(e, "offset", 3);
}

/// Issue 36, item 8: fio substitutes `${NAME}` from the environment and `$pagesize`, `$mb_memory`, `$ncpus`
/// in values; the translation does the same with the values it is given, and says each in a note.
#[test]
fn environment_variables_and_fio_keywords_are_substituted_with_a_note() {
    let vars = crate::fio::FioVars {
        env: [("RW".to_string(), "randwrite".to_string()), ("QD".into(), "8".into())].into_iter().collect(),
        pagesize: 4096,
        mb_memory: 2048,
        ncpus: 3,
        sections: Vec::new(),
    };
    let text =
        "[global]\nrw=${RW}\n[j]\niodepth=${QD}\nioengine=libaio\nbs=$pagesize\nnumjobs=$ncpus\nsize=1m\nfilename=/data/f\n";
    let t = crate::fio::translate_with(text, "job.fio", Given::default(), &vars).unwrap();
    let job = JobSpec::from_toml(&t.toml, "job.fio").unwrap();
    assert_eq!(job.worker_tables[0].count, 3, "{}", t.toml);
    assert!(
        t.toml.contains("qd = 8") && t.toml.contains("bs = \"4K\"") && t.toml.contains("read_pct = 0"),
        "{}",
        t.toml
    );
    assert_eq!(t.notes.len(), 5, "four substitutions and libaio's engine: {:?}", t.notes);
    assert!(t.notes[0].text.starts_with("rw=${RW} is rw=randwrite"), "{:?}", t.notes);
    assert!(t.notes[4].text.starts_with("ioengine libaio is fio's"), "{:?}", t.notes);
    let math = "[j]\nsize=$mb_memory/2\n";
    let e = crate::fio::translate_with(math, "job.fio", Given::default(), &vars).unwrap_err();
    assert!(e.to_string().contains("bc"), "{e}");
}

/// Issue 36, item 8: `rw=read:8k` skips 8k after each sequential I/O and `rw=read:-8k` reads backwards, as
/// `seq_skip`.
#[test]
fn a_sequential_skip_is_seq_skip_and_backwards_is_negative() {
    let (t, job) = tr("[j]\nfilename=/data/f\nsize=1m\nrw=read:-8k\n");
    assert_eq!(layer(&job).seq_skip, Some(-8192), "{}", t.toml);
    let (_, job) = tr("[j]\nfilename=/data/f\nsize=1m\nrw=write:4k\n");
    assert_eq!(layer(&job).seq_skip, Some(4096));
    let (t, _) = tr("[j]\nfilename=/data/f\nsize=1m\nrw=rw:4k\n");
    assert!(t.toml.contains("cursor per direction"), "{}", t.toml);
}

/// Issue 36, item 8: `startdelay` is `start_delay` (a range stays a range, each worker drawing its own), with
/// the note that fio counts the job's runtime from its own start; `startdelay=0` is no key.
#[test]
fn startdelay_is_start_delay_with_a_note() {
    let (t, job) = one("startdelay=4");
    assert_eq!(layer(&job).start_delay, Some((4_000_000_000, 4_000_000_000)), "{}", t.toml);
    assert!(t.toml.contains("from its own start"), "{}", t.toml);
    let (_, job) = one("startdelay=1-5");
    assert_eq!(layer(&job).start_delay, Some((1_000_000_000, 5_000_000_000)));
    let (_, job) = one("startdelay=500ms");
    assert_eq!(layer(&job).start_delay, Some((500_000_000, 500_000_000)));
    let (_, job) = one("startdelay=0");
    assert_eq!(layer(&job).start_delay, None);
    assert!(matches!(err("[j]\nfilename=/f\nsize=1g\nstartdelay=5-1\n"), FioError::BadValue { line: 4, .. }));
}

/// Issue 36, item 8: fio's flow control (`flow`, `flow_id`, `flow_sleep` in microseconds) is iolab's flow keys;
/// `flow=0` (fio's default) is none, and a weight above fio's 1000 is refused as fio refuses it.
#[test]
fn flow_weights_map_to_the_flow_keys() {
    let (t, job) =
        tr("[global]\nfilename=/data/f\nsize=1g\nflow_sleep=1000\n[a]\nflow=1\n[b]\nflow=8\nflow_id=2\n");
    let (a, b) = (&job.worker_tables[0].layer, &job.worker_tables[1].layer);
    assert_eq!((a.flow, a.flow_id, a.flow_sleep), (Some(1), None, Some(1_000_000)), "{}", t.toml);
    assert_eq!((b.flow, b.flow_id, b.flow_sleep), (Some(8), Some(2), Some(1_000_000)));
    let (_, job) = one("flow=0");
    assert_eq!(layer(&job).flow, None);
    assert!(matches!(err("[j]\nfilename=/f\nsize=1g\nflow=1001\n"), FioError::BadValue { line: 4, .. }));
}

/// Issue 36, item 8: fio's latency-target mode is iolab's depth search: `latency_target` and `latency_window`
/// (microseconds when bare) and `latency_percentile`; without `latency_run=1` a note says fio stops at the
/// depth it finds; with a rate (open loop) it is refused by name.
#[test]
fn latency_target_is_the_depth_search() {
    let (t, job) = one("iodepth=128\nioengine=libaio\nlatency_target=500000\nlatency_window=5000000\nlatency_percentile=99.9");
    let l = layer(&job);
    assert_eq!(
        (l.latency_target, l.latency_window, l.latency_percentile),
        (Some(500_000_000), Some(5_000_000_000), Some(99.9))
    );
    assert!(t.toml.contains("latency_run=1"), "{}", t.toml);
    let (t, _) = one("latency_target=2ms\nlatency_run=1");
    assert!(!t.toml.contains("# note: fio stops the job"), "{}", t.toml);
    refused(err("[j]\nfilename=/f\nsize=1g\nrate_iops=100\nlatency_target=1ms\n"), "latency_target", 5);
}

/// Issue 36, item 8: `create_on_open=1` is `prealloc = "none"` (the files iolab creates are empty until the
/// run's writes grow them, as fio's job creates its file when it opens it), with a note; `=0` is nothing.
#[test]
fn create_on_open_is_prealloc_none() {
    let (t, job) = one("create_on_open=1\nrw=randwrite");
    assert_eq!(job.prealloc, Some(iolab_spec::Prealloc::None), "{}", t.toml);
    assert!(t.toml.contains("lays nothing out first"), "{}", t.toml);
    let (_, job) = one("create_on_open=0");
    assert_eq!(job.prealloc, None);
}

/// Issue 36, item 8: `rw=randread:8` is `random_run = 8` (8 I/Os per random offset, the rest sequential
/// after it), `:identical` with `rw_sequencer=identical`; `:1` changes nothing; mixed jobs get a note.
#[test]
fn random_runs_map_to_random_run() {
    let (t, job) = one("rw=randread:8");
    assert_eq!(layer(&job).random_run, Some((8, false)), "{}", t.toml);
    let (t, job) = one("rw=randwrite:4\nrw_sequencer=identical");
    assert_eq!(layer(&job).random_run, Some((4, true)), "{}", t.toml);
    assert!(t.toml.contains("rw_sequencer=identical"), "{}", t.toml);
    let (_, job) = one("rw=randread:1\nrw_sequencer=identical");
    assert_eq!(layer(&job).random_run, None);
    let (t, _) = one("rw=randrw:8");
    assert!(t.toml.contains("per direction"), "{}", t.toml);
    assert!(matches!(
        err("[j]\nfilename=/f\nsize=1g\nrw_sequencer=twice\n"),
        FioError::BadValue { line: 4, .. }
    ));
}

/// Issue 36, item 8: `zonemode=strided` with `zonesize`, `zonerange` and `zoneskip` is a `band` walk (zonerange
/// defaulting to zonesize, as fio's init.c has it), saying what it does; on the fixed-size target given the
/// zones walk to its end (no `length`), `size` limiting the bytes. `zonemode=zbd` stays refused by name, and
/// fio's own refusals (zonesize without zonemode=strided, strided without zonesize) are bad values.
#[test]
fn strided_zones_are_a_band_walk() {
    let (t, job) = one("zonemode=strided\nzonesize=256m\nzoneskip=2g");
    let band = iolab_spec::Band { size: 256 << 20, skip: 2 << 30, bytes: 256 << 20 };
    assert_eq!(layer(&job).band, Some(band), "{}", t.toml);
    assert!(t.toml.contains("# fio: zoneskip=2g (section [j], line 8)"), "{}", t.toml);
    assert!(t.toml.contains("256M of I/O in each zone of 256M"), "{}", t.toml);
    let (_, job) = one("zonemode=strided\nzonesize=1m\nzonerange=4m");
    assert_eq!(layer(&job).band, Some(iolab_spec::Band { size: 4 << 20, skip: 0, bytes: 1 << 20 }));
    let text = "[j]\nrw=read\nbs=64k\nsize=512m\nzonemode=strided\nzonesize=64m\nzoneskip=64m\n";
    let fixed = Given { target_bytes: Some(1 << 30), target_fixed: true };
    let t = translate_given(text, "job.fio", fixed).unwrap();
    let job = JobSpec::from_toml(&t.toml, "job.fio").unwrap();
    assert_eq!((layer(&job).length, job.bytes), (None, Some(512 << 20)), "{}", t.toml);
    refused(err("[j]\nfilename=/f\nsize=1g\nzonemode=zbd\nzonesize=256m\n"), "zonemode", 4);
    for bad in
        ["zonesize=256m", "zonemode=strided", "zonemode=none\nzonesize=1m", "zonemode=strided\nzonesize=2z"]
    {
        let e = err(&format!("[j]\nfilename=/f\nsize=1g\n{bad}\n"));
        assert!(matches!(e, FioError::BadValue { .. }), "{bad}: {e}");
    }
    let (t, job) = tr("[j]\nfilename=/a:/b\nsize=1g\nzonemode=strided\nzonesize=1m\n");
    assert_eq!(layer(&job).band, None);
    assert!(t.notes.iter().any(|n| n.text.contains("more than one file")), "{:?}", t.notes);
}

/// Issue 36, item 8: `random_distribution=sequence:2,0,1` is `dist = "sequence:2,0,1"`, and with
/// `random_sequence_stride=1` `":advance"` (with a note on where fio ends); a sequential job ignores it, as fio.
#[test]
fn a_sequence_distribution_is_dist_sequence() {
    let (_, job) = one("rw=randread\nrandom_distribution=sequence:2, 0,1");
    assert_eq!(layer(&job).dist, Some(Dist::Sequence { blocks: vec![2, 0, 1], advance: false }));
    let (t, job) = one("rw=randread\nrandom_distribution=sequence:2,0,1\nrandom_sequence_stride=1");
    assert_eq!(layer(&job).dist, Some(Dist::Sequence { blocks: vec![2, 0, 1], advance: true }));
    assert!(t.toml.contains("# fio: random_sequence_stride=1 (section [j], line 8)"), "{}", t.toml);
    assert!(t.toml.contains("fio ends the job"), "{}", t.toml);
    let (_, job) = one("rw=read\nrandom_distribution=sequence:2,0,1");
    assert_eq!(layer(&job).dist, None);
    let e = err("[j]\nfilename=/f\nsize=1g\nrw=randread\nrandom_distribution=sequence:2,x\n");
    assert!(matches!(e, FioError::BadValue { line: 5, .. }), "{e}");
}

/// Issue 36, item 8: `sprandom=1` (`spr_op`, `spr_num_regions`) is `dist = "sprandom:OP:N"` with the pass's
/// size as the byte limit (the region plus OP, rounded down to bs, as fio's `sprandom_init` sets io_size);
/// fio's sprandom.fio imports once its `${FIO_BS}` is given. Reads, `spr_cs` and `time_based` are refused.
#[test]
fn sprandom_is_a_pass_of_preconditioning_writes() {
    let fixed = Given { target_bytes: Some(1 << 30), target_fixed: true };
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fio-examples/sprandom.fio"))
            .unwrap();
    let vars = FioVars { env: [("FIO_BS".to_string(), "4096".to_string())].into(), ..FioVars::default() };
    let t = translate_with(&text, "sprandom.fio", fixed, &vars).unwrap_or_else(|e| panic!("{e}"));
    let job = JobSpec::from_toml(&t.toml, "sprandom.fio").unwrap();
    assert_eq!(layer(&job).dist, Some(Dist::Sprandom { op: 0.15, regions: 100 }), "{}", t.toml);
    assert_eq!(job.bytes, Some(1_234_800_640), "1 GiB plus 15%, in 4k blocks: {}", t.toml);
    assert!(t.toml.contains("one pass of 1234800640 bytes"), "{}", t.toml);
    for (opts, option) in [
        ("rw=randrw\nsprandom=1", "sprandom"),
        ("rw=randwrite\nsprandom=1\nspr_cs=1m", "spr_cs"),
        ("rw=randwrite\nsprandom=1\ntime_based\nruntime=10", "sprandom"),
    ] {
        let e = translate_given(&format!("[p]\nbs=4k\n{opts}\n"), "job.fio", fixed).unwrap_err();
        assert!(matches!(&e, FioError::Unsupported { option: o, .. } if o == option), "{opts}: {e}");
    }
}

/// Issue 36, item 8: fio's `--section NAME` (repeatable) reads only the job sections named and `[global]`; the
/// other sections are skipped unread, an unknown option or an unset `${VAR}` in them included (fio's init.c,
/// `skip_this_section`). xnvme-compare.fio's header runs it with `--section=default`.
#[test]
fn section_reads_only_the_job_sections_named() {
    let text = "[global]\nrw=read\nsize=1m\nfilename=/data/f\n[a]\nbs=8k\n[b]\nbogus_option=1\nrw=${UNSET_X}\n[c]\nbs=16k\nstonewall\n";
    let only = |names: &[&str]| FioVars {
        sections: names.iter().map(|n| n.to_string()).collect(),
        ..FioVars::default()
    };
    let t = translate_with(text, "s.fio", Given::default(), &only(&["a"])).unwrap_or_else(|e| panic!("{e}"));
    let job = JobSpec::from_toml(&t.toml, "s.fio").unwrap();
    let names: Vec<&str> = job.worker_tables.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["a"], "{}", t.toml);
    assert!(t.toml.contains("bs = \"8K\""), "{}", t.toml);
    let t = translate_with(text, "s.fio", Given::default(), &only(&["c", "a"])).unwrap();
    let job = JobSpec::from_toml(&t.toml, "s.fio").unwrap();
    assert_eq!(job.phases.len(), 2, "[c]'s stonewall still starts a phase: {}", t.toml);
    // Without --section, [b] is read and refused, as fio refuses it.
    let e = translate_with(text, "s.fio", Given::default(), &FioVars::default()).unwrap_err();
    assert!(matches!(&e, FioError::UnknownOption { option, .. } if option == "bogus_option"), "{e}");
}

/// A `--section` name the file has no job section of is refused quoting it and listing the job sections; so is
/// `global` (fio: "can't use global as only section"), and one unknown name among known ones.
#[test]
fn section_of_no_such_name_is_refused_listing_the_sections() {
    let text = "[global]\nrw=read\nsize=1m\nfilename=/data/f\n[default]\n[override]\nbs=8k\n";
    for (names, expect) in [
        (vec!["defualt"], "invalid value 'defualt' for '--section': expected the name of one of the file's job sections: [default], [override]"),
        (vec!["default", "x"], "invalid value 'x' for '--section'"),
        (vec!["global"], "invalid value 'global' for '--section': expected the name of a job section: fio reads [global] whatever --section says"),
    ] {
        let vars = FioVars { sections: names.iter().map(|n| n.to_string()).collect(), ..FioVars::default() };
        let e = translate_with(text, "x.fio", Given::default(), &vars).unwrap_err();
        assert!(matches!(e, FioError::Section { .. }), "{e}");
        assert!(e.to_string().starts_with("x.fio: "), "{e}");
        assert!(e.to_string().contains(expect), "{names:?}: {e}");
    }
}

/// Issue 36, item 8: `offset_increment=N` with `numjobs` clones: clone k's region starts at offset + k × N
/// (filesetup.c, `get_start_offset`), so each clone is a worker table with its own `offset`. fio 3.33 on a 1 MiB
/// file (`bs=16k rw=write:112k offset=120k offset_increment=256k io_size=32k loops=2 numjobs=3`) writes at
/// 120k, 248k, 376k, 504k / 376k ... 760k / 632k, 760k, 888k, 632k: the same regions. A clone starting past the
/// target's end (fio fails it), a region cut short at the end, one pass per clone and `size` on a file to
/// create are refused naming the option.
#[test]
fn offset_increment_gives_each_clone_its_own_offset() {
    let fixed = |n: u64| Given { target_bytes: Some(n), target_fixed: true };
    let text = |more: &str| {
        format!("[w]\nfilename=/dev/sdx\nbs=16k\nrw=write:112k\noffset=120k\noffset_increment=256k\nnumjobs=3\n{more}")
    };
    let t = translate_given(&text("io_size=32k\nloops=2\n"), "oi.fio", fixed(1 << 20)).unwrap();
    let job = JobSpec::from_toml(&t.toml, "oi.fio").unwrap();
    let offsets: Vec<Option<u64>> = job.worker_tables.iter().map(|w| w.layer.offset).collect();
    assert_eq!(offsets, [Some(120 << 10), Some(376 << 10), Some(632 << 10)], "{}", t.toml);
    assert!(job.worker_tables.iter().all(|w| w.count == 1), "{}", t.toml);
    assert_eq!(job.bytes, Some(3 * (64 << 10)), "io_size x loops per clone: {}", t.toml);
    assert!(t.toml.contains("clone 2 of 3 starts at offset + 2 x offset_increment"), "{}", t.toml);
    // One job, or no increment: one table, as before.
    let t =
        translate_given(&text("io_size=32k\n").replace("numjobs=3", "numjobs=1"), "oi.fio", fixed(1 << 20));
    assert_eq!(
        JobSpec::from_toml(&t.unwrap().toml, "oi.fio").unwrap().worker_tables[0].layer.offset,
        Some(120 << 10)
    );
    let bad = |more: &str, given: Given| translate_given(&text(more), "oi.fio", given).unwrap_err();
    let e = bad("io_size=32k\n", fixed(512 << 10));
    assert!(matches!(&e, FioError::BadValue { option, .. } if option == "offset_increment"), "{e}");
    assert!(e.to_string().contains("clone 2 would start at 647168 bytes"), "{e}");
    let e = bad("size=200k\n", fixed(768 << 10));
    assert!(matches!(&e, FioError::BadValue { option, .. } if option == "offset_increment"), "{e}");
    for (more, given) in [("", fixed(1 << 20)), ("size=64k\n", Given::default())] {
        let e = translate_given(&text(more).replace("/dev/sdx", "/data/f"), "oi.fio", given).unwrap_err();
        assert!(
            matches!(&e, FioError::Unsupported { option, .. } if option == "offset_increment"),
            "{more}: {e}"
        );
    }
}
