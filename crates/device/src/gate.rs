//! The write gate: every path iolab writes is known here by identity before anything is written, and every
//! output file is replaced atomically.
//!
//! A [`WriteGate`] holds the paths of one command: its targets, the journal, the catalog, a cache device and
//! its outputs (`--json`, `--csv`, `-o`), each by identity (device and inode after resolving symlinks; for a
//! file not yet there, its resolved directory and name). A second claim of the same file is refused when
//! either claim writes it (two read targets may share a file), so `--journal F --target F`, `--json X --csv X`
//! and `--json - --csv -` are refused before the run. Targets are then checked by [`crate::probe`] (devices,
//! mounts, signatures); outputs by [`WriteGate::output`]: a directory, a block device, a socket, a dangling
//! symlink, a file that backs a loop device and a file that carries a filesystem, volume or database
//! signature (a disk image, iolab's catalog or journal) are refused, since a report or a JSON document never
//! belongs there. Character devices and FIFOs (`/dev/null`, a pipe) are written as they are.
//!
//! Who named an output matters ([`NamedBy`], checked by `check_named_by`): a path typed on the command line
//! may be replaced as above; one a job file, a profile or an import named (`trace`, `journal`) may only
//! become a new regular file, and is linked into place only if its name is still free.
//!
//! Every claim first applies the kernel's protected-symlinks rule (`symlinks`): a path through another
//! user's symlink in a world-writable directory is refused, whatever `fs.protected_symlinks` says.
//!
//! [`Output::write`] writes a file atomically: a new file beside the final one, created with
//! O_EXCL|O_NOFOLLOW (another name when one is taken), written, synced and renamed over the final path, so a
//! full disk or a crash leaves the old file or none, never a truncated one. The final path is the resolved
//! one: `--json LINK` replaces the file the symlink names and keeps the symlink.

use crate::helddir::{HeldDir, Refusal};
use crate::scratch;
use crate::signature::{identify, SIGNATURE_HEAD_BYTES};
use iolab_spec::NamedBy;
use place::OutputPlace;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why a path was refused, or an output not written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GateError {
    /// Two uses of one command name the same file, and at least one writes it.
    #[error("{first} '{first_path}' and {second} '{second_path}' are the same file; {why}")]
    Collision {
        /// The first use (`--target`, `--json`, `the catalog`).
        first: String,
        /// Its path as typed.
        first_path: String,
        /// The second use.
        second: String,
        /// Its path as typed.
        second_path: String,
        /// What would go wrong.
        why: &'static str,
    },
    /// Two outputs go to standard output.
    #[error("{first} and {second} both write to standard output ('-'); give one of them a file")]
    BothStdout {
        /// The first output.
        first: String,
        /// The second.
        second: String,
    },
    /// An output path that is not a place for a file iolab writes.
    #[error("{what} '{path}' is {is}; {hint}")]
    NotAFile {
        /// The output (`--json`, `-o`).
        what: String,
        /// The path as typed.
        path: String,
        /// What it is ("a block device", "a directory").
        is: String,
        /// What to do instead.
        hint: &'static str,
    },
    /// An output would be created in a directory that is not there or cannot be written.
    #[error("{what} '{path}' cannot be written: {why}")]
    Unwritable {
        /// The output.
        what: String,
        /// The path as typed.
        path: String,
        /// Why.
        why: String,
    },
    /// A path leads through another user's symlink in a world-writable directory (the kernel's
    /// protected-symlinks rule, enforced whatever the sysctl says).
    #[error("{what} '{path}' leads through '{link}', a symlink owned by user {owner} in the world-writable directory '{dir}'; iolab never follows another user's symlink there, since it could point anywhere; give the real path")]
    ForeignSymlink {
        /// The use (`--target`, `--json`).
        what: String,
        /// The path as typed.
        path: String,
        /// The symlink.
        link: String,
        /// Its owner's uid.
        owner: u32,
        /// The world-writable directory it sits in.
        dir: String,
    },
    /// A path the command writes lies inside a directory the command empties and removes.
    #[error("{what} '{path}' lies inside {dir_what} '{dir_path}', which iolab empties and removes, so it would be deleted with it; give {what} a path outside it")]
    Inside {
        /// The use (`--json`, `the catalog`).
        what: String,
        /// Its path as typed.
        path: String,
        /// The directory's flag (`--dir`).
        dir_what: String,
        /// The directory's path as typed.
        dir_path: String,
    },
    /// A job file, a profile or an import names a path for a run to write (`trace`, `journal`) where
    /// something is already (or that cannot be a new regular file): only the command line may replace.
    #[error("the job file's {key} = '{path}' names {is}; a path named by a job file, a profile or an import may only create a new regular file: give it on the command line with --{key} if it may be replaced, or remove it, or name a new file")]
    NotNew {
        /// The key (`trace`, `journal`).
        key: String,
        /// The path as the job file gave it.
        path: String,
        /// What is there ("an existing regular file", "a character device").
        is: String,
    },
    /// An output was not written (disk full, I/O error); the file at its path is as it was.
    #[error("{what} '{path}' was not written: {}", describe_write_error(.source))]
    Write {
        /// The output.
        what: String,
        /// The path as typed.
        path: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl GateError {
    /// True for refusals of the user's input (exit code 2), false for an output that failed to be written.
    pub fn is_refusal(&self) -> bool {
        !matches!(self, GateError::Write { .. })
    }
}

fn describe_write_error(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSPC) => "disk full; any file at that path is as it was".into(),
        Some(libc::EDQUOT) => "disk quota exceeded; any file at that path is as it was".into(),
        _ => format!("{e}; any file at that path is as it was"),
    }
}

