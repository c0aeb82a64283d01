//! LoadGen-style users and transactions: the `[users]` table and the `[[transaction]]` tables of a job file.
//!
//! Exchange LoadGen (SOURCES.md §3) drives a server with N simulated users, each doing a number of tasks per
//! simulated day; iolab maps that onto storage as *transactions*: named sequences of I/Os ("send mail" = a log
//! append, two 32K database writes and a 32K database read), each step on a target of the job's `[targets]`.
//!
//! ```toml
//! [users]
//! count = 1000
//! rate = "500/8h"          # transactions per user: "N/DUR" ("500/8h", "62.5/h", "1/min")
//! mode = "rate"            # or "stress": as fast as possible, `outstanding` transactions per user at once
//! outstanding = 1
//! workers = 2              # threads the users are spread over
//!
//! [[transaction]]
//! name = "send_mail"
//! weight = 20
//! steps = [
//!   { target = "@log", rw = "write", bs = "4k" },
//!   { target = "@db", rw = "randwrite", bs = "32k", count = 2 },
//!   { target = "@db", rw = "randread", bs = "32k" },
//! ]
//! ```
//!
//! This module only parses and checks each value where it is typed (so errors name the key and quote the
//! text); resolving targets and splitting users over workers is the plan's job (`iolab_plan::loadgen`).
//! [`UsersSpec::set`] is the one parser per `[users]` key, used by the job file and the command line alike.

use crate::error::{suggest, Place, SpecError};
use crate::target::TargetSpec;
use crate::units::{parse_count, parse_duration_ns, parse_size, Arrival, Dist, MAX_BLOCK_SIZE};
use serde::{Deserialize, Serialize};

/// Keys of `[users]`.
pub const USERS_KEYS: &[&str] = &["count", "rate", "mode", "outstanding", "arrival", "workers"];
/// Keys of one `[[transaction]]`.
pub const TRANSACTION_KEYS: &[&str] = &["name", "weight", "steps"];
/// Keys of one step of a transaction.
pub const STEP_KEYS: &[&str] = &["target", "rw", "bs", "count", "dist"];
/// Most users in one run.
pub const MAX_USERS: u32 = 1_000_000;
/// Most outstanding transactions per user in stress mode.
pub const MAX_OUTSTANDING: u32 = 64;
/// Most transaction types in one job.
pub const MAX_TRANSACTIONS: usize = 64;
/// Most steps in one transaction (after `count` is expanded).
pub const MAX_STEPS: usize = 256;
/// Highest rate per user: one transaction per millisecond.
pub const MAX_PER_USER_PER_HOUR: f64 = 3_600_000.0;

/// How users issue transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LoadgenMode {
    /// LoadGen's normal mode: each user issues `rate` transactions in open loop (scheduled arrivals), whether
    /// or not the earlier ones finished.
    #[default]
    Rate,
    /// LoadGen's stress mode: every user runs transactions back to back, `outstanding` at a time.
    Stress,
}

impl LoadgenMode {
    /// The name as typed and reported.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadgenMode::Rate => "rate",
            LoadgenMode::Stress => "stress",
        }
    }
}

/// The `[users]` table (every field optional, so command-line flags can be layered on top).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UsersSpec {
    /// Number of users.
    pub count: Option<u32>,
    /// Transactions per user per hour (from `rate`).
    pub per_user_per_hour: Option<f64>,
    /// `rate` as typed, for the report.
    pub rate_text: Option<String>,
    /// Rate or stress mode.
    pub mode: Option<LoadgenMode>,
    /// Transactions a user may have in progress at once (default 1).
    pub outstanding: Option<u32>,
    /// Inter-arrival law in rate mode (default poisson).
    pub arrival: Option<Arrival>,
    /// Worker threads the users are spread over (default 1).
    pub workers: Option<u32>,
}

fn whole(place: &Place, text: &str, lo: u32, hi: u32) -> Result<u32, SpecError> {
    let expected = || format!("a whole number from {lo} to {hi}");
    let v = parse_count(text).map_err(|_| SpecError::invalid(place, text, expected()))?;
    if v.fract() != 0.0 || v < lo as f64 || v > hi as f64 {
        return Err(SpecError::invalid(place, text, expected()));
    }
    Ok(v as u32)
}

