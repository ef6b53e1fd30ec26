//! Input: capture files and hex text, turned into packets, TCP segments or bytes.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub mod cut;
pub mod hex;
#[cfg(feature = "live")]
pub mod live;
pub mod net;
pub mod pcap;
pub mod write;
