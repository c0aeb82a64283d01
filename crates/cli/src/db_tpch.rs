//! `iolab db tpch`: the TPC-H-derived query set on a real database. The flags become the library's setup
//! and `iolab_db::tpch` options; the rest is [`db_run::run`]'s (the harness, the session, the bars), and
//! the `iolab.dbtpch/1` document is saved in the catalog as kind `db_tpch`.

use crate::args::db::TpchArgs;
use crate::db_run::{self, number, Command, DbOutcome};
use crate::exit::{usage, ExitStatus};
use anyhow::Result;
use iolab_db::tpch::{self, queries, streams, Options, Tests, Tpch};
use iolab_report::db_tpch::TpchResult;

/// `--queries`: numbers 1 to 22, each once, in the order given.
fn query_list(text: &str) -> Result<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let n: u32 = part.trim_start_matches(['Q', 'q']).parse().map_err(|_| {
            usage(format!("invalid value '{text}' for '--queries': '{part}' is not a query number (1 to 22)"))
        })?;
        if !(1..=22).contains(&n) {
            return Err(usage(format!(
                "invalid value '{text}' for '--queries': TPC-H has queries 1 to 22, not {n}"
            )));
        }
        if out.contains(&n) {
            return Err(usage(format!("invalid value '{text}' for '--queries': query {n} twice")));
        }
        out.push(n);
    }
    if out.is_empty() {
        return Err(usage(format!("invalid value '{text}' for '--queries': no query")));
    }
    Ok(out)
}

/// `--scale`.
fn scale(text: &str) -> Result<f64> {
    let v: f64 = text.trim().parse().map_err(|_| {
        usage(format!("invalid value '{text}' for '--scale': expected a number such as 0.1 or 1"))
    })?;
    if !(tpch::MIN_SCALE..=tpch::MAX_SCALE).contains(&v) {
        return Err(usage(format!(
            "invalid value '{text}' for '--scale': expected {} to {} (below {} the spec's rule gives a part the same supplier twice)",
            tpch::MIN_SCALE,
            tpch::MAX_SCALE,
            tpch::MIN_SCALE
        )));
    }
    Ok(v)
}

fn options(a: &TpchArgs, seed: u64) -> Result<Options> {
    Ok(Options {
        scale: scale(&a.scale)?,
        runs: number("--runs", &a.runs, 1, 100)? as u32,
        queries: match &a.queries {
            Some(q) => query_list(q)?,
            None => queries::POWER_ORDER.to_vec(),
        },
        cold: !a.warm,
        seed,
    })
}

fn tests(a: &TpchArgs) -> Result<Tests> {
    Ok(Tests {
        refresh: a.refresh,
        streams: number("--streams", &a.streams, 0, u64::from(streams::MAX_STREAMS))? as u32,
    })
}

/// Runs `iolab db tpch`.
pub fn tpch(a: &TpchArgs) -> Result<ExitStatus> {
    let c = db_run::common(&a.common, a.url.as_deref())?;
    let o = options(a, c.seed)?;
    let cmd = Command {
        headline: format!("db tpch on {}, scale {}, seed {}", c.setup.database.name(), o.scale, o.seed),
        metrics: None,
        point_s: None,
        outcome,
    };
    db_run::run(&a.common, c.setup, Tpch::new(o, tests(a)?), cmd)
}

fn outcome(d: &TpchResult) -> DbOutcome<'_> {
    DbOutcome { doc: d, good: true }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_lists_and_scales_are_checked() {
        assert_eq!(query_list("1, 6,Q14").unwrap(), [1, 6, 14]);
        for bad in ["0", "23", "1,1", "x", ""] {
            assert!(query_list(bad).is_err(), "{bad}");
        }
        assert_eq!(scale("0.1").unwrap(), 0.1);
        assert!(scale("0.001").unwrap_err().to_string().contains("0.01 to 100"));
    }
}
