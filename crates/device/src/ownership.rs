//! Files iolab made: the rule that iolab writes, without being told, only what it made.
//!
//! Every target file iolab creates (`--size` on a missing path, a scratch file, a cache device) is marked as
//! its own with the extended attribute [`MARK`] on its inode, set before a byte is written. The mark is the
//! file's identity, not its name: it survives renames and later runs, and a file put in its place (another
//! inode) carries none. A write job may then write a marked file, or an empty one (nothing to lose), freely;
//! any other existing file needs `--overwrite` ([`iolab_spec::Consent`]). On a file system without extended
//! attributes (vfat, some network file systems) nothing can be marked, and a later write run asks for the
//! flag; the refusal says so.

use std::fs::File;
use std::io;
use std::path::Path;

/// The extended attribute that marks a file as iolab's.
pub const MARK: &str = "user.iolab";

/// What the mark holds (any value marks; this one says what the file is to someone who looks).
const MARK_VALUE: &[u8] = b"target file made by iolab; its data is iolab's";

/// What a file's mark says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// iolab made it.
    Ours,
    /// It carries no mark.
    Unmarked,
    /// Its file system keeps no extended attributes, so it cannot carry one.
    Unsupported,
}

/// Marks `file` as iolab's. Returns whether the mark was set; a file system without extended attributes
/// (or one refusing them) is not an error: the file just stays unmarked.
pub fn mark(file: &File) -> bool {
    use xattr::FileExt;
    file.set_xattr(MARK, MARK_VALUE).is_ok()
}

/// Reads `file`'s mark.
pub fn mark_of(file: &File) -> Mark {
    use xattr::FileExt;
    match file.get_xattr(MARK) {
        Ok(Some(_)) => Mark::Ours,
        Ok(None) => Mark::Unmarked,
        Err(e) if unsupported(&e) => Mark::Unsupported,
        Err(_) => Mark::Unmarked,
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

    #[test]
    fn a_marked_file_is_ours_and_a_new_inode_at_its_name_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.dat");
        let f = File::create(&path).unwrap();
        if !mark(&f) {
            assert_eq!(mark_of(&f), Mark::Unsupported);
            iolab_testkit::skip(format_args!("this file system keeps no user extended attributes"));
            return;
        }
        assert_eq!(mark_of(&File::open(&path).unwrap()), Mark::Ours);
        std::fs::rename(&path, dir.path().join("moved")).unwrap();
        assert_eq!(mark_of(&File::open(dir.path().join("moved")).unwrap()), Mark::Ours, "renamed");
        std::fs::write(&path, b"someone else's").unwrap();
        assert_eq!(mark_of(&File::open(&path).unwrap()), Mark::Unmarked, "another inode at the old name");
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
