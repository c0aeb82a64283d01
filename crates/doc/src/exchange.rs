//! Exchange sizing as documents carry it (`iolab-spec`'s `exchange` resolves it from `[exchange]` and the
//! sizing flags; a run's verdict and its `--dry-run` carry it with a summary line).

use serde::{Deserialize, Serialize};

/// The resolved sizing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExchangeSizing {
    /// Exchange version.
    pub version: u32,
    /// Mailboxes.
    pub mailboxes: u64,
    /// One mailbox, bytes.
    pub mailbox_size_bytes: u64,
    /// Database IOPS per mailbox.
    pub iops_per_mailbox: f64,
    /// How `iops_per_mailbox` was found (given, or messages/day x the version's factor and its source).
    pub basis: String,
    /// Database target size, bytes.
    pub db_size_bytes: u64,
    /// Log target size, bytes.
    pub log_size_bytes: u64,
    /// Database IOPS (reads + writes), the target of the verdict.
    pub db_iops: f64,
    /// Database read share, percent.
    pub db_read_pct: f64,
    /// Log write IOPS.
    pub log_iops: f64,
    /// BDM 256 KiB read IOPS.
    pub bdm_iops: f64,
    /// BDM window, ns.
    pub bdm_window_ns: u64,
}
