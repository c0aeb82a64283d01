//! The one hash of an object that the analyses share, computed once a reference: splitmix64's finaliser
//! (sequential keys scatter over all 64 bits). Its low 24 bits are SHARDS' spatial hash
//! ([`super::spatial_hash`]); its high bits place the object in the table of the near stack (`recent.rs`),
//! so the two are independent.

/// `key`'s hash, all 64 bits.
#[inline]
pub fn object_hash(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