/// A file by identity: what two paths share when they name the same file.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    /// Standard output (`-`).
    Stdout,
    /// An existing file, after resolving symlinks.
    Inode { dev: u64, ino: u64 },
    /// A path not there yet: its resolved directory and name.
    New(PathBuf),
}

#[derive(Clone, Debug)]
struct Claim {
    what: String,
    path: String,
    key: Key,
    writes: bool,
    target: bool,
    char_device: bool,
}

/// The paths of one command, by identity; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct WriteGate {
    claims: Vec<Claim>,
    /// The directories the command empties and removes ([`WriteGate::database_dir`]).
    dirs: Vec<DirClaim>,
}

/// What a path was claimed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Only read (a read target, a journal being checked).
    Reads,
    /// Written (a write target, the catalog, a journal being kept, an output).
    Writes,
}

impl WriteGate {
    /// An empty gate.
    pub fn new() -> WriteGate {
        WriteGate::default()
    }

    /// Claims `path` for `what` (`the catalog`, `--cache-dev`, a journal being checked), refusing it when a
    /// claim already made names the same file and either writes it.
    pub fn claim(&mut self, what: &str, path: &str, access: Access) -> Result<(), GateError> {
        self.add(what, path, access, false)
    }

    /// Claims a run's target, as [`WriteGate::claim`] does; two targets may share a file (workers over one
    /// disk). The target's own checks (devices, mounts, signatures) are [`crate::probe`]'s.
    pub fn target(&mut self, path: &str, access: Access) -> Result<(), GateError> {
        self.add("--target", path, access, true)
    }

