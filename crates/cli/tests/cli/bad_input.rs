//! Bad input, table-driven: exit code 2, one `error:` line quoting the flag (or key) and the text as typed,
//! and nothing created. Each case runs in a fresh directory that is both the cwd and `$IOLAB_SCRATCH_DIR`,
//! so a run without `--target` would put its default scratch file there: an error found only after
//! creating it would leave the directory non-empty.

use crate::util::{entries, iolab, tempdir};

/// Runs `iolab run ARGS` (`{dir}` replaced by the fresh directory, `{job}` by the job file written from
/// `job`, kept in a separate directory) and checks the contract above; `needles` must all be in stderr.
fn check(args: &[&str], job: Option<&str>, needles: &[&str]) {
    let dir = tempdir();
    let jobdir = tempdir();
    let d = dir.path().to_str().expect("utf-8 path");
    let jobfile = jobdir.path().join("job.toml");
    let j = jobfile.to_str().expect("utf-8 path");
    if let Some(text) = job {
        std::fs::write(&jobfile, text).expect("write the job file");
    }
    let expand = |s: &str| s.replace("{dir}", d).replace("{job}", j);
    let args: Vec<String> = args.iter().map(|a| expand(a)).collect();
    let out = iolab()
        .current_dir(dir.path())
        .env("IOLAB_SCRATCH_DIR", dir.path())
        .arg("run")
        .args(&args)
        .output()
        .expect("spawn iolab");
    let err = String::from_utf8_lossy(&out.stderr);
    let cmd = format!("iolab run {}", args.join(" "));
    assert_eq!(out.status.code(), Some(2), "`{cmd}`: exit code; stderr: {err}");
    assert!(err.starts_with("error:"), "`{cmd}`: stderr does not start with 'error:': {err}");
    for n in needles {
        let n = expand(n);
        assert!(err.contains(&n), "`{cmd}`: stderr does not mention {n:?}: {err}");
    }
    assert!(out.stdout.is_empty(), "`{cmd}`: printed on stdout: {}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "`{cmd}` created files");
}

macro_rules! bad_flags {
    ($($name:ident: [$($arg:expr),* $(,)?] => [$($needle:expr),* $(,)?];)*) => {
        $(
            #[test]
            fn $name() {
                check(&[$($arg),*], None, &[$($needle),*]);
            }
        )*
    };
}

bad_flags! {
    bs_unknown_suffix_exits_2: ["--bs", "4q"] => ["'--bs'", "'4q'"];
    bs_zero_exits_2: ["--bs", "0"] => ["'--bs'", "'0'"];
    size_zero_exits_2: ["--target", "{dir}/f", "--size", "0"] => ["'--size'", "'0'"];
    size_negative_exits_2: ["--target", "{dir}/f", "--size", "-1G"] => ["'--size'", "'-1G'"];
    read_pct_above_100_exits_2: ["--read-pct", "101"] => ["'--read-pct'", "'101'"];
    random_pct_negative_exits_2: ["--random-pct", "-1"] => ["'--random-pct'", "'-1'"];
    qd_zero_exits_2: ["--qd", "0"] => ["'--qd'", "'0'"];
    qd_above_4096_exits_2: ["--qd", "5000"] => ["'--qd'", "'5000'", "4096"];
    duration_negative_exits_2: ["--duration", "-5s"] => ["'--duration'", "'-5s'"];
    duration_zero_exits_2: ["--duration", "0"] => ["'--duration'", "'0'"];
    ramp_unknown_unit_exits_2: ["--ramp", "5x"] => ["'--ramp'", "'5x'"];
    rate_zero_exits_2: ["--rate", "0"] => ["'--rate'", "'0'"];
    rate_not_a_number_exits_2: ["--rate", "abc"] => ["'--rate'", "'abc'"];
    arrival_unknown_law_exits_2: ["--arrival", "gaussian"] => ["'--arrival'", "'gaussian'", "poisson"];
    dist_zipf_theta_zero_exits_2: ["--dist", "zipf:0"] => ["'--dist'", "'zipf:0'"];
    dist_zones_not_summing_to_100_exits_2: ["--dist", "zones:80/20:10/80"] => ["'--dist'", "'zones:80/20:10/80'"];
    engine_unknown_exits_2: ["--engine", "aio"] => ["'--engine'", "'aio'", "io_uring"];
    prealloc_unknown_exits_2: ["--prealloc", "posix"] => ["'--prealloc'", "'posix'", "'fallocate', 'write', 'reserve' or 'none'"];
    clock_virtual_on_mem_target_exits_2: ["--clock", "virtual", "--target", "mem:64M"] => ["--clock", "virtual", "mem:64M"];
    workers_zero_exits_2: ["--workers", "0"] => ["'--workers'", "'0'"];
    seed_negative_exits_2: ["--seed", "-3"] => ["'--seed'", "'-3'"];
    data_compress_above_100_exits_2: ["--data", "compress:200"] => ["'--data'", "'compress:200'"];
    rw_unknown_pattern_exits_2: ["--rw", "randomread"] => ["'--rw'", "'randomread'", "randread"];
    target_mem_bad_size_exits_2: ["--target", "mem:4q"] => ["'--target'", "'mem:4q'"];
    target_sim_unknown_model_exits_2: ["--target", "sim:tape"] => ["'--target'", "'sim:tape'", "hdd"];
    target_sim_hdd_rpm_zero_exits_2: ["--target", "sim:hdd,rpm=0"] => ["'--target'", "'sim:hdd,rpm=0'", "rpm"];
    target_sim_hdd_unknown_preset_exits_2: ["--target", "sim:hdd,5k4"] => ["'sim:hdd,5k4'", "7k2"];
    target_sim_array_raid6_exits_2: ["--target", "sim:array,raid=6"] => ["'sim:array,raid=6'", "raid=5"];
    target_sim_ssd_unknown_key_exits_2: ["--target", "sim:ssd,iops=5"] => ["'sim:ssd,iops=5'", "channels"];
    target_link_unknown_preset_exits_2: ["--target", "link:fc3g:mem:1G"] => ["'link:fc3g:mem:1G'", "fc4g"];
    target_link_without_target_exits_2: ["--target", "link:fc4g"] => ["'link:fc4g'", "TARGET"];
    cache_bad_size_exits_2: ["--target", "mem:64M", "--cache", "2x"] => ["'--cache'", "'2x'"];
    cache_percent_above_100_exits_2: ["--target", "mem:64M", "--cache", "150%"] => ["'--cache'", "'150%'"];
    cache_smaller_than_a_line_exits_2: ["--target", "mem:64M", "--cache", "1K"] => ["--cache 1K", "line"];
    cache_mode_unknown_exits_2: ["--cache-mode", "wb2"] => ["'--cache-mode'", "'wb2'", "write-back"];
    cache_policy_unknown_exits_2: ["--cache-policy", "mru"] => ["'--cache-policy'", "'mru'", "s3-fifo"];
    cache_line_not_power_of_two_exits_2: ["--cache-line", "3k"] => ["'--cache-line'", "'3k'"];
    cache_dev_path_exits_2: ["--cache-dev", "/dev/sda"] => ["'--cache-dev'", "'/dev/sda'", "mem:SIZE"];
    cache_admit_zero_exits_2: ["--cache-admit", "0"] => ["'--cache-admit'", "'0'"];
    cache_dirty_max_zero_exits_2: ["--cache-dirty-max", "0%"] => ["'--cache-dirty-max'", "'0%'"];
    throttle_zero_exits_2: ["--throttle", "rbps=0"] => ["'--throttle'", "'rbps=0'"];
    throttle_unknown_key_exits_2: ["--throttle", "bps=1M"] => ["'--throttle'", "'bps=1M'", "rbps"];
    throttle_on_emulated_target_exits_2: ["--target", "sim:ssd", "--throttle", "rbps=1M"] => ["--throttle", "block devices"];
    bs_larger_than_target_exits_2: ["--target", "mem:1M", "--bs", "2M"] => ["bs", "2M", "'mem:1M'"];
    bs_not_sector_multiple_under_direct_exits_2:
        ["--target", "{dir}/f", "--size", "1M", "--bs", "1000"] => ["'1000'", "('bs')", "512"];
    target_missing_file_for_read_exits_2: ["--target", "{dir}/nope"] => ["'{dir}/nope'", "does not exist"];
    target_in_missing_directory_exits_2:
        ["--target", "{dir}/missing/f", "--size", "1M"] => ["'{dir}/missing/f'", "does not exist"];
    flag_unknown_suggests_similar_exits_2: ["--io-dpth", "4"] => ["'--io-dpth'", "'--io-depth'"];
    interval_below_10ms_exits_2: ["--interval", "1ms"] => ["'--interval'", "'1ms'"];
    offset_beyond_target_exits_2: ["--target", "mem:1M", "--offset", "2M"] => ["offset", "mem:1M"];
    verify_fail_unknown_exits_2: ["--verify", "--verify-fail", "abort"] => ["'--verify-fail'", "'abort'", "continue"];
    verify_on_read_only_workload_exits_2:
        ["--verify", "--target", "mem:1M", "--rw", "randread"] => ["--verify", "iolab verify"];
    verify_block_size_not_a_multiple_of_512_exits_2:
        ["--verify", "--target", "{dir}/f", "--size", "1M", "--rw", "write", "--bs", "1000", "--align", "1000", "--buffered"] => ["--verify", "1000"];
    journal_in_missing_directory_exits_2:
        ["--target", "mem:1M", "--rw", "write", "--journal", "{dir}/missing/j"] => ["{dir}/missing/j"];
    journal_empty_exits_2: ["--journal", ""] => ["'--journal'"];
    inject_unknown_kind_exits_2: ["--inject", "gremlins"] => ["'--inject'", "'gremlins'", "lost-write"];
    inject_plain_bit_flip_names_both_exits_2: ["--inject", "bit-flip"] => ["'bit-flip'", "bit-flip-read", "bit-flip-write"];
    inject_probability_above_1_exits_2: ["--inject", "eio:1.5"] => ["'--inject'", "'eio:1.5'"];
    inject_every_zero_exits_2: ["--inject", "eio@0"] => ["'--inject'", "'eio@0'"];
    inject_spike_without_duration_exits_2: ["--inject", "latency-spike"] => ["'--inject'", "'latency-spike'", "a duration"];
}

#[test]
fn job_inject_bad_entry_names_the_key() {
    check(
        &["{job}", "--target", "mem:1M"],
        Some("inject = [\"eio@10\", \"lost-write:2\"]\n"),
        &["inject", "'lost-write:2'"],
    );
}

/// `iolab verify` with bad input: exit 2, the value quoted, nothing created.
fn check_verify(args: &[&str], needles: &[&str]) {
    let dir = tempdir();
    let d = dir.path().to_str().expect("utf-8 path");
    let args: Vec<String> = args.iter().map(|a| a.replace("{dir}", d)).collect();
    let out = iolab().current_dir(dir.path()).arg("verify").args(&args).output().expect("spawn iolab");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "iolab verify {args:?}: stderr {err}");
    for n in needles {
        assert!(err.contains(&n.replace("{dir}", d)), "iolab verify {args:?}: no {n:?} in {err}");
    }
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "iolab verify {args:?} created files");
}

