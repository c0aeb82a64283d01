//! YCSB's table and its load: `usertable`, a text key and ten text fields of 100 bytes each (YCSB's
//! `fieldcount` and `fieldlength`), loaded through the crate's bulk load ([`crate::bulk`]) in units of
//! [`UNIT_RECORDS`] records, each unit from its own stream of the seed, so the data is the same whatever the
//! number of loaders.

use super::keys;
use crate::bulk::{self, Load, OnRows, Table, Writer};
use crate::database::Database;
use crate::{Value, WorkloadError};
use iolab_rng::Rng;
use std::sync::atomic::AtomicBool;

/// The fields of a record (YCSB's `fieldcount`).
pub const FIELDS: usize = 10;

/// Bytes of each field (YCSB's `fieldlength`).
pub const FIELD_BYTES: usize = 100;

/// Records per unit of the load.
pub const UNIT_RECORDS: u64 = 10_000;

/// The table: the key and the fields, named as YCSB's JDBC binding names them.
pub static TABLES: [Table; 1] = [Table {
    name: "usertable",
    columns: &[
        ("ycsb_key", "varchar(64)"),
        ("field0", "text"),
        ("field1", "text"),
        ("field2", "text"),
        ("field3", "text"),
        ("field4", "text"),
        ("field5", "text"),
        ("field6", "text"),
        ("field7", "text"),
        ("field8", "text"),
        ("field9", "text"),
    ],
    key: &["ycsb_key"],
}];

/// What the build did.
pub type Built = bulk::Built<1>;

/// A field's value: [`FIELD_BYTES`] printable characters from `rng` (YCSB fills its fields with random
/// printable bytes too).
pub fn field(rng: &mut Rng) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(FIELD_BYTES);
    let mut bits = 0u64;
    for i in 0..FIELD_BYTES {
        if i % 10 == 0 {
            bits = rng.next_u64();
        }
        s.push(ALPHABET[(bits & 63) as usize] as char);
        bits >>= 6;
    }
    s
}

/// Record `n`'s row: its key and its fields, drawn from `rng`.
pub fn row(n: u64, rng: &mut Rng) -> Vec<Value> {
    let mut row = Vec::with_capacity(FIELDS + 1);
    row.push(Value::Text(keys::key(n)));
    row.extend((0..FIELDS).map(|_| Value::Text(field(rng))));
    row
}

/// Loads records `first..end` (one unit), from the unit's own stream of `seed`.
fn unit(out: &mut Writer<'_, 1>, (first, end): &(u64, u64), seed: u64) -> Result<(), WorkloadError> {
    let mut rng = Rng::for_worker(seed, (first / UNIT_RECORDS) as u32);
    for n in *first..*end {
        out.push(0, row(n, &mut rng))?;
    }
    Ok(())
}

/// Builds a table of `records` records from `seed`; `on_rows` is told of the rows as they load.
pub fn build(
    database: &dyn Database,
    records: u64,
    seed: u64,
    stop: &AtomicBool,
    on_rows: OnRows<'_>,
) -> Result<Built, WorkloadError> {
    let units: Vec<(u64, u64)> = (0..records.div_ceil(UNIT_RECORDS))
        .map(|u| (u * UNIT_RECORDS, ((u + 1) * UNIT_RECORDS).min(records)))
        .collect();
    let generate = |out: &mut Writer<'_, 1>, u: &(u64, u64)| unit(out, u, seed);
    let plan = Load { tables: &TABLES, indexes: &[], first: Vec::new(), units, generate: &generate };
    bulk::build(database, &plan, stop, on_rows)
}
