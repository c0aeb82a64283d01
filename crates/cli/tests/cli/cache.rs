//! The block cache end to end, on emulated devices with virtual time (exact and deterministic for the seed):
//! hit ratios that follow the cache size, every mode flushing what it holds, hits timed by an emulated cache
//! device, the result's `cache` block, and the seeds' cache-size sweep (FabricCache, seed 000). A real cache
//! device (`--cache-dev PATH`) runs over a real file, on the real clock.

use crate::util::{assert_close, entries, iolab, num, run_json, tempdir};

/// A device that serves 80,000 IOPS (100 µs, 8 at once), so a virtual second holds plenty of ops.
const FAST: &str = "sim:fixed,latency=100us,servers=8,size=16M";

/// A flash cache device (50 µs hits), so a fully cached run stays at a few hundred thousand ops a second.
const FLASH: &str = "sim:ssd,sata";

fn cached(target: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["--target", target, "--clock", "virtual", "--seed", "1", "-d", "1s", "--ramp", "1s"];
    args.extend_from_slice(extra);
    run_json(&args)
}

#[test]
fn uniform_reads_hit_in_proportion_to_the_cache_size() {
    for (pct, expected) in [("25%", 0.25), ("50%", 0.5)] {
        let v = cached(
            FAST,
            &["--rw", "randread", "--bs", "4k", "--qd", "8", "--cache", pct, "--cache-dev", FLASH],
        );
        assert_close(&format!("hit ratio with --cache {pct}"), num(&v, "/cache/hit_ratio"), expected, 0.04);
    }
    let full = cached(
        FAST,
        &["--rw", "randread", "--bs", "4k", "--qd", "8", "--cache", "100%", "--cache-dev", FLASH],
    );
    assert!(num(&full, "/cache/hit_ratio") > 0.999, "a warm 100% cache serves every read");
    assert_eq!(num(&full, "/cache/evictions"), 0.0, "100% of the data set fits: nothing is evicted");
}

#[test]
fn result_carries_the_cache_block_the_issue_names() {
    let v = cached(FAST, &["--rw", "randrw", "--read-pct", "70", "--qd", "4", "--cache", "8M"]);
    for key in [
        "hits",
        "misses",
        "hit_ratio",
        "reads_from_cache",
        "reads_from_target",
        "writebacks",
        "evictions",
        "bypassed",
        "metadata_bytes_per_line",
    ] {
        assert!(v["cache"][key].is_number(), "cache.{key} missing: {:#}", v["cache"]);
    }
    assert_eq!(v["cache"]["mode"], "write-through");
    assert_eq!(v["cache"]["policy"], "lru");
    assert!(num(&v, "/cache/metadata_bytes_per_line") <= 64.0);
    assert!(v["timeseries"][0]["cache_hit_ratio"].is_number(), "hit ratio over time");
    let lat = &v["cache"]["latency"];
    assert!(
        lat["from_cache"]["mean"].as_f64().unwrap() < lat["from_target"]["mean"].as_f64().unwrap() / 10.0,
        "hits are much faster than the disk: {lat:#}"
    );
}

#[test]
fn every_mode_and_policy_runs_and_write_back_flushes_everything_at_exit() {
    for mode in ["write-through", "write-around", "write-back", "read-only"] {
        for policy in ["lru", "arc", "s3-fifo"] {
            let v = cached(
                FAST,
                &["--rw", "randrw", "--read-pct", "50", "--qd", "8", "--cache", "25%", "--cache-mode", mode]
                    .into_iter()
                    .chain(["--cache-policy", policy])
                    .collect::<Vec<_>>(),
            );
            assert_eq!(v["cache"]["mode"], mode);
            assert_eq!(v["cache"]["policy"], policy);
            assert_eq!(num(&v, "/cache/dirty_after_exit"), 0.0, "{mode}/{policy}: nothing left dirty");
            if mode == "write-back" {
                assert!(num(&v, "/cache/writes_absorbed") > 0.0, "{mode}: writes complete in the cache");
                assert!(num(&v, "/cache/writebacks") > 0.0, "{mode}/{policy}: dirty lines were written back");
            } else {
                assert_eq!(num(&v, "/cache/writes_absorbed"), 0.0, "{mode}: writes go to the target");
            }
        }
    }
}

