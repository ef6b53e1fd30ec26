//! The connections tracked, with two orders kept in step with them, so that neither eviction
//! nor the memory budget ever scans every connection:
//!
//! - by idleness, `(last_seen, id)`: the first entry is the connection idle longest, the one
//!   `max_connections` evicts (the id, given in order of creation, breaks ties: older first);
//! - by memory, `(bytes, id, side)` for each direction that buffers or holds anything: the last
//!   entry is the direction holding the most, the one `max_buffered_total` frees first.
//!
//! - by idleness again, for the connections that keep a copy of their last bytes (to compare
//!   retransmissions against): only the `MAX_RECENT` most recently active keep one, so that
//!   those copies cost at most `MAX_RECENT` times 64 KiB however many connections are tracked.
//!
//! All are B-trees, so each update and each lookup is O(log n). A connection's idle entry moves
//! on each of its packets unless it is last already (`touch`); its memory entries move when what
//! it buffers changes (`settle`, called after each packet has been dealt with).
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::Conn;
use crate::side::Side;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

/// Connections that keep a copy of their last bytes: the most recently active. At 64 KiB a
/// connection (`2 * RECENT` each way) that is 128 MiB, where 20 000 connections tracked would
/// otherwise keep 1.25 GiB.
pub(super) const MAX_RECENT: usize = 2048;

/// A connection's key: its two endpoints, the lower first.
pub(super) type Key = (SocketAddr, SocketAddr);

#[derive(Debug, Default)]
pub(super) struct Table {
    conns: HashMap<Key, Conn>,
    /// Every connection by `(last_seen, id)`: the first is the one idle longest.
    idle: BTreeMap<(u64, u32), Key>,
    /// Every direction holding memory by `(bytes, id, side)`: the last holds the most.
    memory: BTreeMap<(usize, u32, Side), Key>,
    /// The sum of `memory`: what all connections buffer and hold together.
    total: usize,
    /// Every direction with pieces waiting or held by `(since, id, side)` (`Half::since`): the
    /// first came in the oldest packet.
    kept: BTreeMap<(u64, u32, Side), Key>,
    /// The connections keeping a copy of their last bytes, by `(last_seen, id)`.
    recent: BTreeMap<(u64, u32), Key>,
}

impl Table {
    pub(super) fn len(&self) -> usize {
        self.conns.len()
    }

    pub(super) fn get(&self, k: &Key) -> Option<&Conn> {
        self.conns.get(k)
    }

    /// The connection, to change. What it buffers may change through this; `settle` must
    /// follow so that the memory order and total agree again. (Its `last_seen` changes only
    /// through `touch`.)
    pub(super) fn get_mut(&mut self, k: &Key) -> Option<&mut Conn> {
        self.conns.get_mut(k)
    }

    /// Tracks a new connection (one that buffers nothing yet).
    pub(super) fn insert(&mut self, k: Key, conn: Conn) {
        // A connection already under this key would leave stale entries: drop it first.
        self.remove(&k);
        self.idle.insert((conn.last_seen, conn.id), k);
        self.conns.insert(k, conn);
        self.settle(&k);
    }

    /// Stops tracking a connection, taking it out of both orders.
    pub(super) fn remove(&mut self, k: &Key) -> Option<Conn> {
        let c = self.conns.remove(k)?;
        self.idle.remove(&(c.last_seen, c.id));
        self.recent.remove(&(c.last_seen, c.id));
        for side in Side::BOTH {
            self.uncharge(c.charged[side], c.id, side);
            if let Some(f) = c.kept_since[side] {
                self.kept.remove(&(f, c.id, side));
            }
        }
        Some(c)
    }

    /// A packet of the connection was seen at `frame`: it moves to the back of the idle order.
    /// If it is there already (its packets come in a burst), the order stands as it is and the
    /// B-tree is left alone: its entry, older than `frame`, still places it after every other.
    pub(super) fn touch(&mut self, k: &Key, frame: u64) {
        let Some(c) = self.conns.get_mut(k) else {
            return;
        };
        let entry = (c.last_seen, c.id);
        if c.last_seen == frame || self.idle.last_key_value().is_some_and(|(e, _)| *e == entry) {
            return;
        }
        self.idle.remove(&entry);
        if self.recent.remove(&entry).is_some() {
            self.recent.insert((frame, c.id), *k);
        }
        c.last_seen = frame;
        self.idle.insert((frame, c.id), *k);
    }

    /// The connection idle longest.
    pub(super) fn oldest(&self) -> Option<Key> {
        self.idle.first_key_value().map(|(_, k)| *k)
    }

    /// The direction holding the most memory: its connection and side.
    pub(super) fn largest(&self) -> Option<(Key, Side)> {
        self.memory
            .last_key_value()
            .map(|(&(_, _, side), k)| (*k, side))
    }

