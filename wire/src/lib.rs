#![deny(unsafe_code)]
//! kdissect's wire stages, the first of its pipeline: [`capture`] (pcap, pcapng, hex text,
//! live interfaces → packets or bytes) → [`tcp`] (reassembly → byte streams, per connection
//! and direction) → [`tls`] (TLS connections recognised, decrypted with a key log or set
//! aside and summed up). Nothing here knows Kafka: the `kdissect` crate builds on these
//! stages, and the compiler keeps the arrow one way (this crate cannot name that one).
//!
//! [`be`] (big-endian reads that name what they read) and [`side`] (the two directions of a
//! connection) are small helpers every later stage uses too.

pub mod be;
pub mod capture;
pub mod side;
pub mod tcp;
pub mod tls;
