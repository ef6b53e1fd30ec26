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

/// Requests waiting for their responses, by correlation id, oldest first. A lone request
/// (a client waiting for each answer, as most do) is kept inline; the table is made when a
/// second one comes to wait and given back once none waits. A connection between requests
/// holds no allocation, and one request waiting none either (a table cost two allocations
/// and their frees for every request). A capture keeps up to `--max-connections` of these.
#[derive(Debug)]
pub struct Pending<R> {
    /// The one request waiting while there is no table.
    lone: Option<(i32, R)>,
    table: Option<Box<Table<R>>>,
    max: usize,
}

/// The requests of a [`Pending`] while more than one waits.
#[derive(Debug)]
struct Table<R> {
    /// Each waiting request with its place in `order`.
    /// Hashed with foldhash, seeded per run: looked up for every message.
    by_correlation: HashMap<i32, (u64, R), foldhash::fast::RandomState>,
    /// (correlation id, place) in the order requests came, to drop the oldest first. A request
    /// answered since leaves its entry behind (removing it would cost a pass over the queue
    /// per response); stale entries are skipped, and swept once they outnumber the live ones.
    order: VecDeque<(i32, u64)>,
    /// Place of the next new request.
    next_place: u64,
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
            lone: None,
            table: None,
            max,
        }
    }

    /// Remembers a request. A second request with the same correlation id takes the first
    /// one's place (and its age). Returns the requests dropped, oldest first, to stay within
    /// the bound.
    pub fn insert(&mut self, correlation_id: i32, request: R) -> Vec<R> {
        if self.table.is_none() {
            match &mut self.lone {
                None if self.max > 0 => {
                    self.lone = Some((correlation_id, request));
                    return Vec::new();
                }
                None => return vec![request],
                Some((c, waiting)) if *c == correlation_id => {
                    *waiting = request;
                    return Vec::new();
                }
                Some(_) => {}
            }
        }
        let lone = self.lone.take();
        let t = self.table.get_or_insert_with(|| {
            Box::new(Table {
                by_correlation: HashMap::default(),
                order: VecDeque::new(),
                next_place: 0,
            })
        });
        for (c, r) in lone.into_iter().chain([(correlation_id, request)]) {
            t.put(c, r);
        }
        let mut dropped = Vec::new();
        while t.by_correlation.len() > self.max {
            let Some((old, place)) = t.order.pop_front() else {
                break;
            };
            if t.is_live(old, place) {
                dropped.extend(t.by_correlation.remove(&old).map(|(_, r)| r));
            }
        }
        if t.by_correlation.is_empty() {
            self.table = None;
        }
        dropped
    }

    /// The request a response with this correlation id answers, no longer waiting. The last
    /// one answered, the table's memory is given back.
    pub fn take(&mut self, correlation_id: i32) -> Option<R> {
        if let Some((c, r)) = self.lone {
            if c != correlation_id {
                return None;
            }
            self.lone = None;
            return Some(r);
        }
        let t = self.table.as_mut()?;
        let (_, r) = t.by_correlation.remove(&correlation_id)?;
        if t.by_correlation.is_empty() {
            self.table = None;
        } else {
            t.sweep();
        }
        Some(r)
    }

    pub fn get(&self, correlation_id: i32) -> Option<&R> {
        if let Some((c, r)) = &self.lone {
            return (*c == correlation_id).then_some(r);
        }
        let t = self.table.as_ref()?;
        t.by_correlation.get(&correlation_id).map(|(_, r)| r)
    }

    pub fn contains(&self, correlation_id: i32) -> bool {
        self.get(correlation_id).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.lone.is_none() && self.table.is_none()
    }

    /// Entries held: the waiting requests and their places in the order queue (answered
    /// ones not yet swept included), what the table's memory follows. A lone request counts
    /// as it would in the table, twice.
    pub fn entries(&self) -> usize {
        if self.lone.is_some() {
            return 2;
        }
        self.table
            .as_ref()
            .map_or(0, |t| t.by_correlation.len() + t.order.len())
    }

    /// Every request still waiting, oldest first, leaving the table empty (its memory given
    /// back).
    pub fn take_all(&mut self) -> Vec<R> {
        if let Some((_, r)) = self.lone.take() {
            return vec![r];
        }
        let Some(mut t) = self.table.take() else {
            return Vec::new();
        };
        let order = std::mem::take(&mut t.order);
        let mut all = Vec::new();
        for (c, place) in order {
            if t.is_live(c, place) {
                all.extend(t.by_correlation.remove(&c).map(|(_, r)| r));
            }
        }
        all
    }

    /// The requests still waiting, oldest first.
    pub fn waiting(&self) -> impl Iterator<Item = &R> {
        let lone = self.lone.iter().map(|(_, r)| r);
        lone.chain(self.table.iter().flat_map(|t| {
            t.order.iter().filter_map(|&(c, place)| {
                t.by_correlation
                    .get(&c)
                    .filter(|(p, _)| *p == place)
                    .map(|(_, r)| r)
            })
        }))
    }
}

impl<R> Table<R> {
    /// A request comes to wait, or takes the place of one with its correlation id.
    fn put(&mut self, correlation_id: i32, request: R) {
        if let Some(waiting) = self.by_correlation.get_mut(&correlation_id) {
            waiting.1 = request;
        } else {
            let place = self.next_place;
            self.next_place += 1;
            self.by_correlation.insert(correlation_id, (place, request));
            self.order.push_back((correlation_id, place));
        }
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
        for c in (1..10_000).rev() {
            assert!(p.take(c).is_some());
        }
        let order = p.table.as_ref().map_or(0, |t| t.order.len());
        assert!(
            order <= 2 + SWEEP_SLACK,
            "{order} entries queued for one request"
        );
        assert!(p.take(0).is_some());
        // The last answered, the table is given back.
        assert!(p.is_empty() && p.table.is_none());
    }

    #[test]
    fn a_lone_request_waits_inline_and_a_second_makes_the_table() {
        let mut p: Pending<(i16, i16)> = Pending::new(3);
        p.insert(7, (3, 1));
        assert!(p.table.is_none() && p.contains(7) && p.entries() == 2);
        // The same id again replaces it in place.
        p.insert(7, (3, 2));
        assert!(p.table.is_none() && p.get(7) == Some(&(3, 2)));
        assert_eq!(p.take(8), None);
        // A second request moves the first into the table, oldest still first.
        p.insert(8, (3, 3));
        assert!(p.lone.is_none() && p.table.is_some());
        p.insert(9, (3, 4));
        assert_eq!(p.insert(10, (3, 5)), vec![(3, 2)]);
        assert_eq!(p.take(9), Some((3, 4)));
        assert_eq!(p.take_all(), vec![(3, 3), (3, 5)]);
        assert!(p.is_empty() && p.table.is_none());
        // With no room at all, a request is dropped as it comes.
        let mut none: Pending<(i16, i16)> = Pending::new(0);
        assert_eq!(none.insert(1, (3, 1)), vec![(3, 1)]);
        assert!(none.is_empty());
    }
}