    /// The frame of the oldest piece waiting or held in any direction.
    pub(super) fn oldest_kept(&self) -> Option<u64> {
        self.kept.first_key_value().map(|(&(f, _, _), _)| f)
    }

    /// What all connections buffer and hold, in the units of `Half::memory`.
    pub(super) fn total(&self) -> usize {
        self.total
    }

    /// Brings the memory order and total up to date with what the connection now buffers.
    pub(super) fn settle(&mut self, k: &Key) {
        let Some(c) = self.conns.get_mut(k) else {
            return;
        };
        let id = c.id;
        let moved = Side::BOTH.map(|side| {
            let was = std::mem::replace(&mut c.charged[side], c.halves[side].memory());
            (side, was, c.charged[side])
        });
        let kept = Side::BOTH.map(|side| {
            let now = c.halves[side].since;
            (side, std::mem::replace(&mut c.kept_since[side], now), now)
        });
        for (side, was, now) in moved {
            if was != now {
                self.uncharge(was, id, side);
                self.charge(now, id, side, *k);
            }
        }
        for (side, was, now) in kept {
            if was != now {
                if let Some(f) = was {
                    self.kept.remove(&(f, id, side));
                }
                if let Some(f) = now {
                    self.kept.insert((f, id, side), *k);
                }
            }
        }
        self.settle_recent(k);
    }

    /// Enters the connection in the order of those keeping a copy of their last bytes if it
    /// keeps one now, and lets the copies of the least recently active go past `MAX_RECENT`.
    fn settle_recent(&mut self, k: &Key) {
        let Some(c) = self.conns.get(k) else {
            return;
        };
        let entry = (c.last_seen, c.id);
        if c.halves.iter().any(|h| h.recent.capacity() > 0) {
            self.recent.insert(entry, *k);
        } else {
            // Closed, or never carried data: nothing to let go later.
            self.recent.remove(&entry);
        }
        while self.recent.len() > MAX_RECENT {
            let Some((_, old)) = self.recent.pop_first() else {
                break;
            };
            if let Some(c) = self.conns.get_mut(&old) {
                for h in c.halves.iter_mut() {
                    h.recent = Vec::new();
                }
            }
        }
    }

    /// Every connection, in order of creation, leaving the table empty.
    pub(super) fn drain_in_order(&mut self) -> Vec<Conn> {
        self.idle.clear();
        self.recent.clear();
        self.memory.clear();
        self.kept.clear();
        self.total = 0;
        let mut all: Vec<Conn> = self.conns.drain().map(|(_, c)| c).collect();
        all.sort_by_key(|c| c.id);
        all
    }

    fn charge(&mut self, bytes: usize, id: u32, side: Side, k: Key) {
        if bytes > 0 {
            self.memory.insert((bytes, id, side), k);
            self.total = self.total.saturating_add(bytes);
        }
    }

    fn uncharge(&mut self, bytes: usize, id: u32, side: Side) {
        if bytes > 0 {
            self.memory.remove(&(bytes, id, side));
            self.total = self.total.saturating_sub(bytes);
        }
    }
}

#[cfg(test)]
impl Table {
    /// Checks that both orders and the total agree with the connections.
    pub(super) fn check(&self) {
        assert_eq!(self.idle.len(), self.conns.len());
        for (&(seen, id), k) in &self.idle {
            let c = self.conns.get(k);
            assert!(c.is_some_and(|c| c.last_seen == seen && c.id == id));
        }
        let mut sum = 0;
        for (&(bytes, id, side), k) in &self.memory {
            let c = self.conns.get(k);
            assert!(c.is_some_and(|c| c.id == id && c.charged[side] == bytes));
            sum += bytes;
        }
        assert_eq!(sum, self.total);
        assert!(self.recent.len() <= MAX_RECENT);
        for (&(seen, id), k) in &self.recent {
            let c = self.conns.get(k);
            assert!(c.is_some_and(|c| c.last_seen == seen && c.id == id));
        }
        for c in self.conns.values() {
            for (half, &charged) in c.halves.iter().zip(c.charged.iter()) {
                assert_eq!(half.memory(), charged, "stream {}", c.id);
            }
        }
        for (&(f, id, side), k) in &self.kept {
            let c = self.conns.get(k);
            assert!(c.is_some_and(|c| c.id == id && c.kept_since[side] == Some(f)));
        }
        for c in self.conns.values() {
            for (half, &kept) in c.halves.iter().zip(c.kept_since.iter()) {
                assert_eq!(half.since, kept, "stream {}", c.id);
                let oldest = half
                    .ooo
                    .values()
                    .map(|w| w.at.frame)
                    .chain(half.held.iter().map(|h| h.at.frame))
                    .min();
                assert!(oldest.is_none_or(|o| half.since.is_some_and(|s| s <= o)));
            }
        }
    }
}
