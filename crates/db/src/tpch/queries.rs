//! The 22 queries of TPC-H (clause 2.4), with the spec's validation parameters (the "Query Validation"
//! values of each query's definition, clause 2.4.x.3), in SQL that SQLite and PostgreSQL both accept.
//!
//! Where the spec's text is changed, the change keeps the answer and is listed in [`Query::rewrite`]:
//!
//! - date arithmetic (`date '1998-12-01' - interval '90' day`) is done here, and the date written as a
//!   literal (`'1998-09-02'`): SQLite has no interval type, and PostgreSQL reads the quoted literal as a
//!   date where it meets a date column;
//! - `extract(year from d)` is the engine's ([`year`]): SQLite has no `extract`, so there it is the
//!   year's four digits of the ISO text;
//! - Q13's derived table names its columns inside (`count(o_orderkey) as c_count`) rather than in an alias
//!   list (`as c_orders (c_custkey, c_count)`), which SQLite does not accept;
//! - Q15's view is a common table expression (the spec's own variant, Appendix B), so the query set
//!   creates and drops nothing;
//! - Q19's join condition `p_partkey = l_partkey`, repeated in each of its three ORed branches, is written
//!   once before them: SQLite's planner does not factor it out and would join every line with every part;
//! - Q22's `substring(c_phone from 1 for 2)` is `substr(c_phone, 1, 2)`, which both accept.
//!
//! None is impossible on either engine.

/// One query.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    /// Its number, 1 to 22.
    pub number: u32,
    /// The spec's name for it.
    pub title: &'static str,
    /// How the text here differs from the spec's, beyond date arithmetic done in advance.
    pub rewrite: Option<&'static str>,
    /// Its SQL, `@year(col)` standing for the year of date column `col` and `@fraction` for Q11's
    /// FRACTION ([`text`] fills them in for an engine and a scale).
    pub sql: &'static str,
}

