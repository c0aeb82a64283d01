//! A query's answer as it crosses the engine seam: its rows, and its columns' names as the database gave
//! them, so a workload reads each value by name (`row.int("d_next_o_id")`) rather than by a position that
//! silently shifts when a select list changes. A read that finds no such column, or a value of another
//! type, fails with a [`DbError`] naming the column and what the statement was for.
//!
//! The names are the driver's (rusqlite's `Statement::column_names`, postgres's `Statement::columns`): a
//! column's own name, or the alias an expression is given (`CAST(sum(d_next_o_id) AS bigint) AS
//! next_ids`); an expression without an alias is named differently by each engine, so every expression a
//! workload reads has one. They are shared by every row of an answer (and, where the engine keeps them
//! with its prepared statement, by every answer of that statement): a row is its cells alone.

use crate::{DbError, Value};
use std::sync::Arc;

/// The names of a result's columns, in order; shared, never copied per row.
pub type ColumnNames = Arc<[String]>;

/// A query's answer: its columns' names and its rows, each row's cells in the columns' order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    columns: ColumnNames,
    rows: Vec<Vec<Value>>,
}

impl Rows {
    /// An answer of `rows` under `columns` (each row as long as `columns`).
    pub fn new(columns: ColumnNames, rows: Vec<Vec<Value>>) -> Rows {
        debug_assert!(rows.iter().all(|r| r.len() == columns.len()));
        Rows { columns, rows }
    }

    /// The columns' names.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Row `index` (from 0); `purpose` (what the statement was for) names it in the errors of its reads
    /// and in the error returned when there is no such row.
    pub fn row<'a>(&'a self, index: usize, purpose: &'a str) -> Result<Row<'a>, DbError> {
        match self.rows.get(index) {
            Some(cells) => Ok(Row { columns: &self.columns, cells, purpose }),
            None => Err(DbError::fatal(format!(
                "{purpose}: no row {} (the query returned {})",
                index + 1,
                self.len()
            ))),
        }
    }

    /// The first row ([`Rows::row`] 0).
    pub fn first<'a>(&'a self, purpose: &'a str) -> Result<Row<'a>, DbError> {
        self.row(0, purpose)
    }

    /// Every row, in order, `purpose` naming them as in [`Rows::row`].
    pub fn iter<'a>(&'a self, purpose: &'a str) -> impl Iterator<Item = Row<'a>> {
        self.rows.iter().map(move |cells| Row { columns: &self.columns, cells, purpose })
    }

    /// The rows' cells, the names dropped.
    pub fn into_cells(self) -> Vec<Vec<Value>> {
        self.rows
    }
}

/// One row of [`Rows`], read by column name.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    columns: &'a [String],
    cells: &'a [Value],
    purpose: &'a str,
}

impl<'a> Row<'a> {
    /// The value of `column`; an error when the answer has no column of that name.
    pub fn value(&self, column: &str) -> Result<&'a Value, DbError> {
        match self.columns.iter().position(|c| c == column) {
            Some(i) => Ok(&self.cells[i]),
            None => Err(DbError::fatal(format!(
                "{}: the answer has no column {column} (its columns: {})",
                self.purpose,
                self.columns.join(", ")
            ))),
        }
    }

    /// `column`'s integer; an error when it is NULL or not an integer.
    pub fn int(&self, column: &str) -> Result<i64, DbError> {
        match self.value(column)? {
            Value::Int(v) => Ok(*v),
            other => Err(self.mismatch(column, other, "an integer")),
        }
    }

    /// `column`'s integer, `None` for NULL (an aggregate over no rows, a LEFT JOIN's missing side); an
    /// error when it is of another type.
    pub fn int_or_null(&self, column: &str) -> Result<Option<i64>, DbError> {
        match self.value(column)? {
            Value::Int(v) => Ok(Some(*v)),
            Value::Null => Ok(None),
            other => Err(self.mismatch(column, other, "an integer or NULL")),
        }
    }

    /// `column`'s number as a double (an integer converts); an error when it is NULL or not a number.
    pub fn real(&self, column: &str) -> Result<f64, DbError> {
        match self.value(column)? {
            Value::Real(v) => Ok(*v),
            Value::Int(v) => Ok(*v as f64),
            other => Err(self.mismatch(column, other, "a number")),
        }
    }

    /// `column`'s text; an error when it is NULL or not text.
    pub fn text(&self, column: &str) -> Result<&'a str, DbError> {
        match self.value(column)? {
            Value::Text(s) => Ok(s),
            other => Err(self.mismatch(column, other, "text")),
        }
    }

    /// The error of a read that found `found` in `column` where it wanted `wanted`.
    fn mismatch(&self, column: &str, found: &Value, wanted: &str) -> DbError {
        let found = match found {
            Value::Null => "NULL",
            Value::Int(_) => "an integer",
            Value::Real(_) => "a double",
            Value::Text(_) => "text",
        };
        DbError::fatal(format!("{}: column {column} is {found}, not {wanted}", self.purpose))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> Rows {
        let columns: ColumnNames = ["id", "name", "rate", "gone"].iter().map(|c| c.to_string()).collect();
        Rows::new(
            columns,
            vec![
                vec![Value::Int(7), Value::Text("x".into()), Value::Real(0.5), Value::Null],
                vec![Value::Int(8), Value::Text("y".into()), Value::Int(1), Value::Int(3)],
            ],
        )
    }

    #[test]
    fn a_row_is_read_by_column_name() {
        let rows = answer();
        let first = rows.first("the test").unwrap();
        assert_eq!(first.int("id").unwrap(), 7);
        assert_eq!(first.text("name").unwrap(), "x");
        assert_eq!(first.real("rate").unwrap(), 0.5);
        assert_eq!(first.int_or_null("gone").unwrap(), None);
        let second = rows.row(1, "the test").unwrap();
        assert_eq!((second.real("rate").unwrap(), second.int_or_null("gone").unwrap()), (1.0, Some(3)));
        let ids: Vec<i64> = rows.iter("the test").map(|r| r.int("id").unwrap()).collect();
        assert_eq!(ids, [7, 8]);
    }

    #[test]
    fn a_missing_row_or_column_and_a_wrong_type_say_which_and_what_for() {
        let rows = answer();
        let message = |e: DbError| e.message;
        assert_eq!(
            message(rows.row(2, "the stock").unwrap_err()),
            "the stock: no row 3 (the query returned 2)"
        );
        let first = rows.first("the stock").unwrap();
        assert_eq!(
            message(first.int("s_qty").unwrap_err()),
            "the stock: the answer has no column s_qty (its columns: id, name, rate, gone)"
        );
        assert_eq!(message(first.int("name").unwrap_err()), "the stock: column name is text, not an integer");
        assert_eq!(message(first.int("gone").unwrap_err()), "the stock: column gone is NULL, not an integer");
        assert_eq!(message(first.text("rate").unwrap_err()), "the stock: column rate is a double, not text");
        assert!(!first.int("gone").unwrap_err().retryable);
    }
}
