//! The attached loop devices and what backs each, by identity: the loop driver's own record of its backing
//! file (`LOOP_GET_STATUS64`: the device and inode of the file, or the device number of a backing block
//! device), never the path text sysfs shows. A backing file renamed, given a trailing space, or unlinked while
//! a hard link remains is still found.

use crate::sys::DevNum;
use std::fs::{self, File};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// `struct loop_info64` of `<linux/loop.h>`.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// `LOOP_GET_STATUS64` (0x4C05): not an `_IOR` number, so a "bad" ioctl in nix's terms.
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// One attached loop device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LoopDevice {
    /// Its kernel name (`loop3`).
    pub name: String,
    /// Its own device number.
    pub dev: DevNum,
    /// What backs it.
    pub backing: Backing,
}

/// A loop device's backing file, as the driver knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backing {
    /// A file: the device of its file system and its inode (`st_dev`, `st_ino`).
    File { dev: DevNum, ino: u64 },
    /// A block device, by its device number (`st_rdev`).
    Device(DevNum),
}

impl Backing {
    /// True when this is the file `(st_dev, st_ino)`.
    pub fn is_file(&self, st_dev: u64, st_ino: u64) -> bool {
        *self == Backing::File { dev: DevNum::from_dev(st_dev), ino: st_ino }
    }
}

/// Every attached loop device (one with a `loop/` directory in sysfs) and its backing file.
pub(crate) fn attached() -> Vec<LoopDevice> {
    let Ok(entries) = fs::read_dir("/sys/block") else { return Vec::new() };
    let mut out: Vec<LoopDevice> = entries
        .flatten()
        .filter_map(|e| {
            let sys = e.path();
            if !sys.join("loop").is_dir() {
                return None;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let dev = crate::sys::dev_of(&sys)?;
            let backing = backing_by_ioctl(&name).or_else(|| backing_by_sysfs(&sys))?;
            Some(LoopDevice { name, dev, backing })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The backing file as the loop driver records it, through `/dev/NAME`.
fn backing_by_ioctl(name: &str) -> Option<Backing> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(Path::new("/dev").join(name))
        .ok()?;
    let info = loop_status(&file)?;
    let rdev = DevNum::from_dev(info.lo_rdevice);
    if rdev.major != 0 || rdev.minor != 0 {
        return Some(Backing::Device(rdev));
    }
    Some(Backing::File { dev: DevNum::from_dev(info.lo_device), ino: info.lo_inode })
}

#[allow(unsafe_code)]
fn loop_status(file: &File) -> Option<LoopInfo64> {
    let mut info: LoopInfo64 = bytemuck::Zeroable::zeroed();
    // SAFETY: LOOP_GET_STATUS64 writes one `struct loop_info64` (232 bytes, the layout of `LoopInfo64`,
    // checked by a test) through the pointer, which points at a live, writable, properly aligned value for
    // the duration of the call; the descriptor is open and owned by `file`.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info as *mut LoopInfo64) };
    (rc == 0).then_some(info)
}

/// Where `/dev/NAME` is missing (a container without device nodes), the path sysfs shows, resolved to an
/// identity; a file deleted since (`... (deleted)`) cannot be resolved this way and is reported as unknown
/// by [`attached`]'s caller only through the ioctl.
fn backing_by_sysfs(sys: &Path) -> Option<Backing> {
    let text = fs::read_to_string(sys.join("loop/backing_file")).ok()?;
    let path = text.strip_suffix('\n').unwrap_or(&text);
    let meta = fs::metadata(path).ok()?;
    if std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type()) {
        return Some(Backing::Device(DevNum::from_dev(meta.rdev())));
    }
    Some(Backing::File { dev: DevNum::from_dev(meta.dev()), ino: meta.ino() })
}

/// The attached loop device backed by the file `(st_dev, st_ino)`, if any.
pub(crate) fn backed_by_file(st_dev: u64, st_ino: u64) -> Option<LoopDevice> {
    attached().into_iter().find(|l| l.backing.is_file(st_dev, st_ino))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_info64_has_the_kernels_size() {
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
    }
}
