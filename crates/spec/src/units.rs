//! Parsers and formatters for the units users type: sizes ("4K", "8G"), durations ("30s", "250us"),
//! percentages, counts and rates ("10k"), block-size splits ("4k/60:8k/20:64k/20") and offset
//! distributions ("zipf:1.2").
//!
//! Every parser returns `Err(expected)`: a phrase saying what form was expected. The caller wraps it
//! with the flag or key the user typed and the original text (see [`crate::error::SpecError`]).
//! Sizes are powers of 1024 (K = 1024), as in fio and Iometer; counts and rates are powers of 1000.

use serde::{Deserialize, Serialize};

const SIZE_EXPECTED: &str =
    "digits with an optional K, M, G or T suffix (powers of 1024, 'KiB' also accepted), e.g. '4K'";
const DURATION_EXPECTED: &str =
    "a non-negative number with a unit ns, us, ms, s, m or h (bare numbers are seconds), e.g. '30s'";

/// Parses a size in bytes: `4096`, `4K`, `4k`, `4KiB`, `1.5G`. Decimal units (`KB`) are refused because they are
/// ambiguous; the message says so.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') || num.matches('.').count() > 1 {
        return Err(SIZE_EXPECTED.into());
    }
    let mult: u64 = match unit.trim() {
        "" | "b" | "B" => 1,
        "k" | "K" | "KiB" | "kiB" => 1 << 10,
        "m" | "M" | "MiB" => 1 << 20,
        "g" | "G" | "GiB" => 1 << 30,
        "t" | "T" | "TiB" => 1 << 40,
        "kb" | "KB" | "Kb" | "kB" | "mb" | "MB" | "gb" | "GB" | "tb" | "TB" => {
            return Err(format!(
            "{SIZE_EXPECTED}; '{}' is ambiguous (fio reads it as powers of 1024 unless kb_base=1000, a disk \
                 vendor as powers of 1000): write {} for powers of 1024",
            unit.trim(),
            unit.trim()[..1].to_ascii_uppercase()
        ))
        }
        _ => return Err(SIZE_EXPECTED.into()),
    };
    if let Some((whole, frac)) = num.split_once('.') {
        let w: u64 = whole.parse().map_err(|_| SIZE_EXPECTED.to_string())?;
        let f: f64 = format!("0.{frac}").parse().map_err(|_| SIZE_EXPECTED.to_string())?;
        let total = (w as f64 + f) * mult as f64;
        if total > u64::MAX as f64 / 2.0 || total.fract() != 0.0 {
            return Err(format!("{SIZE_EXPECTED}; '{t}' is not a whole number of bytes"));
        }
        return Ok(total as u64);
    }
    let n: u64 = num.parse().map_err(|_| SIZE_EXPECTED.to_string())?;
    n.checked_mul(mult).ok_or_else(|| format!("{SIZE_EXPECTED}; '{t}' is too large"))
}

/// Formats a byte count with the largest exact binary unit: 4096 -> "4K", 1536 -> "1536".
pub fn format_size(n: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if n >= (1 << shift) && n % (1u64 << shift) == 0 {
            return format!("{}{unit}", n >> shift);
        }
    }
    n.to_string()
}

/// Parses a duration into nanoseconds: `30s`, `500ms`, `250us`, `2m`, `1h`, `100ns`, `1.5s`; a bare number is seconds.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("{DURATION_EXPECTED}; a duration cannot be negative"));
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().map_err(|_| DURATION_EXPECTED.to_string())?;
    if !v.is_finite() {
        return Err(DURATION_EXPECTED.into());
    }
    let mult = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "" | "s" | "sec" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(DURATION_EXPECTED.into()),
    };
    let ns = v * mult;
    if ns > 365.0 * 24.0 * 3600e9 {
        return Err(format!("{DURATION_EXPECTED}; at most one year"));
    }
    Ok(ns.round() as u64)
}

/// Formats nanoseconds with the largest exact unit: 30_000_000_000 -> "30s", 250_000 -> "250us".
pub fn format_duration(ns: u64) -> String {
    for (unit, div) in [
        ("h", 3_600_000_000_000u64),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if ns >= div && ns % div == 0 {
            return format!("{}{unit}", ns / div);
        }
    }
    format!("{ns}ns")
}

/// Parses a percentage 0..=100 (`70`, `70%`, `12.5`).
pub fn parse_percent(s: &str) -> Result<f64, String> {
    const EXP: &str = "a percentage from 0 to 100, e.g. '70'";
    let t = s.trim().trim_end_matches('%');
    let v: f64 = t.parse().map_err(|_| EXP.to_string())?;
    if !(0.0..=100.0).contains(&v) || !v.is_finite() {
        return Err(EXP.into());
    }
    Ok(v)
}

