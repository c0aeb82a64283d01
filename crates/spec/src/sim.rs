//! Emulated devices and links as the user names them: `sim:hdd`, `sim:ssd`, `sim:array` and `link:` presets,
//! each resolved here into every parameter, so a result's `config` carries the numbers the model ran with.
//!
//! Syntax (the model crate `iolab-sim` gives them behaviour):
//! - `sim:hdd[,PRESET][,key=value...]`, presets `7k2`, `10k` (default), `15k`;
//! - `sim:ssd[,PRESET][,key=value...]`, presets `sata`, `nvme` (default);
//! - `sim:array[,key=value...]`, default 8 x 10K RPM disks in RAID 5; `member=hdd:15k` or `member=ssd:sata`;
//! - on `sim:hdd`, `sim:ssd` and `sim:array` (and a member), `wcache=volatile|plp|none` and `wcache_size=SIZE`
//!   choose the device's write cache ([`WriteCacheParams`]);
//! - `link:PRESET[,key=value...]:TARGET` in front of any target, presets `fc1g` .. `fc64g`, `10gbe`, `25gbe`,
//!   `100gbe` (iSCSI), `fcoe10g`.
//!
//! Every preset value and where it comes from is in docs/EMULATION.md.

use serde::{Deserialize, Serialize};

/// A rotating disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HddParams {
    /// The preset the parameters started from ("10k").
    pub preset: String,
    /// Spindle speed; one revolution takes 60/rpm s, the mean rotational wait half of that.
    pub rpm: u32,
    /// Mean seek time of a random read over the full stroke (the datasheet's "average seek, read").
    pub seek_read_ns: u64,
    /// Mean seek time of a random write (longer: the head settles more precisely).
    pub seek_write_ns: u64,
    /// Track-to-track seek (the shortest non-zero seek).
    pub track_seek_ns: u64,
    /// Sustained media transfer rate, 10^6 bytes/s.
    pub media_mb_s: f64,
    /// Commands the drive holds and may reorder (SCSI TCQ / SATA NCQ depth); 1 = FIFO.
    pub queue_depth: u32,
    /// Per-command controller and protocol overhead.
    pub overhead_ns: u64,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// The drive's write cache (results recorded before it existed read back as write-through).
    #[serde(default)]
    pub wcache: WriteCacheParams,
}

/// A flash device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SsdParams {
    /// The preset the parameters started from ("nvme").
    pub preset: String,
    /// Median service time of a 4 KiB read.
    pub read_ns: u64,
    /// Median service time of a 4 KiB write.
    pub write_ns: u64,
    /// Spread of service times: sigma of a log-normal around the median (0 = fixed).
    pub sigma: f64,
    /// Internal parallelism: ops in service at once (channels x dies that answer independently).
    pub channels: u32,
    /// Read bandwidth cap, 10^6 bytes/s.
    pub read_mb_s: f64,
    /// Write bandwidth cap, 10^6 bytes/s.
    pub write_mb_s: f64,
    /// Capacity in bytes.
    pub size_bytes: u64,
    /// The drive's write cache (results recorded before it existed read back as write-through).
    #[serde(default)]
    pub wcache: WriteCacheParams,
}

/// RAID level of a `sim:array`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Raid {
    /// Striping, no redundancy.
    Raid0,
    /// Striping with rotating parity; a small write reads old data and parity, then writes both.
    Raid5,
    /// Mirrored pairs, striped.
    Raid10,
}

/// The disks of a `sim:array`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Member {
    /// Rotating disks.
    Hdd(HddParams),
    /// Flash devices.
    Ssd(SsdParams),
}

/// A disk array behind a controller.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayParams {
    /// Number of member disks.
    pub disks: u32,
    /// RAID level.
    pub raid: Raid,
    /// Stripe unit (bytes per disk per stripe).
    pub stripe_bytes: u64,
    /// The member disk model.
    pub member: Member,
    /// Controller overhead per host command.
    pub controller_ns: u64,
    /// Usable capacity in bytes.
    pub size_bytes: u64,
    /// The controller's write cache (results recorded before it existed read back as write-through).
    #[serde(default)]
    pub wcache: WriteCacheParams,
}

/// What a device's write cache does with a write before the data is on stable media.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteCache {
    /// Write-back into volatile memory (`wcache=volatile`): a write completes once it is in the cache and is
    /// lost on power failure until it has drained to the media, so a flush or a durable write waits for that.
    Volatile,
    /// Write-back into memory that survives power loss (`wcache=plp`: capacitors, a battery or flash backup):
    /// a write is stable once in the cache, so flushes and durable writes cost only a small fixed time.
    PowerProtected,
    /// No write-back (`wcache=none`): every write completes when the media has it; a flush has nothing to do.
    #[default]
    WriteThrough,
}

impl WriteCache {
    /// The value of `wcache=`: `volatile`, `plp` or `none`.
    pub fn key(self) -> &'static str {
        match self {
            WriteCache::Volatile => "volatile",
            WriteCache::PowerProtected => "plp",
            WriteCache::WriteThrough => "none",
        }
    }
}

/// A device's write cache: its kind and the figures of its timing (see docs/EMULATION.md, "Write caches").
/// `wcache=` and `wcache_size=` set the first two; the rest come with the preset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WriteCacheParams {
    /// Volatile, power-loss protected or write-through.
    pub kind: WriteCache,
    /// Dirty data the cache holds before writes wait for room, bytes.
    pub size_bytes: u64,
    /// Fixed cost of a write into the cache, after its transfer, ns.
    pub write_ns: u64,
    /// Rate at which writes enter the cache (the host interface), 10^6 bytes/s, one transfer after another.
    pub mb_s: f64,
    /// Fixed cost of a flush: all of it on a protected or write-through cache, the command's own cost after
    /// the drain on a volatile one, ns.
    pub flush_ns: u64,
    /// Fixed cost of a trim (discard), ns.
    pub trim_ns: u64,
}

impl WriteCacheParams {
    /// `kind` with the given figures.
    pub const fn new(
        kind: WriteCache,
        size_bytes: u64,
        write_ns: u64,
        mb_s: f64,
        flush_ns: u64,
        trim_ns: u64,
    ) -> WriteCacheParams {
        WriteCacheParams { kind, size_bytes, write_ns, mb_s, flush_ns, trim_ns }
    }
}

