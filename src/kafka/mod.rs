//! Kafka: framing, headers, schema-driven decoding, request/response pairing.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub(crate) mod codes;
pub(crate) mod collect;
pub(crate) mod cursor;
pub(crate) mod decode;
pub(crate) mod embed;
pub mod example;
pub(crate) mod facts;
pub mod frames;
pub mod framing;
pub(crate) mod header;
pub(crate) mod health;
pub mod message;
pub mod names;
pub(crate) mod node;
pub mod pairing;
pub mod problem;
pub(crate) mod records;
pub(crate) mod sasl;
pub mod schema;
pub mod stream;
pub(crate) mod topics;
pub(crate) mod versions;
pub(crate) mod walk;
pub(crate) mod walk_gen;

// The stages' interfaces (framing, pairing and the stream of records, the message and its
// schema) are public modules; the decoder's inner parts are private, and what of them a
// caller sees is named here.
pub use codes::{ApiKey, ErrorCode};
pub use cursor::ReadError;
pub use decode::{DecodeError, DecodeOptions, Diagnosis, ErrorKind, MAX_ELEMENTS, MAX_NODES};
pub use embed::EmbeddedMessage;
pub use facts::{
    BatchFact, Facts, MemberFact, PartitionFact, Scalar, TopicFact, TopicList, TopicRef,
};
pub use health::StreamHealth;
pub use message::{decode_request, decode_response, Message};
pub use node::{Desc, Enc, Node, NodeKind, Note, Region, Shape, Value};
pub use problem::ProblemKind;
pub use records::{RecordSet, RecordsOptions, Tally, MAX_DECOMPRESSED};
pub use sasl::{SaslFact, SaslStep};
pub use schema::{registry, Direction};
pub use topics::TopicNames;
