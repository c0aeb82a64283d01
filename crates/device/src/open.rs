//! [`probe`] and [`open`]: resolving a [`TargetSpec`] to a described, checked and opened target.
//!
//! `probe` only reads metadata, /proc, /sys and (for a write job on a block device) the device's first
//! 68 KiB, so every refusal is known before anything changes. `open` then creates/extends and fills files,
//! and opens with the flags the job needs. The order inside `open` keeps the "nothing modified on error"
//! promise: the O_DIRECT open of an existing file happens before it is extended, and a new file is removed
//! (or an extended one truncated back) when a later step fails.

use crate::error::TargetError;
use crate::inuse::{self, Holding};
use crate::mem::MemStore;
use crate::ownership::{self, Mark};
use crate::scratch;
use crate::signature::{self, SIGNATURE_HEAD_BYTES};
use crate::sys::{self, BlockInfo, DevNum, Mount};
use crate::{FillProgress, OpenRequest, OpenedTarget, Probe, StopFlag, TargetKind, FILL_PROGRESS_STEP_BYTES};
use iolab_spec::{Prealloc, TargetSpec};
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Alignment assumed for O_DIRECT when the device is unknown, before [`open`] refines it.
const UNKNOWN_DIRECT_BLOCK_SIZE: u32 = 4096;

/// Size of one fill write: large enough to stream, small enough to stop quickly on Ctrl-C.
const FILL_CHUNK_BYTES: usize = 1 << 20;

/// Block size of virtual targets.
const VIRTUAL_BLOCK_SIZE: u32 = 512;

/// Learns what [`open`] will find and do for `req`, without side effects. Returns every refusal that
/// `open` would give (see [`TargetError`]), so a caller can check all targets before touching any.
pub fn probe(req: &OpenRequest) -> Result<Probe, TargetError> {
    let name = req.spec.display_name();
    let virtual_probe = |kind, size_bytes| Probe::bare(name.clone(), kind, size_bytes, VIRTUAL_BLOCK_SIZE);
    match &req.spec {
        TargetSpec::Mem { size_bytes } => Ok(virtual_probe(TargetKind::Mem, *size_bytes)),
        TargetSpec::Null { size_bytes } => Ok(virtual_probe(TargetKind::Null, *size_bytes)),
        TargetSpec::Sim(sim) => Ok(virtual_probe(TargetKind::Sim, sim.size_bytes())),
        TargetSpec::Path { path } => probe_path(req, path),
        TargetSpec::Link { target, .. } => {
            // A link changes timing, not bytes: the target behind it is probed, under the link's name.
            let inner = OpenRequest { spec: (**target).clone(), ..req.clone() };
            let mut p = probe(&inner)?;
            p.name = name;
            Ok(p)
        }
        TargetSpec::Named { name } => Err(TargetError::Unresolved { name: name.clone() }),
    }
}

/// Probes, then opens `req`'s target: creates and fills a missing file (with `--size`), extends and fills a
/// smaller one (write jobs with `--size`), and opens it with O_DIRECT when `req.direct`.
pub fn open(req: &OpenRequest) -> Result<OpenedTarget, TargetError> {
    if let TargetSpec::Link { target, .. } = &req.spec {
        let inner = OpenRequest { spec: (**target).clone(), ..req.clone() };
        let mut opened = open(&inner)?;
        opened.probe.name = req.spec.display_name();
        return Ok(opened);
    }
    let probe = probe(req)?;
    let mut opened = OpenedTarget {
        probe,
        file: None,
        direct: false,
        created: false,
        scratch: false,
        fill_s: None,
        has_holes: false,
        mem: None,
        seal: None,
    };
    match &req.spec {
        TargetSpec::Mem { size_bytes } => {
            let progress = req.fill_progress.as_ref();
            opened.mem =
                Some(Arc::new(MemStore::with_huge_pages(*size_bytes, true, progress, req.stop.as_ref())?))
        }
        TargetSpec::Null { .. } | TargetSpec::Sim(_) => {}
        TargetSpec::Path { path } => open_path(req, path, &mut opened)?,
        TargetSpec::Named { name } => return Err(TargetError::Unresolved { name: name.clone() }),
        TargetSpec::Link { .. } => unreachable!("links are opened through their target above"),
    }
    Ok(opened)
}

