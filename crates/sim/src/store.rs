//! What was written to an emulated device, kept sparse in RAM.

/// The data of one emulated device, shared by all workers (`&self` methods; thread-safe). Unwritten ranges
/// read as zeros. Memory grows with the distinct 4 KiB blocks written; past `cap_bytes` new blocks are no
/// longer stored (their reads return zeros) and [`SparseStore::overflowed`] turns true, which the run reports.
pub struct SparseStore {
    size_bytes: u64,
}

impl SparseStore {
    /// An empty store for a device of `size_bytes`, keeping at most `cap_bytes` of written data.
    pub fn new(size_bytes: u64, cap_bytes: u64) -> SparseStore {
        let _ = cap_bytes;
        SparseStore { size_bytes }
    }
    /// Copies `buf.len()` bytes at `offset` into `buf`.
    pub fn read(&self, offset: u64, buf: &mut [u8]) {
        let _ = (offset, buf);
        todo!()
    }
    /// Stores `buf` at `offset`.
    pub fn write(&self, offset: u64, buf: &[u8]) {
        let _ = (offset, buf);
        todo!()
    }
    /// Bytes of data held.
    pub fn stored_bytes(&self) -> u64 {
        todo!()
    }
    /// True once a write was not stored because the cap was reached.
    pub fn overflowed(&self) -> bool {
        todo!()
    }
    /// The device's size.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }
}
