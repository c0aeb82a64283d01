//! Which fio options are translated, which are ignored (they do not change the I/O) and which are refused
//! (they would change it, and iolab has no equivalent), each with its reason.

/// What the translator does with an option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Translated into iolab keys (some values may still be refused where they are read).
    Mapped,
    /// Dropped: it does not change the I/O. The reason is reported.
    Ignored(&'static str),
    /// Accepted only with the value(s) that leave the I/O as iolab runs it; any other value is refused.
    OnlyValues(&'static [&'static str], &'static str),
    /// Refused: it changes the I/O and iolab has no equivalent.
    Refused(&'static str),
}

/// fio's option aliases, mapped to the name this translator uses.
pub fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "blocksize_range" => "bsrange",
        "ba" => "blockalign",
        "io_limit" => "io_size",
        "timeout" => "runtime",
        "ratemin" => "rate_min",
        "ratecycle" => "rate_cycle",
        "randseed" | "random_seed" => "randseed",
        "iodepth_batch" => "iodepth_batch_submit",
        "blocksize_unaligned" => "bs_unaligned",
        "threads" => "thread",
        "ss" => "steadystate",
        "ss_dur" => "steadystate_duration",
        "ss_ramp" => "steadystate_ramp_time",
        "ss_interval" => "steadystate_check_interval",
        other => other,
    }
}

/// Options read by the translator.
const MAPPED: &[&str] = &[
    "name",
    "filename",
    "directory",
    "nrfiles",
    "size",
    "filesize",
    "offset",
    "offset_increment",
    "io_size",
    "number_ios",
    "rw",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "bsrange",
    "bssplit",
    "blockalign",
    "iodepth",
    "numjobs",
    "runtime",
    "time_based",
    "ramp_time",
    "direct",
    "buffered",
    "ioengine",
    "rate",
    "rate_iops",
    "rate_process",
    "random_distribution",
    "percentage_random",
    "randseed",
    "randrepeat",
    "verify",
    "verify_fatal",
    "do_verify",
    "stonewall",
    "wait_for_previous",
    "thinktime",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_spin",
    "thinktime_iotime",
    "rate_ignore_thinktime",
    "kb_base",
    "zero_buffers",
    "buffer_compress_percentage",
    "loops",
    "fill_device",
    "wait_for",
    "steadystate",
    "steadystate_duration",
    "steadystate_ramp_time",
    "steadystate_check_interval",
    "fsync",
    "fdatasync",
    "sync",
    "end_fsync",
    "fsync_on_close",
    "startdelay",
    "flow",
    "flow_id",
    "flow_sleep",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "create_on_open",
    "rw_sequencer",
    "zonesize",
    "zonerange",
    "zoneskip",
    "random_sequence_stride",
    "sprandom",
    "spr_op",
    "spr_num_regions",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_working_set_percentage",
    "dedupe_global",
    "atomic",
    "verify_backlog",
    "verify_backlog_batch",
];

const NO_IO: &str = "reporting or logging only; it does not change the I/O";

