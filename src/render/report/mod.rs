//! `--report FILE.html`: one self-contained HTML page of everything `--stats --analyses`
//! shows, in the order an SRE asks: can the capture be trusted and what failed (health,
//! errors, findings), then latency, lag, end to end, throughput, groups, versions,
//! connections and TLS.
//!
//! The page reads the typed statistics ([`StatsOut`]) and analyses ([`AnalysesOut`]), the
//! values `--stats --json` serializes: a field renamed there is renamed here by the compiler.
//! HTML is written with maud, which escapes every value it is given; the charts are inline
//! SVG ([`charts`]); every table stops at [`page::MAX_ROWS`] rows and every chart at
//! [`charts::MAX_SERIES`] series, so the page stays bounded whatever the capture. A content
//! security policy keeps the browser from loading anything; a small inline script adds hover
//! and sorting, and the page reads the same without it.

pub mod charts;
mod cluster;
mod groups;
pub mod page;
mod sections;
mod traffic;
pub mod units;

use crate::analyses::AnalysesOut;
use crate::render::stats::StatsOut;

/// What the page is drawn from.
pub struct Report<'a> {
    /// The input files, as named on the command line (the findings' commands read them).
    pub inputs: &'a [String],
    pub stats: &'a StatsOut,
    /// The analyses, when they ran.
    pub analyses: Option<&'a AnalysesOut>,
}

/// The whole page.
pub fn html(r: &Report<'_>) -> String {
    let capture = r.inputs.join(" ");
    let header = sections::header(r);
    let mut list = vec![sections::health_and_errors(r), sections::latency(r)];
    if let Some(a) = r.analyses {
        let (start, span) = a
            .span
            .map_or((a.interval.start_ns, 0.0), |s| (s.first_ns, s.seconds));
        // The axes span the buckets, which end at or after the last message.
        let span = span.max(traffic::grid(a).step * a.interval.buckets as f64);
        list.extend(traffic::lag(a, start));
        list.extend(traffic::end_to_end(a));
        list.extend(traffic::throughput(a));
        list.extend(groups::groups(a, start, span));
        if let Some(c) = &a.cluster {
            list.push(cluster::section(&cluster::view(c), start));
        }
    }
    list.push(sections::versions(r));
    list.push(sections::connections(r));
    list.extend(sections::tls(r));
    let html = page::page(&format!("kdissect report: {capture}"), header, &list).into_string();
    visible(html)
}

