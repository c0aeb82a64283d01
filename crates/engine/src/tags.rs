//! The tag table of a wrapper or emulated engine: what it keeps per op it has in flight underneath, found
//! again by the tag (the `user_data` the engine underneath sees, or the request tag a device model sees).
//!
//! One type for all of them (the cache, link and fault wrappers and the emulated engine) so the free-list
//! discipline is written once: tags are handed out last-freed first, starting from 0, which keeps the tags (and
//! with them the order in which a device model breaks ties) exactly as they were when each engine kept its own
//! copy. (Named here in words, not as links: a doc link to those modules would make this one name them.)

/// Entries by tag, with a free list. Capacity is fixed at construction; nothing is allocated afterwards.
pub(crate) struct Tags<T> {
    entries: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Tags<T> {
    /// Room for `n` entries, tags `0..n`.
    pub(crate) fn new(n: u32) -> Tags<T> {
        Tags { entries: (0..n).map(|_| None).collect(), free: (0..n).rev().collect() }
    }

    /// Stores `value` under a free tag and returns the tag. Panics when every tag is in use: the caller put
    /// more ops in flight than it said it would.
    #[inline]
    pub(crate) fn insert(&mut self, value: T) -> u32 {
        let tag = self.free.pop().expect("more ops in flight than slots (bug)");
        self.entries[tag as usize] = Some(value);
        tag
    }

    /// The entry under `tag`; panics when the tag is not in use.
    #[inline]
    pub(crate) fn get(&self, tag: u32) -> &T {
        self.entries[tag as usize].as_ref().unwrap_or_else(|| not_in_flight(tag))
    }

    /// The entry under `tag`, mutable; panics when the tag is not in use.
    #[inline]
    pub(crate) fn get_mut(&mut self, tag: u32) -> &mut T {
        self.entries[tag as usize].as_mut().unwrap_or_else(|| not_in_flight(tag))
    }

    /// Takes the entry under `tag` out and frees the tag; panics when the tag is not in use.
    #[inline]
    pub(crate) fn remove(&mut self, tag: u32) -> T {
        let value = self.entries[tag as usize].take().unwrap_or_else(|| not_in_flight(tag));
        self.free.push(tag);
        value
    }

    /// Whether no tag is in use.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.free.len() == self.entries.len()
    }

    /// The entries in use.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.entries.iter().flatten()
    }
}

#[cold]
fn not_in_flight(tag: u32) -> ! {
    panic!("tag {tag} is not in flight (bug)")
}

#[cfg(test)]
mod tests {
    use super::Tags;

    #[test]
    fn tags_are_handed_out_from_zero_and_last_freed_first() {
        let mut t = Tags::new(3);
        assert_eq!((t.insert('a'), t.insert('b'), t.insert('c')), (0, 1, 2));
        assert_eq!(t.remove(1), 'b');
        assert_eq!(t.remove(0), 'a');
        assert_eq!(t.insert('d'), 0, "the last freed tag comes back first");
        assert_eq!(t.insert('e'), 1);
        assert_eq!(*t.get(2), 'c');
        *t.get_mut(2) = 'f';
        let mut left: Vec<char> = t.values().copied().collect();
        left.sort();
        assert_eq!(left, ['d', 'e', 'f']);
    }

    #[test]
    #[should_panic(expected = "more ops in flight than slots")]
    fn tags_insert_past_capacity_panics() {
        let mut t = Tags::new(1);
        t.insert(1);
        t.insert(2);
    }

    #[test]
    #[should_panic(expected = "tag 0 is not in flight")]
    fn tags_remove_twice_panics() {
        let mut t = Tags::new(1);
        let tag = t.insert(1);
        t.remove(tag);
        t.remove(tag);
    }
}
