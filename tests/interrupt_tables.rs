//! A signal while the tables are written at the end of a run stops them; one received before
//! (while reading) lets them be written whole, as docs/usage.md promises. In a test binary of
//! its own: it raises SIGTERM in its own process (the first is only noted).

use kdissect::interrupt;
use kdissect::render::table::{Cell, Grid};

#[test]
fn a_signal_while_the_tables_are_written_stops_them() {
    interrupt::install();
    let mut g = Grid::new(&["client_id", "requests"]);
    for i in 0..1000 {
        g.row(vec![Cell::atom(format!("client-{i}")), Cell::num(i)]);
    }
    // The output begins with no signal received: drawn whole.
    interrupt::finishing();
    assert!(!interrupt::stopping());
    let whole = g.render(Some(80)).to_string();
    assert!(whole.contains("client-999 ") && !whole.contains("stopped"));
    // A SIGTERM now, while the tables are written: they stop.
    signal_hook::low_level::raise(signal_hook::consts::SIGTERM).expect("raise SIGTERM");
    assert_eq!(interrupt::received(), Some(signal_hook::consts::SIGTERM));
    assert!(interrupt::stopping());
    let cut = g.render(Some(80)).to_string();
    assert!(
        cut.contains("(stopped by a signal: 1000 rows not shown)") && !cut.contains("client-0 "),
        "{cut}"
    );
    assert_eq!(interrupt::exit_status(signal_hook::consts::SIGTERM), 143);
    // The signal came before the output began (a run interrupted while reading): whole.
    interrupt::finishing();
    assert!(!interrupt::stopping());
    assert!(g.render(Some(80)).to_string().contains("client-999 "));
}
