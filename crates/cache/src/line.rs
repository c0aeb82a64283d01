//! A line's key and its slot's state word.

/// Slot state bits: dirty, being written back, and a 30-bit dirty generation.
pub(crate) const DIRTY: u32 = 1 << 31;
pub(crate) const WRITING_BACK: u32 = 1 << 30;
pub(crate) const GENERATION: u32 = WRITING_BACK - 1;
/// No slot: the end of a free list, or the slot of an unused entry.
pub(crate) const NO_SLOT: u32 = u32::MAX;
/// A line key is `target << 48 | line`.
pub(crate) const LINE_BITS: u32 = 48;
pub(crate) const LINE_MASK: u64 = (1 << LINE_BITS) - 1;

#[inline]
pub(crate) fn key_of(target: u16, line: u64) -> u64 {
    ((target as u64) << LINE_BITS) | (line & LINE_MASK)
}