/// The write cache of `sim:fixed`: write-through (every write takes the device's latency), and a flush and a
/// trim each take `latency_ns` too, without a server, so every command of the device takes its one figure.
pub fn fixed_write_cache(latency_ns: u64) -> WriteCacheParams {
    WriteCacheParams::new(WriteCache::WriteThrough, 0, 0, 0.0, latency_ns, latency_ns)
}

/// A storage link (FC, iSCSI or FCoE over Ethernet), full duplex.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkParams {
    /// The preset ("fc4g").
    pub preset: String,
    /// Payload bandwidth per direction, 10^6 bytes/s (line rate times payload efficiency).
    pub mb_s: f64,
    /// Fixed per-command latency (protocol processing and propagation), added once per I/O.
    pub latency_ns: u64,
}

// ---------------------------------------------------------------------------------------------------------------
// Presets. Every figure and its source is listed in docs/EMULATION.md; keep the two in step.
// ---------------------------------------------------------------------------------------------------------------

/// The capacity in bytes of a drive sold as `gb` decimal gigabytes (>= 50), by the IDEMA LBA1-03 rule
/// (97,696,368 + 1,953,504 x (GB - 50) sectors of 512 bytes) that drive makers use for their LBA counts.
pub const fn idema_bytes(gb: u64) -> u64 {
    (97_696_368 + 1_953_504 * (gb - 50)) * 512
}

/// Names of the `sim:hdd` presets, in the order the help lists them.
pub const HDD_PRESETS: &[&str] = &["7k2", "10k", "15k"];
/// Names of the `sim:ssd` presets.
pub const SSD_PRESETS: &[&str] = &["sata", "nvme"];
/// Names of the `link:` presets.
pub const LINK_PRESETS: &[&str] = &[
    "fc1g", "fc2g", "fc4g", "fc8g", "fc16g", "fc32g", "fc64g", "1gbe", "10gbe", "25gbe", "100gbe", "fcoe10g",
];

const HDD_KEYS: &str =
    "rpm, seek_read, seek_write, track_seek, media, queue_depth (or ncq, tcq), overhead, size, \
                        wcache, wcache_size";
const SSD_KEYS: &str = "read, write, sigma, channels, read_bw, write_bw, size, wcache, wcache_size";
const ARRAY_KEYS: &str = "disks, raid, stripe, member, controller, size, wcache, wcache_size";
const LINK_KEYS: &str = "mb_s, bw, latency";

// Write caches (our assumptions; docs/EMULATION.md "Write caches" gives the reasoning).

const MIB: u64 = 1 << 20;

/// `sim:hdd`: the drive's volatile write cache, on as drives ship: 64 MiB of dirty data (the buffer of a
/// current enterprise drive), 200 us to take a write (the presets' command overhead) after its transfer at
/// 550 MB/s (SAS or SATA at 6 Gb/s), 200 us for a flush command and for a trim (which no disk needs: it is
/// answered as a no-op).
pub const HDD_WRITE_CACHE: WriteCacheParams =
    WriteCacheParams::new(WriteCache::Volatile, 64 * MIB, 200_000, 550.0, 200_000, 200_000);

/// `sim:ssd,sata`: volatile. The preset stands for a SATA SSD without power-loss protection (consumer and
/// most client drives), whose DRAM buffer loses what it holds on power failure; the timing figures come from
/// the DC S3700, which does have protection: `wcache=plp` gives that drive as sold. 256 MiB of dirty data,
/// 20 us per write after its transfer at 550 MB/s (SATA 6 Gb/s), 20 us for the flush command, 100 us per
/// trim (DSM TRIM is not queued on most SATA drives).
pub const SATA_WRITE_CACHE: WriteCacheParams =
    WriteCacheParams::new(WriteCache::Volatile, 256 * MIB, 20_000, 550.0, 20_000, 100_000);

/// `sim:ssd,nvme`: power-loss protected, as enterprise NVMe drives (the P3700 among them) are: capacitors
/// hold up the drive while its DRAM is written to flash. 256 MiB, 10 us per write after its transfer at
/// 3,200 MB/s (PCIe 3.0 x4), 5 us per flush, 20 us per trim (Dataset Management deallocate).
pub const NVME_WRITE_CACHE: WriteCacheParams =
    WriteCacheParams::new(WriteCache::PowerProtected, 256 * MIB, 10_000, 3200.0, 5_000, 20_000);

/// `sim:array`: the controller's mirrored, battery-backed cache (power-loss protected), as mid-range arrays
/// have: 1 GiB of dirty data, 100 us per write (the controller's 50 us plus the copy to its partner's
/// mirror) after its transfer at 2,000 MB/s, 20 us per flush, 50 us per trim.
pub const ARRAY_WRITE_CACHE: WriteCacheParams =
    WriteCacheParams::new(WriteCache::PowerProtected, 1024 * MIB, 100_000, 2000.0, 20_000, 50_000);

/// The preset `name` of `sim:hdd` (`7k2`, `10k`, `15k`), None for an unknown name.
///
/// - `7k2`: Seagate Constellation.2 SAS 1 TB (ST91000640SS) product manual: average seek 7.5 / 8.5 ms
///   (read / write, without controller overhead), single track 0.23 ms, controller overhead 0.2 ms (the
///   difference between the manual's "including" and "not including controller overhead" columns), internal
///   data rate 84-163 MB/s (we use the midpoint, 123.5).
/// - `10k`: Seagate Savvio 10K.4 SAS 600 GB (ST9600204SS) product manual: average seek 3.8 / 4.4 ms, single
///   track 0.30 ms, overhead 0.2 ms, 677,557 bytes per track (average) x 166.7 rev/s = 113 MB/s.
/// - `15k`: Seagate Cheetah 15K.7 SAS 600 GB (ST3600057SS): average seek 3.4 / 3.9 ms, single track 0.2 ms,
///   sustained transfer 122-204 MB/s (midpoint 163); overhead 0.2 ms as for the other Seagate SAS drives.
///
/// All three hold 64 commands for reordering (our assumption for SAS tagged queueing), and all three have
/// [`HDD_WRITE_CACHE`] on: drives ship with their volatile write cache enabled.
pub fn hdd_preset(name: &str) -> Option<HddParams> {
    let (rpm, seek_read_ms, seek_write_ms, track_ms, media_mb_s, gb) = match name {
        "7k2" => (7200, 7.5, 8.5, 0.23, 123.5, 1000),
        "10k" => (10_000, 3.8, 4.4, 0.30, 113.0, 600),
        "15k" => (15_000, 3.4, 3.9, 0.20, 163.0, 600),
        _ => return None,
    };
    let ms = |v: f64| (v * 1e6).round() as u64;
    Some(HddParams {
        preset: name.to_string(),
        rpm,
        seek_read_ns: ms(seek_read_ms),
        seek_write_ns: ms(seek_write_ms),
        track_seek_ns: ms(track_ms),
        media_mb_s,
        queue_depth: 64,
        overhead_ns: 200_000,
        size_bytes: idema_bytes(gb),
        wcache: HDD_WRITE_CACHE,
    })
}

