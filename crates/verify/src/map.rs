//! The generation map: one `AtomicU64` per verification block (8 bytes per block), shared by all workers and
//! updated with one compare-and-swap loop per block at the push and at the completion of a write, and one load
//! per block at the push and at the completion of a read. No lock, no allocation.
//!
//! A block's state word:
//!
//! ```text
//! bits  0..32  issued: the generation of the last write issued to the block (0: never written)
//! bits 32..55  in flight: writes to the block pushed and not yet completed (at most 2^23 - 1)
//! bits 55..63  delta: in a racy block, issued - floor, where floor is the oldest generation whose data may
//!              still be in the block; 255 = floor unknown
//! bit  63      racy: the block's contents are undefined (overlapping writes, or a failed write) since the
//!              last write that was issued alone and succeeded
//! ```
//!
//! The invariant that makes checks exact: a block that is **not racy** has at most one write in flight, and
//! with none in flight it holds exactly generation `issued` (or was never written, `issued` = 0). Proof by the
//! transitions below: a write pushed while another is in flight makes the block racy; a racy block becomes
//! clean only when a write that was pushed with nothing in flight (it alone) completes successfully with no
//! other write pushed during its life (`issued` still its generation). Such a write covered the whole block
//! (ops are whole blocks), every earlier write had completed before it was pushed, and no later one exists:
//! the block holds exactly its bytes.
//!
//! The floor: when a block turns racy, the data that may remain is that of the write in flight or the clean
//! generation before it (overlap: issued - 1; a failed write: its own generation - 1, since it may have left
//! old data). While racy, every write either overwrote every byte or failed, and neither brings back data
//! older than what it found, so the floor stays. 8 bits of delta count up to 254 further writes; past that the
//! floor is unknown (only weakens the lost-write check, never raises an alarm).
//!
//! Generations stop at `u32::MAX` (4.29 billion writes to one block in one run): from then on the block stays
//! racy with an unknown floor, and is only checked for misdirected data.

/// Bits of the in-flight count.
const INFLIGHT_BITS: u32 = 23;
const INFLIGHT_SHIFT: u32 = 32;
const INFLIGHT_MASK: u64 = ((1 << INFLIGHT_BITS) - 1) << INFLIGHT_SHIFT;
const DELTA_SHIFT: u32 = 55;
const DELTA_MASK: u64 = 0xFF << DELTA_SHIFT;
/// Delta value meaning "floor unknown".
pub const DELTA_UNKNOWN: u32 = 255;
const RACY: u64 = 1 << 63;

/// A decoded state word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct State {
    /// Generation of the last write issued.
    pub issued: u32,
    /// Writes in flight.
    pub in_flight: u32,
    /// issued - floor while racy ([`DELTA_UNKNOWN`]: unknown).
    pub delta: u32,
    /// Contents undefined.
    pub racy: bool,
}

impl State {
    /// Decodes a word.
    pub fn from_word(w: u64) -> State {
        State {
            issued: w as u32,
            in_flight: ((w & INFLIGHT_MASK) >> INFLIGHT_SHIFT) as u32,
            delta: ((w & DELTA_MASK) >> DELTA_SHIFT) as u32,
            racy: w & RACY != 0,
        }
    }
    /// Encodes it.
    pub fn word(self) -> u64 {
        debug_assert!(self.in_flight < 1 << INFLIGHT_BITS && self.delta <= DELTA_UNKNOWN);
        self.issued as u64
            | (self.in_flight as u64) << INFLIGHT_SHIFT
            | (self.delta as u64) << DELTA_SHIFT
            | if self.racy { RACY } else { 0 }
    }
    /// The oldest generation whose data may be in a racy block (None: unknown).
    pub fn floor(self) -> Option<u32> {
        (self.delta != DELTA_UNKNOWN).then(|| self.issued - self.delta)
    }
}

/// The state after a write is pushed; the write's generation is the new `issued`.
///
/// # Panics
/// When 2^23 - 1 writes to one block are in flight (more than a plan allows: 1,024 workers x qd 4,096).
pub fn push_write(s: State) -> State {
    assert!(
        s.in_flight < (1 << INFLIGHT_BITS) - 1,
        "more writes in flight to one block than any plan allows (bug)"
    );
    let mut n = s;
    n.in_flight += 1;
    if s.issued == u32::MAX {
        // Generations are exhausted: this write cannot be told apart from the previous one.
        n.racy = true;
        n.delta = DELTA_UNKNOWN;
        return n;
    }
    n.issued = s.issued + 1;
    if s.racy {
        // Floor unchanged, one more write since it.
        n.delta = if s.delta >= DELTA_UNKNOWN - 1 { DELTA_UNKNOWN } else { s.delta + 1 };
    } else if s.in_flight > 0 {
        // Overlap: a clean block has at most one write in flight, generation s.issued, pushed alone over the
        // clean generation s.issued - 1. Either may remain (in part) after both complete.
        n.racy = true;
        n.delta = 2;
    }
    n
}

