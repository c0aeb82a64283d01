//! The io_uring engine.
//!
//! Setup asks for the cheapest ring the kernel offers and records what it got: SINGLE_ISSUER (6.0) and
//! DEFER_TASKRUN (6.1) let the kernel skip locking and run completion work only when this thread asks for
//! events; COOP_TASKRUN (5.19) avoids interrupting the thread. Files are registered (no per-I/O fd lookup) and
//! every buffer is registered (no per-I/O page pinning) so reads and writes go out as READ_FIXED/WRITE_FIXED.
//! Each of these falls back, and the fallback is listed in [`Engine::features`], so the report says exactly
//! what ran. Submission and reaping share one `io_uring_enter` per loop of the worker; `submit` hands a
//! refill's first ops over early (see `submit_early` in `worker/slots.rs`).
//!
//! Ownership of buffers: the engine owns the [`Buffers`] slab for its whole life. A buffer is handed to the
//! kernel when its op is pushed and returned when that op's CQE is reaped; the worker never reuses a slot
//! (and so its buffers) before then. On drop, the engine drains in-flight ops; if the kernel still holds any
//! after that, the slab is leaked rather than freed, so the kernel can never write into freed memory.

use crate::buffers::Buffers;
use crate::{Completion, Engine, EngineError, Op, OpKind, RealClock, WriteSync};
use io_uring::{opcode, types, IoUring};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// The block layer's io_uring discard command, `_IO(0x12, 0)` (include/uapi/linux/fs.h, `BLOCK_URING_CMD_DISCARD`).
const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;

/// Builds an SQE on `op`'s target: its registered index when files are registered, else its fd. (The two
/// target types share a trait the io-uring crate keeps private, so this is a macro, not a function.)
macro_rules! on_target {
    ($engine:expr, $op:expr, |$t:ident| $sqe:expr) => {
        if $engine.fixed_files {
            let $t = types::Fixed(u32::from($op.target));
            $sqe
        } else {
            let $t = types::Fd($engine.files[$op.target as usize].as_raw_fd());
            $sqe
        }
    };
}

/// A write's `rw_flags`: RWF_DSYNC or RWF_SYNC for a synchronous write, else none.
fn rw_flags(op: &Op) -> i32 {
    match op.sync {
        WriteSync::None => 0,
        WriteSync::Dsync => libc::RWF_DSYNC,
        WriteSync::Sync => libc::RWF_SYNC,
    }
}

/// A flush's flags: fdatasync when it asks for the data only ([`WriteSync::Dsync`]), else fsync.
fn fsync_flags(op: Op) -> types::FsyncFlags {
    if op.sync == WriteSync::Dsync {
        types::FsyncFlags::DATASYNC
    } else {
        types::FsyncFlags::empty()
    }
}

/// Applies setup flags to a ring builder.
type RingSetup = fn(&mut io_uring::Builder);

/// io_uring engine state.
pub struct UringEngine {
    ring: IoUring,
    buffers: Option<Buffers>,
    files: Vec<Arc<File>>,
    /// Per file: a block device (trims go out as discards), else a file (trims punch holes).
    block: Vec<bool>,
    fixed_files: bool,
    fixed_buffers: bool,
    features: Vec<String>,
    in_flight: u32,
    clock: RealClock,
    /// Every write is atomic (RWF_ATOMIC): the `atomic` key.
    atomic: bool,
}

/// Whether io_uring can be set up here; the error explains why not.
pub fn probe() -> Result<(), EngineError> {
    IoUring::new(2).map(|_| ()).map_err(|e| setup_error("io_uring_setup failed", e))
}

