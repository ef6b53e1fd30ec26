//! The groups' section: their table, their generations, and one Gantt per group of its
//! members across generations with their joins and leaves.

use super::charts::{self, Band, Bar, Gantt, Mark, MarkKind, Row};
use super::page::{clip, Cell, Section, Table};
use super::units;
use crate::analyses::{AnalysesOut, GenerationOut, GroupOut};
use maud::html;
use std::collections::HashSet;

/// Groups given a chart at most (those with the most generations first).
pub const MAX_GROUP_CHARTS: usize = 8;
/// Members given a row of a group's chart at most.
pub const MAX_MEMBER_ROWS: usize = 20;
/// Generations drawn in a group's chart at most (the latest: the chart's time axis starts at
/// the first of them).
pub const MAX_GENERATIONS: usize = 40;

/// A member id short enough for a row's label: the client's prefix is what tells members
/// apart to a reader; the whole id is in the row's hover text.
fn short_member(id: &str) -> String {
    const MAX: usize = 24;
    if id.chars().count() <= MAX {
        id.to_string()
    } else {
        let head: String = id.chars().take(MAX - 1).collect();
        format!("{head}…")
    }
}

/// A hover text, at most 400 characters (ids and details come from the wire).
fn clip_title(s: String) -> String {
    if s.len() > 400 {
        clip(&s, 400)
    } else {
        s
    }
}