    fn add(&mut self, what: &str, path: &str, access: Access, target: bool) -> Result<(), GateError> {
        if let Some(f) = (path != "-").then(|| symlinks::foreign_symlink(Path::new(path))).flatten() {
            return Err(GateError::ForeignSymlink {
                what: what.into(),
                path: path.into(),
                link: f.link.display().to_string(),
                owner: f.owner,
                dir: f.dir.display().to_string(),
            });
        }
        let key = key_of(path);
        let char_device = path != "-" && fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device());
        let writes = access == Access::Writes;
        let claim = Claim { what: what.into(), path: path.into(), key, writes, target, char_device };
        for c in &self.claims {
            check_pair(c, &claim)?;
        }
        if let Some(d) = self.dirs.iter().find(|d| inside(d, path)) {
            return Err(GateError::Inside {
                what: what.into(),
                path: path.into(),
                dir_what: d.what.clone(),
                dir_path: d.path.clone(),
            });
        }
        self.claims.push(claim);
        Ok(())
    }

    /// Claims `path`, typed on the command line, as an output that `what` writes (`--json`, `--csv`, `-o`)
    /// and checks that a file may go there (see the module documentation); nothing is written yet.
    pub fn output(&mut self, what: &str, path: &str) -> Result<Output, GateError> {
        self.output_named(what, path, NamedBy::CommandLine)
    }

    /// [`WriteGate::output`] for a path that `by` named: one a job file named must be a new regular file
    /// (`check_named_by`), and is then written without replacing anything put there meanwhile.
    pub fn output_named(&mut self, what: &str, path: &str, by: NamedBy) -> Result<Output, GateError> {
        check_named_by(what, path, by)?;
        let kind = output_kind(what, path, None)?;
        self.add(what, path, Access::Writes, false)?;
        Ok(Output { what: what.into(), path: path.into(), kind, replaces: by == NamedBy::CommandLine })
    }

    /// Claims `path` as the journal a run keeps: an output that may replace an earlier iolab journal, but
    /// nothing else with a signature. Its checkpoints go through `PATH.tmp`, which must be absent or the
    /// leftover of an interrupted checkpoint (an iolab journal); its durable-write log is `PATH.durable`, which
    /// must be absent or an earlier run's log (iolab removes it and writes its own), and is claimed too.
    /// A journal that a job file named (`by`) must be new, with no checkpoint file or log beside it
    /// (`check_named_by`). Returns the journal's directory, opened and held from this claim on.
    pub fn journal(&mut self, what: &str, path: &str, by: NamedBy) -> Result<File, GateError> {
        check_named_by(what, path, by)?;
        if by == NamedBy::JobFile {
            check_named_by(what, &format!("{path}.tmp"), by)?;
            check_named_by(what, &format!("{path}.durable"), by)?;
        }
        output_kind(what, path, Some("iolab journal"))?;
        for (suffix, signature, role) in [
            (".tmp", "iolab journal", "checkpoint file"),
            (".durable", "iolab durable-write log", "durable-write log"),
        ] {
            let file = format!("{path}{suffix}");
            let Ok(meta) = fs::symlink_metadata(&file) else { continue };
            let leftover = meta.file_type().is_file()
                && matches!(
                    device_like(Path::new(&file), &meta),
                    Ok(Some(DeviceLike::Signature(s))) if s == signature
                );
            if !leftover {
                return Err(GateError::NotAFile {
                    what: what.into(),
                    path: path.into(),
                    is: format!("a journal whose {role} '{file}' is there already and is not iolab's"),
                    hint: "remove it, or give the journal another path",
                });
            }
        }
        self.add(what, path, Access::Writes, false)?;
        self.add(what, &format!("{path}.durable"), Access::Writes, false)?;
        // Held from this claim on: the journal, its checkpoints and its durable-write log are written relative
        // to this directory (`iolab_verify::journal::JournalPlace`), whatever its path names later.
        let dir = parent_dir(Path::new(path));
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(&dir)
            .map_err(|source| GateError::Write { what: what.into(), path: path.into(), source })
    }
}

/// A directory the command empties and removes, as the gate knows it: by device and inode when it is
/// there, else by its resolved path.
#[derive(Clone, Debug)]
struct DirClaim {
    what: String,
    path: String,
    id: Key,
}

impl WriteGate {
    /// Claims `path` as a directory a command fills with files of its own and removes (a database's
    /// directory, `iolab db --dir`), and holds it ([`HeldDir`]: see there for what is refused: a directory
    /// that is there and is not iolab's, is mounted or has a mount point, something another account owns or
    /// something in use beneath it, or is locked by another run). A path not there yet needs an existing,
    /// writable parent on a real file system. `owners`: the accounts besides iolab's own user whose files
    /// iolab may remove from it (a private database server's). No path claimed in the gate, before or
    /// after, may lie inside it.
    pub fn database_dir(&mut self, what: &str, path: &str, owners: &[u32]) -> Result<HeldDir, GateError> {
        let unwritable = |why: String| GateError::Unwritable { what: what.into(), path: path.into(), why };
        let absolute =
            std::path::absolute(path).map_err(|e| unwritable(format!("cannot resolve it: {e}")))?;
        check_directory(&parent_dir(&absolute)).map_err(unwritable)?;
        let held = HeldDir::claim(path, owners).map_err(|refusal| match refusal {
            Refusal::Is(is, hint) => GateError::NotAFile { what: what.into(), path: path.into(), is, hint },
            Refusal::Unwritable(why) => unwritable(why),
        })?;
        let id = match held.identity() {
            Some((dev, ino)) => Key::Inode { dev, ino },
            None => Key::New(held.path().to_path_buf()),
        };
        let dir = DirClaim { what: what.into(), path: path.into(), id };
        if let Some(c) = self.claims.iter().find(|c| inside(&dir, &c.path)) {
            return Err(GateError::Inside {
                what: c.what.clone(),
                path: c.path.clone(),
                dir_what: dir.what,
                dir_path: dir.path,
            });
        }
        self.add(what, path, Access::Writes, false)?;
        self.dirs.push(dir);
        Ok(held)
    }
}

