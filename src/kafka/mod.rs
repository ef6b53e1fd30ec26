//! Kafka: framing, headers, schema-driven decoding, request/response pairing.
//!
//! Five rooms, read in the order data moves through them, with arrows that go one way
//! (tests/code_shape.rs checks them):
//!
//! - `spec`: the spec tables and names. Uses nothing else of Kafka's.
//! - `meaning`: what decoded messages mean, as data (codes, problems, facts). Uses `spec`.
//! - `walk`: a frame's bytes walked against the specs, into a tree or straight into facts.
//!   Uses `spec` and `meaning`.
//! - `records`: record batches and legacy message sets inside a `records` field. Uses
//!   `walk` (its cursor, nodes and, for keys and values that hold messages, its decoder),
//!   `spec` and `meaning`; the walk reaches it only through `Decoder::records_field`, which
//!   this room defines.
//! - `conversation`: frames cut from connections, requests paired with responses, topic
//!   names learnt. Uses all the others.
//!
//! `example` builds the smallest instance of any message, for the command line and tests.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub mod conversation;
pub mod example;
pub mod meaning;
pub(crate) mod records;
pub mod spec;
pub mod walk;

// The stages' interfaces (framing, pairing and the stream of records, the message and its
// schema) keep the paths callers know; the decoder's inner parts are private, and what of
// them a caller sees is named here.
pub use conversation::{frames, framing, pairing, stream};
pub use meaning::problem;
pub use spec::{names, schema};
pub use walk::message;

pub use conversation::health::StreamHealth;
pub use conversation::topics::TopicNames;
pub use meaning::codes::{ApiKey, ErrorCode};
pub use meaning::facts::{
    BatchFact, Facts, MemberFact, PartitionFact, Scalar, TopicFact, TopicList, TopicRef,
};
pub use meaning::problem::ProblemKind;
pub use records::{RecordSet, RecordsOptions, Tally, MAX_DECOMPRESSED};
pub use spec::schema::{registry, Direction};
pub use walk::cursor::ReadError;
pub use walk::decode::{DecodeError, DecodeOptions, Diagnosis, ErrorKind, MAX_ELEMENTS, MAX_NODES};
pub use walk::embed::EmbeddedMessage;
pub use walk::message::{decode_request, decode_response, Message};
pub use walk::node::{Desc, Enc, Node, NodeKind, Note, Region, Shape, Value};
pub use walk::sasl::{SaslFact, SaslStep};