/// The preset `name` of `sim:ssd` (`sata`, `nvme`), None for an unknown name.
///
/// - `sata`: Intel SSD DC S3700 800 GB data sheet: latency 50 us read / 65 us write, 75,000 / 36,000 random
///   4 KiB IOPS, 500 / 460 MB/s sequential. 4 channels give 4 / (50 us x e^(0.3^2/2)) = 76,500 read IOPS.
/// - `nvme`: Intel SSD DC P3700 1.6 TB data sheet: latency 20 us read / 20 us write, 450,000 random 4 KiB read
///   IOPS, 2,800 / 1,900 MB/s sequential. 9 channels give 430,000 read IOPS.
///
/// The spread sigma = 0.3 is our assumption (data sheets give no distribution). Write caches:
/// [`SATA_WRITE_CACHE`] (volatile) and [`NVME_WRITE_CACHE`] (power-loss protected).
pub fn ssd_preset(name: &str) -> Option<SsdParams> {
    let (read_ns, write_ns, channels, read_mb_s, write_mb_s, gb, wcache) = match name {
        "sata" => (50_000, 65_000, 4, 500.0, 460.0, 800, SATA_WRITE_CACHE),
        "nvme" => (20_000, 20_000, 9, 2800.0, 1900.0, 1600, NVME_WRITE_CACHE),
        _ => return None,
    };
    Some(SsdParams {
        preset: name.to_string(),
        read_ns,
        write_ns,
        sigma: 0.3,
        channels,
        read_mb_s,
        write_mb_s,
        size_bytes: idema_bytes(gb),
        wcache,
    })
}

/// Payload efficiency of iSCSI over Ethernet with a 1500-byte MTU: 1448 bytes of TCP payload (1500 minus
/// 20 IP, 20 TCP and 12 TCP timestamp option) per 1538 bytes on the wire (plus 14 Ethernet header, 4 FCS,
/// 8 preamble and start delimiter, 12 inter-frame gap), times 8192 / (8192 + 48) for the 48-byte iSCSI basic
/// header segment per PDU of 8 KiB data (RFC 7143's default MaxRecvDataSegmentLength): 0.93600.
pub const ISCSI_EFFICIENCY: f64 = (1448.0 / 1538.0) * (8192.0 / 8240.0);

/// Payload efficiency of FCoE: a full 2112-byte FC payload in a 2180-byte baby-jumbo frame (14 Ethernet
/// header + 4 802.1Q tag + 14 FCoE header + 24 FC header + 2112 + 4 FC CRC + 4 FCoE trailer + 4 FCS), plus
/// 8 preamble and 12 inter-frame gap = 2200 bytes on the wire. = 0.96.
pub const FCOE_EFFICIENCY: f64 = 2112.0 / 2200.0;

/// The preset `name` of `link:`, None for an unknown name. Fibre Channel rates are the FCIA's stated payload
/// throughput per direction; Ethernet rates are the line rate times [`ISCSI_EFFICIENCY`] or
/// [`FCOE_EFFICIENCY`]. Latencies are our assumptions: 5 us per command for an FC or FCoE HBA and one switch,
/// 30 us for a software iSCSI initiator and target.
pub fn link_preset(name: &str) -> Option<LinkParams> {
    let round1 = |v: f64| (v * 10.0).round() / 10.0;
    let (mb_s, latency_ns) = match name {
        "fc1g" => (100.0, 5_000),
        "fc2g" => (200.0, 5_000),
        "fc4g" => (400.0, 5_000),
        "fc8g" => (800.0, 5_000),
        "fc16g" => (1600.0, 5_000),
        "fc32g" => (3200.0, 5_000),
        "fc64g" => (6400.0, 5_000),
        "1gbe" => (round1(125.0 * ISCSI_EFFICIENCY), 30_000),
        "10gbe" => (round1(1250.0 * ISCSI_EFFICIENCY), 30_000),
        "25gbe" => (round1(3125.0 * ISCSI_EFFICIENCY), 30_000),
        "100gbe" => (round1(12_500.0 * ISCSI_EFFICIENCY), 30_000),
        "fcoe10g" => (round1(1250.0 * FCOE_EFFICIENCY), 5_000),
        _ => return None,
    };
    Some(LinkParams { preset: name.to_string(), mb_s, latency_ns })
}

/// The `sim:array` default: 8 x `hdd:10k` in RAID 5 with a 64 KiB stripe unit and 50 us of controller
/// overhead per host command (our assumptions, typical of the seeds' mid-range arrays), all of the members'
/// capacity usable, and a battery-backed controller cache ([`ARRAY_WRITE_CACHE`]). Members run write-through
/// ([`Member::as_member`]).
pub fn default_array() -> ArrayParams {
    let member = Member::Hdd(hdd_preset("10k").expect("preset")).as_member();
    let mut a = ArrayParams {
        disks: 8,
        raid: Raid::Raid5,
        stripe_bytes: 64 << 10,
        member,
        controller_ns: 50_000,
        size_bytes: 0,
        wcache: ARRAY_WRITE_CACHE,
    };
    a.size_bytes = a.max_size_bytes();
    a
}