// ---------------------------------------------------------------------------------------------------------
// probe

fn probe_path(req: &OpenRequest, path: &str) -> Result<Probe, TargetError> {
    // A scratch file is iolab's own new file: whatever already has its name (a file, or a symlink to
    // anything) is someone else's, and is never reused, followed or overwritten, unless this process made it
    // (a sweep's later points reuse the scratch files of its first).
    let ours = || std::path::absolute(path).is_ok_and(|p| scratch::is_registered(&p));
    if req.scratch && fs::symlink_metadata(path).is_ok() && !ours() {
        return Err(TargetError::ScratchTaken { path: path.into() });
    }
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return probe_new_file(req, path),
        Err(e) => return Err(TargetError::from_io(path, "inspect", e, false)),
    };
    let file_type = meta.file_type();
    if file_type.is_dir() {
        Err(TargetError::IsDirectory { path: path.into() })
    } else if file_type.is_file() {
        probe_existing_file(req, path, &meta)
    } else if file_type.is_block_device() {
        probe_block_device(req, path, &meta)
    } else {
        let what = if file_type.is_char_device() {
            "character device"
        } else if file_type.is_fifo() {
            "FIFO"
        } else if file_type.is_socket() {
            "socket"
        } else {
            "special file"
        };
        Err(TargetError::UnsupportedFileType { path: path.into(), file_type: what })
    }
}

/// The directory a path lives in ("." for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Fills the mount and device fields of `probe` for a file on the file system whose mount is `mount`.
fn describe_fs(probe: &mut Probe, req: &OpenRequest, st_dev: u64, mount: Option<Mount>) {
    let info = sys::block_info_for_fs(st_dev, mount.as_ref());
    if let Some(m) = mount {
        probe.tmpfs = m.fs_type == "tmpfs" || m.fs_type == "ramfs";
        probe.fs_type = Some(m.fs_type);
        probe.mount_point = Some(m.mount_point);
    }
    describe_device(probe, req, info.as_ref());
}

fn describe_device(probe: &mut Probe, req: &OpenRequest, info: Option<&BlockInfo>) {
    // tmpfs and friends have no block device; their st_dev never resolves to one.
    probe.device_block_size = info.and_then(|i| i.logical_block_size);
    probe.device_model = info.and_then(|i| i.model.clone());
    probe.rotational = info.and_then(|i| i.rotational);
    probe.loop_cached_backing = info.and_then(|i| i.loop_cached_backing.clone());
    probe.logical_block_size =
        if req.direct { probe.device_block_size.unwrap_or(UNKNOWN_DIRECT_BLOCK_SIZE) } else { 1 };
}

fn empty_path_probe(req: &OpenRequest, kind: TargetKind) -> Probe {
    Probe::bare(req.spec.display_name(), kind, 0, 1)
}

/// Refuses writing to a read-only file system and filling more than the free space, using statvfs of `at`.
fn check_writable_space(
    path: &str,
    at: &Path,
    needed_bytes: u64,
    mount: Option<&Mount>,
) -> Result<(), TargetError> {
    use nix::sys::statvfs::{statvfs, FsFlags};
    let read_only =
        || TargetError::ReadOnlyFs { path: path.into(), mount_point: mount.map(|m| m.mount_point.clone()) };
    let Ok(st) = statvfs(at) else {
        return if mount.is_some_and(|m| m.read_only) { Err(read_only()) } else { Ok(()) };
    };
    if st.flags().contains(FsFlags::ST_RDONLY) {
        return Err(read_only());
    }
    // fsblkcnt_t and c_ulong are u32 on some 32-bit targets, u64 here.
    #[allow(clippy::useless_conversion)]
    let available_bytes = u64::from(st.blocks_available()).saturating_mul(u64::from(st.fragment_size()));
    if needed_bytes > available_bytes {
        return Err(TargetError::NoSpace {
            path: path.into(),
            needed_bytes,
            available_bytes: Some(available_bytes),
        });
    }
    Ok(())
}

