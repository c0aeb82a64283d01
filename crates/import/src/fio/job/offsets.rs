//! Where a job's offsets go beyond its pattern: fio's strided zones (`zonemode=strided` with `zonesize`,
//! `zonerange`, `zoneskip`) as iolab's `band` walk, and fio's fixed block sequence
//! (`random_distribution=sequence:...`, `random_sequence_stride`) as `dist = "sequence:..."`.

use super::pattern::Pattern;
use super::{Ctx, Job};
use crate::fio::entry::{Origin, TranslatedKey};
use crate::fio::{FioError, Note, Src};
use iolab_spec::units::format_size;

/// `zonemode`, `zonesize`, `zonerange`, `zoneskip`: a `band` walk for `strided` (`zbd` is refused by name when
/// the options are sorted: options.rs).
pub fn band(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let zonesize = cx.size("zonesize")?.filter(|(n, _)| *n > 0);
    let mode = cx.text("zonemode")?.map(|(v, src)| (v.trim().to_ascii_lowercase(), src));
    let (mode_src, (bytes, size_src)) = match (&mode, zonesize) {
        (None, None) => return Ok(()),
        (Some((m, _)), None) if m == "none" => return Ok(()),
        (Some((m, src)), Some(_)) if m == "none" => {
            return Err(cx.bad(src, "strided with zonesize set (fio refuses zonesize with zonemode=none)"))
        }
        (None, Some((_, src))) => {
            return Err(
                cx.bad(src, "zonemode=strided beside it (fio's default zonemode=none refuses zonesize)")
            )
        }
        (Some((m, src)), _) if m != "strided" => return Err(cx.bad(src, "none, strided or zbd")),
        (Some((_, src)), None) => {
            return Err(cx.bad(src, "zonesize set above 0 (fio refuses zonemode=strided without it)"))
        }
        (Some((_, src)), Some(size)) => (*src, size),
    };
    let range = cx.size("zonerange")?.filter(|(n, _)| *n > 0);
    let skip = cx.size("zoneskip")?;
    if job.targets.iter().any(|list| list.len() > 1) {
        job.notes.push(Note {
            section: mode_src.section.clone(),
            line: mode_src.line,
            text: "fio turns zonemode=strided off for a job with more than one file (init.c), so the job's \
                   offsets are not strided here either"
                .into(),
        });
        return Ok(());
    }
    let mut origins: Vec<Origin> = vec![Origin::Opt(mode_src.clone()), Origin::Opt(size_src.clone())];
    origins.extend(
        [range.map(|r| r.1), skip.map(|s| s.1)].into_iter().flatten().map(|s| Origin::Opt(s.clone())),
    );
    let range = range.map_or(bytes, |r| r.0);
    let skip = skip.map_or(0, |s| s.0);
    let text = format!("{}:{}:{}", format_size(range), format_size(skip), format_size(bytes));
    let note = format!(
        "fio's strided zones: {} of I/O in each zone of {} (from the region's start), then the next zone {} \
         further on, back to the first past the end{}",
        format_size(bytes),
        format_size(range),
        format_size(range.saturating_add(skip)),
        walk_to_the_end(cx, job)
    );
    let e = TranslatedKey::new("band", text, origins).map_err(|e| cx.bad(mode_src, e))?;
    job.worker.push(e.with_note(note));
    Ok(())
}

/// On a device (or the one fixed-size target given), fio's zones walk to its end whatever `size` is (`size`
/// only limits the bytes moved): the region's `length` is dropped, so the walk goes on to the target's end.
fn walk_to_the_end(cx: &Ctx, job: &mut Job) -> &'static str {
    let devices = job.targets.iter().flatten().all(|e| e.text.starts_with("/dev/"));
    if !(devices || cx.given.target_fixed) || !job.worker.iter().any(|e| e.key == "length") {
        return "";
    }
    job.worker.retain(|e| e.key != "length");
    "; on a device fio's zones go on to its end whatever size is (size limits the bytes), so the region does too"
}

