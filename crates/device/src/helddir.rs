//! Directories iolab makes, fills and removes (`iolab db --dir`), held by descriptor from their claim.
//!
//! The claim ([`crate::WriteGate::database_dir`]) resolves the path once: it opens the parent directory (O_DIRECTORY) and keeps it with
//! the entry's name, and, for a directory that is there already, opens it (O_DIRECTORY|O_NOFOLLOW) and takes
//! an exclusive `flock` on it, held for the whole run, so a second iolab run on the same directory is refused
//! before it changes anything. A directory that is there is taken only when it carries iolab's mark
//! ([`crate::ownership::dir_is_ours`]), is not a mount point, has no mount point beneath it, holds nothing
//! owned by an account other than iolab's user or the database server's, and has nothing beneath it in use
//! by another process (`inuse`: held open, mapped, locked, or a working directory).
//!
//! Everything after the claim goes through those descriptors, never through the path again:
//! [`HeldDir::make`] makes a new directory with `mkdirat` in the held parent (and marks and locks it) or
//! empties the held one; [`HeldDir::remove`] empties it with `openat`/`unlinkat`, entry by entry, never
//! following a symlink (a symlink is removed, not what it names), never crossing into another mount (an
//! error, not a skip), never removing what another account owns; then it removes the directory from the
//! held parent only when the parent's entry is still the same directory (device and inode). A path
//! component swapped for a symlink during the run changes nothing iolab removes.

use crate::sys::DevNum;
use nix::fcntl::{Flock, FlockArg, OFlag};
use nix::sys::stat::Mode;
use std::collections::HashMap;
use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How deep a walk goes at most (a database's directories are a few levels deep).
const MAX_DEPTH: usize = 64;

/// What a directory claimed with [`crate::WriteGate::database_dir`] is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirState {
    /// Not there: iolab creates it (its parent exists and can be written).
    New,
    /// A directory iolab made earlier (it carries iolab's mark, [`crate::ownership::dir_is_ours`]): iolab
    /// empties it.
    Ours,
}

/// Why a directory was not taken (the gate words it as a [`crate::GateError`]).
#[derive(Debug)]
pub(crate) enum Refusal {
    /// What the path is, and what to do instead.
    Is(String, &'static str),
    /// Why it cannot be made or inspected.
    Unwritable(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Is(is, hint) => write!(f, "{is}; {hint}"),
            Refusal::Unwritable(why) => f.write_str(why),
        }
    }
}

/// A directory claimed for a command to fill and remove; see the module documentation.
#[derive(Debug)]
pub struct HeldDir {
    /// The path as typed.
    shown: String,
    /// The absolute path (the parent as resolved at the claim, and the name), for programs that take paths.
    path: PathBuf,
    parent: File,
    name: CString,
    /// The directory, once held (at the claim when it was there, else once made), locked.
    dir: Option<Flock<File>>,
    state: DirState,
    /// The accounts whose files iolab may remove from it.
    owners: Vec<u32>,
}

/// What `statx` says of one entry.
#[derive(Clone, Copy, Debug)]
struct Stat {
    dev: u64,
    ino: u64,
    uid: u32,
    mode: u32,
    /// The mount's id, when the kernel says it.
    mount: Option<u64>,
    /// The entry is the root of a mount.
    mount_root: bool,
}

impl Stat {
    fn is_dir(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFDIR
    }

    fn is_symlink(&self) -> bool {
        self.mode & libc::S_IFMT == libc::S_IFLNK
    }

    /// True when `self`, an entry of a directory described by `top`, lies on another mount.
    fn crosses_from(&self, top: &Stat) -> bool {
        self.mount_root
            || self.dev != top.dev
            || matches!((self.mount, top.mount), (Some(a), Some(b)) if a != b)
    }
}

