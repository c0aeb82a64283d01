//! Where a job's I/O goes and for how long: engine, targets, region, run-wide keys and limits.

use super::pattern::Pattern;
use super::{too_large, Ctx, Job, TranslatedEngine};
use crate::fio::entry::{Origin, TranslatedKey};
use crate::fio::options;
use crate::fio::FioError;
use iolab_spec::units::{format_duration, format_size};

/// fio's default `randseed`, used when `randrepeat` (on by default) asks for a repeatable sequence.
const FIO_DEFAULT_SEED: u64 = 0x89;

/// The job's engine.
pub fn engine(cx: &Ctx) -> Result<TranslatedEngine, FioError> {
    let Some((name, src)) = cx.text("ioengine")? else {
        return Ok(TranslatedEngine { kind: "sync", src: None });
    };
    match options::engine(name) {
        Some(kind) => Ok(TranslatedEngine { kind, src: Some(src.clone()) }),
        None => Err(FioError::UnsupportedEngine {
            file: cx.file.to_string(),
            engine: name.to_string(),
            section: src.section.clone(),
            line: src.line,
        }),
    }
}

/// Splits fio's `filename` list on ':' (`\:` is a colon in a name).
pub fn split_filenames(v: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                chars.next();
                if let Some(s) = out.last_mut() {
                    s.push(':');
                }
            }
            ':' => out.push(String::new()),
            c => out.last_mut().map(|s| s.push(c)).unwrap_or(()),
        }
    }
    out.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// The job's targets (one list shared by its workers, or one list per clone), and its region keys.
pub fn targets(cx: &Ctx, name: &str, engine: &TranslatedEngine, job: &mut Job) -> Result<(), FioError> {
    let numjobs = match cx.count("numjobs")? {
        Some((n, src)) => {
            job.count = Some(cx.entry("count", n.to_string(), src)?);
            n
        }
        None => 1,
    };
    let dir = directory(cx)?;
    if engine.kind == "null" {
        let (size, src) = cx.size("filesize")?.or(cx.size("size")?).ok_or_else(|| {
            cx.refuse_missing("size", "fio's null engine needs a size, and so does iolab's null: target")
        })?;
        let (offset, osrc) = cx.size("offset")?.unwrap_or((0, src));
        let end = offset.checked_add(size).ok_or_else(|| cx.bad(osrc, too_large(offset, "+", size)))?;
        let text = format!("null:{}", format_size(end));
        let e = TranslatedKey::new("target", text, vec![engine.origin(), Origin::Opt(src.clone())])
            .map_err(|e| cx.bad(src, e))?;
        job.targets = vec![vec![e]];
        return region(cx, 1, false, job);
    }
    let (lists, nfiles, devices) = match cx.text("filename")? {
        Some((v, src)) => {
            let files: Vec<String> = split_filenames(v).into_iter().map(|f| join(&dir, &f)).collect();
            if files.is_empty() || files.iter().any(|f| f == "-") {
                return Err(
                    cx.bad(src, "one or more paths separated by ':' (stdin/stdout '-' is not a target)")
                );
            }
            let devices = files.iter().all(|f| f.starts_with("/dev/"));
            let entries = files
                .iter()
                .map(|f| path_entry(cx, f, vec![Origin::Opt(src.clone())], src))
                .collect::<Result<Vec<_>, _>>()?;
            (vec![entries], files.len(), devices)
        }
        None => default_files(cx, name, &dir, numjobs)?,
    };
    job.targets = lists;
    region(cx, nfiles as u64, devices, job)
}

fn path_entry(
    cx: &Ctx,
    path: &str,
    origins: Vec<Origin>,
    src: &crate::fio::Src,
) -> Result<TranslatedKey, FioError> {
    let virtual_prefix = ["mem:", "null:", "sim:", "link:", "@"].iter().any(|p| path.starts_with(p));
    if virtual_prefix {
        return Err(cx.bad(src, "a path; iolab reads 'mem:', 'null:', 'sim:', 'link:' and '@' as targets of its own (write ./ before the name)"));
    }
    TranslatedKey::new("target", path.to_string(), origins).map_err(|e| cx.bad(src, e))
}