/// `random_distribution=sequence:B,B,...` (with `random_sequence_stride`): `dist = "sequence:B,B,...[:advance]"`.
pub fn sequence(cx: &Ctx, p: &Pattern, blocks: &str, src: &Src, job: &mut Job) -> Result<(), FioError> {
    let list: Vec<&str> = blocks.split(',').map(str::trim).collect();
    let advance = cx.flag("random_sequence_stride")?.filter(|(on, _)| *on).map(|(_, s)| s);
    let text = format!("sequence:{}{}", list.join(","), if advance.is_some() { ":advance" } else { "" });
    if p.random.iter().all(|r| *r == 0.0) {
        return Ok(());
    }
    let mut e = cx.entry("dist", text, src)?;
    if let Some(s) = advance {
        e.origins.push(Origin::Opt(s.clone()));
        e = e.with_note(
            "each cycle goes a group of blocks further; past the last whole group in the region fio ends the \
             job, where iolab starts over at the first group (give io_size or number_ios to stop where fio does)",
        );
    }
    job.worker.push(e);
    Ok(())
}

/// `sprandom=1` (with `spr_op`, `spr_num_regions`): `dist = "sprandom:OP:REGIONS"`, and the pass's size as the
/// byte limit: fio's `sprandom_init` sets io_size to the physical size (the region's size plus OP of it,
/// rounded down to the block size), whatever io_size was.
pub fn sprandom(cx: &Ctx, p: &Pattern, job: &mut Job) -> Result<(), FioError> {
    let Some((true, src)) = cx.flag("sprandom")? else { return Ok(()) };
    if p.read_pct > 0.0 || p.trim_pct > 0.0 || p.pairs || p.random[1] < 100.0 {
        return Err(cx.refuse(src, "iolab runs SPRandom for jobs of random writes only (rw=randwrite)"));
    }
    if let Some(d) = cx.get("random_distribution") {
        return Err(cx.refuse(d, "SPRandom places every write; a distribution would have none left to place"));
    }
    if cx.flag("time_based")?.is_some_and(|(on, _)| on) {
        return Err(cx.refuse(src, "SPRandom writes one pass and fio ends the job there; drop time_based"));
    }
    let op = match cx.text("spr_op")? {
        None => 0.15,
        Some((v, s)) => {
            v.trim().parse::<f64>().ok().filter(|f| *f > 0.0 && *f < 1.0).ok_or_else(|| {
                cx.bad(s, "an over-provisioning share strictly between 0 and 1, such as 0.15")
            })?
        }
    };
    let regions = cx.count("spr_num_regions")?.map_or(100, |(n, _)| n);
    let bs =
        job.worker.iter().find(|e| e.key == "bs").and_then(|e| iolab_spec::units::parse_size(&e.text).ok());
    let Some(bs) = bs else {
        return Err(cx.refuse(src, "SPRandom writes blocks of one size; give one bs"));
    };
    let logical = region_size(cx).ok_or_else(|| {
        cx.refuse(src, "SPRandom's pass is the region's size plus over-provisioning; give size, or run it with one --target")
    })?;
    let physical = iolab_spec::units::sprandom_pass_bytes(op, logical, bs);
    let mut origins = vec![Origin::Opt(src.clone())];
    origins.extend(
        ["spr_op", "spr_num_regions"].iter().filter_map(|k| cx.get(k)).map(|s| Origin::Opt(s.clone())),
    );
    let e = TranslatedKey::new("dist", format!("sprandom:{op}:{regions}"), origins)
        .map_err(|e| cx.bad(src, e))?;
    job.worker.push(e.with_note(format!(
        "fio's SPRandom: one pass of {physical} bytes of random writes ({} plus over-provisioning {op}) in \
         {regions} regions, blocks of each written again in the next in the share of a steady state; fio orders \
         the blocks with its LFSR, iolab with its own seeded permutation (the same regions and shares, other \
         blocks)",
        format_size(logical),
    )));
    job.limits.bytes = Some((physical, Origin::Opt(src.clone())));
    Ok(())
}