fn setup_error(what: &str, e: std::io::Error) -> EngineError {
    let (cause, hint) = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => (
            Some(
                "io_uring is disabled (sysctl kernel.io_uring_disabled) or blocked by seccomp (containers)"
                    .to_string(),
            ),
            Some("re-run with --engine sync".to_string()),
        ),
        Some(libc::ENOSYS) => (
            Some("this kernel has no io_uring (Linux 5.1 or later)".into()),
            Some("re-run with --engine sync".into()),
        ),
        Some(libc::ENOMEM) => (
            Some("locked-memory limit too low for the ring (ulimit -l)".into()),
            Some("raise 'ulimit -l', lower --qd, or re-run with --engine sync".into()),
        ),
        _ => (None, Some("re-run with --engine sync".into())),
    };
    EngineError::Setup { what: what.to_string(), source: e, cause, hint }
}

impl UringEngine {
    /// The same engine, every write atomic (RWF_ATOMIC) when `on`: the `atomic` key. Its writes then go out
    /// as IORING_OP_WRITE from the buffer's address, not from the registered buffer (see `push`).
    pub fn with_atomic_writes(mut self, on: bool) -> UringEngine {
        self.atomic = on;
        self
    }

    /// A ring for up to `slot_count` ops in flight over `files`, with `buffers` (registered if the kernel allows).
    pub fn new(
        slot_count: u32,
        files: Vec<Arc<File>>,
        mut buffers: Buffers,
        clock: RealClock,
    ) -> Result<UringEngine, EngineError> {
        let entries = slot_count.next_power_of_two().max(8);
        let mut features = Vec::new();
        // Try the fastest setup first; each failure drops the newest flag.
        let attempts: [(&str, RingSetup); 3] = [
            ("single_issuer+coop_taskrun+defer_taskrun", |b| {
                b.setup_single_issuer().setup_coop_taskrun().setup_defer_taskrun();
            }),
            ("single_issuer+coop_taskrun", |b| {
                b.setup_single_issuer().setup_coop_taskrun();
            }),
            ("plain", |_| {}),
        ];
        let mut ring = None;
        let mut last_err = None;
        for (label, apply) in attempts {
            let mut b = IoUring::builder();
            apply(&mut b);
            b.setup_cqsize(entries * 2);
            match b.build(entries) {
                Ok(r) => {
                    features.push(format!("ring:{label}"));
                    ring = Some(r);
                    break;
                }
                Err(e) => last_err = Some(e),
            }
        }
        let ring = match ring {
            Some(r) => r,
            None => {
                return Err(setup_error(
                    "io_uring_setup failed",
                    last_err.unwrap_or_else(|| std::io::Error::other("unknown")),
                ))
            }
        };
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let fixed_files = ring.submitter().register_files(&fds).is_ok();
        features.push(if fixed_files { "registered_files".into() } else { "unregistered_files".into() });
        let iovecs: Vec<libc::iovec> = (0..buffers.count())
            .map(|i| libc::iovec { iov_base: buffers.as_mut_ptr(i).cast(), iov_len: buffers.buffer_size() })
            .collect();
        // SAFETY: every iovec points into `buffers`, a heap slab that this engine owns from here on and never
        // reallocates. It outlives the registration: the ring (and with it the registration) is dropped with the
        // engine, and `Drop` leaks the slab instead of freeing it if the kernel may still use it.
        let fixed_buffers = buffers.count() <= u16::MAX as u32
            && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        features.push(if fixed_buffers {
            "registered_buffers".into()
        } else {
            "unregistered_buffers".into()
        });
        features.push(if ring.params().is_feature_ext_arg() {
            "ext_arg_timeouts".into()
        } else {
            "no_ext_arg".into()
        });
        let block = files
            .iter()
            .map(|f| {
                f.metadata().is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()))
            })
            .collect();
        Ok(UringEngine {
            ring,
            buffers: Some(buffers),
            files,
            block,
            fixed_files,
            fixed_buffers,
            features,
            in_flight: 0,
            clock,
            atomic: false,
        })
    }

    fn buffers_mut(&mut self) -> &mut Buffers {
        self.buffers.as_mut().expect("buffers present until drop")
    }

    /// The SQE of a read or write into buffer `op.buf`. The kernel will move up to `op.len` bytes there, so
    /// the bounds are checked here: an op whose buffer index or length falls outside the registered buffers
    /// panics (a bug of the caller) instead of reaching the kernel.
    #[inline]
    fn data_sqe(&mut self, op: &Op) -> io_uring::squeue::Entry {
        let buffers = self.buffers_mut();
        assert!(
            op.buf < buffers.count() && op.len as usize <= buffers.buffer_size(),
            "op on buffer {} of {} bytes outside the engine's {} buffers of {} bytes (bug)",
            op.buf,
            op.len,
            buffers.count(),
            buffers.buffer_size()
        );
        let ptr = buffers.as_mut_ptr(op.buf);
        let (len, buf, off) = (op.len, op.buf as u16, op.offset);
        let flags = rw_flags(op) | if self.atomic { libc::RWF_ATOMIC } else { 0 };
        let write = op.kind == OpKind::Write;
        // An atomic write goes out from the buffer's address, not as a registered buffer: Linux 6.18 answers
        // RWF_ATOMIC on a registered buffer with EINVAL (measured on XFS, every write), where the same write from
        // a plain user buffer succeeds (its atomic-write checks take a user buffer's iterator).
        match (write, self.fixed_buffers && !(write && self.atomic)) {
            (false, true) => {
                on_target!(self, op, |t| opcode::ReadFixed::new(t, ptr, len, buf).offset(off).build())
            }
            (false, false) => on_target!(self, op, |t| opcode::Read::new(t, ptr, len).offset(off).build()),
            (true, true) => on_target!(self, op, |t| {
                opcode::WriteFixed::new(t, ptr, len, buf).offset(off).rw_flags(flags).build()
            }),
            (true, false) => {
                on_target!(self, op, |t| opcode::Write::new(t, ptr, len).offset(off).rw_flags(flags).build())
            }
        }
    }

    /// The SQE of a trim: on a block device the block layer's discard command (Linux 6.12; older kernels
    /// answer it with an error, counted per errno), on a file a punched hole (`fallocate` with PUNCH_HOLE and
    /// KEEP_SIZE: the blocks are freed, the size kept).
    fn trim_sqe(&self, op: &Op) -> io_uring::squeue::Entry {
        if self.block[op.target as usize] {
            let mut cmd = [0u8; 16];
            cmd[..8].copy_from_slice(&u64::from(op.len).to_ne_bytes()); // sqe->addr3: the length
            on_target!(self, op, |t| {
                opcode::UringCmd16::new(t, BLOCK_URING_CMD_DISCARD).addr(Some(op.offset)).cmd(cmd).build()
            })
        } else {
            let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
            on_target!(self, op, |t| opcode::Fallocate::new(t, u64::from(op.len))
                .offset(op.offset)
                .mode(mode)
                .build())
        }
    }

    fn reap_into(&mut self, out: &mut Vec<Completion>) {
        let before = out.len();
        for cqe in self.ring.completion() {
            out.push(Completion {
                user_data: cqe.user_data(),
                result: cqe.result(),
                cached: false,
                done_ns: 0,
                start_ns: 0,
            });
        }
        self.in_flight -= (out.len() - before) as u32;
    }
}