/// fio's own file names when no `filename` is given: `DIR/JOBNAME.JOBNUM.FILENUM`, one set per clone.
fn default_files(
    cx: &Ctx,
    name: &str,
    dir: &str,
    numjobs: u64,
) -> Result<(Vec<Vec<TranslatedKey>>, usize, bool), FioError> {
    let nrfiles = match cx.count("nrfiles")? {
        Some((0, src)) => return Err(cx.bad(src, "at least 1")),
        Some((n, _)) => n,
        None => 1,
    };
    let mut origins = vec![Origin::Default(format!(
        "filename not set: fio uses $jobname.$jobnum.$filenum ({nrfiles} file(s) per job, one set per clone)"
    ))];
    if let Some(src) = cx.get("directory") {
        origins.push(Origin::Opt(src.clone()));
    }
    let header = crate::fio::Src {
        key: "filename".into(),
        value: None,
        section: cx.section.name.clone(),
        line: cx.section.line,
    };
    let mut lists = Vec::new();
    for j in 0..numjobs {
        let mut list = Vec::new();
        for f in 0..nrfiles {
            list.push(path_entry(cx, &join(dir, &format!("{name}.{j}.{f}")), origins.clone(), &header)?);
        }
        lists.push(list);
    }
    Ok((lists, nrfiles as usize, false))
}

fn directory(cx: &Ctx) -> Result<String, FioError> {
    match cx.text("directory")? {
        None => Ok(String::new()),
        Some((v, src)) => {
            let dirs = split_filenames(v);
            if dirs.len() != 1 {
                return Err(cx.refuse(src, "several directories spread files over them; iolab needs one"));
            }
            Ok(dirs[0].clone())
        }
    }
}

fn join(dir: &str, file: &str) -> String {
    if dir.is_empty() || file.starts_with('/') {
        file.to_string()
    } else {
        format!("{}/{file}", dir.trim_end_matches('/'))
    }
}

/// `size`, `filesize` and `offset` as iolab's per-target region: `offset`, `length`, and `size` for files
/// iolab may create (never for block devices, which iolab refuses to size).
fn region(cx: &Ctx, nfiles: u64, devices: bool, job: &mut Job) -> Result<(), FioError> {
    let offset = cx.size("offset")?;
    let per_file = match (cx.text("filesize")?, cx.size("size")?) {
        (Some((v, src)), _) if v.contains(['-', ':']) => {
            return Err(cx.refuse(src, "a range of file sizes; iolab's targets have one size"))
        }
        (Some(_), _) => cx.size("filesize")?.map(|(n, s)| (n, s.clone())),
        (None, Some((n, src))) => Some((n / nfiles.max(1), src.clone())),
        (None, None) => None,
    };
    let is_null = job.targets.iter().flatten().any(|e| e.text.starts_with("null:"));
    let fixed = cx.given.target_fixed;
    let o = offset.map_or(0, |(n, _)| n);
    if let Some((n, src)) = offset.filter(|(n, _)| *n > 0) {
        job.worker.push(cx.entry("offset", format_size(n), src)?);
    }
    if let Some((len, src)) = per_file {
        let split = nfiles > 1 && cx.get("filesize").is_none();
        let devices = devices || fixed;
        let asked = len;
        let len = if fixed { clamped(cx, (o, len), &src, job)? } else { len };
        let mut e = cx.entry("length", format_size(len), &src)?;
        if split {
            e = e.with_note(format!("fio divides size among the job's {nfiles} files"));
        }
        if len < asked {
            e = e.with_note("cut to the end of the target given, as fio does on an existing device");
        }
        if !devices && !is_null {
            let end = o.checked_add(len).ok_or_else(|| cx.bad(&src, too_large(o, "+", len)))?;
            let mut s = cx.entry("size", format_size(end), &src)?;
            s.note = e.note.clone();
            job.worker.push(s);
        }
        if o > 0 || devices || is_null {
            job.worker.push(e);
        }
    }
    Ok(())
}

/// fio's `size` on a target of fixed size (the one `--target` given): the region from `offset` is at most
/// what the target holds past it (fio's io_u.c takes the smaller of `size` and the device's size), said in a
/// note when that cuts it; an offset at or past the end is refused, as fio refuses it ("offset extends end").
fn clamped(
    cx: &Ctx,
    (offset, len): (u64, u64),
    src: &crate::fio::Src,
    job: &mut Job,
) -> Result<u64, FioError> {
    let Some(n) = cx.given.target_bytes else { return Ok(len) };
    if offset >= n {
        let why =
            format!("the target given is {n} bytes ({}); the offset is at or past its end", format_size(n));
        return Err(cx.refuse(cx.get("offset").unwrap_or(src), why));
    }
    if offset.saturating_add(len) <= n {
        return Ok(len);
    }
    let room = n - offset;
    job.notes.push(crate::fio::Note {
        section: cx.section.name.clone(),
        line: src.line,
        text: format!(
            "{}={} runs past the end of the target given ({}): fio does its I/O within what exists, so the \
             region (and one pass) is the {} from offset {} to the target's end",
            src.key,
            src.value.as_deref().unwrap_or(""),
            format_size(n),
            format_size(room),
            format_size(offset)
        ),
    });
    Ok(room)
}

