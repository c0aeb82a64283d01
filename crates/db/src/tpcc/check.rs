//! TPC-C's consistency conditions 1 to 4 (clause 3.3.2), checked on the database after the run. They hold
//! after the load and must hold after any number of correct transactions, so a pass says the transactions
//! really ran as transactions (atomic, isolated: no lost update of a year-to-date total, no order without
//! its lines), on this engine and this storage.
//!
//! 1. W_YTD = sum(D_YTD) for each warehouse.
//! 2. D_NEXT_O_ID − 1 = max(O_ID) = max(NO_O_ID) for each district (the new-order part only where the
//!    district has new orders waiting).
//! 3. max(NO_O_ID) − min(NO_O_ID) + 1 = the number of NEW-ORDER rows, for each district that has any.
//! 4. sum(O_OL_CNT) = the number of ORDER-LINE rows, for each district.
//!
//! Each condition reads its figures per warehouse or district, by column name (every aggregate aliased).

use crate::database::{Conn, Rows};
use crate::DbError;
use iolab_report::db::ConsistencyCheck;
use std::collections::BTreeMap;

type Key = (i64, i64);

/// The rows of a per-district query (`purpose` naming it in errors) as a map from the district's key (the
/// columns `key`: warehouse, district) to the integers of `values` (NULL as `None`).
fn by_district(
    rows: &Rows,
    purpose: &str,
    key: [&str; 2],
    values: &[&str],
) -> Result<BTreeMap<Key, Vec<Option<i64>>>, DbError> {
    rows.iter(purpose)
        .map(|r| {
            let ints = values.iter().map(|v| r.int_or_null(v)).collect::<Result<_, _>>()?;
            Ok(((r.int(key[0])?, r.int(key[1])?), ints))
        })
        .collect()
}

/// A condition's result from its violations, described.
fn check(condition: u32, rule: &str, violations: Vec<String>) -> ConsistencyCheck {
    ConsistencyCheck {
        condition,
        rule: rule.into(),
        passed: violations.is_empty(),
        violations: violations.len() as u64,
        example: violations.into_iter().next(),
    }
}

/// Checks conditions 1 to 4 on the database behind `conn`.
pub fn check_all(conn: &mut dyn Conn) -> Result<Vec<ConsistencyCheck>, DbError> {
    Ok(vec![condition_1(conn)?, condition_2(conn)?, condition_3(conn)?, condition_4(conn)?])
}

/// W_YTD = sum(D_YTD).
pub fn condition_1(conn: &mut dyn Conn) -> Result<ConsistencyCheck, DbError> {
    let rows = conn.query(
        "SELECT w.w_id, w.w_ytd, d.ytd FROM warehouse w LEFT JOIN \
         (SELECT d_w_id, CAST(sum(d_ytd) AS bigint) AS ytd FROM district GROUP BY d_w_id) d ON d.d_w_id = w.w_id \
         ORDER BY w.w_id",
        &[],
    )?;
    let mut bad = Vec::new();
    for r in rows.iter("condition 1: the warehouses' totals") {
        let (w, w_ytd, d_ytd) = (r.int("w_id")?, r.int_or_null("w_ytd")?, r.int_or_null("ytd")?);
        if w_ytd != d_ytd {
            bad.push(format!("warehouse {w}: W_YTD {w_ytd:?} but its districts' D_YTD sum to {d_ytd:?}"));
        }
    }
    Ok(check(1, "W_YTD = sum(D_YTD)", bad))
}

