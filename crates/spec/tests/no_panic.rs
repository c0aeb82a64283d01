//! No input makes a parser panic. Arbitrary strings, and near-valid ones built from the real grammar (valid
//! prefixes such as `sim:array,member=hdd:`, numbers with units, huge and negative numbers, unicode, empty
//! parts), go through every value parser; random job files built from the real key lists and tables, and
//! the built-in profiles with one value replaced, a line dropped or the text cut short, go through the
//! job-file parser. Errors are fine; a panic fails the test (proptest prints the shrunk input and the seed).
//!
//! The calls are the same as the cargo-fuzz targets' (`fuzz/parsers.rs`, included here), so CI runs what
//! the fuzzer runs, with generators aimed at the deep paths; docs/TESTING.md says how to fuzz for longer.

use iolab_spec::exchange::EXCHANGE_KEYS;
use iolab_spec::loadgen::{STEP_KEYS, USERS_KEYS};
use iolab_spec::profile::PROFILE_KEYS;
use iolab_spec::sim::{HDD_PRESETS, LINK_PRESETS, SSD_PRESETS};
use iolab_spec::verdict::VERDICT_KEYS;
use iolab_spec::{RUN_KEYS, SPEC_KEYS, TABLE_KEYS, WORKER_KEYS};
use proptest::prelude::*;
use proptest::sample::select;

#[path = "../../../fuzz/parsers.rs"]
mod parsers;

// ---------------------------------------------------------------------------------------------------------
// Value generators
// ---------------------------------------------------------------------------------------------------------

/// Digits as users (and fuzzers) type them: small, boundary, huge (past u64 and f64), decimals, signs,
/// exponents, leading zeros, empty.
fn number() -> BoxedStrategy<String> {
    prop_oneof![
        (0u64..5000).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        select(vec![
            "0",
            "1",
            "00",
            "007",
            "4096",
            "65536",
            "65537",
            "4294967295",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999999999",
            "1e3",
            "1e308",
            "1e309",
            "-1",
            "-0",
            "+1",
            "0.0",
            "0.5",
            "1.",
            ".5",
            "1..2",
            "1.5.2",
            "NaN",
            "inf",
            "-inf",
            "infinity",
            "",
            " ",
            "0x10",
            "0xffffffffffffffffff",
            "1_000",
        ])
        .prop_map(str::to_string),
        (0u64..100_000, 0u32..1_000_000).prop_map(|(a, b)| format!("{a}.{b}")),
        "[0-9]{20,400}",
        "[0-9]{1,30}\\.[0-9]{1,30}",
    ]
    .boxed()
}

/// A unit, real or wrong: sizes, durations, counts, percent, rates, unicode look-alikes.
fn unit() -> BoxedStrategy<String> {
    select(vec![
        "", "b", "B", "k", "K", "KiB", "kiB", "kb", "KB", "m", "M", "MiB", "MB", "g", "G", "GiB", "t", "T",
        "TiB", "P", "ns", "us", "µs", "μs", "ms", "s", "sec", "m", "min", "h", "d", "%", "%%", "/s", "M/s",
        "/8h", "/h", "/min", "/day", "/hour", "/", " K", "K ", "\u{0301}", "ｋ", "🚀", "\0", "\n", "K/1",
    ])
    .prop_map(str::to_string)
    .boxed()
}

/// A number with a unit, the shape of most values.
fn quantity() -> BoxedStrategy<String> {
    (number(), unit()).prop_map(|(n, u)| format!("{n}{u}")).boxed()
}

/// Text with no structure: any unicode, or the characters the grammars use, so separators meet.
fn noise() -> BoxedStrategy<String> {
    prop_oneof![any::<String>(), "[0-9a-zA-Z.:/,=%@_ +-]{0,48}", "[:,=/@%]{0,12}", Just(String::new()),]
        .boxed()
}