impl Engine for UringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn features(&self) -> Vec<String> {
        self.features.clone()
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.clock.now_ns()
    }

    fn buffer_mut(&mut self, buf: u32) -> &mut [u8] {
        self.buffers_mut().get_mut(buf)
    }

    /// Queues `op` as one SQE: a read or write that points into buffer `op.buf` (`data_sqe`
    /// checks the bounds the `unsafe` push relies on), or a flush or trim, which point at no memory.
    #[inline]
    unsafe fn push(&mut self, op: Op) {
        let sqe = match op.kind {
            OpKind::Read | OpKind::Write => self.data_sqe(&op),
            OpKind::Flush => on_target!(self, op, |t| opcode::Fsync::new(t).flags(fsync_flags(op)).build()),
            OpKind::Trim => self.trim_sqe(&op),
        }
        .user_data(op.user_data);
        // The ring has at least as many SQ entries as slots, and every loop submits what it pushed, so the SQ
        // cannot be full here; a full SQ means the caller broke the slot contract.
        assert!(self.in_flight < self.ring.params().sq_entries(), "more ops in flight than slots");
        // SAFETY: a read or write SQE points at buffer `op.buf` of the engine-owned slab (valid until the CQE is
        // reaped; see the module docs and `worker/slots.rs`: a slot and its buffers are not reused before its
        // completion), with `op.buf` a buffer of the slab and `op.len` <= the buffer size (both asserted in
        // `data_sqe`); a flush or trim SQE points at no memory. The file index or fd refers to a file the engine
        // keeps open (`self.files`) for the ring's whole life.
        let pushed = unsafe { self.ring.submission().push(&sqe) };
        pushed.expect("submission queue has room for every slot");
        self.in_flight += 1;
    }

    fn submit(&mut self) -> Result<(), EngineError> {
        if self.ring.submission().is_empty() {
            return Ok(());
        }
        match self.ring.submitter().submit() {
            Ok(_) => Ok(()),
            // Left in the SQ: the next submit_and_reap hands it over.
            Err(e)
                if matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)) =>
            {
                Ok(())
            }
            Err(e) => Err(EngineError::Submit(e)),
        }
    }

    fn submit_and_reap(
        &mut self,
        deadline_ns: Option<u64>,
        out: &mut Vec<Completion>,
    ) -> Result<(), EngineError> {
        let pending_sq = !self.ring.submission().is_empty();
        if self.in_flight == 0 && deadline_ns.is_none() {
            return Ok(());
        }
        // Completions already posted need no wait (but queued SQEs still need submitting).
        let want = if self.ring.completion().is_empty() { 1 } else { 0 };
        let res = match deadline_ns {
            None => self.ring.submitter().submit_and_wait(want),
            Some(d) => {
                let now = self.clock.now_ns();
                if d <= now || want == 0 {
                    if pending_sq || want == 0 {
                        self.ring.submitter().submit_and_wait(0)
                    } else {
                        Ok(0)
                    }
                } else {
                    let ts = types::Timespec::from(std::time::Duration::from_nanos(d - now));
                    let args = types::SubmitArgs::new().timespec(&ts);
                    self.ring.submitter().submit_with_args(1, &args)
                }
            }
        };
        match res {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
                ) => {}
            Err(e) => return Err(EngineError::Submit(e)),
        }
        self.reap_into(out);
        Ok(())
    }

    /// Nothing held back: every op's data is on its file once reaped.
    fn finish(&mut self) -> Result<(), EngineError> {
        Ok(())
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // Drain: wait up to ~5 s for the kernel to give back every buffer.
        let mut spare = Vec::new();
        for _ in 0..50 {
            if self.in_flight == 0 {
                break;
            }
            let ts = types::Timespec::from(std::time::Duration::from_millis(100));
            let args = types::SubmitArgs::new().timespec(&ts);
            let _ = self.ring.submitter().submit_with_args(1, &args);
            self.reap_into(&mut spare);
        }
        if self.in_flight > 0 {
            // A count only, no outside text: nothing to escape.
            eprintln!(
                "iolab: {} I/Os still in flight at exit; keeping their buffers allocated",
                self.in_flight
            );
            std::mem::forget(self.buffers.take());
            return;
        }
        // The ring's teardown runs in a kernel worker after close, so files still registered with it are
        // released late, after this process may have exited: a device opened O_EXCL would stay claimed and
        // the next run on it would be refused as busy. Unregistering waits for the kernel to let them go
        // now; the engine's own descriptors then close with it.
        if self.fixed_files {
            let _ = self.ring.submitter().unregister_files();
        }
    }
}