/// Checks access(2) so permission errors come from the probe, not halfway through `open`.
fn check_access(
    path: &str,
    at: &Path,
    write: bool,
    action: &'static str,
    device: bool,
) -> Result<(), TargetError> {
    use nix::unistd::{access, AccessFlags};
    let mode = if write { AccessFlags::R_OK | AccessFlags::W_OK } else { AccessFlags::R_OK };
    match access(at, mode) {
        Err(nix::errno::Errno::EROFS) => {
            Err(TargetError::ReadOnlyFs { path: path.into(), mount_point: None })
        }
        Err(e @ (nix::errno::Errno::EACCES | nix::errno::Errno::EPERM)) => {
            Err(TargetError::from_io(path, action, io::Error::from_raw_os_error(e as i32), device))
        }
        _ => Ok(()),
    }
}

fn probe_new_file(req: &OpenRequest, path: &str) -> Result<Probe, TargetError> {
    let dir = parent_dir(Path::new(path));
    let dir_meta = match fs::metadata(&dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(TargetError::DirectoryMissing { path: path.into(), dir: dir.display().to_string() })
        }
        Err(e) => return Err(TargetError::from_io(path, "inspect the directory of", e, false)),
    };
    if !dir_meta.is_dir() {
        return Err(TargetError::ParentNotDirectory { path: path.into(), dir: dir.display().to_string() });
    }
    if let Some(why) = crate::pseudofs::refuse_pseudo_fs(&dir) {
        return Err(TargetError::PseudoFs { path: path.into(), why });
    }
    let Some(size_bytes) = req.create_size else { return Err(TargetError::NotFound { path: path.into() }) };
    if size_bytes == 0 {
        return Err(TargetError::InvalidSize { path: path.into(), size_bytes, expected: "a size above 0" });
    }
    let canonical_dir =
        fs::canonicalize(&dir).map_err(|e| TargetError::from_io(path, "resolve", e, false))?;
    let mount = sys::mount_of(&canonical_dir);
    check_writable_space(path, &canonical_dir, size_bytes, mount.as_ref())?;
    check_access(path, &canonical_dir, true, "create a file in the directory of", false)?;
    let mut probe = empty_path_probe(req, TargetKind::File);
    probe.size_bytes = size_bytes;
    probe.exists = false;
    probe.will_create = true;
    describe_fs(&mut probe, req, dir_meta.dev(), mount);
    Ok(probe)
}

fn probe_existing_file(req: &OpenRequest, path: &str, meta: &Metadata) -> Result<Probe, TargetError> {
    let len = meta.len();
    let mut will_extend_to = None;
    match req.create_size {
        None if len == 0 => return Err(TargetError::Empty { path: path.into() }),
        Some(_) if len == 0 && !req.writes => return Err(TargetError::Empty { path: path.into() }),
        Some(0) => {
            return Err(TargetError::InvalidSize {
                path: path.into(),
                size_bytes: 0,
                expected: "a size above 0",
            })
        }
        Some(wanted) if wanted > len => {
            if !req.writes {
                return Err(TargetError::TooSmall {
                    path: path.into(),
                    size_bytes: len,
                    wanted_bytes: wanted,
                });
            }
            will_extend_to = Some(wanted);
        }
        _ => {}
    }
    let canonical = fs::canonicalize(path).map_err(|e| TargetError::from_io(path, "resolve", e, false))?;
    let mount = sys::mount_of(&canonical);
    if req.writes {
        let needed = will_extend_to.map_or(0, |to| to - len);
        check_writable_space(path, &canonical, needed, mount.as_ref())?;
    }
    let action = if req.writes { "open for writing" } else { "open for reading" };
    check_access(path, &canonical, req.writes, action, false)?;
    if req.writes {
        check_file_may_be_written(req, path, meta)?;
    }
    let mut probe = empty_path_probe(req, TargetKind::File);
    probe.size_bytes = will_extend_to.unwrap_or(len);
    probe.will_extend_to = will_extend_to;
    describe_fs(&mut probe, req, meta.dev(), mount);
    Ok(probe)
}

