//! Durable writes: fio's `fsync=N`, `fdatasync=N` and `sync=` as iolab's worker keys `fsync`, `fdatasync` and
//! `sync` (docs/DURABILITY.md), and fio's end-of-job flushes (`end_fsync`, `fsync_on_close`), which iolab
//! does not issue: accepted with a note where the job's writes are flushed as it goes, refused where fio's
//! final flush would carry the job's writing (buffered writes with no flush in between).

use super::pattern::Pattern;
use super::{Ctx, Job};
use crate::fio::{FioError, Note, Src};

/// The job's durability keys, and its end-of-job flush options checked against them.
pub fn durability(cx: &Ctx, p: &Pattern, job: &mut Job) -> Result<(), FioError> {
    // fio flushes and syncs writes only; a trim-only job's "write" direction is its trims.
    let writes = p.used()[1] && p.trim_pct < 100.0;
    let every = flush_every(cx, writes, job)?;
    let sync = write_sync(cx, writes, job)?;
    end_flush(cx, writes, every, sync, job)
}

/// `fsync=N` or `fdatasync=N` (N > 0): the flush and N, after writing the key when the job writes. fio counts
/// each on its own; an iolab worker flushes one way, so both set is refused.
fn flush_every(cx: &Ctx, writes: bool, job: &mut Job) -> Result<Option<u64>, FioError> {
    let mut given: Vec<(&'static str, u64, &Src)> = Vec::new();
    for key in ["fsync", "fdatasync"] {
        if let Some((n, src)) = cx.count(key)?.filter(|(n, _)| *n > 0) {
            given.push((key, n, src));
        }
    }
    let (key, n, src) = match given.as_slice() {
        [] => return Ok(None),
        [one] => *one,
        [a, b, ..] => {
            let later = if a.2.line > b.2.line { a.2 } else { b.2 };
            return Err(cx.refuse(
                later,
                format!(
                    "fio issues an fsync every {} writes and an fdatasync every {} writes, each on its own \
                     count; an iolab worker flushes one way (fsync or fdatasync): keep one of them",
                    a.1, b.1
                ),
            ));
        }
    };
    if !writes {
        // fio flushes after a write only: a job that does not write issues none.
        return Ok(Some(n));
    }
    let mut e = cx.entry(key, n.to_string(), src)?;
    if job.targets.iter().any(|files| files.len() > 1) {
        e = e.with_note(format!(
            "fio issues one {key} (of one file) every {n} writes; iolab flushes each target the worker wrote \
             since its last flush, so with several files it issues more flushes"
        ));
    }
    job.worker.push(e);
    Ok(Some(n))
}

/// `sync=`: fio's `none`/`0`, `sync`/`1` (O_SYNC) or `dsync` (O_DSYNC); true when the job's writes are
/// synchronous.
fn write_sync(cx: &Ctx, writes: bool, job: &mut Job) -> Result<bool, FioError> {
    let Some((v, src)) = cx.text("sync")? else { return Ok(false) };
    let mode = match v.trim().to_ascii_lowercase().as_str() {
        "none" | "0" => return Ok(false),
        "sync" | "1" => "sync",
        "dsync" => "dsync",
        _ => return Err(cx.bad(src, "none, 0, sync or 1 (O_SYNC), or dsync (O_DSYNC)")),
    };
    if writes {
        let e = cx.entry("sync", mode.to_string(), src)?;
        job.worker.push(e.with_note(format!(
            "fio opens the files with O_{}; iolab asks the same of each write (RWF_{})",
            mode.to_ascii_uppercase(),
            mode.to_ascii_uppercase()
        )));
    }
    Ok(writes)
}

/// Why an end-of-job flush is refused when nothing flushes the job's writes as it goes.
const END_FLUSH: &str = "fio flushes what the job wrote when it ends and counts that time in the job's runtime \
    (with buffered writes, most of the writing to the device happens then); iolab issues no end-of-job flush, \
    so its rates would leave that out. Add fsync=N or fdatasync=N (iolab then flushes as it goes), or sync=dsync, \
    or set this option to 0";

/// `end_fsync=1` and `fsync_on_close=1`: fio flushes each file once more at the end (on close). iolab does not:
/// said in a note when the job's writes are flushed as it goes (or it writes nothing), refused otherwise.
fn end_flush(cx: &Ctx, writes: bool, every: Option<u64>, sync: bool, job: &mut Job) -> Result<(), FioError> {
    for key in ["end_fsync", "fsync_on_close"] {
        let Some((true, src)) = cx.flag(key)? else { continue };
        let text = match every {
            _ if !writes => {
                "the job writes nothing, so fio's final fsync has nothing to write back; iolab issues \
                none"
                    .to_string()
            }
            _ if sync => {
                "every write is durable when it completes (sync), so fio's final fsync has nothing left \
                to write back; iolab does not issue it"
                    .to_string()
            }
            Some(1) => {
                "the job flushes after every write, so fio's final fsync has little or nothing to write back; \
                iolab does not issue it"
                    .to_string()
            }
            Some(n) => format!(
                "iolab flushes every {n} writes as fio does but issues no final flush: the writes after the \
                 last flush (fewer than {n}) stay unflushed, and fio's final fsync has no counterpart"
            ),
            None => return Err(cx.refuse(src, END_FLUSH)),
        };
        job.notes.push(Note { section: src.section.clone(), line: src.line, text: format!("{key}: {text}") });
    }
    Ok(())
}
