//! Files iolab made: the rule that iolab writes, without being told, only what it made.
//!
//! Every target file iolab creates (`--size` on a missing path, a scratch file, a cache device) is marked as
//! its own with the extended attribute [`MARK`] on its inode, set before a byte is written. The mark is the
//! file's identity, not its name: a file put in its place (another inode) carries none. A write job may then
//! write a file whose mark still holds, or an empty one (nothing to lose), freely; any other existing file
//! needs `--overwrite` ([`iolab_spec::Consent`]). On a file system without extended attributes (vfat, some
//! network file systems) nothing can be marked, and a later write run asks for the flag; the refusal says so.
//!
//! A mark vouches only for the data iolab left: it is a [`MarkStamp`] of the file as iolab last closed it (its
//! size, mtime and ctime), set again ([`seal`]) by every run that wrote the file, when it lets the file go
//! ([`Seal`]). Any change since (other data copied over it on the same inode, `truncate`, `touch`, a
//! `chmod`, a rename, a run killed with SIGKILL before it sealed) leaves a mark that no longer matches
//! ([`Mark::Changed`]), and the next write run asks for `--overwrite`. A mark in the format of an older iolab
//! (no stamp) never matches.
//!
//! Why the ctime is checked within a window: setting the attribute itself sets the ctime, so the ctime iolab
//! could record is never the one the file then has. [`seal`] therefore sets the mark twice: first to learn
//! the ctime that setting the attribute gives (read back with fstat), then with that ctime recorded; the
//! second set moves the ctime on by the time between the two calls (microseconds). A mark matches when size
//! and mtime are exactly those recorded and the ctime lies no more than [`SEAL_WINDOW_NS`] after the one
//! recorded. Ordinary writes change the mtime, and nothing a user can do sets the ctime back; to pass, a
//! change would have to keep the size, restore the mtime to the nanosecond and happen within the window after
//! iolab let the file go.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The extended attribute that marks a file as iolab's.
pub const MARK: &str = "user.iolab";

/// What every mark starts with (the rest is the [`MarkStamp`]): it says whose the file is to someone who looks.
/// A mark is short (under 70 bytes), so it fits inside an ext4 inode and an empty file keeps no block.
const MARK_PREFIX: &str = "iolab";

/// How far after the recorded ctime a file's ctime may be for its mark to match (see the module
/// documentation): the second set of the mark moves it on by that much at most.
pub const SEAL_WINDOW_NS: i128 = 1_000_000_000;

/// What a file's mark says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// iolab made it, and it is as iolab last left it.
    Ours,
    /// It carries iolab's mark, but changed since iolab last wrote it (or the mark is an older iolab's).
    Changed,
    /// It carries no mark.
    Unmarked,
    /// Its file system keeps no extended attributes, so it cannot carry one.
    Unsupported,
}

/// A file as iolab left it: what a mark records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkStamp {
    /// Its length in bytes.
    pub size: u64,
    /// Its last data change, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Its last inode change, nanoseconds since the epoch.
    pub ctime_ns: i128,
}

