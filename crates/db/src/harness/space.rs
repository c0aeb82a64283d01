//! Free space, checked before anything is made: a workload's build is estimated ([`Workload::space_need`],
//! from sizes measured on real builds) and refused when the file system under a directory it writes has
//! less free space (statvfs `f_bavail`, plus what emptying iolab's earlier directory there gives back) than
//! the estimate and a margin ([`margin`]), quoting the estimate, the free space and the flags that size it.

use super::setup::{Claimed, Setup};
use crate::workload::{SpaceNeed, Workload};
use crate::WorkloadError;
use iolab_device::{format_bytes, DirState};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Room left beside the estimate: a tenth of it, and at least 16 MiB (a database grows as it runs:
/// tpcc's new orders, PostgreSQL's WAL; the file system needs some too).
pub(crate) fn margin(bytes: u64) -> u64 {
    (bytes / 10).max(16 << 20)
}

/// The file system a directory will be on: the directory if it is there, else its parent (which the
/// write gate found). Its device, its free space, and what emptying an earlier directory of iolab's gives
/// back.
struct Room {
    dev: u64,
    free: u64,
    reclaim: u64,
}

fn room(path: &str, state: DirState) -> Option<Room> {
    let p = Path::new(path);
    let at = if p.exists() { p.to_path_buf() } else { std::path::absolute(p).ok()?.parent()?.to_path_buf() };
    let st = nix::sys::statvfs::statvfs(&at).ok()?;
    let dev = std::fs::metadata(&at).ok()?.dev();
    let free = st.blocks_available() as u64 * st.fragment_size() as u64;
    let reclaim = if state == DirState::Ours { allocated(p, dev) } else { 0 };
    Some(Room { dev, free, reclaim })
}

/// Bytes allocated under `dir` on device `dev` (symlinks not followed, other file systems not entered).
fn allocated(dir: &Path, dev: u64) -> u64 {
    let Ok(m) = std::fs::symlink_metadata(dir) else { return 0 };
    if m.dev() != dev {
        return 0;
    }
    let mut n = m.blocks() * 512;
    if m.is_dir() {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            n += allocated(&e.path(), dev);
        }
    }
    n
}

/// Refuses the run when a file system under the directories `claimed` names has less free space than
/// `workload`'s estimate for them and [`margin`]; directories on one file system add up. Nothing known
/// (no estimate, a statvfs that fails) passes.
pub(crate) fn check<W: Workload>(
    setup: &Setup,
    claimed: &Claimed,
    workload: &W,
) -> Result<(), WorkloadError> {
    let Some(need) = workload.space_need(setup.database) else { return Ok(()) };
    let flags: Vec<&str> = std::iter::once("--dir").chain(setup.also.iter().map(|(f, _)| *f)).collect();
    let dirs: Vec<(&str, &str, DirState)> = match &claimed.dir {
        Some(d) => std::iter::once(d)
            .chain(&claimed.also)
            .zip(flags)
            .map(|((path, held), f)| (f, path.as_str(), held.state()))
            .collect(),
        // A server of the user's: its files are not under any directory of iolab's.
        None => return Ok(()),
    };
    let mut fs: Vec<(Room, u64, Vec<String>)> = Vec::new();
    for (&(flag, path, state), &bytes) in dirs.iter().zip(&need.bytes) {
        let Some(r) = room(path, state) else { continue };
        let named = format!("{flag} '{path}'");
        match fs.iter_mut().find(|(f, ..)| f.dev == r.dev) {
            Some((f, total, names)) => {
                f.reclaim += r.reclaim;
                *total += bytes;
                names.push(named);
            }
            None => fs.push((r, bytes, vec![named])),
        }
    }
    for (r, bytes, names) in fs {
        let have = r.free + r.reclaim;
        if have < bytes + margin(bytes) {
            return Err(refusal(&names, bytes, have, &need, setup));
        }
    }
    Ok(())
}

fn refusal(names: &[String], bytes: u64, have: u64, need: &SpaceNeed, setup: &Setup) -> WorkloadError {
    WorkloadError::Setup(format!(
        "{}: the build ({} on {}) needs about {} there, and {} beside it as a margin, but the file system \
         has {} free; nothing was made\n  hint: a smaller {}, or a directory on a larger file system",
        names.join(" and "),
        need.sized_by,
        setup.database.name(),
        format_bytes(bytes),
        format_bytes(margin(bytes)),
        format_bytes(have),
        need.flag,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_is_a_tenth_and_at_least_16_mib() {
        assert_eq!(margin(0), 16 << 20);
        assert_eq!(margin(10 << 30), 1 << 30);
    }

    #[test]
    fn an_earlier_directory_s_blocks_count_as_free() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("db");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("f"), vec![1u8; 1 << 20]).unwrap();
        let ours = room(d.to_str().unwrap(), DirState::Ours).unwrap();
        assert!(ours.reclaim >= 1 << 20, "{}", ours.reclaim);
        assert_eq!(room(d.to_str().unwrap(), DirState::New).unwrap().reclaim, 0);
    }
}
