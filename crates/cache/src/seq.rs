//! Sequential stream detection for the bypass cutoff (bcache's `sequential_cutoff`, Open CAS's
//! sequential cutoff): per worker, per target.

/// Streams remembered per target (bcache tracks several recent streams the same way).
const STREAMS: usize = 4;

#[derive(Clone, Copy, Debug, Default)]
struct Stream {
    /// Where the stream's next op would start.
    next: u64,
    /// Bytes the stream has run so far.
    run: u64,
    /// Last use, for replacement.
    used: u64,
}

/// Tracks one worker's streams; an op continues a stream when it starts where a previous op on the same
/// target ended. Up to 4 streams per target are followed at once (the least recently used one is replaced by
/// an op that continues none), so interleaved sequential readers on one target are each recognized.
#[derive(Clone, Debug)]
pub struct SeqDetector {
    cutoff_bytes: u64,
    streams: Vec<[Stream; STREAMS]>,
    clock: u64,
}

impl SeqDetector {
    /// A detector for `targets` targets; `cutoff_bytes` 0 never bypasses.
    pub fn new(targets: usize, cutoff_bytes: u64) -> SeqDetector {
        let streams =
            if cutoff_bytes == 0 { Vec::new() } else { vec![[Stream::default(); STREAMS]; targets] };
        SeqDetector { cutoff_bytes, streams, clock: 0 }
    }

    /// Records an op and says whether it should bypass the cache: its stream has run `cutoff_bytes` or more
    /// (this op included).
    pub fn observe(&mut self, target: u16, offset: u64, len: u32) -> bool {
        if self.cutoff_bytes == 0 {
            return false;
        }
        let t = target as usize;
        if t >= self.streams.len() {
            self.streams.resize(t + 1, [Stream::default(); STREAMS]);
        }
        self.clock += 1;
        let clock = self.clock;
        let streams = &mut self.streams[t];
        let end = offset + len as u64;
        if let Some(s) = streams.iter_mut().find(|s| s.used != 0 && s.next == offset) {
            s.next = end;
            s.run += len as u64;
            s.used = clock;
            return s.run >= self.cutoff_bytes;
        }
        let lru = streams.iter_mut().min_by_key(|s| s.used).expect("streams");
        *lru = Stream { next: end, run: len as u64, used: clock };
        lru.run >= self.cutoff_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_bypasses_once_it_has_run_the_cutoff() {
        let mut d = SeqDetector::new(2, 16384);
        assert!(!d.observe(0, 0, 4096));
        assert!(!d.observe(0, 4096, 4096));
        assert!(!d.observe(0, 8192, 4096));
        assert!(d.observe(0, 12288, 4096));
        assert!(d.observe(0, 16384, 4096));
        // Another target has its own streams.
        assert!(!d.observe(1, 20480, 4096));
        // A jump starts over.
        assert!(!d.observe(0, 1 << 20, 4096));
    }

    #[test]
    fn interleaved_streams_are_followed_separately() {
        let mut d = SeqDetector::new(1, 12288);
        let mut bypassed = 0;
        for i in 0..10u64 {
            for base in [0u64, 1 << 30, 2 << 30] {
                bypassed += d.observe(0, base + i * 4096, 4096) as u32;
            }
        }
        assert_eq!(bypassed, 3 * 8);
    }

    #[test]
    fn cutoff_zero_never_bypasses() {
        let mut d = SeqDetector::new(1, 0);
        for i in 0..100u64 {
            assert!(!d.observe(0, i * 4096, 4096));
        }
    }
}
