//! S3-FIFO: a small, a main and a ghost FIFO.

use super::nodes::{Core, NIL};
use super::{resident_in_core, Policy};

/// S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP 2023). New keys enter a
/// small FIFO (10% of the capacity); a key leaving it moves to the main FIFO if it was hit enough meanwhile,
/// else it is evicted and remembered in a ghost FIFO (as many keys as the main FIFO holds); a key inserted
/// while in the ghost FIFO goes straight to main. One-hit wonders thus leave quickly through the small FIFO.
///
/// Two variants. [`S3Fifo::new`] is the paper's, as libCacheSim implements it: a 2-bit frequency per key
/// (hits counted up to 3), two hits move a key from the small FIFO to the main one, the main FIFO reinserts a
/// key with frequency `f > 0` at `min(f, 3) - 1` and evicts one at 0, the main FIFO is evicted from when it is
/// over its share (or the small one is empty), and before the first eviction keys go to main once the small
/// FIFO is full. [`S3Fifo::one_bit`] is the 1-bit variant its author recommends for block I/O: one hit moves a
/// key to main, whose reinsertion clears the bit like a clock.
#[derive(Debug)]
pub struct S3Fifo {
    core: Core,
    cap: usize,
    max: usize,
    small_cap: usize,
    main_cap: usize,
    /// The 1-bit variant (the frequency is the core's bit); else the paper's (2-bit counts in `freq`).
    one_bit: bool,
    /// The paper's frequency per node (0..=3).
    freq: Vec<u8>,
    /// A key has been evicted (the paper's variant inserts into main while the small FIFO is full before).
    evicted: bool,
}

const SMALL: u32 = 0;
const MAIN: u32 = 1;
const GHOST: u32 = 2;

fn s3_split(cap: usize) -> (usize, usize) {
    if cap == 0 {
        return (0, 0);
    }
    let small = (cap / 10).max(1);
    (small, cap - small)
}

impl S3Fifo {
    /// The paper's S3-FIFO of `capacity` keys (plus a ghost FIFO the size of the main FIFO).
    pub fn new(capacity: usize) -> S3Fifo {
        S3Fifo::build(capacity, false)
    }

    /// The 1-bit S3-FIFO of `capacity` keys.
    pub fn one_bit(capacity: usize) -> S3Fifo {
        S3Fifo::build(capacity, true)
    }

    fn build(capacity: usize, one_bit: bool) -> S3Fifo {
        let (small_cap, main_cap) = s3_split(capacity);
        let nodes = capacity + main_cap + 1;
        let freq = if one_bit { Vec::new() } else { Vec::with_capacity(nodes) };
        S3Fifo {
            core: Core::new(nodes),
            cap: capacity,
            max: capacity,
            small_cap,
            main_cap,
            one_bit,
            freq,
            evicted: false,
        }
    }

    /// The paper's frequency of node `n`.
    fn count(&self, n: u32) -> u8 {
        self.freq.get(n as usize).copied().unwrap_or(0)
    }

    /// Sets the paper's frequency of node `n` (the array grows with the nodes, as the core's do).
    fn set_count(&mut self, n: u32, f: u8) {
        let i = n as usize;
        if i >= self.freq.len() {
            self.freq.resize(i + 1, 0);
        }
        self.freq[i] = f;
    }

    /// The paper's eviction: from main when it is over its share or the small FIFO is empty, else from the
    /// small FIFO.
    fn evict_paper(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        self.evicted = true;
        if self.core.len(MAIN) > self.main_cap || self.core.len(SMALL) == 0 {
            self.evict_main_paper(on_evict);
        } else {
            self.evict_small_paper(on_evict);
        }
    }

    fn evict_small_paper(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        loop {
            let t = self.core.tail(SMALL);
            if t == NIL {
                return self.evict_main_paper(on_evict);
            }
            self.core.unlink(t);
            if self.count(t) >= 2 {
                self.set_count(t, 0);
                self.core.push_head(MAIN, t);
            } else {
                on_evict(self.core.key(t), self.core.value(t));
                self.set_count(t, 0);
                return self.remember_ghost(t);
            }
        }
    }

