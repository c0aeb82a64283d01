//! `inject`: faults put into a target's I/O on purpose (`--inject KIND[:PROBABILITY|@N]`), to prove that
//! verification catches what it must and to see how a workload behaves when the storage misbehaves.
//!
//! The syntax is `KIND`, `KIND:P` or `KIND@N`; `latency-spike` takes its duration first:
//! `latency-spike:DURATION[:P|@N]`. `P` is a probability, `0 < P <= 1`, written as a fraction (`0.001`) or a
//! percentage (`0.1%`); `N` is a count (`1000`, `10k`): every N-th eligible op. Without either, a fault hits
//! each eligible op with probability [`DEFAULT_PROBABILITY`] (one in a thousand). The engine side, what each
//! kind does and how it is counted, is in `iolab-engine`'s `fault` module and docs/FAULTS.md.

use serde::{Deserialize, Serialize};

/// How often a fault hits when the user gives neither `:P` nor `@N`: one eligible op in a thousand, on
/// average. Rare enough that a run still measures its workload, frequent enough that a run of a few seconds
/// sees dozens of injections.
pub const DEFAULT_PROBABILITY: f64 = 0.001;

/// The longest `latency-spike`: a held completion holds its slot, and a stop waits for it.
pub const MAX_SPIKE_NS: u64 = 60_000_000_000;

/// The kinds as users type them, for messages and suggestions.
pub const KIND_NAMES: &[&str] = &[
    "bit-flip-read",
    "bit-flip-write",
    "lost-write",
    "misdirected-write",
    "torn-write",
    "eio",
    "latency-spike",
    "early-flush-ack",
];

const SYNTAX: &str = "KIND, KIND:PROBABILITY or KIND@N (latency-spike:DURATION[:PROBABILITY|@N]), \
                      e.g. 'lost-write@1000', 'bit-flip-read:0.1%' or 'latency-spike:50ms@1000'";
const PROBABILITY_EXPECTED: &str =
    "a probability above 0 and at most 1, as a fraction or a percentage, e.g. '0.001' or '0.1%'";
const EVERY_EXPECTED: &str =
    "a whole count of at least 1 after '@' (every N-th eligible op), e.g. '@1000' or '@10k'";

/// What is injected.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InjectKind {
    /// Flip one bit in the data a read returns (the medium is untouched).
    BitFlipRead,
    /// Flip one bit in the data a write stores.
    BitFlipWrite,
    /// Acknowledge a write without storing it.
    LostWrite,
    /// Store a write at another offset of the same target (and not where it was meant to go).
    MisdirectedWrite,
    /// Store only a prefix of a write, cut at a multiple of the target's write unit, and acknowledge all of it.
    TornWrite,
    /// Fail the op with EIO.
    Eio,
    /// Delay the op's completion by this many nanoseconds.
    LatencySpike {
        /// The delay.
        ns: u64,
    },
    /// A write-back block cache (`--cache-mode write-back`) acknowledges a flush of a target with dirty lines
    /// at once, without writing them back first: the data-loss bug a host cache must not have, put in on
    /// purpose so that a test can show verification after a crash catches it.
    EarlyFlushAck,
}

impl InjectKind {
    /// The name users type (`bit-flip-read`, `latency-spike`, ...), as in results.
    pub fn name(&self) -> &'static str {
        match self {
            InjectKind::BitFlipRead => "bit-flip-read",
            InjectKind::BitFlipWrite => "bit-flip-write",
            InjectKind::LostWrite => "lost-write",
            InjectKind::MisdirectedWrite => "misdirected-write",
            InjectKind::TornWrite => "torn-write",
            InjectKind::Eio => "eio",
            InjectKind::LatencySpike { .. } => "latency-spike",
            InjectKind::EarlyFlushAck => "early-flush-ack",
        }
    }

    /// The kind damages data (on the medium or in a read's buffer), so verification should find it; `eio` and
    /// `latency-spike` do not, and `early-flush-ack` only loses data at a crash (`iolab verify --journal`
    /// finds it then, not the run itself).
    pub fn corrupts(&self) -> bool {
        !matches!(self, InjectKind::Eio | InjectKind::LatencySpike { .. } | InjectKind::EarlyFlushAck)
    }

    /// Which of the target's reads and writes the kind can hit: (reads, writes). Neither for
    /// `early-flush-ack`, which hits a block cache's flushes.
    pub fn applies_to(&self) -> (bool, bool) {
        match self {
            InjectKind::EarlyFlushAck => (false, false),
            InjectKind::BitFlipRead => (true, false),
            InjectKind::BitFlipWrite
            | InjectKind::LostWrite
            | InjectKind::MisdirectedWrite
            | InjectKind::TornWrite => (false, true),
            InjectKind::Eio | InjectKind::LatencySpike { .. } => (true, true),
        }
    }
}

