//! What fio's writes carry beyond offsets and sizes: duplicate data (`dedupe_percentage`, `dedupe_mode`,
//! `dedupe_working_set_percentage`, `dedupe_global`) as iolab's `dedupe`, and `atomic=1` as iolab's `atomic`.

use super::pattern::{pct, Pattern};
use super::{Ctx, Job};
use crate::fio::FioError;

/// fio's default `dedupe_working_set_percentage` (options.c).
const DEFAULT_SET_PCT: f64 = 5.0;

/// `dedupe_percentage=N` (with its mode, working set and `dedupe_global`) as `dedupe`, refusing what fio
/// refuses (init.c: a working set without `size`, with more than one file, or with more than 100% between
/// it and the copies) and verification, whose headers make every block unique.
pub fn dedupe(cx: &Ctx, pattern: &Pattern, job: &mut Job) -> Result<(), FioError> {
    let Some((v, src)) = cx.text("dedupe_percentage")? else { return Ok(()) };
    let n = pct(cx, v, src)?;
    if n == 0.0 || pattern.read_pct == 100.0 {
        return Ok(());
    }
    if let Some(verify) = verifies(cx)? {
        return Err(cx.refuse(
            src,
            format!(
                "iolab's verification (verify={verify}) stamps a header of its own (offset, generation, checksum) \
                 in every block written, so no block can be a copy of another; run the dedupe job without verify"
            ),
        ));
    }
    let mode = cx.text("dedupe_mode")?;
    let text = match mode.map(|(m, s)| (m.trim(), s)) {
        None | Some(("repeat", _)) => format!("{n}"),
        Some(("working_set", _)) => format!("{n}:{}", working_set(cx, n, src)?),
        Some((_, s)) => return Err(cx.bad(s, "repeat or working_set")),
    };
    let e = cx.entry("dedupe", text, src)?.with_note(
        "the same share of writes are copies, chosen as fio chooses them (a copy repeats the last unique write, or \
         one of the first unique writes, the working set, drawn uniformly); the bytes are iolab's, generated from a \
         seed per unique write, not fio's",
    );
    job.worker.push(e);
    Ok(())
}

/// `set=PCT[:global]` for fio's working set.
fn working_set(cx: &Ctx, n: f64, src: &crate::fio::Src) -> Result<String, FioError> {
    if cx.get("size").is_none() {
        return Err(cx.refuse(
            src,
            "fio refuses dedupe_mode=working_set without size (its working set is a share of it)",
        ));
    }
    let files = cx.count("nrfiles")?.map_or(1, |(n, _)| n);
    let listed = cx.get("filename").map_or(1, |f| f.text().replace("\\:", "").split(':').count() as u64);
    if files.max(listed) != 1 {
        return Err(cx.refuse(src, "fio's dedupe working set takes one file per job (init.c refuses more)"));
    }
    let set = match cx.text("dedupe_working_set_percentage")? {
        Some((v, s)) => (pct(cx, v, s)?, Some(s)),
        None => (DEFAULT_SET_PCT, None),
    };
    if set.0 + n > 100.0 {
        let s = set.1.unwrap_or(src);
        return Err(cx.bad(
            s,
            format!("a working set of at most {}% (fio refuses more than 100% with the copies)", 100.0 - n),
        ));
    }
    let global = cx.flag("dedupe_global")?.is_some_and(|(g, _)| g);
    Ok(format!("set={}{}", set.0, if global { ":global" } else { "" }))
}

/// `verify_backlog=N` (with `verify_backlog_batch=M`) as `verify_backlog = "N"` (`"N:M"`) in a job that
/// verifies; without verification fio keeps no backlog, and neither does the translation.
pub fn backlog(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let Some((n, src)) = cx.count("verify_backlog")? else { return Ok(()) };
    if n == 0 || verifies(cx)?.is_none() {
        return Ok(());
    }
    let batch = match cx.count("verify_backlog_batch")? {
        Some((0, _)) | None => n,
        Some((m, _)) => m,
    };
    let text = if batch == n { n.to_string() } else { format!("{n}:{batch}") };
    let e = cx.entry("verify_backlog", text, src)?.with_note(
        "after every N writes iolab lets the writes in flight complete, then reads the N blocks back (fio issues \
         its read-back reads next without waiting for them); iolab's read-back at the end still reads every block \
         written, where fio's reads only what its backlog has not verified",
    );
    job.worker.push(e);
    Ok(())
}

/// The job's `verify` kind when it verifies what it writes (`verify` set and not none, `do_verify` not 0).
fn verifies<'a>(cx: &'a Ctx) -> Result<Option<&'a str>, FioError> {
    let Some((v, _)) = cx.text("verify")? else { return Ok(None) };
    let off = matches!(v.trim(), "0" | "none" | "null") || matches!(cx.flag("do_verify")?, Some((false, _)));
    Ok((!off).then_some(v.trim()))
}

/// The fio engines that issue atomic writes (FIO_ATOMICWRITES: engines/io_uring.c, libaio.c, sync.c's pvsync2).
const ATOMIC_ENGINES: &[&str] = &["io_uring", "libaio", "pvsync2"];

