//! The pairing core: requests waiting for their responses, by correlation id, in a table of
//! bounded size; and the rules for which requests are worth waiting for. Hex input
//! ([`super::frames::Conversation`]) and captures ([`super::stream::Tracker`], one table per
//! connection) both pair with it.

use crate::kafka::spec::names;
use crate::kafka::spec::schema::registry;
use crate::kafka::walk::message::Message;
use std::collections::{HashMap, VecDeque};

/// Requests waiting for a response (per connection, or per hex input) before the oldest is
/// dropped: a client that never reads its answers, or junk taken for requests, must not make
/// memory grow without bound.
pub const MAX_PENDING: usize = 10_000;

/// Highest API key taken for a request that kdissect has no table for: Kafka's keys and its
/// vendors' extensions stay well below it.
pub const MAX_API_KEY: i16 = 2000;

/// Highest API version taken for a request that kdissect has no table for.
pub const MAX_API_VERSION: i16 = 127;

/// What a waiting request says about its response: the API key and version to decode it with.
pub trait Asked: Copy {
    fn api(&self) -> (i16, i16);
}

/// Hex input knows nothing of a request but its API.
impl Asked for (i16, i16) {
    fn api(&self) -> (i16, i16) {
        *self
    }
}

/// A request's API and version, and those of the request it carried (an Envelope's), whose
/// answer its response carries.
pub type WithEmbedded = ((i16, i16), Option<(i16, i16)>);

/// Hex input with what the request carried beside its API.
impl Asked for WithEmbedded {
    fn api(&self) -> (i16, i16) {
        self.0
    }
}

/// Requests waiting for their responses, by correlation id, oldest first.
#[derive(Debug)]
pub struct Pending<R> {
    /// Each waiting request with its place in `order`.
    /// Hashed with foldhash, seeded per run: looked up for every message.
    by_correlation: HashMap<i32, (u64, R), foldhash::fast::RandomState>,
    /// (correlation id, place) in the order requests came, to drop the oldest first. A request
    /// answered since leaves its entry behind (removing it would cost a pass over the queue
    /// per response); stale entries are skipped, and swept once they outnumber the live ones.
    order: VecDeque<(i32, u64)>,
    /// Place of the next new request.
    next_place: u64,
    max: usize,
}

impl<R: Asked> Default for Pending<R> {
    fn default() -> Self {
        Pending::new(MAX_PENDING)
    }
}

impl<R: Asked> Pending<R> {
    /// A table holding at most `max` requests.
    pub fn new(max: usize) -> Pending<R> {
        Pending {
            by_correlation: HashMap::default(),
            order: VecDeque::new(),
            next_place: 0,
            max,
        }
    }

    /// Remembers a request. A second request with the same correlation id takes the first
    /// one's place (and its age). Returns the requests dropped, oldest first, to stay within
    /// the bound.
    pub fn insert(&mut self, correlation_id: i32, request: R) -> Vec<R> {
        if let Some(waiting) = self.by_correlation.get_mut(&correlation_id) {
            waiting.1 = request;
        } else {
            let place = self.next_place;
            self.next_place += 1;
            self.by_correlation.insert(correlation_id, (place, request));
            self.order.push_back((correlation_id, place));
        }
        let mut dropped = Vec::new();
        while self.by_correlation.len() > self.max {
            let Some((old, place)) = self.order.pop_front() else {
                break;
            };
            if self.is_live(old, place) {
                dropped.extend(self.by_correlation.remove(&old).map(|(_, r)| r));
            }
        }
        dropped
    }

    /// The request a response with this correlation id answers, no longer waiting. The last
    /// one answered, the table's memory is given back: a connection between requests (most
    /// of them, most of the time) holds none.
    pub fn take(&mut self, correlation_id: i32) -> Option<R> {
        let (_, r) = self.by_correlation.remove(&correlation_id)?;
        if self.by_correlation.is_empty() {
            self.by_correlation = HashMap::default();
            self.order = VecDeque::new();
        } else {
            self.sweep();
        }
        Some(r)
    }

    pub fn get(&self, correlation_id: i32) -> Option<&R> {
        self.by_correlation.get(&correlation_id).map(|(_, r)| r)
    }

    pub fn contains(&self, correlation_id: i32) -> bool {
        self.by_correlation.contains_key(&correlation_id)
    }

    pub fn is_empty(&self) -> bool {
        self.by_correlation.is_empty()
    }

    /// Entries held: the waiting requests and their places in the order queue (answered
    /// ones not yet swept included), what the table's memory follows.
    pub fn entries(&self) -> usize {
        self.by_correlation.len() + self.order.len()
    }

