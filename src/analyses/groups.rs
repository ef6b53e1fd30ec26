//! Group timelines: members joining and leaving, generations with their members and
//! assignments (the consumer protocol inside JoinGroup and SyncGroup, the partitions and
//! tasks of the KIP-848, share and streams heartbeats), rebalances with their duration
//! (classic: the first JoinGroup request to the last SyncGroup response of the generation;
//! KIP-848, share and streams groups: the first heartbeat answer giving a member epoch to the
//! last member reaching it), heartbeats answered REBALANCE_IN_PROGRESS, fenced members, and
//! the time a classic group consumed nothing while it rebalanced.
//!
//! Members are followed by member id (and by group.instance.id, which a static member keeps
//! when its member id changes): each joins once and leaves once, with the reason. State is
//! bounded: the members followed, the generations and events kept per group and in all, each
//! past its limit counted in `dropped`.

use super::adapter::Event;
use super::series::{at_text, ms, ms_text};
use super::MAX_KEYS;
use crate::analyses::hash::{HashMap, HashSet};
use crate::kafka::names::error_name;
use crate::text::table::{Cell, Fit, Grid};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// Errors that tell a member it was fenced out of its group.
const FENCED: [i16; 5] = [22, 25, 82, 110, 113];
const REBALANCE_IN_PROGRESS: i16 = 27;
const MEMBER_ID_REQUIRED: i16 = 79;

/// Generations (or epochs) kept per group: the newest; older ones are counted.
pub const MAX_GENERATIONS: usize = 100;
/// Events kept per group: the newest; older ones are counted.
pub const MAX_EVENTS: usize = 1_000;
/// Members listed with their assignment in one generation (and joins and leaves listed in
/// it); past it they are counted.
pub const MAX_LISTED: usize = 1_000;
/// Members followed in one group; past it a member's joins and leaves are not counted.
pub const MAX_MEMBERS: usize = 10_000;
/// In all groups together: members followed, members listed in kept generations, and
/// events kept, each at most this many; past it new ones are counted and not kept.
pub const MAX_KEPT: usize = 20_000;
/// Groups followed; the messages of others are counted.
pub const MAX_GROUPS: usize = MAX_KEYS;
/// A share group member silent for this many heartbeat intervals when a new group epoch
/// begins was dropped by its session timeout (share groups assign a partition to several
/// members at once, so the partitions cannot tell).
const SILENT_INTERVALS: i64 = 2;
/// The heartbeat interval when no answer gave one: group.share.heartbeat.interval.ms and
/// group.consumer.heartbeat.interval.ms default to 5 s.
const DEFAULT_INTERVAL_MS: i64 = 5_000;

/// Partitions by topic (for a streams group: tasks, by kind and subtopology).
pub type Assignment = Vec<(String, Vec<i32>)>;

/// One generation (classic) or group epoch (KIP-848, share, streams).
#[derive(Debug, Clone, Default)]
pub struct Generation {
    pub id: i64,
    /// Rebalance start: first JoinGroup request (classic), first answer with this epoch.
    pub start: (i64, u64),
    /// The last SyncGroup response (classic), the last member reaching the epoch.
    pub end: Option<(i64, u64)>,
    /// The first answer that gave this generation: members absent from it left then.
    pub opened: (i64, u64),
    /// Members listed (at most `MAX_LISTED`) with their assignment in this generation
    /// (`None`: not seen, as for a member known from its heartbeats alone).
    pub members: BTreeMap<String, Option<Assignment>>,
    /// Members of the generation, listed or not.
    pub member_count: usize,
    pub leader: Option<String>,
    pub protocol: Option<String>,
    /// Members that joined in this generation.
    pub joined: Vec<String>,
    /// Members that left since the generation before, with the reason.
    pub left: Vec<Left>,
    /// Members, joins and leaves past `MAX_LISTED`: counted, not listed.
    pub unlisted: u64,
    /// A complete member list was seen (the leader's JoinGroup answer or SyncGroup request).
    complete: bool,
    /// Known from its members' heartbeats alone: its rebalance was not captured.
    pub from_heartbeats: bool,
}

impl Generation {
    fn list_join(&mut self, member: &str) {
        if self.joined.len() < MAX_LISTED {
            self.joined.push(member.to_string());
        } else {
            self.unlisted += 1;
        }
    }

    fn list_leave(&mut self, left: Left) {
        if self.left.len() < MAX_LISTED {
            self.left.push(left);
        } else {
            self.unlisted += 1;
        }
    }
}

/// A member that left, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    pub member: String,
    /// `LeaveGroup`, `heartbeat with epoch -1` (or -2), `absent`, `timed out`.
    pub why: &'static str,
    /// The whole reason, as the timeline says it.
    pub detail: String,
}

/// Something that happened to a group.
#[derive(Debug, Clone)]
pub struct Happening {
    pub ts: i64,
    pub frame: u64,
    pub what: &'static str,
    pub member: String,
    pub detail: String,
}

/// A member followed, while it is in the group.
#[derive(Debug, Clone, Default)]
struct Member {
    /// Its last request or answer.
    last_heard: i64,
    /// The last member epoch it was answered (KIP-848, share, streams).
    epoch: Option<i64>,
    /// The last generation (or epoch) it was counted in.
    generation: Option<i64>,
    /// What it was last assigned, when seen.
    assignment: Option<Assignment>,
    instance_id: Option<String>,
    interval_ms: Option<i64>,
    /// Its JoinGroup's session timeout (classic).
    session_timeout_ms: Option<i64>,
    /// First seen in the first generation the capture saw, with a member id it had before.
    since_before: bool,
}

/// What the bounds left out, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// Generations older than the newest `MAX_GENERATIONS` of their group.
    pub generations: u64,
    /// Events older than the newest `MAX_EVENTS` of their group, or past `MAX_KEPT`.
    pub events: u64,
    /// Members (and joins and leaves) of a generation not listed in it.
    pub listed: u64,
    /// Sightings of members not followed (past `MAX_MEMBERS` or `MAX_KEPT`).
    pub members: u64,
}

