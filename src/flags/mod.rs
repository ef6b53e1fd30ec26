//! Flags: `low` is what clap parses, `hi` the settings the run uses, resolved once.

mod low;

pub(crate) use low::{Cli, ColorChoice, Commands, Shell};