/// A valid value for a `key=value` item of an emulated device or link (`x` is no key: any value).
fn item_value(key: &str) -> BoxedStrategy<String> {
    let n = |lo: u32, hi: u32, unit: &'static str| (lo..=hi).prop_map(move |n| format!("{n}{unit}")).boxed();
    match key {
        "latency" | "lat" | "read" | "write" => n(10, 500, "us"),
        "servers" | "channels" => n(1, 64, ""),
        "size" => n(1, 64, "G"),
        "rpm" => n(3600, 20_000, ""),
        "seek_read" | "seek_write" => n(2, 20, "ms"),
        "track_seek" | "overhead" | "controller" => n(0, 999, "us"),
        "media" | "mb_s" | "bw" | "read_bw" | "write_bw" => {
            prop_oneof![n(50, 3000, ""), n(50, 3000, "M/s")].boxed()
        }
        "queue_depth" | "ncq" => n(1, 256, ""),
        "sigma" => n(0, 9, "").prop_map(|d| format!("0.{d}")).boxed(),
        "disks" => n(2, 8, "").prop_map(|d| (d.parse::<u32>().unwrap_or(2) * 2).to_string()).boxed(),
        "raid" => select(vec!["0", "5", "10", "raid5"]).prop_map(str::to_string).boxed(),
        "stripe" => select(vec!["64K", "128K", "1M", "512"]).prop_map(str::to_string).boxed(),
        _ => prop_oneof![quantity(), noise()].boxed(),
    }
}

/// `key=value` items for an emulated device or link: the real keys (and `x`), mostly with valid values,
/// sometimes with any number-and-unit or noise, and now and then a stray item.
fn items(keys: &'static [&'static str]) -> BoxedStrategy<String> {
    let item = select(keys.to_vec())
        .prop_flat_map(|k| {
            prop_oneof![6 => item_value(k), 1 => quantity(), 1 => noise()]
                .prop_map(move |v| format!("{k}={v}"))
        })
        .boxed();
    prop::collection::vec(prop_oneof![12 => item, 1 => noise()], 0..4).prop_map(|v| v.join(",")).boxed()
}

const HDD_KEYS: &[&str] =
    &["rpm", "seek_read", "seek_write", "track_seek", "media", "queue_depth", "ncq", "overhead", "size"];
const SSD_KEYS: &[&str] = &["read", "write", "sigma", "channels", "read_bw", "write_bw", "size"];
const ARRAY_KEYS: &[&str] = &["disks", "raid", "stripe", "controller", "size"];
const LINK_KEYS: &[&str] = &["mb_s", "bw", "latency", "lat"];
const FIXED_KEYS: &[&str] = &["latency", "lat", "servers", "size"];

/// A `sim:` device, near-valid: a real model, maybe a preset, then items; arrays get members.
fn sim_target() -> BoxedStrategy<String> {
    let hdd_preset = select([HDD_PRESETS, &["", "5k4"]].concat());
    let ssd_preset = select([SSD_PRESETS, &["", "optane"]].concat());
    prop_oneof![
        items(FIXED_KEYS).prop_map(|i| format!("sim:fixed,{i}")),
        (hdd_preset.clone(), items(HDD_KEYS)).prop_map(|(p, i)| format!("sim:hdd,{p},{i}")),
        (ssd_preset.clone(), items(SSD_KEYS)).prop_map(|(p, i)| format!("sim:ssd,{p},{i}")),
        (
            items(ARRAY_KEYS),
            prop_oneof![
                (hdd_preset, items(HDD_KEYS)).prop_map(|(p, i)| format!("hdd:{p}:{}", i.replace(',', ":"))),
                (ssd_preset, items(SSD_KEYS)).prop_map(|(p, i)| format!("ssd:{p}:{}", i.replace(',', ":"))),
                noise(),
            ],
            select(vec!["0", "5", "10", "raid5", "1+0", "6", ""]),
            (1u32..20).prop_map(|n| n.to_string()),
        )
            .prop_map(|(i, m, r, d)| format!("sim:array,disks={d},raid={r},member={m},{i}")),
        noise().prop_map(|n| format!("sim:{n}")),
    ]
    .boxed()
}

