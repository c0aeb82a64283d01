//! Ctrl-C, SIGTERM and SIGHUP (a closed terminal or SSH session), the same for every command that runs long.
//! Where the work can stop cleanly ([`stop_flag`]: a run, a sweep, a trace capture) the first signal asks it
//! to: workers drain what is in flight, the partial result is printed and saved (marked `partial`), a capture
//! writes what it recorded, and the process exits 130. Where it cannot ([`exit_on_first_signal`]: converting,
//! importing, reading a trace for a replay, a miss-ratio curve) the first signal exits at once. Either way an
//! immediate exit (code 130) first removes what the command had made for itself ([`clean_up`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The first signal exits at once (the command under way cannot stop cleanly).
static EXIT_ON_FIRST: AtomicBool = AtomicBool::new(false);

/// A signal arrived. The stop flag alone does not say so: verification (`--verify-fail stop`) and
/// `--stop-on-error` raise it too.
static SIGNALED: AtomicBool = AtomicBool::new(false);

/// The process-wide stop flag, raised by the first Ctrl-C, SIGTERM or SIGHUP. Installs the handlers on first use, so
/// a sweep's many runs share one flag and one handler.
pub fn stop_flag(quiet: bool) -> Arc<AtomicBool> {
    EXIT_ON_FIRST.store(false, Ordering::Relaxed);
    install_once(quiet)
}

/// For work that cannot stop cleanly, until [`stop_flag`] is called: the first Ctrl-C, SIGTERM or SIGHUP
/// removes temporary and scratch files and exits 130 at once.
pub fn exit_on_first_signal() {
    EXIT_ON_FIRST.store(true, Ordering::Relaxed);
    install_once(true);
}

/// Installs the handlers on first use, so every phase of a command shares one flag and one handler.
fn install_once(quiet: bool) -> Arc<AtomicBool> {
    STOP.get_or_init(|| {
        let stop = Arc::new(AtomicBool::new(false));
        install(stop.clone(), quiet);
        stop
    })
    .clone()
}

/// True once the user interrupted iolab (Ctrl-C, SIGTERM, SIGHUP).
pub fn interrupted() -> bool {
    SIGNALED.load(Ordering::Relaxed)
}

/// True once the run was asked to stop: by a signal, or by the run itself (a verification mismatch under
/// `--verify-fail stop`, an I/O error under `--stop-on-error`).
pub fn stop_requested() -> bool {
    STOP.get().is_some_and(|s| s.load(Ordering::Relaxed))
}

/// Installs the handlers; `stop` is raised on the first signal.
fn install(stop: Arc<AtomicBool>, quiet: bool) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::Builder::new()
        .name("iolab-signals".into())
        .spawn(move || {
            let mut count = 0;
            for _ in signals.forever() {
                count += 1;
                if count > 1 || EXIT_ON_FIRST.load(Ordering::Relaxed) {
                    clean_up();
                    eprintln!("\niolab: interrupted; scratch and temporary files removed");
                    std::process::exit(130);
                }
                SIGNALED.store(true, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
                exit_after_grace();
                if !quiet {
                    eprintln!(
                        "\niolab: stopping: draining in-flight I/O (press Ctrl-C again to quit at once)"
                    );
                }
            }
        })
        .ok();
}

/// How long the work has, after the first signal, to stop cleanly before iolab quits as on a second one.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// One signal ends iolab: work that does not stop within [`STOP_GRACE`] of the first signal (a wait that
/// cannot see the stop flag: a query on a server that stopped answering, an I/O on a frozen file system)
/// is ended as a second signal would end it, undoing what iolab made ([`clean_up`]).
fn exit_after_grace() {
    let _ = std::thread::Builder::new().name("iolab-stop-grace".into()).spawn(|| {
        std::thread::sleep(STOP_GRACE);
        clean_up();
        eprintln!(
            "\niolab: interrupted, and the work did not stop within {} s; quit, scratch and temporary files removed",
            STOP_GRACE.as_secs()
        );
        std::process::exit(130);
    });
}

/// What an exit that skips destructors must undo: scratch files and outputs' temporary files (both in the
/// scratch registry), cgroup throttles and accounts, a trace capture's tracefs instance, and `iolab db`'s private database
/// servers and directories, then its memory cgroups (once the servers in them are gone); the marks of iolab's
/// own files being written are set again (`iolab_device::ownership::seal_on_exit`).
pub fn clean_up() {
    iolab_db::cleanup_on_exit();
    iolab_ai::cleanup_on_exit();
    iolab_device::memlimit::cleanup_on_exit();
    iolab_device::remove_scratch_files();
    iolab_device::throttle::cleanup_on_exit();
    iolab_device::ioacct::cleanup_on_exit();
    iolab_trace::capture::remove_live_instance();
    iolab_device::ownership::seal_on_exit();
}
