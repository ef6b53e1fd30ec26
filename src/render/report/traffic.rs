//! The sections on the records' flow: consumer lag, end-to-end latency, throughput.

use super::charts::{self, Buckets, LineChart, Merge, Rank, Scale, Series, Unit};
use super::page::{Cell, Section, Table};
use super::units;
use crate::analyses::{
    AnalysesOut, EndToEndOut, LagKind, LagOut, LagSeriesOut, LagStatus, ThroughputOut,
    ThroughputRow,
};
use maud::{html, Markup};

/// The time grid of the analyses' series.
pub fn grid(a: &AnalysesOut) -> Buckets {
    Buckets {
        origin_ns: a.interval.start_ns,
        step: a.interval.width_ms / 1000.0,
        count: a.interval.buckets,
    }
}

/// `8.32 s (00:56:35.661 UTC), frame 3848`.
fn moment(ts_ns: i64, frame: u64, start_ns: i64) -> String {
    format!(
        "{} ({} UTC), frame {frame}",
        units::since_start(ts_ns, start_ns),
        units::wall_time(ts_ns)
    )
}

fn status_class(s: Option<LagStatus>) -> Option<&'static str> {
    match s {
        Some(LagStatus::Ok) | None => None,
        Some(LagStatus::Warning) => Some("warning"),
        Some(_) => Some("error"),
    }
}

/// How bad a series looks: its status first, then its peak.
fn severity(s: &LagSeriesOut) -> (u8, i64) {
    let status = match s.status {
        None | Some(LagStatus::Ok) => 0,
        Some(LagStatus::Warning) => 1,
        Some(_) => 2,
    };
    (status, s.max)
}

/// A table of lag series, the worst first.
fn lag_table(id: &'static str, rows: &[&LagSeriesOut], start_ns: i64) -> Markup {
    let mut t = Table::new(
        id,
        &[
            ("group or client", "owner"),
            ("topic", "topic"),
            ("partition", "partition"),
            ("lag", "kind"),
            ("samples", "samples"),
            ("min", "min"),
            ("median", "median"),
            ("max", "max"),
            ("last", "last"),
            ("growing since", "growing_since"),
            ("status", "status"),
        ],
    );
    let mut rows = rows.to_vec();
    // Stable: equals keep the analyses' order (owner, topic, partition, kind).
    rows.sort_by_key(|s| std::cmp::Reverse(severity(s)));
    for s in rows {
        let records = |n: i64| Cell::num(units::count_i(n), n as f64);
        t.row_classed(
            status_class(s.status),
            vec![
                Cell::text(&s.owner),
                Cell::text(&s.topic),
                Cell::num(s.partition.to_string(), f64::from(s.partition)),
                Cell::text(s.kind.name()),
                Cell::count(s.samples as u64),
                records(s.min),
                records(s.median),
                records(s.max),
                records(s.last),
                match s.growing_since {
                    Some(g) => Cell::sorted(moment(g.ts_ns, g.frame, start_ns), g.ts_ns as f64),
                    None => Cell::text("-"),
                },
                Cell::text(s.status.map_or("-", LagStatus::name)),
            ],
        );
    }
    t.render()
}

/// The series that were ever behind, then (folded) those at 0 throughout.
fn lag_tables(lag: &LagOut, start_ns: i64) -> Markup {
    let (zero, behind): (Vec<&LagSeriesOut>, Vec<&LagSeriesOut>) =
        lag.series.iter().partition(|s| s.max == 0);
    html! {
        @if behind.is_empty() {
            p { "No consumer was ever behind: every one of the " (lag.series.len()) " series stayed at 0." }
        } @else {
            (lag_table("lag", &behind, start_ns))
        }
        @if !zero.is_empty() && !behind.is_empty() {
            details {
                summary { (zero.len()) " series at 0 throughout" }
                (lag_table("lag-zero", &zero, start_ns))
            }
        } @else if !zero.is_empty() {
            details {
                summary { "The " (zero.len()) " series" }
                (lag_table("lag-zero", &zero, start_ns))
            }
        }
    }
}

