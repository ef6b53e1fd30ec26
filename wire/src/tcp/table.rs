//! The connections tracked: a slab of boxed connections, found by a hash of their key, and
//! the orders the limits need, kept in step with them so that neither eviction nor the memory
//! budget ever scans every connection:
//!
//! - by idleness: an intrusive doubly linked list through the slots (each connection holds the
//!   slots of its neighbours, `Conn::idle`), newest first. A packet moves its connection to the
//!   front in O(1); the tail is the connection idle longest, the one `max_connections` evicts.
//!   Frames only grow, so this is the order of `(last_seen, id)`: a connection is created at the
//!   front, after every older one.
//! - by idleness again, for the connections that keep delivered pieces to compare
//!   retransmissions against (`delivered.rs`): a second list through the same slots
//!   (`Conn::recent`), the first restricted to those connections. Only the `MAX_RECENT` most
//!   recently active keep theirs, so that the pieces cost at most `MAX_RECENT` × 2 × 1.5 KiB
//!   however many connections are tracked.
//! - by memory, `(bytes, id, side)` for each direction that buffers or holds anything: the last
//!   entry is the direction holding the most, the one `max_buffered_total` frees first; and by
//!   age, `(since, id, side)` for each direction with pieces waiting or held. These two stay
//!   B-trees (O(log n) an update): an entry changes only when what a direction buffers changes
//!   (`settle` compares with what it last counted), which a capture without loss or reordering
//!   never does, and the exact order (the largest first, ties to the newest connection) decides
//!   which holes are declared lost. A packet that changes nothing costs no B-tree operation.
//!
//! A hash table of slots, hashed by the compact 4-tuple [`Key`] and compared with the key kept
//! in the connection, finds a packet's slot once (4 bytes a bucket: the key is not kept
//! twice), and the orders hold slots, so a packet costs one hash lookup and a few pointer
//! moves. A slot let go is taken by the next connection.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::Conn;
use crate::side::Side;
use hashbrown::HashTable;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::net::{IpAddr, SocketAddr};

/// Connections that keep delivered pieces: the most recently active. A retransmission comes
/// within a few round trips of its original, while its connection is among the most recently
/// active; on a busy cluster capture 2048 connections keeping theirs compared no more
/// retransmissions than 128.
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

/// No slot: the end of a list.
const NONE: Slot = Slot::MAX;

/// A connection's neighbours in one of the table's lists: the slot of the one just newer and
/// of the one just older (`NONE` at the ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Links {
    newer: Slot,
    older: Slot,
}

impl Default for Links {
    fn default() -> Self {
        Links {
            newer: NONE,
            older: NONE,
        }
    }
}

/// The ends and length of one list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ends {
    newest: Slot,
    oldest: Slot,
    len: usize,
}

impl Default for Ends {
    fn default() -> Self {
        Ends {
            newest: NONE,
            oldest: NONE,
            len: 0,
        }
    }
}

/// Which of the two lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    /// Every connection, by idleness.
    Idle,
    /// The connections keeping delivered pieces, by idleness.
    Recent,
}

impl List {
    fn links(self, c: &mut Conn) -> &mut Links {
        match self {
            List::Idle => &mut c.idle,
            List::Recent => &mut c.recent,
        }
    }
}

/// The key of the connection in `slot`.
fn key_in(slots: &[Option<Box<Conn>>], slot: Slot) -> Option<Key> {
    Some(slots.get(slot as usize)?.as_deref()?.key)
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
    /// Every connection, newest first: the oldest is the one idle longest.
    idle: Ends,
    /// The connections keeping delivered pieces, newest first; a connection knows whether it
    /// is here (`Conn::in_recent`).
    recent: Ends,
    /// Every direction holding memory by `(bytes, id, side)`: the last holds the most.
    memory: BTreeMap<(usize, u32, Side), Slot>,
    /// The sum of `memory`: what all connections buffer and hold together.
    total: usize,
    /// Every direction with pieces waiting or held by `(since, id, side)` (`Holes::since`): the
    /// first came in the oldest packet.
    kept: BTreeMap<(u64, u32, Side), Slot>,
    /// The slot `find` found last: the next packet is often of the same connection (an answer
    /// after its question, the segments of a large message), and comparing the key kept in
    /// that slot costs a tenth of hashing the key and probing. Checked before it is used, so
    /// a slot since emptied or taken by another connection is simply missed.
    last_found: Cell<Slot>,
}

