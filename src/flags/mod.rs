//! Flags: `low` is what clap parses, `hi` the settings the run uses, resolved once.

mod choice;
mod hi;
mod low;

pub(crate) use choice::Choice;

pub(crate) use hi::{not_an_api, Hex, Live, Mode, Settings, Show, StatsScope};
pub(crate) use low::{Cli, ColorChoice, Commands, Shell};
