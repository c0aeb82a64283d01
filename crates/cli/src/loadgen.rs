//! LoadGen-style users and transactions: command-line flags and the result section. STUB: filled in by the
//! LoadGen work.

use clap::Args;

/// Users-and-transactions flags of `iolab run`.
#[derive(Args, Debug, Default, Clone)]
pub struct LoadgenFlags {}