impl Table {
    pub(super) fn len(&self) -> usize {
        self.index.len()
    }

    /// The slot of the connection under `k`.
    pub(super) fn find(&self, k: &Key) -> Option<Slot> {
        let slots = &self.slots;
        let last = self.last_found.get();
        if key_in(slots, last) == Some(*k) {
            return Some(last);
        }
        let found = self
            .index
            .find(self.hasher.hash_one(k), |&s| key_in(slots, s) == Some(*k))
            .copied();
        if let Some(s) = found {
            self.last_found.set(s);
        }
        found
    }

    pub(super) fn get(&self, k: &Key) -> Option<&Conn> {
        self.find(k).and_then(|s| self.conn(s))
    }

    pub(super) fn conn(&self, slot: Slot) -> Option<&Conn> {
        self.slots.get(slot as usize)?.as_deref()
    }

    /// The connection, to change. What it buffers may change through this; `settle` must
    /// follow so that the memory order and total agree again. (Its `last_seen` changes only
    /// through `touch`, its links only through the table.)
    pub(super) fn conn_mut(&mut self, slot: Slot) -> Option<&mut Conn> {
        self.slots.get_mut(slot as usize)?.as_deref_mut()
    }

    /// Tracks a new connection (one that buffers nothing yet) under `k`, in a free slot, as
    /// the newest.
    pub(super) fn insert(&mut self, k: Key, mut conn: Conn) -> Slot {
        // A connection already under this key would leave stale entries: drop it first.
        self.remove(&k);
        conn.key = k;
        conn.idle = Links::default();
        conn.recent = Links::default();
        conn.in_recent = false;
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(None);
                Slot::try_from(self.slots.len() - 1).unwrap_or(NONE)
            }
        };
        if let Some(place) = self.slots.get_mut(slot as usize) {
            *place = Some(Box::new(conn));
        }
        self.push_newest(slot, List::Idle);
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.index.insert_unique(hasher.hash_one(k), slot, |&s| {
            key_in(slots, s).map_or(0, |k| hasher.hash_one(k))
        });
        self.settle(slot);
        slot
    }

    /// Stops tracking a connection, taking it out of every order; its slot is free again.
    pub(super) fn remove(&mut self, k: &Key) -> Option<Conn> {
        let slots = &self.slots;
        let found = self
            .index
            .find_entry(self.hasher.hash_one(k), |&s| key_in(slots, s) == Some(*k));
        let (slot, _) = found.ok()?.remove();
        self.unlink(slot, List::Idle);
        if self.conn(slot).is_some_and(|c| c.in_recent) {
            self.unlink(slot, List::Recent);
        }
        let mut c = *self.slots.get_mut(slot as usize)?.take()?;
        c.in_recent = false;
        self.free.push(slot);
        for side in Side::BOTH {
            let h = c.halves[side].holes();
            self.uncharge(h.charged, c.id, side);
            if let Some(f) = h.kept_since {
                self.kept.remove(&(f, c.id, side));
            }
        }
        Some(c)
    }

    /// A packet of the connection was seen at `frame`: it moves to the front of the idle
    /// order (and of the order of those keeping delivered pieces, if it is there), in O(1).
    pub(super) fn touch(&mut self, slot: Slot, frame: u64) {
        let Some(c) = self.conn_mut(slot) else {
            return;
        };
        if c.last_seen == frame {
            return;
        }
        c.last_seen = frame;
        let in_recent = c.in_recent;
        self.move_to_front(slot, List::Idle);
        if in_recent {
            self.move_to_front(slot, List::Recent);
        }
    }

    /// The connection idle longest.
    pub(super) fn oldest(&self) -> Option<Key> {
        self.conn(self.idle.oldest).map(|c| c.key)
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
    /// gives back the holes of a direction that has none left, and its place among those
    /// keeping delivered pieces.
    pub(super) fn settle(&mut self, slot: Slot) {
        let Some(c) = self.conn_mut(slot) else {
            return;
        };
        let id = c.id;
        // A direction without holes was charged nothing and kept nothing: it stays so, and
        // costs no look at the B-trees.
        if c.halves.iter().any(|h| h.holes.is_some()) {
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
            for ((side, was, now), (_, was_kept, now_kept)) in changes {
                if was != now {
                    self.uncharge(was, id, side);
                    self.charge(now, id, side, slot);
                }
                if was_kept != now_kept {
                    if let Some(f) = was_kept {
                        self.kept.remove(&(f, id, side));
                    }
                    if let Some(f) = now_kept {
                        self.kept.insert((f, id, side), slot);
                    }
                }
            }
        }
        self.settle_recent(slot);
    }

    /// Enters the connection in the order of those keeping delivered pieces if it keeps some
    /// now, and lets the pieces of the least recently active go past `MAX_RECENT`.
    fn settle_recent(&mut self, slot: Slot) {
        let Some(c) = self.conn_mut(slot) else {
            return;
        };
        let keeps = c.halves.iter().any(|h| h.delivered.is_kept());
        if keeps == c.in_recent {
            return;
        }
        c.in_recent = keeps;
        if !keeps {
            // Closed, or never carried data: nothing to let go later.
            self.unlink(slot, List::Recent);
            return;
        }
        self.enter_recent(slot);
        while self.recent.len > MAX_RECENT {
            let old = self.recent.oldest;
            self.unlink(old, List::Recent);
            let Some(c) = self.conn_mut(old) else {
                break;
            };
            c.in_recent = false;
            for h in c.halves.iter_mut() {
                h.delivered.let_go();
            }
        }
    }

    /// Puts a connection among those keeping delivered pieces where its idleness places it:
    /// just older than the nearest newer connection there. The connection of the packet being
    /// dealt with is the newest of all, found at once; only one the total budget made deliver
    /// (`Reassembler::enforce_total`) is looked for further.
    fn enter_recent(&mut self, slot: Slot) {
        let mut newer = self.conn(slot).map_or(NONE, |c| c.idle.newer);
        while let Some(c) = self.conn(newer) {
            if c.in_recent {
                break;
            }
            newer = c.idle.newer;
        }
        if newer == NONE {
            self.push_newest(slot, List::Recent);
        } else {
            self.link_after(slot, newer, List::Recent);
        }
    }

    /// Every connection, in order of creation, leaving the table empty. The boxes are
    /// sorted, not the connections: moving every connection out of its box into one vector
    /// (and the sort's scratch copy of it) made the end of a capture of 19 000 open
    /// connections its peak, 25 MB over the table itself.
    #[allow(clippy::vec_box)] // the point: a vector of boxes, not of connections
    pub(super) fn drain_in_order(&mut self) -> Vec<Box<Conn>> {
        self.idle = Ends::default();
        self.recent = Ends::default();
        self.memory.clear();
        self.kept.clear();
        self.total = 0;
        self.index = HashTable::new();
        self.free.clear();
        let mut all: Vec<Box<Conn>> = self.slots.drain(..).flatten().collect();
        all.sort_by_key(|c| c.id);
        all
    }

    fn ends(&mut self, list: List) -> &mut Ends {
        match list {
            List::Idle => &mut self.idle,
            List::Recent => &mut self.recent,
        }
    }

    /// The links of `slot` in `list`, to change (none for an empty slot).
    fn links(&mut self, slot: Slot, list: List) -> Option<&mut Links> {
        self.conn_mut(slot).map(|c| list.links(c))
    }

    /// Takes `slot` out of `list`, joining its neighbours.
    fn unlink(&mut self, slot: Slot, list: List) {
        let Some(l) = self.links(slot, list) else {
            return;
        };
        let Links { newer, older } = std::mem::take(l);
        match self.links(newer, list) {
            Some(n) => n.older = older,
            None => self.ends(list).newest = older,
        }
        match self.links(older, list) {
            Some(o) => o.newer = newer,
            None => self.ends(list).oldest = newer,
        }
        let ends = self.ends(list);
        ends.len = ends.len.saturating_sub(1);
    }

    /// Puts `slot` (in no list) at the front of `list`.
    fn push_newest(&mut self, slot: Slot, list: List) {
        let newest = self.ends(list).newest;
        let Some(l) = self.links(slot, list) else {
            return;
        };
        *l = Links {
            newer: NONE,
            older: newest,
        };
        match self.links(newest, list) {
            Some(n) => n.newer = slot,
            None => self.ends(list).oldest = slot,
        }
        let ends = self.ends(list);
        ends.newest = slot;
        ends.len += 1;
    }

    /// Puts `slot` (in no list) in `list` just older than `newer` (which is there).
    fn link_after(&mut self, slot: Slot, newer: Slot, list: List) {
        let Some(older) = self.links(newer, list).map(|n| n.older) else {
            return;
        };
        let Some(l) = self.links(slot, list) else {
            return;
        };
        *l = Links { newer, older };
        if let Some(n) = self.links(newer, list) {
            n.older = slot;
        }
        match self.links(older, list) {
            Some(o) => o.newer = slot,
            None => self.ends(list).oldest = slot,
        }
        self.ends(list).len += 1;
    }

    /// Moves `slot` (in `list`) to its front.
    fn move_to_front(&mut self, slot: Slot, list: List) {
        if self.ends(list).newest != slot {
            self.unlink(slot, list);
            self.push_newest(slot, list);
        }
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
    /// The slots of `list`, newest first, checking that its links agree both ways.
    fn walk(&self, list: List) -> Vec<Slot> {
        let ends = match list {
            List::Idle => self.idle,
            List::Recent => self.recent,
        };
        let links = |s: Slot| {
            self.conn(s).map(|c| match list {
                List::Idle => c.idle,
                List::Recent => c.recent,
            })
        };
        let mut out = Vec::new();
        let (mut at, mut newer) = (ends.newest, NONE);
        while let Some(l) = links(at) {
            assert_eq!(l.newer, newer, "slot {at}");
            assert!(out.len() <= self.slots.len(), "a loop in {list:?}");
            out.push(at);
            newer = at;
            at = l.older;
        }
        assert_eq!(at, NONE);
        assert_eq!(ends.oldest, newer);
        assert_eq!(ends.len, out.len());
        out
    }

    /// Checks that the orders and the total agree with the connections.
    pub(super) fn check(&self) {
        let idle = self.walk(List::Idle);
        assert_eq!(idle.len(), self.index.len());
        // Newest first: frames never grow down the list.
        let seen: Vec<u64> = idle
            .iter()
            .filter_map(|&s| self.conn(s).map(|c| c.last_seen))
            .collect();
        assert!(seen.windows(2).all(|w| w.first() >= w.get(1)), "{seen:?}");
        for &slot in &self.index {
            let k = key_in(&self.slots, slot);
            assert!(k.is_some_and(|k| self.find(&k) == Some(slot)));
            let c = self.conn(slot);
            assert!(c.is_some_and(|c| c.key == Key::of(c.addrs[Side::A], c.addrs[Side::B])));
        }
        let live = self.slots.iter().filter(|s| s.is_some()).count();
        assert_eq!(live, self.index.len());
        assert_eq!(live + self.free.len(), self.slots.len());
        let mut sum = 0;
        for (&(bytes, id, side), &k) in &self.memory {
            let c = self.conn(k);
            assert!(c.is_some_and(|c| c.id == id && c.halves[side].holes().charged == bytes));
            sum += bytes;
        }
        assert_eq!(sum, self.total);
        // The recent list: every connection keeping pieces, in idle order, at most MAX_RECENT.
        let recent = self.walk(List::Recent);
        assert!(recent.len() <= MAX_RECENT);
        let in_idle: Vec<Slot> = idle
            .iter()
            .copied()
            .filter(|&s| self.conn(s).is_some_and(|c| c.in_recent))
            .collect();
        assert_eq!(recent, in_idle);
        for c in self.slots.iter().flatten() {
            let keeps = c.halves.iter().any(|h| h.delivered.is_kept());
            assert_eq!(keeps, c.in_recent, "stream {}", c.id);
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
    use super::{Conn, Key, List, Slot, Table, MAX_RECENT};
    use crate::side::Side;
    use std::net::SocketAddr;

    /// Connection `id`, from port `1000 + id`, first seen at `frame`, into the table.
    fn open(t: &mut Table, id: u32, frame: u64) -> (Key, Slot) {
        let port = 1000 + u16::try_from(id).unwrap_or(0);
        let (a, b) = (
            SocketAddr::from(([10, 0, 0, 1], port)),
            SocketAddr::from(([10, 0, 0, 2], 9092)),
        );
        let k = Key::of(a, b);
        let slot = t.insert(k, Conn::new(id, a, b, frame));
        t.check();
        (k, slot)
    }

    /// The ids of the connections in `list`, newest first.
    fn ids(t: &Table, list: List) -> Vec<u32> {
        t.walk(list)
            .into_iter()
            .filter_map(|s| t.conn(s).map(|c| c.id))
            .collect()
    }

    /// The slot found last is taken only while it still holds the key looked for: once its
    /// connection is gone and another took the slot, the old key finds nothing.
    #[test]
    fn the_slot_found_last_is_checked_before_it_is_used() {
        let mut t = Table::default();
        let (a, slot_a) = open(&mut t, 1, 1);
        let (b, slot_b) = open(&mut t, 2, 2);
        assert_eq!(t.find(&a), Some(slot_a));
        assert_eq!(t.find(&a), Some(slot_a));
        assert_eq!(t.find(&b), Some(slot_b));
        assert_eq!(t.find(&a), Some(slot_a));
        assert!(t.remove(&a).is_some());
        assert_eq!(t.find(&a), None);
        // The freed slot goes to the next connection.
        let (c, slot_c) = open(&mut t, 3, 3);
        assert_eq!(slot_c, slot_a);
        assert_eq!(t.find(&a), None);
        assert_eq!(t.find(&c), Some(slot_c));
        assert_eq!(t.find(&b), Some(slot_b));
    }

    /// A packet moves its connection to the front; the tail, the one idle longest, is the one
    /// evicted, and taking it out joins its neighbours.
    #[test]
    fn the_tail_is_idle_longest_and_a_packet_moves_to_the_front() {
        let mut t = Table::default();
        let conns: Vec<(Key, Slot)> = (0..4).map(|i| open(&mut t, i, u64::from(i) + 1)).collect();
        assert_eq!(ids(&t, List::Idle), [3, 2, 1, 0]);
        let slot = |i: usize| conns.get(i).map_or(u32::MAX, |c| c.1);
        let key = |i: usize| conns.get(i).map(|c| c.0);
        t.touch(slot(0), 5);
        t.check();
        assert_eq!(ids(&t, List::Idle), [0, 3, 2, 1]);
        assert_eq!(Some(t.oldest()), Some(key(1)));
        // A connection in the middle goes: its neighbours are joined.
        assert!(key(2).and_then(|k| t.remove(&k)).is_some());
        t.check();
        assert_eq!(ids(&t, List::Idle), [0, 3, 1]);
        // Packets of the newest leave the order as it is; the tail goes next.
        t.touch(slot(0), 6);
        t.touch(slot(1), 7);
        t.check();
        assert_eq!(ids(&t, List::Idle), [1, 0, 3]);
        assert_eq!(Some(t.oldest()), Some(key(3)));
        for i in [3, 0, 1] {
            assert!(key(i).and_then(|k| t.remove(&k)).is_some());
            t.check();
        }
        assert_eq!((t.len(), t.oldest()), (0, None));
    }

    /// A slot let go is taken by the next connection: the slab grows only with the connections
    /// tracked at once.
    #[test]
    fn a_freed_slot_is_taken_by_the_next_connection() {
        let mut t = Table::default();
        let (_, s0) = open(&mut t, 0, 1);
        let (k1, s1) = open(&mut t, 1, 2);
        let (_, s2) = open(&mut t, 2, 3);
        assert_eq!(t.slots.len(), 3);
        assert!(t.remove(&k1).is_some());
        t.check();
        let (_, s3) = open(&mut t, 3, 4);
        assert_eq!(s3, s1);
        assert_eq!(t.slots.len(), 3);
        assert_eq!(ids(&t, List::Idle), [3, 2, 0]);
        for _ in 0..100 {
            let (k, _) = open(&mut t, 4, 5);
            assert!(t.remove(&k).is_some());
        }
        assert_eq!(t.slots.len(), 4);
        assert!(s0 != s2 && s2 != s3);
    }

    /// Only the `MAX_RECENT` connections active last keep delivered pieces, in idle order; one
    /// that starts keeping them without a packet of its own (the total budget made it
    /// deliver) takes its place by idleness, and the least recently active lets go of its.
    #[test]
    fn connections_keeping_pieces_are_bounded_in_idle_order() {
        let mut t = Table::default();
        let n = MAX_RECENT as u32 + 2;
        let slots: Vec<Slot> = (0..n)
            .map(|i| open(&mut t, i, u64::from(i) + 1).1)
            .collect();
        let deliver = |t: &mut Table, slot: Slot| {
            if let Some(c) = t.conn_mut(slot) {
                c.halves[Side::A].delivered.push(b"x", 1);
            }
            t.settle(slot);
            t.check();
        };
        // All but connection 1 deliver, in the order of their packets.
        for (i, &slot) in slots.iter().enumerate() {
            if i != 1 {
                deliver(&mut t, slot);
            }
        }
        let recent = ids(&t, List::Recent);
        assert_eq!(recent.len(), MAX_RECENT);
        // Connection 0, active least recently, let go of its pieces.
        assert_eq!(recent.last(), Some(&2));
        let kept = |t: &Table, i: usize| {
            slots
                .get(i)
                .and_then(|&s| t.conn(s))
                .is_some_and(|c| c.halves[Side::A].delivered.is_kept())
        };
        assert!(!kept(&t, 0));
        // Connection 1 delivers without a packet: it is older than every other keeping
        // pieces, so its are let go at once.
        deliver(&mut t, slots.get(1).copied().unwrap_or(u32::MAX));
        assert!(!kept(&t, 1));
        assert_eq!(ids(&t, List::Recent), recent);
        // After a packet it is the newest: connection 2 lets go instead.
        let s1 = slots.get(1).copied().unwrap_or(u32::MAX);
        t.touch(s1, u64::from(n) + 1);
        deliver(&mut t, s1);
        assert!(kept(&t, 1) && !kept(&t, 2));
        assert_eq!(ids(&t, List::Recent).first(), Some(&1));
        assert_eq!(ids(&t, List::Recent).last(), Some(&3));
    }

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
