//! `verify_backlog` (fio's option of that name): after every `every` writes the worker issues nothing new until
//! its ops in flight have completed, then reads back `batch` of those writes, oldest first (all of them by
//! default; more than `every` reads some twice, as fio's `verify_backlog_batch` does), and goes on once every
//! read-back has completed. The reads go through the engine stack like any read, so `--verify`'s layer checks
//! each block against what was written there; they are counted as reads, not against the run's limits.

use iolab_plan::gen::{GenOp, OpKind};
use std::collections::VecDeque;

/// Where a worker is between read-backs.
pub(crate) struct Backlog {
    every: u32,
    batch: u32,
    /// Writes issued since the last read-back, oldest first.
    written: VecDeque<GenOp>,
    /// Reads of the read-back not yet issued.
    to_read: VecDeque<GenOp>,
    /// Reads of the read-back in flight.
    reading: u32,
    /// `every` writes were issued: draining, then reading back; nothing else is issued.
    pub(crate) due: bool,
}

impl Backlog {
    /// A read-back of `batch` writes after every `every` writes.
    pub(crate) fn new((every, batch): (u32, u32)) -> Backlog {
        let every = every.max(1);
        Backlog {
            every,
            batch: batch.max(1),
            written: VecDeque::with_capacity(every as usize),
            to_read: VecDeque::with_capacity(batch.max(1) as usize),
            reading: 0,
            due: false,
        }
    }

    /// Counts a write; true when a read-back is now due.
    #[inline]
    pub(crate) fn wrote(&mut self, op: GenOp) -> bool {
        self.written.push_back(op);
        if self.written.len() >= self.every as usize {
            self.due = true;
        }
        self.due
    }

    /// The next read of a due read-back, once nothing else is in flight (`drained`): the first call of a
    /// read-back takes its reads from the writes; `None` when none is to be issued now.
    pub(crate) fn next_read(&mut self, drained: bool) -> Option<GenOp> {
        if !self.due {
            return None;
        }
        if self.reading == 0 && self.to_read.is_empty() {
            if !drained {
                return None;
            }
            if self.written.is_empty() {
                self.due = false;
                return None;
            }
            let writes: Vec<GenOp> = self.written.drain(..).collect();
            self.to_read.extend(
                writes.iter().cycle().take(self.batch as usize).map(|w| GenOp { kind: OpKind::Read, ..*w }),
            );
        }
        let op = self.to_read.pop_front()?;
        self.reading += 1;
        Some(op)
    }

    /// An op completed while a read-back was in flight (every op in flight then is one of its reads).
    #[inline]
    pub(crate) fn completed(&mut self) {
        if self.reading > 0 {
            self.reading -= 1;
            if self.reading == 0 && self.to_read.is_empty() {
                self.due = false;
            }
        }
    }

    /// Reads of the read-back in flight.
    #[inline]
    pub(crate) fn reading(&self) -> bool {
        self.reading > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(block: u64) -> GenOp {
        GenOp { target: 0, kind: OpKind::Write, offset: block * 4096, len: 4096 }
    }

    #[test]
    fn every_n_writes_are_read_back_once_drained() {
        let mut b = Backlog::new((3, 3));
        assert!(!b.wrote(write(5)) && !b.wrote(write(9)));
        assert!(b.wrote(write(2)));
        assert_eq!(b.next_read(false), None, "not before the writes in flight completed");
        let reads: Vec<u64> = std::iter::from_fn(|| b.next_read(true)).map(|r| r.offset / 4096).collect();
        assert_eq!(reads, [5, 9, 2]);
        assert!(b.due && b.reading());
        (0..3).for_each(|_| b.completed());
        assert!(!b.due && !b.reading());
    }

    #[test]
    fn a_batch_larger_than_the_backlog_reads_some_twice_and_a_smaller_one_some_not() {
        let mut b = Backlog::new((2, 3));
        b.wrote(write(1));
        b.wrote(write(2));
        let reads: Vec<u64> = std::iter::from_fn(|| b.next_read(true)).map(|r| r.offset / 4096).collect();
        assert_eq!(reads, [1, 2, 1]);
        let mut b = Backlog::new((3, 1));
        (1..=3).for_each(|i| _ = b.wrote(write(i)));
        let reads: Vec<u64> = std::iter::from_fn(|| b.next_read(true)).map(|r| r.offset / 4096).collect();
        assert_eq!(reads, [1]);
    }
}
