#![deny(unsafe_code)]
//! kdissect: a Kafka wire-protocol dissector.
//!
//! One pipeline, one direction: [`capture`] (pcap, pcapng, hex text → packets or bytes) →
//! [`tcp`] (reassembly → byte streams) → [`tls`] (TLS connections set aside and summed up) →
//! [`kafka`] (framing, headers, schema-driven decoding,
//! pairing) → [`render`] (tree, byte layout, summary, JSON, statistics). Each stage knows
//! nothing of the stages after it.

pub(crate) mod be;
pub mod capture;
pub mod filter;
pub mod kafka;
pub mod pipeline;
pub mod render;
pub(crate) mod side;
pub mod tcp;
pub mod tls;