/// Any target a flag or key accepts, near-valid: paths, `mem:`/`null:` sizes, `sim:` devices, `@names`,
/// and `link:` in front of any of them, nested.
fn target() -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        quantity().prop_map(|q| format!("mem:{q}")),
        quantity().prop_map(|q| format!("null:{q}")),
        Just("mem".to_string()),
        sim_target(),
        "@[a-z][a-z0-9_-]{0,8}",
        "@[^a-z]{0,4}",
        "/dev/[a-z0-9]{1,6}",
        noise(),
    ];
    let link = |inner: BoxedStrategy<String>| {
        (select([LINK_PRESETS, &["", "fc3g"]].concat()), items(LINK_KEYS), inner)
            .prop_map(|(p, i, t)| format!("link:{p},{i}:{t}"))
            .boxed()
    };
    let leaf = leaf.boxed();
    prop_oneof![6 => leaf.clone(), 3 => link(leaf.clone()), 1 => link(link(leaf))].boxed()
}

/// A block-size split: sizes with weights, wrong separators, many parts.
fn block_sizes() -> BoxedStrategy<String> {
    let part = (quantity(), prop::option::of(number())).prop_map(|(s, w)| match w {
        Some(w) => format!("{s}/{w}"),
        None => s,
    });
    prop::collection::vec(part, 0..70).prop_map(|v| v.join(":")).boxed()
}

/// Offset distributions and zone lists.
fn dist() -> BoxedStrategy<String> {
    prop_oneof![
        number().prop_map(|n| format!("zipf:{n}")),
        number().prop_map(|n| format!("pareto:{n}")),
        prop::collection::vec((quantity(), quantity()), 0..6).prop_map(|z| {
            format!("zones:{}", z.iter().map(|(a, b)| format!("{a}/{b}")).collect::<Vec<_>>().join(":"))
        }),
        select(vec!["uniform", "random", "zipf:", "zones:", "pareto:"]).prop_map(str::to_string),
    ]
    .boxed()
}

/// Small structured values: cache sizes, throttle limits, data patterns, user rates, injections, seeds.
fn misc_value() -> BoxedStrategy<String> {
    let throttle_item = (select(vec!["rbps", "wbps", "riops", "wiops", "x"]), quantity())
        .prop_map(|(k, v)| format!("{k}={v}"));
    prop_oneof![
        prop::collection::vec(throttle_item, 0..5).prop_map(|v| v.join(",")),
        quantity().prop_map(|q| format!("compress:{q}")),
        (number(), unit()).prop_map(|(n, u)| format!("{n}/{n}{u}")),
        (
            select(vec![
                "bit-flip-read",
                "bit-flip-write",
                "lost-write",
                "misdirected-write",
                "torn-write",
                "eio",
                "latency-spike"
            ]),
            select(vec![":", "@", "=", ""]),
            quantity()
        )
            .prop_map(|(k, s, q)| format!("{k}{s}{q}")),
        number().prop_map(|n| format!("0x{n}")),
        select(vec![
            "write-back",
            "wb",
            "read-only",
            "lru",
            "arc",
            "s3-fifo",
            "true",
            "off",
            "on",
            "fixed",
            "poisson",
            "randrw",
            "readwrite",
            "io_uring",
            "virtual",
            "stress",
            "2010",
            "2016",
        ])
        .prop_map(str::to_string),
    ]
    .boxed()
}

/// Every kind of value text, weighted towards the near-valid ones.
fn value_text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => quantity(),
        3 => target(),
        2 => block_sizes(),
        2 => dist(),
        2 => misc_value(),
        2 => noise(),
        1 => (quantity(), noise()).prop_map(|(q, n)| format!("{q}{n}")),
        1 => (noise(), quantity()).prop_map(|(n, q)| format!(" {n} {q} ")),
    ]
    .boxed()
}

// ---------------------------------------------------------------------------------------------------------
// Job-file generators
// ---------------------------------------------------------------------------------------------------------

