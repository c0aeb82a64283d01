//! The eight tables of TPC-H (clause 1.4) and their secondary indexes, made for any engine's
//! [`crate::Dialect`] by the bulk load ([`crate::bulk`]), with the spec's types: identifiers `integer`,
//! money, quantities and rates `decimal(15,2)`, dates `date` (PostgreSQL's DATE; SQLite keeps the ISO
//! text), fixed and variable text as the spec sizes them.
//!
//! Primary keys are the spec's (clause 1.4.2.2); the two secondary indexes are on foreign keys, as clause
//! 1.5.4 allows: orders by customer (Q13's and Q22's joins) and lines by part and supplier (Q17's and Q20's
//! correlated subqueries, which without it scan LINEITEM once per outer row on both engines). Statistics
//! are gathered after the build (ANALYZE).

use crate::bulk::Table;

/// Index of REGION in [`TABLES`].
pub const REGION: usize = 0;
/// Index of NATION.
pub const NATION: usize = 1;
/// Index of SUPPLIER.
pub const SUPPLIER: usize = 2;
/// Index of PART.
pub const PART: usize = 3;
/// Index of PARTSUPP.
pub const PARTSUPP: usize = 4;
/// Index of CUSTOMER.
pub const CUSTOMER: usize = 5;
/// Index of ORDERS.
pub const ORDERS: usize = 6;
/// Index of LINEITEM.
pub const LINEITEM: usize = 7;

/// The tables.
pub static TABLES: [Table; 8] = [
    Table {
        name: "region",
        columns: &[("r_regionkey", "integer"), ("r_name", "char(25)"), ("r_comment", "varchar(152)")],
        key: &["r_regionkey"],
    },
    Table {
        name: "nation",
        columns: &[
            ("n_nationkey", "integer"),
            ("n_name", "char(25)"),
            ("n_regionkey", "integer"),
            ("n_comment", "varchar(152)"),
        ],
        key: &["n_nationkey"],
    },
    Table {
        name: "supplier",
        columns: &[
            ("s_suppkey", "integer"),
            ("s_name", "char(25)"),
            ("s_address", "varchar(40)"),
            ("s_nationkey", "integer"),
            ("s_phone", "char(15)"),
            ("s_acctbal", "decimal(15,2)"),
            ("s_comment", "varchar(101)"),
        ],
        key: &["s_suppkey"],
    },
    Table {
        name: "part",
        columns: &[
            ("p_partkey", "integer"),
            ("p_name", "varchar(55)"),
            ("p_mfgr", "char(25)"),
            ("p_brand", "char(10)"),
            ("p_type", "varchar(25)"),
            ("p_size", "integer"),
            ("p_container", "char(10)"),
            ("p_retailprice", "decimal(15,2)"),
            ("p_comment", "varchar(23)"),
        ],
        key: &["p_partkey"],
    },
    Table {
        name: "partsupp",
        columns: &[
            ("ps_partkey", "integer"),
            ("ps_suppkey", "integer"),
            ("ps_availqty", "integer"),
            ("ps_supplycost", "decimal(15,2)"),
            ("ps_comment", "varchar(199)"),
        ],
        key: &["ps_partkey", "ps_suppkey"],
    },
    Table {
        name: "customer",
        columns: &[
            ("c_custkey", "integer"),
            ("c_name", "varchar(25)"),
            ("c_address", "varchar(40)"),
            ("c_nationkey", "integer"),
            ("c_phone", "char(15)"),
            ("c_acctbal", "decimal(15,2)"),
            ("c_mktsegment", "char(10)"),
            ("c_comment", "varchar(117)"),
        ],
        key: &["c_custkey"],
    },
    Table {
        name: "orders",
        columns: &[
            ("o_orderkey", "bigint"),
            ("o_custkey", "integer"),
            ("o_orderstatus", "char(1)"),
            ("o_totalprice", "decimal(15,2)"),
            ("o_orderdate", "date"),
            ("o_orderpriority", "char(15)"),
            ("o_clerk", "char(15)"),
            ("o_shippriority", "integer"),
            ("o_comment", "varchar(79)"),
        ],
        key: &["o_orderkey"],
    },
    Table {
        name: "lineitem",
        columns: &[
            ("l_orderkey", "bigint"),
            ("l_partkey", "integer"),
            ("l_suppkey", "integer"),
            ("l_linenumber", "integer"),
            ("l_quantity", "decimal(15,2)"),
            ("l_extendedprice", "decimal(15,2)"),
            ("l_discount", "decimal(15,2)"),
            ("l_tax", "decimal(15,2)"),
            ("l_returnflag", "char(1)"),
            ("l_linestatus", "char(1)"),
            ("l_shipdate", "date"),
            ("l_commitdate", "date"),
            ("l_receiptdate", "date"),
            ("l_shipinstruct", "char(25)"),
            ("l_shipmode", "char(10)"),
            ("l_comment", "varchar(44)"),
        ],
        key: &["l_orderkey", "l_linenumber"],
    },
];

/// The secondary indexes, made after the load.
pub static INDEXES: [&str; 2] = [
    "CREATE INDEX orders_by_customer ON orders (o_custkey)",
    "CREATE INDEX lineitem_by_part_supplier ON lineitem (l_partkey, l_suppkey)",
];