/// Parses a count or rate with optional decimal suffix: `1000`, `10k`, `2.5M`.
pub fn parse_count(s: &str) -> Result<f64, String> {
    const EXP: &str = "a number with an optional k, M or G suffix (powers of 1000), e.g. '10k'";
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k') | Some('K') => (&t[..t.len() - 1], 1e3),
        Some('M') | Some('m') => (&t[..t.len() - 1], 1e6),
        Some('G') | Some('g') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| EXP.to_string())?;
    if !v.is_finite() || v < 0.0 {
        return Err(EXP.into());
    }
    Ok(v * mult)
}

/// Parses a bandwidth, bytes per second: `100MB/s` (10^6, as iolab prints MB/s), `100MiB/s` (2^20), also
/// `kB/s`, `KiB/s`, `GB/s`, `GiB/s`, `B/s`; `None` when `s` does not end in `/s` (then it is not a bandwidth).
pub fn parse_bandwidth(s: &str) -> Option<Result<f64, String>> {
    const EXP: &str = "a bandwidth such as '100MB/s' (10^6 bytes), '100MiB/s' (2^20), '1.5GB/s' or '500kB/s'";
    let t = s.trim().strip_suffix("/s")?.trim();
    let units: [(&str, f64); 7] = [
        ("GiB", 1073741824.0),
        ("MiB", 1048576.0),
        ("KiB", 1024.0),
        ("GB", 1e9),
        ("MB", 1e6),
        ("kB", 1e3),
        ("B", 1.0),
    ];
    let Some((num, mult)) = units.iter().find_map(|(u, m)| t.strip_suffix(u).map(|n| (n.trim(), *m))) else {
        return Some(Err(EXP.into()));
    };
    Some(match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * mult),
        _ => Err(EXP.into()),
    })
}

/// Block sizes of one access spec: one size, or a weighted split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockSizes(pub Vec<BlockSizeWeight>);

/// One entry of a block-size split.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockSizeWeight {
    /// Transfer size in bytes.
    pub size_bytes: u64,
    /// Relative weight (share of I/Os).
    pub weight: u32,
}

/// Largest block size iolab accepts (one I/O).
pub const MAX_BLOCK_SIZE: u64 = 64 << 20;

impl BlockSizes {
    /// Parses `4k` or `4k/60:8k/20:64k/20` (size/weight pairs separated by ':'; weights are relative).
    pub fn parse(s: &str) -> Result<BlockSizes, String> {
        const EXP: &str = "a size such as '4K', or a weighted split such as '4K/60:8K/20:64K/20'";
        let mut out = Vec::new();
        for part in s.split(':') {
            let (size, weight) = match part.split_once('/') {
                Some((sz, w)) => {
                    let w: u32 =
                        w.trim().parse().map_err(|_| format!("{EXP}; weight '{w}' is not a whole number"))?;
                    (sz, w)
                }
                None => (part, 1),
            };
            let size_bytes = parse_size(size).map_err(|e| format!("{EXP}; '{size}': {e}"))?;
            if size_bytes == 0 {
                return Err(format!("{EXP}; a block size must be at least 1 byte"));
            }
            if size_bytes > MAX_BLOCK_SIZE {
                return Err(format!("{EXP}; at most 64M per I/O"));
            }
            out.push(BlockSizeWeight { size_bytes, weight });
        }
        if out.iter().all(|b| b.weight == 0) {
            return Err(format!("{EXP}; at least one weight must be above 0"));
        }
        if out.len() > 64 {
            return Err(format!("{EXP}; at most 64 sizes"));
        }
        Ok(BlockSizes(out))
    }

    /// The largest size in the split.
    pub fn max(&self) -> u64 {
        self.0.iter().map(|b| b.size_bytes).max().unwrap_or(0)
    }

    /// The canonical text form ("4K" or "4K/60:8K/20").
    pub fn to_text(&self) -> String {
        if self.0.len() == 1 {
            return format_size(self.0[0].size_bytes);
        }
        self.0
            .iter()
            .map(|b| format!("{}/{}", format_size(b.size_bytes), b.weight))
            .collect::<Vec<_>>()
            .join(":")
    }
}

