//! Payment (clause 2.5): a customer pays an amount into a district of the home warehouse; 85 % of
//! customers are the district's own, 15 % one of a remote warehouse's; 60 % are found by last name.
//!
//! Implementation choices: the warehouse's and the district's year-to-date totals are each added to with
//! one `UPDATE ... RETURNING` that reads back their names for the history row; the customer is read
//! `FOR UPDATE` where the dialect locks that way, and one found by last name is the one at position n/2
//! rounded up of those sorted by first name (`Terminal::customer_by_name`); a bad-credit customer's
//! `c_data` is read in a statement of its own and written back with the payment in front, cut to 500
//! characters; money is integer cents.

use super::{now_s, Ran, Terminal};
use crate::database::{self, Conn, TxKind, TxOutcome};
use crate::tpcc::load::DISTRICTS;
use crate::tpcc::rand::uniform;
use crate::DbError;

/// A payment's inputs: where it is paid (the home warehouse, a district of it), the customer's warehouse
/// and district, and the amount in cents.
#[derive(Clone, Copy, Debug)]
struct Paid {
    w: i64,
    d: i64,
    c_w: i64,
    c_d: i64,
    amount: i64,
}

impl Terminal {
    /// Payment (2.5): 85 % to a customer of the home warehouse, 15 % to one of a remote warehouse; 60 % by
    /// last name.
    pub fn payment(&mut self, conn: &mut dyn Conn, retries: &mut u64) -> Result<Ran, DbError> {
        let w = self.w_id as i64;
        let d = uniform(&mut self.rng, 1, DISTRICTS) as i64;
        let local = self.warehouses == 1 || uniform(&mut self.rng, 1, 100) <= 85;
        let (c_w, c_d) = if local {
            (w, d)
        } else {
            (self.other_warehouse() as i64, uniform(&mut self.rng, 1, DISTRICTS) as i64)
        };
        let (last, id) = self.customer();
        let paid = Paid { w, d, c_w, c_d, amount: uniform(&mut self.rng, 100, 500_000) as i64 };
        let customer_sql = format!(
            "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, \
             c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer \
             WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3{}",
            self.for_update
        );
        let done = database::transaction(conn, TxKind::Write, retries, |conn| {
            let h_data = add_to_totals(conn, &paid)?;
            let c = match &last {
                Some(name) => Self::customer_by_name(conn, c_w, c_d, name)?,
                None => id as i64,
            };
            charge_customer(conn, &customer_sql, &paid, c)?;
            conn.execute(
                "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    c.into(),
                    c_d.into(),
                    c_w.into(),
                    d.into(),
                    w.into(),
                    now_s().into(),
                    paid.amount.into(),
                    h_data.into(),
                ],
            )?;
            Ok(TxOutcome::Commit)
        })?;
        Ok(Ran { done, skipped: 0 })
    }
}

/// Adds the amount to the warehouse's and the district's year-to-date totals; returns the history row's
/// data (the two names).
fn add_to_totals(conn: &mut dyn Conn, p: &Paid) -> Result<String, DbError> {
    let wh = conn.query(
        "UPDATE warehouse SET w_ytd = w_ytd + $2 WHERE w_id = $1 \
         RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip",
        &[p.w.into(), p.amount.into()],
    )?;
    let dist = conn.query(
        "UPDATE district SET d_ytd = d_ytd + $3 WHERE d_w_id = $1 AND d_id = $2 \
         RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip",
        &[p.w.into(), p.d.into(), p.amount.into()],
    )?;
    let w_name = wh.first("payment's warehouse")?.text("w_name")?;
    let d_name = dist.first("payment's district")?.text("d_name")?;
    Ok(format!("{w_name}    {d_name}"))
}

/// Reads customer `c` (with `customer_sql`, locking it where the dialect does) and takes the payment from
/// its balance; a bad-credit customer's data gets the payment in front.
fn charge_customer(conn: &mut dyn Conn, customer_sql: &str, p: &Paid, c: i64) -> Result<(), DbError> {
    let Paid { w, d, c_w, c_d, amount } = *p;
    let cust = conn.query(customer_sql, &[c_w.into(), c_d.into(), c.into()])?;
    if cust.is_empty() {
        return Err(DbError::fatal(format!("no customer {c} in warehouse {c_w}, district {c_d}")));
    }
    if cust.first("payment's customer")?.text("c_credit")? == "BC" {
        let data = conn.query(
            "SELECT c_data FROM customer WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
            &[c_w.into(), c_d.into(), c.into()],
        )?;
        let old = data.first("payment's bad-credit customer")?.text("c_data")?;
        let mut new = format!("{c} {c_d} {c_w} {d} {w} {}.{:02}|{old}", amount / 100, amount % 100);
        new.truncate(500);
        conn.execute(
            "UPDATE customer SET c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, \
             c_payment_cnt = c_payment_cnt + 1, c_data = $5 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
            &[c_w.into(), c_d.into(), c.into(), amount.into(), new.into()],
        )?;
    } else {
        conn.execute(
            "UPDATE customer SET c_balance = c_balance - $4, c_ytd_payment = c_ytd_payment + $4, \
             c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = $1 AND c_d_id = $2 AND c_id = $3",
            &[c_w.into(), c_d.into(), c.into(), amount.into()],
        )?;
    }
    Ok(())
}
