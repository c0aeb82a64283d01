//! `--throttle` as a result carries it (`env.throttle`): the kernel I/O limits iolab put on the block devices
//! under the targets for the run (`iolab-device`'s `throttle` applies them and fills this).

use serde::{Deserialize, Serialize};

/// The limits in place during a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttled {
    /// `cgroup-v1 blkio` or `cgroup-v2 io.max`.
    pub kind: String,
    /// The cgroup iolab ran in (removed afterwards).
    pub cgroup: String,
    /// One entry per throttled disk.
    pub devices: Vec<ThrottledDevice>,
}

/// The limits on one disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThrottledDevice {
    /// The targets on this disk, comma-separated (their limits are shared: one budget per disk).
    pub name: String,
    /// The throttled device, `MAJ:MIN` (the whole disk).
    pub device: String,
    /// The targets' own `MAJ:MIN` when they are partitions of `device`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<String>,
    /// Read bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rbps: Option<u64>,
    /// Write bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wbps: Option<u64>,
    /// Read I/Os per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub riops: Option<u64>,
    /// Write I/Os per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wiops: Option<u64>,
}
