//! Atomic writes (the `atomic` key, fio's `atomic=1`): before anything is created or written, every file or
//! device an atomic worker writes must say, through statx's STATX_WRITE_ATOMIC, that it takes atomic writes
//! of every size the worker writes (a power of two from `atomic_write_unit_min` to `atomic_write_unit_max`)
//! at the start of its region. On `mem:`, `null:` and `sim:` every write is one copy, never torn, so it is
//! atomic by construction and nothing is checked.

use crate::error::{Error, Result};
use iolab_plan::{Plan, WorkerPlan};
use iolab_spec::TargetSpec;

/// A target's atomic-write limits (statx `stx_atomic_write_unit_min`, `_max`), `None` where it reports none.
pub(crate) type AtomicLimits = Option<(u32, u32)>;

/// Checks every atomic worker's write sizes against the limits of each file or device it writes.
pub(crate) fn check(plan: &Plan) -> Result<()> {
    for w in plan.workers.iter().filter(|w| w.atomic) {
        for &t in &w.targets {
            let target = &plan.targets[t];
            let TargetSpec::Path { path } = target.spec.base() else { continue };
            check_target(w, &target.name, path, limits(path)?)?;
        }
    }
    Ok(())
}

/// The sizes `w` writes, smallest first.
fn write_sizes(w: &WorkerPlan) -> Vec<u64> {
    let mut sizes: Vec<u64> = w
        .specs
        .iter()
        .filter(|s| s.weight > 0 && s.read_pct < 100.0)
        .flat_map(|s| s.bs.iter().map(|b| b.size_bytes))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Refuses `w`'s atomic writes to target `name` at `path` where its limits do not take them.
pub(crate) fn check_target(w: &WorkerPlan, name: &str, path: &str, limits: AtomicLimits) -> Result<()> {
    let target = if name == path { format!("'{name}'") } else { format!("'{name}' ({path})") };
    let refuse = |why: String| {
        Err(Error::usage(format!(
            "worker '{}' asks for atomic writes ('atomic', fio's atomic=1), but target {target} {why}; nothing \
             was written",
            w.name
        )))
    };
    let Some((min, max)) = limits.filter(|(_, max)| *max > 0) else {
        return refuse("takes none: statx reports no atomic write unit (STATX_WRITE_ATOMIC) for it".into());
    };
    if let Some(why) = misaligned(w) {
        return refuse(format!(
            "takes an atomic write only at an offset that is a multiple of its size, and {why}"
        ));
    }
    for size in write_sizes(w) {
        if !size.is_power_of_two() || size < u64::from(min) || size > u64::from(max) {
            return refuse(format!(
                "takes atomic writes of a power of two from {min} to {max} bytes \
                 (statx atomic_write_unit_min and _max), and the worker writes {size} bytes"
            ));
        }
        if w.region_offset % size != 0 {
            return refuse(format!(
                "takes an atomic write only at an offset that is a multiple of its size, and the \
                 worker's region starts at {}, not a multiple of {size}",
                w.region_offset
            ));
        }
    }
    Ok(())
}

/// Why some of `w`'s writes would start at an offset that is not a multiple of their size, if they would: random
/// writes aligned to less than their size, sequential writes of several sizes (each starts where the one before
/// ended) or with a skip that is not a multiple of their size.
fn misaligned(w: &WorkerPlan) -> Option<String> {
    for s in w.specs.iter().filter(|s| s.weight > 0 && s.read_pct < 100.0) {
        let sizes: Vec<u64> = s.bs.iter().map(|b| b.size_bytes).collect();
        for &size in &sizes {
            if let Some(a) = s.align.filter(|a| s.random_pct > 0.0 && a % size != 0) {
                return Some(format!("its random writes of {size} bytes are aligned to {a} bytes"));
            }
            if s.random_pct < 100.0 && s.seq_skip.unsigned_abs() % size != 0 {
                return Some(format!("its sequential writes of {size} bytes skip {} bytes", s.seq_skip));
            }
        }
        if s.random_pct < 100.0 && sizes.len() > 1 {
            return Some(
                "its sequential writes have several sizes, each starting where the one before ended".into(),
            );
        }
    }
    None
}

/// The atomic-write limits of the file or device at `path`; a file that does not exist yet is refused (its
/// limits are its file system's for that file, known only once it exists).
fn limits(path: &str) -> Result<AtomicLimits> {
    iolab_device::atomic::atomic_write_limits(std::path::Path::new(path)).map_err(|e| {
        Error::usage(format!(
            "atomic writes ('atomic'): cannot read the atomic-write limits of '{path}' (statx: {e}); atomic \
             writes go to an existing file or device, whose limits are checked before anything is written"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(keys: &str) -> WorkerPlan {
        let job =
            iolab_spec::JobSpec::from_toml(&format!("target = \"mem:1M\"\nrw = \"randwrite\"\n{keys}"), "t")
                .unwrap();
        Plan::from_spec(&job, None).unwrap().workers.remove(0)
    }

    /// Issue 36, item 8: an atomic worker's write sizes are checked against the target's limits, and each
    /// refusal names the worker, the target and the limits.
    #[test]
    fn atomic_writes_are_checked_against_the_targets_limits() {
        let w = worker("bs = \"4k/50:8k/50\"\natomic = true");
        assert!(check_target(&w, "db", "/dev/x", Some((512, 65536))).is_ok());
        let e = check_target(&w, "db", "/dev/x", Some((512, 4096))).unwrap_err().to_string();
        assert!(e.contains("worker 'worker'") && e.contains("'db'") && e.contains("512 to 4096"), "{e}");
        assert!(e.contains("writes 8192 bytes"), "{e}");
        let e = check_target(&w, "db", "/dev/x", None).unwrap_err().to_string();
        assert!(e.contains("takes none") && e.contains("STATX_WRITE_ATOMIC"), "{e}");
        let e = check_target(&w, "db", "/dev/x", Some((0, 0))).unwrap_err().to_string();
        assert!(e.contains("takes none"), "{e}");
        let e = check_target(
            &worker("bs = \"8k\"\nalign = \"4k\"\natomic = true"),
            "db",
            "/dev/x",
            Some((512, 65536)),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("writes of 8192 bytes are aligned to 4096 bytes"), "{e}");
        let seq = worker("random_pct = 0\nbs = \"4k/50:8k/50\"\natomic = true");
        let e = check_target(&seq, "db", "/dev/x", Some((512, 65536))).unwrap_err().to_string();
        assert!(e.contains("several sizes"), "{e}");
        let odd = worker("bs = \"4k\"\noffset = \"2k\"\natomic = true");
        let e = check_target(&odd, "db", "/dev/x", Some((512, 65536))).unwrap_err().to_string();
        assert!(e.contains("starts at 2048"), "{e}");
    }
}