/// May a write job write the existing regular file at `path`? What is in use (it backs a loop device, is
/// swap, or another process holds it open, locks or maps it) never; what carries a filesystem, volume,
/// partition-table, database or disk-image signature only with --destroy-data; what iolab did not make
/// (no [`ownership`] mark, or one that no longer matches the file) and is not empty only with --overwrite (or
/// --destroy-data).
fn check_file_may_be_written(req: &OpenRequest, path: &str, meta: &Metadata) -> Result<(), TargetError> {
    if let Some(usage) = inuse::file_in_use(Path::new(path), meta, Holding::Open) {
        return Err(TargetError::DeviceInUse { path: path.into(), usage });
    }
    let dir = parent_dir(Path::new(path));
    if meta.nlink() > 1 && fs::metadata(&dir).is_ok_and(|d| d.mode() & 0o002 != 0) {
        let dir = dir.display().to_string();
        return Err(TargetError::SharedHardLink { path: path.into(), links: meta.nlink(), dir });
    }
    if req.consent.destroy_data {
        return Ok(());
    }
    let read_error = |e| TargetError::from_io(path, "read the first bytes of", e, false);
    let file = File::open(path).map_err(read_error)?;
    let head = read_head(&file).map_err(read_error)?;
    if let Some(signature) = signature::identify(Path::new(path), &head) {
        return Err(TargetError::DeviceSignature { path: path.into(), signature });
    }
    let mark = ownership::mark_of(&file);
    let ours = mark == Mark::Ours || std::path::absolute(path).is_ok_and(|p| scratch::is_registered(&p));
    if ours || meta.len() == 0 || req.consent.overwrite {
        return Ok(());
    }
    Err(TargetError::NotIolabs {
        path: path.into(),
        size_bytes: meta.len(),
        holds: signature::describe_head(&head),
        mark,
    })
}

fn probe_block_device(req: &OpenRequest, path: &str, meta: &Metadata) -> Result<Probe, TargetError> {
    // Opening read-only and seeking are side-effect free; they give the size without an ioctl.
    let mut file = File::open(path).map_err(|e| TargetError::from_io(path, "open", e, true))?;
    let size_bytes =
        file.seek(SeekFrom::End(0)).map_err(|e| TargetError::from_io(path, "find the size of", e, true))?;
    if req.create_size.is_some() {
        return Err(TargetError::SizeOnBlockDevice { path: path.into(), size_bytes });
    }
    let dev = DevNum::from_dev(meta.rdev());
    let info = sys::block_info(dev);
    if req.writes {
        if !req.consent.allow_write_device {
            return Err(TargetError::WriteDeviceNotAllowed { path: path.into() });
        }
        check_access(path, Path::new(path), true, "open for writing", true)?;
        // A device in use (it or anything built on it mounted, swap, held open, or stacked on) is never
        // written, not even with --destroy-data: that flag is consent to lose the data at rest, not to
        // corrupt a live filesystem.
        if let Some(usage) = inuse::device_in_use(path, dev) {
            return Err(TargetError::DeviceInUse { path: path.into(), usage });
        }
        if !req.consent.destroy_data {
            let head = read_head(&file)
                .map_err(|e| TargetError::from_io(path, "read the first bytes of", e, true))?;
            if let Some(signature) = signature::identify(Path::new(path), &head) {
                return Err(TargetError::DeviceSignature { path: path.into(), signature });
            }
        }
    }
    let mut probe = empty_path_probe(req, TargetKind::BlockDevice);
    probe.size_bytes = size_bytes;
    if let Some(m) = sys::mounts().into_iter().rev().find(|m| m.dev == dev) {
        probe.fs_type = Some(m.fs_type);
        probe.mount_point = Some(m.mount_point);
    }
    describe_device(&mut probe, req, info.as_ref());
    Ok(probe)
}