    /// Every request still waiting, oldest first, leaving the table empty (its memory given
    /// back).
    pub fn take_all(&mut self) -> Vec<R> {
        let order = std::mem::take(&mut self.order);
        let mut all = Vec::new();
        for (c, place) in order {
            if self.is_live(c, place) {
                all.extend(self.by_correlation.remove(&c).map(|(_, r)| r));
            }
        }
        self.by_correlation = HashMap::default();
        all
    }

    /// The requests still waiting, oldest first.
    pub fn waiting(&self) -> impl Iterator<Item = &R> {
        self.order.iter().filter_map(|&(c, place)| {
            self.by_correlation
                .get(&c)
                .filter(|(p, _)| *p == place)
                .map(|(_, r)| r)
        })
    }

    /// Whether an entry of `order` is still a waiting request (not one answered since, whose
    /// correlation id may have been used again).
    fn is_live(&self, correlation_id: i32, place: u64) -> bool {
        self.by_correlation
            .get(&correlation_id)
            .is_some_and(|(p, _)| *p == place)
    }

    /// Drops entries of answered requests: at the front at once (responses mostly come in
    /// order), the rest once they are the greater part of the queue.
    fn sweep(&mut self) {
        while let Some(&(c, place)) = self.order.front() {
            if self.is_live(c, place) {
                break;
            }
            self.order.pop_front();
        }
        if self.order.len() > 2 * self.by_correlation.len() + SWEEP_SLACK {
            let live = &self.by_correlation;
            self.order
                .retain(|(c, place)| live.get(c).is_some_and(|(p, _)| p == place));
        }
    }
}

/// Stale entries of `Pending::order` tolerated beyond the live ones before a full sweep.
const SWEEP_SLACK: usize = 64;

/// Whether a request read from a capture's client side waits for an answer: an API and version
/// with a table, or a named API at a version in range. Junk read as a header must not capture
/// a later response's correlation id.
pub fn waits_for_answer(api_key: i16, api_version: i16) -> bool {
    registry().knows(api_key, api_version)
        || (names::api_name(api_key).is_some() && (0..=MAX_API_VERSION).contains(&api_version))
}

/// Whether a frame of hex input that did not decode cleanly as a request is still shown as
/// one (and waits for an answer): a known API and version, or a header that decoded whole with
/// an API key and version in the ranges Kafka and its vendors use. Hex input has no direction
/// to go by, so a frame with API key 0 is left to be a response: read as a request, a
/// response takes the high half of its correlation id as the API key, and clients count
/// correlation ids up from 0.
pub fn taken_for_request(req: &Message) -> bool {
    let Some((k, v)) = req.api_key.zip(req.api_version) else {
        return false;
    };
    let known = registry().knows(k, v);
    let header_whole = req.client_id.is_some();
    let in_range = (0..=MAX_API_KEY).contains(&k) && (0..=MAX_API_VERSION).contains(&v);
    (known || (header_whole && in_range)) && k != 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_request_is_dropped_past_the_bound() {
        let mut p: Pending<(i16, i16)> = Pending::new(2);
        assert!(p.insert(1, (3, 1)).is_empty());
        assert!(p.insert(2, (3, 2)).is_empty());
        // The same correlation id again keeps its place.
        assert!(p.insert(1, (3, 9)).is_empty());
        assert_eq!(p.insert(3, (3, 3)), vec![(3, 9)]);
        assert_eq!(p.take(2), Some((3, 2)));
        assert_eq!(p.take(2), None);
        assert!(p.contains(3) && !p.is_empty());
        assert!(p.insert(4, (0, 0)).is_empty());
        assert_eq!(
            p.waiting().copied().collect::<Vec<_>>(),
            vec![(3, 3), (0, 0)]
        );
    }

    #[test]
    fn a_correlation_id_used_again_after_its_answer_is_young_again() {
        let mut p: Pending<(i16, i16)> = Pending::new(2);
        p.insert(1, (3, 1));
        p.insert(2, (3, 2));
        assert_eq!(p.take(1), Some((3, 1)));
        p.insert(1, (3, 3));
        // 2 is now the oldest: the stale entry of the first 1 must not count.
        assert_eq!(p.insert(4, (3, 4)), vec![(3, 2)]);
        assert_eq!(
            p.waiting().copied().collect::<Vec<_>>(),
            vec![(3, 3), (3, 4)]
        );
    }

    #[test]
    fn answered_requests_do_not_pile_up_in_the_queue() {
        let mut p: Pending<(i16, i16)> = Pending::new(usize::MAX);
        for c in 0..10_000 {
            p.insert(c, (0, 0));
        }
        for c in (0..10_000).rev() {
            assert!(p.take(c).is_some());
        }
        assert!(p.is_empty());
        assert!(p.order.len() <= SWEEP_SLACK);
    }
}