/// How often.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InjectWhen {
    /// Each eligible op with this probability (seeded).
    Probability(f64),
    /// Every N-th eligible op.
    Every(u64),
}

/// One `--inject`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InjectSpec {
    /// What.
    pub kind: InjectKind,
    /// How often.
    pub when: InjectWhen,
    /// As the user wrote it.
    pub text: String,
}

impl InjectSpec {
    /// Parses `KIND[:PROBABILITY|@N]` (`latency-spike:DURATION[:PROBABILITY|@N]`). The error is the "expected
    /// ..." part of a message (the caller adds the flag or key and the whole text); it quotes the part of the
    /// text that is wrong.
    pub fn parse(text: &str) -> Result<InjectSpec, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err(format!("{SYNTAX}; the value is empty"));
        }
        let (head, every) = match t.split_once('@') {
            Some((h, n)) => (h, Some(n)),
            None => (t, None),
        };
        let mut parts = head.split(':');
        let kind_text = parts.next().unwrap_or("").trim();
        let kind = parse_kind(kind_text)?;
        let kind = match kind {
            InjectKind::LatencySpike { .. } => {
                let d = parts.next().map(str::trim).filter(|d| !d.is_empty()).ok_or_else(|| {
                    "a duration after 'latency-spike:', e.g. 'latency-spike:50ms@1000' or \
                     'latency-spike:20ms:0.001'"
                        .to_string()
                })?;
                InjectKind::LatencySpike { ns: parse_spike(d)? }
            }
            k => k,
        };
        let probability = parts.next().map(str::trim);
        if let Some(extra) = parts.next() {
            return Err(format!("{SYNTAX}; ':{extra}' is one part too many"));
        }
        let when = match (probability, every) {
            (Some(p), Some(n)) => {
                return Err(format!("{SYNTAX}; give a probability or '@N', not both (':{p}' and '@{n}')"))
            }
            (Some(p), None) => InjectWhen::Probability(parse_probability(p)?),
            (None, Some(n)) => InjectWhen::Every(parse_every(n)?),
            (None, None) => InjectWhen::Probability(DEFAULT_PROBABILITY),
        };
        Ok(InjectSpec { kind, when, text: t.to_string() })
    }
}

fn parse_kind(k: &str) -> Result<InjectKind, String> {
    Ok(match k {
        "bit-flip-read" => InjectKind::BitFlipRead,
        "bit-flip-write" => InjectKind::BitFlipWrite,
        "lost-write" => InjectKind::LostWrite,
        "misdirected-write" => InjectKind::MisdirectedWrite,
        "torn-write" => InjectKind::TornWrite,
        "eio" => InjectKind::Eio,
        "latency-spike" => InjectKind::LatencySpike { ns: 0 },
        "early-flush-ack" => InjectKind::EarlyFlushAck,
        "bit-flip" => {
            return Err(
                "'bit-flip-read' (flip a bit in what a read returns) or 'bit-flip-write' (flip a bit \
                        in what a write stores); 'bit-flip' alone does not say which"
                    .into(),
            )
        }
        "" => return Err(format!("{SYNTAX}; the kind is missing")),
        other => {
            let kinds = KIND_NAMES.join(", ");
            let lower = other.to_ascii_lowercase().replace('_', "-");
            let hint = match crate::error::suggest(&lower, KIND_NAMES) {
                Some(s) => format!("; did you mean '{s}'?"),
                None => String::new(),
            };
            return Err(format!("a fault kind ({kinds}), not '{other}'{hint}"));
        }
    })
}

