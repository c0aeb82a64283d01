//! SplitMix64: one step ([`splitmix64`]) and the stream of steps ([`SplitMix64`]), written once so that
//! [`crate::Rng`]'s seeding and the emulated devices' stream are the same arithmetic.

/// One step of SplitMix64: advances `state` by the golden-ratio increment and returns its mix. Used to expand
/// seeds ([`crate::Rng::new`]) and, step after step, as the [`SplitMix64`] stream.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A SplitMix64 generator: the stream of [`splitmix64`] steps from its seed.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// A generator for component `index` of the device seeded with `seed` (members of an array, etc.).
    pub fn derived(seed: u64, index: u64) -> SplitMix64 {
        let mut g = SplitMix64::new(seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
        SplitMix64::new(g.next_u64())
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.state)
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n) (n > 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A standard normal deviate (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.next_f64(); // (0, 1]
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stream_is_pinned_for_two_seeds() {
        // Computed before the generator moved to its own crate: every model's draws stay bit-identical.
        // (seed, first four outputs, then next_f64's bits, below(1000) and normal()'s bits, and the first
        // output of the streams derived for an array member (1), an HDD (0x48_4444) and an SSD (0x53_5344)).
        type Pin = (u64, [u64; 4], (u64, u64, u64), [u64; 3]);
        let pins: [Pin; 2] = [
            (
                0,
                [0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F, 0xF88B_B8A8_724C_81EC],
                (0x3FBB_3989_6A51_A870, 327, 0x3FB5_5AEA_EF33_4755),
                [0x9BD6_2A87_CA2E_2A9F, 0x3B9D_5BE0_0DAD_472A, 0xFD2A_80A7_E975_23CE],
            ),
            (
                7,
                [0x63CB_E1E4_5932_0DD7, 0x044C_3CD7_F43C_661C, 0xE698_4080_BAB1_2A02, 0x953A_EB70_673E_29CB],
                (0x3FDC_F4CE_D99A_8788, 249, 0xBFE0_EFC9_1BA8_90B4),
                [0xC196_8FA0_30F9_9CA7, 0xDC24_789E_8794_6B2A, 0xFCDC_EE74_A991_3AA0],
            ),
        ];
        for (seed, first, (f, below, normal), derived) in pins {
            let mut g = SplitMix64::new(seed);
            assert_eq!(first.map(|_| g.next_u64()), first, "SplitMix64::new({seed:#x})");
            assert_eq!((g.next_f64().to_bits(), g.below(1000), g.normal().to_bits()), (f, below, normal));
            let idx = [1, 0x0048_4444, 0x0053_5344];
            assert_eq!(
                idx.map(|i| SplitMix64::derived(seed, i).next_u64()),
                derived,
                "derived from {seed:#x}"
            );
        }
    }

    #[test]
    fn same_seed_same_stream_and_sane_moments() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut g = SplitMix64::new(1);
        let n = 200_000;
        let (mut s, mut s2, mut u) = (0.0, 0.0, 0.0);
        for _ in 0..n {
            let z = g.normal();
            s += z;
            s2 += z * z;
            u += g.next_f64();
        }
        assert!((s / n as f64).abs() < 0.01);
        assert!((s2 / n as f64 - 1.0).abs() < 0.01);
        assert!((u / n as f64 - 0.5).abs() < 0.005);
    }
}