/// Parses a per-user transaction rate `COUNT/DURATION` into transactions per hour: `500/8h` (seed 003's 500
/// per 8-hour day) = 62.5, `62.5/h` = 62.5, `1/min` = 60, `2/s` = 7200.
pub fn parse_user_rate(text: &str) -> Result<f64, String> {
    const EXP: &str =
        "transactions per user as COUNT/DURATION, e.g. '500/8h' (500 per 8-hour day), '62.5/h' or '1/min'";
    let (count, per) = text.trim().split_once('/').ok_or_else(|| EXP.to_string())?;
    let n = parse_count(count).map_err(|_| EXP.to_string())?;
    let per = per.trim();
    let per: String = match per {
        "hour" => "1h".into(),
        "day" => return Err(format!("{EXP}; say how long the day is, e.g. '500/8h'")),
        p if p.starts_with(|c: char| c.is_ascii_digit()) => p.into(),
        p => format!("1{p}"),
    };
    let ns = parse_duration_ns(&per).map_err(|_| EXP.to_string())?;
    if ns == 0 || n <= 0.0 {
        return Err(format!("{EXP}; both numbers above 0"));
    }
    let per_hour = n * 3600e9 / ns as f64;
    if !per_hour.is_finite() || per_hour > MAX_PER_USER_PER_HOUR {
        return Err(format!("{EXP}; at most one transaction per millisecond per user"));
    }
    Ok(per_hour)
}

impl UsersSpec {
    /// Sets one `[users]` key from its text; `Ok(false)` when `key` is not one.
    pub fn set(&mut self, key: &str, text: &str, place: &Place) -> Result<bool, SpecError> {
        match key {
            "count" => self.count = Some(whole(place, text, 1, MAX_USERS)?),
            "rate" => {
                self.per_user_per_hour =
                    Some(parse_user_rate(text).map_err(|e| SpecError::invalid(place, text, e))?);
                self.rate_text = Some(text.trim().to_string());
            }
            "mode" => {
                self.mode = Some(match text.trim() {
                    "rate" | "normal" => LoadgenMode::Rate,
                    "stress" => LoadgenMode::Stress,
                    _ => return Err(SpecError::invalid(place, text, "'rate' or 'stress'")),
                })
            }
            "outstanding" => self.outstanding = Some(whole(place, text, 1, MAX_OUTSTANDING)?),
            "arrival" => {
                self.arrival = Some(match text.trim() {
                    "fixed" | "uniform" => Arrival::Fixed,
                    "poisson" | "exponential" => Arrival::Poisson,
                    _ => return Err(SpecError::invalid(place, text, "'fixed' or 'poisson'")),
                })
            }
            "workers" => self.workers = Some(whole(place, text, 1, crate::units::MAX_WORKERS)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `self` with every field that `over` sets replaced by `over`'s value.
    pub fn merged(&self, over: &UsersSpec) -> UsersSpec {
        UsersSpec {
            count: over.count.or(self.count),
            per_user_per_hour: over.per_user_per_hour.or(self.per_user_per_hour),
            rate_text: over.rate_text.clone().or_else(|| self.rate_text.clone()),
            mode: over.mode.or(self.mode),
            outstanding: over.outstanding.or(self.outstanding),
            arrival: over.arrival.or(self.arrival),
            workers: over.workers.or(self.workers),
        }
    }
}

/// One I/O of a transaction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepSpec {
    /// Where it goes: `@NAME` of `[targets]`, or any target; `None` = the job's target.
    pub target: Option<TargetSpec>,
    /// Write (true) or read.
    pub write: bool,
    /// Random (true) or sequential offsets.
    pub random: bool,
    /// Transfer size in bytes.
    pub bs: u64,
    /// Spread of random offsets (default uniform).
    pub dist: Option<Dist>,
}

/// One `[[transaction]]`: a named, weighted sequence of steps, run in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransactionSpec {
    /// Name, unique in the job (reported per name).
    pub name: String,
    /// Relative share among the transaction types (default 1).
    pub weight: u32,
    /// The I/Os, in order (`count` already expanded).
    pub steps: Vec<StepSpec>,
}

/// The `[users]` table and the `[[transaction]]` tables.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadgenSpec {
    /// Who issues transactions, how fast.
    pub users: UsersSpec,
    /// What a transaction does.
    pub transactions: Vec<TransactionSpec>,
}