/// `atomic=1` as `atomic = true`: refused with an engine fio refuses it with; dropped in a job that only reads,
/// as fio drops it.
pub fn atomic(cx: &Ctx, pattern: &Pattern, job: &mut Job) -> Result<(), FioError> {
    let Some((true, src)) = cx.flag("atomic")? else { return Ok(()) };
    let engine = cx.text("ioengine")?.map_or("psync", |(e, _)| e.trim());
    if !ATOMIC_ENGINES.contains(&engine) {
        return Err(cx.refuse(
            src,
            format!(
                "fio refuses atomic=1 with ioengine={engine} (init.c: 'engine does not support atomic writes'); \
                 its engines with atomic writes are {}",
                ATOMIC_ENGINES.join(", ")
            ),
        ));
    }
    if pattern.read_pct == 100.0 {
        return Ok(());
    }
    let e = cx.entry("atomic", "true".into(), src)?.with_note(
        "every write is issued with RWF_ATOMIC, as fio's; iolab checks the target's atomic-write limits (statx) \
         before it writes anything, where fio's writes would fail one by one",
    );
    job.worker.push(e);
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::fio::{translate, FioError};
    use iolab_spec::{Dedupe, JobSpec, Layer};

    fn layer(opts: &str) -> Layer {
        let text = format!("[j]\nfilename=/data/f\nsize=100m\nrw=write\nioengine=libaio\ndirect=1\n{opts}\n");
        let t = translate(&text, "job.fio").unwrap_or_else(|e| panic!("{e}"));
        let job = JobSpec::from_toml(&t.toml, "job.fio").unwrap_or_else(|e| panic!("{e}\n{}", t.toml));
        job.worker_tables[0].layer.clone()
    }

    fn refused(opts: &str) -> String {
        let text = format!("[j]\nfilename=/data/f\nsize=100m\nrw=write\nioengine=libaio\ndirect=1\n{opts}\n");
        match translate(&text, "job.fio") {
            Ok(t) => panic!("translated:\n{}", t.toml),
            Err(e @ (FioError::Unsupported { .. } | FioError::BadValue { .. })) => e.to_string(),
            Err(e) => panic!("{e}"),
        }
    }

    /// Issue 36, item 8: fio's dedupe options are `dedupe`: repeat mode by default, the working set with its
    /// share (fio's default 5%) and `global`; 0 is nothing.
    #[test]
    fn dedupe_options_are_the_dedupe_key() {
        let d = |pct, set, global| Some(Dedupe { pct, working_set_pct: set, global });
        assert_eq!(layer("dedupe_percentage=34").dedupe, d(34, None, false));
        assert_eq!(layer("dedupe_percentage=34\ndedupe_mode=working_set").dedupe, d(34, Some(5), false));
        let all = "dedupe_mode=working_set\ndedupe_global=1\ndedupe_percentage=50\ndedupe_working_set_percentage=50";
        assert_eq!(layer(all).dedupe, d(50, Some(50), true));
        // dedupe_global changes nothing in repeat mode (fio's working set is all it shares).
        assert_eq!(layer("dedupe_percentage=20\ndedupe_global=1").dedupe, d(20, None, false));
        assert_eq!(layer("dedupe_percentage=0").dedupe, None);
    }

    /// Issue 36, item 8: what fio refuses (init.c) and what iolab's verification cannot hold are refused by name.
    #[test]
    fn impossible_dedupe_is_refused_by_name() {
        let e = refused("dedupe_percentage=60\ndedupe_mode=working_set\ndedupe_working_set_percentage=50");
        assert!(e.contains("'dedupe_working_set_percentage'") && e.contains("at most 40%"), "{e}");
        let e = refused("dedupe_percentage=50\nverify=crc32c");
        assert!(e.contains("'dedupe_percentage'") && e.contains("verify=crc32c"), "{e}");
        let e = refused("dedupe_percentage=50\ndedupe_mode=often");
        assert!(e.contains("'dedupe_mode'") && e.contains("repeat or working_set"), "{e}");
    }

    /// Issue 36, item 8: `atomic=1` is `atomic = true` with the engines fio issues atomic writes with, refused
    /// with the others (as fio refuses them), and dropped in a job that only reads.
    #[test]
    fn atomic_is_the_atomic_key_with_the_engines_fio_allows() {
        assert_eq!(layer("atomic=1").atomic, Some(true));
        assert_eq!(layer("atomic=1\nioengine=pvsync2").atomic, Some(true));
        assert_eq!(layer("atomic=0").atomic, None);
        assert_eq!(layer("atomic=1\nrw=randread").atomic, None);
        let e = refused("atomic=1\nioengine=psync");
        assert!(e.contains("'atomic'") && e.contains("ioengine=psync"), "{e}");
    }

    /// Issue 36, item 8: `verify_backlog` (with `verify_backlog_batch`) is `verify_backlog` in a job that
    /// verifies; without verification it is nothing, as in fio.
    #[test]
    fn verify_backlog_is_the_verify_backlog_key() {
        assert_eq!(layer("verify=crc32c\nverify_backlog=16").verify_backlog, Some((16, 16)));
        assert_eq!(
            layer("verify=md5\nverify_backlog=16\nverify_backlog_batch=4").verify_backlog,
            Some((16, 4))
        );
        assert_eq!(layer("verify_backlog=16").verify_backlog, None);
        assert_eq!(layer("verify=crc32c\ndo_verify=0\nverify_backlog=16").verify_backlog, None);
    }
}