/// True when `path` lies inside the directory `dir` (by identity: one of the path's existing ancestors, its
/// symlinks resolved, is that directory; for a directory not there yet, the path's resolved form lies
/// under the directory's).
fn inside(dir: &DirClaim, path: &str) -> bool {
    if path == "-" {
        return false;
    }
    let resolved = resolved_path(Path::new(path));
    match &dir.id {
        Key::Inode { dev, ino } => resolved
            .ancestors()
            .skip(1)
            .filter_map(|a| fs::metadata(a).ok())
            .any(|m| (m.dev(), m.ino()) == (*dev, *ino)),
        Key::New(p) => resolved != *p && resolved.starts_with(p),
        Key::Stdout => false,
    }
}

/// `path` made absolute, its longest existing part resolved (symlinks, `..`) and the rest appended.
fn resolved_path(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    let mut cur = absolute.as_path();
    loop {
        if let Ok(real) = fs::canonicalize(cur) {
            return rest.iter().rev().fold(real, |p: PathBuf, n| p.join(n));
        }
        match (cur.parent(), cur.file_name()) {
            (Some(up), Some(name)) => {
                rest.push(name.to_os_string());
                cur = up;
            }
            _ => return absolute,
        }
    }
}

/// Paths (directory resolved) that a job file named and this process claimed as new: a later point of the
/// same command (a sweep's next point writing its journal again) may write the regular file there again.
static CLAIMED_NEW: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// The one check of who named a path a run writes: a path typed on the command line (`by`) may be anything an
/// output may be; one a job file, a profile or an import named may only be a new regular file, so nothing is
/// at the path (not even a dangling symlink) and its directory is a directory: never a file to replace, a
/// terminal, a device, a FIFO or standard output. The one exception is a regular file at a path this process
/// claimed as new earlier in the command (see `CLAIMED_NEW`). `what` is the flag (`--trace`); the refusal
/// names its key.
fn check_named_by(what: &str, path: &str, by: NamedBy) -> Result<(), GateError> {
    if by == NamedBy::CommandLine {
        return Ok(());
    }
    let resolved = resolved_new_path(Path::new(path));
    let mut claimed = CLAIMED_NEW.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let ours = claimed.contains(&resolved);
    if ours && fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
        return Ok(());
    }
    check_new(what, path)?;
    if !ours {
        claimed.push(resolved);
    }
    Ok(())
}

/// Refuses anything at `path`, or a parent that is not a directory (see `check_named_by`).
fn check_new(what: &str, path: &str) -> Result<(), GateError> {
    let refuse =
        |is: String| GateError::NotNew { key: what.trim_start_matches("--").into(), path: path.into(), is };
    if path == "-" {
        return Err(refuse("standard output".into()));
    }
    match fs::symlink_metadata(path) {
        Ok(meta) => Err(refuse(what_is_there(&meta.file_type()).into())),
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) => {
            let dir = parent_dir(Path::new(path));
            match fs::metadata(&dir) {
                Ok(m) if m.is_dir() => Ok(()),
                _ => Err(refuse(format!("a file in '{}', which is not a directory", dir.display()))),
            }
        }
        Err(e) => Err(refuse(format!("a path iolab cannot inspect ({e})"))),
    }
}

/// What a file of type `t` is, in words ("an existing regular file", "a character device").
fn what_is_there(t: &fs::FileType) -> &'static str {
    if t.is_file() {
        "an existing regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symlink"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else {
        "a socket or special file"
    }
}