/// How random offsets are spread over a worker's region.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Dist {
    /// Every block equally likely.
    Uniform,
    /// Zipf over blocks with exponent `theta` (> 0, != 1 allowed); popular blocks are scattered, not clustered.
    Zipf {
        /// Skew exponent; 0.8..1.2 is typical of caches and databases.
        theta: f64,
    },
    /// fio's pareto:h: block index = n * u^(ln h / ln (1-h)), with h in (0, 1); h = 0.2 sends ~80% of I/O to ~20% of blocks.
    Pareto {
        /// Shape: the share of the space that gets the "rest" of the I/O.
        h: f64,
    },
    /// Hot zones: each zone gets `io_pct` of the I/O spread over `space_pct` of the region, in region order.
    Zones {
        /// The zones, summing to 100% of I/O and 100% of space.
        zones: Vec<Zone>,
    },
    /// fio's `random_distribution=sequence:2,0,1`: the k-th random I/O of a direction goes to block
    /// `blocks[k % len]` (a block: the alignment, `align` or the I/O's size), the sequence repeating; with
    /// `advance` (fio's `random_sequence_stride=1`) the k-th goes to `(k / len) * len + blocks[k % len]`, each
    /// cycle a group of `len` blocks further, the groups starting over at the first past the region's end.
    Sequence {
        /// The block indices, in order (1 to [`MAX_SEQUENCE`]).
        blocks: Vec<u64>,
        /// Each cycle moves a group of `blocks.len()` blocks on.
        advance: bool,
    },
    /// fio's SPRandom preconditioning (`sprandom=1`, `spr_op`, `spr_num_regions`): random writes over the
    /// region's blocks, each once, in `regions` regions of the write stream, with blocks of each region written
    /// again in the next so that it is left with the invalid share of a steady state under over-provisioning
    /// `op` (crates/plan/src/sprandom.rs). Random writes only, of one size.
    Sprandom {
        /// Over-provisioning, a share in (0, 1).
        op: f64,
        /// Number of regions, 1 to 100000.
        regions: u32,
    },
}

/// Most blocks in a `sequence:` distribution (fio's FIO_SEQ_MAX).
pub const MAX_SEQUENCE: usize = 64;

/// A band walk (fio's `zonemode=strided`): the worker's I/O stays in a band of `size` bytes at the region's
/// start until it has moved `bytes` bytes there, then moves to the band `size + skip` further on; a band that
/// starts at or past the region's end starts the walk over at the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Band {
    /// The band's size (fio's `zonerange`).
    pub size: u64,
    /// Bytes skipped between one band and the next (fio's `zoneskip`).
    pub skip: u64,
    /// Bytes of I/O in each band before the next (fio's `zonesize`).
    pub bytes: u64,
}

impl Band {
    /// Parses `SIZE:SKIP` or `SIZE:SKIP:BYTES` (`256M:2G`, `64k:0:128k`); BYTES defaults to SIZE.
    pub fn parse(s: &str) -> Result<Band, String> {
        const EXP: &str = "SIZE:SKIP or SIZE:SKIP:BYTES (the band, the gap after it, the bytes moved in \
                           each band; BYTES defaults to SIZE), e.g. '256M:2G'";
        let parts: Vec<&str> = s.trim().split(':').collect();
        let size = |t: &str| parse_size(t).map_err(|_| EXP.to_string());
        let (size, skip, bytes) = match parts.as_slice() {
            [a, b] => (size(a)?, size(b)?, size(a)?),
            [a, b, c] => (size(a)?, size(b)?, size(c)?),
            _ => return Err(EXP.into()),
        };
        if size == 0 || bytes == 0 {
            return Err(format!("{EXP}; SIZE and BYTES must be above 0"));
        }
        Ok(Band { size, skip, bytes })
    }
}

/// One hot zone.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    /// Share of I/Os sent to this zone, in percent.
    pub io_pct: f64,
    /// Share of the region this zone covers, in percent.
    pub space_pct: f64,
}