/// One chart per lag figure (committed, position, acknowledged) that has series; series at
/// 0 throughout are counted, not drawn (a flat line at 0 hides the ones that matter).
fn lag_charts(lag: &LagOut, b: Buckets) -> Markup {
    let kinds = [LagKind::Committed, LagKind::Position, LagKind::Acknowledged];
    html! {
        @for kind in kinds {
            @let all: Vec<&LagSeriesOut> = lag.series.iter().filter(|s| s.kind == kind).collect();
            @let zero = all.iter().filter(|s| s.max == 0).count();
            @let series: Vec<Series> = all.iter().filter(|s| s.max != 0)
                .map(|s| Series::new(
                    format!("{} {}-{}", s.owner, s.topic, s.partition),
                    s.buckets.iter().map(|v| v.map(|v| v as f64)).collect(),
                ))
                .collect();
            @let title = format!("{} lag per partition (largest per bucket)", capitalized(kind.name()));
            @if !all.is_empty() && series.is_empty() {
                figure class="chart" data-chart=(format!("lag-{}", kind.name())) {
                    figcaption { (title) }
                    p class="empty" { "All " (all.len()) " series stayed at 0 records." }
                }
            } @else if !series.is_empty() {
                @let (series, note) = charts::top_and_others(series, Rank::Peak, Merge::Max);
                @let zeros = (zero > 0).then(|| format!("{zero} series at 0 throughout not drawn"));
                (charts::line_chart(&LineChart {
                    id: format!("lag-{}", kind.name()),
                    title,
                    unit: Unit::Records,
                    scale: Scale::Linear,
                    merge: Merge::Max,
                    buckets: b,
                    series,
                    note: match (note, zeros) {
                        (Some(n), Some(z)) => Some(format!("{n}; {z}")),
                        (n, z) => n.or(z),
                    },
                }))
            }
        }
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

pub fn lag(a: &AnalysesOut, start_ns: i64) -> Option<Section> {
    let lag = a.lag.as_ref()?;
    Some(Section {
        id: "lag",
        title: "Consumer lag".into(),
        body: html! {
            p class="note" {
                "Records behind the newest log end seen: committed (Burrow, kminion), position (the Java consumer's records-lag), acknowledged (share groups). Worst first; the status is Burrow's."
            }
            @if lag.series.is_empty() {
                p { "No lag figure: no commit, fetch or acknowledgement with a log end was captured." }
            } @else {
                (lag_charts(lag, grid(a)))
                (lag_tables(lag, start_ns))
            }
            @if lag.commits_without_log_end > 0 {
                p class="note" { (units::count(lag.commits_without_log_end)) " commits came before any log end of their partition was seen (no lag figure)." }
            }
            @if lag.dropped > 0 {
                p class="note" { (units::count(lag.dropped)) " samples past the analyses' bounds were not kept." }
            }
        },
    })
}

fn duration_cell(ms: Option<f64>) -> Cell {
    Cell::opt(ms, units::duration_ms)
}

/// Produce-to-delivery latency per topic and group; records never seen consumed.
pub fn end_to_end(a: &AnalysesOut) -> Option<Section> {
    let e: &EndToEndOut = a.end_to_end.as_ref()?;
    let mut t = Table::new(
        "end-to-end",
        &[
            ("topic", "topic"),
            ("group or client", "owner"),
            ("records", "records"),
            ("p50", "latency_ms.p50"),
            ("p95", "latency_ms.p95"),
            ("p99", "latency_ms.p99"),
            ("max", "latency_ms.max"),
        ],
    );
    for r in &e.latency {
        t.row(vec![
            Cell::text(&r.topic),
            Cell::text(&r.owner),
            Cell::count(r.records as u64),
            duration_cell(r.latency_ms.p50),
            duration_cell(r.latency_ms.p95),
            duration_cell(r.latency_ms.p99),
            duration_cell(r.latency_ms.max),
        ]);
    }
    let mut u = Table::new(
        "unconsumed",
        &[
            ("topic", "topic"),
            ("produced", "produced"),
            ("consumed", "consumed"),
            ("never consumed", "never_consumed"),
            ("first produce frames", "produce_frames"),
        ],
    );
    for r in &e.unconsumed {
        let n = |v: i64| Cell::num(units::count_i(v), v as f64);
        u.row_classed(
            (r.never_consumed > 0).then_some("warning"),
            vec![
                Cell::text(&r.topic),
                n(r.produced),
                n(r.consumed),
                n(r.never_consumed),
                Cell::text(
                    r.produce_frames
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            ],
        );
    }
    Some(Section {
        id: "end-to-end",
        title: "End-to-end record latency".into(),
        body: html! {
            p class="note" { "From the Produce request that carried a record to the Fetch answer that delivered it, per topic and consumer." }
            @if e.latency.is_empty() { p { "No record was seen both produced and delivered." } }
            @else { (t.render()) }
            h3 { "Records produced and never seen consumed" }
            @if e.unconsumed.is_empty() { p { "None." } }
            @else { (u.render()) }
            @if e.dropped > 0 {
                p class="note" { (units::count(e.dropped)) " batches or latencies past the analyses' bounds were not kept." }
            }
        },
    })
}

/// Records per second of each topic and direction, as a chart.
fn throughput_chart(t: &ThroughputOut, b: Buckets) -> Markup {
    let per_s = |v: &i64| Some(*v as f64 / b.step.max(1e-9));
    let series: Vec<Series> = t
        .series
        .produce
        .iter()
        .map(|s| (s, "produced"))
        .chain(t.series.fetch.iter().map(|s| (s, "fetched")))
        .map(|(s, dir)| {
            Series::new(
                format!("{} {dir}", s.topic),
                s.records.iter().map(per_s).collect(),
            )
        })
        .collect();
    let (series, note) = charts::top_and_others(series, Rank::Total, Merge::Mean);
    charts::line_chart(&LineChart {
        id: "throughput".into(),
        title: "Records per second, per topic and direction".into(),
        unit: Unit::RecordsPerSecond,
        scale: Scale::Linear,
        merge: Merge::Mean,
        buckets: b,
        series,
        note,
    })
}

/// A throughput row's cells after its topic (and partition).
fn rate_cells(r: &ThroughputRow) -> Vec<Cell> {
    let b = &r.batch_records;
    vec![
        Cell::text(r.direction),
        Cell::count(r.records.max(0) as u64),
        Cell::num(
            units::per_second(r.records_per_s, "records"),
            r.records_per_s,
        ),
        Cell::num(units::si(r.wire_bytes_per_s, "B/s"), r.wire_bytes_per_s),
        Cell::num(
            units::si(r.uncompressed_bytes_per_s, "B/s"),
            r.uncompressed_bytes_per_s,
        ),
        Cell::count(r.batches),
        Cell::num(
            match b.min {
                Some(min) => format!("{min}-{} (avg {})", b.max, units::si(b.avg, "")),
                None => "-".into(),
            },
            b.avg,
        ),
        Cell::num(
            units::bytes(r.largest_batch_bytes as f64),
            r.largest_batch_bytes as f64,
        ),
    ]
}

const RATE_COLUMNS: [(&str, &str); 8] = [
    ("direction", "direction"),
    ("records", "records"),
    ("records/s", "records_per_s"),
    ("wire", "wire_bytes_per_s"),
    ("uncompressed", "uncompressed_bytes_per_s"),
    ("batches", "batches"),
    ("records a batch", "batch_records"),
    ("largest batch", "largest_batch_bytes"),
];

pub fn throughput(a: &AnalysesOut) -> Option<Section> {
    let t = a.throughput.as_ref()?;
    let mut topics = Table::new("throughput-topics", &[("topic", "topic")]);
    topics.columns.extend(RATE_COLUMNS);
    for r in &t.topics {
        let mut row = vec![Cell::text(&r.topic)];
        row.extend(rate_cells(r));
        topics.row(row);
    }
    let mut parts = Table::new(
        "throughput",
        &[("topic", "topic"), ("partition", "partition")],
    );
    parts.columns.extend(RATE_COLUMNS);
    for r in &t.partitions {
        let mut row = vec![
            Cell::text(&r.topic),
            Cell::opt(r.partition.map(f64::from), |p| format!("{p}")),
        ];
        row.extend(rate_cells(r));
        parts.row(row);
    }
    let codecs = codecs_table(t);
    let slow = slowest_table(t, a.span.map_or(a.interval.start_ns, |s| s.first_ns));
    Some(Section {
        id: "throughput",
        title: "Throughput".into(),
        body: html! {
            @if t.topics.is_empty() {
                p { "No record was produced or fetched." }
            } @else {
                (throughput_chart(t, grid(a)))
                h3 { "Per topic (over " (units::duration_ms(t.seconds * 1000.0)) ")" }
                (topics.render())
                details {
                    summary { "Per partition (" (units::count(t.partitions.len() as u64)) " rows)" }
                    (parts.render())
                }
            }
            div class="cols" {
                div {
                    h3 { "Compression per codec (produced batches)" }
                    @if t.codecs.is_empty() { p { "No batch produced." } } @else { (codecs.render()) }
                }
                div {
                    h3 { "Slowest acks=all produces" }
                    @if t.slowest_acks_all.is_empty() { p { "None captured." } } @else { (slow.render()) }
                }
            }
        },
    })
}

/// Compression per codec of the produced batches.
fn codecs_table(t: &ThroughputOut) -> Table {
    let mut codecs = Table::new(
        "codecs",
        &[
            ("codec", "codec"),
            ("batches", "batches"),
            ("wire", "wire_bytes"),
            ("uncompressed", "uncompressed_bytes"),
            ("ratio", "ratio"),
        ],
    );
    for c in &t.codecs {
        codecs.row(vec![
            Cell::text(c.codec),
            Cell::count(c.batches),
            Cell::num(units::bytes(c.wire_bytes as f64), c.wire_bytes as f64),
            Cell::num(
                units::bytes(c.uncompressed_bytes as f64),
                c.uncompressed_bytes as f64,
            ),
            Cell::num(units::ratio(c.ratio), c.ratio),
        ]);
    }
    codecs
}

/// The slowest acks=all produces, with their times from `start` (the first message).
fn slowest_table(t: &ThroughputOut, start: i64) -> Table {
    let mut slow = Table::new(
        "slowest",
        &[
            ("frame", "frame"),
            ("at", "ts"),
            ("client_id", "client_id"),
            ("topics", "topics"),
            ("records", "records"),
            ("latency", "latency_ms"),
        ],
    );
    for s in &t.slowest_acks_all {
        slow.row(vec![
            Cell::num(s.frame.to_string(), s.frame as f64),
            Cell::num(units::since_start(s.ts_ns, start), s.ts_ns as f64),
            Cell::text(&s.client_id),
            Cell::text(s.topics.join(" ")),
            Cell::count(s.records.max(0) as u64),
            Cell::num(units::duration_ms(s.latency_ms), s.latency_ms),
        ]);
    }
    slow
}
