//! A database workload run at several user counts on one database (`iolab db tpcc --users 1,2,4,8`,
//! `iolab.dbsweep/1`): HammerDB's autopilot, NOPM against users. The database is built once; each point is a
//! ramp and a measured window with that many users, checked for consistency afterwards, and kept whole (an
//! `iolab.db/1` document each). The knee is the rule `iolab sweep` applies to IOPS and p99
//! ([`crate::sweep::find_knee`]), read here as NOPM and new-order p99: the first user count after which more
//! users gain less than 10 % NOPM while new-order p99 grows by more than 20 %. Plain data and that rule; the
//! renderings live in `export` and `html`.

use serde::{Deserialize, Serialize};

use crate::db::{DbHeader, DbResult};

/// The `schema` value of a database sweep document.
pub const DB_SWEEP_SCHEMA: &str = "iolab.dbsweep/1";

/// The transaction whose response time the knee watches: new-order, the one NOPM counts.
pub const KNEE_TRANSACTION: &str = "new_order";

/// A database workload at several user counts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbSweepResult {
    /// Schema [`DB_SWEEP_SCHEMA`], workload `tpcc`, its disclaimer (as each point's), the seed of every
    /// point (each point's users deal the same streams) and the start of the sweep (of its build);
    /// flattened.
    #[serde(flatten)]
    pub header: DbHeader,
    /// The swept setting: `users`.
    pub axis: String,
    /// The user counts asked for, in run order.
    pub users: Vec<u32>,
    /// The points run, in order (fewer than `users` when interrupted).
    pub points: Vec<DbSweepPoint>,
    /// The knee of NOPM against users; `None` with fewer than two points.
    pub knee: Option<DbKnee>,
    /// Interrupted (Ctrl-C, SIGTERM, SIGHUP): points are missing, or the last one is partial.
    pub partial: bool,
}

/// One user count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbSweepPoint {
    /// Users.
    pub users: u32,
    /// Its run, whole.
    pub result: DbResult,
    /// The trace of its measured window's block I/O (`--capture FILE`: FILE with `.users-N` before its
    /// extension), if one was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
}

/// The knee of NOPM against users.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbKnee {
    /// The rule's NOPM gain threshold, percent.
    pub nopm_gain_pct: f64,
    /// The rule's growth threshold of the watched response time, percent.
    pub p99_growth_pct: f64,
    /// The transaction whose p99 is watched ([`KNEE_TRANSACTION`]).
    pub transaction: String,
    /// Index of the knee in `points`; `None` when no step qualifies (the knee is beyond the sweep).
    pub point: Option<usize>,
    /// The users at the knee.
    pub users: Option<u32>,
}

impl DbSweepPoint {
    /// The p99 response time of the knee's transaction, ns.
    pub fn knee_p99_ns(&self) -> Option<u64> {
        let t = self.result.run.transactions.iter().find(|t| t.name == KNEE_TRANSACTION)?;
        t.latency_ns.as_ref().map(|l| l.p99)
    }
}

impl DbSweepResult {
    /// Computes [`DbSweepResult::knee`] from the points, in run order (the user counts as given).
    pub fn analyze(&mut self, nopm_gain_pct: f64, p99_growth_pct: f64) {
        if self.points.len() < 2 {
            self.knee = None;
            return;
        }
        let pairs: Vec<(f64, f64)> =
            self.points.iter().map(|p| (p.result.run.nopm, p.knee_p99_ns().unwrap_or(0) as f64)).collect();
        let point = crate::sweep::find_knee(&pairs, nopm_gain_pct, p99_growth_pct);
        self.knee = Some(DbKnee {
            nopm_gain_pct,
            p99_growth_pct,
            transaction: KNEE_TRANSACTION.into(),
            point,
            users: point.map(|i| self.points[i].users),
        });
    }

    /// The point with the most new orders per minute.
    pub fn peak(&self) -> Option<&DbSweepPoint> {
        self.points.iter().max_by(|a, b| a.result.run.nopm.total_cmp(&b.result.run.nopm))
    }