/// Options that do not change the I/O, with the reason they can be dropped.
const IGNORED: &[(&str, &str)] = &[
    ("description", "a free-text description"),
    ("group_reporting", NO_IO),
    ("new_group", "starts a reporting group only; jobs still run side by side"),
    ("thread", "threads or processes: iolab workers are threads; the I/O is the same"),
    ("write_bw_log", NO_IO),
    ("write_lat_log", NO_IO),
    ("write_iops_log", NO_IO),
    ("write_hist_log", NO_IO),
    ("write_iolog", "records the I/O issued; it does not change it"),
    ("log_avg_msec", NO_IO),
    ("log_hist_msec", NO_IO),
    ("log_hist_coarseness", NO_IO),
    ("log_max_value", NO_IO),
    ("log_offset", NO_IO),
    ("log_compression", NO_IO),
    ("log_store_compressed", NO_IO),
    ("log_unix_epoch", NO_IO),
    ("log_alternate_epoch", NO_IO),
    ("per_job_logs", NO_IO),
    ("lat_percentiles", NO_IO),
    ("clat_percentiles", NO_IO),
    ("slat_percentiles", NO_IO),
    ("percentile_list", NO_IO),
    ("significant_figures", NO_IO),
    ("disable_lat", NO_IO),
    ("disable_clat", NO_IO),
    ("disable_slat", NO_IO),
    ("disable_bw_measurement", NO_IO),
    ("bwavgtime", NO_IO),
    ("iopsavgtime", NO_IO),
    ("gtod_reduce", "timing-call reduction; iolab always times every I/O"),
    ("unified_rw_reporting", NO_IO),
    ("stats", NO_IO),
    ("unit_base", "the unit of fio's output only"),
    ("clocksource", "fio's timer source; iolab uses the monotonic clock"),
    (
        "allow_mounted_write",
        "a safety switch; iolab has its own checks (--allow-write-device, --destroy-data)",
    ),
    ("cpus_allowed", "CPU placement of the job; it does not change the I/O pattern (iolab does not pin)"),
    ("cpus_allowed_policy", "CPU placement of the job; it does not change the I/O pattern"),
    ("cpumask", "CPU placement of the job; it does not change the I/O pattern (iolab does not pin)"),
    ("numa_cpu_nodes", "NUMA placement; it does not change the I/O pattern"),
    ("numa_mem_policy", "NUMA placement; it does not change the I/O pattern"),
    ("nice", "process priority; it does not change the I/O pattern"),
    ("mem", "where fio allocates buffers; iolab uses its own page-aligned buffers"),
    ("iomem", "where fio allocates buffers; iolab uses its own page-aligned buffers"),
    ("iomem_align", "buffer alignment; iolab's buffers are 4 KiB aligned"),
    ("mem_align", "buffer alignment; iolab's buffers are 4 KiB aligned"),
    ("refill_buffers", "iolab's random data already differs in every write"),
    ("scramble_buffers", "iolab's random data already differs in every write"),
    ("fixedbufs", "iolab's io_uring engine always registers its buffers"),
    ("registerfiles", "iolab's io_uring engine always registers its files"),
    (
        "overwrite",
        "iolab fills a new file before the run, so writes overwrite written data as with overwrite=1",
    ),
    ("unlink", "file removal after the job; it does not change the I/O"),
    (
        "invalidate",
        "drops the page cache of the files before the job; the I/O issued is the same (see docs/FIO.md)",
    ),
    ("exitall_on_error", "what fio does after an error; iolab counts errors (stop_on_error ends the run)"),
    ("continue_on_error", "what fio does after an error; iolab counts errors and goes on"),
    ("create_serialize", "how fio lays out files before the job; not the measured I/O"),
    ("create_fsync", "how fio lays out files before the job; not the measured I/O"),
    (
        "fallocate",
        "how fio lays out files before the job; iolab's own --prealloc (fallocate, write, none) says how it lays out the files it creates",
    ),
    ("warnings_fatal", "fio's own warnings"),
    ("max_latency", "a fio failure threshold; it does not change the I/O until it trips (see [verdict])"),
    ("rate_min", RATE_FLOOR),
    ("rate_iops_min", RATE_FLOOR),
    ("rate_cycle", RATE_FLOOR),
    ("ignore_error", "which errors fio lets pass; iolab counts errors and goes on (stop_on_error ends the run)"),
    ("error_dump", NO_IO),
    ("verify_dump", "what fio writes out after a mismatch; iolab reports the block and offset"),
    ("verify_write_sequence", "a check of fio's own header; iolab's header carries its own generation"),
    (
        "verify_async",
        "which threads check what fio's reads returned (N threads beside the job's): the same I/O is issued; iolab \
         checks each read in the worker as it completes",
    ),
    ("verify_pattern", VERIFY_OWN),
    ("verify_interval", VERIFY_OWN),
    ("verify_offset", VERIFY_OWN),
    ("exitall", EXITALL),
    ("exit_what", EXITALL),
    ("io_submit_mode", "which fio thread submits (offload: a pool); the I/O issued and its rate are the same"),
    (
        "random_generator",
        "fio's generator of random offsets; iolab's (xoshiro256**) gives other offsets, with the same distribution",
    ),
    ("allow_file_create", "whether fio may create a missing file; the I/O to the file is the same"),
    ("prio", PRIO),
    ("prioclass", PRIO),
    ("log_prio", NO_IO),
    ("cmdprio", CMDPRIO),
    ("cmdprio_class", CMDPRIO),
    ("cmdprio_percentage", CMDPRIO),
    ("cmdprio_bssplit", CMDPRIO),
    ("cmdprio_hint", CMDPRIO),
    ("exec_prerun", "a command fio runs before the job; it is not the job's I/O (run it yourself)"),
    ("exec_postrun", "a command fio runs after the job; it is not the job's I/O (run it yourself)"),
    ("write_barrier", WRITE_BARRIER),
];

