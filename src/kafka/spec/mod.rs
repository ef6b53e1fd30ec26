//! The spec tables and names: Kafka's message specs as data (`schema`), the version ranges
//! and field types of the spec language (`versions`), and the names of APIs, error codes and
//! enumerations (`names`). Nothing here knows how a message is read.

pub(crate) mod fact_field;
pub(crate) mod headers;
pub mod names;
pub mod schema;
pub(crate) mod versions;
