//! Durable writes and trims in the job model: how often a worker flushes (`fsync = N`, `fdatasync = N`, as
//! fio's options of those names), whether its writes are synchronous (`sync = "dsync"`: each write returns
//! only when its data is on stable media, as O_DSYNC / RWF_DSYNC; `sync = "sync"`: data and metadata, as
//! O_SYNC), and the share of its ops that are trims (`trim_pct`, discard of the range).
//!
//! What the kernel guarantees, not what the names suggest: an O_DIRECT write bypasses the page cache but not
//! the device's volatile write cache, so a flush (or a synchronous write) is still what makes it durable on
//! such a device. docs/DURABILITY.md says more.

use serde::{Deserialize, Serialize};

use crate::error::{Place, SpecError};

/// How a worker's writes reach stable media: `sync = "none" | "dsync" | "sync"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WriteSync {
    /// Plain writes: durable only after a flush.
    #[default]
    None,
    /// Each write is durable (its data and the metadata needed to read it back) when it completes:
    /// O_DSYNC, RWF_DSYNC; on a block device, a write with FUA or followed by a flush.
    Dsync,
    /// Each write is durable with all its metadata when it completes: O_SYNC, RWF_SYNC.
    Sync,
}

impl WriteSync {
    /// Parses `sync`: `none`, `dsync` or `sync` (fio's `0` and `1` too).
    pub fn parse(place: &Place, text: &str) -> Result<WriteSync, SpecError> {
        match text.trim() {
            "none" | "0" | "false" => Ok(WriteSync::None),
            "dsync" | "odsync" => Ok(WriteSync::Dsync),
            "sync" | "osync" | "1" | "true" => Ok(WriteSync::Sync),
            _ => Err(SpecError::invalid(
                place,
                text,
                "'none', 'dsync' (each write durable, as O_DSYNC) or 'sync' (as O_SYNC)",
            )),
        }
    }

    /// The value as typed: `none`, `dsync`, `sync`.
    pub fn as_str(self) -> &'static str {
        match self {
            WriteSync::None => "none",
            WriteSync::Dsync => "dsync",
            WriteSync::Sync => "sync",
        }
    }

    /// True unless `None`.
    pub fn is_durable(self) -> bool {
        self != WriteSync::None
    }

    /// True for `None` (what serde skips).
    pub fn is_none(&self) -> bool {
        *self == WriteSync::None
    }
}

/// Most writes between two flushes (`fsync = N`): a million.
pub const MAX_WRITES_PER_FLUSH: u32 = 1 << 20;

/// Parses `fsync` or `fdatasync`: the number of writes after which the worker flushes; 0 turns it off.
pub fn parse_flush_every(place: &Place, text: &str) -> Result<u32, SpecError> {
    let expected = || {
        format!(
            "a whole number of writes from 0 (never) to {MAX_WRITES_PER_FLUSH}, e.g. '1' (after every write) or \
             '32'"
        )
    };
    let v: i64 = text.trim().parse().map_err(|_| SpecError::invalid(place, text, expected()))?;
    if !(0..=i64::from(MAX_WRITES_PER_FLUSH)).contains(&v) {
        return Err(SpecError::invalid(place, text, expected()));
    }
    Ok(v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_values_and_errors_quote_what_was_typed() {
        let p = Place::Flag("--sync".into());
        assert_eq!(WriteSync::parse(&p, "dsync").unwrap(), WriteSync::Dsync);
        assert_eq!(WriteSync::parse(&p, "1").unwrap(), WriteSync::Sync);
        assert_eq!(WriteSync::parse(&p, "none").unwrap(), WriteSync::None);
        let e = WriteSync::parse(&p, "fua").unwrap_err().to_string();
        assert!(e.contains("'fua'") && e.contains("'dsync'"), "{e}");
        assert_eq!(parse_flush_every(&p, "32").unwrap(), 32);
        assert_eq!(parse_flush_every(&p, "0").unwrap(), 0);
        let e = parse_flush_every(&p, "-1").unwrap_err().to_string();
        assert!(e.contains("'-1'") && e.contains("whole number of writes"), "{e}");
    }
}
