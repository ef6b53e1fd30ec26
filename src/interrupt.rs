//! SIGINT and SIGTERM: noted in a flag that the run checks between packets (and while waiting
//! for input), so that what was decoded is flushed and the end-of-run notices are printed
//! before exiting with 128 + the signal number, as shells expect.
//!
//! The output at the end of a run (the `--stats` tables) may itself take a while on a large
//! capture: a signal that arrives while it is written stops it (the tables give up their
//! remaining rows with a note), where a signal that came before it, while reading, lets it be
//! written whole, as promised. Either way a second signal ends the process at once.
//!
//! In the library, not the binary, because the tables are drawn by the library.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

fn flag() -> &'static Arc<AtomicUsize> {
    static FLAG: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// Set while the end-of-run output is written and no signal had come before it began.
static FINISHING_UNSIGNALLED: AtomicBool = AtomicBool::new(false);

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

/// The end-of-run output begins: from now on, a first signal stops it ([`stopping`]).
pub fn finishing() {
    FINISHING_UNSIGNALLED.store(received().is_none(), Ordering::Relaxed);
}

/// Whether the end-of-run output should stop: a signal came while it was being written.
pub fn stopping() -> bool {
    FINISHING_UNSIGNALLED.load(Ordering::Relaxed) && received().is_some()
}

/// The exit status for a run ended by `sig`: 130 for SIGINT, 143 for SIGTERM.
pub fn exit_status(sig: i32) -> u8 {
    u8::try_from(128 + sig).unwrap_or(130)
}