impl Member {
    /// This disk as an array member: its write cache turned to write-through (arrays disable their members'
    /// volatile caches and cache in the controller), its other cache figures kept for `wcache=` to turn on.
    pub fn as_member(mut self) -> Member {
        match &mut self {
            Member::Hdd(p) => p.wcache.kind = WriteCache::WriteThrough,
            Member::Ssd(p) => p.wcache.kind = WriteCache::WriteThrough,
        }
        self
    }

    /// Capacity of one member in bytes.
    pub fn size_bytes(&self) -> u64 {
        match self {
            Member::Hdd(p) => p.size_bytes,
            Member::Ssd(p) => p.size_bytes,
        }
    }

    /// The canonical text of `member=`: `hdd:15k` plus `:key=value` for what differs from the preset as a
    /// member (write-through).
    pub fn display(&self) -> String {
        match self {
            Member::Hdd(p) => {
                let mut s = format!("hdd:{}", p.preset);
                for kv in hdd_diff(p, true) {
                    s.push(':');
                    s.push_str(&kv);
                }
                s
            }
            Member::Ssd(p) => {
                let mut s = format!("ssd:{}", p.preset);
                for kv in ssd_diff(p, true) {
                    s.push(':');
                    s.push_str(&kv);
                }
                s
            }
        }
    }
}

impl Raid {
    /// The number after `raid=`.
    pub fn number(self) -> u32 {
        match self {
            Raid::Raid0 => 0,
            Raid::Raid5 => 5,
            Raid::Raid10 => 10,
        }
    }
}

impl ArrayParams {
    /// Member disks that hold data in each stripe row: all for RAID 0, all but the parity disk for RAID 5,
    /// half (one per mirrored pair) for RAID 10.
    pub fn data_disks(&self) -> u32 {
        match self.raid {
            Raid::Raid0 => self.disks,
            Raid::Raid5 => self.disks.saturating_sub(1),
            Raid::Raid10 => self.disks / 2,
        }
    }

    /// The usable capacity when the whole of every member is used (whole stripe units only).
    pub fn max_size_bytes(&self) -> u64 {
        let rows = self.member.size_bytes() / self.stripe_bytes.max(1);
        rows * self.stripe_bytes * self.data_disks() as u64
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Value parsers: each returns Err(what was expected, quoting the item).
// ---------------------------------------------------------------------------------------------------------------

fn kv<'a>(item: &'a str, what: &str, keys: &str) -> Result<(&'a str, &'a str), String> {
    item.split_once('=')
        .map(|(k, v)| (k.trim(), v.trim()))
        .ok_or_else(|| format!("'key=value' after '{what}' (keys: {keys}), found '{item}'"))
}

fn dur(key: &str, v: &str, min_ns: u64, max_ns: u64) -> Result<u64, String> {
    let ns = crate::units::parse_duration_ns(v)
        .map_err(|e| format!("{key}=DURATION where DURATION is {e}, found '{v}'"))?;
    if ns < min_ns || ns > max_ns {
        return Err(format!(
            "{key}=DURATION from {} to {}, found '{v}'",
            crate::units::format_duration(min_ns),
            crate::units::format_duration(max_ns)
        ));
    }
    Ok(ns)
}

fn int(key: &str, v: &str, min: u64, max: u64) -> Result<u64, String> {
    v.parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{key}=N with N a whole number from {min} to {max}, found '{v}'"))
}

fn float(key: &str, v: &str, min: f64, max: f64) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= min && *x <= max)
        .ok_or_else(|| format!("{key}=X with X a number from {min} to {max}, found '{v}'"))
}

/// A rate in 10^6 bytes/s: a bare number is MB/s (`400`, `112.5`); a size with an optional `/s` is bytes per
/// second in binary units (`400M`, `400M/s`).
fn rate(key: &str, v: &str, min: f64, max: f64) -> Result<f64, String> {
    let t = v.trim().trim_end_matches("/s");
    let mb_s = if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        t.parse::<f64>().ok()
    } else {
        crate::units::parse_size(t).ok().map(|b| b as f64 / 1e6)
    };
    mb_s.filter(|x| x.is_finite() && *x >= min && *x <= max).ok_or_else(|| {
        format!(
            "{key}=RATE with RATE in MB/s (10^6 bytes/s, e.g. '400') or a size per second (e.g. '400M/s'), \
             from {min} to {max} MB/s, found '{v}'"
        )
    })
}

const MIN_DEVICE: u64 = 1 << 20;
const MAX_DEVICE: u64 = 1 << 50;

fn device_size(key: &str, v: &str) -> Result<u64, String> {
    let n = crate::units::parse_size(v).map_err(|e| format!("{key}=SIZE where SIZE is {e}, found '{v}'"))?;
    if n % 512 != 0 || !(MIN_DEVICE..=MAX_DEVICE).contains(&n) {
        return Err(format!("{key}=SIZE with SIZE a multiple of 512 bytes from 1M to 1024T, found '{v}'"));
    }
    Ok(n)
}

/// The value of `wcache=`.
fn wcache_kind(v: &str, what: &str) -> Result<WriteCache, String> {
    match v {
        "volatile" => Ok(WriteCache::Volatile),
        "plp" => Ok(WriteCache::PowerProtected),
        "none" => Ok(WriteCache::WriteThrough),
        _ => Err(format!(
            "wcache=volatile, wcache=plp (power-loss protected) or wcache=none (write-through) in '{what}', \
             found 'wcache={v}'"
        )),
    }
}

/// The value of `wcache_size=`: a multiple of 4 KiB from 64K to 1T.
fn wcache_size(v: &str, what: &str) -> Result<u64, String> {
    crate::units::parse_size(v)
        .ok()
        .filter(|n| n % 4096 == 0 && ((64 << 10)..=(1 << 40)).contains(n))
        .ok_or_else(|| {
            format!(
                "wcache_size=SIZE with SIZE a multiple of 4K from 64K to 1T in '{what}', \
                 found 'wcache_size={v}'"
            )
        })
}

