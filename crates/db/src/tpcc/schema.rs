//! The nine tables of TPC-C (clause 1.3) and their secondary indexes, made for any engine's
//! [`crate::Dialect`] by the bulk load ([`crate::bulk::create_tables`], [`crate::bulk::after_load`]).
//!
//! Deviations, all for exactness or portability, none changing the access pattern: money is integer cents
//! (`bigint`: sums are exact, so the consistency conditions compare exactly, as DECIMAL would), times are
//! seconds since the epoch (`bigint`), rates are `double precision`. Primary keys are the spec's; the
//! secondary indexes are the two every implementation adds (HammerDB, go-tpc): customers by last name, and
//! orders by customer, for Payment and Order-Status by name and an Order-Status's last order.

use crate::bulk::Table;

/// The tables, in the order they are loaded.
pub static TABLES: [Table; 9] = [
    Table {
        name: "item",
        columns: &[
            ("i_id", "integer"),
            ("i_im_id", "integer"),
            ("i_name", "varchar(24)"),
            ("i_price", "bigint"),
            ("i_data", "varchar(50)"),
        ],
        key: &["i_id"],
    },
    Table {
        name: "warehouse",
        columns: &[
            ("w_id", "integer"),
            ("w_name", "varchar(10)"),
            ("w_street_1", "varchar(20)"),
            ("w_street_2", "varchar(20)"),
            ("w_city", "varchar(20)"),
            ("w_state", "char(2)"),
            ("w_zip", "char(9)"),
            ("w_tax", "double precision"),
            ("w_ytd", "bigint"),
        ],
        key: &["w_id"],
    },
    Table {
        name: "stock",
        columns: &[
            ("s_i_id", "integer"),
            ("s_w_id", "integer"),
            ("s_quantity", "integer"),
            ("s_dist_01", "char(24)"),
            ("s_dist_02", "char(24)"),
            ("s_dist_03", "char(24)"),
            ("s_dist_04", "char(24)"),
            ("s_dist_05", "char(24)"),
            ("s_dist_06", "char(24)"),
            ("s_dist_07", "char(24)"),
            ("s_dist_08", "char(24)"),
            ("s_dist_09", "char(24)"),
            ("s_dist_10", "char(24)"),
            ("s_ytd", "integer"),
            ("s_order_cnt", "integer"),
            ("s_remote_cnt", "integer"),
            ("s_data", "varchar(50)"),
        ],
        key: &["s_w_id", "s_i_id"],
    },
    Table {
        name: "district",
        columns: &[
            ("d_id", "integer"),
            ("d_w_id", "integer"),
            ("d_name", "varchar(10)"),
            ("d_street_1", "varchar(20)"),
            ("d_street_2", "varchar(20)"),
            ("d_city", "varchar(20)"),
            ("d_state", "char(2)"),
            ("d_zip", "char(9)"),
            ("d_tax", "double precision"),
            ("d_ytd", "bigint"),
            ("d_next_o_id", "integer"),
        ],
        key: &["d_w_id", "d_id"],
    },
    Table {
        name: "customer",
        columns: &[
            ("c_id", "integer"),
            ("c_d_id", "integer"),
            ("c_w_id", "integer"),
            ("c_first", "varchar(16)"),
            ("c_middle", "char(2)"),
            ("c_last", "varchar(16)"),
            ("c_street_1", "varchar(20)"),
            ("c_street_2", "varchar(20)"),
            ("c_city", "varchar(20)"),
            ("c_state", "char(2)"),
            ("c_zip", "char(9)"),
            ("c_phone", "char(16)"),
            ("c_since", "bigint"),
            ("c_credit", "char(2)"),
            ("c_credit_lim", "bigint"),
            ("c_discount", "double precision"),
            ("c_balance", "bigint"),
            ("c_ytd_payment", "bigint"),
            ("c_payment_cnt", "integer"),
            ("c_delivery_cnt", "integer"),
            ("c_data", "varchar(500)"),
        ],
        key: &["c_w_id", "c_d_id", "c_id"],
    },
    Table {
        name: "history",
        columns: &[
            ("h_c_id", "integer"),
            ("h_c_d_id", "integer"),
            ("h_c_w_id", "integer"),
            ("h_d_id", "integer"),
            ("h_w_id", "integer"),
            ("h_date", "bigint"),
            ("h_amount", "bigint"),
            ("h_data", "varchar(24)"),
        ],
        key: &[],
    },
    Table {
        name: "orders",
        columns: &[
            ("o_id", "integer"),
            ("o_d_id", "integer"),
            ("o_w_id", "integer"),
            ("o_c_id", "integer"),
            ("o_entry_d", "bigint"),
            ("o_carrier_id", "integer"),
            ("o_ol_cnt", "integer"),
            ("o_all_local", "integer"),
        ],
        key: &["o_w_id", "o_d_id", "o_id"],
    },
    Table {
        name: "order_line",
        columns: &[
            ("ol_o_id", "integer"),
            ("ol_d_id", "integer"),
            ("ol_w_id", "integer"),
            ("ol_number", "integer"),
            ("ol_i_id", "integer"),
            ("ol_supply_w_id", "integer"),
            ("ol_delivery_d", "bigint"),
            ("ol_quantity", "integer"),
            ("ol_amount", "bigint"),
            ("ol_dist_info", "char(24)"),
        ],
        key: &["ol_w_id", "ol_d_id", "ol_o_id", "ol_number"],
    },
    Table {
        name: "new_order",
        columns: &[("no_o_id", "integer"), ("no_d_id", "integer"), ("no_w_id", "integer")],
        key: &["no_w_id", "no_d_id", "no_o_id"],
    },
];

/// The table named `name`.
pub fn table(name: &str) -> &'static Table {
    TABLES.iter().find(|t| t.name == name).expect("a TPC-C table")
}

/// The secondary indexes, made after the load.
pub static INDEXES: [&str; 2] = [
    "CREATE INDEX customer_by_name ON customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE INDEX orders_by_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
];
