//! What a curve keeps besides its distances: the references for policy simulations (with which of them were
//! writes installing lines) and how the counted requests sit on cache lines.

/// References kept for [`super::simulate`], in trace order: each key, and whether it was counted (a read, or
/// a write that counts) or a write installing its line ([`super::Writes::Install`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct References {
    keys: Vec<u64>,
    /// One bit a reference, set for an installing write.
    installs: Vec<u64>,
    counted: u64,
}

impl References {
    /// References from keys that are all counted.
    pub fn counted(keys: Vec<u64>) -> References {
        let counted = keys.len() as u64;
        References { installs: vec![0; keys.len().div_ceil(64)], keys, counted }
    }

    /// Makes room for `more` references, or says the memory could not be had.
    pub fn try_reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.keys.try_reserve(more)?;
        self.installs.try_reserve(more.div_ceil(64) + 1)
    }

    /// Appends a reference.
    #[inline]
    pub fn push(&mut self, key: u64, counted: bool) {
        let i = self.keys.len();
        if i % 64 == 0 {
            self.installs.push(0);
        }
        self.installs[i / 64] |= u64::from(!counted) << (i % 64);
        self.counted += u64::from(counted);
        self.keys.push(key);
    }

    /// Keeps the references whose key `keep` accepts, in order.
    pub fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        let old = std::mem::take(self);
        for (key, counted) in old.iter() {
            if keep(key) {
                self.push(key, counted);
            }
        }
    }

    /// Each reference's key and whether it is counted.
    pub fn iter(&self) -> impl Iterator<Item = (u64, bool)> + '_ {
        self.keys.iter().enumerate().map(|(i, &k)| (k, self.installs[i / 64] >> (i % 64) & 1 == 0))
    }

    /// References kept.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether none are kept.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Counted references kept (the miss ratio's denominator).
    pub fn counted_len(&self) -> u64 {
        self.counted
    }
}

/// Where counted requests start and end within cache lines. A cache fills only whole lines (iolab's does:
/// a line read or written in part is not installed), so a trace whose requests straddle lines misses more in
/// such a cache than its curve, which counts every line touched, says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Alignment {
    requests: u64,
    partial: u64,
    /// Requests by start offset within their line, in steps of [`Alignment::step`].
    starts: Vec<u64>,
    step: u64,
}

/// Start offsets within a line are counted in at most this many steps.
const STEPS: u64 = 4096;

impl Alignment {
    /// One counted request on lines of `line` bytes whose start lies `head` bytes into its first line and
    /// whose end `tail` bytes into its last (0: on a line's edge).
    #[inline]
    pub fn add(&mut self, head: u64, tail: u64, line: u64) {
        self.requests += 1;
        if head == 0 && tail == 0 {
            return;
        }
        self.partial += 1;
        if self.starts.is_empty() {
            self.step = (line / STEPS).max(512);
            self.starts = vec![0; line.div_ceil(self.step) as usize];
        }
        self.starts[(head / self.step) as usize] += 1;
    }

    /// Counted requests on lines.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Requests that cover part of their first or last line.
    pub fn partial(&self) -> u64 {
        self.partial
    }

    /// Among partial requests, the most common start offset within a line other than 0 (rounded down to
    /// 512 bytes, or to 1/4096 of a line) and how many requests start there.
    pub fn common_start(&self) -> Option<(u64, u64)> {
        let (i, &n) =
            self.starts.iter().enumerate().skip(1).max_by_key(|&(i, &n)| (n, std::cmp::Reverse(i)))?;
        (n > 0).then_some((i as u64 * self.step, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_keep_their_flags_through_retain() {
        let mut r = References::default();
        for k in 0..200u64 {
            r.push(k, k % 3 != 0);
        }
        r.retain(|k| k % 2 == 0);
        assert_eq!(r.len(), 100);
        assert!(r.iter().all(|(k, counted)| k % 2 == 0 && counted == (k % 3 != 0)));
        assert_eq!(r.counted_len(), r.iter().filter(|&(_, c)| c).count() as u64);
    }

    #[test]
    fn alignment_finds_the_common_start() {
        let mut a = Alignment::default();
        // Each request as (where it starts in its first line, where it ends in its last).
        for _ in 0..10 {
            a.add(3584, 3584, 4096);
        }
        a.add(0, 0, 4096);
        a.add(512, 1024, 4096);
        assert_eq!((a.requests(), a.partial()), (12, 11));
        assert_eq!(a.common_start(), Some((3584, 10)));
    }
}