/// `statx` of `name` in the directory `dir` (the descriptor itself for an empty name), never following a
/// symlink: what `fstatat` says and the mount's id, which tells a bind mount of the same file system apart.
#[allow(unsafe_code)]
fn stat_at(dir: RawFd, name: &CStr) -> io::Result<Stat> {
    let flags = libc::AT_SYMLINK_NOFOLLOW | if name.is_empty() { libc::AT_EMPTY_PATH } else { 0 };
    let mask = libc::STATX_TYPE | libc::STATX_MODE | libc::STATX_UID | libc::STATX_INO | libc::STATX_MNT_ID;
    // SAFETY: an all-zero statx is a valid value of this plain C struct.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: statx reads the NUL-terminated `name` and writes only into `stx`, which we own.
    if unsafe { libc::statx(dir, name.as_ptr(), flags, mask, &mut stx) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let root_known = stx.stx_attributes_mask & libc::STATX_ATTR_MOUNT_ROOT as u64 != 0;
    Ok(Stat {
        dev: libc::makedev(stx.stx_dev_major, stx.stx_dev_minor),
        ino: stx.stx_ino,
        uid: stx.stx_uid,
        mode: u32::from(stx.stx_mode),
        mount: (stx.stx_mask & libc::STATX_MNT_ID != 0).then_some(stx.stx_mnt_id),
        mount_root: root_known && stx.stx_attributes & libc::STATX_ATTR_MOUNT_ROOT as u64 != 0,
    })
}

/// Opens the directory `name` in `dir`, never through a symlink.
fn open_dir_at(dir: &File, name: &CStr) -> io::Result<File> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    Ok(File::from(nix::fcntl::openat(dir, name, flags, Mode::empty())?))
}

/// Removes the entry `name` of `dir` (a directory with `AT_REMOVEDIR`); a symlink itself, never its target.
fn unlink_at(dir: &File, name: &CStr, is_dir: bool) -> io::Result<()> {
    use nix::unistd::UnlinkatFlags;
    let flags = if is_dir { UnlinkatFlags::RemoveDir } else { UnlinkatFlags::NoRemoveDir };
    Ok(nix::unistd::unlinkat(dir, name, flags)?)
}

/// Takes an exclusive `flock` on `dir` without waiting; `Ok(None)` when another holds one.
fn lock(dir: File) -> io::Result<Option<Flock<File>>> {
    match Flock::lock(dir, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => Ok(Some(locked)),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(e.into()),
    }
}

/// The names in the directory `dir`, `.` and `..` left out.
fn names_in(dir: &File) -> io::Result<Vec<CString>> {
    let mut d = nix::dir::Dir::openat(
        dir,
        ".",
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    let mut out = Vec::new();
    for e in d.iter() {
        let name = e?.file_name().to_owned();
        if name.as_bytes() != b"." && name.as_bytes() != b".." {
            out.push(name);
        }
    }
    Ok(out)
}

/// Why a walk of a held directory stopped.
#[derive(Debug)]
enum WalkError {
    /// A mount point beneath it.
    Mount(PathBuf),
    /// An entry owned by another account.
    Foreign(PathBuf, u32),
    /// Deeper than [`MAX_DEPTH`].
    TooDeep(PathBuf),
    /// An entry changed between two looks, or a call failed.
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for WalkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WalkError::Mount(p) => write!(f, "'{}' is a mount point; iolab never enters or removes what is mounted: unmount it first", p.display()),
            WalkError::Foreign(p, uid) => write!(f, "'{}' belongs to uid {uid}, neither iolab's user nor the database server's account; iolab never removes what another account made: remove it yourself", p.display()),
            WalkError::TooDeep(p) => write!(f, "'{}' lies more than {MAX_DEPTH} directories deep", p.display()),
            WalkError::Io(p, e) => write!(f, "'{}': {e}", p.display()),
        }
    }
}

/// One walk over a held directory: a survey (what is there, each file by identity) or a removal.
struct Walk<'a> {
    top: Stat,
    owners: &'a [u32],
    remove: bool,
    /// Every entry seen, by device and inode, with its path (for a survey's in-use check).
    seen: HashMap<(DevNum, u64), PathBuf>,
}