/// The queries, by number.
pub static QUERIES: [Query; 22] = [
    Query {
        number: 1,
        title: "pricing summary report",
        rewrite: None,
        sql: "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price, \
            sum(l_extendedprice * (1 - l_discount)) as sum_disc_price, \
            sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge, avg(l_quantity) as avg_qty, \
            avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order \
            from lineitem where l_shipdate <= '1998-09-02' \
            group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus",
    },
    Query {
        number: 2,
        title: "minimum cost supplier",
        rewrite: None,
        sql: "select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment \
            from part, supplier, partsupp, nation, region \
            where p_partkey = ps_partkey and s_suppkey = ps_suppkey and p_size = 15 and p_type like '%BRASS' \
            and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = 'EUROPE' \
            and ps_supplycost = (select min(ps_supplycost) from partsupp, supplier, nation, region \
            where p_partkey = ps_partkey and s_suppkey = ps_suppkey and s_nationkey = n_nationkey \
            and n_regionkey = r_regionkey and r_name = 'EUROPE') \
            order by s_acctbal desc, n_name, s_name, p_partkey limit 100",
    },
    Query {
        number: 3,
        title: "shipping priority",
        rewrite: None,
        sql: "select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority \
            from customer, orders, lineitem \
            where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey \
            and o_orderdate < '1995-03-15' and l_shipdate > '1995-03-15' \
            group by l_orderkey, o_orderdate, o_shippriority order by revenue desc, o_orderdate limit 10",
    },
    Query {
        number: 4,
        title: "order priority checking",
        rewrite: None,
        sql: "select o_orderpriority, count(*) as order_count from orders \
            where o_orderdate >= '1993-07-01' and o_orderdate < '1993-10-01' \
            and exists (select * from lineitem where l_orderkey = o_orderkey and l_commitdate < l_receiptdate) \
            group by o_orderpriority order by o_orderpriority",
    },
    Query {
        number: 5,
        title: "local supplier volume",
        rewrite: None,
        sql: "select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue \
            from customer, orders, lineitem, supplier, nation, region \
            where c_custkey = o_custkey and l_orderkey = o_orderkey and l_suppkey = s_suppkey \
            and c_nationkey = s_nationkey and s_nationkey = n_nationkey and n_regionkey = r_regionkey \
            and r_name = 'ASIA' and o_orderdate >= '1994-01-01' and o_orderdate < '1995-01-01' \
            group by n_name order by revenue desc",
    },
    Query {
        number: 6,
        title: "forecasting revenue change",
        rewrite: None,
        sql: "select sum(l_extendedprice * l_discount) as revenue from lineitem \
            where l_shipdate >= '1994-01-01' and l_shipdate < '1995-01-01' \
            and l_discount between 0.05 and 0.07 and l_quantity < 24",
    },
    Query {
        number: 7,
        title: "volume shipping",
        rewrite: Some("extract(year from ...) is the engine's (SQLite: the ISO date's first four digits)"),
        sql: "select supp_nation, cust_nation, l_year, sum(volume) as revenue from (\
            select n1.n_name as supp_nation, n2.n_name as cust_nation, @year(l_shipdate) as l_year, \
            l_extendedprice * (1 - l_discount) as volume \
            from supplier, lineitem, orders, customer, nation n1, nation n2 \
            where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey \
            and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey \
            and ((n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY') or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE')) \
            and l_shipdate between '1995-01-01' and '1996-12-31') as shipping \
            group by supp_nation, cust_nation, l_year order by supp_nation, cust_nation, l_year",
    },
    Query {
        number: 8,
        title: "national market share",
        rewrite: Some("extract(year from ...) is the engine's (SQLite: the ISO date's first four digits)"),
        sql: "select o_year, sum(case when nation = 'BRAZIL' then volume else 0 end) / sum(volume) as mkt_share from (\
            select @year(o_orderdate) as o_year, l_extendedprice * (1 - l_discount) as volume, n2.n_name as nation \
            from part, supplier, lineitem, orders, customer, nation n1, nation n2, region \
            where p_partkey = l_partkey and s_suppkey = l_suppkey and l_orderkey = o_orderkey \
            and o_custkey = c_custkey and c_nationkey = n1.n_nationkey and n1.n_regionkey = r_regionkey \
            and r_name = 'AMERICA' and s_nationkey = n2.n_nationkey \
            and o_orderdate between '1995-01-01' and '1996-12-31' and p_type = 'ECONOMY ANODIZED STEEL') as all_nations \
            group by o_year order by o_year",
    },
    Query {
        number: 9,
        title: "product type profit measure",
        rewrite: Some("extract(year from ...) is the engine's (SQLite: the ISO date's first four digits)"),
        sql: "select nation, o_year, sum(amount) as sum_profit from (\
            select n_name as nation, @year(o_orderdate) as o_year, \
            l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount \
            from part, supplier, lineitem, partsupp, orders, nation \
            where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey \
            and p_partkey = l_partkey and o_orderkey = l_orderkey and s_nationkey = n_nationkey \
            and p_name like '%green%') as profit \
            group by nation, o_year order by nation, o_year desc",
    },
    Query {
        number: 10,
        title: "returned item reporting",
        rewrite: None,
        sql: "select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue, c_acctbal, n_name, \
            c_address, c_phone, c_comment from customer, orders, lineitem, nation \
            where c_custkey = o_custkey and l_orderkey = o_orderkey \
            and o_orderdate >= '1993-10-01' and o_orderdate < '1994-01-01' \
            and l_returnflag = 'R' and c_nationkey = n_nationkey \
            group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment \
            order by revenue desc limit 20",
    },
    Query {
        number: 11,
        title: "important stock identification",
        rewrite: None,
        sql: "select ps_partkey, sum(ps_supplycost * ps_availqty) as value from partsupp, supplier, nation \
            where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = 'GERMANY' \
            group by ps_partkey having sum(ps_supplycost * ps_availqty) > (\
            select sum(ps_supplycost * ps_availqty) * @fraction from partsupp, supplier, nation \
            where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = 'GERMANY') \
            order by value desc",
    },
    Query {
        number: 12,
        title: "shipping modes and order priority",
        rewrite: None,
        sql: "select l_shipmode, \
            sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count, \
            sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end) as low_line_count \
            from orders, lineitem \
            where o_orderkey = l_orderkey and l_shipmode in ('MAIL', 'SHIP') and l_commitdate < l_receiptdate \
            and l_shipdate < l_commitdate and l_receiptdate >= '1994-01-01' and l_receiptdate < '1995-01-01' \
            group by l_shipmode order by l_shipmode",
    },
    Query {
        number: 13,
        title: "customer distribution",
        rewrite: Some("the derived table names its columns inside it, not in an alias list (SQLite)"),
        sql: "select c_count, count(*) as custdist from (\
            select c_custkey, count(o_orderkey) as c_count from customer left outer join orders \
            on c_custkey = o_custkey and o_comment not like '%special%requests%' group by c_custkey) as c_orders \
            group by c_count order by custdist desc, c_count desc",
    },
    Query {
        number: 14,
        title: "promotion effect",
        rewrite: None,
        sql: "select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end) \
            / sum(l_extendedprice * (1 - l_discount)) as promo_revenue from lineitem, part \
            where l_partkey = p_partkey and l_shipdate >= '1995-09-01' and l_shipdate < '1995-10-01'",
    },
    Query {
        number: 15,
        title: "top supplier",
        rewrite: Some("the view revenue0 is a common table expression (the spec's variant, Appendix B)"),
        sql: "with revenue0 as (select l_suppkey as supplier_no, sum(l_extendedprice * (1 - l_discount)) as total_revenue \
            from lineitem where l_shipdate >= '1996-01-01' and l_shipdate < '1996-04-01' group by l_suppkey) \
            select s_suppkey, s_name, s_address, s_phone, total_revenue from supplier, revenue0 \
            where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from revenue0) \
            order by s_suppkey",
    },
    Query {
        number: 16,
        title: "parts/supplier relationship",
        rewrite: None,
        sql: "select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt from partsupp, part \
            where p_partkey = ps_partkey and p_brand <> 'Brand#45' and p_type not like 'MEDIUM POLISHED%' \
            and p_size in (49, 14, 23, 45, 19, 3, 36, 9) \
            and ps_suppkey not in (select s_suppkey from supplier where s_comment like '%Customer%Complaints%') \
            group by p_brand, p_type, p_size order by supplier_cnt desc, p_brand, p_type, p_size",
    },
    Query {
        number: 17,
        title: "small-quantity-order revenue",
        rewrite: None,
        sql: "select sum(l_extendedprice) / 7.0 as avg_yearly from lineitem, part \
            where p_partkey = l_partkey and p_brand = 'Brand#23' and p_container = 'MED BOX' \
            and l_quantity < (select 0.2 * avg(l_quantity) from lineitem where l_partkey = p_partkey)",
    },
    Query {
        number: 18,
        title: "large volume customer",
        rewrite: None,
        sql: "select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) as sum_qty \
            from customer, orders, lineitem \
            where o_orderkey in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300) \
            and c_custkey = o_custkey and o_orderkey = l_orderkey \
            group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice \
            order by o_totalprice desc, o_orderdate limit 100",
    },
    Query {
        number: 19,
        title: "discounted revenue",
        rewrite: Some(
        "p_partkey = l_partkey, in each of the three ORed branches, is written once before them (SQLite would join every line with every part)",
        ),
        sql: "select sum(l_extendedprice * (1 - l_discount)) as revenue from lineitem, part \
            where p_partkey = l_partkey and (\
            (p_brand = 'Brand#12' and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') \
            and l_quantity >= 1 and l_quantity <= 11 and p_size between 1 and 5 \
            and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON') \
            or (p_brand = 'Brand#23' and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') \
            and l_quantity >= 10 and l_quantity <= 20 and p_size between 1 and 10 \
            and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON') \
            or (p_brand = 'Brand#34' and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') \
            and l_quantity >= 20 and l_quantity <= 30 and p_size between 1 and 15 \
            and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON'))",
    },
    Query {
        number: 20,
        title: "potential part promotion",
        rewrite: None,
        sql: "select s_name, s_address from supplier, nation \
            where s_suppkey in (select ps_suppkey from partsupp \
            where ps_partkey in (select p_partkey from part where p_name like 'forest%') \
            and ps_availqty > (select 0.5 * sum(l_quantity) from lineitem \
            where l_partkey = ps_partkey and l_suppkey = ps_suppkey \
            and l_shipdate >= '1994-01-01' and l_shipdate < '1995-01-01')) \
            and s_nationkey = n_nationkey and n_name = 'CANADA' order by s_name",
    },
    Query {
        number: 21,
        title: "suppliers who kept orders waiting",
        rewrite: None,
        sql: "select s_name, count(*) as numwait from supplier, lineitem l1, orders, nation \
            where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey and o_orderstatus = 'F' \
            and l1.l_receiptdate > l1.l_commitdate \
            and exists (select * from lineitem l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey) \
            and not exists (select * from lineitem l3 where l3.l_orderkey = l1.l_orderkey \
            and l3.l_suppkey <> l1.l_suppkey and l3.l_receiptdate > l3.l_commitdate) \
            and s_nationkey = n_nationkey and n_name = 'SAUDI ARABIA' \
            group by s_name order by numwait desc, s_name limit 100",
    },
    Query {
        number: 22,
        title: "global sales opportunity",
        rewrite: Some("substring(c_phone from 1 for 2) is substr(c_phone, 1, 2)"),
        sql: "select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal from (\
            select substr(c_phone, 1, 2) as cntrycode, c_acctbal from customer \
            where substr(c_phone, 1, 2) in ('13', '31', '23', '29', '30', '18', '17') \
            and c_acctbal > (select avg(c_acctbal) from customer where c_acctbal > 0.00 \
            and substr(c_phone, 1, 2) in ('13', '31', '23', '29', '30', '18', '17')) \
            and not exists (select * from orders where o_custkey = c_custkey)) as custsale \
            group by cntrycode order by cntrycode",
    },
];

