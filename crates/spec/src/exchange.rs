//! Exchange sizing (`[exchange]` in a job file; `--mailboxes`, `--mailbox-size`, `--iops-per-mailbox`,
//! `--messages-per-day`, `--exchange-version` on the command line): mailboxes and their load resolved into
//! database and log target sizes and open-loop rates, the way Jetstress turns "N mailboxes at X IOPS each"
//! into a target transactional IOPS figure. Pure arithmetic; the cli applies the result to the job's
//! `db*`, `log*` and `bdm*` worker tables and `[targets]`.
//!
//! The rules, with their sources (docs/SOURCES.md; \[S\] sourced, \[C\] computed, \[I\] our choice):
//!
//! - DB size = mailboxes x mailbox size, rounded up to a MiB \[C\].
//! - IOPS per mailbox: given (`iops_per_mailbox`), or messages/day x a per-version factor. The factor is
//!   linear in messages/day because the only table by messages/day (Dell BP1026, §2.2) is exactly linear:
//!   0.06/50 = 0.18/150 = 0.36/300 = 0.0012 IOPS per daily message. Each version is anchored on its best
//!   source: 2010 on Dell's table (three points of a sizing paper) \[S\]; 2007, 2013 and 2016 on Tony Redmond's
//!   per-version figures at 100 messages/day (0.32, 0.07, 0.044) \[S\]. Redmond's 2010 figure (0.1 at 100) and
//!   Dell's (0.12 at 100) conflict by 20 %; we use Dell's \[I\].
//! - DB read share: 50 % for 2007 (Demartek, "approximately 1:1") \[S\]; 60 % for 2010/2013/2016 (the lower
//!   bound of Jetstress's 3:2-2:1 tuning goal, bracketed by the 62/38 and 68/32 emulations, §2.3) \[I\].
//! - Log IOPS = DB IOPS / 10: the centre of Jetstress's DB:log 8:1-12:1 tuning goal (§2.4) \[S/I\].
//! - Log target size = 5 % of the DB, at least 64 MiB, unless `log_size` says otherwise \[I\]: the log stream
//!   is sequential and wraps, so its size only sets the footprint.
//! - BDM (background database maintenance, §2.5): 256 KiB sequential reads \[I, unverified\] at the rate
//!   that reads the whole DB once per `bdm_window` (default 7 days, Microsoft's full-scan expectation) \[S/C\].

use crate::error::{suggest, Place, SpecError};
use crate::units::{format_size, parse_count, parse_duration_ns, parse_size};
use serde::{Deserialize, Serialize};

pub use iolab_doc::exchange::ExchangeSizing;

/// Keys of the `[exchange]` table.
pub const EXCHANGE_KEYS: &[&str] = &[
    "version",
    "mailboxes",
    "mailbox_size",
    "iops_per_mailbox",
    "messages_per_day",
    "log_size",
    "bdm_window",
];

/// The Exchange versions with sizing tables.
pub const VERSIONS: &[u32] = &[2007, 2010, 2013, 2016];
/// Default version when neither the job nor the flags give one.
pub const DEFAULT_VERSION: u32 = 2010;
/// Default messages sent and received per mailbox per day (Redmond's table is at 100).
pub const DEFAULT_MESSAGES_PER_DAY: f64 = 100.0;
/// Block size of the BDM stream (unverified, docs/SOURCES.md §2.5).
pub const BDM_BS: u64 = 256 << 10;
/// Default BDM window: every database fully scanned once every seven days (§2.5).
pub const DEFAULT_BDM_WINDOW_NS: u64 = 7 * 24 * 3600 * 1_000_000_000;
/// Smallest default log target.
pub const MIN_LOG_SIZE: u64 = 64 << 20;
/// DB IOPS per log IOPS (§2.4: 8:1 to 12:1).
pub const DB_PER_LOG: f64 = 10.0;
const MIB: u64 = 1 << 20;

/// IOPS per mailbox per daily message, and the source, for a version.
pub fn iops_per_message(version: u32) -> Option<(f64, &'static str)> {
    Some(match version {
        2007 => (0.32 / 100.0, "Redmond: 0.32 IOPS at 100 messages/day (Exchange 2007)"),
        2010 => (0.06 / 50.0, "Dell BP1026: 0.06/0.18/0.36 IOPS at 50/150/300 messages/day (Exchange 2010)"),
        2013 => (0.07 / 100.0, "Redmond: 0.07 IOPS at 100 messages/day (Exchange 2013)"),
        2016 => (0.044 / 100.0, "Redmond: 0.044 IOPS at 100 messages/day (Exchange 2016)"),
        _ => return None,
    })
}