/// Reads up to [`SIGNATURE_HEAD_BYTES`] from the start of `file` (less for a tiny device).
fn read_head(file: &File) -> io::Result<Vec<u8>> {
    let mut head = vec![0u8; SIGNATURE_HEAD_BYTES];
    let mut filled = 0;
    while filled < head.len() {
        match file.read_at(&mut head[filled..], filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(filled);
    Ok(head)
}

// ---------------------------------------------------------------------------------------------------------
// open

fn open_path(req: &OpenRequest, path: &str, opened: &mut OpenedTarget) -> Result<(), TargetError> {
    let device = opened.probe.kind == TargetKind::BlockDevice;
    if opened.probe.will_create {
        create_and_fill(req, path, opened)?;
    } else {
        let file = open_final(req, path, device, &opened.probe)?;
        if req.writes && !device && ownership::mark_of(&file) == Mark::Ours {
            // iolab's own file stays its own after this run's writes: sealed again when the run lets it go.
            opened.seal = ownership::Seal::of(&file);
        }
        if let Some(to) = opened.probe.will_extend_to {
            let from = fs::metadata(path).map_err(|e| TargetError::from_io(path, "inspect", e, false))?.len();
            opened.fill_s = extend_and_fill(path, from, to, req)?;
        }
        opened.file = Some(file);
    }
    let file = opened.file.as_ref().expect("a path target has a file once opened");
    opened.direct = req.direct;
    if opened.probe.kind == TargetKind::File {
        opened.has_holes = has_holes(file, opened.probe.size_bytes);
    }
    if req.direct && opened.probe.device_block_size.is_none() {
        opened.probe.logical_block_size = direct_block_size(file);
    }
    Ok(())
}

/// Opens the descriptor the engine will use: read-only or read-write, O_DIRECT when asked. A write job on
/// a device also gets O_EXCL (with or without `--destroy-data`), so the kernel refuses (EBUSY) a device that
/// is mounted or held even when the sysfs checks missed it.
fn open_final(req: &OpenRequest, path: &str, device: bool, probe: &Probe) -> Result<File, TargetError> {
    open_final_at(req, Path::new(path), path, device, probe)
}

/// [`open_final`] of the file at `at`, named `path` in messages (a file just created is reopened through
/// its descriptor, `/proc/self/fd/N`, so the run's descriptor is the created file whatever its path names
/// by then).
fn open_final_at(
    req: &OpenRequest,
    at: &Path,
    path: &str,
    device: bool,
    probe: &Probe,
) -> Result<File, TargetError> {
    let mut options = OpenOptions::new();
    options.read(true).write(req.writes);
    let mut flags = 0;
    if req.direct {
        flags |= libc::O_DIRECT;
    }
    if device && req.writes {
        flags |= libc::O_EXCL;
    }
    options.custom_flags(flags);
    options.open(at).map_err(|e| match e.raw_os_error() {
        Some(libc::EINVAL) if req.direct => {
            TargetError::DirectUnsupported { path: path.into(), fs_type: probe.fs_type.clone(), source: e }
        }
        Some(libc::EBUSY) if device => TargetError::DeviceInUse {
            path: path.into(),
            usage: "the kernel reports it busy (it is mounted, used as swap, or part of an LVM, RAID or dm device)"
                .into(),
        },
        _ => TargetError::from_io(path, if req.writes { "open for writing" } else { "open for reading" }, e, device),
    })
}

/// Creates `path` (0644), opens the final descriptor (so an O_DIRECT refusal costs no fill), then fills it.
/// On any error the file is removed again.
fn create_and_fill(req: &OpenRequest, path: &str, opened: &mut OpenedTarget) -> Result<(), TargetError> {
    let size_bytes = opened.probe.size_bytes;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
    if req.scratch {
        // Before creating: a Ctrl-C during the fill must still remove the file.
        scratch::register_scratch(&absolute).map_err(|e| TargetError::from_io(path, "create", e, false))?;
    }
    let result = (|| {
        let writer = if req.scratch {
            scratch::create(&absolute)
        } else {
            OpenOptions::new().write(true).create_new(true).mode(0o644).open(path)
        }
        .map_err(|e| TargetError::from_io(path, "create", e, false))?;
        // A scratch file is removed through the registry (relative to its held directory) on error.
        let guard = RemoveOnError { path: &absolute, armed: !req.scratch };
        // Marked before a byte is written: a later run may write it without --overwrite.
        ownership::mark(&writer);
        let at = PathBuf::from(format!("/proc/self/fd/{}", writer.as_raw_fd()));
        let file = open_final_at(req, &at, path, false, &opened.probe)?;
        let watch = req.scratch.then_some(absolute.as_path());
        let fill_s = lay_out(&writer, path, (0, size_bytes), watch, req)?;
        // The mark vouches for the file as filled; a write run seals it again when it lets it go.
        ownership::seal(&writer);
        guard.disarm();
        Ok((file, fill_s))
    })();
    match result {
        Ok((file, fill_s)) => {
            if req.writes && !req.scratch {
                opened.seal = ownership::Seal::of(&file);
            }
            opened.file = Some(file);
            opened.fill_s = fill_s;
            opened.created = true;
            opened.scratch = req.scratch;
            Ok(())
        }
        Err(e) => {
            if req.scratch {
                scratch::remove(&absolute);
            }
            Err(e)
        }
    }
}

/// Removes a half-made file when dropped while armed.
struct RemoveOnError<'a> {
    path: &'a Path,
    armed: bool,
}

impl RemoveOnError<'_> {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for RemoveOnError<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(self.path);
        }
    }
}