/// The order of the power test's query stream (stream 00, TPC-H Appendix A).
pub const POWER_ORDER: [u32; 22] =
    [14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12];

/// The year of date column `col` on engine `engine` (`sqlite`: the ISO text's first four digits; else
/// the standard `extract`).
pub fn year(engine: &str, col: &str) -> String {
    if engine == "sqlite" {
        format!("cast(substr({col}, 1, 4) as integer)")
    } else {
        format!("extract(year from {col})")
    }
}

/// Query `number`'s text for `engine` at scale factor `sf`: its [`Query::sql`] with `@year(col)` the
/// engine's ([`year`]) and `@fraction` Q11's, 0.0001 / SF (`fraction`).
pub fn text(number: u32, engine: &str, sf: f64) -> String {
    let q = QUERIES
        .get((number as usize).wrapping_sub(1))
        .unwrap_or_else(|| panic!("TPC-H has no query {number}"));
    let mut sql = q.sql.replace("@fraction", &fraction(sf));
    for col in ["l_shipdate", "o_orderdate"] {
        sql = sql.replace(&format!("@year({col})"), &year(engine, col));
    }
    sql
}

/// Q11's FRACTION, 0.0001 / SF, as a decimal literal.
fn fraction(sf: f64) -> String {
    let s = format!("{:.12}", 0.0001 / sf);
    let s = s.trim_end_matches('0');
    if s.ends_with('.') {
        format!("{s}0")
    } else {
        s.to_string()
    }
}

/// The query of number `n`.
pub fn query(n: u32) -> &'static Query {
    &QUERIES[(n - 1) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_has_text_on_both_engines_and_the_power_order_is_a_permutation() {
        let mut seen = POWER_ORDER.to_vec();
        seen.sort();
        assert_eq!(seen, (1..=22).collect::<Vec<u32>>());
        for q in &QUERIES {
            assert_eq!(query(q.number).number, q.number);
            for engine in ["sqlite", "postgres"] {
                let t = text(q.number, engine, 0.01);
                assert!(t.starts_with("select") || t.starts_with("with"), "{t}");
                assert!(!t.contains("interval"), "Q{}: dates are computed in advance", q.number);
            }
        }
        assert!(text(7, "sqlite", 1.0).contains("substr(l_shipdate, 1, 4)"));
        assert!(text(7, "postgres", 1.0).contains("extract(year from l_shipdate)"));
        assert_eq!(fraction(1.0), "0.0001");
        assert_eq!(fraction(0.01), "0.01");
        assert_eq!(fraction(0.0001), "1.0");
    }
}
