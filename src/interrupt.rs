//! SIGINT and SIGTERM: noted in a flag that the run checks between packets (and while waiting
//! for input), so that what was decoded is flushed and the end-of-run notices are printed
//! before exiting with 128 + the signal number, as shells expect.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

fn flag() -> &'static Arc<AtomicUsize> {
    static FLAG: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// Starts noting SIGINT and SIGTERM. A second signal of either kind ends the process at once
/// (the default action), for a run that does not stop fast enough.
pub fn install() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let seen = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // In this order: the first signal finds `seen` false and is only noted; a second one
        // finds it true and takes the default action.
        let _ = signal_hook::flag::register_conditional_default(sig, Arc::clone(&seen));
        let _ = signal_hook::flag::register(sig, Arc::clone(&seen));
        let _ = signal_hook::flag::register_usize(sig, Arc::clone(flag()), sig as usize);
    }
}

/// The signal received, if any.
pub fn received() -> Option<i32> {
    match flag().load(Ordering::Relaxed) {
        0 => None,
        s => i32::try_from(s).ok(),
    }
}

/// The exit status for a run ended by `sig`: 130 for SIGINT, 143 for SIGTERM.
pub fn exit_status(sig: i32) -> u8 {
    u8::try_from(128 + sig).unwrap_or(130)
}