/// `rb-events[0,1,2] other[3]`.
fn assignment_text(g: &GenerationOut, member: &str) -> String {
    g.members
        .iter()
        .find(|m| m.member_id == member)
        .map(|m| {
            m.assignment
                .iter()
                .flatten()
                .map(|a| {
                    let parts: Vec<String> = a.partitions.iter().map(i32::to_string).collect();
                    let what = a.topic.as_deref().or(a.tasks.as_deref()).unwrap_or("?");
                    format!("{what}[{}]", parts.join(","))
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// What a happening draws, if anything: the rest (member ids given, assignments, epochs)
/// is in the bars and the generations table.
fn mark_kind(what: &str) -> Option<MarkKind> {
    match what {
        "joined" => Some(MarkKind::Joined),
        "left" => Some(MarkKind::Left),
        "fenced" => Some(MarkKind::Fenced),
        _ => None,
    }
}

/// A band per generation drawn: from its start to the next one's (or the capture's end),
/// its rebalance until the answers that settled it.
fn bands(gens: &[&GenerationOut], start_ns: i64, span: f64) -> Vec<Band> {
    let t = |ns: i64| (ns - start_ns) as f64 / 1e9;
    gens.iter()
        .enumerate()
        .map(|(i, x)| {
            let end = gens.get(i + 1).map_or(span, |n| t(n.start_ns));
            Band {
                label: format!("gen {}", x.generation),
                start: t(x.start_ns),
                settled: x.end_ns.map(t),
                end,
                title: clip_title(format!(
                    "generation {}: started at {} (frame {}){}, {} members{}",
                    x.generation,
                    units::since_start(x.start_ns, start_ns),
                    x.start_frame,
                    x.duration_ms
                        .map(|d| format!(", took {}", units::duration_ms(d)))
                        .unwrap_or_default(),
                    x.members.len(),
                    x.leader
                        .as_ref()
                        .map(|l| format!(", leader {l}"))
                        .unwrap_or_default()
                )),
            }
        })
        .collect()
}

/// The members of the generations drawn and of the happenings from `from` on (seconds), in
/// order of first appearance.
fn member_order<'a>(
    g: &'a GroupOut,
    gens: &[&'a GenerationOut],
    start_ns: i64,
    from: f64,
) -> Vec<&'a str> {
    let t = |ns: i64| (ns - start_ns) as f64 / 1e9;
    let mut first_seen: Vec<(i64, &str)> = Vec::new();
    for x in gens {
        first_seen.extend(x.members.iter().map(|m| (x.start_ns, m.member_id.as_str())));
    }
    first_seen.extend(
        g.timeline
            .iter()
            .filter(|h| mark_kind(h.what).is_some() && t(h.ts_ns) >= from)
            .map(|h| (h.ts_ns, h.member.as_str())),
    );
    first_seen.sort();
    let mut known = HashSet::new();
    first_seen
        .into_iter()
        .map(|(_, id)| id)
        .filter(|id| !id.is_empty() && known.insert(*id))
        .collect()
}

/// The Gantt of one group over the capture's `span` seconds from `start_ns`.
fn group_gantt(g: &GroupOut, index: usize, start_ns: i64, span: f64) -> Gantt {
    let mut gens: Vec<&GenerationOut> = g.generations.iter().collect();
    gens.sort_by_key(|x| x.start_ns);
    let hidden = gens.len().saturating_sub(MAX_GENERATIONS);
    let gens = &gens[hidden..];
    let bands = bands(gens, start_ns, span);
    // With generations left out, the axis starts at the first one drawn.
    let from = if hidden > 0 {
        bands.first().map_or(0.0, |b| b.start)
    } else {
        0.0
    };
    let order = member_order(g, gens, start_ns, from);
    let hidden_members = order.len().saturating_sub(MAX_MEMBER_ROWS);
    let rows: Vec<Row> = order
        .iter()
        .take(MAX_MEMBER_ROWS)
        .map(|id| member_row(g, gens, id, start_ns, (from, span)))
        .collect();
    let mut note = Vec::new();
    if hidden > 0 {
        note.push(format!(
            "{} earlier generations not drawn (the generations table and --stats --json list them)",
            units::count(hidden as u64)
        ));
    }
    if hidden_members > 0 {
        note.push(format!(
            "{} more members not drawn",
            units::count(hidden_members as u64)
        ));
    }
    Gantt {
        id: format!("group-{index}"),
        title: format!("Group {} ({})", clip(&g.group, 200), g.protocol),
        origin_ns: start_ns,
        from,
        span,
        bands,
        rows,
        note: (!note.is_empty()).then(|| note.join("; ")),
    }
}

/// One member's row: a bar for each generation it is in, from the generation's start to the
/// next one's (or its leaving, or the capture's end), generations in a row with the same
/// assignment as one bar; and its joins, leaves and fencings from `from` on.
fn member_row(
    g: &GroupOut,
    gens: &[&GenerationOut],
    id: &str,
    start_ns: i64,
    (from, span): (f64, f64),
) -> Row {
    let t = |ns: i64| (ns - start_ns) as f64 / 1e9;
    let leaves: Vec<f64> = g
        .timeline
        .iter()
        .filter(|h| h.member == id && h.what == "left")
        .map(|h| t(h.ts_ns))
        .collect();
    // (first generation, last generation, start, end, assignment)
    let mut spans: Vec<(i64, i64, f64, f64, String)> = Vec::new();
    for (i, x) in gens.iter().enumerate() {
        if !x.members.iter().any(|m| m.member_id == id) {
            continue;
        }
        let start = t(x.start_ns);
        let next = gens.get(i + 1).map_or(span, |n| t(n.start_ns));
        let end = leaves
            .iter()
            .copied()
            .filter(|l| *l > start && *l < next)
            .fold(next, f64::min);
        let label = assignment_text(x, id);
        match spans.last_mut() {
            Some(last) if last.4 == label && (last.3 - start).abs() < 1e-9 => {
                last.1 = x.generation;
                last.3 = end;
            }
            _ => spans.push((x.generation, x.generation, start, end, label)),
        }
    }
    let bars = spans
        .into_iter()
        .map(|(first, last, start, end, label)| Bar {
            start,
            end,
            title: clip_title(format!(
                "{id} in {}: {}",
                if first == last {
                    format!("generation {first}")
                } else {
                    format!("generations {first} to {last}")
                },
                if label.is_empty() {
                    "no partition"
                } else {
                    &label
                }
            )),
            label: clip(&label, 200),
        })
        .collect();
    let marks = marks(g, id, start_ns, from);
    Row {
        label: short_member(id),
        title: clip(id, 300),
        bars,
        marks,
    }
}

/// A member's joins, leaves and fencings from `from` on (seconds).
fn marks(g: &GroupOut, id: &str, start_ns: i64, from: f64) -> Vec<Mark> {
    let t = |ns: i64| (ns - start_ns) as f64 / 1e9;
    g.timeline
        .iter()
        .filter(|h| h.member == id && t(h.ts_ns) >= from)
        .filter_map(|h| {
            let kind = mark_kind(h.what)?;
            Some(Mark {
                t: t(h.ts_ns),
                kind,
                title: clip_title(format!(
                    "{} at {} (frame {}): {}",
                    h.what,
                    units::since_start(h.ts_ns, start_ns),
                    h.frame,
                    h.detail
                )),
            })
        })
        .collect()
}

pub fn groups(a: &AnalysesOut, start_ns: i64, span: f64) -> Option<Section> {
    let groups = a.groups.as_ref()?;
    let t = groups_table(groups);
    let gens = generations_table(groups, start_ns);
    let mut charted: Vec<(usize, &GroupOut)> = groups.iter().enumerate().collect();
    charted.sort_by_key(|g| std::cmp::Reverse(g.1.generations.len()));
    let hidden = charted.len().saturating_sub(MAX_GROUP_CHARTS);
    charted.truncate(MAX_GROUP_CHARTS);
    charted.sort_by_key(|(i, _)| *i);
    Some(Section {
        id: "groups",
        title: "Groups".into(),
        body: html! {
            @if groups.is_empty() {
                p { "No group traffic (JoinGroup, SyncGroup, heartbeats) was captured." }
            } @else {
                (t.render())
                @for (i, g) in &charted {
                    (charts::gantt(&group_gantt(g, *i, start_ns, span)))
                }
                @if hidden > 0 {
                    p class="note" { (units::count(hidden as u64)) " more groups not charted (the tables list them)." }
                }
                h3 { "Generations" }
                (gens.render())
            }
        },
    })
}

/// One row per group: its generations, joins, leaves, time spent rebalancing.
fn groups_table(groups: &[GroupOut]) -> Table {
    let mut t = Table::new(
        "groups",
        &[
            ("group", "group"),
            ("protocol", "protocol"),
            ("generations", "generations"),
            ("joins", "joins"),
            ("leaves", "leaves"),
            ("rebalance in progress", "rebalance_in_progress"),
            ("fenced", "fenced"),
            ("rebalancing", "rebalancing_ms"),
        ],
    );
    for g in groups {
        t.row_classed(
            (g.fenced > 0).then_some("warning"),
            vec![
                Cell::text(&g.group),
                Cell::text(g.protocol),
                Cell::count(g.generations.len() as u64),
                Cell::count(g.joins),
                Cell::count(g.leaves),
                Cell::count(g.rebalance_in_progress),
                Cell::count(g.fenced),
                Cell::num(units::duration_ms(g.rebalancing_ms), g.rebalancing_ms),
            ],
        );
    }
    t
}

/// One row per generation of every group, with its start as a time of the capture.
fn generations_table(groups: &[GroupOut], start_ns: i64) -> Table {
    let mut gens = Table::new(
        "generations",
        &[
            ("group", "group"),
            ("generation", "generation"),
            ("started", "start"),
            ("took", "duration_ms"),
            ("members", "members"),
            ("leader", "leader"),
        ],
    );
    for g in groups {
        for x in &g.generations {
            gens.row(vec![
                Cell::text(&g.group),
                Cell::num(x.generation.to_string(), x.generation as f64),
                Cell::num(
                    format!(
                        "{} (frame {})",
                        units::since_start(x.start_ns, start_ns),
                        x.start_frame
                    ),
                    x.start_ns as f64,
                ),
                Cell::opt(x.duration_ms, units::duration_ms),
                Cell::count(x.members.len() as u64),
                Cell::text(x.leader.as_deref().unwrap_or("-")),
            ]);
        }
    }
    gens
}
