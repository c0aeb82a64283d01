//! The sync engine: pread/pwrite through std's positional file I/O, one I/O at a time per worker;
//! synchronous and atomic writes through `pwritev2` with RWF_DSYNC, RWF_SYNC or RWF_ATOMIC, flushes through fsync/fdatasync, trims
//! through the BLKDISCARD ioctl on a block device and a punched hole (`fallocate`) on a file.
//!
//! Ops are executed in [`Engine::submit_and_reap`], after the worker stamped the submission time, so service
//! time covers the system call. The plan runs this engine at depth 1 (a deeper queue would only wait in line
//! inside the worker); use more workers for concurrency, as with fio's psync.

use crate::buffers::Buffers;
use crate::{Completion, Engine, EngineError, Op, OpKind, RealClock, WriteSync};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// pread/pwrite engine.
pub struct SyncEngine {
    files: Vec<Arc<File>>,
    buffers: Buffers,
    queued: Vec<Op>,
    clock: RealClock,
    /// Every write is atomic (RWF_ATOMIC).
    atomic: bool,
}

impl SyncEngine {
    /// An engine over `files` with `buffers`.
    pub fn new(files: Vec<Arc<File>>, buffers: Buffers, clock: RealClock) -> SyncEngine {
        SyncEngine { files, buffers, queued: Vec::with_capacity(64), clock, atomic: false }
    }

    /// The same engine, every write atomic (RWF_ATOMIC) when `on`: the `atomic` key.
    pub fn with_atomic_writes(mut self, on: bool) -> SyncEngine {
        self.atomic = on;
        self
    }
}

impl Engine for SyncEngine {
    fn name(&self) -> &'static str {
        "sync"
    }
    fn features(&self) -> Vec<String> {
        vec!["pread_pwrite".into()]
    }
    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }
    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        self.buffers.get_mut(buf)
    }
    unsafe fn push(&mut self, op: Op) {
        self.queued.push(op);
    }
    fn submit_and_reap(
        &mut self,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        if self.queued.is_empty() {
            self.clock.sleep_until(deadline_ns);
            return Ok(());
        }
        for op in self.queued.drain(..) {
            let file = &self.files[op.target as usize];
            let len = op.len as usize;
            let r = match op.kind {
                OpKind::Read => file.read_at(&mut self.buffers.get_mut(op.buf)[..len], op.offset),
                OpKind::Write if op.sync == WriteSync::None && !self.atomic => {
                    file.write_at(&self.buffers.get(op.buf)[..len], op.offset)
                }
                OpKind::Write => {
                    write_flags(file, &self.buffers.get(op.buf)[..len], op.offset, op.sync, self.atomic)
                }
                OpKind::Flush if op.sync == WriteSync::Dsync => file.sync_data().map(|()| 0),
                OpKind::Flush => file.sync_all().map(|()| 0),
                OpKind::Trim => trim(file, op.offset, op.len).map(|()| op.len as usize),
            };
            let result = match r {
                Ok(n) => n as i32,
                Err(e) => -e.raw_os_error().unwrap_or(libc::EIO),
            };
            out.push(Completion { user_data: op.user_data, result, cached: false, done_ns: 0, start_ns: 0 });
        }
        Ok(())
    }
    /// Nothing to hand over early: this engine runs each op in `submit_and_reap`.
    fn submit(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
    /// Nothing held back.
    fn finish(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}

/// One write through `pwritev2`: with RWF_DSYNC or RWF_SYNC it returns when its data is durable; with
/// RWF_ATOMIC (`atomic`) all of it or none of it reaches the medium.
fn write_flags(
    file: &File,
    data: &[u8],
    offset: u64,
    sync: WriteSync,
    atomic: bool,
) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let durable = match sync {
        WriteSync::None => 0,
        WriteSync::Dsync => libc::RWF_DSYNC,
        WriteSync::Sync => libc::RWF_SYNC,
    };
    let flags = durable | if atomic { libc::RWF_ATOMIC } else { 0 };
    let iov = libc::iovec { iov_base: data.as_ptr().cast_mut().cast(), iov_len: data.len() };
    // SAFETY: `iov` points at `data`, which is borrowed for the whole call and only read by the kernel (a
    // write); the fd belongs to `file`, open for the call.
    let n = unsafe { libc::pwritev2(file.as_raw_fd(), &iov, 1, offset as libc::off_t, flags) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// One trim: a discard on a block device (BLKDISCARD), a punched hole in a file (the size kept).
fn trim(file: &File, offset: u64, len: u32) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let is_block =
        file.metadata().is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()));
    if !is_block {
        let mode = nix::fcntl::FallocateFlags::FALLOC_FL_PUNCH_HOLE
            | nix::fcntl::FallocateFlags::FALLOC_FL_KEEP_SIZE;
        return nix::fcntl::fallocate(file, mode, offset as i64, i64::from(len))
            .map_err(std::io::Error::from);
    }
    let range: [u64; 2] = [offset, u64::from(len)];
    // SAFETY: BLKDISCARD (_IO(0x12, 119)) reads two u64 (start, length) from the pointer, which points at
    // `range`, alive for the call; the fd belongs to `file`, open for the call.
    let r = unsafe { libc::ioctl(file.as_raw_fd(), BLKDISCARD, range.as_ptr()) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `BLKDISCARD`, `_IO(0x12, 119)` (include/uapi/linux/fs.h).
const BLKDISCARD: libc::c_ulong = (0x12 << 8) | 119;