/// A TOML basic string holding `s`.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML value: mostly a string holding a near-valid value, sometimes a bare number, boolean, float
/// (incl. inf and nan), array or inline table.
fn toml_value() -> BoxedStrategy<String> {
    prop_oneof![
        6 => value_text().prop_map(|v| quote(&v)),
        2 => any::<i64>().prop_map(|i| i.to_string()),
        1 => (0i64..5000).prop_map(|i| i.to_string()),
        1 => select(vec!["true", "false", "inf", "-inf", "nan", "1.5", "0.0", "1e300", "[]", "{}"])
            .prop_map(str::to_string),
        1 => prop::collection::vec(value_text().prop_map(|v| quote(&v)), 0..3)
            .prop_map(|v| format!("[{}]", v.join(", "))),
        1 => (target(), quantity()).prop_map(|(t, s)| format!("{{ path = {}, size = {} }}", quote(&t), quote(&s))),
    ].boxed()
}

/// A value that is valid for `key` (as TOML), so that a file gets past its first key and the tables after
/// it are parsed too; `None` for keys without one here.
fn good_value(key: &str) -> Option<BoxedStrategy<String>> {
    let q = |s: BoxedStrategy<String>| s.prop_map(|v| quote(&v)).boxed();
    let words = |w: &[&'static str]| q(select(w.to_vec()).prop_map(str::to_string).boxed());
    let int = |lo: u64, hi: u64| (lo..=hi).prop_map(|n| n.to_string()).boxed();
    let size =
        || q((1u64..4096, select(vec!["K", "M", "G", "k", ""])).prop_map(|(n, u)| format!("{n}{u}")).boxed());
    let dur = || {
        q((1u64..1000, select(vec!["s", "ms", "us", "m", "h"])).prop_map(|(n, u)| format!("{n}{u}")).boxed())
    };
    let pct = || prop_oneof![int(0, 100), q((0u32..=100).prop_map(|n| format!("{n}%")).boxed())].boxed();
    let boolean = || select(vec!["true", "false"]).prop_map(str::to_string).boxed();
    let good_target = || {
        q(prop_oneof![
            Just("mem:64M".to_string()),
            Just("@db".to_string()),
            Just("@log".to_string()),
            Just("sim:ssd,sata".to_string()),
            Just("link:fc8g:sim:hdd,15k".to_string()),
            Just("sim:array,disks=4,raid=5,member=hdd:15k".to_string()),
            sim_target(),
        ]
        .boxed())
    };
    Some(match key {
        "name" | "description" | "expected" => q(noise()),
        "sources" => prop::collection::vec(noise().prop_map(|n| quote(&n)), 0..3)
            .prop_map(|v| format!("[{}]", v.join(", ")))
            .boxed(),
        "bdm_window" => q((1u64..200).prop_map(|h| format!("{h}h")).boxed()),
        "duration" | "ramp" | "max_db_read_avg" | "max_db_read_max" | "max_log_write_avg"
        | "max_log_write_max" => dur(),
        "ios" | "min_iops" | "mailboxes" | "messages_per_day" => int(1, 100_000),
        "bytes" | "size" | "offset" | "length" | "align" | "cache_seq_cutoff" | "cache_max_mem"
        | "mailbox_size" | "log_size" => size(),
        // TOML integers are i64: a larger seed is written as a string.
        "seed" => {
            prop_oneof![int(0, i64::MAX as u64), q(any::<u64>().prop_map(|n| n.to_string()).boxed())].boxed()
        }
        "engine" => words(&["auto", "io_uring", "sync"]),
        "clock" => words(&["real", "virtual"]),
        "prealloc" => words(&["fallocate", "write", "none"]),
        "direct" | "cache_shrink" | "verify" | "stop_on_error" => boolean(),
        "verify_fail" => words(&["stop", "continue"]),
        "journal" => words(&["journal.bin", "/tmp/j"]),
        "workers" | "count" | "outstanding" => int(1, 8),
        "qd" => int(1, 4096),
        "weight" => int(0, 100),
        "cache" => prop_oneof![size(), q((1u32..100).prop_map(|n| format!("{n}%")).boxed())].boxed(),
        "cache_dev" => words(&["mem:64M", "sim:ssd", "sim:ssd,sata"]),
        "cache_line" => words(&["512", "4K", "64K", "1M"]),
        "cache_mode" => words(&["write-through", "write-around", "write-back", "read-only"]),
        "cache_policy" => words(&["lru", "arc", "s3-fifo"]),
        "cache_admit" => int(1, 255),
        "cache_dirty_max" | "read_pct" | "random_pct" | "trim_pct" | "iops_tolerance" => pct(),
        "fsync" | "fdatasync" => int(0, 64),
        "sync" => words(&["none", "dsync", "sync"]),
        "throttle" => words(&["rbps=100M", "riops=2k,wiops=1k", "wbps=1G"]),
        "target" => good_target(),
        "rate" => prop_oneof![int(1, 100_000), words(&["10k", "2.5M"])].boxed(),
        "users.rate" => words(&["500/8h", "62.5/h", "1/min", "2/s"]),
        "arrival" => words(&["fixed", "poisson"]),
        "data" => words(&["random", "zero", "compress:50"]),
        "bs" => q(prop_oneof![
            4 => select(vec!["4K", "8k", "32K", "1M", "512"]).prop_map(str::to_string),
            1 => Just("4k/60:8k/20:64k/20".to_string()),
            1 => block_sizes(),
        ]
        .boxed()),
        "rw" => words(&["read", "write", "randread", "randwrite", "rw", "randrw"]),
        "dist" => q(prop_oneof![
            4 => select(vec!["uniform", "zipf:1.2", "zones:80/20:20/80", "pareto:0.2", "sequence:2,0,1"]).prop_map(str::to_string),
            1 => dist(),
        ]
        .boxed()),
        "mode" => words(&["rate", "stress"]),
        "version" => select(vec![2007u32, 2010, 2013, 2016]).prop_map(|v| v.to_string()).boxed(),
        "iops_per_mailbox" => words(&["0.18", "0.5", "1"]),
        "start_delay" | "flow_sleep" | "latency_target" | "latency_window" => dur(),
        "flow" => int(1, 8),
        "flow_id" => int(0, 3),
        "latency_percentile" => int(1, 100),
        "random_run" => prop_oneof![int(1, 16), words(&["8:identical", "4:sequential"])].boxed(),
        "seq_skip" => prop_oneof![size(), words(&["-8k", "-4K"])].boxed(),
        "trim_then_write" | "atomic" => boolean(),
        "band" => words(&["256M:2G", "64k:0:128k", "1M:1M"]),
        "dedupe" => words(&["50", "20:set=30", "34:set=50:global"]),
        "verify_backlog" => prop_oneof![int(1, 1024), words(&["16:8", "4:12"])].boxed(),
        _ => return None,
    })
}

/// `key = value` lines, each key from `keys` at most once (TOML refuses a repeated key): mostly a valid
/// value for the key, sometimes any value; now and then a misspelled or unknown key.
fn assignments(keys: Vec<&'static str>, max: usize) -> BoxedStrategy<String> {
    let users = keys == USERS_KEYS;
    let max = max.min(keys.len());
    let line = move |k: &'static str| {
        let v = match good_value(if k == "rate" && users { "users.rate" } else { k }) {
            Some(good) => prop_oneof![19 => good, 1 => toml_value()].boxed(),
            None => toml_value(),
        };
        v.prop_map(move |v| format!("{k} = {v}")).boxed()
    };
    let wrong = select(vec!["qdd", "read-pct", "iodepth", "duraton", "\"quoted key\""]);
    (prop::sample::subsequence(keys, 0..=max), prop::option::weighted(0.02, wrong))
        .prop_flat_map(move |(keys, wrong)| {
            let mut lines: Vec<BoxedStrategy<String>> = keys.into_iter().map(line).collect();
            if let Some(w) = wrong {
                lines.push(toml_value().prop_map(move |v| format!("{w} = {v}")).boxed());
            }
            lines.prop_map(|l| l.join("\n"))
        })
        .boxed()
}

