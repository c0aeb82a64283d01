//! Users-and-transactions flags of `iolab run` (LoadGen's model; docs/LOADGEN.md).

use clap::Args;

/// Users-and-transactions flags of `iolab run`.
#[derive(Args, Debug, Default, Clone)]
pub struct LoadgenFlags {
    /// Users issuing the job's transactions ([users] count; needs [[transaction]] tables in the job or profile).
    /// Check "tasks dispatched/completed" and the backlog in the result.
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = "Users and transactions")]
    pub users: Option<String>,
    /// Transactions per user, COUNT/DURATION: '500/8h' (500 per 8-hour day), '62.5/h', '1/min' ([users] rate).
    /// Sets rate mode.
    #[arg(long, value_name = "RATE", allow_hyphen_values = true, help_heading = "Users and transactions")]
    pub user_rate: Option<String>,
    /// Stress mode: every user runs transactions back to back, --outstanding at a time, instead of at a rate
    /// ([users] mode = "stress").
    #[arg(long, help_heading = "Users and transactions")]
    pub stress: bool,
    /// Transactions a user may have in progress at once, 1-64. Default 1 ([users] outstanding).
    #[arg(long, value_name = "N", allow_hyphen_values = true, help_heading = "Users and transactions")]
    pub outstanding: Option<String>,
}
