//! A compact open-addressed hash index from u64 keys to u32 ids (the policies' nodes, the write-back list's
//! entries). The table holds only `u32` words: the id plus a 5-bit fingerprint of the key's hash, so most
//! probes that do not match never read the key; the keys live in the owner's arrays and are fetched through
//! a closure. Linear probing, positions by multiply-shift over any table length (no power-of-two rounding),
//! deletion by backward shift (no tombstones), table 1.5 times the ids it may hold.

/// Bits of a table word holding `id + 1` (0 = empty).
const ID_BITS: u32 = 27;
const ID_MASK: u32 = (1 << ID_BITS) - 1;
/// Largest id the index can hold.
pub(crate) const MAX_ID: u32 = ID_MASK - 1;

/// The key hash: murmur3's 64-bit finalizer (a bijection, so distinct keys never share a hash).
#[inline]
pub(crate) fn hash64(key: u64) -> u64 {
    let mut h = key;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    h
}

#[inline]
fn fingerprint(h: u64) -> u32 {
    ((h as u32) & 31) << ID_BITS
}

/// The index table.
#[derive(Debug)]
pub(crate) struct Index {
    table: Vec<u32>,
}

impl Index {
    /// An index for up to `max_ids` ids.
    pub(crate) fn new(max_ids: usize) -> Index {
        assert!(max_ids <= MAX_ID as usize, "index for {max_ids} ids: at most {MAX_ID}");
        let len = (max_ids + max_ids / 2 + 1).max(8);
        Index { table: vec![0; len] }
    }

    /// Bytes the table holds.
    pub(crate) fn bytes(&self) -> usize {
        self.table.capacity() * std::mem::size_of::<u32>()
    }

    /// How many ids the table was sized for.
    pub(crate) fn max_ids(&self) -> usize {
        (self.table.len() - 1) * 2 / 3
    }

    #[inline]
    fn home(&self, h: u64) -> usize {
        ((h as u128 * self.table.len() as u128) >> 64) as usize
    }

    /// The id of `key` (whose hash is `h`), comparing candidates through `key_of`.
    #[inline]
    pub(crate) fn find(&self, key: u64, h: u64, key_of: impl Fn(u32) -> u64) -> Option<u32> {
        let fp = fingerprint(h);
        let len = self.table.len();
        let mut i = self.home(h);
        loop {
            let e = self.table[i];
            if e == 0 {
                return None;
            }
            if e & !ID_MASK == fp {
                let id = (e & ID_MASK) - 1;
                if key_of(id) == key {
                    return Some(id);
                }
            }
            i += 1;
            if i == len {
                i = 0;
            }
        }
    }

    /// Adds `id` for a key of hash `h` (the key must not be in the index).
    #[inline]
    pub(crate) fn insert(&mut self, h: u64, id: u32) {
        debug_assert!(id <= MAX_ID);
        let len = self.table.len();
        let mut i = self.home(h);
        while self.table[i] != 0 {
            i += 1;
            if i == len {
                i = 0;
            }
        }
        self.table[i] = fingerprint(h) | (id + 1);
    }

    /// Removes `id` (held for a key of hash `h`); `hash_of` gives the hash of any id's key, to move entries
    /// back over the hole.
    pub(crate) fn remove(&mut self, h: u64, id: u32, hash_of: impl Fn(u32) -> u64) {
        let len = self.table.len();
        let mut i = self.home(h);
        loop {
            let e = self.table[i];
            assert!(e != 0, "index: removing an id that is not there");
            if e & ID_MASK == id + 1 {
                break;
            }
            i += 1;
            if i == len {
                i = 0;
            }
        }
        // Backward shift: move each following entry of the cluster into the hole unless its home lies
        // cyclically in (hole, its position].
        let mut j = i;
        loop {
            j += 1;
            if j == len {
                j = 0;
            }
            let e = self.table[j];
            if e == 0 {
                break;
            }
            let k = self.home(hash_of((e & ID_MASK) - 1));
            let stays = if i <= j { i < k && k <= j } else { i < k || k <= j };
            if !stays {
                self.table[i] = e;
                i = j;
            }
        }
        self.table[i] = 0;
    }

    /// Re-sizes the table for `max_ids` ids and re-inserts `ids` (with their hashes).
    pub(crate) fn rebuild(&mut self, max_ids: usize, ids: impl Iterator<Item = (u32, u64)>) {
        *self = Index::new(max_ids);
        for (id, h) in ids {
            self.insert(h, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn index_matches_a_hash_map_under_random_inserts_and_removes() {
        let n = 300usize;
        let mut keys = vec![u64::MAX; n];
        let mut index = Index::new(n);
        let mut model: HashMap<u64, u32> = HashMap::new();
        let mut x = 12345u64;
        for _ in 0..20_000 {
            x = hash64(x);
            let key = x % 700;
            let h = hash64(key);
            let found = index.find(key, h, |id| keys[id as usize]);
            assert_eq!(found, model.get(&key).copied());
            match found {
                Some(id) => {
                    index.remove(h, id, |i| hash64(keys[i as usize]));
                    keys[id as usize] = u64::MAX;
                    model.remove(&key);
                }
                None => {
                    if let Some(id) = (0..n as u32).find(|&i| keys[i as usize] == u64::MAX) {
                        keys[id as usize] = key;
                        index.insert(h, id);
                        model.insert(key, id);
                    }
                }
            }
        }
        for (&k, &id) in &model {
            assert_eq!(index.find(k, hash64(k), |i| keys[i as usize]), Some(id));
        }
    }
}