/// How much the groups keep together, against `MAX_KEPT`.
#[derive(Debug, Default)]
struct Budget {
    members: usize,
    listed: usize,
    events: usize,
}

#[derive(Debug, Default)]
pub struct GroupLine {
    /// `classic`, `consumer` (KIP-848), `share` or `streams`.
    pub protocol: &'static str,
    /// The newest `MAX_GENERATIONS` generations, in the order they began.
    pub generations: VecDeque<Generation>,
    /// Generations seen, kept or not.
    pub generations_seen: u64,
    /// A classic rebalance under way: its first JoinGroup request.
    open: Option<(i64, u64)>,
    /// Members in the group now, by member id.
    members: HashMap<String, Member>,
    /// Member ids by group.instance.id.
    by_instance: HashMap<String, String>,
    /// Member ids handed out (MEMBER_ID_REQUIRED) not yet seen in a generation.
    given: HashSet<String>,
    /// Members that left: a second goodbye of theirs is not a second leave.
    gone: HashSet<String>,
    /// Leaves since the newest generation began, listed with the next one.
    pub pending_left: Vec<Left>,
    /// The newest `MAX_EVENTS` events.
    pub happenings: VecDeque<Happening>,
    pub rebalance_in_progress: u64,
    pub fenced: u64,
    pub joins: u64,
    pub leaves: u64,
    /// Members first seen in the first generation the capture saw, which they had joined
    /// before the capture began (not counted as joins).
    pub present_at_start: u64,
    rebalancing: i64,
    pub dropped: Dropped,
}

impl GroupLine {
    fn happen(
        &mut self,
        b: &mut Budget,
        at: (i64, u64),
        what: &'static str,
        member: &str,
        detail: String,
    ) {
        if self.happenings.len() >= MAX_EVENTS {
            self.happenings.pop_front();
            b.events -= 1;
            self.dropped.events += 1;
        }
        if b.events >= MAX_KEPT {
            self.dropped.events += 1;
            return;
        }
        b.events += 1;
        self.happenings.push_back(Happening {
            ts: at.0,
            frame: at.1,
            what,
            member: member.to_string(),
            detail,
        });
    }

    /// Milliseconds the group spent in rebalances (the sum of their durations), in ns.
    pub fn rebalancing_ns(&self) -> i64 {
        self.rebalancing
    }

    fn index_of(&self, id: i64) -> Option<usize> {
        // The generation asked for is almost always the newest.
        self.generations.iter().rposition(|g| g.id == id)
    }

    /// Generation `id`, begun (if new) by the answer at `opened`, its rebalance at `start`.
    fn generation_at(
        &mut self,
        b: &mut Budget,
        id: i64,
        start: (i64, u64),
        opened: (i64, u64),
    ) -> usize {
        if let Some(i) = self.index_of(id) {
            return i;
        }
        if self.protocol == "classic" {
            self.absent_from_newest(b);
        }
        if self.generations.len() >= MAX_GENERATIONS {
            if let Some(old) = self.generations.pop_front() {
                b.listed -= old.members.len();
                self.dropped.generations += 1;
            }
        }
        self.generations_seen += 1;
        let left = std::mem::take(&mut self.pending_left);
        self.generations.push_back(Generation {
            id,
            start,
            opened,
            left,
            ..Generation::default()
        });
        self.generations.len() - 1
    }

    /// A new classic generation begins while the newest one never showed its whole member
    /// list (its leader's JoinGroup answer and SyncGroup request were not captured): the
    /// members it did not answer have left.
    fn absent_from_newest(&mut self, b: &mut Budget) {
        let Some(g) = self.generations.back() else {
            return;
        };
        if g.complete {
            return;
        }
        let (id, at) = (g.id, g.opened);
        self.leave_absent(
            b,
            id,
            at,
            "absent from generation {id}, which it did not answer",
        );
    }