/// The region a job's I/O goes to: `size` (at most the fixed target's room past `offset`), else the target's
/// room past `offset`.
fn region_size(cx: &Ctx) -> Option<u64> {
    let offset = cx.size("offset").ok().flatten().map_or(0, |(o, _)| o);
    let room = cx.given.target_bytes.map(|n| n.saturating_sub(offset));
    match cx.size("size").ok().flatten() {
        Some((n, _)) if cx.given.target_fixed => Some(room.map_or(n, |r| n.min(r))),
        Some((n, _)) => Some(n),
        None => room,
    }
}

/// `offset_increment=N` with `numjobs` clones: clone k's region starts at `offset + k × N` (fio's filesetup.c,
/// `get_start_offset`, with k its `subjob_number`), so each clone is a worker table of its own with its own
/// `offset`. Refused where the clones' regions would be cut differently at the target's end (fio's passes would
/// then move different amounts, and iolab's byte limit is one even share per worker) and where a clone starts at
/// or past it (fio fails that clone: "you need to specify valid offset=").
pub fn offset_increment(cx: &Ctx, job: &mut Job) -> Result<(), FioError> {
    let Some((inc, src)) = cx.size("offset_increment")?.filter(|(n, _)| *n > 0) else { return Ok(()) };
    let clones = job.count.as_ref().and_then(|c| c.text.parse::<u64>().ok()).unwrap_or(1);
    if clones < 2 {
        return Ok(()); // clone 0 starts at `offset`
    }
    let offset = cx.size("offset")?;
    let base = offset.map_or(0, |(n, _)| n);
    let last = (clones - 1).checked_mul(inc).and_then(|d| d.checked_add(base));
    last.ok_or_else(|| cx.bad(src, "an increment whose last clone's offset fits in 64 bits"))?;
    let length = job
        .worker
        .iter()
        .find(|e| e.key == "length")
        .and_then(|e| iolab_spec::units::parse_size(&e.text).ok());
    if job.worker.iter().any(|e| e.key == "size") {
        return Err(cx.refuse(src, "with size on a file iolab creates, fio lays the file out to each clone's region end; give the file's size with filesize, or run the job on an existing file or device (--target)"));
    }
    if cx.get("size").is_none() && cx.get("io_size").is_none() && job.limits.bytes.is_some() {
        return Err(cx.refuse(src, "each clone's one pass runs from its own start to the target's end, so the clones would move different amounts, and iolab's byte limit is one even share per worker; give io_size, number_ios or time_based"));
    }
    if let Some(n) = cx.given.target_bytes {
        let start = |k: u64| base + k * inc;
        if let Some(k) = (1..clones).find(|&k| start(k) >= n) {
            return Err(cx.bad(src, format!("an increment whose {clones} clones all start inside the target given ({n} bytes): clone {k} would start at {} bytes, where fio fails the clone (\"you need to specify valid offset=\")", start(k))));
        }
        if let Some(k) = (1..clones).find(|&k| length.is_some_and(|len| start(k).saturating_add(len) > n)) {
            return Err(cx.bad(src, format!("an increment whose {clones} clones' regions all end inside the target given ({n} bytes): clone {k}'s runs past it, where fio would cut that clone's region and pass short of the others'")));
        }
    }
    let mut origins = vec![Origin::Opt(src.clone())];
    origins.extend(offset.map(|(_, s)| Origin::Opt(s.clone())));
    job.worker.retain(|e| e.key != "offset");
    if job.targets.len() == 1 {
        job.targets = vec![job.targets[0].clone(); clones as usize];
    }
    for k in 0..clones {
        let text = format_size(base + k * inc);
        let e = TranslatedKey::new("offset", text, origins.clone()).map_err(|e| cx.bad(src, e))?;
        job.clones.push(vec![e.with_note(format!(
            "fio's clone {k} of {clones} starts at offset + {k} x offset_increment (filesetup.c, get_start_offset)"
        ))]);
    }
    Ok(())
}
