//! What the end of a measurement window left out: the I/Os still in flight when it closed. They complete
//! after the end, so no figure of the window holds them; a stall at the end would otherwise vanish from the
//! result (a frozen file system, a controller reset: the window's max stays small while the run overruns by
//! the stall). [`InFlightAtEnd`] counts them, and [`InFlightAtEnd::late`] says when the window did not end
//! on time.

/// The window ended late when the I/Os in flight at its end took longer than this after it to complete...
pub const LATE_END_NS: u64 = 1_000_000_000;

/// ...and the longest of them took more than this many times the longest I/O the window recorded: a queue
/// of ordinary I/Os draining (a deep queue on a disk) is not a stall.
pub const LATE_END_RATIO: u64 = 2;

/// The I/Os in flight when a window closed (at its end or at a stop request), each counted when it
/// completed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InFlightAtEnd {
    /// How many there were.
    pub ops: u64,
    /// The longest of them, from its intended start to its completion; 0 when there were none.
    pub longest_ns: u64,
    /// From the window's end to the completion of the last of them; 0 when there were none.
    pub drained_ns: u64,
}

impl InFlightAtEnd {
    /// Counts one I/O that completed `after_end_ns` past the end, `latency_ns` after its intended start.
    #[inline]
    pub fn add(&mut self, latency_ns: u64, after_end_ns: u64) {
        self.ops += 1;
        self.longest_ns = self.longest_ns.max(latency_ns);
        self.drained_ns = self.drained_ns.max(after_end_ns);
    }

    /// Adds another worker's (or rank's) count.
    pub fn merge(&mut self, other: &InFlightAtEnd) {
        self.ops += other.ops;
        self.longest_ns = self.longest_ns.max(other.longest_ns);
        self.drained_ns = self.drained_ns.max(other.drained_ns);
    }

    /// Whether the window did not end on time: its last I/Os completed more than [`LATE_END_NS`] after
    /// the end, and the longest of them took more than [`LATE_END_RATIO`] times `max_recorded_ns` (the
    /// longest I/O in the window's figures; `None` when it recorded none).
    pub fn late(&self, max_recorded_ns: Option<u64>) -> bool {
        let beyond = max_recorded_ns.is_none_or(|m| self.longest_ns > m.saturating_mul(LATE_END_RATIO));
        self.ops > 0 && self.drained_ns > LATE_END_NS && beyond
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drain_past_a_second_beyond_the_recorded_max_is_late_and_an_ordinary_one_is_not() {
        let mut stall = InFlightAtEnd::default();
        stall.add(8_000_000_000, 7_900_000_000);
        stall.add(1_000_000, 0);
        assert_eq!((stall.ops, stall.longest_ns, stall.drained_ns), (2, 8_000_000_000, 7_900_000_000));
        assert!(stall.late(Some(17_000_000)));
        assert!(stall.late(None));
        // A deep queue on a disk draining for 2 s, no I/O longer than the window's own.
        let mut queue = InFlightAtEnd::default();
        queue.add(2_100_000_000, 2_000_000_000);
        assert!(!queue.late(Some(2_200_000_000)));
        // Quick drains are never late.
        let mut quick = InFlightAtEnd::default();
        quick.add(900_000_000, 900_000_000);
        assert!(!quick.late(Some(1_000)));
        assert!(!InFlightAtEnd::default().late(None));
    }

    #[test]
    fn merging_adds_counts_and_keeps_the_longest() {
        let mut a = InFlightAtEnd { ops: 3, longest_ns: 5, drained_ns: 9 };
        a.merge(&InFlightAtEnd { ops: 2, longest_ns: 7, drained_ns: 4 });
        assert_eq!(a, InFlightAtEnd { ops: 5, longest_ns: 7, drained_ns: 9 });
    }
}
