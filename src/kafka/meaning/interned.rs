//! Topic names, made once. A run meets the same few topic names in message after message
//! (every Produce, Fetch and Metadata names them again): each was a `String` of its own, made,
//! copied and freed per message, the most frequent allocation of the summary (issue 36:
//! 6.8 of 12 allocations a message). Here a name's text is made the first time it is met and
//! shared after that: a message's topics hold counted references to it.
//!
//! The table is bounded ([`MAX_NAMES`] names of at most [`MAX_NAME`] bytes, about 4 MiB at
//! worst): a capture that names more topics than that (or a hostile one making up names) gets
//! the names past the bound made per message, as before, never a table that grows with it.
//! One table a thread: nothing is locked on the hot path.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

/// A topic name (or another name a list shows), shared between the messages that give it.
pub type Name = Arc<str>;

/// Names kept at most: far more topics than a cluster's clients speak of in one capture.
const MAX_NAMES: usize = 16 * 1024;

/// Longest name kept: Kafka's longest topic name (`Topic.MAX_NAME_LENGTH`). A longer name is
/// not a topic's and is made each time.
const MAX_NAME: usize = 249;

thread_local! {
    static NAMES: RefCell<HashSet<Name, foldhash::fast::RandomState>> =
        RefCell::new(HashSet::default());
}

/// The name whose bytes on the wire are `bytes`, invalid UTF-8 replaced as
/// [`crate::kafka::walk::cursor`]'s text is; the one made before when it was met already.
pub fn name(bytes: &[u8]) -> Name {
    match std::str::from_utf8(bytes) {
        Ok(s) => name_of(s),
        // Not a name Kafka accepts: made as it is, not kept.
        Err(_) => Arc::from(String::from_utf8_lossy(bytes)),
    }
}

/// [`name`] of a text already made.
pub fn name_of(s: &str) -> Name {
    if s.len() > MAX_NAME {
        return Arc::from(s);
    }
    NAMES.with(|names| {
        let mut names = names.borrow_mut();
        if let Some(n) = names.get(s) {
            return n.clone();
        }
        let n: Name = Arc::from(s);
        if names.len() < MAX_NAMES {
            names.insert(n.clone());
        }
        n
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_met_again_is_the_one_made_first() {
        let a = name(b"orders");
        let b = name(b"orders");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(&*a, "orders");
        assert!(!Arc::ptr_eq(&a, &name(b"payments")));
    }

    #[test]
    fn invalid_utf8_is_replaced_as_the_decoder_replaces_it() {
        let bytes: &[u8] = b"a\xffb";
        assert_eq!(&*name(bytes), String::from_utf8_lossy(bytes));
    }

    #[test]
    fn names_past_the_bounds_are_made_each_time() {
        let long = "x".repeat(MAX_NAME + 1);
        let a = name_of(&long);
        assert_eq!(&*a, long);
        assert!(!Arc::ptr_eq(&a, &name_of(&long)));
        // Fill the table (this thread's): a new name past it is still right, just not kept.
        for i in 0..MAX_NAMES {
            name_of(&format!("t{i}"));
        }
        let late = name_of("late-topic-name");
        assert_eq!(&*late, "late-topic-name");
        NAMES.with(|n| assert!(n.borrow().len() <= MAX_NAMES));
    }
}