    /// Members not in generation `id` (which began at `at`) have left.
    fn leave_absent(&mut self, b: &mut Budget, id: i64, at: (i64, u64), reason: &str) {
        let mut absent: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| m.generation.is_some_and(|g| g < id))
            .map(|(k, _)| k.clone())
            .collect();
        absent.sort();
        let reason = reason.replace("{id}", &id.to_string());
        for m in absent {
            let why = match self.members.get(&m) {
                Some(x) => format!(
                    "{reason}: last heard {:.1} s before{}",
                    (at.0 - x.last_heard) as f64 / 1e9,
                    x.session_timeout_ms
                        .map(|t| format!(", session timeout {:.1} s", t as f64 / 1e3))
                        .unwrap_or_default()
                ),
                None => reason.clone(),
            };
            self.leave(b, &m, at, ("absent", &why), Some(id));
        }
    }

    /// `member` left at `at`, for `reason`: listed in generation `in_gen`, or with the next
    /// one. A member not followed (joined before the capture, or past the bounds) counts
    /// once, unless it left before.
    fn leave(
        &mut self,
        b: &mut Budget,
        member: &str,
        at: (i64, u64),
        (why, reason): (&'static str, &str),
        in_gen: Option<i64>,
    ) {
        match self.members.remove(member) {
            Some(m) => {
                b.members -= 1;
                if let Some(i) = m.instance_id {
                    self.by_instance.remove(&i);
                }
            }
            None if self.gone.contains(member) => return,
            None => {}
        }
        if self.gone.len() >= MAX_MEMBERS {
            self.gone.clear();
        }
        self.gone.insert(member.to_string());
        self.leaves += 1;
        self.happen(b, at, "left", member, reason.to_string());
        let left = Left {
            member: member.to_string(),
            why,
            detail: reason.to_string(),
        };
        match in_gen.and_then(|id| self.index_of(id)) {
            Some(i) => self.generations[i].list_leave(left),
            None if self.pending_left.len() < MAX_LISTED => self.pending_left.push(left),
            None => self.dropped.listed += 1,
        }
    }

    /// The member id a static member's group.instance.id had, if it changed to `member`:
    /// the member is the same (a restart), under its new id.
    fn renamed(&mut self, b: &mut Budget, member: &str, instance: Option<&String>, at: (i64, u64)) {
        let Some(inst) = instance else { return };
        let Some(old) = self.by_instance.get(inst).cloned() else {
            return;
        };
        if old == member || self.members.contains_key(member) {
            return;
        }
        if let Some(m) = self.members.remove(&old) {
            self.members.insert(member.to_string(), m);
            self.by_instance.insert(inst.clone(), member.to_string());
            self.happen(
                b,
                at,
                "rejoined",
                member,
                format!("group.instance.id {inst:?}, member id was {old}"),
            );
        }
    }

    /// `member` seen in generation `id` at `at` (by its own answer when `own` holds its
    /// request's member id, or in a list): followed from its first sighting, which is a join
    /// unless the member was in the group before the capture began.
    fn sighted(
        &mut self,
        b: &mut Budget,
        member: &str,
        id: i64,
        at: (i64, u64),
        own: Option<&str>,
        instance: Option<&String>,
    ) {
        if member.is_empty() {
            return;
        }
        self.renamed(b, member, instance, at);
        let gi = self.index_of(id);
        // A classic member first seen after a generation the capture saw whole is new; a
        // KIP-848 member is new only when it heartbeats at epoch 0 (`own`).
        let earlier = self.protocol == "classic"
            && (gi.is_some_and(|i| i > 0) || self.generations_seen > self.generations.len() as u64);
        if let Some(m) = self.members.get_mut(member) {
            m.last_heard = m.last_heard.max(at.0);
            // An old client joins with an empty member id and gets its id in this answer:
            // first seen in the leader's list, it had looked like a member from before.
            if m.since_before && own == Some("") {
                m.since_before = false;
                self.present_at_start -= 1;
                self.joined(b, member, at, gi);
            }
        } else if self.members.len() >= MAX_MEMBERS || b.members >= MAX_KEPT {
            self.dropped.members += 1;
            return;
        } else {
            let fresh = self.given.remove(member) || earlier || own == Some("");
            b.members += 1;
            self.members.insert(
                member.to_string(),
                Member {
                    last_heard: at.0,
                    instance_id: instance.cloned(),
                    since_before: !fresh,
                    ..Member::default()
                },
            );
            if let Some(i) = instance {
                self.by_instance.insert(i.clone(), member.to_string());
            }
            self.gone.remove(member);
            if fresh {
                self.joined(b, member, at, gi);
            } else {
                self.present_at_start += 1;
            }
        }
        if let Some(i) = gi {
            self.count_in(b, member, i);
        }
    }

    fn joined(&mut self, b: &mut Budget, member: &str, at: (i64, u64), gi: Option<usize>) {
        self.joins += 1;
        let detail = gi.map_or_else(String::new, |i| {
            let g = &self.generations[i];
            let word = if self.protocol == "classic" {
                "generation"
            } else {
                "member epoch"
            };
            format!("{word} {}", g.id)
        });
        self.happen(b, at, "joined", member, detail);
        if let Some(i) = gi {
            self.generations[i].list_join(member);
        }
    }

    /// Counts `member` in generation `i` once, listed with its assignment while room is left.
    fn count_in(&mut self, b: &mut Budget, member: &str, i: usize) {
        let Some(m) = self.members.get_mut(member) else {
            return;
        };
        let g = &mut self.generations[i];
        if m.generation != Some(g.id) {
            m.generation = Some(g.id);
            g.member_count += 1;
        }
        if let Some(a) = g.members.get_mut(member) {
            match (a.as_mut(), &m.assignment) {
                // A KIP-848 member gives partitions up at its epoch on its way to the next
                // one, and is given more at it: what it held at the epoch is the union.
                (Some(a), Some(now)) if self.protocol != "classic" => union_into(a, now),
                _ => a.clone_from(&m.assignment),
            }
        } else if g.members.len() < MAX_LISTED && b.listed < MAX_KEPT {
            b.listed += 1;
            g.members.insert(member.to_string(), m.assignment.clone());
        } else {
            g.unlisted += 1;
            self.dropped.listed += 1;
        }
    }

    /// `member` was assigned `a` in generation `i`.
    fn assign(&mut self, b: &mut Budget, member: &str, i: usize, a: Assignment) {
        if let Some(m) = self.members.get_mut(member) {
            m.assignment = Some(sorted(a));
        }
        self.count_in(b, member, i);
    }

    /// The generation's whole member list was seen: members not in it have left.
    fn completed(&mut self, b: &mut Budget, i: usize) {
        let g = &mut self.generations[i];
        if g.complete {
            return;
        }
        g.complete = true;
        let (id, at) = (g.id, g.opened);
        self.leave_absent(b, id, at, "absent from generation {id}");
    }

    /// The end of generation `i` moved to `at`: the rebalancing time follows.
    fn ended(&mut self, i: usize, at: (i64, u64)) {
        let g = &mut self.generations[i];
        let before = g.end.map_or(0, |e| e.0 - g.start.0);
        g.end = Some(at);
        self.rebalancing += at.0 - g.start.0 - before;
    }
}

#[derive(Debug, Default)]
pub struct Timeline {
    pub groups: BTreeMap<String, GroupLine>,
    budget: Budget,
    /// Messages of groups past `MAX_GROUPS`.
    pub groups_dropped: u64,
}

/// An assignment as `?` when not seen.
fn maybe_text(a: &Option<Assignment>) -> String {
    a.as_ref().map_or_else(|| "?".into(), text_of)
}

