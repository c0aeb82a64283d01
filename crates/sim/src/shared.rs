//! One device model shared by the workers that use it.

use crate::{Done, Model, Request};
use std::sync::Mutex;

/// A model behind a lock, with one mailbox of completions per client (worker). Every call first advances the
/// model to `now_ns` and sorts what completed into the clients' mailboxes, so whichever worker wakes first
/// moves the device for all of them. Callers pass non-decreasing times taken while they hold no other lock;
/// times from different threads are made monotonic inside (a time earlier than the model's is treated as the
/// model's time).
///
/// Inside the model a request's tag is `client << 32 | tag`; completions come back to their client with the
/// client bits removed. Nothing allocates per call once built, as long as each client keeps at most
/// `per_client` completions unread.
pub struct SharedDevice {
    state: Mutex<State>,
}

struct State {
    model: Box<dyn Model>,
    /// Completions per client, tags without the client bits.
    mailboxes: Vec<Vec<Done>>,
    scratch: Vec<Done>,
    now_ns: u64,
    /// Clients whose mailbox received a completion since the last [`SharedDevice::settle`].
    woken: Vec<bool>,
}

impl State {
    fn advance(&mut self, now_ns: u64) -> u64 {
        let now = now_ns.max(self.now_ns);
        self.now_ns = now;
        self.model.advance(now, &mut self.scratch);
        for d in self.scratch.drain(..) {
            let client = (d.tag >> 32) as usize;
            self.woken[client] = true;
            self.mailboxes[client].push(Done { tag: d.tag & 0xFFFF_FFFF, at_ns: d.at_ns });
        }
        now
    }
}

impl SharedDevice {
    /// Shares `model` among `clients` clients, each with room for `per_client` completions.
    pub fn new(model: Box<dyn Model>, clients: usize, per_client: usize) -> SharedDevice {
        let clients = clients.max(1);
        SharedDevice {
            state: Mutex::new(State {
                model,
                mailboxes: (0..clients).map(|_| Vec::with_capacity(per_client)).collect(),
                scratch: Vec::with_capacity(clients * per_client),
                now_ns: 0,
                woken: vec![false; clients],
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Submits `req` (tag below 2^32) from `client` at `now_ns`.
    pub fn submit(&self, client: usize, now_ns: u64, req: Request) {
        debug_assert!(req.tag < 1 << 32, "SharedDevice tags must be below 2^32");
        let mut s = self.lock();
        debug_assert!(client < s.mailboxes.len());
        let now = s.advance(now_ns);
        s.model.submit(now, Request { tag: (client as u64) << 32 | (req.tag & 0xFFFF_FFFF), ..req });
    }

    /// Appends `client`'s completions up to `now_ns` to `out` and returns when the device next changes (any
    /// client's request), None when idle.
    pub fn poll(&self, client: usize, now_ns: u64, out: &mut Vec<Done>) -> Option<u64> {
        let mut s = self.lock();
        s.advance(now_ns);
        out.append(&mut s.mailboxes[client]);
        s.model.next_event_ns()
    }

    /// Moves the device to `now_ns`, calls `woken` once for each client that received a completion since the
    /// last call, and returns when the device next changes (None when idle): what a virtual-time scheduler
    /// needs to know who is due and when.
    pub fn settle(&self, now_ns: u64, woken: &mut dyn FnMut(usize)) -> Option<u64> {
        let mut s = self.lock();
        s.advance(now_ns);
        for (client, w) in s.woken.iter_mut().enumerate() {
            if std::mem::take(w) {
                woken(client);
            }
        }
        s.model.next_event_ns()
    }

    /// Requests of all clients in the device.
    pub fn in_flight(&self) -> usize {
        self.lock().model.in_flight()
    }

    /// How full the device's write-back cache got so far ([`crate::Model::write_cache_fill`]).
    pub fn write_cache_fill(&self) -> Option<crate::WriteCacheFill> {
        self.lock().model.write_cache_fill()
    }

    /// The model's analytic mean service time (see [`Model::expected_service_ns`]).
    pub fn expected_service_ns(&self, write: bool, len: u32) -> f64 {
        self.lock().model.expected_service_ns(write, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::Fixed;

    #[test]
    fn completions_go_back_to_their_client() {
        let d = SharedDevice::new(Box::new(Fixed::new(100, 1, 8)), 2, 8);
        d.submit(0, 0, Request::read(5, 0, 4096));
        d.submit(1, 10, Request::write(5, 0, 4096));
        let mut out = Vec::new();
        assert_eq!(d.poll(1, 50, &mut out), Some(100));
        assert!(out.is_empty());
        // Client 0 polls late; time from another thread that lags is clamped.
        assert_eq!(d.poll(1, 150, &mut out), Some(200));
        assert!(out.is_empty());
        assert_eq!(d.poll(0, 120, &mut out), Some(200));
        assert_eq!(out, vec![Done { tag: 5, at_ns: 100 }]);
        out.clear();
        assert_eq!(d.poll(1, 200, &mut out), None);
        assert_eq!(out, vec![Done { tag: 5, at_ns: 200 }]);
    }
}
