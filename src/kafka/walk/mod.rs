//! The walk of a frame's bytes: the one cursor (`cursor`), the decoded tree (`node`), the
//! generic decoder that interprets a spec and builds the tree (`decode`), the interpreted
//! and the generated walks that build nothing (`interpreted`, `generated`), the visitor that
//! gathers facts while walking (`collect`), the one that gathers the analyses' facts at every
//! depth (`deep`) and the facts read from a tree (`tree_facts`), the headers (`header`), SASL exchanges and
//! embedded messages (`sasl`, `embed`), and a whole frame into a `Message` (`message`).

pub(crate) mod collect;
pub(crate) mod cursor;
pub(crate) mod decode;
pub(crate) mod deep;
pub(crate) mod embed;
pub(crate) mod generated;
pub(crate) mod header;
pub(crate) mod interpreted;
pub mod json;
pub mod message;
pub(crate) mod node;
pub(crate) mod sasl;
pub(crate) mod tree_facts;