/// Database read share of a version, percent.
pub fn db_read_pct(version: u32) -> f64 {
    if version == 2007 {
        50.0
    } else {
        60.0
    }
}

/// The `[exchange]` table; flags override it field by field.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExchangeSpec {
    /// Exchange version (2007, 2010, 2013, 2016).
    pub version: Option<u32>,
    /// Number of mailboxes.
    pub mailboxes: Option<u64>,
    /// Size of one mailbox, bytes.
    pub mailbox_size: Option<u64>,
    /// Database IOPS per mailbox (wins over `messages_per_day`).
    pub iops_per_mailbox: Option<f64>,
    /// Messages sent and received per mailbox per day.
    pub messages_per_day: Option<f64>,
    /// Log target size, bytes (default 5 % of the DB, at least 64 MiB).
    pub log_size: Option<u64>,
    /// Time in which BDM reads the whole database once, ns.
    pub bdm_window_ns: Option<u64>,
}

/// The sizing in one line a person reads: `Exchange 2010: 1,000 mailboxes x 0.120 IOPS = 120 DB IOPS (60 %
/// reads) ...`.
pub fn summary(s: &ExchangeSizing) -> String {
    format!(
        "Exchange {}: {} mailboxes x {:.3} IOPS ({}) = {:.1} DB IOPS ({:.0}% reads); DB {} ({} x {}), log {} at {:.1} IOPS; BDM {:.4} IOPS of 256K (whole DB per {})",
        s.version,
        s.mailboxes,
        s.iops_per_mailbox,
        s.basis,
        s.db_iops,
        s.db_read_pct,
        format_size(s.db_size_bytes),
        s.mailboxes,
        format_size(s.mailbox_size_bytes),
        format_size(s.log_size_bytes),
        s.log_iops,
        s.bdm_iops,
        crate::units::format_duration(s.bdm_window_ns),
    )
}