fn scalar(v: &toml::Value, place: &Place) -> Result<String, SpecError> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        other => Err(SpecError::invalid(place, other.to_string(), "a single value (string or number)")),
    }
}

fn unknown(file: &str, table: &str, key: &str, known: &[&str]) -> SpecError {
    SpecError::UnknownKey {
        file: file.into(),
        table: table.into(),
        key: key.into(),
        suggestion: suggest(key, known).map(str::to_string),
    }
}

fn read_step(v: &toml::Value, file: &str, table: &str, out: &mut Vec<StepSpec>) -> Result<(), SpecError> {
    let conflict = |key: &str, message: &str| SpecError::Conflict {
        place: Place::Key { file: file.into(), table: table.into(), key: key.into() },
        message: message.into(),
    };
    let t = v.as_table().ok_or_else(|| {
        conflict(
            "steps",
            "each step is a table such as { target = \"@db\", rw = \"randread\", bs = \"32k\" }",
        )
    })?;
    let mut step = StepSpec { target: None, write: false, random: true, bs: 4096, dist: None };
    let mut rw_seen = false;
    let mut count = 1u32;
    for (key, fv) in t {
        let place = Place::Key { file: file.into(), table: table.into(), key: key.clone() };
        let text = scalar(fv, &place)?;
        match key.as_str() {
            "target" => {
                step.target =
                    Some(TargetSpec::parse(&text).map_err(|e| SpecError::invalid(&place, &text, e))?)
            }
            "rw" => {
                (step.write, step.random) = match text.trim() {
                    "read" => (false, false),
                    "write" => (true, false),
                    "randread" => (false, true),
                    "randwrite" => (true, true),
                    _ => {
                        return Err(SpecError::invalid(
                            &place,
                            &text,
                            "one of read, write (sequential), randread, randwrite",
                        ))
                    }
                };
                rw_seen = true;
            }
            "bs" => {
                let b = parse_size(&text).map_err(|e| SpecError::invalid(&place, &text, e))?;
                if b == 0 || b > MAX_BLOCK_SIZE {
                    return Err(SpecError::invalid(
                        &place,
                        &text,
                        "a size above 0 and at most 64M, e.g. '32k'",
                    ));
                }
                step.bs = b;
            }
            "count" => count = whole(&place, &text, 1, MAX_STEPS as u32)?,
            "dist" => {
                let d = Dist::parse(&text).map_err(|e| SpecError::invalid(&place, &text, e))?;
                if matches!(d, Dist::Sequence { .. } | Dist::Sprandom { .. }) {
                    let why = "uniform, zipf:THETA, pareto:H or zones:... (a step's offsets are drawn; a \
                               sequence of blocks or sprandom is for access specs)";
                    return Err(SpecError::invalid(&place, &text, why));
                }
                step.dist = Some(d);
            }
            _ => return Err(unknown(file, table, key, STEP_KEYS)),
        }
    }
    if !rw_seen {
        return Err(conflict("rw", "each step needs 'rw': read, write (sequential), randread or randwrite"));
    }
    for _ in 0..count {
        out.push(step.clone());
    }
    if out.len() > MAX_STEPS {
        return Err(conflict("steps", &format!("at most {MAX_STEPS} steps per transaction")));
    }
    Ok(())
}