/// Why `write_barrier` is ignored (fio's io_u.c sets the barrier flag only for an engine with FIO_BARRIER).
const WRITE_BARRIER: &str = "fio marks every N-th write a barrier only for engines that act on the mark \
    (libpmem; binject, removed from fio); with the engines iolab runs (psync, sync, libaio, io_uring, ...) fio \
    issues the same writes as without it. It is not a flush: use fsync=N or fdatasync=N for that";

/// Why fio's verify-trim options are refused.
const VERIFY_TRIM: &str =
    "fio's verify-trim trims a share of the blocks it wrote and checks that they read back \
    as zeros; iolab's trims are a share of the ops (rw=trim, rw=randtrim), and --verify refuses trims";

/// Why exitall is ignored (with size limits the translation adds a note).
const EXITALL: &str =
    "fio stops every job when the first ends; with a runtime iolab's workers of a phase end \
    together too (with size limits, where each iolab worker ends at its own share, the translation says so)";

/// Why rate floors are ignored.
const RATE_FLOOR: &str =
    "a fio failure threshold (the job ends with an error below this rate); it does not change the I/O until it trips";

/// Why fio's verification layout options are ignored.
const VERIFY_OWN: &str = "where fio's verification puts its pattern or checksum in a block; iolab stamps its own \
    header (offset, generation, checksum) in every block and checks every read: same offsets and sizes, other bytes";

/// Why job-wide I/O priorities are ignored.
const PRIO: &str =
    "the job's I/O priority: the same I/O is issued; run iolab under ionice (-c CLASS -n LEVEL) to \
    give it the same priority";

/// Why per-command priorities are ignored.
const CMDPRIO: &str = "I/O priorities (or priority hints) on a share of the I/Os: the same I/Os are issued, \
    but iolab issues every one at the process's priority, so fio's split of latency by priority is not \
    reproduced (ionice gives all of them one priority)";

/// Options accepted only with the values that match iolab's behaviour.
const ONLY_VALUES: &[(&str, &[&str], &str)] = &[
    (
        "file_service_type",
        &["roundrobin", "roundrobin:1"],
        "iolab switches targets round robin after every I/O",
    ),
    ("pre_read", &["0"], "iolab does not read files into the page cache before the run"),
    ("bs_unaligned", &["0"], "iolab's I/O sizes are the block sizes given"),
    ("iodepth_batch_submit", &["1"], "iolab submits I/Os as slots free, not in batches"),
    ("iodepth_batch_complete_min", &["1"], "iolab reaps completions as they come, not in batches"),
    ("iodepth_batch_complete", &["1"], "iolab reaps completions as they come, not in batches"),
    ("iodepth_low", &["0"], "iolab refills the queue as soon as a slot frees"),
    (
        "norandommap",
        &["1"],
        "iolab draws every random offset independently (no random map), as with norandommap=1",
    ),
    ("hipri", &["0"], "iolab's io_uring engine does not poll for completions"),
    ("sqthread_poll", &["0"], "iolab's io_uring engine does not use a kernel submission thread"),
    ("ramp_size", &["0"], "iolab's warm-up is a time (ramp_time)"),
    ("trim_percentage", &["0"], VERIFY_TRIM),
    ("fadvise_hint", &["0", "1"], "iolab gives no other fadvise hints"),
    ("zonemode", &["none", "strided"], ZBD),
    (
        "spr_cs",
        &["0"],
        "fio defers SPRandom's rewrites by a region past a device cache of this size; iolab does not",
    ),
];

/// Why `zonemode=zbd` is refused.
const ZBD: &str =
    "zoned block devices (zbd): fio writes each zone sequentially at its write pointer, resets \
    and finishes zones; iolab issues plain block I/O with no zone management (zonemode=strided is its band)";