fn parse_spike(d: &str) -> Result<u64, String> {
    const EXP: &str = "a latency-spike duration with a unit, from 1us to 60s, e.g. 'latency-spike:50ms'";
    // A bare number would read as seconds elsewhere in iolab; here it is too easily taken for a probability.
    if !d.ends_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(format!("{EXP}, not '{d}' (a duration needs a unit)"));
    }
    let ns = crate::units::parse_duration_ns(d).map_err(|_| format!("{EXP}, not '{d}'"))?;
    if !(1_000..=MAX_SPIKE_NS).contains(&ns) {
        return Err(format!("{EXP}; '{d}' is out of range"));
    }
    Ok(ns)
}

fn parse_probability(p: &str) -> Result<f64, String> {
    if p.is_empty() {
        return Err(format!("{PROBABILITY_EXPECTED} after ':'"));
    }
    let (num, scale) = match p.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (p, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| format!("{PROBABILITY_EXPECTED}, not '{p}'"))?;
    if !v.is_finite() {
        return Err(format!("{PROBABILITY_EXPECTED}, not '{p}'"));
    }
    let prob = v / scale;
    if prob <= 0.0 {
        return Err(format!("{PROBABILITY_EXPECTED}; '{p}' would never inject anything"));
    }
    if prob > 1.0 {
        let hint = if scale == 1.0 && v <= 100.0 {
            format!("; for a percentage write '{p}%'")
        } else {
            String::new()
        };
        return Err(format!("{PROBABILITY_EXPECTED}; '{p}' is above 1{hint}"));
    }
    Ok(prob)
}