/// Run-wide keys of the job (duration, ramp, engine, direct, seed, verification) and its I/O limits.
pub fn run_keys(
    cx: &Ctx,
    engine: &TranslatedEngine,
    pattern: &Pattern,
    job: &mut Job,
) -> Result<(), FioError> {
    time_keys(cx, pattern, job)?;
    if engine.kind != "null" {
        job.run.push(
            TranslatedKey::new("engine", engine.kind.into(), vec![engine.origin()])
                .map_err(|e| cx.refuse_missing("ioengine", e))?,
        );
    }
    let direct = [cx.flag("direct")?, cx.flag("buffered")?.map(|(b, s)| (!b, s))]
        .into_iter()
        .flatten()
        .max_by_key(|(_, s)| s.line);
    job.run.push(match direct {
        Some((b, src)) => cx.entry("direct", b.to_string(), src)?,
        None => TranslatedKey::new(
            "direct",
            "false".into(),
            vec![Origin::Default("direct not set: fio's default is buffered I/O (direct=0)".into())],
        )
        .map_err(|e| cx.refuse_missing("direct", e))?,
    });
    seed(cx, job)?;
    create_on_open(cx, job)?;
    verify(cx, job)
}

/// `create_on_open=1`: fio lays out no file before the job; the job's open creates it empty and its writes
/// grow it, as iolab's `prealloc = "none"` does with the files it creates.
fn create_on_open(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let Some((true, src)) = cx.flag("create_on_open")? else { return Ok(()) };
    let e = cx.entry("prealloc", "none".into(), src)?.with_note(
        "fio creates the file when the job opens it and lays nothing out first: the job's writes allocate it, \
         and reads of what it has not written yet are short; iolab's prealloc = \"none\" makes the files it \
         creates the same way (a file that exists is used as it is, by both)",
    );
    job.run.push(e);
    Ok(())
}

fn time_keys(cx: &Ctx, pattern: &Pattern, job: &mut Job) -> Result<(), FioError> {
    const S: u64 = 1_000_000_000;
    let runtime = cx.time("runtime", S)?.filter(|(ns, _)| *ns > 0);
    if let Some((ns, src)) = runtime {
        job.run.push(cx.entry("duration", format_duration(ns), src)?);
    }
    job.run.push(match cx.time("ramp_time", S)? {
        Some((ns, src)) => cx.entry("ramp", format_duration(ns), src)?,
        None => TranslatedKey::new(
            "ramp",
            "0s".into(),
            vec![Origin::Default("ramp_time not set: fio's default is 0".into())],
        )
        .map_err(|e| cx.refuse_missing("ramp_time", e))?,
    });
    let time_based = cx.flag("time_based")?.filter(|(b, _)| *b);
    if let Some((_, src)) = time_based {
        if runtime.is_none() {
            return Err(cx.refuse(src, "time_based without runtime runs until stopped; give a runtime"));
        }
        for key in ["io_size", "number_ios"] {
            if let Some(s) = cx.get(key).filter(|_| pattern.has_sequential()) {
                return Err(cx.refuse(s, "with time_based it restarts each sequential pass after this much I/O; iolab's sequential I/O wraps at the end of the region"));
            }
        }
        return Ok(());
    }
    limits(cx, runtime.is_some(), job)
}

/// Without time_based, fio ends a job after io_size (else size) bytes, or number_ios I/Os, `loops` times.
fn limits(cx: &Ctx, has_runtime: bool, job: &mut Job) -> Result<(), FioError> {
    let bytes = match cx.size("io_size")? {
        Some((n, src)) => Some((n, src)),
        None => cx.size("size")?.map(|(n, src)| (within_target(cx, n), src)),
    };
    if let Some((n, src)) = bytes.filter(|(n, _)| *n > 0) {
        job.limits.bytes = Some((n, Origin::Opt(src.clone())));
    }
    if let Some((n, src)) = cx.count("number_ios")?.filter(|(n, _)| *n > 0) {
        job.limits.ios = Some((n, Origin::Opt(src.clone())));
    }
    if let Some((true, src)) = cx.flag("fill_device")? {
        let Some(n) = cx.given.target_bytes else {
            return Err(cx.refuse(src, "fio writes until the device is full, whose size iolab does not know here; run it with one --target"));
        };
        job.limits.ios = None;
        one_pass(cx, n, job)?;
    } else if job.limits.bytes.is_none() && job.limits.ios.is_none() {
        if let Some(n) = cx.given.target_bytes {
            one_pass(cx, n, job)?;
        } else {
            let why = if has_runtime {
                "without time_based, fio also ends the job after one pass over the file or device, whose size iolab \
                 does not know here; add time_based=1, or give size or io_size, or run it with one --target (whose size iolab knows)"
            } else {
                "fio would do one pass over the whole file or device, whose size iolab does not know here; give \
                 size or io_size, or runtime with time_based=1, or run it with one --target (whose size iolab knows)"
            };
            return Err(cx.refuse_missing("size", why));
        }
    }
    exitall_note(cx, job)?;
    repeat(cx, job)
}