/// `wcache=` and `wcache_size=` where they differ from `base`.
fn wcache_diff(c: &WriteCacheParams, base: &WriteCacheParams, out: &mut Vec<String>) {
    if c.kind != base.kind {
        out.push(format!("wcache={}", c.kind.key()));
    }
    if c.size_bytes != base.size_bytes {
        out.push(format!("wcache_size={}", crate::units::format_size(c.size_bytes)));
    }
}

fn fmt_f64(x: f64) -> String {
    format!("{x}")
}

// ---------------------------------------------------------------------------------------------------------------
// sim:hdd
// ---------------------------------------------------------------------------------------------------------------

/// Parses the items after `sim:hdd` (a preset name, then `key=value`s). `Err` says what was expected.
pub fn parse_hdd<'a>(items: impl Iterator<Item = &'a str>) -> Result<HddParams, String> {
    parse_hdd_in(items, "sim:hdd", false)
}

/// The preset (a member's runs write-through), then the keys.
fn parse_hdd_in<'a>(
    items: impl Iterator<Item = &'a str>,
    what: &str,
    member: bool,
) -> Result<HddParams, String> {
    let mut items = items.map(str::trim).filter(|s| !s.is_empty()).peekable();
    let mut p = hdd_preset("10k").expect("preset");
    if let Some(first) = items.peek().copied() {
        if !first.contains('=') {
            p = hdd_preset(first).ok_or_else(|| {
                format!(
                    "a preset ({}) or key=value (keys: {HDD_KEYS}) after '{what}', found '{first}'",
                    HDD_PRESETS.join(", ")
                )
            })?;
            items.next();
        }
    }
    if member {
        p.wcache.kind = WriteCache::WriteThrough;
    }
    for item in items {
        let (k, v) = kv(item, what, HDD_KEYS)?;
        match k {
            "rpm" => p.rpm = int(k, v, 3600, 20_000)? as u32,
            "seek_read" => p.seek_read_ns = dur(k, v, 1_000, 100_000_000)?,
            "seek_write" => p.seek_write_ns = dur(k, v, 1_000, 100_000_000)?,
            "track_seek" => p.track_seek_ns = dur(k, v, 1_000, 100_000_000)?,
            "media" | "media_mb_s" => p.media_mb_s = rate(k, v, 1.0, 10_000.0)?,
            "queue_depth" | "ncq" | "tcq" => p.queue_depth = int(k, v, 1, 256)? as u32,
            "overhead" => p.overhead_ns = dur(k, v, 0, 100_000_000)?,
            "size" => p.size_bytes = device_size(k, v)?,
            "wcache" => p.wcache.kind = wcache_kind(v, what)?,
            "wcache_size" => p.wcache.size_bytes = wcache_size(v, what)?,
            other => {
                return Err(format!("one of the keys {HDD_KEYS} in '{what}', found '{other}' in '{item}'"))
            }
        }
    }
    if p.track_seek_ns > p.seek_read_ns || p.track_seek_ns > p.seek_write_ns {
        return Err(format!(
            "track_seek at most seek_read and seek_write in '{what}', found track_seek={} with seek_read={} and \
             seek_write={}",
            crate::units::format_duration(p.track_seek_ns),
            crate::units::format_duration(p.seek_read_ns),
            crate::units::format_duration(p.seek_write_ns)
        ));
    }
    Ok(p)
}

/// What differs from the preset (from the preset as a member, write-through, when `member`).
fn hdd_diff(p: &HddParams, member: bool) -> Vec<String> {
    let mut base = hdd_preset(&p.preset).unwrap_or_else(|| hdd_preset("10k").expect("preset"));
    if member {
        base.wcache.kind = WriteCache::WriteThrough;
    }
    let d = crate::units::format_duration;
    let mut out = Vec::new();
    if p.rpm != base.rpm {
        out.push(format!("rpm={}", p.rpm));
    }
    if p.seek_read_ns != base.seek_read_ns {
        out.push(format!("seek_read={}", d(p.seek_read_ns)));
    }
    if p.seek_write_ns != base.seek_write_ns {
        out.push(format!("seek_write={}", d(p.seek_write_ns)));
    }
    if p.track_seek_ns != base.track_seek_ns {
        out.push(format!("track_seek={}", d(p.track_seek_ns)));
    }
    if p.media_mb_s != base.media_mb_s {
        out.push(format!("media={}", fmt_f64(p.media_mb_s)));
    }
    if p.queue_depth != base.queue_depth {
        out.push(format!("queue_depth={}", p.queue_depth));
    }
    if p.overhead_ns != base.overhead_ns {
        out.push(format!("overhead={}", d(p.overhead_ns)));
    }
    if p.size_bytes != base.size_bytes {
        out.push(format!("size={}", crate::units::format_size(p.size_bytes)));
    }
    wcache_diff(&p.wcache, &base.wcache, &mut out);
    out
}

// ---------------------------------------------------------------------------------------------------------------
// sim:ssd
// ---------------------------------------------------------------------------------------------------------------

/// Parses the items after `sim:ssd`.
pub fn parse_ssd<'a>(items: impl Iterator<Item = &'a str>) -> Result<SsdParams, String> {
    parse_ssd_in(items, "sim:ssd", false)
}

/// The preset (a member's runs write-through), then the keys.
fn parse_ssd_in<'a>(
    items: impl Iterator<Item = &'a str>,
    what: &str,
    member: bool,
) -> Result<SsdParams, String> {
    let mut items = items.map(str::trim).filter(|s| !s.is_empty()).peekable();
    let mut p = ssd_preset("nvme").expect("preset");
    if let Some(first) = items.peek().copied() {
        if !first.contains('=') {
            p = ssd_preset(first).ok_or_else(|| {
                format!(
                    "a preset ({}) or key=value (keys: {SSD_KEYS}) after '{what}', found '{first}'",
                    SSD_PRESETS.join(", ")
                )
            })?;
            items.next();
        }
    }
    if member {
        p.wcache.kind = WriteCache::WriteThrough;
    }
    for item in items {
        let (k, v) = kv(item, what, SSD_KEYS)?;
        match k {
            "read" => p.read_ns = dur(k, v, 100, 1_000_000_000)?,
            "write" => p.write_ns = dur(k, v, 100, 1_000_000_000)?,
            "sigma" => p.sigma = float(k, v, 0.0, 2.0)?,
            "channels" => p.channels = int(k, v, 1, 4096)? as u32,
            "read_bw" | "read_mb_s" => p.read_mb_s = rate(k, v, 1.0, 100_000.0)?,
            "write_bw" | "write_mb_s" => p.write_mb_s = rate(k, v, 1.0, 100_000.0)?,
            "size" => p.size_bytes = device_size(k, v)?,
            "wcache" => p.wcache.kind = wcache_kind(v, what)?,
            "wcache_size" => p.wcache.size_bytes = wcache_size(v, what)?,
            other => {
                return Err(format!("one of the keys {SSD_KEYS} in '{what}', found '{other}' in '{item}'"))
            }
        }
    }
    Ok(p)
}