fn parse_every(n: &str) -> Result<u64, String> {
    let n = n.trim();
    let v = crate::units::parse_count(n).map_err(|_| format!("{EVERY_EXPECTED}, not '@{n}'"))?;
    if v < 1.0 || v.fract() != 0.0 || v > u64::MAX as f64 / 2.0 {
        return Err(format!("{EVERY_EXPECTED}, not '@{n}'"));
    }
    Ok(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(t: &str) -> InjectSpec {
        InjectSpec::parse(t).unwrap_or_else(|e| panic!("'{t}' should parse: {e}"))
    }
    fn err(t: &str) -> String {
        match InjectSpec::parse(t) {
            Ok(s) => panic!("'{t}' should be refused, parsed as {s:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn inject_every_kind_parses_with_the_default_probability() {
        for (t, k) in [
            ("bit-flip-read", InjectKind::BitFlipRead),
            ("bit-flip-write", InjectKind::BitFlipWrite),
            ("lost-write", InjectKind::LostWrite),
            ("misdirected-write", InjectKind::MisdirectedWrite),
            ("torn-write", InjectKind::TornWrite),
            ("eio", InjectKind::Eio),
        ] {
            let s = ok(t);
            assert_eq!(s.kind, k, "{t}");
            assert_eq!(s.kind.name(), t);
            assert_eq!(s.when, InjectWhen::Probability(DEFAULT_PROBABILITY), "{t}");
            assert_eq!(s.text, t);
        }
    }

    #[test]
    fn inject_probability_as_fraction_or_percent() {
        assert_eq!(ok("lost-write:0.001").when, InjectWhen::Probability(0.001));
        assert_eq!(ok("lost-write:0.1%").when, InjectWhen::Probability(0.001));
        assert_eq!(ok("eio:1").when, InjectWhen::Probability(1.0));
        assert_eq!(ok("eio:100%").when, InjectWhen::Probability(1.0));
        assert_eq!(ok(" torn-write:0.5 ").text, "torn-write:0.5");
    }

    #[test]
    fn inject_every_n_accepts_counts() {
        assert_eq!(ok("lost-write@1000").when, InjectWhen::Every(1000));
        assert_eq!(ok("lost-write@10k").when, InjectWhen::Every(10_000));
        assert_eq!(ok("eio@1").when, InjectWhen::Every(1));
    }

    #[test]
    fn inject_latency_spike_takes_a_duration_first() {
        let s = ok("latency-spike:50ms@1000");
        assert_eq!(s.kind, InjectKind::LatencySpike { ns: 50_000_000 });
        assert_eq!(s.when, InjectWhen::Every(1000));
        let s = ok("latency-spike:20ms:0.001");
        assert_eq!(s.kind, InjectKind::LatencySpike { ns: 20_000_000 });
        assert_eq!(s.when, InjectWhen::Probability(0.001));
        let s = ok("latency-spike:250us");
        assert_eq!(s.kind, InjectKind::LatencySpike { ns: 250_000 });
        assert_eq!(s.when, InjectWhen::Probability(DEFAULT_PROBABILITY));
        assert!(!s.kind.corrupts());
    }

    #[test]
    fn inject_plain_bit_flip_is_refused_with_both_names() {
        let e = err("bit-flip");
        assert!(e.contains("'bit-flip-read'") && e.contains("'bit-flip-write'"), "{e}");
        let e = err("bit-flip:0.1");
        assert!(e.contains("bit-flip-read"), "{e}");
    }

    #[test]
    fn inject_unknown_kind_suggests_the_closest() {
        let e = err("lost_write");
        assert!(e.contains("'lost_write'") && e.contains("did you mean 'lost-write'"), "{e}");
        let e = err("torn-writes@10");
        assert!(e.contains("did you mean 'torn-write'"), "{e}");
        let e = err("explode");
        assert!(e.contains("not 'explode'") && e.contains("latency-spike"), "{e}");
        assert!(err("").contains("empty"));
        assert!(err(":0.1").contains("kind is missing"));
    }

    #[test]
    fn inject_bad_probabilities_are_refused() {
        let e = err("eio:5");
        assert!(e.contains("'5' is above 1") && e.contains("'5%'"), "{e}");
        assert!(err("eio:0").contains("never"), "zero");
        assert!(err("eio:0%").contains("never"), "zero percent");
        assert!(err("eio:-0.1").contains("never"), "negative");
        assert!(err("eio:150%").contains("above 1"));
        assert!(err("eio:often").contains("not 'often'"));
        assert!(err("eio:").contains("after ':'"));
        assert!(err("eio:NaN").contains("not 'NaN'"));
    }

    #[test]
    fn inject_bad_counts_are_refused() {
        assert!(err("eio@0").contains("'@0'"));
        assert!(err("eio@1.5").contains("'@1.5'"));
        assert!(err("eio@").contains("'@'"));
        assert!(err("eio@x").contains("'@x'"));
        assert!(err("eio@-3").contains("'@-3'"));
        assert!(err("eio@3@4").contains("'@3@4'"));
    }

    #[test]
    fn inject_probability_and_count_together_are_refused() {
        let e = err("eio:0.1@10");
        assert!(e.contains("not both") && e.contains("':0.1'") && e.contains("'@10'"), "{e}");
        assert!(err("latency-spike:5ms:0.1@10").contains("not both"));
    }

    #[test]
    fn inject_extra_parts_are_refused() {
        assert!(err("eio:0.1:0.2").contains("':0.2'"));
        assert!(err("latency-spike:5ms:0.1:3").contains("':3'"));
        // A duration on a kind that takes none reads as a probability and is refused as one.
        assert!(err("eio:50ms").contains("not '50ms'"));
    }

    #[test]
    fn inject_latency_spike_needs_a_duration_with_a_unit() {
        assert!(err("latency-spike").contains("a duration after 'latency-spike:'"));
        assert!(err("latency-spike@100").contains("a duration"));
        assert!(err("latency-spike:").contains("a duration"));
        let e = err("latency-spike:0.001");
        assert!(e.contains("needs a unit") && e.contains("'0.001'"), "{e}");
        assert!(err("latency-spike:5parsecs").contains("not '5parsecs'"));
        assert!(err("latency-spike:0ms").contains("out of range"));
        assert!(err("latency-spike:2m").contains("out of range"));
        assert!(err("latency-spike:100ns").contains("out of range"));
    }

    #[test]
    fn inject_kind_helpers() {
        assert!(InjectKind::TornWrite.corrupts());
        assert!(!InjectKind::Eio.corrupts());
        assert_eq!(InjectKind::BitFlipRead.applies_to(), (true, false));
        assert_eq!(InjectKind::LostWrite.applies_to(), (false, true));
        assert_eq!(InjectKind::LatencySpike { ns: 1 }.applies_to(), (true, true));
    }
}