fn read_transaction(v: &toml::Value, i: usize, file: &str) -> Result<TransactionSpec, SpecError> {
    let table = format!("[[transaction]] #{}", i + 1);
    let conflict = |table: &str, key: &str, message: String| SpecError::Conflict {
        place: Place::Key { file: file.into(), table: table.into(), key: key.into() },
        message,
    };
    let t = v.as_table().ok_or_else(|| {
        conflict(&table, "transaction", "expected a table of name, weight and steps".into())
    })?;
    let mut name = None;
    let mut weight = 1u32;
    let mut steps = Vec::new();
    let mut steps_seen = false;
    for (key, fv) in t {
        if key == "name" {
            let place = Place::Key { file: file.into(), table: table.clone(), key: key.clone() };
            let text = scalar(fv, &place)?;
            let ok = !text.is_empty()
                && text.len() <= 64
                && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | '.'));
            if !ok {
                return Err(SpecError::invalid(
                    &place,
                    &text,
                    "a name of 1 to 64 letters, digits, spaces, '_', '-' or '.'",
                ));
            }
            name = Some(text);
        }
    }
    let table = match &name {
        Some(n) => format!("[[transaction]] '{n}'"),
        None => table,
    };
    for (key, fv) in t {
        let place = Place::Key { file: file.into(), table: table.clone(), key: key.clone() };
        match key.as_str() {
            "name" => {}
            "weight" => weight = whole(&place, &scalar(fv, &place)?, 0, 1_000_000)?,
            "steps" | "step" => {
                steps_seen = true;
                let items = fv.as_array().ok_or_else(|| {
                    conflict(&table, key, "expected a list of steps: steps = [ { ... }, { ... } ]".into())
                })?;
                for (k, item) in items.iter().enumerate() {
                    read_step(item, file, &format!("{table}, step {}", k + 1), &mut steps)?;
                }
            }
            _ => return Err(unknown(file, &table, key, TRANSACTION_KEYS)),
        }
    }
    let name = name.ok_or_else(|| conflict(&table, "name", "each transaction needs a 'name'".into()))?;
    if !steps_seen || steps.is_empty() {
        return Err(conflict(&table, "steps", "each transaction needs at least one step in 'steps'".into()));
    }
    Ok(TransactionSpec { name, weight, steps })
}

