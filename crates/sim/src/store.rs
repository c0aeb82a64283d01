//! What was written to an emulated device, kept sparse in RAM.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

const BLOCK: u64 = 4096;
const SHARDS: usize = 64;

type Block = Box<[u8; BLOCK as usize]>;

/// The data of one emulated device, shared by all workers (`&self` methods; thread-safe). Unwritten ranges
/// read as zeros. Memory grows with the distinct 4 KiB blocks written; past `cap_bytes` new blocks are no
/// longer stored (their reads return zeros) and [`SparseStore::overflowed`] turns true, which the run reports.
///
/// Blocks live in 64 shards (each a mutex around a map from block number to block) chosen by a hash of the
/// block number, so workers writing different blocks rarely contend. A request may be any length and
/// alignment, spanning blocks or covering part of one. Writing zeros to a block never written stores nothing
/// (it reads back as zeros anyway). Ranges past `size_bytes` are a caller bug: debug builds panic, release
/// builds read zeros there and drop those bytes of a write.
pub struct SparseStore {
    size_bytes: u64,
    cap_bytes: u64,
    stored: AtomicU64,
    overflowed: AtomicBool,
    shards: Vec<Mutex<HashMap<u64, Block>>>,
}

fn shard_of(block: u64) -> usize {
    (block.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

impl SparseStore {
    /// An empty store for a device of `size_bytes`, keeping at most `cap_bytes` of written data.
    pub fn new(size_bytes: u64, cap_bytes: u64) -> SparseStore {
        SparseStore {
            size_bytes,
            cap_bytes,
            stored: AtomicU64::new(0),
            overflowed: AtomicBool::new(false),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    fn clip(&self, offset: u64, len: usize) -> usize {
        let end = offset.saturating_add(len as u64);
        debug_assert!(
            end <= self.size_bytes,
            "I/O at {offset}+{len} past the device's {} bytes",
            self.size_bytes
        );
        (self.size_bytes.saturating_sub(offset)).min(len as u64) as usize
    }

    /// Copies `buf.len()` bytes at `offset` into `buf`.
    pub fn read(&self, offset: u64, buf: &mut [u8]) {
        let n = self.clip(offset, buf.len());
        buf[n..].fill(0);
        let mut done = 0usize;
        while done < n {
            let pos = offset + done as u64;
            let block = pos / BLOCK;
            let inside = (pos % BLOCK) as usize;
            let chunk = (BLOCK as usize - inside).min(n - done);
            let dst = &mut buf[done..done + chunk];
            let shard = self.shards[shard_of(block)].lock().unwrap_or_else(|e| e.into_inner());
            match shard.get(&block) {
                Some(b) => dst.copy_from_slice(&b[inside..inside + chunk]),
                None => dst.fill(0),
            }
            done += chunk;
        }
    }

    /// Stores `buf` at `offset`.
    pub fn write(&self, offset: u64, buf: &[u8]) {
        let n = self.clip(offset, buf.len());
        let mut done = 0usize;
        while done < n {
            let pos = offset + done as u64;
            let block = pos / BLOCK;
            let inside = (pos % BLOCK) as usize;
            let chunk = (BLOCK as usize - inside).min(n - done);
            let src = &buf[done..done + chunk];
            let mut shard = self.shards[shard_of(block)].lock().unwrap_or_else(|e| e.into_inner());
            if let Some(b) = shard.get_mut(&block) {
                b[inside..inside + chunk].copy_from_slice(src);
            } else if src.iter().any(|&x| x != 0) {
                if self.reserve() {
                    let mut b: Block = Box::new([0u8; BLOCK as usize]);
                    b[inside..inside + chunk].copy_from_slice(src);
                    shard.insert(block, b);
                } else {
                    self.overflowed.store(true, Ordering::Relaxed);
                }
            }
            done += chunk;
        }
    }

    /// Takes room for one more block, false when the cap is reached.
    fn reserve(&self) -> bool {
        self.stored
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| {
                (s + BLOCK <= self.cap_bytes).then_some(s + BLOCK)
            })
            .is_ok()
    }

    /// Bytes of data held.
    pub fn stored_bytes(&self) -> u64 {
        self.stored.load(Ordering::Relaxed)
    }
    /// True once a write was not stored because the cap was reached.
    pub fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Relaxed)
    }
    /// The device's size.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }
    /// The most data the store keeps.
    pub fn cap_bytes(&self) -> u64 {
        self.cap_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_writes_and_zeros_elsewhere() {
        let s = SparseStore::new(1 << 30, 1 << 20);
        let data: Vec<u8> = (0..12288u32).map(|i| (i % 251) as u8 + 1).collect();
        s.write(4096 * 10 + 512, &data); // spans 4 blocks, unaligned to blocks
        let mut back = vec![0u8; data.len()];
        s.read(4096 * 10 + 512, &mut back);
        assert_eq!(back, data);
        let mut around = vec![0xFFu8; 1024];
        s.read(4096 * 10, &mut around);
        assert!(around[..512].iter().all(|&b| b == 0));
        assert_eq!(&around[512..], &data[..512]);
        let mut far = vec![0xFFu8; 8192];
        s.read(1 << 29, &mut far);
        assert!(far.iter().all(|&b| b == 0));
        assert_eq!(s.stored_bytes(), 4 * 4096);
        // A small write inside a stored block, then a read across it.
        s.write(4096 * 10 + 1024, &[7u8; 512]);
        let mut one = vec![0u8; 512];
        s.read(4096 * 10 + 1024, &mut one);
        assert!(one.iter().all(|&b| b == 7));
        assert!(!s.overflowed());
    }

    #[test]
    fn zeros_cost_nothing_and_the_cap_holds() {
        let s = SparseStore::new(1 << 30, 2 * 4096);
        s.write(0, &[0u8; 65536]);
        assert_eq!(s.stored_bytes(), 0);
        s.write(0, &[1u8; 4096 * 3]);
        assert_eq!(s.stored_bytes(), 2 * 4096);
        assert!(s.overflowed());
        let mut b = vec![0u8; 4096 * 3];
        s.read(0, &mut b);
        assert!(b[..8192].iter().all(|&x| x == 1));
        assert!(b[8192..].iter().all(|&x| x == 0), "past the cap reads zeros");
        // Blocks already stored still take new data.
        s.write(0, &[2u8; 512]);
        s.read(0, &mut b[..512]);
        assert!(b[..512].iter().all(|&x| x == 2));
    }

    #[test]
    fn threads_share_one_store() {
        let s = std::sync::Arc::new(SparseStore::new(1 << 30, 1 << 30));
        let hs: Vec<_> = (0..8u8)
            .map(|t| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for i in 0..100u64 {
                        s.write((t as u64 * 1000 + i) * 4096, &[t + 1; 4096]);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let mut b = [0u8; 4096];
        for t in 0..8u8 {
            s.read((t as u64 * 1000 + 99) * 4096, &mut b);
            assert!(b.iter().all(|&x| x == t + 1));
        }
        assert_eq!(s.stored_bytes(), 800 * 4096);
    }
}