/// A pass of `size` bytes on a target of fixed size ends at its end, as fio's sequential pass does (io_u.c,
/// `get_next_seq_offset`): at most what the target holds past `offset`.
fn within_target(cx: &Ctx, size: u64) -> u64 {
    match cx.given.target_bytes.filter(|_| cx.given.target_fixed) {
        Some(n) => size.min(n.saturating_sub(cx.size("offset").ok().flatten().map_or(0, |(o, _)| o))),
        None => size,
    }
}

/// `exitall` on a job with size limits: fio stops every job when the first ends, iolab's workers each end at
/// their own share.
fn exitall_note(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let Some((true, src)) = cx.flag("exitall")? else { return Ok(()) };
    job.notes.push(crate::fio::Note {
        section: cx.section.name.clone(),
        line: src.line,
        text: "exitall: fio stops every job when the first one ends its pass; iolab's workers each end at their \
               own share of the size limit, so slower ones run on. Add time_based=1 with a runtime to the fio job \
               to compare like with like"
            .into(),
    });
    Ok(())
}

/// `loops=N`: fio runs the job's pass N times, so its limits are N times larger.
fn repeat(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let Some((n, src)) = cx.count("loops")? else { return Ok(()) };
    if n == 0 {
        return Err(cx.bad(src, "at least 1 (the number of times fio runs the job)"));
    }
    for limit in [&mut job.limits.bytes, &mut job.limits.ios].into_iter().flatten() {
        limit.0 = limit.0.checked_mul(n).ok_or_else(|| cx.bad(src, too_large(limit.0, "*", n)))?;
        limit.1 = Origin::Default(format!("{} times {n} (loops, line {})", limit.1.describe(), src.line));
    }
    Ok(())
}

/// fio's one pass over a target of `n` bytes given on the command line: from `offset` to its end.
fn one_pass(cx: &Ctx, n: u64, job: &mut Job) -> Result<(), FioError> {
    let offset = cx.size("offset")?;
    if let Some((_, src)) = offset.filter(|(o, _)| *o >= n) {
        return Err(
            cx.refuse(src, format!("the target given is {n} bytes; the offset is at or past its end"))
        );
    }
    let o = offset.map_or(0, |(o, _)| o);
    let why = format!(
        "size not set: fio does one pass over the file or device, and the target given on the command line is \
         {n} bytes ({})",
        format_size(n)
    );
    job.limits.bytes = Some((n - o, Origin::Default(why)));
    Ok(())
}

fn seed(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    if let Some((n, src)) = cx.count("randseed")? {
        job.run.push(cx.entry("seed", n.to_string(), src)?);
        return Ok(());
    }
    match cx.flag("randrepeat")? {
        Some((false, _)) => Ok(()),
        Some((true, src)) => {
            let e = cx.entry("seed", FIO_DEFAULT_SEED.to_string(), src)?;
            job.run.push(
                e.with_note("fio's default seed 0x89: the same offsets every run (iolab's, not fio's)"),
            );
            Ok(())
        }
        None => {
            let o = Origin::Default(
                "randrepeat not set: fio's default repeats the same random sequence every run (seed 0x89)"
                    .into(),
            );
            let e = TranslatedKey::new("seed", FIO_DEFAULT_SEED.to_string(), vec![o])
                .map_err(|e| cx.refuse_missing("randrepeat", e))?;
            job.run.push(e);
            Ok(())
        }
    }
}

const VERIFY_KINDS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
    "pattern",
];

fn verify(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let Some((v, src)) = cx.text("verify")? else { return Ok(()) };
    let v = v.trim().to_ascii_lowercase();
    if v == "0" || v == "none" || v == "null" {
        return Ok(());
    }
    if !VERIFY_KINDS.contains(&v.as_str()) {
        return Err(cx.bad(src, format!("one of {}, or 0/none", VERIFY_KINDS.join(", "))));
    }
    if let Some((false, _)) = cx.flag("do_verify")? {
        return Ok(());
    }
    let e = cx.entry("verify", "true".into(), src)?.with_note(
        "iolab stamps its own header (offset, generation, checksum) in every block written, checks every read, and reads back every written block at the end",
    );
    job.run.push(e);
    let fail = match cx.flag("verify_fatal")? {
        Some((b, s)) => cx.entry("verify_fail", if b { "stop" } else { "continue" }.into(), s)?,
        None => TranslatedKey::new(
            "verify_fail",
            "continue".into(),
            vec![Origin::Default("verify_fatal not set: fio's default checks on after a mismatch".into())],
        )
        .map_err(|e| cx.refuse_missing("verify_fatal", e))?,
    };
    job.run.push(fail);
    Ok(())
}