/// What differs from the preset (from the preset as a member, write-through, when `member`).
fn ssd_diff(p: &SsdParams, member: bool) -> Vec<String> {
    let mut base = ssd_preset(&p.preset).unwrap_or_else(|| ssd_preset("nvme").expect("preset"));
    if member {
        base.wcache.kind = WriteCache::WriteThrough;
    }
    let d = crate::units::format_duration;
    let mut out = Vec::new();
    if p.read_ns != base.read_ns {
        out.push(format!("read={}", d(p.read_ns)));
    }
    if p.write_ns != base.write_ns {
        out.push(format!("write={}", d(p.write_ns)));
    }
    if p.sigma != base.sigma {
        out.push(format!("sigma={}", fmt_f64(p.sigma)));
    }
    if p.channels != base.channels {
        out.push(format!("channels={}", p.channels));
    }
    if p.read_mb_s != base.read_mb_s {
        out.push(format!("read_bw={}", fmt_f64(p.read_mb_s)));
    }
    if p.write_mb_s != base.write_mb_s {
        out.push(format!("write_bw={}", fmt_f64(p.write_mb_s)));
    }
    if p.size_bytes != base.size_bytes {
        out.push(format!("size={}", crate::units::format_size(p.size_bytes)));
    }
    wcache_diff(&p.wcache, &base.wcache, &mut out);
    out
}

// ---------------------------------------------------------------------------------------------------------------
// sim:array
// ---------------------------------------------------------------------------------------------------------------

fn parse_member(v: &str) -> Result<Member, String> {
    let mut parts = v.split(':');
    let kind = parts.next().unwrap_or("").trim();
    match kind {
        "hdd" => parse_hdd_in(parts, "member=hdd", true).map(Member::Hdd),
        "ssd" => parse_ssd_in(parts, "member=ssd", true).map(Member::Ssd),
        _ => Err(format!(
            "member=MODEL[:PRESET][:key=value...] with MODEL 'hdd' (presets {}) or 'ssd' (presets {}), \
             e.g. 'member=hdd:15k', found 'member={v}'",
            HDD_PRESETS.join(", "),
            SSD_PRESETS.join(", ")
        )),
    }
}

/// Parses the items after `sim:array`.
pub fn parse_array<'a>(items: impl Iterator<Item = &'a str>) -> Result<ArrayParams, String> {
    let mut a = default_array();
    let mut size = None;
    for item in items.map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = kv(item, "sim:array", ARRAY_KEYS)?;
        match k {
            "disks" => a.disks = int(k, v, 1, 256)? as u32,
            "raid" => {
                a.raid = match v.trim_start_matches("raid") {
                    "0" => Raid::Raid0,
                    "5" => Raid::Raid5,
                    "10" | "1+0" => Raid::Raid10,
                    _ => return Err(format!("raid=0, raid=5 or raid=10 in 'sim:array', found 'raid={v}'")),
                }
            }
            "stripe" => {
                let n = crate::units::parse_size(v)
                    .map_err(|e| format!("stripe=SIZE where SIZE is {e}, found '{v}'"))?;
                if n % 512 != 0 || !(512..=(16 << 20)).contains(&n) {
                    return Err(format!(
                        "stripe=SIZE with SIZE a multiple of 512 bytes from 512 to 16M, found 'stripe={v}'"
                    ));
                }
                a.stripe_bytes = n;
            }
            "member" => a.member = parse_member(v)?,
            "controller" => a.controller_ns = dur(k, v, 0, 100_000_000)?,
            "size" => size = Some((device_size(k, v)?, v)),
            "wcache" => a.wcache.kind = wcache_kind(v, "sim:array")?,
            "wcache_size" => a.wcache.size_bytes = wcache_size(v, "sim:array")?,
            other => {
                return Err(format!(
                    "one of the keys {ARRAY_KEYS} in 'sim:array', found '{other}' in '{item}'"
                ))
            }
        }
    }
    match a.raid {
        Raid::Raid5 if a.disks < 3 => {
            return Err(format!(
                "disks=N with N at least 3 for raid=5 in 'sim:array', found disks={}",
                a.disks
            ))
        }
        Raid::Raid10 if a.disks < 2 || a.disks % 2 != 0 => {
            return Err(format!(
                "disks=N with N even and at least 2 for raid=10 in 'sim:array', found disks={}",
                a.disks
            ))
        }
        _ => {}
    }
    if a.stripe_bytes > a.member.size_bytes() {
        return Err(format!(
            "a stripe unit no larger than a member disk in 'sim:array', found stripe={} with members of {}",
            crate::units::format_size(a.stripe_bytes),
            crate::units::format_size(a.member.size_bytes())
        ));
    }
    let max = a.max_size_bytes();
    a.size_bytes = match size {
        None => max,
        Some((n, _)) if n <= max => n,
        Some((_, v)) => {
            return Err(format!(
                "size=SIZE at most the array's usable capacity {} ({} bytes: {} data disks of {}), found 'size={v}'",
                crate::units::format_size(max),
                max,
                a.data_disks(),
                crate::units::format_size(a.member.size_bytes())
            ))
        }
    };
    Ok(a)
}