impl Walk<'_> {
    /// Walks the directory `dir` (at `shown`), removing its entries when `self.remove`.
    fn walk(&mut self, dir: &File, shown: &Path, depth: usize) -> Result<(), WalkError> {
        if depth > MAX_DEPTH {
            return Err(WalkError::TooDeep(shown.to_path_buf()));
        }
        let names = names_in(dir).map_err(|e| WalkError::Io(shown.to_path_buf(), e))?;
        for name in names {
            let path = shown.join(OsStr::from_bytes(name.as_bytes()));
            let io = |e| WalkError::Io(path.clone(), e);
            let st = match stat_at(dir.as_raw_fd(), &name) {
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
                r => r.map_err(io)?,
            };
            if st.crosses_from(&self.top) {
                return Err(WalkError::Mount(path));
            }
            if !self.owners.contains(&st.uid) {
                return Err(WalkError::Foreign(path, st.uid));
            }
            self.seen.insert((DevNum::from_dev(st.dev), st.ino), path.clone());
            if st.is_dir() {
                let sub = match open_dir_at(dir, &name) {
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
                    r => r.map_err(io)?,
                };
                let m = sub.metadata().map_err(io)?;
                if (m.dev(), m.ino()) != (st.dev, st.ino) {
                    return Err(io(io::Error::other("it changed while iolab walked it")));
                }
                self.walk(&sub, &path, depth + 1)?;
            }
            if self.remove {
                match unlink_at(dir, &name, st.is_dir() && !st.is_symlink()) {
                    Err(e) if e.raw_os_error() != Some(libc::ENOENT) => return Err(io(e)),
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

impl HeldDir {
    /// Claims `path` for `what` (`--dir`): see the module documentation. `owners`: the accounts whose files
    /// iolab may remove from it besides its own user (a database server's account). Nothing is made or
    /// changed; a directory that is there stays locked while the [`HeldDir`] lives.
    pub(crate) fn claim(path: &str, owners: &[u32]) -> Result<HeldDir, Refusal> {
        if let Some(why) = crate::pseudofs::refuse_pseudo_fs(Path::new(path)) {
            return Err(Refusal::Unwritable(why));
        }
        let (parent, parent_path, name) = open_parent(path)?;
        let mut owners = owners.to_vec();
        owners.push(nix::unistd::geteuid().as_raw());
        let mut held = HeldDir {
            shown: path.into(),
            path: parent_path.join(OsStr::from_bytes(name.as_bytes())),
            parent,
            name,
            dir: None,
            state: DirState::New,
            owners,
        };
        match stat_at(held.parent.as_raw_fd(), &held.name) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(held),
            Err(e) => Err(Refusal::Unwritable(format!("cannot inspect it: {e}"))),
            Ok(st) => {
                held.take_existing(&st)?;
                Ok(held)
            }
        }
    }

    /// Takes the directory that is there (described by `st`): a directory, not a mount point, locked,
    /// iolab's, and with nothing beneath it that iolab may not remove.
    fn take_existing(&mut self, st: &Stat) -> Result<(), Refusal> {
        let refuse = Refusal::Is;
        if st.is_symlink() {
            return Err(refuse("a symlink".into(), "give the directory's real path"));
        }
        if !st.is_dir() {
            return Err(refuse(
                "not a directory".into(),
                "give a path that does not exist yet: iolab creates the directory, marks it as its own and removes it after the run",
            ));
        }
        let parent_st = stat_at(self.parent.as_raw_fd(), c"")
            .map_err(|e| Refusal::Unwritable(format!("cannot inspect its directory: {e}")))?;
        if st.crosses_from(&parent_st) {
            return Err(refuse(
                "a mount point".into(),
                "iolab never empties a mount point; give a path that does not exist yet (e.g. DIR/iolab-db)",
            ));
        }
        let (dir, meta) = open_dir_at(&self.parent, &self.name)
            .and_then(|d| d.metadata().map(|m| (d, m)))
            .map_err(|e| Refusal::Unwritable(format!("cannot open it: {e}")))?;
        if (meta.dev(), meta.ino()) != (st.dev, st.ino) {
            return Err(Refusal::Unwritable("it changed while iolab looked at it".into()));
        }
        let dir = match lock(dir) {
            Ok(Some(locked)) => locked,
            Ok(None) => {
                return Err(refuse(
                    "a directory another iolab run is using (it holds the directory's lock)".into(),
                    "wait for that run to end, or give another path",
                ))
            }
            Err(e) => return Err(Refusal::Unwritable(format!("cannot lock it: {e}"))),
        };
        if !crate::ownership::dir_is_ours(&dir) {
            return Err(not_ours(&dir, &self.shown, &refuse));
        }
        self.dir = Some(dir);
        self.state = DirState::Ours;
        self.survey().map_err(|is| refuse(is, "iolab never empties a directory with something in use, mounted or not its own beneath it; stop or unmount it, or give another path"))
    }

    /// What the claim found: a new path, or a directory of iolab's to empty.
    pub fn state(&self) -> DirState {
        self.state
    }

    /// The directory's absolute path (its parent as resolved at the claim), for programs that take paths.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The held directory's device and inode, once it is held.
    pub(crate) fn identity(&self) -> Option<(u64, u64)> {
        let m = self.dir.as_ref()?.metadata().ok()?;
        Some((m.dev(), m.ino()))
    }

    /// Walks the held directory without changing it: no mount point, nothing another account owns, and
    /// nothing in use by another process beneath it. Says what is wrong in words.
    fn survey(&self) -> Result<(), String> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let mut walk =
            self.walker(dir, false).map_err(|e| format!("a directory iolab cannot inspect ({e})"))?;
        walk.walk(dir, Path::new(&self.shown), 0)
            .map_err(|e| format!("a directory iolab may not empty: {e}"))?;
        let top = walk.top;
        walk.seen.insert((DevNum::from_dev(top.dev), top.ino), PathBuf::from(&self.shown));
        match crate::inuse::any_in_use(&walk.seen) {
            Some(usage) => Err(format!("a directory in use: {usage}")),
            None => Ok(()),
        }
    }

    fn walker(&self, dir: &File, remove: bool) -> io::Result<Walk<'_>> {
        let top = stat_at(dir.as_raw_fd(), c"")?;
        Ok(Walk { top, owners: &self.owners, remove, seen: HashMap::new() })
    }

    /// Makes the directory ready for the run: a new one is made in the held parent (`mkdirat`), opened,
    /// locked and marked as iolab's; one of iolab's is emptied.
    pub fn make(&mut self) -> io::Result<()> {
        if self.dir.is_some() {
            return self.empty();
        }
        // The mode is filtered by the umask, as mkdir(1)'s is.
        if let Err(e) =
            nix::sys::stat::mkdirat(&self.parent, self.name.as_c_str(), Mode::from_bits_truncate(0o777))
        {
            if e == nix::errno::Errno::EEXIST {
                return Err(io::Error::other(format!(
                    "'{}' appeared after iolab claimed it (another run?); nothing was removed",
                    self.shown
                )));
            }
            return Err(e.into());
        }
        let dir = open_dir_at(&self.parent, &self.name)?;
        let Some(dir) = lock(dir)? else {
            return Err(io::Error::other(format!("'{}' is locked by another iolab run", self.shown)));
        };
        crate::ownership::mark_dir(&dir);
        self.dir = Some(dir);
        Ok(())
    }

    /// Removes everything in the held directory, entry by entry (see the module documentation).
    fn empty(&self) -> io::Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        let mut walk = self.walker(dir, true)?;
        walk.walk(dir, Path::new(&self.shown), 0).map_err(|e| io::Error::other(e.to_string()))
    }

    /// Empties the held directory and removes it from the held parent, when the parent's entry is still
    /// this directory; a directory moved elsewhere is left there, empty. Nothing to do before it is made.
    pub fn remove(&self) -> io::Result<()> {
        let Some(dir) = &self.dir else { return Ok(()) };
        self.empty()?;
        crate::ownership::unmark_dir(dir);
        let m = dir.metadata()?;
        match stat_at(self.parent.as_raw_fd(), &self.name) {
            Ok(st) if (st.dev, st.ino) == (m.dev(), m.ino()) && st.is_dir() => {
                unlink_at(&self.parent, &self.name, true)
            }
            _ => Ok(()),
        }
    }
}