/// A near-valid job file: top-level run, worker and spec keys, then each kind of table (worker tables
/// with distinct names, access specs, named targets, Exchange sizing, verdict, users and transactions,
/// profile metadata), or now and then a table key given a plain value.
fn job_file() -> BoxedStrategy<String> {
    let top: Vec<&str> = RUN_KEYS.iter().chain(WORKER_KEYS).chain(SPEC_KEYS).copied().collect();
    let layer_keys: Vec<&str> = WORKER_KEYS.iter().chain(SPEC_KEYS).copied().collect();
    let worker_keys: Vec<&str> = layer_keys.iter().copied().chain(["count"]).collect();
    let worker = move |n: &'static str| {
        (assignments(worker_keys.clone(), 6), prop::collection::vec(assignments(SPEC_KEYS.to_vec(), 4), 0..3))
            .prop_map(move |(a, specs)| {
                let specs: Vec<String> = specs.iter().map(|s| format!("[[worker.{n}.spec]]\n{s}")).collect();
                format!("[worker.{n}]\n{a}\n{}", specs.join("\n"))
            })
            .boxed()
    };
    let workers =
        prop::sample::subsequence(vec!["db", "log", "w-1", "Zed"], 0..3).prop_flat_map(move |names| {
            names.into_iter().map(worker.clone()).collect::<Vec<_>>().prop_map(|w| w.join("\n"))
        });
    let named_value = prop_oneof![
        good_value("target").expect("target"),
        (good_value("target").expect("target"), good_value("size").expect("size"))
            .prop_map(|(t, s)| format!("{{ path = {t}, size = {s} }}")),
        good_value("size").expect("size").prop_map(|s| format!("{{ size = {s} }}")),
        toml_value(),
    ];
    let names = select(vec!["db", "log", "x1", "9bad", "a b", ""]);
    let targets = prop::collection::btree_map(names, named_value, 0..4).prop_map(|t| {
        let lines: Vec<String> = t
            .into_iter()
            .map(|(n, v)| format!("{} = {v}", if is_bare(n) { n.to_string() } else { quote(n) }))
            .collect();
        format!("[targets]\n{}", lines.join("\n"))
    });
    // A step needs 'rw'; the other keys are optional.
    let step_keys: Vec<&str> = STEP_KEYS.iter().copied().filter(|k| *k != "rw").collect();
    let step = (good_value("rw").expect("rw"), assignments(step_keys, 4))
        .prop_map(|(rw, a)| format!("{{ rw = {rw}, {} }}", a.replace('\n', ", ")).replace(", }", " }"));
    let transaction = (
        (0u32..4).prop_map(|i| format!("name = \"t{i}\"")),
        prop::option::of(good_value("weight").expect("weight")),
        prop::collection::vec(step, 1..4),
    )
        .prop_map(|(name, w, s)| {
            let w = w.map(|w| format!("weight = {w}\n")).unwrap_or_default();
            format!("[[transaction]]\n{name}\n{w}steps = [{}]", s.join(", "))
        });
    let table = |name: &'static str, keys: &'static [&'static str], max| {
        prop::option::weighted(
            0.3,
            assignments(keys.to_vec(), max).prop_map(move |a| format!("[{name}]\n{a}")),
        )
        .prop_map(Option::unwrap_or_default)
    };
    (
        assignments(top, 10),
        workers,
        prop::collection::vec(
            assignments(SPEC_KEYS.to_vec(), 5).prop_map(|a| format!("[[spec]]\n{a}")),
            0..3,
        ),
        prop::option::weighted(0.4, targets).prop_map(Option::unwrap_or_default),
        (
            table("exchange", EXCHANGE_KEYS, 5),
            table("verdict", VERDICT_KEYS, 4),
            table("users", USERS_KEYS, 5),
            table("profile", PROFILE_KEYS, 3),
        ),
        prop::collection::vec(transaction, 0..3),
        prop::option::weighted(
            0.05,
            (select(TABLE_KEYS.to_vec()), toml_value()).prop_map(|(k, v)| format!("{k} = {v}")),
        ),
    )
        .prop_map(|(top, workers, specs, targets, (exchange, verdict, users, profile), tx, odd)| {
            // A plain `key = value` must come before the first table header to be a top-level key.
            let odd = odd.unwrap_or_default();
            format!(
                "{top}\n{odd}\n{workers}\n{}\n{targets}\n{exchange}\n{verdict}\n{users}\n{profile}\n{}\n",
                specs.join("\n"),
                tx.join("\n")
            )
        })
        .boxed()
}