/// Extends an existing file from `from` to `to` bytes and lays out the new part ([`lay_out`]); on error
/// truncates it back.
fn extend_and_fill(path: &str, from: u64, to: u64, req: &OpenRequest) -> Result<Option<f64>, TargetError> {
    let writer = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| TargetError::from_io(path, "open for writing", e, false))?;
    lay_out(&writer, path, (from, to), None, req).inspect_err(|_| {
        let _ = writer.set_len(from);
    })
}

/// Lays out `[start, end)` of `file` as `req.prealloc` says: `fallocate` reserves it in one call, then fills
/// it; `write` fills it, allocating as the writes come; `reserve` reserves it and writes nothing (unwritten
/// extents); `none` leaves the file as it is (a new one empty),
/// for the run's writes to grow and allocate, as appending writers do. Returns the seconds spent filling,
/// `None` when nothing was written.
fn lay_out(
    file: &File,
    path: &str,
    (start, end): (u64, u64),
    watch: Option<&Path>,
    req: &OpenRequest,
) -> Result<Option<f64>, TargetError> {
    let no_space =
        || TargetError::NoSpace { path: path.into(), needed_bytes: end - start, available_bytes: None };
    let reserved = || {
        reserve(file, start, end).map_err(|e| match e.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => no_space(),
            _ => TargetError::from_io(path, "allocate", e, false),
        })
    };
    match req.prealloc {
        Prealloc::None => return Ok(None),
        Prealloc::Reserve => return reserved().map(|()| None),
        Prealloc::Write => {}
        Prealloc::Fallocate => reserved()?,
    }
    fill(file, path, start, end, watch, req.fill_progress.as_ref(), req.stop.as_ref()).map(Some)
}

/// Reserves `[start, end)` of `file` with one `fallocate(2)`; where the file system has none (tmpfs before
/// 3.5, some network file systems), sets the length instead and lets the fill allocate.
fn reserve(file: &File, start: u64, end: u64) -> io::Result<()> {
    use nix::fcntl::{fallocate, FallocateFlags};
    match fallocate(file, FallocateFlags::empty(), start as libc::off_t, (end - start) as libc::off_t) {
        Ok(()) => Ok(()),
        Err(e @ (nix::errno::Errno::ENOSPC | nix::errno::Errno::EDQUOT)) => Err(io::Error::from(e)),
        Err(_) => file.set_len(end),
    }
}

