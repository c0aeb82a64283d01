//! The entry ids: 8 hex digits, stable (derived from the run id or the content, never from the clock),
//! extended when they collide. (The columns beside each document are read out of it by the caller's
//! [`crate::Indexer`].)

/// 64-bit FNV-1a: a fixed, dependency-free hash, so an id computed today is computed the same way by any
/// later iolab (std's hashers promise no such thing).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The id candidates of a document, shortest first: 8 hex digits, then 10, 12, ... 16, then 16 digits of
/// hashes salted with a counter (the same document saved again). A run's first 8 digits are its `run_id`
/// (already printed in its header), so `iolab show <run id>` works; other documents use a hash of their text.
pub fn id_candidates<'a>(
    kind: &str,
    run_id: Option<&str>,
    text: &'a str,
) -> impl Iterator<Item = String> + 'a {
    let content = format!("{:016x}", fnv1a(format!("{kind}\n{text}").as_bytes()));
    let base: String = match run_id {
        Some(r) if r.len() == 8 && r.bytes().all(|b| b.is_ascii_hexdigit()) => {
            format!("{}{}", r.to_ascii_lowercase(), &content[..8])
        }
        _ => content,
    };
    let widths = (8..=16).step_by(2).map(move |w| base[..w].to_string());
    let salted = (1u64..).map(move |n| format!("{:016x}", fnv1a(format!("{n}\n{text}").as_bytes())));
    widths.chain(salted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vector() {
        // FNV-1a 64 of "a" (http://www.isthe.com/chongo/tech/comp/fnv/).
        assert_eq!(fnv1a(b"a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn run_id_is_the_first_candidate() {
        let ids: Vec<String> = id_candidates("run", Some("2a924406"), "{}").take(3).collect();
        assert_eq!(ids[0], "2a924406");
        assert!(ids[1].starts_with("2a924406") && ids[1].len() == 10);
        assert!(ids[2].starts_with(&ids[1]) && ids[2].len() == 12);
    }

    #[test]
    fn candidates_never_end() {
        let ids: Vec<String> = id_candidates("sweep", None, "x").take(20).collect();
        assert_eq!(ids.len(), 20);
        assert!(ids.iter().all(|i| i.len() >= 8 && i.bytes().all(|b| b.is_ascii_hexdigit())));
    }
}