/// Refuses `new` when it names the file `old` names and one of them writes it.
fn check_pair(old: &Claim, new: &Claim) -> Result<(), GateError> {
    if old.key != new.key || !(old.writes || new.writes) || (old.target && new.target) {
        return Ok(());
    }
    if new.key == Key::Stdout {
        return Err(GateError::BothStdout { first: old.what.clone(), second: new.what.clone() });
    }
    // /dev/null and other character devices take any number of writers; what lands there is no file.
    if old.char_device && !old.target && !new.target {
        return Ok(());
    }
    let why = if old.target || new.target {
        "iolab never writes a target with anything but the run's own I/O, nor reads one it writes; give one another path"
    } else {
        "one would overwrite the other; give each its own path"
    };
    Err(GateError::Collision {
        first: old.what.clone(),
        first_path: old.path.clone(),
        second: new.what.clone(),
        second_path: new.path.clone(),
        why,
    })
}

/// The identity of `path`: its device and inode when it exists (symlinks followed), else its resolved
/// directory and name.
fn key_of(path: &str) -> Key {
    if path == "-" {
        return Key::Stdout;
    }
    match fs::metadata(path) {
        Ok(m) => Key::Inode { dev: m.dev(), ino: m.ino() },
        Err(_) => Key::New(resolved_new_path(Path::new(path))),
    }
}

/// `path` with its directory resolved (symlinks, `..`), for a file that is not there yet.
fn resolved_new_path(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => fs::canonicalize(dir).map_or_else(|_| absolute.clone(), |d| d.join(name)),
        _ => absolute,
    }
}

/// The directory a path lives in ("." for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A file iolab treats like the device it may be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DeviceLike {
    /// It is in use: it backs a loop device, is swap, or another process locks or maps it.
    InUse(String),
    /// Its first bytes carry this signature ("ext4 filesystem", "SQLite database").
    Signature(String),
}

/// Whether the regular file at `path` (whose metadata is `meta`) is a device in disguise: a file in use
/// (see [`crate::inuse`]: what an output replaces by rename loses nothing to a plain reader, so only what
/// shares the data live counts), or one whose first bytes carry a filesystem, volume, database or disk-image
/// signature.
pub(crate) fn device_like(path: &Path, meta: &Metadata) -> io::Result<Option<DeviceLike>> {
    if let Some(usage) = crate::inuse::file_in_use(path, meta, crate::inuse::Holding::Shared) {
        return Ok(Some(DeviceLike::InUse(usage)));
    }
    let mut head = Vec::with_capacity(SIGNATURE_HEAD_BYTES);
    File::open(path)?.take(SIGNATURE_HEAD_BYTES as u64).read_to_end(&mut head)?;
    Ok(identify(path, &head).map(DeviceLike::Signature))
}

/// Where an output goes.
#[derive(Clone, Debug)]
enum OutputKind {
    /// Standard output.
    Stdout,
    /// A character device or FIFO, written as it is.
    Stream(PathBuf),
    /// A regular file (its directory held from the claim), replaced atomically.
    File(OutputPlace),
}

/// Checks that an output may be written at `path` and says how. `allowed_signature`: the one signature the
/// file there may carry (a journal replaces an earlier journal).
fn output_kind(what: &str, path: &str, allowed_signature: Option<&str>) -> Result<OutputKind, GateError> {
    let not_a_file =
        |is: String, hint| GateError::NotAFile { what: what.into(), path: path.into(), is, hint };
    let unwritable = |why: String| GateError::Unwritable { what: what.into(), path: path.into(), why };
    if path == "-" {
        return Ok(OutputKind::Stdout);
    }
    if path.is_empty() {
        return Err(unwritable("the path is empty".into()));
    }
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Ok(to) = fs::read_link(path) {
                let is = format!("a symlink to '{}', which does not exist", to.display());
                return Err(not_a_file(is, "give the path of a file, or remove the symlink"));
            }
            let final_path = resolved_new_path(Path::new(path));
            check_directory(&parent_dir(Path::new(path))).map_err(unwritable)?;
            return held(final_path).map_err(unwritable);
        }
        Err(e) => return Err(unwritable(format!("cannot inspect it: {e}"))),
    };
    let file_type = meta.file_type();
    let hint = "outputs are written to regular files (or '-' for standard output)";
    if file_type.is_dir() {
        return Err(not_a_file("a directory".into(), "give a file name inside it"));
    } else if file_type.is_block_device() {
        return Err(not_a_file("a block device".into(), hint));
    } else if file_type.is_char_device() || file_type.is_fifo() {
        return Ok(OutputKind::Stream(PathBuf::from(path)));
    } else if !file_type.is_file() {
        return Err(not_a_file("a socket or special file".into(), hint));
    }
    check_existing_output(path, &meta, allowed_signature).map_err(|(is, hint)| not_a_file(is, hint))?;
    let final_path = fs::canonicalize(path).map_err(|e| unwritable(format!("cannot resolve it: {e}")))?;
    check_directory(&parent_dir(&final_path)).map_err(unwritable)?;
    held(final_path).map_err(unwritable)
}