impl Dist {
    /// Parses `uniform`, `zipf:THETA`, `pareto:H`, or `zones:IO/SPACE:IO/SPACE...` (e.g. `zones:80/20:20/80`).
    pub fn parse(s: &str) -> Result<Dist, String> {
        const EXP: &str = "'uniform', 'zipf:THETA' (e.g. zipf:1.2), 'pareto:H' (0<H<1, e.g. pareto:0.2), 'zones:IO%/SPACE%:...' (e.g. zones:80/20:20/80) 'sequence:BLOCK,BLOCK,...[:advance]' (e.g. sequence:2,0,1) or 'sprandom:OP:REGIONS' (e.g. sprandom:0.15:100)";
        let t = s.trim();
        if t == "uniform" || t == "random" {
            return Ok(Dist::Uniform);
        }
        if let Some(v) = t.strip_prefix("zipf:") {
            let theta: f64 = v.parse().map_err(|_| EXP.to_string())?;
            if !(theta > 0.0 && theta <= 100.0) {
                return Err(format!("{EXP}; zipf theta must be above 0"));
            }
            return Ok(Dist::Zipf { theta });
        }
        if let Some(v) = t.strip_prefix("pareto:") {
            let h: f64 = v.parse().map_err(|_| EXP.to_string())?;
            if !(h > 0.0 && h < 1.0) {
                return Err(format!("{EXP}; pareto h must be strictly between 0 and 1"));
            }
            return Ok(Dist::Pareto { h });
        }
        if let Some(v) = t.strip_prefix("zones:") {
            let mut zones = Vec::new();
            for z in v.split(':') {
                let (a, b) = z.split_once('/').ok_or_else(|| EXP.to_string())?;
                let io_pct = parse_percent(a).map_err(|_| EXP.to_string())?;
                let space_pct = parse_percent(b).map_err(|_| EXP.to_string())?;
                if space_pct == 0.0 && io_pct > 0.0 {
                    return Err(format!("{EXP}; a zone with I/O needs space above 0%"));
                }
                zones.push(Zone { io_pct, space_pct });
            }
            let io: f64 = zones.iter().map(|z| z.io_pct).sum();
            let space: f64 = zones.iter().map(|z| z.space_pct).sum();
            if (io - 100.0).abs() > 0.01 || (space - 100.0).abs() > 0.01 {
                return Err(format!(
                    "{EXP}; zone I/O shares and space shares must each sum to 100 (found {io} and {space})"
                ));
            }
            return Ok(Dist::Zones { zones });
        }
        if let Some(v) = t.strip_prefix("sequence:") {
            return sequence(v).map_err(|e| format!("{EXP}; {e}"));
        }
        if let Some((op, regions)) = t.strip_prefix("sprandom:").and_then(|v| v.split_once(':')) {
            let op: f64 = op.trim().parse().map_err(|_| EXP.to_string())?;
            let regions: u32 = regions.trim().parse().map_err(|_| EXP.to_string())?;
            let fits = op > 0.0 && op < 1.0 && (1..=100_000).contains(&regions);
            if !fits {
                return Err(format!(
                    "{EXP}; sprandom's OP is strictly between 0 and 1, REGIONS from 1 to 100000"
                ));
            }
            return Ok(Dist::Sprandom { op, regions });
        }
        Err(EXP.into())
    }
}

/// The bytes of one SPRandom pass over `logical` bytes (fio's `sprandom_physical_size`): the logical size plus
/// `op` of it (rounded up), rounded down to `align`.
pub fn sprandom_pass_bytes(op: f64, logical: u64, align: u64) -> u64 {
    let size = logical.saturating_add((logical as f64 * op).ceil() as u64);
    size - size % align.max(1)
}

/// The blocks of `sequence:BLOCKS[:advance]`, after the prefix.
fn sequence(v: &str) -> Result<Dist, String> {
    let (list, advance) = match v.rsplit_once(':') {
        Some((l, "advance")) => (l, true),
        Some((_, other)) => {
            return Err(format!("'{other}' after the blocks: only ':advance' may follow them"))
        }
        None => (v, false),
    };
    let blocks: Vec<u64> = list
        .split(',')
        .map(|b| b.trim().parse::<u32>().map(u64::from))
        .collect::<Result<_, _>>()
        .map_err(|_| "each block a whole number from 0 to 4294967295".to_string())?;
    if blocks.len() > MAX_SEQUENCE {
        return Err(format!("at most {MAX_SEQUENCE} blocks (found {})", blocks.len()));
    }
    Ok(Dist::Sequence { blocks, advance })
}

/// Largest number of workers in one run.
pub const MAX_WORKERS: u32 = 1024;

/// Largest number of phases (`[[phase]]` tables, fio stonewalls, Iometer tests) in one job: each phase is a
/// run of its own, and a job holds all of them at once. The phases run as the points of a sweep, so this is
/// also at most a sweep's points (`iolab_run::sweep::MAX_POINTS`).
pub const MAX_PHASES: usize = 1000;
/// Shortest time-series interval (`interval`): a window shorter than the clock's tick and the workers' own
/// wake-ups would be mostly noise.
pub const MIN_INTERVAL_NS: u64 = 10_000_000;

