//! A regular-file output's place, resolved once: at the claim its directory is opened and held, with the
//! file's name in it, and every later step (the temporary file, the rename or link over the name, the
//! removal of a temporary file on error, the directory's sync) is an `*at()` call relative to that
//! descriptor. A path component swapped for a symlink after the claim (the directory renamed away and a
//! link to another put in its place) changes nothing iolab writes: the output lands in the directory that
//! was checked.

use nix::fcntl::{openat, renameat, OFlag};
use nix::sys::stat::{fstatat, FileStat, Mode};
use nix::unistd::{linkat, unlinkat, UnlinkatFlags};
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;

/// How many temporary names are tried beside an output before giving up.
const TEMP_NAME_TRIES: u32 = 100;

/// An output file's directory, held, and its name in it.
#[derive(Clone, Debug)]
pub(super) struct OutputPlace {
    dir: Arc<File>,
    name: OsString,
    /// The resolved path at the claim: for messages, and the name the scratch registry knows a temporary
    /// file by (its removal is relative to the held directory too).
    path: PathBuf,
}

impl OutputPlace {
    /// Holds the directory of the resolved path `path` (no symlink followed in its last component).
    pub(super) fn hold(path: PathBuf) -> io::Result<OutputPlace> {
        let name = path.file_name().map(OsStr::to_os_string).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("'{}' names no file", path.display()))
        })?;
        let dir = super::parent_dir(&path);
        let dir =
            OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC).open(dir)?;
        Ok(OutputPlace { dir: Arc::new(dir), name, path })
    }

    /// What is at the name now (a symlink not followed), when it is a regular file.
    pub(super) fn regular_file(&self) -> Option<FileStat> {
        let st = fstatat(&*self.dir, self.name.as_os_str(), nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW).ok()?;
        (st.st_mode & libc::S_IFMT == libc::S_IFREG).then_some(st)
    }

    /// Creates `.NAME.iolab-PID-N.tmp` in the held directory (O_EXCL|O_NOFOLLOW), trying the next N when
    /// one is taken; its name and the open file.
    pub(super) fn create_temp(&self) -> io::Result<(OsString, File)> {
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        for n in 0..TEMP_NAME_TRIES {
            let mut temp = OsString::from(".");
            temp.push(&self.name);
            temp.push(format!(".iolab-{}-{n}.tmp", std::process::id()));
            match openat(&*self.dir, temp.as_os_str(), flags, Mode::from_bits_truncate(0o666)) {
                Ok(fd) => return Ok((temp, File::from(fd))),
                Err(nix::errno::Errno::EEXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("no free temporary name beside '{}'", self.path.display()),
        ))
    }

    /// The temporary file's path, for the scratch registry.
    /// Registers the temporary file `temp` (just created as `file`) as a scratch file of the held
    /// directory, so a second Ctrl-C (an immediate exit) removes it, relative to the directory too.
    pub(super) fn register_scratch(&self, temp: &OsStr, file: &File) {
        let path = self.temp_path(temp);
        crate::scratch::register_in(&self.dir, temp, path.clone());
        crate::scratch::created(&path, file);
    }

    pub(super) fn temp_path(&self, temp: &OsStr) -> PathBuf {
        super::parent_dir(&self.path).join(temp)
    }

    /// Puts the written temporary file at the name: renamed over it (`replaces`: the command line named it),
    /// else linked there, which fails (EEXIST) when anything is there, a symlink included, then unlinked
    /// from its temporary name. Then syncs the directory, so the new name is durable.
    pub(super) fn put(&self, temp: &OsStr, replaces: bool) -> io::Result<()> {
        let dir = &*self.dir;
        if replaces {
            renameat(dir, temp, dir, self.name.as_os_str())?;
        } else {
            linkat(dir, temp, dir, self.name.as_os_str(), nix::fcntl::AtFlags::empty())?;
            unlinkat(dir, temp, UnlinkatFlags::NoRemoveDir)?;
        }
        // The rename is durable once the directory is synced; a failure here loses nothing already in place.
        let _ = self.dir.sync_all();
        Ok(())
    }

    /// Removes a temporary file (after an error).
    pub(super) fn remove(&self, temp: &OsStr) {
        let _ = unlinkat(&*self.dir, temp, UnlinkatFlags::NoRemoveDir);
    }
}
