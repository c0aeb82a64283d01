//! iolab: a storage performance lab in one tool. This binary is glue: arguments in, `iolab-*` crates in
//! pipeline order, messages and exit codes out.
//!
//! Exit codes: 0 ok; 1 the run finished but I/O errors occurred or its verdict is FAIL; 2 usage, configuration or environment
//! error (nothing was created or changed); 3 the work was done (and saved) but an output was not written (a
//! full disk; the file at its path is as it was); 130 interrupted (Ctrl-C, SIGTERM or SIGHUP: once, the partial
//! result is still printed and saved; twice, at once). A closed stdout (`iolab run | head`) is 0.

// Option docs are also the `--help` text, which shows TOML tables such as [worker.NAME]; escaping them for
// rustdoc would show the backslashes to users.
#![allow(rustdoc::broken_intra_doc_links)]

/// This crate's `eprintln!`: formats as the standard one, then writes through [`stderr::line`], escaped. It
/// shadows the standard macro in every module below, so no message reaches stderr unescaped.
macro_rules! eprintln {
    () => {
        $crate::stderr::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::stderr::line(format_args!($($arg)*))
    };
}

/// This crate's `eprint!`: [`stderr::text`], escaped, as `eprintln!` is.
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::stderr::text(format_args!($($arg)*))
    };
}

// Flags and exits (leaves: they depend on no command module).
mod args;
mod exit;
mod output;
mod ranks;

// From flags to jobs, and what runs them.
mod exec;
mod http;
mod job;
mod loadgen;
mod metrics;
mod points;
mod profile;
mod progress;
mod replaying;
mod saving;
mod session;
mod signals;
mod stderr;
mod steady;
mod trace_file;

// The commands, one module each; none imports another.
mod ai_cmd;
mod catalog_cmd;
mod compare;
mod db_check;
mod db_cmd;
mod db_copy;
mod db_run;
mod db_tpch;
mod db_ycsb;
mod derive_check;
mod docs_cmd;
mod find_max;
mod import_cmd;
mod mrc_cmd;
mod profiles_cmd;
mod replay_cmd;
mod report_cmd;
mod run;
mod sweep;
mod trace_cmd;
mod verify_cmd;
mod write_back_signal;

use clap::FromArgMatches;

fn main() {
    stderr::escape_panic_messages();
    let parsed = args::command().try_get_matches().and_then(|m| args::Cli::from_arg_matches(&m));
    let mut cli = match parsed {
        Ok(c) => c,
        Err(e) if e.use_stderr() => {
            if let Some(answer) = args::fio_switch_value(&e) {
                eprint!("{answer}");
                std::process::exit(2);
            }
            // The typed value is quoted: escaped, as every message (clap's colours go with it).
            eprint!("{}", e.render());
            std::process::exit(2);
        }
        Err(e) => {
            let _ = e.print();
            std::process::exit(0);
        }
    };
    // Under mpirun or srun (with MPI compiled in), this process is one rank of a run over several hosts.
    let session = ranks::join(&mut cli.command);
    if runs_long_without_stopping(&cli.command) {
        signals::exit_on_first_signal();
    }
    let result = match cli.command {
        args::Command::Run(a) if a.profile.find_max => find_max::find_max(&a),
        args::Command::Run(a) => run::run(&a),
        args::Command::Profiles(a) => profiles_cmd::profiles_cmd(&a),
        args::Command::Sweep(a) => sweep::sweep(&a),
        args::Command::Runs(a) => catalog_cmd::runs(&a),
        args::Command::Show(a) => catalog_cmd::show(&a),
        args::Command::Export(a) => catalog_cmd::export(&a),
        args::Command::Rm(a) => catalog_cmd::rm(&a),
        args::Command::Compare(a) => compare::compare(&a),
        args::Command::Report(a) => report_cmd::report(&a),
        args::Command::Verify(a) => verify_cmd::verify_cmd(&a),
        args::Command::Import(a) => import_cmd::import(&a),
        args::Command::Trace(a) => trace_cmd::trace(&a),
        args::Command::Mrc(a) => mrc_cmd::mrc(&a),
        args::Command::Replay(a) => replay_cmd::replay(&a),
        args::Command::Db(a) => db_cmd::db(&a),
        args::Command::Ai(a) => ai_cmd::ai(&a),
        args::Command::Completions { shell } => docs_cmd::completions(shell),
        args::Command::Man { dir } => docs_cmd::man(dir.as_deref()),
    };
    let code = match result {
        // A command the user interrupted (Ctrl-C, SIGTERM, SIGHUP) exits 130 whatever it had found, so a
        // script can tell a partial result (printed, written and saved all the same) from a complete one.
        Ok(_) if signals::interrupted() => exit::INTERRUPTED,
        Ok(status) => status.code(),
        Err(e) => {
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                0
            } else {
                error_code(&e, session.as_ref())
            }
        }
    };
    iolab_device::remove_scratch_files();
    if let Some(s) = session {
        s.finish();
    }
    std::process::exit(code);
}

/// Commands (or their first phase) that read or write much and cannot stop cleanly: the first signal removes
/// their temporary files and exits 130 (a replay's run, and a capture, switch to draining when they start).
fn runs_long_without_stopping(command: &args::Command) -> bool {
    matches!(
        command,
        args::Command::Import(_) | args::Command::Trace(_) | args::Command::Mrc(_) | args::Command::Replay(_)
    )
}

/// Says `e` (on one host; over several, as [`ranks::end_on_error`] decides) and returns its exit code.
fn error_code(e: &anyhow::Error, session: Option<&iolab_multihost::RankSession>) -> i32 {
    let code = if e.chain().any(|c| c.is::<exit::OutputsNotWritten>()) {
        exit::OUTPUTS_NOT_WRITTEN
    } else if signals::interrupted() {
        exit::INTERRUPTED
    } else {
        2
    };
    let text = format_error(e);
    if let Some(silent) = session.and_then(|s| ranks::end_on_error(s, e, &text, code)) {
        return silent;
    }
    eprintln!("error: {text}");
    code
}

/// The error chain on one line, outermost context first (hyperfine and ripgrep print `{:#}`), without the
/// internal usage marker. Multi-line causes ("likely cause", "hint") keep their lines.
fn format_error(e: &anyhow::Error) -> String {
    e.chain()
        .map(|c| c.to_string())
        .filter(|s| s != "usage" && s != "outputs not written" && s != "agreed by every rank")
        .collect::<Vec<_>>()
        .join(": ")
}
