//! The throughput test (clause 5.3.4): S query streams at once, each on its own connection running the
//! queries in the order of the spec's Appendix A for its stream number ([`STREAM_ORDER`], stream s taking
//! row s mod 41), and with refresh one refresh stream beside them running S refresh pairs back to back
//! (pairs 2 to S + 1: the power test had pair 1). Every stream connects before any starts; the test's
//! elapsed time runs from the first stream's start to the last one's end, the refresh stream included
//! (the spec's Ts), and the devices under the database are read over the whole of it.

use super::gen::{Scale, TextPool};
use super::{queries, refresh};
use crate::database::Database;
use crate::devices::DeviceWindow;
use crate::{DbError, WorkloadError};
use iolab_report::db_tpch::{TpchRefresh, TpchStream, TpchStreamQuery, TpchThroughput};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Instant;

/// The spec's Appendix A: the query order of stream s is row s mod 41 (row 0 is the power test's).
pub static STREAM_ORDER: [[u32; 22]; 41] = [
    [14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12],
    [21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4],
    [6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21],
    [8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3],
    [5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20],
    [21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9],
    [10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21],
    [18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12],
    [19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11],
    [8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16],
    [6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5],
    [15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7],
    [1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15],
    [21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19],
    [2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6],
    [16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18],
    [1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21],
    [3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12],
    [14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16],
    [4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1],
    [16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8],
    [20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2],
    [16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17],
    [18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7],
    [7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16],
    [18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9],
    [13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16],
    [14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19],
    [10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11],
    [10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4],
    [7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2],
    [2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22],
    [15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2],
    [15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1],
    [1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2],
    [14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11],
    [9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19],
    [13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20],
    [20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9],
    [3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2],
    [13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19],
];

/// Query streams at most.
pub const MAX_STREAMS: u32 = 64;

/// The order of stream `s`: its row of [`STREAM_ORDER`], keeping only the queries in `chosen`.
pub fn stream_order(s: u32, chosen: &[u32]) -> Vec<u32> {
    STREAM_ORDER[(s % 41) as usize].iter().copied().filter(|q| chosen.contains(q)).collect()
}

/// What the throughput test needs.
pub struct Test<'a> {
    /// Query streams.
    pub streams: u32,
    /// The queries each stream runs (in its own order).
    pub queries: &'a [u32],
    /// The scale.
    pub scale: Scale,
    /// The seed (of RF1's rows).
    pub seed: u64,
    /// With refresh: the text pool RF1's comments come from.
    pub refresh: Option<&'a TextPool>,
}

/// When a stream ran, and what it did.
struct Ran<T> {
    start: Instant,
    end: Instant,
    what: T,
}