/// A regular-file output at the resolved `path`, its directory held from now on ([`OutputPlace`]).
fn held(path: PathBuf) -> Result<OutputKind, String> {
    OutputPlace::hold(path).map(OutputKind::File).map_err(|e| format!("cannot open its directory: {e}"))
}

/// Refuses replacing a regular file that is a device in disguise (see [`device_like`]).
fn check_existing_output(
    path: &str,
    meta: &Metadata,
    allowed_signature: Option<&str>,
) -> Result<(), (String, &'static str)> {
    match device_like(Path::new(path), meta) {
        Ok(None) => Ok(()),
        Ok(Some(DeviceLike::Signature(s))) if Some(s.as_str()) == allowed_signature => Ok(()),
        Ok(Some(DeviceLike::InUse(usage))) => Err((
            format!("a file in use ({usage})"),
            "an output never replaces a device's data or a live file; give another path",
        )),
        Ok(Some(DeviceLike::Signature(s))) => Err((
            format!("a file that carries {} {s} signature", crate::error::article(&s)),
            "an output never replaces a disk image, a catalog or a journal; give another path",
        )),
        Err(e) => Err((format!("a file iolab cannot read ({e})"), "give another path")),
    }
}

/// Checks that `path`, a file not there yet, can be created later (with the directories it needs): its
/// nearest existing ancestor is a directory that can be written. Says why not in words for the user.
pub fn check_can_create(path: &Path) -> Result<(), String> {
    let absolute =
        std::path::absolute(path).map_err(|e| format!("cannot resolve '{}': {e}", path.display()))?;
    let mut dir = parent_dir(&absolute);
    while fs::symlink_metadata(&dir).is_err() {
        match dir.parent() {
            Some(up) => dir = up.to_path_buf(),
            None => break,
        }
    }
    check_directory(&dir)
}

/// Checks that a new file can be created in `dir` (it exists, is a directory, and is writable on a
/// writable file system), so that a long run does not end with an output it cannot write.
pub(crate) fn check_directory(dir: &Path) -> Result<(), String> {
    use nix::unistd::{access, AccessFlags};
    if let Some(why) = crate::pseudofs::refuse_pseudo_fs(dir) {
        return Err(why);
    }
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(format!("'{}' is not a directory", dir.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(format!("directory '{}' does not exist", dir.display()))
        }
        Err(e) => return Err(format!("cannot inspect directory '{}': {e}", dir.display())),
    }
    match access(dir, AccessFlags::W_OK | AccessFlags::X_OK) {
        Ok(()) => Ok(()),
        Err(nix::errno::Errno::EROFS) => {
            Err(format!("directory '{}' is on a read-only file system", dir.display()))
        }
        Err(e) => {
            Err(format!("no permission to create files in directory '{}' ({})", dir.display(), e.desc()))
        }
    }
}

/// An output claimed in a [`WriteGate`], written once the command has its document.
#[derive(Clone, Debug)]
pub struct Output {
    what: String,
    path: String,
    kind: OutputKind,
    /// Named on the command line: a regular file may be replaced. Otherwise only a new one is made, and
    /// a file put at the path meanwhile is left as it is (the write fails).
    replaces: bool,
}

impl Output {
    /// The output's flag (`--json`).
    pub fn what(&self) -> &str {
        &self.what
    }

    /// The path as the user typed it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// True for `-`: the caller shows text for a terminal there (control characters escaped).
    pub fn is_stdout(&self) -> bool {
        matches!(self.kind, OutputKind::Stdout)
    }

    /// Writes `bytes`: to standard output, into a character device or FIFO, or atomically into a file (see
    /// the module documentation). On error the file at the path is as it was.
    pub fn write(&self, bytes: &[u8]) -> Result<(), GateError> {
        let result = match &self.kind {
            OutputKind::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            OutputKind::Stream(p) => {
                OpenOptions::new().write(true).open(p).and_then(|mut f| f.write_all(bytes))
            }
            OutputKind::File(place) => replace_atomically(place, bytes, self.replaces),
        };
        result.map_err(|source| GateError::Write { what: self.what.clone(), path: self.path.clone(), source })
    }
}