/// Largest number of worker tables in one job, over all its phases (a phase's job copies its own tables, and
/// the tables of every phase are read before the first runs).
pub const MAX_WORKER_TABLES: usize = 4 * MAX_WORKERS as usize;

/// Open-loop inter-arrival times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly spaced arrivals (1/rate apart).
    #[default]
    Fixed,
    /// Poisson arrivals: exponential gaps with mean 1/rate.
    Poisson,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_with_binary_suffixes_parses() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("8G").unwrap(), 8 << 30);
        assert_eq!(parse_size("1.5K").unwrap(), 1536);
    }

    #[test]
    fn size_with_bad_suffix_is_error_naming_the_form() {
        assert!(parse_size("4q").unwrap_err().contains("K, M, G or T"));
        assert!(parse_size("4kb").unwrap_err().contains("ambiguous"));
        assert!(parse_size("-4k").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("1.1").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn duration_units_parse_to_nanoseconds() {
        assert_eq!(parse_duration_ns("30s").unwrap(), 30_000_000_000);
        assert_eq!(parse_duration_ns("30").unwrap(), 30_000_000_000);
        assert_eq!(parse_duration_ns("250us").unwrap(), 250_000);
        assert_eq!(parse_duration_ns("1.5ms").unwrap(), 1_500_000);
        assert_eq!(parse_duration_ns("2m").unwrap(), 120_000_000_000);
        assert!(parse_duration_ns("-5s").unwrap_err().contains("negative"));
        assert!(parse_duration_ns("5x").is_err());
    }

    #[test]
    fn format_roundtrips_exact_units() {
        assert_eq!(format_size(4096), "4K");
        assert_eq!(format_size(1536), "1536");
        assert_eq!(format_duration(30_000_000_000), "30s");
        assert_eq!(format_duration(250_000), "250us");
    }

    #[test]
    fn percent_out_of_range_is_error() {
        assert_eq!(parse_percent("70%").unwrap(), 70.0);
        assert!(parse_percent("101").is_err());
        assert!(parse_percent("-1").is_err());
    }

    #[test]
    fn block_size_split_parses_weights() {
        let b = BlockSizes::parse("4k/60:8k/20:64k/20").unwrap();
        assert_eq!(b.0.len(), 3);
        assert_eq!(b.max(), 65536);
        assert_eq!(b.to_text(), "4K/60:8K/20:64K/20");
        assert!(BlockSizes::parse("4k/x").is_err());
        assert!(BlockSizes::parse("0").is_err());
        assert!(BlockSizes::parse("128M").is_err());
    }

    #[test]
    fn dist_forms_parse_and_validate() {
        assert_eq!(Dist::parse("zipf:1.2").unwrap(), Dist::Zipf { theta: 1.2 });
        assert_eq!(Dist::parse("pareto:0.2").unwrap(), Dist::Pareto { h: 0.2 });
        assert!(matches!(Dist::parse("zones:80/20:20/80").unwrap(), Dist::Zones { .. }));
        assert!(Dist::parse("zones:80/20:10/80").is_err());
        assert!(Dist::parse("pareto:1").is_err());
        assert!(Dist::parse("gauss").is_err());
        let seq = Dist::parse("sequence:2,0,1").unwrap();
        assert_eq!(seq, Dist::Sequence { blocks: vec![2, 0, 1], advance: false });
        assert_eq!(
            Dist::parse("sequence:5:advance").unwrap(),
            Dist::Sequence { blocks: vec![5], advance: true }
        );
        assert!(Dist::parse("sequence:").is_err());
        assert!(Dist::parse("sequence:1,-2").is_err());
        assert!(Dist::parse("sequence:1:twice").unwrap_err().contains("'twice'"));
        assert_eq!(Dist::parse("sprandom:0.15:100").unwrap(), Dist::Sprandom { op: 0.15, regions: 100 });
        assert!(Dist::parse("sprandom:1.5:100").is_err() && Dist::parse("sprandom:0.1").is_err());
        assert_eq!(
            Band::parse("256M:2G").unwrap(),
            Band { size: 256 << 20, skip: 2 << 30, bytes: 256 << 20 }
        );
        assert_eq!(Band::parse("64k:0:128k").unwrap().bytes, 128 << 10);
        assert!(Band::parse("0:1G").is_err() && Band::parse("1G").is_err());
    }

    #[test]
    fn count_with_decimal_suffix_parses() {
        assert_eq!(parse_count("10k").unwrap(), 10_000.0);
        assert_eq!(parse_count("2.5M").unwrap(), 2_500_000.0);
        assert!(parse_count("-3").is_err());
    }
}