fn text_of(a: &Assignment) -> String {
    if a.is_empty() {
        return "[]".into();
    }
    a.iter()
        .map(|(t, p)| {
            let ps: Vec<String> = p.iter().map(i32::to_string).collect();
            format!("{t}[{}]", ps.join(","))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The group protocol of a heartbeat API.
fn kind_of(key: i16) -> &'static str {
    match key {
        68 => "consumer",
        76 => "share",
        88 => "streams",
        _ => "classic",
    }
}

/// Adds to `a` the partitions of `b` it lacks.
fn union_into(a: &mut Assignment, b: &Assignment) {
    for (t, ps) in b {
        match a.iter_mut().find(|(u, _)| u == t) {
            Some((_, qs)) => {
                for p in ps {
                    if !qs.contains(p) {
                        qs.push(*p);
                    }
                }
                qs.sort_unstable();
            }
            None => a.push((t.clone(), ps.clone())),
        }
    }
}

/// An assignment with each topic's partitions in order (brokers send them in any order).
fn sorted(mut a: Assignment) -> Assignment {
    for (_, ps) in &mut a {
        ps.sort_unstable();
    }
    a
}

/// Whether two assignments share a partition (or task).
fn overlap(a: &Assignment, b: &Assignment) -> bool {
    a.iter().any(|(t, ps)| {
        b.iter()
            .any(|(u, qs)| t == u && ps.iter().any(|p| qs.contains(p)))
    })
}

/// A heartbeat answer's assignment (null: unchanged): partitions, or a streams member's
/// tasks as `active 0[1,2]`.
fn assignment_of(e: &Event) -> Option<Assignment> {
    let m = e.members.first()?;
    if !m.tasks.is_empty() {
        return Some(
            m.tasks
                .iter()
                .map(|(kind, sub, parts)| (format!("{kind} {sub}"), parts.clone()))
                .collect(),
        );
    }
    Some(m.partitions.clone())
}

impl Timeline {
    fn line(
        &mut self,
        group: &str,
        protocol: &'static str,
    ) -> Option<(&mut GroupLine, &mut Budget)> {
        if self.groups.len() >= MAX_GROUPS && !self.groups.contains_key(group) {
            self.groups_dropped += 1;
            return None;
        }
        let l = self.groups.entry(group.to_string()).or_default();
        if l.protocol.is_empty() {
            l.protocol = protocol;
        }
        Some((l, &mut self.budget))
    }

    pub fn request(&mut self, e: &Event) {
        let Some(group) = e.group.clone() else { return };
        match e.api_key {
            11 => {
                let Some((l, _)) = self.line(&group, "classic") else {
                    return;
                };
                let settled = l.generations.back().is_none_or(|g| g.end.is_some());
                if l.open.is_none() && settled {
                    l.open = Some((e.ts, e.frame));
                }
                l.heard(e);
            }
            12 => self.classic_heartbeat(&group, e),
            13 => {
                let Some((l, b)) = self.line(&group, "classic") else {
                    return;
                };
                let mut left: Vec<(String, Option<String>)> = e
                    .members
                    .iter()
                    .map(|m| (m.member_id.clone(), m.instance_id.clone()))
                    .collect();
                if let Some(m) = &e.member {
                    left.push((m.clone(), e.instance_id.clone()));
                }
                for (m, inst) in left {
                    // A static member may leave by its group.instance.id alone.
                    let m = match inst.and_then(|i| l.by_instance.get(&i).cloned()) {
                        Some(known) if m.is_empty() => known,
                        _ => m,
                    };
                    l.leave(b, &m, (e.ts, e.frame), ("LeaveGroup", "LeaveGroup"), None);
                }
            }
            14 => self.sync_assignments(&group, e),
            68 | 76 | 88 => {
                let Some((l, b)) = self.line(&group, kind_of(e.api_key)) else {
                    return;
                };
                l.heard(e);
                if let (Some(x), Some(m)) = (e.member_epoch.filter(|x| *x < 0), &e.member) {
                    let why = if x == -2 {
                        "heartbeat with epoch -2 (static member, may rejoin)"
                    } else {
                        "heartbeat with epoch -1"
                    };
                    let m = m.clone();
                    l.leave(b, &m, (e.ts, e.frame), (why, why), None);
                }
            }
            _ => {}
        }
    }

    /// A classic Heartbeat: the member is alive, in its generation. A group whose rebalance
    /// came before the capture is known by its heartbeats: their generation, their members
    /// (present before the capture began).
    fn classic_heartbeat(&mut self, group: &str, e: &Event) {
        let Some((l, b)) = self.line(group, "classic") else {
            return;
        };
        l.heard(e);
        let (Some(id), Some(member)) = (e.generation, e.member.as_deref()) else {
            return;
        };
        let newest = l.generations.back().map(|g| (g.id, g.from_heartbeats));
        let at = (e.ts, e.frame);
        match newest {
            // Its answers gave the generation's members.
            Some((n, false)) if n >= id => return,
            Some((n, true)) if n > id => return,
            Some((n, true)) if n == id => {}
            _ => {
                let i = l.generation_at(b, id, at, at);
                l.generations[i].from_heartbeats = true;
            }
        }
        l.sighted(b, member, id, at, None, e.instance_id.as_ref());
    }

    /// The leader's SyncGroup request: every member's assignment.
    fn sync_assignments(&mut self, group: &str, e: &Event) {
        let Some((l, b)) = self.line(group, "classic") else {
            return;
        };
        l.heard(e);
        let (Some(id), false) = (e.generation, e.members.is_empty()) else {
            return;
        };
        let at = (e.ts, e.frame);
        let i = l.generation_at(b, id, l.open.unwrap_or(at), at);
        if l.generations[i].leader.is_none() {
            l.generations[i].leader = e.member.clone();
        }
        for m in &e.members {
            l.sighted(b, &m.member_id, id, at, None, m.instance_id.as_ref());
            if let Some(i) = l.index_of(id) {
                l.assign(b, &m.member_id, i, m.partitions.clone());
            }
        }
        if let Some(i) = l.index_of(id) {
            l.completed(b, i);
        }
    }

    pub fn response(&mut self, req: Option<&Event>, e: &Event) {
        let Some(req) = req else { return };
        let Some(group) = req.group.clone() else {
            return;
        };
        let codes = e.error.into_iter().chain(e.error_codes.iter().copied());
        let (fenced, rip) = codes.fold((None, false), |(f, r), c| {
            (
                f.or(FENCED.contains(&c).then_some(c)),
                r || c == REBALANCE_IN_PROGRESS,
            )
        });
        match e.api_key {
            11 => self.joined(&group, req, e),
            14 => self.synced(&group, req, e),
            68 | 76 | 88 => self.heartbeat(&group, req, e),
            _ => {}
        }
        if ![8, 11, 12, 13, 14, 68, 76, 88].contains(&e.api_key) {
            return;
        }
        let (Some(l), b) = (self.groups.get_mut(&group), &mut self.budget) else {
            return;
        };
        let member = req.member.clone().unwrap_or_default();
        let at = (e.ts, e.frame);
        if rip && e.api_key == 12 {
            l.rebalance_in_progress += 1;
            l.happen(
                b,
                at,
                "rebalance in progress",
                &member,
                "Heartbeat answered REBALANCE_IN_PROGRESS".into(),
            );
        }
        if let Some(c) = fenced {
            l.fenced += 1;
            let name = error_name(c).unwrap_or("?");
            l.happen(
                b,
                at,
                "fenced",
                &member,
                format!(
                    "{} answered {name}",
                    crate::kafka::message::api_display_name(e.api_key)
                ),
            );
        }
    }

    fn joined(&mut self, group: &str, req: &Event, e: &Event) {
        let Some((l, b)) = self.line(group, "classic") else {
            return;
        };
        let member = e.member.clone().or(req.member.clone()).unwrap_or_default();
        let at = (e.ts, e.frame);
        if e.error == Some(MEMBER_ID_REQUIRED) {
            if !member.is_empty() && l.given.len() < MAX_MEMBERS {
                l.given.insert(member.clone());
            }
            l.happen(
                b,
                at,
                "member id given",
                &member,
                "JoinGroup answered MEMBER_ID_REQUIRED".into(),
            );
            return;
        }
        let (Some(id), None) = (e.generation, e.error) else {
            return;
        };
        let start = l.open.unwrap_or((req.ts, req.frame));
        let i = l.generation_at(b, id, start, at);
        let g = &mut l.generations[i];
        g.protocol.clone_from(&e.protocol);
        if e.leader.is_some() {
            g.leader.clone_from(&e.leader);
        }
        let own = req.member.as_deref().unwrap_or("");
        l.sighted(b, &member, id, at, Some(own), req.instance_id.as_ref());
        if let Some(m) = l.members.get_mut(&member) {
            m.session_timeout_ms = req.session_timeout_ms.or(m.session_timeout_ms);
        }
        // The leader's answer lists every member: those not in it have left.
        if !e.members.is_empty() {
            for m in &e.members {
                l.sighted(b, &m.member_id, id, at, None, m.instance_id.as_ref());
            }
            if let Some(i) = l.index_of(id) {
                l.completed(b, i);
            }
        }
    }

    fn synced(&mut self, group: &str, req: &Event, e: &Event) {
        let Some((l, b)) = self.line(group, "classic") else {
            return;
        };
        let (Some(id), None) = (req.generation, e.error) else {
            return;
        };
        let member = req.member.clone().unwrap_or_default();
        let at = (e.ts, e.frame);
        let first = l.index_of(id).is_none();
        let i = l.generation_at(b, id, (req.ts, req.frame), at);
        l.sighted(b, &member, id, at, None, req.instance_id.as_ref());
        let i = l.index_of(id).unwrap_or(i);
        if let Some(own) = e.members.first() {
            l.assign(b, &member, i, own.partitions.clone());
        }
        l.ended(i, at);
        l.open = None;
        if first {
            l.happen(
                b,
                at,
                "generation",
                &member,
                format!("generation {id} without its JoinGroup"),
            );
        }
        let assigned = l.generations[i]
            .members
            .get(&member)
            .map(maybe_text)
            .unwrap_or_default();
        l.happen(
            b,
            at,
            "assigned",
            &member,
            format!("generation {id}: {assigned}"),
        );
    }

    /// A KIP-848, share or streams heartbeat answer: a new member epoch, an assignment (null
    /// when unchanged, which may come at an unchanged epoch too).
    fn heartbeat(&mut self, group: &str, req: &Event, e: &Event) {
        let Some((l, b)) = self.line(group, kind_of(e.api_key)) else {
            return;
        };
        let (Some(epoch), None) = (e.member_epoch, e.error) else {
            return;
        };
        let member = e.member.clone().or(req.member.clone()).unwrap_or_default();
        if epoch < 0 || member.is_empty() {
            return;
        }
        let at = (e.ts, e.frame);
        let known = l.members.contains_key(&member);
        let before = l.members.get(&member).and_then(|m| m.epoch);
        let is_new = l.index_of(epoch).is_none();
        let i = l.generation_at(b, epoch, at, at);
        if is_new && l.protocol == "share" {
            l.silent_dropped(b, epoch, at);
        }
        // A member first seen heartbeating at epoch 0 joins; at another epoch it was in
        // the group before the capture.
        let own = (req.member_epoch == Some(0)).then_some("");
        if !known {
            l.sighted(b, &member, epoch, at, own, req.instance_id.as_ref());
        }
        let i = l.index_of(epoch).unwrap_or(i);
        let assignment = assignment_of(e);
        if let Some(m) = l.members.get_mut(&member) {
            m.epoch = Some(epoch);
            m.last_heard = at.0;
            if e.heartbeat_interval_ms.is_some() {
                m.interval_ms = e.heartbeat_interval_ms;
            }
        }
        if let Some(a) = &assignment {
            if l.protocol != "share" {
                l.taken_over(b, &member, a, at);
            }
            l.assign(b, &member, i, a.clone());
        } else {
            l.count_in(b, &member, i);
        }
        if before != Some(epoch) {
            l.ended(i, at);
            let text = l.generations[i]
                .members
                .get(&member)
                .map(maybe_text)
                .unwrap_or_default();
            let from = before.map_or("-".into(), |b| b.to_string());
            l.happen(
                b,
                at,
                "epoch",
                &member,
                format!("member epoch {from} → {epoch} {text}"),
            );
        } else if let Some(a) = &assignment {
            l.happen(
                b,
                at,
                "assigned",
                &member,
                format!("member epoch {epoch}: {}", text_of(a)),
            );
        }
    }
}

impl GroupLine {
    /// A request of a member: it is alive then.
    fn heard(&mut self, e: &Event) {
        if let Some(m) = e.member.as_ref().and_then(|m| self.members.get_mut(m)) {
            m.last_heard = m.last_heard.max(e.ts);
        }
    }

    /// `member` is assigned `a` at `at`: a member silent since before the epoch it was
    /// last given began, that owned part of `a`, was dropped by the coordinator (a live
    /// member gives up a partition by heartbeating before another is given it). It timed
    /// out when that epoch began.
    fn taken_over(&mut self, b: &mut Budget, member: &str, a: &Assignment, at: (i64, u64)) {
        let Some(epoch) = self.members.get(member).and_then(|m| m.epoch) else {
            return;
        };
        let Some(i) = self.index_of(epoch) else {
            return;
        };
        let opened = self.generations[i].opened;
        let mut dropped: Vec<(String, i64)> = self
            .members
            .iter()
            .filter(|(k, m)| {
                k.as_str() != member
                    && m.last_heard < opened.0
                    && m.assignment.as_ref().is_some_and(|x| overlap(x, a))
            })
            .map(|(k, m)| (k.clone(), m.last_heard))
            .collect();
        dropped.sort();
        for (m, last) in dropped {
            let why = format!(
                "timed out: no heartbeat for {:.1} s, its partitions given to others at member epoch {epoch}",
                (opened.0 - last) as f64 / 1e9
            );
            self.leave(b, &m, opened, ("timed out", &why), Some(epoch));
        }
        let _ = at;
    }

    /// A share group's new epoch began at `at`: members silent for `SILENT_INTERVALS`
    /// heartbeat intervals were dropped by their session timeout.
    fn silent_dropped(&mut self, b: &mut Budget, epoch: i64, at: (i64, u64)) {
        let mut dropped: Vec<(String, i64)> = self
            .members
            .iter()
            .filter(|(_, m)| {
                let interval = m.interval_ms.unwrap_or(DEFAULT_INTERVAL_MS) * 1_000_000;
                at.0 - m.last_heard > SILENT_INTERVALS * interval
            })
            .map(|(k, m)| (k.clone(), m.last_heard))
            .collect();
        dropped.sort();
        for (m, last) in dropped {
            let why = format!(
                "timed out: no heartbeat for {:.1} s when member epoch {epoch} began",
                (at.0 - last) as f64 / 1e9
            );
            self.leave(b, &m, at, ("timed out", &why), Some(epoch));
        }
    }
}

/// Generations a group shows in the text table (the newest); the JSON has those kept.
pub const TEXT_GENERATIONS: usize = 12;
/// Rows of the text timeline in all; the rest are counted in a last row.
pub const TEXT_ROWS: usize = 60;
/// Members named in one cell of the text timeline.
const TEXT_MEMBERS: usize = 8;

/// Up to `TEXT_MEMBERS` items joined with `; `, and how many more there are.
fn some_of(items: Vec<String>, more: u64) -> String {
    let n = items.len();
    let mut out: Vec<String> = items.into_iter().take(TEXT_MEMBERS).collect();
    let rest = (n.saturating_sub(TEXT_MEMBERS)) as u64 + more;
    if rest > 0 {
        out.push(format!("and {rest} more"));
    }
    if out.is_empty() {
        "-".into()
    } else {
        out.join("; ")
    }
}

/// Leaves as `member (why)`: an absence is told in the row of the generation it is from.
fn left_text(left: &[Left]) -> Vec<String> {
    left.iter()
        .map(|l| {
            let short = match l.why {
                "absent" => l
                    .detail
                    .split_once(": ")
                    .map_or("absent".to_string(), |(_, r)| format!("absent: {r}")),
                "timed out" => l
                    .detail
                    .split_once(", ")
                    .map_or(l.detail.clone(), |(a, _)| a.to_string()),
                "heartbeat with epoch -1" => "epoch -1".into(),
                "heartbeat with epoch -2 (static member, may rejoin)" => "epoch -2".into(),
                _ => l.detail.clone(),
            };
            format!("{} ({short})", short_id(&l.member))
        })
        .collect()
}

/// A member id as the text table shows it: a classic member's `<client.id>-<uuid>` cut to
/// `<client.id>-<first 8 of the uuid>` (the JSON has it whole).
fn short_id(member: &str) -> &str {
    let b = member.as_bytes();
    let n = b.len();
    let uuid = n > 37
        && b[n - 37] == b'-'
        && [n - 28, n - 23, n - 18, n - 13]
            .iter()
            .all(|i| b[*i] == b'-')
        && member[n - 36..]
            .bytes()
            .all(|c| c == b'-' || c.is_ascii_hexdigit());
    if uuid {
        &member[..n - 28]
    } else {
        member
    }
}

impl Timeline {
    /// `start`: the capture's first message, which times count from. Long: one function
    /// for the two tables, as the summary's group order (busiest first) is the timeline's.
    pub fn tables(&self, start: i64, fit: Fit) -> Vec<(String, String)> {
        if self.groups.is_empty() {
            return Vec::new();
        }
        let mut g = Grid::new(&[
            "group",
            "protocol",
            "generations",
            "members",
            "joins",
            "leaves",
            "rebalance in progress",
            "fenced",
            "rebalancing",
        ]);
        let mut rows = Grid::new(&[
            "group",
            "generation",
            "started",
            "took",
            "members",
            "joined, left",
            "assignment",
        ]);
        let (mut shown, mut unshown) = (0usize, 0u64);
        let mut dropped = Dropped::default();
        for l in self.groups.values() {
            dropped.add(&l.dropped);
        }
        // The groups that changed most first: a group that only heartbeated says little.
        let mut busiest: Vec<(&String, &GroupLine)> = self.groups.iter().collect();
        busiest.sort_by_key(|(name, l)| {
            let changes = l.joins + l.leaves + l.generations_seen;
            (std::cmp::Reverse(changes), name.as_str())
        });
        for (name, l) in busiest.iter().take(fit.rows()) {
            g.row(vec![
                Cell::atom(name),
                Cell::atom(l.protocol),
                Cell::num(l.generations_seen),
                Cell::num(l.members.len()),
                Cell::num(l.joins),
                Cell::num(l.leaves),
                Cell::num(l.rebalance_in_progress),
                Cell::num(l.fenced),
                Cell::num(ms_text(l.rebalancing_ns())),
            ]);
        }
        if busiest.len() > fit.rows() {
            g.note(format!(
                "and {} more groups with fewer changes (all in --json)",
                busiest.len() - fit.rows()
            ));
        }
        for (name, l) in &busiest {
            let lines = timeline_rows(name, l, start);
            for line in lines {
                if shown < fit.rows().min(TEXT_ROWS) {
                    rows.row(line);
                    shown += 1;
                } else {
                    unshown += 1;
                }
            }
        }
        if unshown > 0 {
            rows.note(format!(
                "and {unshown} more rows of groups with fewer changes or older generations (all in --json)"
            ));
        }
        let mut summary = g.text(fit.width);
        if let Some(note) = dropped.note(self.groups_dropped) {
            summary.push_str(&note);
        }
        vec![
            ("Consumer groups".into(), summary),
            (
                "Group timeline (one row per generation)".into(),
                rows.text(fit.width),
            ),
        ]
    }

    /// Every group, by name.
    pub fn out(&self) -> Vec<GroupOut> {
        self.groups
            .iter()
            .map(|(name, l)| GroupOut {
                group: name.clone(),
                protocol: l.protocol,
                generations_seen: l.generations_seen,
                generations: l.generations.iter().map(GenerationOut::of).collect(),
                members_now: l.members.len(),
                joins: l.joins,
                leaves: l.leaves,
                present_at_start: l.present_at_start,
                left_since_newest: l.pending_left.iter().map(LeftOut::of).collect(),
                rebalance_in_progress: l.rebalance_in_progress,
                fenced: l.fenced,
                rebalancing_ms: ms(l.rebalancing_ns()),
                timeline: l
                    .happenings
                    .iter()
                    .map(|h| HappeningOut {
                        ts_ns: h.ts,
                        frame: h.frame,
                        what: h.what,
                        member: h.member.clone(),
                        detail: h.detail.clone(),
                    })
                    .collect(),
                dropped: l.dropped,
            })
            .collect()
    }
}

/// A group's rows of the text timeline: a count of the generations not shown, the newest
/// `TEXT_GENERATIONS`, and the leaves since the newest began.
fn timeline_rows(name: &str, l: &GroupLine, start: i64) -> Vec<Vec<Cell>> {
    let mut lines: Vec<Vec<Cell>> = Vec::new();
    let earlier = l.generations_seen.saturating_sub(TEXT_GENERATIONS as u64);
    if earlier > 0 {
        lines.push(vec![
            Cell::atom(name),
            Cell::atom(format!("{earlier} earlier")),
            Cell::num(""),
            Cell::num(""),
            Cell::num(""),
            Cell::text("(in --json: the newest kept)"),
            Cell::text(""),
        ]);
    }
    let newest = l.generations.len().saturating_sub(TEXT_GENERATIONS);
    for x in l.generations.iter().skip(newest) {
        lines.push(generation_row(name, x, start));
    }
    if !l.pending_left.is_empty() {
        let after = l
            .generations
            .back()
            .map_or("-".into(), |x| format!("after {}", x.id));
        lines.push(vec![
            Cell::atom(name),
            Cell::atom(after),
            Cell::num(""),
            Cell::num(""),
            Cell::num(l.members.len()),
            Cell::text(changes_text(&[], &l.pending_left)),
            Cell::text(""),
        ]);
    }
    lines
}

/// One generation as a row of the text timeline.
fn generation_row(name: &str, x: &Generation, start: i64) -> Vec<Cell> {
    let took = x.end.map_or("-".into(), |e| ms_text(e.0 - x.start.0));
    let mut changes = changes_text(&x.joined, &x.left);
    if x.from_heartbeats {
        // Its rebalance came before the capture: say so where the changes would be.
        changes = format!("(known from heartbeats) {changes}");
    }
    let unlisted = (x.member_count as u64).saturating_sub(x.members.len() as u64);
    vec![
        Cell::atom(name),
        Cell::num(x.id),
        Cell::num(at_text(x.start.0, start)),
        Cell::num(took),
        Cell::num(x.member_count),
        Cell::text(changes),
        Cell::text(assignment_text(&x.members, unlisted)),
    ]
}

/// `joined A, B; left C (why)`, or `-`.
fn changes_text(joined: &[String], left: &[Left]) -> String {
    let mut parts = Vec::new();
    if !joined.is_empty() {
        let ids = joined.iter().map(|m| short_id(m).to_string()).collect();
        parts.push(format!("joined {}", some_of(ids, 0)));
    }
    if !left.is_empty() {
        parts.push(format!("left {}", some_of(left_text(left), 0)));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

/// Each member's assignment; when every member's is of one and the same topic, the topic
/// once and then each member's partitions.
fn assignment_text(members: &BTreeMap<String, Option<Assignment>>, unlisted: u64) -> String {
    let topics: HashSet<&str> = members
        .values()
        .flatten()
        .flat_map(|a| a.iter().map(|(t, _)| t.as_str()))
        .collect();
    let one = (topics.len() == 1)
        .then(|| topics.iter().next().copied())
        .flatten()
        .filter(|t| !t.contains(' '));
    let items: Vec<String> = members
        .iter()
        .map(|(m, a)| match (one, a) {
            (Some(_), Some(a)) => {
                let ps: Vec<String> = a
                    .iter()
                    .flat_map(|(_, p)| p.iter().map(i32::to_string))
                    .collect();
                format!("{} [{}]", short_id(m), ps.join(","))
            }
            _ => format!("{}: {}", short_id(m), maybe_text(a)),
        })
        .collect();
    match one {
        Some(t) => format!("{t}: {}", some_of(items, unlisted)),
        None => some_of(items, unlisted),
    }
}

impl Dropped {
    fn add(&mut self, o: &Dropped) {
        self.generations += o.generations;
        self.events += o.events;
        self.listed += o.listed;
        self.members += o.members;
    }

    /// What the bounds left out, said under the groups table.
    fn note(&self, groups: u64) -> Option<String> {
        let mut parts = Vec::new();
        let mut say = |n: u64, what: &str| {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        };
        say(self.generations, "older generations");
        say(self.events, "older events");
        say(self.listed, "members of generations not listed");
        say(
            self.members,
            "sightings of members past the members followed",
        );
        say(groups, "messages of groups past the groups followed");
        (!parts.is_empty()).then(|| {
            format!(
                "not kept (limits in docs/robustness.md, all counted above): {}\n",
                parts.join(", ")
            )
        })
    }
}

/// One group (an element of `groups` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct GroupOut {
    pub group: String,
    /// `classic`, `consumer` (KIP-848), `share` or `streams`.
    pub protocol: &'static str,
    /// Generations (or epochs) seen, kept or not.
    pub generations_seen: u64,
    /// The newest `MAX_GENERATIONS` generations, in the order they began.
    pub generations: Vec<GenerationOut>,
    /// Members in the group at the end of the capture.
    pub members_now: usize,
    pub joins: u64,
    pub leaves: u64,
    /// Members first seen in the first generation of a capture begun after they joined.
    pub present_at_start: u64,
    /// Members that left after the newest generation began.
    pub left_since_newest: Vec<LeftOut>,
    /// Heartbeats answered REBALANCE_IN_PROGRESS.
    pub rebalance_in_progress: u64,
    pub fenced: u64,
    /// The sum of the rebalances' durations.
    pub rebalancing_ms: f64,
    /// The newest `MAX_EVENTS` events, as they were found (a leave inferred from the
    /// generation that lacks a member carries that generation's time).
    pub timeline: Vec<HappeningOut>,
    /// What the bounds left out.
    pub dropped: Dropped,
}

/// One generation (classic) or epoch (KIP-848, share, streams).
#[derive(Debug, Clone, Serialize)]
pub struct GenerationOut {
    pub generation: i64,
    pub start_ns: i64,
    pub start_frame: u64,
    /// The first answer that gave it (members absent from it left then).
    pub opened_ns: i64,
    pub opened_frame: u64,
    pub end_ns: Option<i64>,
    pub end_frame: Option<u64>,
    pub duration_ms: Option<f64>,
    /// Known from its members' heartbeats alone: its rebalance came before the capture.
    pub from_heartbeats: bool,
    pub leader: Option<String>,
    pub protocol: Option<String>,
    /// Its members, listed or not.
    pub member_count: usize,
    /// By member id, at most `MAX_LISTED`.
    pub members: Vec<MemberOut>,
    /// Members that joined in it.
    pub joined: Vec<String>,
    /// Members that left since the generation before.
    pub left: Vec<LeftOut>,
    /// Members, joins and leaves past `MAX_LISTED`.
    pub unlisted: u64,
}

impl GenerationOut {
    fn of(x: &Generation) -> GenerationOut {
        GenerationOut {
            generation: x.id,
            start_ns: x.start.0,
            start_frame: x.start.1,
            opened_ns: x.opened.0,
            opened_frame: x.opened.1,
            end_ns: x.end.map(|e| e.0),
            end_frame: x.end.map(|e| e.1),
            duration_ms: x.end.map(|e| ms(e.0 - x.start.0)),
            from_heartbeats: x.from_heartbeats,
            leader: x.leader.clone(),
            protocol: x.protocol.clone(),
            member_count: x.member_count,
            members: x
                .members
                .iter()
                .map(|(m, a)| MemberOut {
                    member_id: m.clone(),
                    assignment: a
                        .as_ref()
                        .map(|a| a.iter().map(|(t, p)| AssignedOut::of(t, p)).collect()),
                })
                .collect(),
            joined: x.joined.clone(),
            left: x.left.iter().map(LeftOut::of).collect(),
            unlisted: x.unlisted,
        }
    }
}

/// A member of a generation and its assignment.
#[derive(Debug, Clone, Serialize)]
pub struct MemberOut {
    pub member_id: String,
    /// `null` when the capture did not show it (a member known from its heartbeats).
    pub assignment: Option<Vec<AssignedOut>>,
}

/// The partitions of one topic assigned to a member, or a streams member's tasks of one
/// kind (`active`, `standby`, `warmup`) and subtopology.
#[derive(Debug, Clone, Serialize)]
pub struct AssignedOut {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subtopology: Option<String>,
    pub partitions: Vec<i32>,
}

impl AssignedOut {
    /// Topic names hold no space: `active 0` is a streams member's tasks.
    fn of(t: &str, p: &[i32]) -> AssignedOut {
        match t.split_once(' ') {
            Some((kind, sub)) => AssignedOut {
                topic: None,
                tasks: Some(kind.to_string()),
                subtopology: Some(sub.to_string()),
                partitions: p.to_vec(),
            },
            None => AssignedOut {
                topic: Some(t.to_string()),
                tasks: None,
                subtopology: None,
                partitions: p.to_vec(),
            },
        }
    }
}

/// A member that left.
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    pub member_id: String,
    /// `LeaveGroup`, `heartbeat with epoch -1` (or -2), `absent`, `timed out`.
    pub why: &'static str,
    pub detail: String,
}

impl LeftOut {
    fn of(l: &Left) -> LeftOut {
        LeftOut {
            member_id: l.member.clone(),
            why: l.why,
            detail: l.detail.clone(),
        }
    }
}

/// Something that happened to a group.
#[derive(Debug, Clone, Serialize)]
pub struct HappeningOut {
    pub ts_ns: i64,
    pub frame: u64,
    /// `member id given`, `joined`, `rejoined`, `assigned`, `generation`, `epoch`,
    /// `rebalance in progress`, `fenced`, `left`.
    pub what: &'static str,
    pub member: String,
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_classic_member_id_is_shown_by_its_client_id_and_uuid_start() {
        assert_eq!(
            short_id("issue35-classic-c1-6cb86268-dd57-44e2-bc03-034cc7d1b26b"),
            "issue35-classic-c1-6cb86268"
        );
        assert_eq!(short_id("uttWvIKjSSuL7uKDm_b3Rg"), "uttWvIKjSSuL7uKDm_b3Rg");
        assert_eq!(short_id("member-000001"), "member-000001");
        assert_eq!(
            short_id("é-6cb86268-dd57-44e2-bc03-034cc7d1b26x"),
            "é-6cb86268-dd57-44e2-bc03-034cc7d1b26x"
        );
    }
}
