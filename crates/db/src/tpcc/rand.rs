//! TPC-C's random choices (clause 2.1.6 and 4.3.2), on iolab's seeded generator ([`iolab_rng::Rng`]),
//! so a printed seed reproduces the loaded data and every user's stream.
//!
//! - [`nurand`] is NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x, with A = 255
//!   for C_LAST, 1023 for C_ID and 8191 for OL_I_ID, and C a constant per field ([`Constants`]) chosen once
//!   for the load and once for the run, the run's C_LAST differing from the load's by 65 to 119 but not 96
//!   or 112 (2.1.6.1).
//! - [`last_name`] builds C_LAST from three syllables (4.3.2.3).
//! - [`astring`], [`nstring`], [`zip`] and [`data`] are the spec's random strings (4.3.2.2, 4.3.2.7, 4.3.3.1).
//! - [`Deck`] deals the transaction mix from a shuffled deck of 100 cards (5.2.4.2 allows a deck), so every
//!   100 transactions of a user hold the mix exactly.

use iolab_rng::Rng;

/// A for C_LAST.
pub const A_C_LAST: u64 = 255;
/// A for C_ID.
pub const A_C_ID: u64 = 1023;
/// A for OL_I_ID.
pub const A_OL_I_ID: u64 = 8191;

/// A number in `lo..=hi`, uniformly.
pub fn uniform(rng: &mut Rng, lo: u64, hi: u64) -> u64 {
    lo + rng.below(hi - lo + 1)
}

/// NURand(A, x, y) with the constant `c`.
pub fn nurand(rng: &mut Rng, a: u64, c: u64, x: u64, y: u64) -> u64 {
    (((uniform(rng, 0, a) | uniform(rng, x, y)) + c) % (y - x + 1)) + x
}

/// The C constants of one phase (load or run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constants {
    /// C for C_LAST, in 0..=255.
    pub c_last: u64,
    /// C for C_ID, in 0..=1023.
    pub c_id: u64,
    /// C for OL_I_ID, in 0..=8191.
    pub ol_i_id: u64,
}

impl Constants {
    /// The load's constants and the run's, from `seed`: the run's C_LAST differs from the load's by a delta
    /// in 65..=119 other than 96 and 112 (clause 2.1.6.1); C_ID and OL_I_ID are drawn afresh.
    pub fn from_seed(seed: u64) -> (Constants, Constants) {
        let mut rng = Rng::for_worker(seed, 0x7ccc);
        let load = Constants {
            c_last: uniform(&mut rng, 0, 255),
            c_id: uniform(&mut rng, 0, 1023),
            ol_i_id: uniform(&mut rng, 0, 8191),
        };
        let delta = loop {
            let d = uniform(&mut rng, 65, 119);
            if d != 96 && d != 112 {
                break d;
            }
        };
        let run = Constants {
            c_last: (load.c_last + delta) % 256,
            c_id: uniform(&mut rng, 0, 1023),
            ol_i_id: uniform(&mut rng, 0, 8191),
        };
        (load, run)
    }
}

/// The syllables of C_LAST.
const SYLLABLES: [&str; 10] =
    ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];

/// C_LAST for a number in 0..=999: its three digits as syllables (371 → PRICALLYOUGHT).
pub fn last_name(n: u64) -> String {
    let n = n % 1000;
    let mut s = String::with_capacity(15);
    for d in [n / 100, (n / 10) % 10, n % 10] {
        s.push_str(SYLLABLES[d as usize]);
    }
    s
}

/// The characters of an a-string (the spec asks for at least 26 lower-case letters, 26 upper-case and 10
/// digits; nothing that needs quoting).
const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// A random a-string of `lo..=hi` characters.
pub fn astring(rng: &mut Rng, lo: u64, hi: u64) -> String {
    let n = uniform(rng, lo, hi) as usize;
    (0..n).map(|_| ALNUM[rng.below(ALNUM.len() as u64) as usize] as char).collect()
}

/// A random n-string (digits) of `lo..=hi` characters.
pub fn nstring(rng: &mut Rng, lo: u64, hi: u64) -> String {
    let n = uniform(rng, lo, hi) as usize;
    (0..n).map(|_| (b'0' + rng.below(10) as u8) as char).collect()
}

/// A zip code: 4 random digits and "11111" (4.3.2.7).
pub fn zip(rng: &mut Rng) -> String {
    nstring(rng, 4, 4) + "11111"
}

/// I_DATA or S_DATA: an a-string of 26..=50 characters, 10 % of them with "ORIGINAL" at a random place.
pub fn data(rng: &mut Rng) -> String {
    let mut s = astring(rng, 26, 50);
    if rng.below(10) == 0 {
        let at = rng.below(s.len() as u64 - 8 + 1) as usize;
        s.replace_range(at..at + 8, "ORIGINAL");
    }
    s
}

/// The five transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TxType {
    /// New-Order (2.4).
    NewOrder,
    /// Payment (2.5).
    Payment,
    /// Order-Status (2.6).
    OrderStatus,
    /// Delivery (2.7).
    Delivery,
    /// Stock-Level (2.8).
    StockLevel,
}

