//! The [`Model`] contract, checked: [`Checked`] wraps a model and asserts, on every call, what the trait's
//! documentation promises, so a model that breaks it fails where it breaks it rather than as a wrong figure
//! in a result much later.
//!
//! [`crate::build`] and [`crate::build_target`] put every model they return behind it in debug builds (every
//! test of every crate that runs an emulated device, the CLI's golden runs included); release builds return
//! the model itself, so the engine's hot path pays nothing. The property tests (crates/sim/tests/props.rs)
//! wrap models themselves, so they check the contract in either build.
//!
//! What is checked, caller's side and model's side alike (the message names the broken rule):
//!
//! - times never go back: every call's `now_ns` is at least the previous call's;
//! - `submit(now)` comes after the model was advanced through everything before `now` (its next event is not
//!   earlier than `now`), and leaves at most `max_in_flight` requests in the model;
//! - `advance(now)` returns only requests in flight, each once, in completion order across calls, none
//!   after `now`, none before its own submission, none before the previous `advance` (it was missed then);
//! - after `advance(now)` the next event is later than `now`, and there is one while requests are in flight
//!   (else they would never complete);
//! - `in_flight()` is always the requests submitted minus those completed.
//!
//! Allocation after build, the contract's last rule, is checked by the property tests with a counting
//! allocator: the wrapper cannot see it. The wrapper itself allocates only when built.

use crate::{Done, Model, Request};

/// A model whose every call is checked against the [`Model`] contract (see the module docs). It answers as
/// the model it wraps, figure for figure.
pub struct Checked {
    inner: Box<dyn Model>,
    max_in_flight: usize,
    /// Requests in flight, (tag, submitted at), in submission order: a tag submitted twice is matched
    /// first-in first-out.
    pending: Vec<(u64, u64)>,
    /// The time of the latest call.
    now_ns: u64,
    /// The time of the latest `advance`.
    advanced_ns: u64,
    /// The latest completion time returned.
    done_ns: u64,
}

impl Checked {
    /// `inner`, built with room for `max_in_flight` requests, behind the checks.
    pub fn new(inner: Box<dyn Model>, max_in_flight: usize) -> Checked {
        let max_in_flight = max_in_flight.max(1);
        assert_eq!(inner.in_flight(), 0, "model contract: a model is built empty");
        Checked {
            inner,
            max_in_flight,
            pending: Vec::with_capacity(max_in_flight),
            now_ns: 0,
            advanced_ns: 0,
            done_ns: 0,
        }
    }

    /// Asserts that `now_ns` is no earlier than the previous call's time, and takes it.
    fn tick(&mut self, call: &str, now_ns: u64) {
        assert!(
            now_ns >= self.now_ns,
            "model contract: time went back: {call}({now_ns}) after a call at {}",
            self.now_ns
        );
        self.now_ns = now_ns;
    }

    /// Asserts that the model counts the requests the wrapper has seen submitted and not completed.
    fn check_in_flight(&self) {
        assert_eq!(
            self.inner.in_flight(),
            self.pending.len(),
            "model contract: in_flight() is the requests submitted minus those completed"
        );
    }

    /// Checks one completion returned by `advance(now_ns)` and retires its request.
    fn complete(&mut self, d: Done, now_ns: u64) {
        assert!(
            d.at_ns <= now_ns,
            "model contract: tag {} completed at {} after now {now_ns}",
            d.tag,
            d.at_ns
        );
        assert!(
            d.at_ns >= self.done_ns,
            "model contract: completions in time order: tag {} at {} after one at {}",
            d.tag,
            d.at_ns,
            self.done_ns
        );
        assert!(
            d.at_ns >= self.advanced_ns,
            "model contract: tag {} completed at {}, before the previous advance to {}: it was missed then",
            d.tag,
            d.at_ns,
            self.advanced_ns
        );
        let i = self.pending.iter().position(|&(tag, _)| tag == d.tag).unwrap_or_else(|| {
            panic!(
                "model contract: tag {} completed but not in flight (never submitted, or completed twice)",
                d.tag
            )
        });
        let (_, submitted_ns) = self.pending.remove(i);
        assert!(
            d.at_ns >= submitted_ns,
            "model contract: tag {} completed at {}, before its submission at {submitted_ns}",
            d.tag,
            d.at_ns
        );
        self.done_ns = d.at_ns;
    }
}

impl Model for Checked {
    fn submit(&mut self, now_ns: u64, req: Request) {
        self.tick("submit", now_ns);
        if let Some(t) = self.inner.next_event_ns() {
            assert!(
                t >= now_ns,
                "model contract: submit({now_ns}) before the model was advanced past its event at {t}"
            );
        }
        assert!(
            self.pending.len() < self.max_in_flight,
            "model contract: at most max_in_flight ({}) requests in flight: submit of tag {} at {now_ns}",
            self.max_in_flight,
            req.tag
        );
        self.pending.push((req.tag, now_ns));
        self.inner.submit(now_ns, req);
        self.check_in_flight();
    }

    fn next_event_ns(&self) -> Option<u64> {
        self.inner.next_event_ns()
    }

    fn advance(&mut self, now_ns: u64, done: &mut Vec<Done>) {
        self.tick("advance", now_ns);
        let from = done.len();
        self.inner.advance(now_ns, done);
        for &d in &done[from..] {
            self.complete(d, now_ns);
        }
        self.advanced_ns = now_ns;
        match self.inner.next_event_ns() {
            Some(t) => assert!(t > now_ns, "model contract: next event at {t} not after advance({now_ns})"),
            None => assert!(
                self.pending.is_empty(),
                "model contract: {} requests in flight after advance({now_ns}) and no next event: they would never \
                 complete",
                self.pending.len()
            ),
        }
        self.check_in_flight();
    }

    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }

    fn expected_service_ns(&self, write: bool, len: u32) -> f64 {
        self.inner.expected_service_ns(write, len)
    }

    fn write_cache_fill(&self) -> Option<crate::WriteCacheFill> {
        self.inner.write_cache_fill()
    }
}

/// `model` as [`crate::build`] returns it: behind [`Checked`] in debug builds, itself in release builds.
pub(crate) fn in_debug(model: Box<dyn Model>, max_in_flight: usize) -> Box<dyn Model> {
    if cfg!(debug_assertions) {
        Box::new(Checked::new(model, max_in_flight))
    } else {
        model
    }
}
