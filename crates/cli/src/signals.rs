//! Ctrl-C and SIGTERM. The first signal asks the workers to stop issuing; they drain what is in flight and
//! the partial result is printed and saved (marked `partial`). A second signal exits at once with code 130,
//! still removing scratch files.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The process-wide stop flag, raised by the first Ctrl-C or SIGTERM. Installs the handlers on first use, so
/// a sweep's many runs share one flag and one handler.
pub fn stop_flag(quiet: bool) -> Arc<AtomicBool> {
    STOP.get_or_init(|| {
        let stop = Arc::new(AtomicBool::new(false));
        install(stop.clone(), quiet);
        stop
    })
    .clone()
}

/// True once the user asked to stop.
#[allow(dead_code)] // for sweeps and searches, which run many jobs
pub fn stop_requested() -> bool {
    STOP.get().is_some_and(|s| s.load(Ordering::Relaxed))
}

/// Installs the handlers; `stop` is raised on the first signal.
fn install(stop: Arc<AtomicBool>, quiet: bool) {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::Builder::new()
        .name("iolab-signals".into())
        .spawn(move || {
            let mut count = 0;
            for _ in signals.forever() {
                count += 1;
                if count == 1 {
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