impl TxType {
    /// All five, in the mix's order.
    pub const ALL: [TxType; 5] =
        [TxType::NewOrder, TxType::Payment, TxType::OrderStatus, TxType::Delivery, TxType::StockLevel];

    /// The standard mix, percent: 45/43/4/4/4 (payment at least 43 %, the others at least 4 %, new-order
    /// the rest: clause 5.2.3).
    pub fn pct(self) -> u32 {
        match self {
            TxType::NewOrder => 45,
            TxType::Payment => 43,
            TxType::OrderStatus | TxType::Delivery | TxType::StockLevel => 4,
        }
    }

    /// Its name in the document.
    pub fn name(self) -> &'static str {
        match self {
            TxType::NewOrder => "new_order",
            TxType::Payment => "payment",
            TxType::OrderStatus => "order_status",
            TxType::Delivery => "delivery",
            TxType::StockLevel => "stock_level",
        }
    }

    /// Its position in [`TxType::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A deck of 100 cards in the mix's proportions, shuffled anew each time it runs out.
#[derive(Clone, Debug)]
pub struct Deck {
    cards: Vec<TxType>,
    next: usize,
}

impl Default for Deck {
    fn default() -> Self {
        Deck::new()
    }
}

impl Deck {
    /// A fresh deck (shuffled at the first draw).
    pub fn new() -> Deck {
        let cards: Vec<TxType> =
            TxType::ALL.iter().flat_map(|t| std::iter::repeat_n(*t, t.pct() as usize)).collect();
        debug_assert_eq!(cards.len(), 100);
        let next = cards.len();
        Deck { cards, next }
    }

    /// The next transaction type.
    pub fn draw(&mut self, rng: &mut Rng) -> TxType {
        if self.next == self.cards.len() {
            // Fisher-Yates.
            for i in (1..self.cards.len()).rev() {
                let j = rng.below(i as u64 + 1) as usize;
                self.cards.swap(i, j);
            }
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = Rng::new(1);
        let mut counts = vec![0u32; 3001];
        for _ in 0..300_000 {
            let v = nurand(&mut rng, A_C_ID, 259, 1, 3000);
            assert!((1..=3000).contains(&v));
            counts[v as usize] += 1;
        }
        // Uniform would give 100 each; NURand's OR makes some ids several times likelier than others.
        let max = *counts.iter().max().unwrap();
        let min = *counts[1..].iter().min().unwrap();
        assert!(max > 3 * min, "max {max}, min {min}: not skewed");
        let mut rng = Rng::new(2);
        for _ in 0..100_000 {
            assert!(nurand(&mut rng, A_C_LAST, 200, 0, 999) <= 999);
            assert!((1..=100_000).contains(&nurand(&mut rng, A_OL_I_ID, 7911, 1, 100_000)));
        }
    }

    #[test]
    fn nurand_is_the_formula() {
        // With A = 0, random(0, A) is 0 and NURand is (random(x, y) + C) mod (y - x + 1) + x.
        let mut a = Rng::new(9);
        let mut b = Rng::new(9);
        for _ in 0..1000 {
            let v = nurand(&mut a, 0, 5, 1, 10);
            let _ = uniform(&mut b, 0, 0);
            let r = uniform(&mut b, 1, 10);
            assert_eq!(v, (r + 5) % 10 + 1);
        }
    }

    #[test]
    fn run_constants_differ_from_the_load_as_the_spec_asks() {
        for seed in 0..2000 {
            let (load, run) = Constants::from_seed(seed);
            let delta = (run.c_last + 256 - load.c_last) % 256;
            assert!((65..=119).contains(&delta) && delta != 96 && delta != 112, "seed {seed}: {delta}");
            assert!(load.c_id <= 1023 && load.ol_i_id <= 8191 && run.c_id <= 1023 && run.ol_i_id <= 8191);
        }
        assert_eq!(Constants::from_seed(7), Constants::from_seed(7));
    }

    #[test]
    fn last_names_are_the_spec_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn the_deck_deals_the_mix_exactly_every_hundred() {
        let mut rng = Rng::new(3);
        let mut deck = Deck::new();
        for _ in 0..5 {
            let mut n = [0u32; 5];
            for _ in 0..100 {
                n[deck.draw(&mut rng).index()] += 1;
            }
            assert_eq!(n, [45, 43, 4, 4, 4]);
        }
        let mut a = (Deck::new(), Rng::new(4));
        let mut b = (Deck::new(), Rng::new(4));
        let sa: Vec<TxType> = (0..300).map(|_| a.0.draw(&mut a.1)).collect();
        let sb: Vec<TxType> = (0..300).map(|_| b.0.draw(&mut b.1)).collect();
        assert_eq!(sa, sb, "the same seed deals the same sequence");
        assert_ne!(sa[..100], sa[100..200], "each deck is shuffled anew");
    }

    #[test]
    fn data_strings_have_their_lengths_and_a_tenth_say_original() {
        let mut rng = Rng::new(5);
        let mut original = 0;
        for _ in 0..10_000 {
            let s = data(&mut rng);
            assert!((26..=50).contains(&s.len()));
            original += s.contains("ORIGINAL") as u32;
        }
        assert!((800..1200).contains(&original), "{original}");
        assert_eq!(zip(&mut rng).len(), 9);
    }
}
