//! Ctrl-C, SIGTERM and SIGHUP (a closed terminal or SSH session). The first signal asks the workers to stop
//! issuing; they drain what is in flight, the partial result is printed and saved (marked `partial`), and the
//! process exits 130. A second signal exits at once with code 130, still removing scratch files.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// A signal arrived. The stop flag alone does not say so: verification (`--verify-fail stop`) and
/// `--stop-on-error` raise it too.
static SIGNALED: AtomicBool = AtomicBool::new(false);

/// The process-wide stop flag, raised by the first Ctrl-C, SIGTERM or SIGHUP. Installs the handlers on first use, so
/// a sweep's many runs share one flag and one handler.
pub fn stop_flag(quiet: bool) -> Arc<AtomicBool> {
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
                if count == 1 {
                    SIGNALED.store(true, Ordering::Relaxed);
                    stop.store(true, Ordering::Relaxed);
                    if !quiet {
                        eprintln!(
                            "\niolab: stopping: draining in-flight I/O (press Ctrl-C again to quit at once)"
                        );
                    }
                } else {
                    iolab_device::remove_scratch_files();
                    iolab_device::throttle::cleanup_on_exit();
                    eprintln!("\niolab: interrupted; scratch files removed");
                    std::process::exit(130);
                }
            }
        })
        .ok();
}
