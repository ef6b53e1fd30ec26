//! What decoded messages mean, as data: the codes every message is about (`codes`), the
//! problems found in them (`problem`) and the facts a message is about (`facts`). The walk
//! and the conversation fill these in; the views put them into words.

pub(crate) mod codes;
pub(crate) mod essentials;
pub(crate) mod facts;
pub mod interned;
pub mod log;
pub mod problem;
