//! `iolab db tpch`: the TPC-H-derived query set on a real database. The flags become `iolab-db` options,
//! the directory, `--json` and `--capture` are claimed before anything is made, the directory, memory limit
//! and engine are made ([`crate::db_setup`]), the data is generated and loaded and the queries run, and the
//! engine, limit and directory are undone on every path; the `iolab.dbtpch/1` document is saved in the
//! catalog (kind `db_tpch`, as `iolab db tpcc` saves), printed and written, then the capture.

use crate::args::db::TpchArgs;
use crate::db_setup::BuildShown;
use crate::db_setup::{self, number};
use crate::exit::{usage, ExitStatus};
use crate::progress::DbBars;
use anyhow::Result;
use iolab_db::tpch::{self, queries, streams, Options, Tests};
use iolab_db::Observer;
use iolab_device::WriteGate;

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

fn options(a: &TpchArgs) -> Result<Options> {
    Ok(Options {
        scale: scale(&a.scale)?,
        runs: number("--runs", &a.runs, 1, 100)? as u32,
        queries: match &a.queries {
            Some(q) => query_list(q)?,
            None => queries::POWER_ORDER.to_vec(),
        },
        cold: !a.warm,
        seed: db_setup::seed(a.common.seed.as_deref())?,
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
    let o = options(a)?;
    let tests = tests(a)?;
    let c = &a.common;
    let (session, saver) = c.begin(WriteGate::new(), a.url.as_deref())?;
    session.watch.notice(&format!("db tpch on {}, scale {}, seed {}", c.engine, o.scale, o.seed));
    // The loaders, or the throughput test's query streams and refresh stream, and room to spare.
    let connections = iolab_db::bulk::MAX_LOADERS.max(tests.streams + 1) + 10;
    let shown = BuildShown { watch: &session.watch, bars: DbBars::new(session.live) };
    let result = session.run(connections, None, "iolab db tpch", |engine| {
        tpch::run_tests(engine, &o, &tests, &session.stop, &shown)
    });
    shown.bars.finish();
    let (mut doc, limits) = result?;
    limits.add_to(&mut doc.engine.settings, &mut doc.warnings, &doc.devices, doc.engine.size_bytes);
    session.save_and_output(saver.as_ref(), &doc)?;
    Ok(ExitStatus::Ok)
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