/// D_NEXT_O_ID − 1 = max(O_ID) = max(NO_O_ID).
pub fn condition_2(conn: &mut dyn Conn) -> Result<ConsistencyCheck, DbError> {
    let next = by_district(
        &conn.query("SELECT d_w_id, d_id, d_next_o_id FROM district", &[])?,
        "condition 2: the districts",
        ["d_w_id", "d_id"],
        &["d_next_o_id"],
    )?;
    let max_o = by_district(
        &conn
            .query("SELECT o_w_id, o_d_id, max(o_id) AS max_o_id FROM orders GROUP BY o_w_id, o_d_id", &[])?,
        "condition 2: the orders",
        ["o_w_id", "o_d_id"],
        &["max_o_id"],
    )?;
    let max_no = by_district(
        &conn.query(
            "SELECT no_w_id, no_d_id, max(no_o_id) AS max_no_o_id FROM new_order GROUP BY no_w_id, no_d_id",
            &[],
        )?,
        "condition 2: the new orders",
        ["no_w_id", "no_d_id"],
        &["max_no_o_id"],
    )?;
    let mut bad = Vec::new();
    for (key, v) in &next {
        let last = v[0].map(|n| n - 1);
        let o = max_o.get(key).and_then(|v| v[0]);
        let no = max_no.get(key).and_then(|v| v[0]);
        if last != o || (no.is_some() && no != last) {
            bad.push(format!(
                "warehouse {}, district {}: D_NEXT_O_ID - 1 = {:?}, max(O_ID) = {:?}, max(NO_O_ID) = {:?}",
                key.0, key.1, last, o, no
            ));
        }
    }
    Ok(check(2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", bad))
}

/// max(NO_O_ID) − min(NO_O_ID) + 1 = count(NEW-ORDER).
pub fn condition_3(conn: &mut dyn Conn) -> Result<ConsistencyCheck, DbError> {
    let rows = by_district(
        &conn.query(
            "SELECT no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1 AS span, count(*) AS new_orders \
             FROM new_order GROUP BY no_w_id, no_d_id",
            &[],
        )?,
        "condition 3: the new orders",
        ["no_w_id", "no_d_id"],
        &["span", "new_orders"],
    )?;
    let bad = rows
        .iter()
        .filter(|(_, v)| v[0] != v[1])
        .map(|(k, v)| {
            format!(
                "warehouse {}, district {}: NO_O_ID spans {:?} ids but there are {:?} new orders",
                k.0, k.1, v[0], v[1]
            )
        })
        .collect();
    Ok(check(3, "max(NO_O_ID) - min(NO_O_ID) + 1 = count(NEW-ORDER)", bad))
}

/// sum(O_OL_CNT) = count(ORDER-LINE).
pub fn condition_4(conn: &mut dyn Conn) -> Result<ConsistencyCheck, DbError> {
    let ol_cnt = by_district(
        &conn.query(
            "SELECT o_w_id, o_d_id, CAST(sum(o_ol_cnt) AS bigint) AS ol_cnt FROM orders GROUP BY o_w_id, o_d_id",
            &[],
        )?,
        "condition 4: the orders",
        ["o_w_id", "o_d_id"],
        &["ol_cnt"],
    )?;
    let lines = by_district(
        &conn.query(
            "SELECT ol_w_id, ol_d_id, count(*) AS lines FROM order_line GROUP BY ol_w_id, ol_d_id",
            &[],
        )?,
        "condition 4: the order lines",
        ["ol_w_id", "ol_d_id"],
        &["lines"],
    )?;
    let mut keys: Vec<&Key> = ol_cnt.keys().chain(lines.keys()).collect();
    keys.sort();
    keys.dedup();
    let bad = keys
        .into_iter()
        .filter_map(|k| {
            let a = ol_cnt.get(k).and_then(|v| v[0]).unwrap_or(0);
            let b = lines.get(k).and_then(|v| v[0]).unwrap_or(0);
            (a != b).then(|| {
                format!("warehouse {}, district {}: sum(O_OL_CNT) = {a} but {b} order lines", k.0, k.1)
            })
        })
        .collect();
    Ok(check(4, "sum(O_OL_CNT) = count(ORDER-LINE)", bad))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::sqlite::Sqlite;
    use crate::database::Database;
    use crate::tpcc::schema;

    /// One warehouse, two districts, a handful of consistent orders (district 1: orders 1 to 3, order 3
    /// waiting; district 2: orders 1 and 2, none waiting).
    fn small_db(dir: &std::path::Path) -> Box<dyn Conn> {
        let e = Sqlite::new(dir);
        let mut c = e.connect().unwrap();
        c.batch(&crate::bulk::create_tables(&schema::TABLES, &e.dialect())).unwrap();
        c.batch(
            "INSERT INTO warehouse (w_id, w_ytd) VALUES (1, 700);
             INSERT INTO district (d_w_id, d_id, d_ytd, d_next_o_id) VALUES (1, 1, 300, 4), (1, 2, 400, 3);
             INSERT INTO orders (o_w_id, o_d_id, o_id, o_ol_cnt) VALUES (1, 1, 1, 2), (1, 1, 2, 1), (1, 1, 3, 1),
                 (1, 2, 1, 1), (1, 2, 2, 2);
             INSERT INTO order_line (ol_w_id, ol_d_id, ol_o_id, ol_number) VALUES (1, 1, 1, 1), (1, 1, 1, 2),
                 (1, 1, 2, 1), (1, 1, 3, 1), (1, 2, 1, 1), (1, 2, 2, 1), (1, 2, 2, 2);
             INSERT INTO new_order (no_w_id, no_d_id, no_o_id) VALUES (1, 1, 3);",
        )
        .unwrap();
        c
    }

    fn passed(c: &mut dyn Conn) -> Vec<bool> {
        check_all(c).unwrap().iter().map(|k| k.passed).collect()
    }

    #[test]
    fn a_consistent_database_passes_all_four() {
        let t = tempfile::tempdir().unwrap();
        let mut c = small_db(t.path());
        assert_eq!(passed(c.as_mut()), [true; 4]);
    }

    #[test]
    fn each_condition_fails_on_its_own_violation() {
        let cases = [
            ("UPDATE warehouse SET w_ytd = 701", 0, "W_YTD Some(701)"),
            ("UPDATE district SET d_next_o_id = 5 WHERE d_id = 1", 1, "D_NEXT_O_ID - 1 = Some(4)"),
            ("INSERT INTO new_order VALUES (5, 1, 1)", 2, "spans Some(3) ids but there are Some(2)"),
            ("DELETE FROM order_line WHERE ol_d_id = 2 AND ol_number = 2", 3, "sum(O_OL_CNT) = 3 but 2"),
        ];
        for (sql, broken, example) in cases {
            let t = tempfile::tempdir().unwrap();
            let mut c = small_db(t.path());
            c.batch(sql).unwrap();
            let checks = check_all(c.as_mut()).unwrap();
            for (i, k) in checks.iter().enumerate() {
                // Condition 3's violation (an extra new order) also breaks condition 2's max(NO_O_ID).
                if i == broken {
                    assert!(!k.passed && k.violations == 1, "{sql}: {k:?}");
                    assert!(k.example.as_deref().unwrap().contains(example), "{sql}: {k:?}");
                } else if !(broken == 2 && i == 1) {
                    assert!(k.passed, "{sql}: condition {} should pass: {k:?}", k.condition);
                }
            }
        }
    }
}