/// Writes `bytes` to a new file in the output's held directory and renames it over the name (with
/// `replaces`; else links it there only if nothing is there, see [`OutputPlace::put`]); the new file takes the old
/// one's mode and owner. On error the new file is removed and the name is untouched.
fn replace_atomically(place: &OutputPlace, bytes: &[u8], replaces: bool) -> io::Result<()> {
    let old = place.regular_file();
    let (temp, mut file) = place.create_temp()?;
    // Registered as a scratch file, so a second Ctrl-C (an immediate exit) removes it too.
    let temp_path = place.temp_path(&temp);
    place.register_scratch(&temp, &file);
    let result = (|| {
        if let Some(old) = &old {
            file.set_permissions(fs::Permissions::from_mode(old.st_mode & 0o7777))?;
            // Root replacing a user's file keeps it the user's; an unprivileged user cannot, and need not.
            let _ = std::os::unix::fs::fchown(&file, Some(old.st_uid), Some(old.st_gid));
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        place.put(&temp, replaces)
    })();
    if result.is_err() {
        place.remove(&temp);
    }
    scratch::unregister_scratch(&temp_path);
    result
}

/// An output written as it goes (a trace recorded during a run): a regular file is written into a new file
/// beside it and renamed over it by [`StreamOutput::commit`], so the path holds the old file or the whole
/// new one, never a part; standard output, a character device or a FIFO is written as it is. Dropped
/// without a commit, the new file is removed.
#[derive(Debug)]
pub struct StreamOutput {
    what: String,
    shown: String,
    file: Option<File>,
    /// A regular file's temporary name and its place.
    rename: Option<(std::ffi::OsString, OutputPlace)>,
    /// The output may replace a file at its path ([`Output`]'s).
    replaces: bool,
}

impl Output {
    /// Opens the output for writing as it goes; see [`StreamOutput`].
    pub fn stream(&self) -> Result<StreamOutput, GateError> {
        let err = |source| GateError::Write { what: self.what.clone(), path: self.path.clone(), source };
        let (file, rename) = match &self.kind {
            OutputKind::Stdout => (None, None),
            OutputKind::Stream(p) => (Some(OpenOptions::new().write(true).open(p).map_err(err)?), None),
            OutputKind::File(place) => {
                let (temp, file) = place.create_temp().map_err(err)?;
                place.register_scratch(&temp, &file);
                (Some(file), Some((temp, place.clone())))
            }
        };
        Ok(StreamOutput {
            what: self.what.clone(),
            shown: self.path.clone(),
            file,
            rename,
            replaces: self.replaces,
        })
    }
}

impl StreamOutput {
    /// A handle that writes to the output (standard output, or a clone of the file's descriptor).
    pub fn writer(&self) -> io::Result<Box<dyn Write + Send>> {
        match &self.file {
            None => Ok(Box::new(io::stdout())),
            Some(f) => Ok(Box::new(f.try_clone()?)),
        }
    }

    /// Makes what was written durable and puts it at the path (the rename of a regular file).
    pub fn commit(mut self) -> Result<(), GateError> {
        let result = (|| {
            if let Some(f) = &self.file {
                if self.rename.is_some() {
                    f.sync_all()?;
                }
            }
            if let Some((temp, place)) = &self.rename {
                if let (Some(old), Some(f)) = (place.regular_file(), &self.file) {
                    f.set_permissions(fs::Permissions::from_mode(old.st_mode & 0o7777))?;
                }
                place.put(temp, self.replaces)?;
            }
            Ok(())
        })();
        if let Some((temp, place)) = self.rename.take() {
            if result.is_err() {
                place.remove(&temp);
            }
            scratch::unregister_scratch(&place.temp_path(&temp));
        }
        result.map_err(|source| GateError::Write {
            what: self.what.clone(),
            path: self.shown.clone(),
            source,
        })
    }
}

impl Drop for StreamOutput {
    fn drop(&mut self) {
        if let Some((temp, place)) = self.rename.take() {
            place.remove(&temp);
            scratch::unregister_scratch(&place.temp_path(&temp));
        }
    }
}

mod place;
mod symlinks;
#[cfg(test)]
mod tests;