/// The page with every control character but tab and newline, and every invisible character
/// ([`crate::text::is_invisible`]), written as a visible `\u{..}`: maud escapes what HTML
/// reads as markup, but an ESC, a NUL or a bidi override from the wire (a client's software
/// name, a group id) would reach the page raw, where an override turns the text after it
/// around. The page's own markup, style and script hold none of them, and it embeds no
/// data for a script to parse, so the whole page is treated at once.
fn visible(html: String) -> String {
    use std::fmt::Write as _;
    let hidden =
        |c: char| (c.is_control() && c != '\n' && c != '\t') || crate::text::is_invisible(c);
    if !html.contains(hidden) {
        return html;
    }
    let mut out = String::with_capacity(html.len() + 64);
    for c in html.chars() {
        if hidden(c) {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyses::{
        ApiLatencyOut, AssignedOut, BucketsOut, ConnectionsOut, FindingOut, GenerationOut,
        GroupOut, HappeningOut, LagKind, LagOut, LagSeriesOut, MemberOut, SpanOut,
    };
    use crate::render::stats::out::{Advertised, ConnOut, HealthOut};

    const START: i64 = 1_796_172_987_339_258_000;
    const BUCKETS: usize = 2_000;

    fn stats(connections: usize) -> StatsOut {
        StatsOut {
            apis: Vec::new(),
            connections: (0..connections)
                .map(|i| ConnOut {
                    file: None,
                    stream: Some(i as u32),
                    client_id: Some(format!("client-{i}")),
                    client: format!("10.0.{}.{}:5000", i / 250, i % 250),
                    broker: "10.1.0.1:9092".into(),
                    messages: i as u64,
                    bytes: 100 * i as u64,
                    tls: None,
                })
                .collect(),
            errors: Vec::new(),
            advertised: Advertised::default(),
            version_skew: Vec::new(),
            health: HealthOut::default(),
            tls: None,
            other_api_messages: 0,
            unchecked_requests: 0,
            files: Vec::new(),
        }
    }

    fn lag_series(i: usize) -> LagSeriesOut {
        LagSeriesOut {
            owner: format!("group-{}", i % 50),
            topic: format!("topic-{}", i / 50),
            partition: (i % 7) as i32,
            kind: LagKind::Committed,
            samples: BUCKETS,
            min: 0,
            median: 3,
            max: i as i64,
            last: 1,
            max_at: None,
            growing_since: None,
            caught_up: None,
            status: None,
            buckets: (0..BUCKETS)
                .map(|b| (b % 3 != 0).then_some((b % 97) as i64))
                .collect(),
            points: Vec::new(),
            growing_before_first_sample: false,
            points_merged: 0,
        }
    }

    fn group(i: usize, generations: usize, members: usize) -> GroupOut {
        let member = |m: usize| format!("member-{m}-0f2b8e44-5c0d-4f5e-9c1b-{i:012}");
        GroupOut {
            group: format!("group-{i}"),
            protocol: "classic",
            generations_seen: generations as u64,
            generations: (0..generations)
                .map(|g| GenerationOut {
                    generation: g as i64 + 1,
                    start_ns: START + g as i64 * 1_000_000_000,
                    start_frame: g as u64,
                    opened_ns: START + g as i64 * 1_000_000_000,
                    opened_frame: g as u64,
                    end_ns: Some(START + g as i64 * 1_000_000_000 + 5_000_000),
                    end_frame: Some(g as u64 + 1),
                    duration_ms: Some(5.0),
                    from_heartbeats: false,
                    leader: Some(member(0)),
                    protocol: Some("range".into()),
                    member_count: members,
                    members: (0..members)
                        .map(|m| MemberOut {
                            member_id: member(m),
                            assignment: Some(vec![AssignedOut {
                                topic: Some("events".into()),
                                tasks: None,
                                subtopology: None,
                                partitions: vec![m as i32],
                            }]),
                        })
                        .collect(),
                    joined: Vec::new(),
                    left: Vec::new(),
                    unlisted: 0,
                })
                .collect(),
            members_now: members,
            joins: members as u64,
            leaves: 0,
            present_at_start: 0,
            left_since_newest: Vec::new(),
            rebalance_in_progress: 0,
            fenced: 0,
            rebalancing_ms: 5.0 * generations as f64,
            timeline: (0..members)
                .map(|m| HappeningOut {
                    ts_ns: START + m as i64,
                    frame: m as u64,
                    what: "joined",
                    member: member(m),
                    detail: "generation 1".into(),
                })
                .collect(),
            dropped: Default::default(),
        }
    }

    /// A capture as large as the analyses' bounds let it be: 10,000 buckets, thousands of
    /// lag series, groups of many members and generations, APIs, findings, connections.
    fn huge() -> AnalysesOut {
        AnalysesOut {
            span: Some(SpanOut {
                first_ns: START,
                last_ns: START + 36_000_000_000_000,
                seconds: 36_000.0,
            }),
            interval: BucketsOut {
                start_ns: START,
                width_ms: 18_000.0,
                buckets: BUCKETS,
            },
            api_latency: (0..90)
                .map(|k| ApiLatencyOut {
                    api_key: k,
                    api_name: format!("Api{k}"),
                    max_ms: (0..BUCKETS).map(|b| Some(b as f64 / 10.0)).collect(),
                })
                .collect(),
            connections: ConnectionsOut {
                opened: 10_000,
                most_in_one_second: 100,
            },
            lag: Some(LagOut {
                series: (0..2_000).map(lag_series).collect(),
                commits_without_log_end: 0,
                dropped: 0,
            }),
            end_to_end: None,
            throughput: None,
            groups: Some((0..100).map(|i| group(i, 150, 30)).collect()),
            client_versions: Some(Vec::new()),
            findings: Some(
                (0..1_000)
                    .map(|i| FindingOut {
                        severity: "warning",
                        kind: "unanswered",
                        summary: format!("finding {i}"),
                        frames: (0..1_000).collect(),
                        count: 1,
                    })
                    .collect(),
            ),
            groups_dropped: None,
            cluster: None,
            topic_ids: Vec::new(),
        }
    }

    #[test]
    fn the_page_stays_bounded_and_says_what_it_left_out() {
        let a = huge();
        let s = stats(10_000);
        let inputs = vec!["big.pcap".to_string()];
        let page = html(&Report {
            inputs: &inputs,
            stats: &s,
            analyses: Some(&a),
        });
        // Every table at 50 rows, every chart at 8 series of 600 points, 8 group charts of
        // 20 members and 40 generations.
        assert!(page.len() < 1_000_000, "{} bytes", page.len());
        assert!(page.contains("more rows not shown"));
        assert!(
            page.contains("1999 series: the 7 with the largest peaks shown, the other 1992 merged")
        );
        assert!(page.contains("92 more groups not charted"));
        assert!(page.contains("110 earlier generations not drawn"));
        assert!(page.contains("10 more members not drawn"));
        assert!(page.contains("buckets merged 4 to one point"));
        assert!(page.contains("9,951 more connections"));
        assert!(page.contains("995 more frames"));
        assert!(page.matches("<g class=\"series\"").count() <= 8 * 3);
    }

    #[test]
    fn wire_text_is_escaped() {
        let mut a = huge();
        a.groups = Some(vec![GroupOut {
            group: "<script>alert(1)</script>".into(),
            ..group(0, 2, 2)
        }]);
        a.lag = None;
        let s = stats(1);
        let inputs = vec!["x'$(touch y).pcap".to_string()];
        let page = html(&Report {
            inputs: &inputs,
            stats: &s,
            analyses: Some(&a),
        });
        assert!(!page.contains("<script>alert"));
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        // The findings' commands quote the path for the shell.
        assert!(
            page.contains("-V 'x'\\''$(touch y).pcap'"),
            "{}",
            &page[..200]
        );
    }
}
