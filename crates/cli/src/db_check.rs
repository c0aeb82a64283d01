//! `iolab db check --dir DIR`: a database kept by an earlier run (`--keep`) opened as it was left and
//! checked (`iolab_db::kept`): after a crash test, did what the database acknowledged survive? The
//! directory is claimed as every `--dir` is (iolab's own, not in use, held for the check) and nothing in
//! it is removed. Exit 0 when every check passed, 1 when one failed.

use crate::args::db::CheckArgs;
use crate::exit::{usage, ExitStatus};
use anyhow::Result;
use iolab_db::kept::KeptCheck;
use iolab_device::{DirState, WriteGate};

/// Runs `iolab db check`.
pub fn check(a: &CheckArgs) -> Result<ExitStatus> {
    let mut gate = WriteGate::new();
    let owners: Vec<u32> = iolab_db::database::server::server_account()
        .ok()
        .flatten()
        .map(|account| account.uid)
        .into_iter()
        .collect();
    let held = gate.database_dir("--dir", &a.dir, &owners).map_err(usage)?;
    if held.state() == DirState::New {
        return Err(usage(format!(
            "'{}' does not exist: there is no kept database to check (keep one with `iolab db ... --dir {} --keep`)",
            a.dir, a.dir
        )));
    }
    let json = crate::output::claim(&mut gate, "--json", a.json.as_deref())?;
    let stop = crate::signals::stop_flag(a.quiet);
    let found =
        iolab_db::kept::check(held.path(), &stop).map_err(|e| usage(format!("--dir '{}': {e}", a.dir)))?;
    drop(held);
    if let Some(out) = json {
        out.write(serde_json::to_string_pretty(&found)?.as_bytes()).map_err(usage)?;
    }
    if !a.quiet {
        crate::output::print(&text(&a.dir, &found))?;
    }
    Ok(if found.passed { ExitStatus::Ok } else { ExitStatus::Fail })
}

/// The check in words: one line per check, then the verdict.
fn text(dir: &str, found: &KeptCheck) -> String {
    let workload = found.workload.unwrap_or("no workload iolab knows");
    let mut lines =
        vec![format!("kept database in '{dir}': {} ({}), {workload}", found.engine, found.version)];
    if let Some(what) = &found.recovered {
        lines.push(format!("  recovered: {what}"));
    }
    for c in &found.checks {
        let verdict =
            if c.passed { "PASS".to_string() } else { format!("FAIL ({} violations)", c.violations) };
        lines.push(format!("  {} {verdict}: {}", c.condition, c.rule));
        if let Some(example) = &c.example {
            lines.push(format!("      e.g. {example}"));
        }
    }
    if found.checks.is_empty() {
        lines.push(
            "  nothing to check: the engine has no whole-database check and the workload no invariant".into(),
        );
    }
    lines.push(format!("consistency {}", if found.passed { "PASS" } else { "FAIL" }));
    lines.join("\n")
}
