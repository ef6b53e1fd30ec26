//! Group timelines: members joining and leaving, generations with their members and
//! assignments (the consumer protocol inside JoinGroup and SyncGroup), rebalances with their
//! duration (classic: the first JoinGroup request to the last SyncGroup response of the
//! generation; KIP-848 and share groups: the first heartbeat answer giving a member epoch to
//! the last member reaching it), heartbeats answered REBALANCE_IN_PROGRESS, fenced members,
//! and the time a classic group consumed nothing while it rebalanced.

use super::adapter::Event;
use super::series::{at_text, ms, ms_text};
use super::{MAX_KEYS, MAX_SAMPLES};
use crate::kafka::names::error_name;
use crate::render::table::{Cell, Grid};
use serde::Serialize;
use std::collections::BTreeMap;

/// Errors that tell a member it was fenced out of its group.
const FENCED: [i16; 5] = [22, 25, 82, 110, 113];
const REBALANCE_IN_PROGRESS: i16 = 27;
const MEMBER_ID_REQUIRED: i16 = 79;

/// Partitions by topic.
pub type Assignment = Vec<(String, Vec<i32>)>;

/// One generation (classic) or group epoch (KIP-848, share).
#[derive(Debug, Clone, Default)]
pub struct Generation {
    pub id: i64,
    /// Rebalance start: first JoinGroup request (classic), first answer with this epoch.
    pub start: (i64, u64),
    /// The last SyncGroup response (classic), the last member reaching the epoch.
    pub end: Option<(i64, u64)>,
    pub members: BTreeMap<String, Assignment>,
    pub leader: Option<String>,
    pub protocol: Option<String>,
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

#[derive(Debug, Default)]
pub struct GroupLine {
    /// `classic`, `consumer` (KIP-848) or `share`.
    pub protocol: &'static str,
    pub generations: Vec<Generation>,
    /// A classic rebalance under way: its first JoinGroup request.
    open: Option<(i64, u64)>,
    /// The last epoch each member was answered (KIP-848, share).
    epochs: BTreeMap<String, i64>,
    pub happenings: Vec<Happening>,
    pub rebalance_in_progress: u64,
    pub fenced: u64,
    pub joins: u64,
    pub leaves: u64,
}

impl GroupLine {
    fn happen(&mut self, e: &Event, what: &'static str, member: &str, detail: String) {
        if self.happenings.len() < MAX_SAMPLES {
            self.happenings.push(Happening {
                ts: e.ts,
                frame: e.frame,
                what,
                member: member.to_string(),
                detail,
            });
        }
    }

    fn generation(&mut self, id: i64, start: (i64, u64)) -> &mut Generation {
        if self.generations.last().is_none_or(|g| g.id != id) {
            self.generations.push(Generation {
                id,
                start,
                ..Generation::default()
            });
        }
        let n = self.generations.len() - 1;
        &mut self.generations[n]
    }

