//! ARC: the Adaptive Replacement Cache.

use super::nodes::Core;
use super::{resident_in_core, Policy};

/// Adaptive Replacement Cache (Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache",
/// FAST 2003): T1 (seen once recently) and T2 (seen at least twice) hold the resident keys, ghost lists B1 and
/// B2 remember keys evicted from each, and the target size `p` of T1 moves toward whichever ghost list gets
/// hits. A one-pass scan only churns T1, so a hot set in T2 survives it. (Named in full, not `Arc`, so it is
/// never mistaken for `std::sync::Arc`; the user-facing policy name stays `arc`.)
#[derive(Debug)]
pub struct AdaptiveReplacement {
    core: Core,
    cap: usize,
    max: usize,
    p: usize,
}

const T1: u32 = 0;
const T2: u32 = 1;
const B1: u32 = 2;
const B2: u32 = 3;

impl AdaptiveReplacement {
    /// An ARC of `capacity` keys (plus up to `capacity` ghost keys).
    pub fn new(capacity: usize) -> AdaptiveReplacement {
        AdaptiveReplacement { core: Core::new(2 * capacity + 1), cap: capacity, max: capacity, p: 0 }
    }

    /// The current target size of T1 (the adaptation parameter `p`).
    pub fn target_t1(&self) -> usize {
        self.p
    }

    fn resident(&self) -> usize {
        self.core.len(T1) + self.core.len(T2)
    }

    /// The paper's REPLACE: demotes the LRU of T1 or of T2 to its ghost list.
    fn replace(&mut self, in_b2: bool, on_evict: &mut dyn FnMut(u64, u32)) {
        let t1 = self.core.len(T1);
        let (k, v) = if t1 >= 1 && ((in_b2 && t1 == self.p) || t1 > self.p) || self.core.len(T2) == 0 {
            self.core.demote_tail(T1, B1)
        } else {
            self.core.demote_tail(T2, B2)
        };
        on_evict(k, v);
    }

    fn trim_ghosts(&mut self) {
        while self.core.len(T1) + self.core.len(B1) > self.cap && self.core.len(B1) > 0 {
            self.core.drop_tail(B1);
        }
        while self.resident() + self.core.len(B1) + self.core.len(B2) > 2 * self.cap {
            let l = if self.core.len(B2) > 0 { B2 } else { B1 };
            if self.core.len(l) == 0 {
                break;
            }
            self.core.drop_tail(l);
        }
    }
}

impl Policy for AdaptiveReplacement {
    resident_in_core!(|list: u32| list <= T2);
    fn metadata_bytes(&self) -> usize {
        self.core.metadata_bytes()
    }
    #[inline]
    fn access_value(&mut self, key: u64) -> Option<u32> {
        let n = self.core.find(key)?;
        if self.core.tag(n) > T2 {
            return None;
        }
        self.core.move_to_head(T2, n);
        Some(self.core.value(n))
    }
    fn insert_value(&mut self, key: u64, value: u32, on_evict: &mut dyn FnMut(u64, u32)) {
        let c = self.cap;
        if c == 0 {
            on_evict(key, value);
            return;
        }
        match self.core.find(key) {
            Some(n) if self.core.tag(n) == B1 => {
                let delta = (self.core.len(B2) / self.core.len(B1)).max(1);
                self.p = (self.p + delta).min(c);
                if self.resident() >= c {
                    self.replace(false, on_evict);
                }
                self.core.unlink(n);
                self.core.set_value(n, value);
                self.core.push_head(T2, n);
            }
            Some(n) if self.core.tag(n) == B2 => {
                let delta = (self.core.len(B1) / self.core.len(B2)).max(1);
                self.p = self.p.saturating_sub(delta);
                if self.resident() >= c {
                    self.replace(true, on_evict);
                }
                self.core.unlink(n);
                self.core.set_value(n, value);
                self.core.push_head(T2, n);
            }
            Some(n) => {
                debug_assert!(false, "insert of a resident key");
                self.core.set_value(n, value);
                self.core.move_to_head(T2, n);
            }
            None => {
                let (t1, b1) = (self.core.len(T1), self.core.len(B1));
                if t1 + b1 >= c {
                    if t1 < c {
                        self.core.drop_tail(B1);
                        if self.resident() >= c {
                            self.replace(false, on_evict);
                        }
                    } else {
                        let (k, v) = self.core.drop_tail(T1);
                        on_evict(k, v);
                    }
                } else {
                    let total = self.resident() + b1 + self.core.len(B2);
                    if total >= c {
                        if total >= 2 * c && self.core.len(B2) > 0 {
                            self.core.drop_tail(B2);
                        }
                        if self.resident() >= c {
                            self.replace(false, on_evict);
                        }
                    }
                }
                let n = self.core.alloc(key, value);
                self.core.push_head(T1, n);
            }
        }
    }
    fn set_capacity_values(&mut self, capacity: usize, on_evict: &mut dyn FnMut(u64, u32)) {
        self.cap = capacity.min(self.max);
        while self.resident() > self.cap {
            self.replace(false, on_evict);
        }
        self.p = self.p.min(self.cap);
        self.trim_ghosts();
    }
}