    /// Every point passed its consistency conditions.
    pub fn consistent(&self) -> bool {
        !self.points.is_empty() && self.points.iter().all(|p| p.result.consistent())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A sweep over 1, 2, 4 and 8 users whose NOPM levels off at 4 while new-order p99 climbs.
    pub(crate) fn sample() -> DbSweepResult {
        let base = crate::db::tests::sample();
        let curve = [
            (1, 1000.0, 2_000_000u64),
            (2, 1900.0, 2_400_000),
            (4, 2500.0, 3_000_000),
            (8, 2600.0, 9_000_000),
        ];
        let points = curve
            .iter()
            .map(|&(users, nopm, p99)| {
                let mut r = base.clone();
                r.config.users = users;
                r.run.nopm = nopm;
                r.run.tpm = nopm * 2.2;
                if let Some(l) = r.run.transactions[0].latency_ns.as_mut() {
                    l.p99 = p99;
                }
                DbSweepPoint { users, result: r, capture: Some(format!("t.users-{users}.iolabtrace")) }
            })
            .collect();
        let mut s = DbSweepResult {
            header: crate::db::DbHeader::new(
                DB_SWEEP_SCHEMA,
                "tpcc",
                Some(crate::db::TPCC_DISCLAIMER),
                42,
                1_700_000_000,
            ),
            axis: "users".into(),
            users: vec![1, 2, 4, 8],
            points,
            knee: None,
            partial: false,
        };
        s.analyze(crate::sweep::DEFAULT_KNEE_IOPS_GAIN_PCT, crate::sweep::DEFAULT_KNEE_LAT_GROWTH_PCT);
        s
    }

    #[test]
    fn knee_is_where_more_users_buy_latency_not_new_orders() {
        let s = sample();
        let k = s.knee.as_ref().unwrap();
        assert_eq!((k.point, k.users), (Some(2), Some(4)));
        assert_eq!(s.peak().unwrap().users, 8);
        let mut one = sample();
        one.points.truncate(1);
        one.analyze(10.0, 20.0);
        assert!(one.knee.is_none());
    }

    #[test]
    fn every_key_is_in_the_schema_and_back() {
        let v = serde_json::to_value(sample()).unwrap();
        crate::schema_check::check_document(&v, crate::schema_check::DB_SWEEP_SCHEMA);
        let back: DbSweepResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, sample());
    }

    #[test]
    fn text_and_csv_show_each_user_count_and_mark_the_knee() {
        let s = sample();
        let text = crate::TextExporter.render(&s);
        let knee = text.lines().find(|l| l.contains("◀ knee")).unwrap_or_else(|| panic!("{text}"));
        assert!(knee.trim_start().starts_with("4 "), "{text}");
        for want in ["NOPM", "2,600", "not TPC-C compliant", "knee (users;"] {
            assert!(text.contains(want), "{want:?} in\n{text}");
        }
        // Each point's window over time, its CPU and the database against memory (issue 37, item 5).
        for users in ["1 user:", "2 users:", "4 users:", "8 users:"] {
            let at = text.find(users).unwrap_or_else(|| panic!("{users:?} in\n{text}"));
            let block: Vec<&str> = text[at..].lines().skip(1).take(3).collect();
            assert!(block.iter().any(|l| l.trim_start().starts_with("over time")), "{block:?}");
            assert!(block.iter().any(|l| l.trim_start().starts_with("CPU")), "{block:?}");
        }
        // The page and the Markdown draw the same rows: a point each, its window's facts.
        let rows = crate::db_rows::sweep_window_rows(&s);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[2][0], "4");
        assert!(rows.iter().all(|r| r[1] != "-" && r[2] != "-"), "{rows:?}");
        let csv = crate::CsvExporter.render(&s).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert!(lines[0].starts_with("users,nopm,tpm,"), "{csv}");
        assert_eq!(lines.len(), 5, "{csv}");
        assert!(lines[3].ends_with(",knee"), "{csv}");
    }
}