    /// Seconds the group spent in rebalances (the sum of their durations).
    pub fn rebalancing_ns(&self) -> i64 {
        self.generations
            .iter()
            .filter_map(|g| g.end.map(|e| e.0 - g.start.0))
            .sum()
    }
}

#[derive(Debug, Default)]
pub struct Timeline {
    pub groups: BTreeMap<String, GroupLine>,
}

fn text_of(a: &Assignment) -> String {
    a.iter()
        .map(|(t, p)| {
            let ps: Vec<String> = p.iter().map(i32::to_string).collect();
            format!("{t}[{}]", ps.join(","))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Timeline {
    fn line(&mut self, group: &str, protocol: &'static str) -> Option<&mut GroupLine> {
        if self.groups.len() >= MAX_KEYS && !self.groups.contains_key(group) {
            return None;
        }
        let l = self.groups.entry(group.to_string()).or_default();
        if l.protocol.is_empty() {
            l.protocol = protocol;
        }
        Some(l)
    }

    pub fn request(&mut self, e: &Event) {
        let Some(group) = e.group.clone() else { return };
        match e.api_key {
            11 => {
                let Some(l) = self.line(&group, "classic") else {
                    return;
                };
                let settled = l.generations.last().is_none_or(|g| g.end.is_some());
                if l.open.is_none() && settled {
                    l.open = Some((e.ts, e.frame));
                }
            }
            13 => {
                let Some(l) = self.line(&group, "classic") else {
                    return;
                };
                let mut left: Vec<String> = e.members.iter().map(|m| m.member_id.clone()).collect();
                left.extend(e.member.clone());
                for m in left {
                    l.leaves += 1;
                    l.happen(e, "left", &m, "LeaveGroup".into());
                }
            }
            14 => {
                // The leader's SyncGroup carries every member's assignment.
                let Some(l) = self.line(&group, "classic") else {
                    return;
                };
                if let (Some(id), false) = (e.generation, e.members.is_empty()) {
                    let g = l.generation(id, (e.ts, e.frame));
                    g.leader = e.member.clone();
                    for m in &e.members {
                        g.members.insert(m.member_id.clone(), m.partitions.clone());
                    }
                }
            }
            68 | 76 if e.member_epoch.is_some_and(|x| x < 0) => {
                let kind = if e.api_key == 68 { "consumer" } else { "share" };
                let Some(l) = self.line(&group, kind) else {
                    return;
                };
                let m = e.member.clone().unwrap_or_default();
                l.leaves += 1;
                l.epochs.remove(&m);
                l.happen(e, "left", &m, "heartbeat with epoch -1".into());
            }
            _ => {}
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
            68 | 76 => self.heartbeat(&group, req, e),
            _ => {}
        }
        if ![8, 11, 12, 13, 14, 68, 76].contains(&e.api_key) {
            return;
        }
        let Some(l) = self.groups.get_mut(&group) else {
            return;
        };
        let member = req.member.clone().unwrap_or_default();
        if rip && e.api_key == 12 {
            l.rebalance_in_progress += 1;
            l.happen(
                e,
                "rebalance in progress",
                &member,
                "Heartbeat answered REBALANCE_IN_PROGRESS".into(),
            );
        }
        if let Some(c) = fenced {
            l.fenced += 1;
            let name = error_name(c).unwrap_or("?");
            l.happen(
                e,
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
        let Some(l) = self.line(group, "classic") else {
            return;
        };
        let member = e.member.clone().unwrap_or_default();
        if e.error == Some(MEMBER_ID_REQUIRED) {
            l.happen(
                e,
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
        let new_member = !l
            .generations
            .iter()
            .any(|g| g.members.contains_key(&member));
        let previous: Vec<String> = l
            .generations
            .last()
            .filter(|g| g.id != id)
            .map(|g| g.members.keys().cloned().collect())
            .unwrap_or_default();
        let protocol = e.protocol.clone();
        let g = l.generation(id, start);
        g.protocol = protocol;
        g.members.entry(member.clone()).or_default();
        for m in &e.members {
            g.members.entry(m.member_id.clone()).or_default();
        }
        let now: Vec<String> = g.members.keys().cloned().collect();
        if new_member {
            l.joins += 1;
            l.happen(e, "joined", &member, format!("generation {id}"));
        }
        // Members of the last generation the leader's answer no longer lists have left.
        if !e.members.is_empty() {
            for m in previous.iter().filter(|m| !now.contains(m)) {
                l.leaves += 1;
                l.happen(e, "left", m, format!("not in generation {id}"));
            }
        }
    }

    fn synced(&mut self, group: &str, req: &Event, e: &Event) {
        let Some(l) = self.line(group, "classic") else {
            return;
        };
        let (Some(id), None) = (req.generation, e.error) else {
            return;
        };
        let member = req.member.clone().unwrap_or_default();
        let first = l.generations.last().is_none_or(|g| g.id != id);
        let g = l.generation(id, (req.ts, req.frame));
        if let Some(own) = e.members.first() {
            g.members.insert(member.clone(), own.partitions.clone());
        }
        g.end = Some((e.ts, e.frame));
        let assigned = g.members.get(&member).map(text_of).unwrap_or_default();
        l.open = None;
        if first {
            l.happen(
                e,
                "generation",
                &member,
                format!("generation {id} without its JoinGroup"),
            );
        }
        l.happen(
            e,
            "assigned",
            &member,
            format!("generation {id}: {assigned}"),
        );
    }

    /// A KIP-848 or share group heartbeat answer: a new member epoch is a new assignment.
    fn heartbeat(&mut self, group: &str, req: &Event, e: &Event) {
        let kind = if e.api_key == 68 { "consumer" } else { "share" };
        let Some(l) = self.line(group, kind) else {
            return;
        };
        let (Some(epoch), None) = (e.member_epoch, e.error) else {
            return;
        };
        let member = e.member.clone().or(req.member.clone()).unwrap_or_default();
        if epoch < 0 || member.is_empty() {
            return;
        }
        let before = l.epochs.insert(member.clone(), epoch);
        if before == Some(epoch) {
            return;
        }
        if before.is_none() {
            l.joins += 1;
            l.happen(e, "joined", &member, format!("member epoch {epoch}"));
        }
        let known = l.generations.iter().position(|g| g.id == epoch);
        let g = match known {
            Some(i) => &mut l.generations[i],
            None => l.generation(epoch, (e.ts, e.frame)),
        };
        g.end = Some((e.ts, e.frame));
        let assignment = e.members.first().map(|m| m.partitions.clone());
        let text = assignment.as_ref().map(text_of).unwrap_or_default();
        g.members
            .insert(member.clone(), assignment.unwrap_or_default());
        let from = before.map_or("-".into(), |b| b.to_string());
        l.happen(
            e,
            "epoch",
            &member,
            format!("member epoch {from} → {epoch} {text}"),
        );
    }

    /// `start`: the capture's first message, which times count from.
    pub fn tables(&self, start: i64, width: Option<u16>) -> Vec<(String, String)> {
        if self.groups.is_empty() {
            return Vec::new();
        }
        let mut g = Grid::new(&[
            "group",
            "protocol",
            "generations",
            "joins",
            "leaves",
            "rebalance in progress",
            "fenced",
            "rebalancing",
        ]);
        let mut gens = Grid::new(&[
            "group",
            "generation",
            "started",
            "took",
            "members",
            "assignment",
        ]);
        let mut tl = Grid::new(&["at", "frame", "group", "what", "member", "detail"]);
        for (name, l) in &self.groups {
            g.row(vec![
                Cell::atom(name),
                Cell::atom(l.protocol),
                Cell::num(l.generations.len()),
                Cell::num(l.joins),
                Cell::num(l.leaves),
                Cell::num(l.rebalance_in_progress),
                Cell::num(l.fenced),
                Cell::num(ms_text(l.rebalancing_ns())),
            ]);
            for x in &l.generations {
                let took = x.end.map_or("-".into(), |e| ms_text(e.0 - x.start.0));
                let assigned: Vec<String> = x
                    .members
                    .iter()
                    .map(|(m, a)| format!("{m}: {}", text_of(a)))
                    .collect();
                gens.row(vec![
                    Cell::atom(name),
                    Cell::num(x.id),
                    Cell::num(format!(
                        "{} (frame {})",
                        at_text(x.start.0, start),
                        x.start.1
                    )),
                    Cell::num(took),
                    Cell::num(x.members.len()),
                    Cell::text(assigned.join("; ")),
                ]);
            }
            for h in &l.happenings {
                tl.row(vec![
                    Cell::num(at_text(h.ts, start)),
                    Cell::num(h.frame),
                    Cell::atom(name),
                    Cell::atom(h.what),
                    Cell::atom(&h.member),
                    Cell::text(&h.detail),
                ]);
            }
        }
        vec![
            ("Consumer groups".into(), g.render(width).to_string()),
            (
                "Group generations and rebalances".into(),
                gens.render(width).to_string(),
            ),
            ("Group timeline".into(), tl.render(width).to_string()),
        ]
    }

    /// Every group, by name.
    pub fn out(&self) -> Vec<GroupOut> {
        self.groups
            .iter()
            .map(|(name, l)| GroupOut {
                group: name.clone(),
                protocol: l.protocol,
                generations: l.generations.iter().map(GenerationOut::of).collect(),
                joins: l.joins,
                leaves: l.leaves,
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
            })
            .collect()
    }
}

/// One group (an element of `groups` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct GroupOut {
    pub group: String,
    /// `classic`, `consumer` (KIP-848) or `share`.
    pub protocol: &'static str,
    pub generations: Vec<GenerationOut>,
    pub joins: u64,
    pub leaves: u64,
    /// Heartbeats answered REBALANCE_IN_PROGRESS.
    pub rebalance_in_progress: u64,
    pub fenced: u64,
    /// The sum of the rebalances' durations.
    pub rebalancing_ms: f64,
    /// What happened, in the order it was seen.
    pub timeline: Vec<HappeningOut>,
}

/// One generation (classic) or epoch (KIP-848, share).
#[derive(Debug, Clone, Serialize)]
pub struct GenerationOut {
    pub generation: i64,
    pub start_ns: i64,
    pub start_frame: u64,
    pub end_ns: Option<i64>,
    pub end_frame: Option<u64>,
    pub duration_ms: Option<f64>,
    pub leader: Option<String>,
    pub protocol: Option<String>,
    /// By member id.
    pub members: Vec<MemberOut>,
}

impl GenerationOut {
    fn of(x: &Generation) -> GenerationOut {
        GenerationOut {
            generation: x.id,
            start_ns: x.start.0,
            start_frame: x.start.1,
            end_ns: x.end.map(|e| e.0),
            end_frame: x.end.map(|e| e.1),
            duration_ms: x.end.map(|e| ms(e.0 - x.start.0)),
            leader: x.leader.clone(),
            protocol: x.protocol.clone(),
            members: x
                .members
                .iter()
                .map(|(m, a)| MemberOut {
                    member_id: m.clone(),
                    assignment: a
                        .iter()
                        .map(|(t, p)| AssignedOut {
                            topic: t.clone(),
                            partitions: p.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// A member of a generation and its assignment.
#[derive(Debug, Clone, Serialize)]
pub struct MemberOut {
    pub member_id: String,
    pub assignment: Vec<AssignedOut>,
}

/// The partitions of one topic assigned to a member.
#[derive(Debug, Clone, Serialize)]
pub struct AssignedOut {
    pub topic: String,
    pub partitions: Vec<i32>,
}

/// Something that happened to a group.
#[derive(Debug, Clone, Serialize)]
pub struct HappeningOut {
    pub ts_ns: i64,
    pub frame: u64,
    /// `member id given`, `joined`, `assigned`, `generation`, `epoch`, `rebalance in
    /// progress`, `fenced`, `left`.
    pub what: &'static str,
    pub member: String,
    pub detail: String,
}