impl MarkStamp {
    /// The stamp of the file whose metadata is `meta`.
    pub fn of(meta: &std::fs::Metadata) -> MarkStamp {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        MarkStamp {
            size: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The mark's value for this stamp.
    fn value(&self) -> String {
        format!("{MARK_PREFIX} s={} m={} c={}", self.size, self.mtime_ns, self.ctime_ns)
    }

    /// The stamp a mark's value records; `None` for anything else (an older iolab's mark).
    fn parse(value: &[u8]) -> Option<MarkStamp> {
        let rest = std::str::from_utf8(value).ok()?.strip_prefix(MARK_PREFIX)?;
        let mut fields = rest.split_whitespace();
        let mut field = |name: &str| fields.next()?.strip_prefix(name)?.strip_prefix('=').map(str::to_string);
        let size = field("s")?.parse().ok()?;
        let mtime_ns = field("m")?.parse().ok()?;
        let ctime_ns = field("c")?.parse().ok()?;
        fields.next().is_none().then_some(MarkStamp { size, mtime_ns, ctime_ns })
    }

    /// True when a file now stamped `now` is the one this stamp recorded (see the module documentation).
    fn matches(&self, now: &MarkStamp) -> bool {
        let after = now.ctime_ns - self.ctime_ns;
        self.size == now.size && self.mtime_ns == now.mtime_ns && (0..=SEAL_WINDOW_NS).contains(&after)
    }
}

/// Marks `file` as iolab's as it is now (see [`seal`]). Returns whether the mark was set; a file system
/// without extended attributes (or one refusing them) is not an error: the file just stays unmarked.
pub fn mark(file: &File) -> bool {
    seal(file)
}

/// Sets `file`'s mark to the file as it is now: twice, the second time recording the ctime the first set
/// gave (see the module documentation). Returns whether the mark was set.
pub fn seal(file: &File) -> bool {
    use xattr::FileExt;
    let set = |stamp: MarkStamp| file.set_xattr(MARK, stamp.value().as_bytes()).is_ok();
    let Ok(before) = file.metadata() else { return false };
    if !set(MarkStamp::of(&before)) {
        return false;
    }
    match file.metadata() {
        Ok(after) => set(MarkStamp::of(&after)),
        Err(_) => false,
    }
}

/// Reads `file`'s mark and checks it against the file as it is now.
pub fn mark_of(file: &File) -> Mark {
    use xattr::FileExt;
    match file.get_xattr(MARK) {
        Ok(Some(value)) => match (MarkStamp::parse(&value), file.metadata()) {
            (Some(recorded), Ok(meta)) if recorded.matches(&MarkStamp::of(&meta)) => Mark::Ours,
            _ => Mark::Changed,
        },
        Ok(None) => Mark::Unmarked,
        Err(e) if unsupported(&e) => Mark::Unsupported,
        Err(_) => Mark::Unmarked,
    }
}

/// Seals a file iolab writes when dropped ([`seal`]): held by whoever holds the file while the run writes it
/// (the opened target, the cache device), so the mark is set again once the last write is done, on every
/// way out that runs destructors (an error, a first Ctrl-C). An exit that skips them calls
/// [`seal_on_exit`] (a second Ctrl-C); one that runs nothing (SIGKILL) leaves a mark that no longer matches,
/// and the next write run asks for `--overwrite`.
#[derive(Debug)]
pub struct Seal {
    file: File,
    id: u64,
}

/// The files of the [`Seal`]s alive, by id, for [`seal_on_exit`].
static LIVE_SEALS: std::sync::Mutex<Vec<(u64, File)>> = std::sync::Mutex::new(Vec::new());

/// The next [`Seal`]'s id.
static NEXT_SEAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn live_seals() -> std::sync::MutexGuard<'static, Vec<(u64, File)>> {
    LIVE_SEALS.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Seal {
    /// A seal of `file` (descriptors of its own, so the seal outlives the caller's).
    pub fn of(file: &File) -> Option<Seal> {
        let (mine, listed) = (file.try_clone().ok()?, file.try_clone().ok()?);
        let id = NEXT_SEAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        live_seals().push((id, listed));
        Some(Seal { file: mine, id })
    }
}

impl Drop for Seal {
    fn drop(&mut self) {
        live_seals().retain(|(id, _)| *id != self.id);
        seal(&self.file);
    }
}

/// Seals every file a live [`Seal`] holds: for an exit that skips destructors (a second Ctrl-C). A write
/// still landing after it changes the file's mtime, so the mark then no longer matches: the safe side.
pub fn seal_on_exit() {
    for (_, file) in live_seals().iter() {
        seal(file);
    }
}

/// The file that marks a directory as iolab's (a database directory of `iolab db`): a directory's mark is a
/// file inside it rather than an extended attribute, so it works on every file system and moves with the
/// directory.
pub const DIR_MARK: &str = ".iolab-dir";

/// What the directory mark holds.
const DIR_MARK_TEXT: &[u8] = b"directory made by iolab; iolab may empty and remove it\n";

/// Marks the directory `dir` (made by iolab, still empty) as iolab's, before anything else is put in it.
pub fn mark_dir(dir: &Path) -> io::Result<()> {
    std::fs::write(dir.join(DIR_MARK), DIR_MARK_TEXT)
}

/// True when the directory `dir` carries iolab's mark (a regular file [`DIR_MARK`], not a symlink).
pub fn dir_is_ours(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(DIR_MARK)).is_ok_and(|m| m.file_type().is_file())
}

fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTSUP) | Some(libc::ENOSYS))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file just marked, or `None` (after a skip) where the file system keeps no user attributes.
    fn marked_file(dir: &Path) -> Option<std::path::PathBuf> {
        let path = dir.join("t.dat");
        let f = File::create(&path).unwrap();
        std::fs::write(&path, b"iolab's data").unwrap();
        if !mark(&f) {
            assert_eq!(mark_of(&f), Mark::Unsupported);
            iolab_testkit::skip(format_args!("this file system keeps no user extended attributes"));
            return None;
        }
        Some(path)
    }

    #[test]
    fn a_marked_file_is_ours_and_a_new_inode_at_its_name_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let Some(path) = marked_file(dir.path()) else { return };
        assert_eq!(mark_of(&File::open(&path).unwrap()), Mark::Ours);
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"someone else's").unwrap();
        assert_eq!(mark_of(&File::open(&path).unwrap()), Mark::Unmarked, "another inode at the old name");
    }

    #[test]
    fn a_mark_does_not_outlive_the_data_it_vouched_for() {
        let dir = tempfile::tempdir().unwrap();
        let Some(path) = marked_file(dir.path()) else { return };
        let ino = std::fs::metadata(&path).unwrap().ino();
        std::fs::write(&path, b"a,b,c\n1,2,3\n").unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), ino, "the same inode, other data");
        assert_eq!(mark_of(&File::open(&path).unwrap()), Mark::Changed);
        // Sealed again (as a run that wrote it does when it lets it go), it is iolab's again.
        assert!(seal(&File::open(&path).unwrap()));
        assert_eq!(mark_of(&File::open(&path).unwrap()), Mark::Ours);
        // Same size, mtime put back to the nanosecond: the ctime still tells, once past the window.
        let meta = std::fs::metadata(&path).unwrap();
        std::thread::sleep(std::time::Duration::from_nanos(SEAL_WINDOW_NS as u64 + 10_000_000));
        std::fs::write(&path, b"x,y,z\n4,5,6\n").unwrap();
        File::options().write(true).open(&path).unwrap().set_modified(meta.modified().unwrap()).unwrap();
        assert_eq!(mark_of(&File::open(&path).unwrap()), Mark::Changed, "mtime forged back");
    }

    #[test]
    fn a_seal_marks_again_when_dropped_or_at_an_exit_that_skips_destructors() {
        let dir = tempfile::tempdir().unwrap();
        let Some(path) = marked_file(dir.path()) else { return };
        let file = File::options().write(true).open(&path).unwrap();
        let guard = Seal::of(&file).unwrap();
        std::fs::write(&path, b"the run's writes").unwrap();
        assert_eq!(mark_of(&file), Mark::Changed, "written, not yet sealed");
        seal_on_exit();
        assert_eq!(mark_of(&file), Mark::Ours, "sealed by the exit path");
        std::fs::write(&path, b"more of the run's writes").unwrap();
        drop(guard);
        assert_eq!(mark_of(&file), Mark::Ours, "sealed when dropped");
        assert!(live_seals()
            .iter()
            .all(|(_, f)| f.metadata().unwrap().ino() != file.metadata().unwrap().ino()));
    }

    #[test]
    fn an_older_iolabs_mark_never_matches() {
        use xattr::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let Some(path) = marked_file(dir.path()) else { return };
        let f = File::open(&path).unwrap();
        f.set_xattr(MARK, b"target file made by iolab; its data is iolab's").unwrap();
        assert_eq!(mark_of(&f), Mark::Changed);
        let stamp = MarkStamp { size: 3, mtime_ns: -5, ctime_ns: 1 << 70 };
        assert_eq!(MarkStamp::parse(stamp.value().as_bytes()), Some(stamp));
    }

    #[test]
    fn a_directory_is_ours_only_with_its_mark_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!dir_is_ours(dir.path()));
        mark_dir(dir.path()).unwrap();
        assert!(dir_is_ours(dir.path()));
        let other = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path().join(DIR_MARK), other.path().join(DIR_MARK)).unwrap();
        assert!(!dir_is_ours(other.path()), "a symlinked mark is no mark");
    }
}