impl ExchangeSpec {
    /// Sets one key from its text (the job file and the flags share this parser). `Ok(false)` for an
    /// unknown key.
    pub fn set(&mut self, key: &str, text: &str, place: &Place) -> Result<bool, SpecError> {
        let positive_size = || -> Result<u64, SpecError> {
            match parse_size(text) {
                Ok(0) => Err(SpecError::invalid(place, text, "a size above 0, e.g. '2G'")),
                Ok(v) => Ok(v),
                Err(e) => Err(SpecError::invalid(place, text, e)),
            }
        };
        let positive = |what: &str| -> Result<f64, SpecError> {
            match parse_count(text) {
                Ok(v) if v > 0.0 && v <= 1e9 => Ok(v),
                _ => Err(SpecError::invalid(
                    place,
                    text,
                    format!("{what} above 0, e.g. '{}'", if what.contains("IOPS") { "0.18" } else { "150" }),
                )),
            }
        };
        match key {
            "version" => {
                let v = text.trim().parse::<u32>().ok().filter(|v| VERSIONS.contains(v));
                self.version = Some(v.ok_or_else(|| {
                    SpecError::invalid(
                        place,
                        text,
                        "an Exchange version with sizing tables: 2007, 2010, 2013 or 2016",
                    )
                })?)
            }
            "mailboxes" => {
                let v = parse_count(text).ok().filter(|v| *v >= 1.0 && v.fract() == 0.0 && *v <= 1e7);
                self.mailboxes = Some(v.ok_or_else(|| {
                    SpecError::invalid(
                        place,
                        text,
                        "a whole number of mailboxes from 1 to 10M, e.g. '5000' or '5k'",
                    )
                })? as u64)
            }
            "mailbox_size" => self.mailbox_size = Some(positive_size()?),
            "iops_per_mailbox" => self.iops_per_mailbox = Some(positive("an IOPS figure")?),
            "messages_per_day" => self.messages_per_day = Some(positive("a number of messages")?),
            "log_size" => self.log_size = Some(positive_size()?),
            "bdm_window" => {
                let v = parse_duration_ns(text).map_err(|e| SpecError::invalid(place, text, e))?;
                if v < 1_000_000_000 {
                    return Err(SpecError::invalid(
                        place,
                        text,
                        "a duration of at least 1s, e.g. '7d' written '168h'",
                    ));
                }
                self.bdm_window_ns = Some(v)
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Parses the `[exchange]` table.
    pub fn from_toml(value: &toml::Value, file: &str) -> Result<Self, SpecError> {
        let table = value.as_table().ok_or_else(|| SpecError::Conflict {
            place: Place::Key { file: file.into(), table: String::new(), key: "exchange".into() },
            message: "expected a table such as [exchange] with mailboxes = 1000".into(),
        })?;
        let mut x = ExchangeSpec::default();
        for (key, value) in table {
            let place = Place::Key { file: file.into(), table: "[exchange]".into(), key: key.clone() };
            let text = match value {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                other => return Err(SpecError::invalid(&place, other.to_string(), "a string or a number")),
            };
            if !x.set(key, &text, &place)? {
                return Err(SpecError::UnknownKey {
                    file: file.into(),
                    table: "[exchange]".into(),
                    key: key.clone(),
                    suggestion: suggest(key, EXCHANGE_KEYS).map(str::to_string),
                });
            }
        }
        if x.iops_per_mailbox.is_some() && x.messages_per_day.is_some() {
            return Err(SpecError::Conflict {
                place: Place::Key {
                    file: file.into(),
                    table: "[exchange]".into(),
                    key: "iops_per_mailbox".into(),
                },
                message: "give iops_per_mailbox or messages_per_day, not both".into(),
            });
        }
        Ok(x)
    }

    /// `self` with every field `over` sets replaced by `over`'s value. `iops_per_mailbox` and
    /// `messages_per_day` are one choice: setting either in `over` replaces both.
    pub fn merged(&self, over: &ExchangeSpec) -> ExchangeSpec {
        let load_over = over.iops_per_mailbox.is_some() || over.messages_per_day.is_some();
        ExchangeSpec {
            version: over.version.or(self.version),
            mailboxes: over.mailboxes.or(self.mailboxes),
            mailbox_size: over.mailbox_size.or(self.mailbox_size),
            iops_per_mailbox: if load_over { over.iops_per_mailbox } else { self.iops_per_mailbox },
            messages_per_day: if load_over { over.messages_per_day } else { self.messages_per_day },
            log_size: over.log_size.or(self.log_size),
            bdm_window_ns: over.bdm_window_ns.or(self.bdm_window_ns),
        }
    }

    /// Resolves the sizing. Errors say which key or flag is missing.
    pub fn resolve(&self) -> Result<ExchangeSizing, String> {
        let version = self.version.unwrap_or(DEFAULT_VERSION);
        let mailboxes = self
            .mailboxes
            .ok_or("Exchange sizing needs a mailbox count: 'mailboxes' in [exchange] or --mailboxes N")?;
        let mailbox_size = self.mailbox_size.ok_or(
            "Exchange sizing needs a mailbox size: 'mailbox_size' in [exchange] or --mailbox-size SIZE",
        )?;
        let (iops_per_mailbox, basis) = match (self.iops_per_mailbox, self.messages_per_day) {
            (Some(x), _) => (x, "given".to_string()),
            (None, m) => {
                let m = m.unwrap_or(DEFAULT_MESSAGES_PER_DAY);
                let (per_msg, source) = iops_per_message(version)
                    .ok_or_else(|| format!("no sizing table for Exchange {version}"))?;
                (m * per_msg, format!("{m} messages/day; {source}"))
            }
        };
        let db = mailboxes
            .checked_mul(mailbox_size)
            .and_then(|b| b.checked_next_multiple_of(MIB))
            .filter(|&b| b <= 1 << 60)
            .ok_or_else(|| {
                format!("{mailboxes} mailboxes x {} is too large a database", format_size(mailbox_size))
            })?;
        let log = match self.log_size {
            Some(l) => l,
            None => (db / 20).next_multiple_of(MIB).max(MIN_LOG_SIZE),
        };
        let db_iops = mailboxes as f64 * iops_per_mailbox;
        let bdm_window_ns = self.bdm_window_ns.unwrap_or(DEFAULT_BDM_WINDOW_NS);
        Ok(ExchangeSizing {
            version,
            mailboxes,
            mailbox_size_bytes: mailbox_size,
            iops_per_mailbox,
            basis,
            db_size_bytes: db,
            log_size_bytes: log,
            db_iops,
            db_read_pct: db_read_pct(version),
            log_iops: db_iops / DB_PER_LOG,
            bdm_iops: db as f64 / BDM_BS as f64 / (bdm_window_ns as f64 / 1e9),
            bdm_window_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pairs: &[(&str, &str)]) -> ExchangeSpec {
        let mut x = ExchangeSpec::default();
        for (k, v) in pairs {
            assert!(x.set(k, v, &Place::Flag(format!("--{k}"))).unwrap(), "{k}");
        }
        x
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Seed 000 (SOURCES.md §1.1): Jetstress 2010, 1,000 mailboxes of 200 MB at 1 IOPS each: 1,000 IOPS on a
    /// 200 GB database (the seed's LUN; 1000 x 200 MiB = 195.3 GiB).
    #[test]
    fn golden_seed_000_thousand_mailboxes_at_one_iops() {
        let s = spec(&[("mailboxes", "1000"), ("mailbox_size", "200M"), ("iops_per_mailbox", "1")])
            .resolve()
            .unwrap();
        assert!(close(s.db_iops, 1000.0));
        assert_eq!(s.db_size_bytes, 1000 * (200 << 20));
        assert!(close(s.log_iops, 100.0));
        assert_eq!(s.db_read_pct, 60.0);
        assert_eq!(s.basis, "given");
        assert_eq!(s.log_size_bytes, (1000u64 * (200 << 20) / 20).next_multiple_of(MIB));
    }

    /// Dell BP1026 (§2.2): 5,000 mailboxes at 50 / 150 / 300 messages a day give 300 / 900 / 1,800 IOPS.
    #[test]
    fn golden_dell_5000_mailboxes_by_messages_per_day() {
        for (msgs, iops) in [("50", 300.0), ("150", 900.0), ("300", 1800.0)] {
            let s = spec(&[
                ("mailboxes", "5000"),
                ("mailbox_size", "1G"),
                ("messages_per_day", msgs),
                ("version", "2010"),
            ])
            .resolve()
            .unwrap();
            assert!(close(s.db_iops, iops), "{msgs}: {}", s.db_iops);
            assert!(close(s.log_iops, iops / 10.0));
        }
    }

    /// Redmond (§2.2) at 100 messages/day: 0.32 (2007), 0.07 (2013), 0.044 (2016) IOPS per mailbox; 2007 is 1:1.
    #[test]
    fn golden_redmond_per_version_at_100_messages() {
        for (v, per, read) in [("2007", 0.32, 50.0), ("2013", 0.07, 60.0), ("2016", 0.044, 60.0)] {
            let s =
                spec(&[("mailboxes", "24000"), ("mailbox_size", "2G"), ("version", v)]).resolve().unwrap();
            assert!(close(s.db_iops, 24000.0 * per), "{v}: {}", s.db_iops);
            assert_eq!(s.db_read_pct, read);
            assert_eq!(s.db_size_bytes, 24000 * (2u64 << 30));
        }
        // 2010 at the default 100 messages/day follows Dell's linear table: 0.12.
        let s = spec(&[("mailboxes", "1000"), ("mailbox_size", "1M")]).resolve().unwrap();
        assert!(close(s.iops_per_mailbox, 0.12));
        assert_eq!(s.log_size_bytes, MIN_LOG_SIZE);
    }

    /// BDM reads a 2 TB (here 2 TiB) database in 7 days: about 3.3 MB/s (§2.5), i.e. 13.9 reads of 256 KiB a second.
    #[test]
    fn golden_bdm_rate_scans_db_once_per_week() {
        let s = spec(&[("mailboxes", "1024"), ("mailbox_size", "2G")]).resolve().unwrap();
        let mb_s = s.bdm_iops * BDM_BS as f64 / 1e6;
        assert!((mb_s - 3.64).abs() < 0.01, "{mb_s}");
    }

    #[test]
    fn exchange_missing_and_bad_values_are_errors() {
        assert!(spec(&[("mailbox_size", "1G")]).resolve().unwrap_err().contains("--mailboxes"));
        let mut x = ExchangeSpec::default();
        let p = Place::Flag("--exchange-version".into());
        let e = x.set("version", "2019", &p).unwrap_err().to_string();
        assert!(e.contains("'2019'") && e.contains("2007, 2010, 2013 or 2016"), "{e}");
        assert!(x.set("mailboxes", "0", &p).is_err());
        assert!(x.set("mailboxes", "1.5", &p).is_err());
        assert!(x.set("iops_per_mailbox", "-1", &p).is_err());
        assert!(!x.set("mailboxs", "1", &p).unwrap());
        let t: toml::Table = "mailboxes = 10\niops_per_mailbox = 1\nmessages_per_day = 5".parse().unwrap();
        assert!(ExchangeSpec::from_toml(&toml::Value::Table(t), "j").is_err());
        let t: toml::Table = "mailboxs = 10".parse().unwrap();
        let e = ExchangeSpec::from_toml(&toml::Value::Table(t), "j").unwrap_err().to_string();
        assert!(e.contains("did you mean 'mailboxes'?"), "{e}");
    }

    #[test]
    fn exchange_flag_load_replaces_file_load() {
        let file = spec(&[("messages_per_day", "150"), ("mailboxes", "10")]);
        let flags = spec(&[("iops_per_mailbox", "0.5")]);
        let m = file.merged(&flags);
        assert_eq!((m.iops_per_mailbox, m.messages_per_day, m.mailboxes), (Some(0.5), None, Some(10)));
    }
}
