//! One device model shared by the workers that use it.

use crate::{Done, Model, Request};
use std::sync::Mutex;

/// A model behind a lock, with one mailbox of completions per client (worker). Every call first advances the
/// model to `now_ns` and sorts what completed into the clients' mailboxes, so whichever worker wakes first
/// moves the device for all of them. Callers pass non-decreasing times taken while they hold no other lock;
/// times from different threads are made monotonic inside (a time earlier than the model's is treated as the
/// model's time).
pub struct SharedDevice {
    state: Mutex<State>,
}

struct State {
    model: Box<dyn Model>,
    /// Completions per client, tags without the client bits.
    mailboxes: Vec<Vec<Done>>,
    scratch: Vec<Done>,
    now_ns: u64,
}

impl SharedDevice {
    /// Shares `model` among `clients` clients, each with room for `per_client` completions.
    pub fn new(model: Box<dyn Model>, clients: usize, per_client: usize) -> SharedDevice {
        let _ = (model, clients, per_client);
        todo!()
    }

    /// Submits `req` (tag below 2^32) from `client` at `now_ns`.
    pub fn submit(&self, client: usize, now_ns: u64, req: Request) {
        let _ = (client, now_ns, req, &self.state);
        todo!()
    }

    /// Appends `client`'s completions up to `now_ns` to `out` and returns when the device next changes (any
    /// client's request), None when idle.
    pub fn poll(&self, client: usize, now_ns: u64, out: &mut Vec<Done>) -> Option<u64> {
        let _ = (client, now_ns, out);
        todo!()
    }

    /// The model's analytic mean service time (see [`Model::expected_service_ns`]).
    pub fn expected_service_ns(&self, write: bool, len: u32) -> f64 {
        let _ = (write, len);
        todo!()
    }
}

#[allow(dead_code)]
fn _uses(s: State) -> (Box<dyn Model>, Vec<Vec<Done>>, Vec<Done>, u64) {
    (s.model, s.mailboxes, s.scratch, s.now_ns)
}
