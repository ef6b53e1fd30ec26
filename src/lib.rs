#![deny(unsafe_code)]
//! kdissect: a Kafka wire-protocol dissector.
//!
//! One pipeline, one direction: [`capture`] (pcap, pcapng, hex text → packets or bytes) →
//! [`tcp`] (reassembly → byte streams) → [`tls`] (TLS connections set aside and summed up) →
//! [`kafka`] (framing, headers, schema-driven decoding,
//! pairing) → [`render`] (tree, byte layout, summary, JSON, statistics). Each stage knows
//! nothing of the stages after it.
//!
//! A frame decodes on its own; a response needs its request's API key and version:
//!
//! ```
//! // DescribeCluster v2 request (API key 60), correlation id 0, empty client id.
//! let frame = [0, 0, 0, 0x0f, 0, 0x3c, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
//! let request = kdissect::decode_request(&frame);
//! assert_eq!(request.api_key, Some(60));
//! assert_eq!(request.api_key.and_then(|k| kdissect::ApiKey(k).name()), Some("DescribeCluster"));
//! assert!(request.error.is_none() && request.diagnoses.is_empty());
//! ```

pub mod analyses;
pub mod filter;
pub mod interrupt;
pub mod kafka;
pub mod pipeline;
pub mod render;
pub mod text;

// The wire stages live in their own crate (wire/), which cannot name this one: the compiler
// keeps the arrow from capture, TCP and TLS to Kafka one way. Their paths stay as they were.
pub(crate) use kdissect_wire::{be, side};
pub use kdissect_wire::{capture, tcp, tls};

// The facade: what a program that dissects Kafka bytes needs, named once at the top. The
// modules stay public for the kdissect binary, which is built on this library; their inner
// parts (the decoder's cursor, records, SASL and fact collection) are private to the crate.
pub use capture::pcap::CaptureError;
pub use filter::{Filter, FilterError};
pub use kafka::{
    decode_request, decode_response, ApiKey, DecodeOptions, Direction, ErrorCode, Facts, Message,
    Node, Note, ProblemKind, Value,
};
pub use pipeline::{run, run_source, CaptureSink, Health, Options};
