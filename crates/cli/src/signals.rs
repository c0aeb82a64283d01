//! Ctrl-C and SIGTERM. The first signal asks the workers to stop issuing; they drain what is in flight and
//! the partial result is printed and saved (marked `partial`). A second signal exits at once with code 130,
//! still removing scratch files.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Installs the handlers; `stop` is raised on the first signal.
pub fn install(stop: Arc<AtomicBool>, quiet: bool) {
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
                    iolab_target::remove_scratch_files();
                    eprintln!("\niolab: interrupted; scratch files removed");
                    std::process::exit(130);
                }
            }
        })
        .ok();
}
