//! Emulated devices and links as the user names them: `sim:hdd`, `sim:ssd`, `sim:array` and `link:` presets,
//! each resolved here into every parameter, so a result's `config` carries the numbers the model ran with.
//!
//! Syntax (the model crate `iolab-sim` gives them behaviour):
//! - `sim:hdd[,PRESET][,key=value...]`, presets `7k2`, `10k` (default), `15k`;
//! - `sim:ssd[,PRESET][,key=value...]`, presets `sata`, `nvme` (default);
//! - `sim:array[,key=value...]`, default 8 x 10K RPM disks in RAID 5; `member=hdd:15k` or `member=ssd:sata`;
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

/// Parses the items after `sim:hdd` (a preset name, then `key=value`s). `Err` says what was expected.
pub fn parse_hdd<'a>(items: impl Iterator<Item = &'a str>) -> Result<HddParams, String> {
    let _ = items;
    Err("sim:hdd is not built yet".into())
}

/// Parses the items after `sim:ssd`.
pub fn parse_ssd<'a>(items: impl Iterator<Item = &'a str>) -> Result<SsdParams, String> {
    let _ = items;
    Err("sim:ssd is not built yet".into())
}

/// Parses the items after `sim:array`.
pub fn parse_array<'a>(items: impl Iterator<Item = &'a str>) -> Result<ArrayParams, String> {
    let _ = items;
    Err("sim:array is not built yet".into())
}

/// Parses `PRESET[,key=value...]:TARGET` (the text after `link:`): the link and the inner target's text.
pub fn parse_link(rest: &str) -> Result<(LinkParams, &str), String> {
    let _ = rest;
    Err("link: is not built yet".into())
}

/// The canonical name of an emulated device other than `sim:fixed`: `sim:hdd,10k,size=600G` style, listing
/// only what differs from the preset.
pub fn display_sim(spec: &crate::target::SimSpec) -> String {
    let _ = spec;
    String::from("sim:?")
}

/// The canonical name of a link in front of `target`: `link:fc4g:sim:array`.
pub fn display_link(link: &LinkParams, target: &crate::target::TargetSpec) -> String {
    format!("link:{}:{}", link.preset, target.display_name())
}