/// Writes incompressible pseudo-random data over `[start, end)` of `file`, so that no read of the run hits a
/// hole. Buffered 1 MiB sequential writes, then fdatasync and POSIX_FADV_DONTNEED so the
/// page cache does not serve the run. Returns the seconds spent. The fill stops with
/// [`TargetError::Interrupted`] when `stop` is raised, or once `watch` (a scratch path) has been unregistered
/// by [`scratch::remove_scratch_files`].
/// `progress` is told `(done, total)` at the start, every [`FILL_PROGRESS_STEP_BYTES`] and at the end.
fn fill(
    file: &File,
    path: &str,
    start: u64,
    end: u64,
    watch: Option<&Path>,
    progress: Option<&FillProgress>,
    stop: Option<&StopFlag>,
) -> Result<f64, TargetError> {
    use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
    let started = Instant::now();
    let needed_bytes = end - start;
    let no_space = || TargetError::NoSpace { path: path.into(), needed_bytes, available_bytes: None };
    let write_error = |e: io::Error| match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => no_space(),
        _ => TargetError::from_io(path, "write to", e, false),
    };
    let mut words = vec![0u64; FILL_CHUNK_BYTES / 8];
    // xorshift64: fast and incompressible enough for compressing/deduplicating devices. The seed varies
    // per run and the state runs on across chunks, so no two chunks are equal.
    let clock_ns =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut state = (clock_ns ^ start ^ 0x9E37_79B9_7F4A_7C15) | 1;
    let mut offset = start;
    let report = |offset: u64| {
        if let Some(p) = progress {
            (p.0)(offset - start, needed_bytes);
        }
    };
    report(start);
    let mut next_report = start.saturating_add(FILL_PROGRESS_STEP_BYTES);
    while offset < end {
        for word in words.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *word = state;
        }
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        let n = (end - offset).min(FILL_CHUNK_BYTES as u64) as usize;
        file.write_all_at(&bytes[..n], offset).map_err(write_error)?;
        offset += n as u64;
        if offset >= next_report && offset < end {
            report(offset);
            next_report = offset.saturating_add(FILL_PROGRESS_STEP_BYTES);
        }
        if watch.is_some_and(|w| !scratch::is_registered(w)) || stop.is_some_and(StopFlag::raised) {
            return Err(TargetError::Interrupted { path: path.into() });
        }
    }
    file.sync_data().map_err(write_error)?;
    report(end);
    // Advice only; a failure changes nothing about the data.
    let _ = posix_fadvise(file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
    Ok(started.elapsed().as_secs_f64())
}

/// True when the file has a hole before `size_bytes` (SEEK_HOLE finds one before the end). File systems
/// without SEEK_HOLE support report the end, i.e. no holes.
fn has_holes(file: &File, size_bytes: u64) -> bool {
    use nix::unistd::{lseek, Whence};
    match lseek(file, 0, Whence::SeekHole) {
        Ok(hole) => (hole as u64) < size_bytes,
        Err(_) => false,
    }
}

/// One aligned page, so a buffer for an O_DIRECT test read needs no `unsafe`.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(4096))]
struct Page([u8; 4096]);

/// The O_DIRECT alignment of an opened file whose device is unknown: 512 when a 512-byte O_DIRECT read at
/// offset 0 into a 4096-aligned buffer succeeds, else 4096.
fn direct_block_size(file: &File) -> u32 {
    let mut pages = vec![Page([0; 4096])];
    let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut pages);
    match file.read_at(&mut buf[..512], 0) {
        Ok(_) => 512,
        Err(_) => UNKNOWN_DIRECT_BLOCK_SIZE,
    }
}

#[cfg(test)]
mod tests;