fn is_bare(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The built-in profiles, the most realistic job files there are.
fn profiles() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles");
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| std::fs::read_to_string(p).expect("read a profile"))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no profiles found in {}", dir.display());
    out
}

/// A profile changed a little: one value replaced, one line dropped or duplicated, or the text cut short.
fn mutated_profile() -> BoxedStrategy<String> {
    (select(profiles()), any::<prop::sample::Index>(), 0u8..4, toml_value())
        .prop_map(|(p, at, how, v)| {
            let lines: Vec<&str> = p.lines().collect();
            let i = at.index(lines.len().max(1)).min(lines.len().saturating_sub(1));
            let mut lines: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            match how {
                0 => {
                    if let Some((k, _)) = lines.get(i).and_then(|l| l.split_once(" = ")) {
                        lines[i] = format!("{k} = {v}");
                    }
                }
                1 if !lines.is_empty() => {
                    lines.remove(i);
                }
                2 if !lines.is_empty() => {
                    let l = lines[i].clone();
                    lines.insert(i, l);
                }
                _ => {
                    let text = lines.join("\n");
                    let mut cut = at.index(text.len().max(1));
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    return text[..cut].to_string();
                }
            }
            lines.join("\n")
        })
        .boxed()
}

// ---------------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn value_parsers_never_panic_on_near_valid_text(text in value_text()) {
        parsers::every_value_parser(&text);
    }

    #[test]
    fn value_parsers_never_panic_on_arbitrary_text(text in any::<String>()) {
        parsers::every_value_parser(&text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn job_file_parser_never_panics_on_near_valid_files(text in job_file()) {
        parsers::job_file(&text);
    }

    #[test]
    fn job_file_parser_never_panics_on_mutated_profiles(text in mutated_profile()) {
        parsers::job_file(&text);
    }

    #[test]
    fn job_file_parser_never_panics_on_arbitrary_text(text in any::<String>()) {
        parsers::job_file(&text);
    }
}

#[test]
fn every_built_in_profile_parses() {
    // The mutations above start from these; a profile that does not parse would make them test less.
    for p in profiles() {
        let r = iolab_spec::JobSpec::from_toml(&p, "profile.toml");
        assert!(r.is_ok(), "a built-in profile does not parse: {}", r.unwrap_err());
    }
}

#[test]
fn link_behind_a_link_is_an_error_not_a_stack_overflow() {
    // Found by this file: each `link:` recursed into the parser, so a long chain overflowed the stack
    // (and a second link was silently not emulated). One link per target now.
    for depth in [2, 10, 100_000] {
        let text = format!("{}mem:1G", "link:fc8g:".repeat(depth));
        let e = iolab_spec::TargetSpec::parse(&text).unwrap_err();
        assert!(e.contains("one link per target"), "{e}");
        parsers::every_value_parser(&text);
    }
    assert!(iolab_spec::TargetSpec::parse("link:fc8g:mem:1G").is_ok());
}

#[test]
fn known_edge_values_never_panic() {
    for text in [
        "",
        " ",
        "\0",
        "k",
        "K",
        ".",
        "..",
        ":",
        "/",
        "=",
        "%",
        "µs",
        "1µs",
        "4ｋ",
        "١٢",
        "sim:",
        "sim:array,",
        "sim:array,member=",
        "sim:array,member=hdd:",
        "sim:array,member=ssd::",
        "sim:array,disks=256,raid=5,member=hdd:15k:size=1024T",
        "sim:array,stripe=16M,member=ssd:size=1M",
        "link:",
        "link::",
        "link:fc8g:",
        "link:fc8g:link:",
        "mem:",
        "null:0",
        "mem:18446744073709551615",
        "mem:17179869184G",
        "99999999999999999999999999999999999999T",
        "1.99999999999999999999999999999K",
        "0.0000000000000000001T",
        "1e309s",
        "18446744073709551615h",
        "365d",
        "8760h",
        "525600m",
        "4k/4294967296",
        "4k/0:8k/0",
        "zones:100/0",
        "zones:0/0:100/100",
        "zipf:1e-320",
        "pareto:0.9999999999999999999",
        "compress:100.4",
        "compress:255",
        "rbps=0",
        "riops=1e30",
        "500/0h",
        "1/1ns",
        "1e308/1ns",
        "0x",
        "0xffffffffffffffff",
        "-0",
        "+0",
    ] {
        parsers::every_value_parser(text);
    }
}

/// `n` values of `strategy` from a fixed seed.
fn sample(strategy: BoxedStrategy<String>, n: usize) -> Vec<String> {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    (0..n).map(|_| strategy.new_tree(&mut runner).expect("generate").current()).collect()
}

#[test]
fn near_valid_job_files_often_parse_so_the_deep_paths_run() {
    // Generators that only make errors at the first key would never reach the tables behind it.
    let files = sample(job_file(), 600);
    let jobs: Vec<iolab_spec::JobSpec> =
        files.iter().filter_map(|f| iolab_spec::JobSpec::from_toml(f, "j.toml").ok()).collect();
    let deep = |f: fn(&iolab_spec::JobSpec) -> bool| jobs.iter().filter(|j| f(j)).count();
    let with_workers = deep(|j| !j.worker_tables.is_empty());
    let with_specs = deep(|j| j.worker_tables.iter().any(|w| !w.specs.is_empty()) || !j.specs.is_empty());
    let with_targets = deep(|j| !j.targets.is_empty());
    let with_tables = deep(|j| j.exchange.is_some() || j.verdict.is_some() || j.profile.is_some());
    let summary = format!(
        "{} of {} parse; with worker tables {with_workers}, access specs {with_specs}, [targets] {with_targets}, \
         [exchange]/[verdict]/[profile] {with_tables}",
        jobs.len(),
        files.len()
    );
    if std::env::var_os("IOLAB_DIAG").is_some() {
        for f in files.iter().take(40) {
            if let Err(e) = iolab_spec::JobSpec::from_toml(f, "j.toml") {
                eprintln!("{e}");
                if matches!(e, iolab_spec::SpecError::Syntax { .. }) {
                    eprintln!("{f}");
                }
            }
        }
    }
    // 1 in 25: about 5 % parse (4.8 % over 2,000 files since the three consent keys, whose values always
    // parsed, left the job-file keys: a job file can no longer give consent).
    assert!(jobs.len() >= files.len() / 25, "{summary}");
    assert!(with_workers > 0 && with_specs > 0 && with_targets > 0 && with_tables > 0, "{summary}");
    // Errors are the rest: each one must come from a check, not from TOML syntax alone.
    let syntax = files
        .iter()
        .filter(|f| {
            matches!(iolab_spec::JobSpec::from_toml(f, "j.toml"), Err(iolab_spec::SpecError::Syntax { .. }))
        })
        .count();
    assert!(syntax < files.len() / 4, "{syntax} of {} generated files are not TOML; {summary}", files.len());
}

#[test]
fn near_valid_targets_often_parse_as_emulated_devices() {
    let texts = sample(target(), 400);
    if std::env::var_os("IOLAB_DIAG").is_some() {
        for t in texts.iter().take(15) {
            eprintln!("{t:?} -> {:?}", iolab_spec::TargetSpec::parse(t));
        }
    }
    let emulated =
        texts.iter().filter(|t| iolab_spec::TargetSpec::parse(t).is_ok_and(|t| t.is_virtual())).count();
    assert!(emulated >= texts.len() / 10, "only {emulated} of {} parse as emulated targets", texts.len());
}
