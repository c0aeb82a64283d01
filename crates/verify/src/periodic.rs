//! A thread that does one thing every period until it is stopped: the journal's checkpoints
//! ([`crate::Verifier::checkpoint_every`]) and the durable-write log's commits
//! ([`crate::durable::DurableLog::commit_every`]). The first error ends it and is returned by [`Periodic::stop`].

use crate::VerifyError;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// The thread; stopped (and joined) by [`Periodic::stop`] or when dropped.
pub struct Periodic {
    stop: Option<Sender<()>>,
    handle: Option<JoinHandle<Result<(), VerifyError>>>,
    /// What it does, for the message when it panicked.
    what: &'static str,
}

impl Periodic {
    /// Starts thread `name` calling `turn` every `period`; at the stop, once more when `last_turn`.
    pub(crate) fn spawn(
        name: &str,
        what: &'static str,
        period: Duration,
        last_turn: bool,
        mut turn: impl FnMut() -> Result<(), VerifyError> + Send + 'static,
    ) -> Periodic {
        let (tx, rx) = channel::<()>();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || loop {
                let stopping = !matches!(rx.recv_timeout(period), Err(RecvTimeoutError::Timeout));
                if !stopping || last_turn {
                    turn()?;
                }
                if stopping {
                    return Ok(());
                }
            })
            .unwrap_or_else(|e| panic!("spawn the {what} thread: {e}"));
        Periodic { stop: Some(tx), handle: Some(handle), what }
    }

    /// Stops the thread (after the turn in progress, if any, and its last turn if it has one) and returns the
    /// first error it met, which also ended it.
    pub fn stop(mut self) -> Result<(), VerifyError> {
        self.stop.take();
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(VerifyError::Config(format!("the {} thread panicked", self.what))),
            None => Ok(()),
        }
    }
}

impl Drop for Periodic {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
