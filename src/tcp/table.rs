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
//!   those copies cost at most `MAX_RECENT` times 64 KiB however many connections are tracked
//!   (and a few let go wait to be taken again: `super::SPARE_RECENT`).
//!
//! All are B-trees, so each update and each lookup is O(log n). A connection's idle entry moves
//! on each of its packets unless it is last already (`touch`); its memory entries move when what
//! it buffers changes (`settle`, called after each packet has been dealt with).
//!
//! Connections live boxed in slots; a hash table of slots, hashed by the compact 4-tuple
//! [`Key`] and compared with the connection's own, finds a packet's slot once (4 bytes a
//! bucket: the key is not kept twice), and the orders hold slots, so a packet costs one hash
//! lookup.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::Conn;
use crate::side::Side;
use hashbrown::HashTable;
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::net::{IpAddr, SocketAddr};

/// Connections that keep a copy of their last bytes: the most recently active. At 64 KiB a
/// connection (`2 * RECENT` each way) that is 8 MiB, where 20 000 connections tracked would
/// otherwise keep 1.25 GiB. A retransmission comes within a few round trips of its original,
/// while its connection is among the most recently active; on a busy cluster capture 2048
/// copies took 56 MiB of a run's 117 MiB peak and compared no more retransmissions.
pub(super) const MAX_RECENT: usize = 128;

/// A connection's key: its two endpoints, the lower first, in five words (an IPv4 address
/// in the low half of its 128 bits, told from IPv6 by a flag beside the port). Endpoints
/// come from packets, which carry no IPv6 flow label or scope here: address and port are all
/// there is to compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Key([u64; 5]);

impl Key {
    pub(super) fn of(a: SocketAddr, b: SocketAddr) -> Key {
        let end = |x: SocketAddr| match x.ip() {
            IpAddr::V4(ip) => (u128::from(u32::from(ip)), u32::from(x.port())),
            IpAddr::V6(ip) => (u128::from(ip), u32::from(x.port()) | 1 << 16),
        };
        let (x, y) = (end(a), end(b));
        let (lo, hi) = if x <= y { (x, y) } else { (y, x) };
        let words = |ip: u128| [(ip >> 64) as u64, ip as u64];
        let [a0, a1] = words(lo.0);
        let [b0, b1] = words(hi.0);
        Key([a0, a1, b0, b1, u64::from(lo.1) << 32 | u64::from(hi.1)])
    }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        for w in self.0 {
            h.write_u64(w);
        }
    }
}

/// Where a connection is kept in the table, from its first packet to its removal.
pub(super) type Slot = u32;

/// The key of the connection in `slot`.
fn key_in(slots: &[Option<Box<Conn>>], slot: Slot) -> Option<Key> {
    let c = slots.get(slot as usize)?.as_deref()?;
    Some(Key::of(c.addrs[Side::A], c.addrs[Side::B]))
}

#[derive(Debug, Default)]
pub(super) struct Table {
    /// The slot of every connection, by its key.
    index: HashTable<Slot>,
    /// Seeded per run: a capture's 4-tuples are chosen by whoever made it.
    hasher: foldhash::fast::RandomState,
    /// The connections, boxed (an empty slot costs a pointer), and the empty slots.
    slots: Vec<Option<Box<Conn>>>,
    free: Vec<Slot>,
    /// Every connection by `(last_seen, id)`: the first is the one idle longest.
    idle: BTreeMap<(u64, u32), Slot>,
    /// Every direction holding memory by `(bytes, id, side)`: the last holds the most.
    memory: BTreeMap<(usize, u32, Side), Slot>,
    /// The sum of `memory`: what all connections buffer and hold together.
    total: usize,
    /// Every direction with pieces waiting or held by `(since, id, side)` (`Holes::since`): the
    /// first came in the oldest packet.
    kept: BTreeMap<(u64, u32, Side), Slot>,
    /// The connections keeping a copy of their last bytes, by `(last_seen, id)`; a connection
    /// knows whether it is here (`Conn::in_recent`).
    recent: BTreeMap<(u64, u32), Slot>,
}

