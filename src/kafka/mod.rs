//! Kafka: framing, headers, schema-driven decoding, request/response pairing.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub mod codes;
pub mod cursor;
pub mod decode;
pub mod example;
pub mod facts;
pub mod frames;
pub mod framing;
pub mod header;
pub mod health;
pub mod message;
pub mod names;
pub mod node;
pub mod pairing;
pub mod problem;
pub mod records;
pub mod sasl;
pub mod schema;
pub mod stream;
pub mod topics;

pub use codes::{ApiKey, ErrorCode};
pub use decode::{DecodeError, Diagnosis, ErrorKind};
pub use message::{decode_request, decode_response, Message};
pub use node::{Enc, Node, NodeKind, Note, Region, Value};
pub use problem::ProblemKind;
pub use schema::{registry, Direction};
