//! Helpers shared by the engine test binaries: temporary target files with a known content, opened with
//! O_DIRECT where the file system allows it.

// Each test binary uses its own subset of these helpers.
#![allow(dead_code)]

use iolab_engine::buffers::Buffers;
use iolab_spec::DataPattern;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::Arc;

/// The byte at `offset` of a fresh temp file: not periodic in 4 KiB (251 is prime), so a read from the wrong
/// block, or a block written from the wrong buffer, shows.
pub fn initial_byte(offset: u64) -> u8 {
    (offset % 251) as u8 ^ (offset >> 12) as u8
}

/// A temp file in `std::env::temp_dir()` filled with [`initial_byte`], removed on drop.
pub struct TempTarget {
    /// Keeps the file alive (and removes it on drop); its own descriptor is buffered, used to look at the
    /// content independently of the engine under test.
    pub tmp: tempfile::NamedTempFile,
    /// The descriptor handed to engines: O_DIRECT when `direct`.
    pub file: Arc<File>,
    /// `file` has O_DIRECT.
    pub direct: bool,
    /// Why O_DIRECT is not in use, when it is not.
    pub direct_error: Option<String>,
    /// Size in bytes.
    pub size: u64,
}

impl TempTarget {
    /// A `size`-byte temp file opened read-write, with O_DIRECT when the temp dir's file system supports it.
    pub fn new(size: u64) -> TempTarget {
        let dir = std::env::temp_dir();
        let tmp = tempfile::NamedTempFile::new_in(&dir).expect("create a temp file");
        let data: Vec<u8> = (0..size).map(initial_byte).collect();
        tmp.as_file().write_all_at(&data, 0).expect("fill the temp file");
        tmp.as_file().sync_all().expect("sync the temp file");
        let direct =
            OpenOptions::new().read(true).write(true).custom_flags(libc::O_DIRECT).open(tmp.path()).and_then(
                |f| {
                    // Some file systems accept the flag at open and refuse the I/O: test one aligned read.
                    let mut b = Buffers::new(1, 4096, DataPattern::Zero, 1);
                    f.read_at(b.get_mut(0), 0)?;
                    Ok(f)
                },
            );
        let (file, direct_error) = match direct {
            Ok(f) => (f, None),
            Err(e) => {
                println!("note: O_DIRECT unavailable in {}: {e}; using a buffered file", dir.display());
                let f =
                    OpenOptions::new().read(true).write(true).open(tmp.path()).expect("reopen the temp file");
                (f, Some(e.to_string()))
            }
        };
        TempTarget { tmp, file: Arc::new(file), direct: direct_error.is_none(), direct_error, size }
    }

    /// Reads `buf.len()` bytes at `offset` through the buffered descriptor (sees O_DIRECT writes: the kernel
    /// invalidates cached pages a direct write covers).
    pub fn peek(&self, offset: u64, buf: &mut [u8]) {
        self.tmp.as_file().read_exact_at(buf, offset).expect("read back the temp file");
    }

    /// How many bytes differ from the initial content.
    pub fn changed_bytes(&self) -> u64 {
        let mut data = vec![0u8; self.size as usize];
        self.peek(0, &mut data);
        data.iter().enumerate().filter(|(i, b)| **b != initial_byte(*i as u64)).count() as u64
    }
}

/// `Engine::push` for the tests, which read an op's buffer only after its completion came back and push no
/// two ops on one buffer at once (the contract of `Engine::push`).
pub trait PushNow {
    /// Pushes `op`.
    fn push_now(&mut self, op: iolab_engine::Op);
}

impl<E: iolab_engine::Engine + ?Sized> PushNow for E {
    fn push_now(&mut self, op: iolab_engine::Op) {
        // SAFETY: see the trait: the tests keep the buffer contract.
        unsafe { self.push(op) }
    }
}
