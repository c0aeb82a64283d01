//! The kernel's protected-symlinks rule, enforced by iolab whatever `fs.protected_symlinks` says: a symlink
//! in a world-writable directory (`/tmp`, mode 1777 or 0777) is followed only when it belongs to the user
//! running iolab or to the directory's owner. Otherwise anyone who can write the directory could point a
//! name root will write at root's own files.
//!
//! Every component of a path is walked as the kernel walks it (symlinks resolved as they come, `..` after
//! them), so a planted link is found wherever it sits: the final name, or a directory on the way.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// How many symlinks a walk follows before it stops looking (the kernel's ELOOP limit).
const MAX_LINKS: u32 = 40;

/// A symlink iolab refuses to follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Foreign {
    /// The symlink's own path.
    pub link: PathBuf,
    /// Its owner.
    pub owner: u32,
    /// The world-writable directory it sits in.
    pub dir: PathBuf,
}

/// The first symlink on the way to `path` that belongs to another user and sits in a world-writable
/// directory it does not belong to the owner of; `None` when every link on the way may be followed.
pub(crate) fn foreign_symlink(path: &Path) -> Option<Foreign> {
    let euid = nix::unistd::Uid::effective().as_raw();
    let start = std::path::absolute(path).ok()?;
    let mut todo: Vec<OsString> = components(&start);
    todo.reverse();
    let mut done = PathBuf::from("/");
    let mut links = 0;
    while let Some(c) = todo.pop() {
        if c == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&c);
        let Ok(meta) = fs::symlink_metadata(&next) else { return None };
        if !meta.file_type().is_symlink() {
            done = next;
            continue;
        }
        links += 1;
        let dir = fs::metadata(&done).ok()?;
        if dir.mode() & 0o002 != 0 && meta.uid() != euid && meta.uid() != dir.uid() {
            return Some(Foreign { link: next, owner: meta.uid(), dir: done });
        }
        let target = fs::read_link(&next).ok()?;
        if links > MAX_LINKS {
            return None;
        }
        if target.is_absolute() {
            done = PathBuf::from("/");
        }
        todo.extend(components(&target).into_iter().rev());
    }
    None
}

/// The normal and `..` components of a path (the root and `.` dropped).
fn components(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn own_symlinks_are_followed_and_a_private_directory_is_not_shared() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("real"), b"x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        assert_eq!(foreign_symlink(&dir.path().join("link")), None);
        assert_eq!(foreign_symlink(&dir.path().join("missing/../link")), None);
    }

    #[test]
    fn another_users_symlink_in_a_world_writable_directory_is_refused_wherever_it_sits() {
        if !nix::unistd::Uid::effective().is_root() {
            iolab_testkit::skip(format_args!("needs root to make a symlink owned by another user"));
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        fs::create_dir(&shared).unwrap();
        fs::set_permissions(&shared, fs::Permissions::from_mode(0o1777)).unwrap();
        let precious = dir.path().join("precious");
        fs::write(&precious, b"root's").unwrap();
        let link = shared.join("test.dat");
        std::os::unix::fs::symlink(&precious, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(65534), None).unwrap();
        let found = foreign_symlink(&link).expect("nobody's link in a 1777 directory is refused");
        assert_eq!((found.link.as_path(), found.owner), (link.as_path(), 65534));
        // A directory link on the way is found too, and `..` after it is resolved from where it points.
        let dlink = shared.join("d");
        std::os::unix::fs::symlink(dir.path(), &dlink).unwrap();
        std::os::unix::fs::lchown(&dlink, Some(65534), None).unwrap();
        assert!(foreign_symlink(&dlink.join("precious")).is_some());
        // The directory's owner's links (root's here) are followed, as the kernel does.
        let own = shared.join("own");
        std::os::unix::fs::symlink(&precious, &own).unwrap();
        assert_eq!(foreign_symlink(&own), None);
    }
}