#[test]
fn verify_missing_target_exits_2() {
    check_verify(&["{dir}/nope"], &["{dir}/nope"]);
}

#[test]
fn verify_bad_block_exits_2() {
    check_verify(&["mem:1M", "--block", "3k"], &["'--block'", "'3k'"]);
}

#[test]
fn verify_missing_journal_exits_2() {
    check_verify(&["mem:1M", "--journal", "{dir}/j"], &["{dir}/j"]);
}

#[test]
fn job_unknown_key_suggests_the_real_one() {
    check(
        &["{job}", "--target", "mem:1M"],
        Some("read_pc = 70\n"),
        &["'read_pc'", "did you mean 'read_pct'"],
    );
}

#[test]
fn job_bad_toml_exits_2() {
    check(&["{job}", "--target", "mem:1M"], Some("qd = [\n"), &["'{job}'", "TOML"]);
}

#[test]
fn job_missing_file_exits_2() {
    check(&["{dir}/nope.toml"], None, &["'{dir}/nope.toml'", "job file"]);
}

#[test]
fn job_bad_value_names_the_key_and_value() {
    check(&["{job}"], Some("target = \"mem:1M\"\nqd = 0\n"), &["qd", "0", "4096"]);
}

/// Issue 14, item 12: I/O buffers were capped at 16 GiB but never compared with the memory available, so
/// `--workers 4 --qd 1024 --bs 512k` allocated towards the OOM killer. Buffers, RAM disks and the cache are
/// now checked together against MemAvailable (here a fake meminfo saying 1 GiB) before anything is allocated.
#[test]
fn memory_beyond_what_is_available_exits_2_before_anything_is_allocated() {
    let dir = tempdir();
    let meminfo = dir.path().join("meminfo");
    std::fs::write(&meminfo, "MemTotal: 2097152 kB\nMemAvailable: 1048576 kB\n").unwrap();
    let work = tempdir();
    let out = iolab()
        .current_dir(work.path())
        .env("IOLAB_SCRATCH_DIR", work.path())
        .env("IOLAB_MEMINFO", &meminfo)
        .args(["run", "--workers", "4", "--qd", "1024", "--bs", "512k", "-d", "1s"])
        .output()
        .expect("spawn iolab");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains("needs 4.00 GiB of memory") && err.contains("I/O buffers 4.00 GiB"), "{err}");
    assert!(err.contains("only 1.00 GiB is available"), "{err}");
    assert_eq!(entries(work.path()), Vec::<String>::new(), "nothing created");
}