/// Options that change the I/O and have no iolab equivalent.
const REFUSED: &[(&str, &str)] = &[
    ("bs_is_seq_rand", "iolab's block sizes do not depend on whether the I/O is sequential"),
    ("rwmixcycle", "iolab chooses read or write per I/O"),
    ("ioscheduler", "iolab does not change the device's I/O scheduler"),
    ("offset_align", "iolab's region starts at the offset given"),
    ("openfiles", "iolab keeps every target open"),
    ("read_iolog", "a job file does not replay an I/O log: 'iolab replay LOG --target ...' does"),
    ("replay_no_stall", "a job file does not replay an I/O log: 'iolab replay LOG --speed max' does"),
    ("replay_redirect", "a job file does not replay an I/O log: 'iolab replay LOG --map DEV=TARGET' does"),
    ("buffer_pattern", "iolab's data is random, zero or compressible, not a given pattern"),
    ("buffer_compress_chunk", "iolab's compressible data uses 4 KiB chunks"),
    ("verify_only", "iolab's verification runs with the workload"),
    ("verify_state_save", "iolab keeps written generations in its own journal (journal = FILE)"),
    ("verify_state_load", "iolab keeps written generations in its own journal (journal = FILE)"),
    ("experimental_verify", "iolab's verification stamps its own header"),
    ("serialize_overlap", "iolab does not serialize overlapping I/Os"),
    ("lockfile", "iolab does not lock files between workers"),
    ("cpuload", "iolab has no CPU-burning engine"),
    ("uid", "iolab runs as the user who starts it"),
    ("gid", "iolab runs as the user who starts it"),
    ("include", "included job files are not read; paste their options in"),
    ("filename_format", "iolab names fio's default files $jobname.$jobnum.$filenum only"),
    ("unique_filename", "iolab names fio's default files $jobname.$jobnum.$filenum only"),
    ("trim_backlog", VERIFY_TRIM),
    ("trim_backlog_batch", VERIFY_TRIM),
    ("trim_verify_zero", VERIFY_TRIM),
    ("nrfiles_skip", "iolab has no such file layout"),
    ("fdp", ENGINE_ONLY),
    ("fdp_pli", ENGINE_ONLY),
    ("fdp_pli_select", ENGINE_ONLY),
    ("dataplacement", ENGINE_ONLY),
    ("plids", ENGINE_ONLY),
    ("md_per_io_size", ENGINE_ONLY),
    ("pi_act", ENGINE_ONLY),
    ("pi_chk", ENGINE_ONLY),
    ("apptag", ENGINE_ONLY),
    ("apptag_mask", ENGINE_ONLY),
];

/// Why NVMe passthrough options are refused.
const ENGINE_ONLY: &str = "an NVMe option of fio's io_uring_cmd and xnvme engines (placement or protection \
    information); iolab issues plain block I/O";

/// The class of an option (by its canonical name); `None` for an option the translator does not know.
pub fn classify(key: &str) -> Option<Class> {
    if MAPPED.contains(&key) {
        return Some(Class::Mapped);
    }
    if let Some((_, why)) = IGNORED.iter().find(|(k, _)| *k == key) {
        return Some(Class::Ignored(why));
    }
    if let Some((_, ok, why)) = ONLY_VALUES.iter().find(|(k, _, _)| *k == key) {
        return Some(Class::OnlyValues(ok, why));
    }
    REFUSED.iter().find(|(k, _)| *k == key).map(|(_, why)| Class::Refused(why))
}

/// An iolab engine for a fio `ioengine`: `Some("io_uring")`, `Some("sync")`, `Some("null")` (a `null:`
/// target), or `None` for an engine iolab does not have.
pub fn engine(name: &str) -> Option<&'static str> {
    match name.trim() {
        "libaio" | "io_uring" | "posixaio" => Some("io_uring"),
        "psync" | "sync" | "pvsync" | "pvsync2" | "vsync" => Some("sync"),
        "null" => Some("null"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_option_is_in_two_lists() {
        let mut all: Vec<&str> = MAPPED.to_vec();
        all.extend(IGNORED.iter().map(|(k, _)| *k));
        all.extend(ONLY_VALUES.iter().map(|(k, _, _)| *k));
        all.extend(REFUSED.iter().map(|(k, _)| *k));
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "an option is listed twice");
        for k in all {
            assert_eq!(canonical(k), k, "{k} is listed under an alias");
        }
    }
}
