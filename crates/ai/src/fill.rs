//! The dataset files' bytes: drawn from the seeded generator, written in chunks of 1 MiB.

use iolab_rng::Rng;
use std::io::{self, Write};

const CHUNK: usize = 1 << 20;

/// Writes `n` random bytes from `rng` to `out`, showing each chunk to `seen` first (for a checksum).
pub(crate) fn fill_with(
    out: &mut impl Write,
    mut n: u64,
    rng: &mut Rng,
    mut seen: impl FnMut(&[u8]),
) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK];
    while n > 0 {
        let len = (n as usize).min(CHUNK);
        for w in buf[..len].chunks_mut(8) {
            let r = rng.next_u64().to_le_bytes();
            w.copy_from_slice(&r[..w.len()]);
        }
        seen(&buf[..len]);
        out.write_all(&buf[..len])?;
        n -= len as u64;
    }
    Ok(())
}