/// A write's generation and whether it was pushed alone, from the state its push produced.
pub fn ticket_of(after_push: State) -> (u32, bool) {
    (after_push.issued, after_push.in_flight == 1)
}

/// The state after a write completes. `after_push` is the state its push produced; `ok` says that the whole
/// block was written (the completion covers it and is not an error).
pub fn complete_write(s: State, after_push: State, ok: bool) -> State {
    assert!(s.in_flight > 0, "a write completed on a block with none in flight (bug)");
    let (generation, alone) = ticket_of(after_push);
    let mut n = s;
    n.in_flight -= 1;
    if ok && alone && s.issued == generation && generation != u32::MAX {
        // Pushed with nothing in flight, nothing pushed since, and it wrote the whole block: the block is
        // exactly this generation (see the module docs). Generation u32::MAX is never trusted: once generations
        // are exhausted, pushes no longer change `issued`.
        debug_assert_eq!(n.in_flight, 0);
        n.racy = false;
        n.delta = 0;
    } else if !ok && !s.racy {
        // A failed write on a clean block: it was alone (clean means at most one in flight) and nothing was
        // pushed since, so s.issued == generation; the block may hold it, the clean generation before it, or
        // a mix.
        n.racy = true;
        n.delta = (s.issued - (generation - 1)).min(DELTA_UNKNOWN);
    }
    // Otherwise the block is already racy (an overlap or failure made it so) and its floor stands.
    n
}

/// What a read may be checked against: `Some(racy-or-exact state)` when no write was in flight when the read
/// was pushed and none was pushed until it completed (`at_push` == `at_completion`, none in flight); None when
/// the read overlapped a write to the block and may have seen any part of it.
pub fn read_window(at_push: State, at_completion: State) -> Option<State> {
    (at_push == at_completion && at_push.in_flight == 0).then_some(at_push)
}

/// What a journal records for a block in state `s`: the oldest generation whose data may be there now or at any
/// later time (later writes are newer), and whether the block was quiescent and clean (exactly that generation).
pub fn journal_entry(s: State) -> (u32, bool) {
    if !s.racy {
        match s.in_flight {
            0 => (s.issued, true),
            // The write in flight was pushed alone over the clean generation before it.
            _ => (s.issued - 1, false),
        }
    } else {
        (s.floor().unwrap_or(0), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_round_trips() {
        let s = State { issued: u32::MAX, in_flight: (1 << 23) - 1, delta: 255, racy: true };
        assert_eq!(State::from_word(s.word()), s);
        assert_eq!(State::from_word(0), State::default());
    }

    #[test]
    fn alone_write_cleans_and_overlap_makes_racy() {
        let s0 = State::default();
        let a = push_write(s0);
        assert_eq!((a.issued, a.in_flight, a.racy), (1, 1, false));
        let b = push_write(a);
        assert_eq!((b.issued, b.in_flight, b.racy, b.floor()), (2, 2, true, Some(0)));
        let c = complete_write(b, a, true);
        let d = complete_write(c, b, true);
        assert_eq!((d.in_flight, d.racy, d.floor()), (0, true, Some(0)));
        let e = push_write(d);
        let f = complete_write(e, e, true);
        assert_eq!(f, State { issued: 3, in_flight: 0, delta: 0, racy: false });
    }

    #[test]
    fn failed_write_makes_racy_with_floor_before_it() {
        let a = complete_write(push_write(State::default()), push_write(State::default()), true);
        let p = push_write(a);
        let f = complete_write(p, p, false);
        assert_eq!((f.issued, f.racy, f.floor()), (2, true, Some(1)));
        assert_eq!(journal_entry(f), (1, false));
    }

    #[test]
    fn generations_saturate_into_unknown() {
        let s = State { issued: u32::MAX, ..State::default() };
        let p = push_write(s);
        assert_eq!((p.issued, p.racy, p.floor()), (u32::MAX, true, None));
        let c = complete_write(p, p, true);
        assert!(c.racy, "an exhausted block never becomes exact again");
    }
}
