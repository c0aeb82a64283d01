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
//!
//! A directory iolab makes to fill and remove (`iolab db --dir`) is marked so that no other account can
//! forge the mark: as root, with [`DIR_MARK`] in the `trusted.` namespace; otherwise with a record in the
//! user's own state directory ([`records`]). The plain file an older iolab put inside ([`OLD_DIR_MARK`]) is
//! no mark: anyone who could write the directory could have planted it.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;

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

/// The file an older iolab put in a directory to mark it as its own. Anyone who can write the directory can
/// plant one, so it marks nothing now: a directory that carries only it is refused, with a hint to remove it.
pub const OLD_DIR_MARK: &str = ".iolab-dir";

/// The extended attribute that marks a directory as iolab's when iolab runs as root: in the `trusted.`
/// namespace, which only a process with CAP_SYS_ADMIN can set (or even read), so no other account can
/// forge it.
pub const DIR_MARK: &str = "trusted.iolab";

/// What the directory mark holds.
const DIR_MARK_VALUE: &[u8] = b"directory made by iolab; iolab may empty and remove it";

/// The extended attribute that carries a directory's token for the record of an unprivileged user (see
/// [`mark_dir`]): a planted one matches no record, since no other account can read or write the records.
pub const DIR_TOKEN: &str = "user.iolab-dir";

/// Marks the directory `dir` (made by iolab, still empty) as iolab's, before anything is put in it. As root:
/// [`DIR_MARK`]. Otherwise (or where the file system keeps no `trusted.` attributes) a record in iolab's
/// own state directory ([`records::state_dir`]), which only this user can write: the directory's device and
/// inode, its birth time where the file system keeps one, and a random token also put on the directory as
/// [`DIR_TOKEN`], so that another directory given the same inode later does not match. Returns whether a
/// mark could be kept; without one the directory is still removed by the run that made it (it holds it),
/// but a later run will not take it for iolab's.
pub fn mark_dir(dir: &File) -> bool {
    use xattr::FileExt;
    if nix::unistd::geteuid().is_root() && dir.set_xattr(DIR_MARK, DIR_MARK_VALUE).is_ok() {
        return true;
    }
    let Some(state) = records::state_dir() else { return false };
    records::add(&state, dir).is_ok()
}

/// Whether the directory `dir` (held open) carries a mark of iolab's: [`DIR_MARK`] (as root) or a record
/// of this user's that matches it. A file [`OLD_DIR_MARK`] inside it is no mark.
pub fn dir_is_ours(dir: &File) -> bool {
    use xattr::FileExt;
    if nix::unistd::geteuid().is_root() && matches!(dir.get_xattr(DIR_MARK), Ok(Some(_))) {
        return true;
    }
    records::state_dir().is_some_and(|state| records::find(&state, dir))
}

/// Forgets the record of the directory `dir`, which iolab is about to remove (nothing for a `trusted.`
/// mark, which goes with the directory).
pub fn unmark_dir(dir: &File) {
    if let Some(state) = records::state_dir() {
        let _ = records::forget(&state, dir);
    }
}

/// The records an unprivileged user's iolab keeps of the directories it made: one file, `dirs`, in a
/// directory of the user's own (mode 0700), written only under an exclusive lock.
pub mod records {
    use nix::fcntl::{Flock, FlockArg};
    use std::fs::{self, File, OpenOptions};
    use std::io::{self, Read, Write};
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
    use std::path::{Path, PathBuf};

    /// The file of records in the state directory.
    const FILE: &str = "dirs";