    fn evict_main_paper(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        loop {
            let t = self.core.tail(MAIN);
            if t == NIL {
                return self.evict_small_paper(on_evict);
            }
            let f = self.count(t);
            if f >= 1 {
                self.set_count(t, f.min(3) - 1);
                self.core.unlink(t);
                self.core.push_head(MAIN, t);
            } else {
                let (k, v) = self.core.drop_tail(MAIN);
                return on_evict(k, v);
            }
        }
    }

    /// Keys in the main FIFO now.
    pub fn main_len(&self) -> usize {
        self.core.len(MAIN)
    }

    fn resident(&self) -> usize {
        self.core.len(SMALL) + self.core.len(MAIN)
    }

    /// Remembers node `n` (unlinked, just evicted from the small FIFO) in the ghost FIFO.
    fn remember_ghost(&mut self, n: u32) {
        let ghost_cap = self.main_cap;
        if ghost_cap == 0 {
            self.core.release(n);
            return;
        }
        while self.core.len(GHOST) >= ghost_cap {
            self.core.drop_tail(GHOST);
        }
        self.core.set_freq(n, false);
        self.core.push_head(GHOST, n);
    }

    /// Evicts exactly one resident key.
    fn evict(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        if !self.one_bit {
            return self.evict_paper(on_evict);
        }
        if self.core.len(SMALL) >= self.small_cap || self.core.len(MAIN) == 0 {
            self.evict_small(on_evict);
        } else {
            self.evict_main(on_evict);
        }
    }

    fn evict_small(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        loop {
            let t = self.core.tail(SMALL);
            if t == NIL {
                self.evict_main(on_evict);
                return;
            }
            self.core.unlink(t);
            if self.core.freq(t) {
                self.core.set_freq(t, false);
                self.core.push_head(MAIN, t);
                if self.core.len(MAIN) > self.main_cap {
                    self.evict_main(on_evict);
                    return;
                }
            } else {
                on_evict(self.core.key(t), self.core.value(t));
                self.remember_ghost(t);
                return;
            }
        }
    }

    fn evict_main(&mut self, on_evict: &mut dyn FnMut(u64, u32)) {
        loop {
            let t = self.core.tail(MAIN);
            if t == NIL {
                self.evict_small(on_evict);
                return;
            }
            if self.core.freq(t) {
                self.core.set_freq(t, false);
                self.core.unlink(t);
                self.core.push_head(MAIN, t);
            } else {
                let (k, v) = self.core.drop_tail(MAIN);
                on_evict(k, v);
                return;
            }
        }
    }
}

impl Policy for S3Fifo {
    resident_in_core!(|list: u32| list <= MAIN);
    fn metadata_bytes(&self) -> usize {
        self.core.metadata_bytes() + self.freq.capacity()
    }
    #[inline]
    fn access_value(&mut self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        if self.core.tag(n) > MAIN {
            return None;
        }
        if self.one_bit {
            self.core.set_freq(n, true);
        } else {
            let f = self.count(n);
            self.set_count(n, (f + 1).min(3));
        }
        Some(self.core.value(n))
    }
    fn insert_value(&mut self, key: u64, value: u32, on_evict: &mut dyn FnMut(u64, u32)) {
        if self.cap == 0 {
            on_evict(key, value);
            return;
        }
        while self.resident() >= self.cap {
            self.evict(on_evict);
        }
        match self.core.find(key) {
            Some(n) => {
                debug_assert_eq!(self.core.tag(n), GHOST, "insert of a resident key");
                self.core.unlink(n);
                self.core.set_value(n, value);
                self.core.set_freq(n, false);
                if !self.one_bit {
                    self.set_count(n, 0);
                }
                self.core.push_head(MAIN, n);
            }
            None => {
                let n = self.core.alloc(key, value);
                // The paper's: before the first eviction, once the small FIFO is full, new keys go to main.
                let to_main = !self.one_bit && !self.evicted && self.core.len(SMALL) >= self.small_cap;
                if !self.one_bit {
                    self.set_count(n, 0);
                }
                self.core.push_head(if to_main { MAIN } else { SMALL }, n);
            }
        }
    }
    fn set_capacity_values(&mut self, capacity: usize, on_evict: &mut dyn FnMut(u64, u32)) {
        self.cap = capacity.min(self.max);
        (self.small_cap, self.main_cap) = s3_split(self.cap);
        while self.resident() > self.cap {
            self.evict(on_evict);
        }
        while self.core.len(GHOST) > self.main_cap {
            self.core.drop_tail(GHOST);
        }
    }
}