/// The directory `path` lives in, opened (its path resolved once, here), with that directory's resolved path
/// and the entry's name.
fn open_parent(path: &str) -> Result<(File, PathBuf, CString), Refusal> {
    let absolute =
        std::path::absolute(path).map_err(|e| Refusal::Unwritable(format!("cannot resolve it: {e}")))?;
    let name = absolute
        .file_name()
        .filter(|n| n.as_bytes() != b"..")
        .and_then(|n| CString::new(n.as_bytes()).ok())
        .ok_or_else(|| {
            Refusal::Is(
                "not a directory's name".into(),
                "give the path of a directory to make, e.g. DIR/iolab-db",
            )
        })?;
    let parent_path = absolute.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    let parent = File::open(&parent_path)
        .map_err(|e| Refusal::Unwritable(format!("cannot open its directory: {e}")))?;
    let parent_path = std::fs::canonicalize(&parent_path).unwrap_or(parent_path);
    Ok((parent, parent_path, name))
}

/// The refusal of a directory without iolab's mark (saying so when an older iolab's plain mark file is
/// inside, which anyone could have planted).
fn not_ours(dir: &File, path: &str, refuse: &impl Fn(String, &'static str) -> Refusal) -> Refusal {
    let old = CString::new(crate::ownership::OLD_DIR_MARK).unwrap_or_default();
    if stat_at(dir.as_raw_fd(), &old).is_ok() {
        return refuse(
            format!("a directory marked only with '{}', an older iolab's mark that anyone who can write it could have planted; if it is yours, remove it yourself (rm -r '{path}')", crate::ownership::OLD_DIR_MARK),
            "iolab never empties a directory it cannot tell is its own; give a path that does not exist yet",
        );
    }
    refuse(
        "a directory iolab did not make".into(),
        "iolab never empties a directory that is not its own; give a path that does not exist yet (e.g. DIR/iolab-db): iolab creates the directory, marks it as its own and removes it after the run",
    )
}

#[cfg(test)]
mod tests;
