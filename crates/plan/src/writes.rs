//! What a worker's writes carry beyond their offsets and sizes: a share of data that repeats earlier writes
//! ([`DedupePlan`], the `dedupe` key) and atomic writes (the `atomic` key).

use crate::{PlanError, WorkerPlan};
use iolab_spec::{DataPattern, Dedupe, Layer};
use serde::Serialize;

/// A worker's duplicate writes (the `dedupe` key, fio's dedupe options): how many, and which earlier write's
/// data each copies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DedupePlan {
    /// Percent of writes whose data copies an earlier unique write's, 1..=100.
    pub pct: u8,
    /// Working set: a copy is of one of the first unique writes, as many as this percent of the region in
    /// blocks of the smallest write size; `None`: a copy repeats the last unique write.
    pub working_set_pct: Option<u8>,
    /// The working set is shared by every worker whose `dedupe` says `global` (fio's `dedupe_global`).
    pub global: bool,
    /// The workers (their indices, in order, this one among them) sharing one working set (`global`); empty
    /// for a worker with a set of its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shared_by: Vec<u32>,
}

/// The duplicate writes `base` asks for; refused with zero data, whose blocks are all alike already.
pub(crate) fn dedupe_of(name: &str, base: &Layer) -> Result<Option<DedupePlan>, PlanError> {
    let Some(Dedupe { pct, working_set_pct, global }) = base.dedupe else { return Ok(None) };
    if base.data == Some(DataPattern::Zero) {
        return Err(PlanError(format!(
            "worker '{name}': 'dedupe' makes a share of the writes copies of earlier ones, but its data is \
             'zero', so every block written is alike already; drop one of them"
        )));
    }
    Ok(Some(DedupePlan { pct, working_set_pct, global, shared_by: Vec::new() }))
}

/// Whether `base`'s writes are atomic; refused with buffered I/O on files and devices, where the kernel takes
/// RWF_ATOMIC only with O_DIRECT (mem:, null: and sim: writes are atomic by construction).
pub(crate) fn atomic_of(
    name: &str,
    base: &Layer,
    direct: bool,
    virtual_targets: bool,
) -> Result<bool, PlanError> {
    let atomic = base.atomic.unwrap_or(false);
    if atomic && !direct && !virtual_targets {
        return Err(PlanError(format!(
            "worker '{name}': 'atomic' writes (RWF_ATOMIC) need direct I/O, and this run is buffered; set \
             direct = true (fio's direct=1), or drop 'atomic'"
        )));
    }
    Ok(atomic)
}

/// The read-backs `base` asks for (`verify_backlog`): only with `--verify`, whose layer checks what they read.
pub(crate) fn backlog_of(name: &str, base: &Layer, verifying: bool) -> Result<Option<(u32, u32)>, PlanError> {
    match base.verify_backlog {
        Some((every, _)) if !verifying => Err(PlanError(format!(
            "worker '{name}': 'verify_backlog' reads back every {every} writes for --verify to check, and this run \
             does not verify; add --verify (verify = true), or drop 'verify_backlog'"
        ))),
        b => Ok(b),
    }
}

/// Gives every worker whose `dedupe` is `global` the list of them, so they share one working set (each
/// worker's part of it its own first unique writes).
pub(crate) fn share_dedupe(workers: &mut [WorkerPlan]) {
    let global = |w: &WorkerPlan| w.dedupe.as_ref().is_some_and(|d| d.global);
    let shared: Vec<u32> = workers.iter().filter(|w| global(w)).map(|w| w.index).collect();
    for d in workers.iter_mut().filter_map(|w| w.dedupe.as_mut().filter(|d| d.global)) {
        d.shared_by = shared.clone();
    }
}

#[cfg(test)]
mod tests {
    use crate::Plan;
    use iolab_spec::JobSpec;

    fn plan(keys: &str) -> Result<Plan, String> {
        let job = JobSpec::from_toml(&format!("rw = \"randwrite\"\n{keys}"), "t").unwrap();
        Plan::from_spec(&job, None).map_err(|e| e.to_string())
    }

    /// Issue 36, item 8: duplicates of zero data, atomic writes with buffered I/O on a file and read-backs
    /// without verification are refused, each naming its key; the same keys plan where they can hold.
    #[test]
    fn write_keys_are_refused_where_they_cannot_hold() {
        let e = plan("target = \"mem:1M\"\ndata = \"zero\"\ndedupe = \"50\"").unwrap_err();
        assert!(e.contains("'dedupe'") && e.contains("'zero'"), "{e}");
        let e = plan("target = \"/tmp/f\"\nsize = \"1M\"\ndirect = false\natomic = true").unwrap_err();
        assert!(e.contains("'atomic'") && e.contains("direct"), "{e}");
        let e = plan("target = \"mem:1M\"\nverify_backlog = \"8\"").unwrap_err();
        assert!(e.contains("'verify_backlog'") && e.contains("--verify"), "{e}");
        let p = plan(
            "target = \"mem:1M\"\ndirect = false\natomic = true\ndedupe = \"50:set=10:global\"\nworkers = 2",
        )
        .unwrap();
        assert!(p.workers.iter().all(|w| w.atomic), "mem: takes atomic writes, buffered or not");
        assert!(p.workers.iter().all(|w| w.dedupe.as_ref().is_some_and(|d| d.shared_by == [0, 1])));
        let p = plan("target = \"mem:1M\"\nverify = true\nverify_backlog = \"8:4\"").unwrap();
        assert_eq!(p.workers[0].verify_backlog, Some((8, 4)));
    }
}