/// Issue 24, item 8: `iolab run /dev/zero` read a "job file" until memory ran out. Every text input read whole
/// (job files of each kind, files to import, result documents) must be a regular file within its bound.
#[test]
fn inputs_read_whole_must_be_regular_files_within_a_bound() {
    let dir = tempdir();
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let big = dir.path().join("big.toml");
    std::fs::write(&big, vec![b'#'; (16 << 20) + 1]).unwrap();
    let (fifo, big) = (fifo.to_str().unwrap(), big.to_str().unwrap());
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "/dev/zero", "--dry-run"],
            "the job file '/dev/zero' is a character device; expected a regular file",
        ),
        (&["run", fifo, "--dry-run"], "is a named pipe; expected a regular file"),
        (&["run", big, "--dry-run"], "is 16777217 bytes; expected at most 16777216 bytes (16 MiB)"),
        (&["sweep", "/dev/zero", "--qd", "1,2", "--dry-run"], "'/dev/zero' is a character device"),
        (&["import", "fio", "/dev/zero"], "the file to import '/dev/zero' is a character device"),
        (&["import", "iometer", fifo], "is a named pipe"),
        (&["import", "fio-result", "/dev/zero", "--no-save"], "saves in the catalog"),
        (&["import", "fio-result", fifo], "the fio result"),
        (&["compare", fifo, fifo], "is neither a file nor a catalog id"),
        (&["report", "/dev/zero"], "'/dev/zero': not a file"),
    ];
    for (args, says) in cases {
        let out = iolab().args(*args).timeout(std::time::Duration::from_secs(60)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "iolab {}: {err}", args.join(" "));
        assert!(err.contains(says), "iolab {}: {err}", args.join(" "));
    }
    assert_eq!(entries(dir.path()), ["big.toml", "fifo"], "nothing created");
}
