//! Sequential stream detection for the bypass cutoff (bcache's `sequential_cutoff`, Open CAS's
//! sequential cutoff): per worker, per target.

/// Tracks one worker's streams; an op continues a stream when it starts where the previous op on the same
/// target ended.
#[derive(Clone, Debug)]
pub struct SeqDetector {
    cutoff_bytes: u64,
}

impl SeqDetector {
    /// A detector for `targets` targets; `cutoff_bytes` 0 never bypasses.
    pub fn new(targets: usize, cutoff_bytes: u64) -> SeqDetector {
        let _ = targets;
        SeqDetector { cutoff_bytes }
    }
    /// Records an op and says whether it should bypass the cache: its stream has run `cutoff_bytes` or more.
    pub fn observe(&mut self, target: u16, offset: u64, len: u32) -> bool {
        let _ = (target, offset, len, self.cutoff_bytes);
        todo!()
    }
}