    /// iolab's state directory: `$XDG_STATE_HOME/iolab`, else `$HOME/.local/state/iolab`.
    pub fn state_dir() -> Option<PathBuf> {
        let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| Path::new(v).is_absolute()) {
            Some(x) => PathBuf::from(x),
            None => PathBuf::from(std::env::var_os("HOME").filter(|v| Path::new(v).is_absolute())?)
                .join(".local/state"),
        };
        Some(base.join("iolab"))
    }

    /// What identifies a directory: device, inode, birth time (0 when not kept) and token (empty when the
    /// file system keeps no user attributes).
    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Entry {
        dev: u64,
        ino: u64,
        birth: String,
        token: String,
    }

    impl Entry {
        fn line(&self) -> String {
            format!(
                "{} {} {} {}\n",
                self.dev,
                self.ino,
                self.birth,
                if self.token.is_empty() { "-" } else { &self.token }
            )
        }

        fn parse(line: &str) -> Option<Entry> {
            let f: Vec<&str> = line.split_whitespace().collect();
            let token = if *f.get(3)? == "-" { String::new() } else { f[3].to_string() };
            Some(Entry { dev: f[0].parse().ok()?, ino: f[1].parse().ok()?, birth: f[2].to_string(), token })
        }

        /// True when `self` (a record) vouches for `now` (the directory as it is): same inode, and every
        /// identity both know agrees; at least one of birth time and token is known to both.
        fn vouches_for(&self, now: &Entry) -> bool {
            let birth_known = self.birth != "0" && now.birth != "0";
            let token_known = !self.token.is_empty() && !now.token.is_empty();
            self.dev == now.dev
                && self.ino == now.ino
                && (birth_known || token_known)
                && (!birth_known || self.birth == now.birth)
                && (self.token.is_empty() || self.token == now.token)
        }
    }

    /// The directory as it is now (its token read from it).
    fn identify(dir: &File) -> io::Result<Entry> {
        use xattr::FileExt;
        let m = dir.metadata()?;
        let token = match dir.get_xattr(super::DIR_TOKEN) {
            Ok(Some(v)) => String::from_utf8_lossy(&v).into_owned(),
            _ => String::new(),
        };
        Ok(Entry { dev: m.dev(), ino: m.ino(), birth: birth_time(dir), token })
    }

    /// The directory's birth time (statx), "0" when its file system keeps none.
    fn birth_time(dir: &File) -> String {
        match dir.metadata().and_then(|m| m.created()) {
            Ok(t) => t
                .duration_since(std::time::UNIX_EPOCH)
                .map_or("0".into(), |d| format!("{}.{}", d.as_secs(), d.subsec_nanos())),
            Err(_) => "0".into(),
        }
    }

    /// A new random token (hex).
    fn new_token() -> io::Result<String> {
        let mut bytes = [0u8; 16];
        File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Opens the records file in `state` (made 0700/0600 when missing) under an exclusive lock, after
    /// checking that no other account could have written it.
    fn open_locked(state: &Path, create: bool) -> io::Result<Flock<File>> {
        let me = nix::unistd::geteuid().as_raw();
        if create {
            fs::DirBuilder::new().recursive(true).mode(0o700).create(state)?;
        }
        let d = fs::symlink_metadata(state)?;
        if !d.is_dir() || d.uid() != me || d.mode() & 0o022 != 0 {
            return Err(io::Error::other(format!(
                "'{}' is not a directory of this user's alone",
                state.display()
            )));
        }
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(create)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(state.join(FILE))?;
        let m = file.metadata()?;
        if !m.is_file() || m.uid() != me || m.mode() & 0o022 != 0 {
            return Err(io::Error::other("the records file is not this user's alone"));
        }
        Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| e.into())
    }

    fn read_all(mut file: &File) -> io::Result<Vec<Entry>> {
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        Ok(text.lines().filter_map(Entry::parse).collect())
    }

    /// Records the directory `dir` in `state`, putting a new token on it.
    pub fn add(state: &Path, dir: &File) -> io::Result<()> {
        use xattr::FileExt;
        let token = new_token()?;
        let token =
            if dir.set_xattr(super::DIR_TOKEN, token.as_bytes()).is_ok() { token } else { String::new() };
        let entry = Entry { token, ..identify(dir)? };
        if entry.birth == "0" && entry.token.is_empty() {
            return Err(io::Error::other("the directory has neither a birth time nor user attributes"));
        }
        let mut file = open_locked(state, true)?;
        let kept: Vec<Entry> =
            read_all(&file)?.into_iter().filter(|e| (e.dev, e.ino) != (entry.dev, entry.ino)).collect();
        rewrite(&mut file, &kept)?;
        file.write_all(entry.line().as_bytes())?;
        file.sync_all()
    }

    /// Whether a record in `state` vouches for `dir`.
    pub fn find(state: &Path, dir: &File) -> bool {
        let (Ok(file), Ok(now)) = (open_locked(state, false), identify(dir)) else { return false };
        read_all(&file).is_ok_and(|all| all.iter().any(|e| e.vouches_for(&now)))
    }

    /// Removes the record of `dir` from `state`.
    pub fn forget(state: &Path, dir: &File) -> io::Result<()> {
        let now = identify(dir)?;
        let mut file = open_locked(state, false)?;
        let all = read_all(&file)?;
        let kept: Vec<Entry> = all.iter().filter(|e| (e.dev, e.ino) != (now.dev, now.ino)).cloned().collect();
        if kept.len() != all.len() {
            rewrite(&mut file, &kept)?;
        }
        Ok(())
    }

    /// Replaces the (locked) file's content with `entries`.
    fn rewrite(file: &mut File, entries: &[Entry]) -> io::Result<()> {
        file.set_len(0)?;
        let text: String = entries.iter().map(Entry::line).collect();
        file.write_all(text.as_bytes())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_record_vouches_for_its_directory_only_and_a_planted_token_matches_none() {
            use xattr::FileExt;
            let state = tempfile::tempdir().unwrap();
            let state = state.path().join("iolab");
            let t = tempfile::tempdir().unwrap();
            let dir = File::open(t.path()).unwrap();
            assert!(!find(&state, &dir), "no records yet");
            if let Err(e) = add(&state, &dir) {
                iolab_testkit::skip(format_args!("this file system cannot identify a directory: {e}"));
                return;
            }
            assert!(find(&state, &dir));
            assert_eq!(fs::metadata(state.join(FILE)).unwrap().mode() & 0o777, 0o600);
            assert_eq!(fs::metadata(&state).unwrap().mode() & 0o777, 0o700);
            let other = tempfile::tempdir().unwrap();
            let other = File::open(other.path()).unwrap();
            let _ = other.set_xattr(crate::ownership::DIR_TOKEN, b"0123456789abcdef0123456789abcdef");
            assert!(!find(&state, &other), "another directory, a planted token");
            forget(&state, &dir).unwrap();
            assert!(!find(&state, &dir), "forgotten");
        }

        #[test]
        fn a_reused_inode_does_not_match_its_old_record() {
            let old = Entry { dev: 1, ino: 2, birth: "10.5".into(), token: "aa".into() };
            assert!(old.vouches_for(&old.clone()));
            assert!(!old.vouches_for(&Entry { birth: "11.0".into(), ..old.clone() }), "born later");
            assert!(!old.vouches_for(&Entry { token: String::new(), birth: "11.0".into(), ..old.clone() }));
            assert!(!old.vouches_for(&Entry { token: "bb".into(), ..old.clone() }), "another token");
            let bare = Entry { dev: 1, ino: 2, birth: "0".into(), token: String::new() };
            assert!(!bare.vouches_for(&bare.clone()), "nothing to tell two inodes apart");
        }
    }
}

fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOTSUP) | Some(libc::ENOSYS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

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
    fn a_directory_is_ours_by_its_trusted_mark_and_a_planted_old_mark_file_is_no_mark() {
        if !nix::unistd::geteuid().is_root() {
            iolab_testkit::skip(format_args!("not root: trusted. attributes need CAP_SYS_ADMIN"));
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(OLD_DIR_MARK), b"planted").unwrap();
        let held = File::open(dir.path()).unwrap();
        assert!(!dir_is_ours(&held), "a planted .iolab-dir marks nothing");
        assert!(mark_dir(&held));
        assert!(dir_is_ours(&held));
        assert!(dir_is_ours(&File::open(dir.path()).unwrap()), "the mark is on the inode");
    }
}