impl LoadgenSpec {
    /// Parses `[users]` and `[[transaction]]` from the job file's top-level table (either may be missing, but
    /// not both; `[users]` without transactions is an error).
    pub fn from_job_table(table: &toml::Table, file: &str) -> Result<Self, SpecError> {
        let mut spec = LoadgenSpec::default();
        let top = |key: &str, message: &str| SpecError::Conflict {
            place: Place::Key { file: file.into(), table: String::new(), key: key.into() },
            message: message.into(),
        };
        if let Some(u) = table.get("users") {
            let t = u.as_table().ok_or_else(|| top("users", "expected a table: [users] with count = N"))?;
            for (key, v) in t {
                let place = Place::Key { file: file.into(), table: "[users]".into(), key: key.clone() };
                if !spec.users.set(key, &scalar(v, &place)?, &place)? {
                    return Err(unknown(file, "[users]", key, USERS_KEYS));
                }
            }
        }
        if let Some(tx) = table.get("transaction") {
            let items = tx.as_array().ok_or_else(|| {
                top("transaction", "expected an array of tables, written [[transaction]] (two brackets)")
            })?;
            for (i, item) in items.iter().enumerate() {
                let t = read_transaction(item, i, file)?;
                if spec.transactions.iter().any(|o| o.name == t.name) {
                    return Err(top("transaction", &format!("two transactions are named '{}'", t.name)));
                }
                spec.transactions.push(t);
            }
            if spec.transactions.len() > MAX_TRANSACTIONS {
                return Err(top("transaction", &format!("at most {MAX_TRANSACTIONS} transaction types")));
            }
            if spec.transactions.iter().all(|t| t.weight == 0) {
                return Err(top("transaction", "every transaction has weight 0"));
            }
        }
        if spec.transactions.is_empty() {
            return Err(top(
                "users",
                "[users] needs at least one [[transaction]] table saying what a user's transaction does",
            ));
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<LoadgenSpec, SpecError> {
        let t: toml::Table = text.parse().unwrap();
        LoadgenSpec::from_job_table(&t, "j.toml")
    }

    const GOOD: &str = r#"
        [users]
        count = 1000
        rate = "500/8h"
        [[transaction]]
        name = "send_mail"
        weight = 3
        steps = [
          { target = "@log", rw = "write", bs = "4k" },
          { target = "@db", rw = "randwrite", bs = "32k", count = 2 },
          { target = "@db", rw = "randread", bs = "32k" },
        ]
        [[transaction]]
        name = "read_mail"
        [[transaction.steps]]
        rw = "randread"
        bs = "32k"
    "#;

    #[test]
    fn users_and_transactions_parse() {
        let s = parse(GOOD).unwrap();
        assert_eq!(s.users.count, Some(1000));
        assert_eq!(s.users.per_user_per_hour, Some(62.5));
        assert_eq!(s.transactions.len(), 2);
        let t = &s.transactions[0];
        assert_eq!((t.name.as_str(), t.weight, t.steps.len()), ("send_mail", 3, 4));
        assert!(t.steps[0].write && !t.steps[0].random && t.steps[0].bs == 4096);
        assert!(t.steps[1].write && t.steps[1].random && t.steps[1].bs == 32768);
        assert!(!t.steps[3].write && t.steps[3].random);
        assert_eq!(t.steps[1].target, Some(TargetSpec::Named { name: "db".into() }));
        assert_eq!(s.transactions[1].weight, 1);
        assert_eq!(s.transactions[1].steps[0].target, None);
    }

    #[test]
    fn user_rate_forms() {
        assert_eq!(parse_user_rate("500/8h"), Ok(62.5));
        assert_eq!(parse_user_rate("62.5/h"), Ok(62.5));
        assert_eq!(parse_user_rate("62.5/hour"), Ok(62.5));
        assert_eq!(parse_user_rate("1/min"), Ok(60.0));
        assert_eq!(parse_user_rate("2/s"), Ok(7200.0));
        for bad in ["500", "500/day", "0/h", "x/h", "500/8x", "1/1us"] {
            assert!(parse_user_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn unknown_users_key_suggests() {
        let e = parse("[users]\ncuont = 3\n[[transaction]]\nname='a'\nsteps=[{rw='read'}]\n").unwrap_err();
        assert_eq!(e.to_string(), "job file 'j.toml', [users]: unknown key 'cuont'; did you mean 'count'?");
    }

    #[test]
    fn bad_values_name_key_and_text() {
        let e =
            parse("[users]\nrate = \"fast\"\n[[transaction]]\nname='a'\nsteps=[{rw='read'}]\n").unwrap_err();
        assert!(e.to_string().starts_with("invalid value 'fast' for 'rate' in [users]"), "{e}");
        let e =
            parse("[users]\nmode = \"turbo\"\n[[transaction]]\nname='a'\nsteps=[{rw='read'}]\n").unwrap_err();
        assert!(e.to_string().contains("'turbo' for 'mode'"), "{e}");
        let e = parse("[[transaction]]\nname='a'\nsteps=[{rw='readd'}]\n").unwrap_err();
        assert!(e.to_string().contains("'readd' for 'rw' in [[transaction]] 'a', step 1"), "{e}");
        let e = parse("[[transaction]]\nname='a'\nsteps=[{rw='read', bss='4k'}]\n").unwrap_err();
        assert!(e.to_string().contains("unknown key 'bss'; did you mean 'bs'?"), "{e}");
        let e = parse("[[transaction]]\nname='a'\nstpes=[{rw='read'}]\n").unwrap_err();
        assert!(e.to_string().contains("unknown key 'stpes'; did you mean 'steps'?"), "{e}");
    }

    #[test]
    fn missing_or_duplicate_parts_are_errors() {
        assert!(parse("[users]\ncount = 3\n").is_err());
        assert!(parse("[[transaction]]\nname='a'\n").is_err());
        assert!(parse("[[transaction]]\nsteps=[{rw='read'}]\n").is_err());
        assert!(parse("[[transaction]]\nname='a'\nsteps=[{bs='4k'}]\n").is_err());
        assert!(parse("[transaction]\nname='a'\nsteps=[{rw='read'}]\n").is_err());
        let two = "[[transaction]]\nname='a'\nsteps=[{rw='read'}]\n[[transaction]]\nname='a'\nsteps=[{rw='read'}]\n";
        assert!(parse(two).unwrap_err().to_string().contains("two transactions are named 'a'"));
    }
}