/// Runs the throughput test; `stop` ends every stream after its current query.
pub fn run(engine: &dyn Database, t: &Test, stop: &AtomicBool) -> Result<TpchThroughput, WorkloadError> {
    let window = DeviceWindow::open(engine.dir());
    let failed = AtomicBool::new(false);
    let gate = Barrier::new(t.streams as usize + usize::from(t.refresh.is_some()));
    let (gate, failed) = (&gate, &failed);
    let (streams, refreshes) = std::thread::scope(|scope| {
        let queries: Vec<_> = (1..=t.streams)
            .map(|s| scope.spawn(move || query_stream(engine, t, s, gate, stop, failed)))
            .collect();
        let refreshes =
            t.refresh.map(|pool| scope.spawn(move || refresh_stream(engine, t, pool, gate, stop, failed)));
        let joined = |e| WorkloadError::Setup(format!("a throughput test stream panicked: {e:?}"));
        let streams: Vec<_> = queries.into_iter().map(|h| h.join().map_err(joined).and_then(|r| r)).collect();
        (streams, refreshes.map(|h| h.join().map_err(joined).and_then(|r| r)))
    });
    let streams = streams.into_iter().collect::<Result<Vec<_>, _>>()?;
    let refreshes = refreshes.transpose()?;
    let starts = streams.iter().map(|r| r.start).chain(refreshes.iter().map(|r| r.start));
    let ends = streams.iter().map(|r| r.end).chain(refreshes.iter().map(|r| r.end));
    let elapsed_s = match (starts.min(), ends.max()) {
        (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
        _ => 0.0,
    };
    let query_streams: Vec<TpchStream> = streams.into_iter().map(|r| r.what).collect();
    assert!(query_streams.iter().all(|s| s.seconds <= elapsed_s), "a stream within the test's elapsed time");
    Ok(TpchThroughput {
        streams: t.streams,
        ordering: "appendix-a".into(),
        query_streams,
        refresh: refreshes.map(|r| r.what).unwrap_or_default(),
        elapsed_s,
        devices: window.views(),
    })
}

/// Connects, waits for every stream to be ready, then runs `body` timed; a failure stops the others.
fn stream<T>(
    engine: &dyn Database,
    gate: &Barrier,
    failed: &AtomicBool,
    body: impl FnOnce(&mut dyn crate::Conn) -> Result<T, WorkloadError>,
) -> Result<Ran<T>, WorkloadError> {
    let conn = engine.connect();
    gate.wait();
    let result = conn.and_then(|mut c| {
        let start = Instant::now();
        let what = body(c.as_mut())?;
        Ok(Ran { start, end: Instant::now(), what })
    });
    if result.is_err() {
        failed.store(true, Ordering::Relaxed);
    }
    result
}

/// Query stream `s`: its queries in its order, each timed.
fn query_stream(
    engine: &dyn Database,
    t: &Test,
    s: u32,
    gate: &Barrier,
    stop: &AtomicBool,
    failed: &AtomicBool,
) -> Result<Ran<TpchStream>, WorkloadError> {
    stream(engine, gate, failed, |conn| {
        let started = Instant::now();
        let mut queries = Vec::new();
        for q in stream_order(s, t.queries) {
            if stop.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed) {
                break;
            }
            let sql = queries::text(q, engine.name(), t.scale.sf);
            let at = Instant::now();
            let rows = conn.query_text(&sql).map_err(|e| {
                WorkloadError::Db(DbError {
                    retryable: false,
                    message: format!("stream {s}, Q{q}: {}", e.message),
                })
            })?;
            queries.push(TpchStreamQuery {
                number: q,
                rows: rows.len() as u64,
                seconds: at.elapsed().as_secs_f64(),
            });
        }
        Ok(TpchStream { stream: s, seconds: started.elapsed().as_secs_f64(), queries })
    })
}

/// The refresh stream: RF1 and RF2 of pairs 2 to S + 1, back to back.
fn refresh_stream(
    engine: &dyn Database,
    t: &Test,
    pool: &TextPool,
    gate: &Barrier,
    stop: &AtomicBool,
    failed: &AtomicBool,
) -> Result<Ran<Vec<TpchRefresh>>, WorkloadError> {
    stream(engine, gate, failed, |conn| {
        let mut out = Vec::new();
        for pair in 2..=t.streams + 1 {
            if stop.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed) {
                break;
            }
            let rf1 = refresh::rf1(conn, &t.scale, t.seed, pool, pair)?;
            out.push(super::refresh_view("RF1", pair, &rf1, Vec::new()));
            let rf2 = refresh::rf2(conn, &t.scale, pair)?;
            out.push(super::refresh_view("RF2", pair, &rf2, Vec::new()));
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_of_the_ordering_table_is_the_22_queries() {
        assert_eq!(STREAM_ORDER[0], queries::POWER_ORDER);
        for (s, row) in STREAM_ORDER.iter().enumerate() {
            let mut sorted = row.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, (1..=22).collect::<Vec<u32>>(), "row {s}");
        }
        assert_eq!(stream_order(1, &[4, 21, 3]), [21, 3, 4]);
        assert_eq!(stream_order(42, &(1..=22).collect::<Vec<_>>()), STREAM_ORDER[1]);
    }
}
