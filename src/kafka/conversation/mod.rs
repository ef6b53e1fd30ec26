//! Kafka over a connection: frames cut from a byte stream (`framing`, and `frames` for hex
//! input), requests paired with their responses (`pairing`), the stream of records and
//! notices per connection (`stream`), which side is the client where no port says
//! (`client_side`), its health (`health`), and the topic names learnt from the answers that
//! give them (`topics`).

pub mod client_side;
pub mod frames;
pub mod framing;
pub(crate) mod health;
pub mod pairing;
pub mod stream;
pub(crate) mod topics;