fn array_diff(a: &ArrayParams) -> Vec<String> {
    let base = default_array();
    let mut out = Vec::new();
    if a.disks != base.disks {
        out.push(format!("disks={}", a.disks));
    }
    if a.raid != base.raid {
        out.push(format!("raid={}", a.raid.number()));
    }
    if a.stripe_bytes != base.stripe_bytes {
        out.push(format!("stripe={}", crate::units::format_size(a.stripe_bytes)));
    }
    if a.member != base.member {
        out.push(format!("member={}", a.member.display()));
    }
    if a.controller_ns != base.controller_ns {
        out.push(format!("controller={}", crate::units::format_duration(a.controller_ns)));
    }
    if a.size_bytes != a.max_size_bytes() {
        out.push(format!("size={}", crate::units::format_size(a.size_bytes)));
    }
    wcache_diff(&a.wcache, &base.wcache, &mut out);
    out
}

// ---------------------------------------------------------------------------------------------------------------
// link:
// ---------------------------------------------------------------------------------------------------------------

/// Parses `PRESET[,key=value...]:TARGET` (the text after `link:`): the link and the inner target's text.
pub fn parse_link(rest: &str) -> Result<(LinkParams, &str), String> {
    let (head, inner) = rest.split_once(':').ok_or_else(|| {
        format!(
            "'link:PRESET[,key=value...]:TARGET' (presets {}), e.g. 'link:fc4g:sim:array', found 'link:{rest}'",
            LINK_PRESETS.join(", ")
        )
    })?;
    let mut items = head.split(',').map(str::trim);
    let name = items.next().unwrap_or("");
    let mut p = link_preset(name).ok_or_else(|| {
        format!("a link preset ({}) after 'link:', found '{name}'", LINK_PRESETS.join(", "))
    })?;
    for item in items.filter(|s| !s.is_empty()) {
        let (k, v) = kv(item, "link:PRESET", LINK_KEYS)?;
        match k {
            "mb_s" | "bw" => p.mb_s = rate(k, v, 0.001, 1_000_000.0)?,
            "latency" | "lat" => p.latency_ns = dur(k, v, 0, 1_000_000_000)?,
            other => {
                return Err(format!(
                    "one of the keys {LINK_KEYS} in 'link:{head}', found '{other}' in '{item}'"
                ))
            }
        }
    }
    if inner.trim().is_empty() {
        return Err(format!("a target after 'link:{head}:', e.g. 'link:{head}:sim:array'"));
    }
    Ok((p, inner))
}

/// `base` followed by `,key=value` for each setting in `diff`.
fn with_diff(base: String, diff: Vec<String>) -> String {
    diff.into_iter().fold(base, |s, kv| s + "," + &kv)
}

impl HddParams {
    /// The canonical name: `sim:hdd,10k,size=600G` style, listing only what differs from the preset.
    pub fn display_name(&self) -> String {
        with_diff(format!("sim:hdd,{}", self.preset), hdd_diff(self, false))
    }
}

impl SsdParams {
    /// The canonical name: `sim:ssd,nvme,...`, listing only what differs from the preset.
    pub fn display_name(&self) -> String {
        with_diff(format!("sim:ssd,{}", self.preset), ssd_diff(self, false))
    }
}

impl ArrayParams {
    /// The canonical name: `sim:array,...`, listing only what differs from the default array.
    pub fn display_name(&self) -> String {
        with_diff("sim:array".to_string(), array_diff(self))
    }
}

