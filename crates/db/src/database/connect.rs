//! A bounded connection to PostgreSQL: the driver's `connect_timeout` bounds the TCP connect, not the
//! start-up exchange after it, so a server that accepts and never answers would hold iolab for ever. A leaf
//! module: the private server ([`super::server`]) waits for its server with it, and the engine
//! ([`super::postgres`]) connects with it.

use crate::WorkloadError;
use postgres::{Client, NoTls};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Connects with `config`, waiting at most `timeout` for the connection and its start-up exchange (which
/// the driver's own `connect_timeout` leaves unbounded: a server that accepts and never answers would hold
/// iolab for ever) and returning at once when `stop` is raised. The attempt runs on a thread of its own,
/// left behind (its socket closed when it ends or iolab exits) on a timeout or a stop. `shown` names the
/// server in the error; `scrub` takes the password out of the driver's message.
pub(crate) fn connect_bounded(
    config: &postgres::Config,
    timeout: Duration,
    stop: Option<&AtomicBool>,
    shown: &str,
    scrub: &dyn Fn(&str) -> String,
) -> Result<Client, WorkloadError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let config = config.clone();
    std::thread::Builder::new()
        .name("iolab-pg-connect".into())
        .spawn(move || {
            let _ = tx.send(config.connect(NoTls));
        })
        .map_err(|e| WorkloadError::io("starting a thread to connect to PostgreSQL", e))?;
    let deadline = Instant::now() + timeout;
    loop {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err(WorkloadError::Interrupted);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(WorkloadError::Setup(format!(
                "cannot connect to {shown}: no answer within {} s (connect_timeout)\n  \
                 hint: check the server is up and answering, or give a longer connect_timeout=SECONDS in --url",
                timeout.as_secs_f64()
            )));
        }
        match rx.recv_timeout(left.min(Duration::from_millis(100))) {
            Ok(Ok(client)) => return Ok(client),
            Ok(Err(e)) => {
                return Err(WorkloadError::Setup(format!(
                    "cannot connect to {shown}: {}",
                    scrub(&with_causes(&e))
                )))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(WorkloadError::Setup(format!("cannot connect to {shown}: the attempt ended")))
            }
        }
    }
}

/// `e` and the errors beneath it (`error connecting to server: Connection refused (os error 111)`).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    text
}
