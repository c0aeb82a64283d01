//! Capturing a live block device's I/O through the kernel's block trace events (tracefs,
//! `block:block_rq_issue` and `block:block_rq_complete`). Linux only, and root only.

/// Why a capture could not run.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The machine cannot trace block I/O for this user.
    #[error("block tracing is unavailable: {0}")]
    Unavailable(String),
    /// The device is not a block device.
    #[error("{0}")]
    Device(String),
    /// Tracing failed midway.
    #[error("{0}")]
    Io(String),
}