#[test]
fn an_emulated_flash_cache_device_times_the_hits() {
    // sim:ssd,sata serves a 4 KiB read in 50 µs (median); RAM hits on virtual time cost 1 µs.
    let args = ["--rw", "randread", "--bs", "4k", "--qd", "1", "--cache", "100%"];
    let flash = cached("sim:hdd,size=8M", &[&args[..], &["--cache-dev", "sim:ssd,sata,sigma=0"]].concat());
    assert_close("flash hit", num(&flash, "/cache/latency/from_cache/mean"), 50_000.0, 0.05);
    assert_eq!(flash["cache"]["device"], "sim:ssd,sata,sigma=0");
    let ram = cached("sim:hdd,size=8M", &args);
    assert_close("RAM hit on virtual time", num(&ram, "/cache/latency/from_cache/mean"), 1_000.0, 0.05);
}

#[test]
fn sequential_streams_past_the_cutoff_bypass_the_cache() {
    let v = cached(FAST, &["--rw", "read", "--bs", "64k", "--cache", "50%", "--cache-seq-cutoff", "1M"]);
    assert!(num(&v, "/cache/bypassed") > 0.9 * num(&v, "/cache/reads_from_target"), "{:#}", v["cache"]);
}

#[test]
fn cache_sweep_reproduces_the_fabriccache_shape() {
    // Seed 000: Jetstress IOPS 1,056 -> 5,270 and read latency 4.7 -> 0.9 ms as 0 -> 100 % of the LUN was
    // cached in flash. Here: the seed's own IOmeter Exchange model over an 8 x 10K RPM RAID 5 array with a
    // flash cache, on virtual time.
    let out = iolab()
        .args(["sweep", "--profile", "seed-qlogic-exchange", "--target", "sim:array,size=64M"])
        .args(["--clock", "virtual", "--seed", "1", "-d", "10s", "--ramp", "30s"])
        .args(["--cache", "0,25%,30%,50%,75%,100%", "--cache-dev", "sim:ssd,sata", "--json", "-", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    let iops: Vec<f64> = points.iter().map(|p| p["summary"]["iops"]["mean"].as_f64().unwrap()).collect();
    let read_lat: Vec<f64> =
        points.iter().map(|p| p["summary"]["read_lat_mean_ns"]["mean"].as_f64().unwrap()).collect();
    for w in iops.windows(2) {
        assert!(w[1] > w[0], "IOPS rise with cache size: {iops:?}");
    }
    for w in read_lat.windows(2) {
        assert!(w[1] < w[0], "read latency falls with cache size: {read_lat:?}");
    }
    assert!(iops[5] > 4.0 * iops[0], "a fully cached LUN is several times faster: {iops:?}");
}

#[test]
fn a_real_cache_device_carries_hits_absorbed_writes_fills_and_write_backs() {
    let dir = tempdir();
    let target = dir.path().join("data");
    let dev = dir.path().join("cache.dat");
    let (t, d) = (target.to_str().unwrap(), dev.to_str().unwrap());
    let v = run_json(&[
        "--target",
        t,
        "--size",
        "16M",
        "--rw",
        "randrw",
        "--read-pct",
        "70",
        "--bs",
        "4k",
        "--qd",
        "8",
        "-d",
        "1s",
        "--ramp",
        "0",
        "--seed",
        "1",
        "--cache",
        "50%",
        "--cache-mode",
        "write-back",
        "--cache-dev",
        d,
    ]);
    let c = &v["cache"];
    assert_eq!(c["device"], d, "the result names the cache device");
    // The cache warms from empty in the run (how far depends on the machine's speed): some reads hit.
    assert!(num(&v, "/cache/hit_ratio") > 0.0, "hits are served: {c:#}");
    // Every hit read its lines from the device, and every write-back read its line before writing it.
    assert_eq!(
        num(&v, "/cache/device_reads"),
        num(&v, "/cache/reads_from_cache") + num(&v, "/cache/writebacks"),
        "{c:#}"
    );
    // Every absorbed write and every fill that found a free buffer wrote the device.
    assert_eq!(
        num(&v, "/cache/device_writes"),
        num(&v, "/cache/writes_absorbed") + num(&v, "/cache/fills") - num(&v, "/cache/device_writes_dropped"),
        "{c:#}"
    );
    assert!(num(&v, "/cache/writes_absorbed") > 0.0 && num(&v, "/cache/writebacks") > 0.0, "{c:#}");
    assert_eq!(num(&v, "/cache/dirty_after_exit"), 0.0);
    assert!(!dev.exists(), "the scratch cache device is removed at exit");
    assert_eq!(entries(dir.path()), vec!["data".to_string()]);
}

#[test]
fn an_existing_cache_device_file_is_used_at_its_size_and_kept() {
    let dir = tempdir();
    let target = dir.path().join("data");
    let dev = dir.path().join("cache.dat");
    std::fs::write(&dev, vec![0u8; 1 << 20]).unwrap();
    let (t, d) = (target.to_str().unwrap(), dev.to_str().unwrap());
    // The user's file, not iolab's: written only with --overwrite.
    let refused = crate::util::iolab()
        .args(["run", "--target", t, "--size", "8M", "--rw", "randread", "--cache", "50%", "--cache-dev", d])
        .args(["--ios", "10", "-q", "--no-save"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(refused.status.code() == Some(2) && stderr.contains("--overwrite"), "{stderr}");
    assert!(!target.exists(), "nothing created");
    let v = run_json(&[
        "--overwrite",
        "--target",
        t,
        "--size",
        "8M",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--ios",
        "4000",
        "--seed",
        "1",
        "--cache",
        "50%",
        "--cache-dev",
        d,
    ]);
    assert_eq!(num(&v, "/cache/configured_bytes"), (1 << 20) as f64, "capped at the device's size");
    assert!(num(&v, "/cache/device_reads") > 0.0 && num(&v, "/cache/device_writes") > 0.0);
    assert_eq!(std::fs::metadata(&dev).unwrap().len(), 1 << 20, "the user's file stays");
    assert!(std::fs::read(&dev).unwrap().iter().any(|&b| b != 0), "the device received writes");
}

#[test]
fn a_cache_device_path_is_refused_where_it_cannot_work() {
    let dir = tempdir();
    let dev = dir.path().join("cache.dat");
    let d = dev.to_str().unwrap();
    let target = dir.path().join("data");
    let t = target.to_str().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["--target", "mem:16M", "--cache", "50%", "--cache-dev", d], "emulated"),
        (&["--target", "sim:ssd,size=16M", "--cache", "50%", "--cache-dev", d], "emulated"),
        (&["--target", t, "--size", "4M", "--cache", "50%", "--cache-dev", t], "are the same file"),
    ];
    for (args, needle) in cases {
        let out = iolab().arg("run").args(args).args(["-d", "1s", "-q"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--cache-dev") && err.contains(needle), "{args:?}: {err}");
        assert!(!dev.exists(), "{args:?}: nothing created");
    }
    let out = iolab()
        .args(["run", "--target", "mem:16M", "--cache", "50%", "--cache-dev", "/dev/iolab-no-such-dev", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn sigusr1_flushes_a_write_back_cache_on_demand() {
    // A cache that holds the whole data set and may be all dirty (--cache-dirty-max 100): without a request,
    // nothing is written back before the exit flush. SIGUSR1 in the middle of the run writes every dirty line
    // back then, so the run writes back more lines than were dirty at its end.
    let dir = tempdir();
    let out = dir.path().join("r.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_DB", crate::util::shared_catalog())
        .args(["run", "--target", "mem:4M", "--rw", "randwrite", "--bs", "4k", "--qd", "4", "-d", "3s"])
        .args(["--ramp", "0", "--seed", "1", "--cache", "100%", "--cache-mode", "write-back"])
        .args(["--cache-dirty-max", "100", "-q", "--json", out.to_str().unwrap()])
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let kill = std::process::Command::new("kill").args(["-USR1", &pid]).status().unwrap();
    assert!(kill.success());
    let status = child.wait_with_output().unwrap().status;
    assert_eq!(status.code(), Some(0), "SIGUSR1 does not end the run");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(num(&v, "/cache/flush_requests"), 1.0, "{:#}", v["cache"]);
    assert!(
        num(&v, "/cache/writebacks") > num(&v, "/cache/dirty_at_end"),
        "the requested flush wrote lines back during the run: {:#}",
        v["cache"]
    );
    assert_eq!(num(&v, "/cache/dirty_after_exit"), 0.0);
}

#[test]
fn cache_shrink_gives_memory_back_when_memavailable_is_low() {
    // The test hook IOLAB_MEMINFO replaces /proc/meminfo: 16 GiB total, 300 MiB available, below the
    // low-memory mark (5 % of MemTotal, at least 256 MiB), so the cache gives back a quarter at each check.
    let dir = tempdir();
    let meminfo = dir.path().join("meminfo");
    std::fs::write(
        &meminfo,
        "MemTotal:       16777216 kB\nMemFree:          100000 kB\nMemAvailable:     307200 kB\n",
    )
    .unwrap();
    let mut c = iolab();
    c.env("IOLAB_MEMINFO", &meminfo);
    let v = crate::util::run_json_with(
        &mut c,
        &[
            "--target", "mem:16M", "--rw", "randread", "--bs", "4k", "-d", "2s", "--ramp", "0", "--cache",
            "8M",
        ]
        .into_iter()
        .chain(["--cache-shrink"])
        .collect::<Vec<_>>(),
    );
    let shrinks = v["cache"]["shrinks"].as_array().unwrap();
    assert!(!shrinks.is_empty(), "{:#}", v["cache"]);
    assert_eq!(shrinks[0]["mem_available_bytes"], 307200u64 * 1024);
    assert_eq!(shrinks[0]["capacity_bytes"], 6u64 << 20, "a quarter given back");
    assert!(num(&v, "/cache/capacity_bytes") < (8u64 << 20) as f64);
    let w = crate::util::warning_kinds(&v);
    assert!(w.iter().any(|k| k == "cache_shrunk"), "{w:?}");
    // Without --cache-shrink the same machine leaves the cache alone.
    let mut c = iolab();
    c.env("IOLAB_MEMINFO", &meminfo);
    let v = crate::util::run_json_with(
        &mut c,
        &["--target", "mem:16M", "-d", "1s", "--ramp", "0", "--cache", "8M"],
    );
    assert!(v["cache"]["shrinks"].as_array().unwrap().is_empty());
}

/// Issue 15, item 5: with a cache, the text said nothing of it (862K IOPS, p50 12 µs, no word of a cache).
/// The text and the Markdown and HTML reports now show the hit share, latency by source and write-backs.
#[test]
fn the_cache_is_in_every_output() {
    let dir = tempdir();
    let db = dir.path().join("results.db");
    let out = iolab()
        .env("IOLAB_DB", &db)
        .args(["run", "--target", "sim:ssd,size=1G", "--clock", "virtual", "--seed", "1", "--cache", "25%"])
        .args(["--cache-mode", "write-back", "--rw", "randrw", "--qd", "4", "-d", "1s", "--ramp", "0"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let line =
        text.lines().find(|l| l.starts_with("cache ")).unwrap_or_else(|| panic!("no cache line: {text}"));
    assert!(line.contains("write-back lru") && line.contains("of the window's reads from cache"), "{line}");
    assert!(text.contains("read latency from cache") && text.contains("write-backs"), "{text}");
    let rows: serde_json::Value = serde_json::from_slice(
        &iolab().env("IOLAB_DB", &db).args(["runs", "--json"]).output().unwrap().stdout,
    )
    .unwrap();
    let id = rows[0]["id"].as_str().unwrap();
    for (file, needle) in
        [("r.md", "Cache (the figures above include its hits)"), ("r.html", "<h3>Cache</h3>")]
    {
        let path = dir.path().join(file);
        let out =
            iolab().env("IOLAB_DB", &db).args(["report", id, "-o", path.to_str().unwrap()]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let page = std::fs::read_to_string(&path).unwrap();
        assert!(page.contains(needle) && page.contains("write-backs"), "{file}");
    }
}

/// Issue 15, item 2: a 25% cache over the default emulated array (3.8 TiB) was refused ("the cache needs
/// 978 GiB of RAM"), even on an emulated cache device, and emulated devices kept every written block. Now
/// nothing keeps data unless something reads it back (`--verify`): the run fits in well under 1 GiB.
#[test]
fn a_cache_of_any_size_over_an_emulated_array_keeps_metadata_only() {
    let args = ["--target", "sim:array", "--clock", "virtual", "--seed", "1", "-d", "2s", "--ramp", "0"];
    let v =
        run_json(&[&args[..], &["--cache", "25%", "--cache-dev", "sim:ssd,sata", "--rw", "randrw"]].concat());
    assert!(
        num(&v, "/cache/configured_bytes") > 700.0 * (1u64 << 30) as f64,
        "the SATA SSD holds 745 GiB of it"
    );
    let rss = num(&v, "/cpu/peak_rss_bytes");
    assert!(rss < (1u64 << 30) as f64, "peak memory {rss} bytes");
    // With --verify the data is kept (and said so), so the same cache does not fit.
    let out = iolab()
        .arg("run")
        .args(args)
        .args(["--cache", "25%", "--cache-dev", "sim:ssd,sata", "--rw", "randrw", "--verify", "--no-save"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("of memory before it starts") && err.contains(", cache "), "{err}");
    let out = iolab()
        .arg("run")
        .args([
            "--target",
            "sim:ssd,size=1G",
            "--clock",
            "virtual",
            "-d",
            "1s",
            "--rw",
            "randrw",
            "--verify",
            "--no-save",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("keep written data in memory: --verify reads it back"), "{err}");
}

/// Issue 36, item 5: a hit's service time (the copy from RAM: 1 µs on virtual time) and its dispatch delay
/// (from its intended start until the cache began serving it) are fields of their own, in JSON and in the
/// cache block of the text and the HTML report; on virtual time the worker's own turn-around takes no time,
/// so at QD 32 a hit's latency is its copy's, not a miss's.
#[test]
fn a_hit_s_service_time_and_dispatch_delay_are_reported_apart() {
    let dir = tempdir();
    let json = dir.path().join("r.json");
    let out = iolab()
        .args(["run", "--target", FAST, "--clock", "virtual", "--seed", "1", "-d", "1s"])
        .args(["--ramp", "1s", "--rw", "randread", "--bs", "4k", "--qd", "32", "--cache", "25%"])
        .args(["--cache-mode", "write-back", "--no-save", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let hits = num(&v, "/cache/window_reads_from_cache");
    assert!(hits > 1000.0, "{:#}", v["cache"]);
    for field in ["from_cache", "hit_service"] {
        assert_close(field, num(&v, &format!("/cache/latency/{field}/mean")), 1_000.0, 0.001);
    }
    assert_eq!(num(&v, "/cache/latency/hit_dispatch/max"), 0.0, "no hit waited for the refill");
    assert!(num(&v, "/cache/latency/from_target/mean") >= 100e3, "a miss takes the device's 100 µs or more");
    let text = String::from_utf8_lossy(&out.stdout);
    let line =
        text.lines().find(|l| l.contains("read latency from cache")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("(service mean 1.00 µs") && line.contains("dispatch delay mean 0 ns"), "{line}");
    let html = dir.path().join("r.html");
    let out =
        iolab().args(["report", json.to_str().unwrap(), "-o", html.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("dispatch delay mean"), "the HTML report's cache block");
}