impl LinkParams {
    /// The canonical prefix of a link: `link:fc4g`, with `,key=value` for what differs from the preset (the
    /// target behind it follows after a `:`).
    pub fn display_prefix(&self) -> String {
        let mut s = format!("link:{}", self.preset);
        if let Some(base) = link_preset(&self.preset) {
            if self.mb_s != base.mb_s {
                s.push_str(&format!(",mb_s={}", fmt_f64(self.mb_s)));
            }
            if self.latency_ns != base.latency_ns {
                s.push_str(&format!(",latency={}", crate::units::format_duration(self.latency_ns)));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{SimSpec, TargetSpec};

    fn sim(s: &str) -> SimSpec {
        match TargetSpec::parse(s) {
            Ok(TargetSpec::Sim(x)) => x,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn hdd_defaults_to_10k_and_presets_differ() {
        let d = sim("sim:hdd");
        assert_eq!(d, SimSpec::Hdd(hdd_preset("10k").unwrap()));
        assert_eq!(d.size_bytes(), 600_127_266_816);
        let p = match sim("sim:hdd,15k,queue_depth=1,seek_read=3ms") {
            SimSpec::Hdd(p) => p,
            _ => unreachable!(),
        };
        assert_eq!((p.rpm, p.queue_depth, p.seek_read_ns), (15_000, 1, 3_000_000));
        assert_eq!(sim("sim:hdd,ncq=8"), sim("sim:hdd,10k,tcq=8"));
    }

    #[test]
    fn idema_sizes_match_the_lba_counts() {
        assert_eq!(idema_bytes(600) / 512, 1_172_123_568);
        assert_eq!(idema_bytes(1000) / 512, 1_953_525_168);
        assert_eq!(idema_bytes(800) / 512, 1_562_824_368);
    }

    #[test]
    fn every_spelling_round_trips_through_display() {
        for s in [
            "sim:hdd",
            "sim:hdd,7k2",
            "sim:hdd,15k,rpm=10000,seek_read=4ms,seek_write=5ms,track_seek=500us,media=150.5,ncq=32,overhead=0,size=64G",
            "sim:ssd",
            "sim:ssd,sata,read=80us,write=1.5ms,sigma=0,channels=8,read_bw=550,write_bw=400M/s,size=100G",
            "sim:array",
            "sim:array,disks=24,raid=10,stripe=128K,member=hdd:15k:ncq=16,controller=0,size=200G",
            "sim:array,raid=0,member=ssd:sata:size=64G",
            "sim:array,disks=4,member=ssd",
        ] {
            let a = TargetSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            let name = a.display_name();
            let b = TargetSpec::parse(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(a, b, "{s} -> {name}");
        }
        assert_eq!(TargetSpec::parse("sim:hdd").unwrap().display_name(), "sim:hdd,10k");
        assert_eq!(TargetSpec::parse("sim:array").unwrap().display_name(), "sim:array");
        assert_eq!(
            TargetSpec::parse("sim:array,member=hdd:15k,raid=10").unwrap().display_name(),
            "sim:array,raid=10,member=hdd:15k"
        );
    }

    #[test]
    fn write_caches_follow_the_preset_and_the_keys() {
        let kind = |s: &str| match sim(s) {
            SimSpec::Hdd(p) => p.wcache.kind,
            SimSpec::Ssd(p) => p.wcache.kind,
            SimSpec::Array(a) => a.wcache.kind,
            SimSpec::Fixed { .. } => unreachable!(),
        };
        assert_eq!(kind("sim:hdd"), WriteCache::Volatile);
        assert_eq!(kind("sim:ssd,sata"), WriteCache::Volatile);
        assert_eq!(kind("sim:ssd"), WriteCache::PowerProtected);
        assert_eq!(kind("sim:array"), WriteCache::PowerProtected);
        assert_eq!(kind("sim:ssd,sata,wcache=plp"), WriteCache::PowerProtected);
        assert_eq!(kind("sim:hdd,wcache=none"), WriteCache::WriteThrough);
        assert_eq!(kind("sim:array,wcache=volatile"), WriteCache::Volatile);
        match sim("sim:array,member=hdd:15k") {
            SimSpec::Array(a) => match a.member {
                Member::Hdd(h) => {
                    assert_eq!(h.wcache.kind, WriteCache::WriteThrough, "members run write-through")
                }
                _ => unreachable!(),
            },
            _ => unreachable!(),
        }
        match sim("sim:ssd,sata,wcache_size=1G") {
            SimSpec::Ssd(p) => assert_eq!(p.wcache.size_bytes, 1 << 30),
            _ => unreachable!(),
        }
        for s in [
            "sim:ssd,sata,wcache=plp,wcache_size=64M",
            "sim:hdd,7k2,wcache=none",
            "sim:array,wcache=none,member=hdd:10k:wcache=volatile:wcache_size=16M",
            "sim:array,member=ssd:sata:wcache=volatile",
        ] {
            let a = TargetSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            let name = a.display_name();
            assert_eq!(TargetSpec::parse(&name).unwrap(), a, "{s} -> {name}");
        }
        assert_eq!(TargetSpec::parse("sim:ssd,sata,wcache=volatile").unwrap().display_name(), "sim:ssd,sata");
        assert_eq!(
            TargetSpec::parse("sim:array,member=ssd:sata:wcache=volatile").unwrap().display_name(),
            "sim:array,member=ssd:sata:wcache=volatile"
        );
        let e = TargetSpec::parse("sim:ssd,sata,wcache=on").unwrap_err();
        assert!(e.contains("'wcache=on'") && e.contains("plp") && e.contains("'sim:ssd'"), "{e}");
        let e = TargetSpec::parse("sim:hdd,wcache_size=1k").unwrap_err();
        assert!(e.contains("'wcache_size=1k'"), "{e}");
        let e = TargetSpec::parse("sim:array,member=hdd:wcache=yes").unwrap_err();
        assert!(e.contains("'wcache=yes'") && e.contains("member=hdd"), "{e}");
    }

    #[test]
    fn results_without_a_write_cache_read_back_as_write_through() {
        let mut v = toml::Value::try_from(hdd_preset("10k").unwrap()).unwrap();
        v.as_table_mut().unwrap().remove("wcache").expect("serialized");
        let p: HddParams = v.try_into().unwrap();
        assert_eq!(p.wcache.kind, WriteCache::WriteThrough);
    }

    #[test]
    fn link_presets_and_overrides_round_trip() {
        let t = TargetSpec::parse("link:fc4g:sim:array").unwrap();
        match &t {
            TargetSpec::Link { link, target } => {
                assert_eq!(link.mb_s, 400.0);
                assert_eq!(**target, TargetSpec::Sim(SimSpec::Array(default_array())));
            }
            _ => panic!(),
        }
        assert_eq!(t.display_name(), "link:fc4g:sim:array");
        let t = TargetSpec::parse("link:10gbe,latency=50us,bw=1000M/s:sim:hdd,15k").unwrap();
        let name = t.display_name();
        assert_eq!(TargetSpec::parse(&name).unwrap(), t);
        assert_eq!(link_preset("10gbe").unwrap().mb_s, 1170.0);
        assert_eq!(link_preset("fcoe10g").unwrap().mb_s, 1200.0);
        assert!(TargetSpec::parse("link:fc4g,mb_s=380:mem:1G").is_ok());
    }

    #[test]
    fn errors_quote_the_item_and_list_the_choices() {
        let e = TargetSpec::parse("sim:hdd,5k4").unwrap_err();
        assert!(e.contains("'5k4'") && e.contains("7k2, 10k, 15k"), "{e}");
        let e = TargetSpec::parse("sim:hdd,rpm=0").unwrap_err();
        assert!(e.contains("'0'") && e.contains("3600"), "{e}");
        let e = TargetSpec::parse("sim:hdd,speed=1").unwrap_err();
        assert!(e.contains("'speed'") && e.contains("seek_read"), "{e}");
        let e = TargetSpec::parse("sim:ssd,channels=0").unwrap_err();
        assert!(e.contains("channels"), "{e}");
        assert!(TargetSpec::parse("sim:ssd,sigma=-1").is_err());
        assert!(TargetSpec::parse("sim:ssd,read=0").is_err());
        assert!(TargetSpec::parse("sim:hdd,size=100").is_err());
        assert!(TargetSpec::parse("sim:hdd,track_seek=5ms").is_err());
        assert!(TargetSpec::parse("sim:array,raid=6").is_err());
        assert!(TargetSpec::parse("sim:array,raid=5,disks=2").is_err());
        assert!(TargetSpec::parse("sim:array,raid=10,disks=5").is_err());
        assert!(TargetSpec::parse("sim:array,member=tape").is_err());
        let e = TargetSpec::parse("sim:array,size=100T").unwrap_err();
        assert!(e.contains("'size=100T'") && e.contains("usable"), "{e}");
        let e = TargetSpec::parse("link:fc3g:mem").unwrap_err();
        assert!(e.contains("'fc3g'") && e.contains("fc4g"), "{e}");
        assert!(TargetSpec::parse("link:fc4g").is_err());
        assert!(TargetSpec::parse("link:fc4g:").is_err());
        assert!(TargetSpec::parse("link:fc4g,mb_s=0:mem").is_err());
    }
}