impl Table {
    pub(super) fn len(&self) -> usize {
        self.index.len()
    }

    /// The slot of the connection under `k`.
    pub(super) fn find(&self, k: &Key) -> Option<Slot> {
        let slots = &self.slots;
        self.index
            .find(self.hasher.hash_one(k), |&s| key_in(slots, s) == Some(*k))
            .copied()
    }

    pub(super) fn get(&self, k: &Key) -> Option<&Conn> {
        self.find(k).and_then(|s| self.conn(s))
    }

    pub(super) fn conn(&self, slot: Slot) -> Option<&Conn> {
        self.slots.get(slot as usize)?.as_deref()
    }

    /// The connection, to change. What it buffers may change through this; `settle` must
    /// follow so that the memory order and total agree again. (Its `last_seen` changes only
    /// through `touch`.)
    pub(super) fn conn_mut(&mut self, slot: Slot) -> Option<&mut Conn> {
        self.slots.get_mut(slot as usize)?.as_deref_mut()
    }

    /// Tracks a new connection (one that buffers nothing yet) under `k`, in a free slot.
    pub(super) fn insert(&mut self, k: Key, conn: Conn) -> Slot {
        // A connection already under this key would leave stale entries: drop it first.
        self.remove(&k);
        let entry = (conn.last_seen, conn.id);
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                Slot::try_from(self.slots.len() - 1).unwrap_or(Slot::MAX)
            }
        };
        if let Some(place) = self.slots.get_mut(slot as usize) {
            *place = Some(Box::new(conn));
        }
        self.idle.insert(entry, slot);
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.index.insert_unique(hasher.hash_one(k), slot, |&s| {
            key_in(slots, s).map_or(0, |k| hasher.hash_one(k))
        });
        self.settle(slot);
        slot
    }

    /// Stops tracking a connection, taking it out of every order.
    pub(super) fn remove(&mut self, k: &Key) -> Option<Conn> {
        let slots = &self.slots;
        let found = self
            .index
            .find_entry(self.hasher.hash_one(k), |&s| key_in(slots, s) == Some(*k));
        let (slot, _) = found.ok()?.remove();
        let c = *self.slots.get_mut(slot as usize)?.take()?;
        self.free.push(slot);
        self.idle.remove(&(c.last_seen, c.id));
        if c.in_recent {
            self.recent.remove(&(c.last_seen, c.id));
        }
        for side in Side::BOTH {
            let h = c.halves[side].holes();
            self.uncharge(h.charged, c.id, side);
            if let Some(f) = h.kept_since {
                self.kept.remove(&(f, c.id, side));
            }
        }
        Some(c)
    }

    /// A packet of the connection was seen at `frame`: it moves to the back of the idle order.
    /// If it is there already (its packets come in a burst), the order stands as it is and the
    /// B-tree is left alone: its entry, older than `frame`, still places it after every other.
    pub(super) fn touch(&mut self, slot: Slot, frame: u64) {
        let Some(c) = self
            .slots
            .get_mut(slot as usize)
            .and_then(|c| c.as_deref_mut())
        else {
            return;
        };
        let entry = (c.last_seen, c.id);
        if c.last_seen == frame || self.idle.last_key_value().is_some_and(|(e, _)| *e == entry) {
            return;
        }
        self.idle.remove(&entry);
        if c.in_recent {
            self.recent.remove(&entry);
            self.recent.insert((frame, c.id), slot);
        }
        c.last_seen = frame;
        self.idle.insert((frame, c.id), slot);
    }

    /// The connection idle longest.
    pub(super) fn oldest(&self) -> Option<Key> {
        let (_, &slot) = self.idle.first_key_value()?;
        self.conn(slot)
            .map(|c| Key::of(c.addrs[Side::A], c.addrs[Side::B]))
    }

    /// The direction holding the most memory: its connection's slot and side.
    pub(super) fn largest(&self) -> Option<(Slot, Side)> {
        self.memory
            .last_key_value()
            .map(|(&(_, _, side), &slot)| (slot, side))
    }

    /// The frame of the oldest piece waiting or held in any direction.
    pub(super) fn oldest_kept(&self) -> Option<u64> {
        self.kept.first_key_value().map(|(&(f, _, _), _)| f)
    }

    /// What all connections buffer and hold, in the units of `Holes::memory`.
    pub(super) fn total(&self) -> usize {
        self.total
    }

    /// Brings the memory order and total up to date with what the connection now buffers,
    /// and gives back the holes of a direction that has none left.
    pub(super) fn settle(&mut self, slot: Slot) {
        let Some(c) = self
            .slots
            .get_mut(slot as usize)
            .and_then(|c| c.as_deref_mut())
        else {
            return;
        };
        let id = c.id;
        // A direction without holes was charged nothing and kept nothing: it stays so.
        let changes = Side::BOTH.map(|side| {
            let half = &mut c.halves[side];
            let change = half.holes.as_deref_mut().map(|h| {
                let memory = h.memory();
                let charged = (std::mem::replace(&mut h.charged, memory), memory);
                let since = (std::mem::replace(&mut h.kept_since, h.since), h.since);
                (charged, since)
            });
            half.give_back_idle_holes();
            let ((was, now), (was_kept, now_kept)) = change.unwrap_or(((0, 0), (None, None)));
            ((side, was, now), (side, was_kept, now_kept))
        });
        let moved = changes.map(|(m, _)| m);
        let kept = changes.map(|(_, k)| k);
        for (side, was, now) in moved {
            if was != now {
                self.uncharge(was, id, side);
                self.charge(now, id, side, slot);
            }
        }
        for (side, was, now) in kept {
            if was != now {
                if let Some(f) = was {
                    self.kept.remove(&(f, id, side));
                }
                if let Some(f) = now {
                    self.kept.insert((f, id, side), slot);
                }
            }
        }
        self.settle_recent(slot);
    }

    /// Enters the connection in the order of those keeping a copy of their last bytes if it
    /// keeps one now, and lets the copies of the least recently active go past `MAX_RECENT`.
    fn settle_recent(&mut self, slot: Slot) {
        let Some(c) = self
            .slots
            .get_mut(slot as usize)
            .and_then(|c| c.as_deref_mut())
        else {
            return;
        };
        let entry = (c.last_seen, c.id);
        let keeps = c.halves.iter().any(|h| h.recent.capacity() > 0);
        if keeps == c.in_recent {
            return;
        }
        c.in_recent = keeps;
        if keeps {
            self.recent.insert(entry, slot);
        } else {
            // Closed, or never carried data: nothing to let go later.
            self.recent.remove(&entry);
        }
        while self.recent.len() > MAX_RECENT {
            let Some((_, old)) = self.recent.pop_first() else {
                break;
            };
            if let Some(c) = self.conn_mut(old) {
                c.in_recent = false;
                for h in c.halves.iter_mut() {
                    super::give_back_recent(&mut h.recent);
                }
            }
        }
    }

    /// Every connection, in order of creation, leaving the table empty. The boxes are
    /// sorted, not the connections: moving every connection out of its box into one vector
    /// (and the sort's scratch copy of it) made the end of a capture of 19 000 open
    /// connections its peak, 25 MB over the table itself.
    #[allow(clippy::vec_box)] // the point: a vector of boxes, not of connections
    pub(super) fn drain_in_order(&mut self) -> Vec<Box<Conn>> {
        self.idle.clear();
        self.recent.clear();
        self.memory.clear();
        self.kept.clear();
        self.total = 0;
        self.index = HashTable::new();
        self.free.clear();
        let mut all: Vec<Box<Conn>> = self.slots.drain(..).flatten().collect();
        all.sort_by_key(|c| c.id);
        all
    }

    fn charge(&mut self, bytes: usize, id: u32, side: Side, slot: Slot) {
        if bytes > 0 {
            self.memory.insert((bytes, id, side), slot);
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
        assert_eq!(self.idle.len(), self.index.len());
        for &slot in &self.index {
            let k = key_in(&self.slots, slot);
            assert!(k.is_some_and(|k| self.find(&k) == Some(slot)));
        }
        let live = self.slots.iter().filter(|s| s.is_some()).count();
        assert_eq!(live, self.index.len());
        assert_eq!(live + self.free.len(), self.slots.len());
        for (&(seen, id), &k) in &self.idle {
            let c = self.conn(k);
            assert!(c.is_some_and(|c| c.last_seen == seen && c.id == id));
        }
        let mut sum = 0;
        for (&(bytes, id, side), &k) in &self.memory {
            let c = self.conn(k);
            assert!(c.is_some_and(|c| c.id == id && c.halves[side].holes().charged == bytes));
            sum += bytes;
        }
        assert_eq!(sum, self.total);
        assert!(self.recent.len() <= MAX_RECENT);
        for (&(seen, id), &k) in &self.recent {
            let c = self.conn(k);
            assert!(c.is_some_and(|c| c.last_seen == seen && c.id == id && c.in_recent));
        }
        let in_recent = self.slots.iter().flatten().filter(|c| c.in_recent).count();
        assert_eq!(in_recent, self.recent.len());
        for c in self.slots.iter().flatten() {
            for half in c.halves.iter() {
                assert_eq!(
                    half.holes().memory(),
                    half.holes().charged,
                    "stream {}",
                    c.id
                );
                assert!(half.holes.as_deref().is_none_or(|h| !h.is_idle()));
            }
        }
        for (&(f, id, side), &k) in &self.kept {
            let c = self.conn(k);
            assert!(c.is_some_and(|c| c.id == id && c.halves[side].holes().kept_since == Some(f)));
        }
        for c in self.slots.iter().flatten() {
            for half in c.halves.iter() {
                let h = half.holes();
                assert_eq!(h.since, h.kept_since, "stream {}", c.id);
                let oldest = h
                    .ooo
                    .values()
                    .map(|w| w.at.frame)
                    .chain(h.held.iter().map(|h| h.at.frame))
                    .min();
                assert!(oldest.is_none_or(|o| h.since.is_some_and(|s| s <= o)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Key;
    use std::net::SocketAddr;

    fn addr(s: &str) -> SocketAddr {
        s.parse()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// Both directions of a connection share a key; addresses, ports and families tell
    /// connections apart, an IPv4 address from the IPv6 address that maps it too.
    #[test]
    fn a_key_is_the_connection_whichever_way_a_packet_goes() {
        let (c, b) = (addr("10.0.0.1:40000"), addr("10.0.0.2:9092"));
        assert_eq!(Key::of(c, b), Key::of(b, c));
        assert_ne!(Key::of(c, b), Key::of(addr("10.0.0.1:40001"), b));
        assert_ne!(Key::of(c, b), Key::of(addr("10.0.0.3:40000"), b));
        // The ports swapped between the two addresses: another connection.
        assert_ne!(
            Key::of(c, b),
            Key::of(addr("10.0.0.1:9092"), addr("10.0.0.2:40000"))
        );
        let mapped = addr("[::ffff:10.0.0.1]:40000");
        let mapped_b = addr("[::ffff:10.0.0.2]:9092");
        assert_ne!(Key::of(c, b), Key::of(mapped, mapped_b));
        let (v6c, v6b) = (addr("[fd00::1]:40000"), addr("[fd00::2]:9092"));
        assert_eq!(Key::of(v6c, v6b), Key::of(v6b, v6c));
        assert_ne!(Key::of(v6c, v6b), Key::of(addr("[fd00::1]:40001"), v6b));
    }
}
