//! The page's sections, each from the typed statistics and analyses.

use super::charts::{self, LineChart, Merge, Scale, Series, Unit};
use super::page::{Cell, Section, Table, MAX_ROWS};
use super::traffic::grid;
use super::units;
use super::Report;
use crate::analyses::{AnalysesOut, ClientVersionsOut, FindingOut};
use crate::render::stats::out::{ApiOut, HealthOut};
use crate::render::stats::StatsOut;
use maud::{html, Markup};
use std::collections::HashMap;

/// The health counters, named as the text table names them, and whether a non-zero count
/// means something was lost (rather than only noted).
fn health_rows(h: &HealthOut) -> Vec<(&'static str, u64, bool)> {
    vec![
        ("packets", h.packets, false),
        ("packets cut by the snap length", h.truncated_packets, true),
        ("frames lost in gaps", h.gaps, true),
        ("frames shown partially", h.partial, true),
        ("retransmissions", h.retransmissions, false),
        ("conflicting overlaps", h.conflicting_overlaps, true),
        ("streams picked up mid-stream", h.midstream_pickups, false),
        ("resynchronisations", h.resyncs, true),
        ("size prefixes that cannot be frames", h.bad_sizes, true),
        (
            "responses without a captured request",
            h.unmatched_responses,
            false,
        ),
        ("requests without a response", h.unanswered, false),
        (
            "responses timestamped before their request",
            h.backwards,
            true,
        ),
        ("malformed messages", h.malformed, true),
        ("messages of APIs not decoded", h.undecoded, true),
        (
            "frames cut off by the end of their stream",
            h.ended_in_frame,
            false,
        ),
        (
            "frames still arriving dropped for memory",
            h.frames_dropped,
            true,
        ),
        ("requests no longer waited for", h.pending_dropped, true),
    ]
}

/// Messages counted over every API row.
fn messages(apis: &[ApiOut]) -> u64 {
    apis.iter().map(|a| a.requests + a.responses).sum()
}

/// The three errors answered most, with their counts.
fn most_answered(s: &StatsOut) -> Vec<String> {
    let mut errors: Vec<_> = s.errors.iter().collect();
    errors.sort_by_key(|e| std::cmp::Reverse(e.count));
    errors
        .iter()
        .take(3)
        .map(|e| format!("{} ×{}", e.name.unwrap_or("unknown"), units::count(e.count)))
        .collect()
}

/// The page's head: what was read, when, and the few figures that say where to look.
pub fn header(r: &Report<'_>) -> Markup {
    let s = r.stats;
    let lost: Vec<String> = health_rows(&s.health)
        .into_iter()
        .filter(|(_, n, lost)| *lost && *n > 0)
        .map(|(name, n, _)| format!("{} {name}", units::count(n)))
        .collect();
    let errors: u64 = s.errors.iter().map(|e| e.count).sum();
    // A capture whose TLS was not read is not called clean: most of it may be unseen.
    let hidden = s.tls.map_or(0, |t| t.not_decrypted);
    html! {
        h1 { "kdissect report" }
        p class="meta" {
            @for (i, f) in r.inputs.iter().enumerate() {
                @if i > 0 { ", " }
                code { (f) }
            }
            " · " (units::count(s.health.packets)) " packets · "
            (units::count(messages(&s.apis))) " Kafka messages · "
            (units::count(s.connections.iter().filter(|c| c.stream.is_some()).count() as u64)) " connections"
        }
        @if let Some(a) = r.analyses {
            @if let Some(span) = a.span {
                p class="meta" {
                    "Traffic from " (units::wall_datetime(span.first_ns)) " for "
                    (units::duration_ms(span.seconds * 1000.0)) "; series in buckets of "
                    (units::duration_ms(a.interval.width_ms)) ". Times below are from the first message."
                }
            }
        }
        ul class="glance" {
            @if lost.is_empty() && hidden == 0 {
                li { b { "clean" } "capture: nothing lost or malformed" }
            } @else if lost.is_empty() {
                li { b { "intact" } "capture: nothing lost or malformed in what was read" }
            } @else {
                li class="bad" { b { "incomplete" } "capture: " (lost.join(", ")) }
            }
            @if let Some(tls) = s.tls.filter(|t| t.not_decrypted > 0) {
                li class="warn" {
                    b { (units::count(tls.not_decrypted)) } a href="#health" { "TLS connections not decrypted" }
                    " (" (units::bytes(tls.not_decrypted_bytes as f64)) " not read: give --keylog)"
                }
            }
            @if let Some(a) = r.analyses {
                (glance(a))
            }
            @if errors == 0 {
                li { b { "0" } "error answers" }
            } @else {
                li class="warn" {
                    b { (units::count(errors)) } "error answers: "
                    (most_answered(s).join(", "))
                    @if s.errors.len() > 3 { ", …" }
                }
            }
        }
    }
}

/// The analyses' figures that say where to look: findings, the worst lag, the slowest
/// end-to-end percentile, rebalances.
fn glance(a: &AnalysesOut) -> Markup {
    let findings = a.findings.as_deref().unwrap_or_default();
    let warnings = findings.iter().filter(|f| f.severity == "warning").count();
    let worst_lag = a
        .lag
        .as_ref()
        .and_then(|l| l.series.iter().max_by_key(|s| s.max))
        .filter(|s| s.max > 0);
    let slowest = a.end_to_end.as_ref().and_then(|e| {
        e.latency
            .iter()
            .filter_map(|r| Some((r.latency_ms.p99?, r)))
            .max_by(|x, y| x.0.total_cmp(&y.0))
    });
    let generations: usize = a
        .groups
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|g| g.generations.len())
        .sum();
    html! {
        @if !findings.is_empty() {
            li class=[(warnings > 0).then_some("warn")] {
                b { (findings.len()) } a href="#findings" { "findings" }
                " (" (warnings) " warnings)"
            }
        }
        @if let Some(s) = worst_lag {
            li class=[s.status.filter(|st| *st != crate::analyses::LagStatus::Ok).map(|_| "warn")] {
                b { (units::count_i(s.max)) " records" } a href="#lag" { "largest lag" }
                " (" (s.kind.name()) "): " (s.owner) " on " (s.topic) "-" (s.partition)
            }
        }
        @if let Some((p99, r)) = slowest {
            li {
                b { (units::duration_ms(p99)) } a href="#end-to-end" { "end-to-end p99" }
                " at worst: " (r.topic) " to " (r.owner)
            }
        }
        @if generations > 0 {
            li {
                b { (generations) } a href="#groups" { "group generations" }
                " in " (a.groups.as_deref().unwrap_or_default().len()) " groups"
            }
        }
    }
}

/// Frames of a finding shown as commands at most; the rest are counted.
const FINDING_FRAMES: usize = 5;

/// The findings, each with the commands that show its frames.
fn findings_table(list: &[FindingOut], inputs: &[String]) -> Markup {
    let files = inputs
        .iter()
        .map(|f| crate::analyses::findings::shell_quote(f))
        .collect::<Vec<_>>()
        .join(" ");
    // One capture: the findings' own command; several: each path quoted.
    let show = |n: u64| match inputs {
        [one] => crate::analyses::findings::show_command(&[n], one),
        _ => format!("kdissect -Y 'frame == {n}' -V {files}"),
    };
    let mut t = Table::new(
        "findings",
        &[
            ("severity", "severity"),
            ("finding", "kind"),
            ("summary", "summary"),
            ("frames", "frames"),
        ],
    );
    for f in list {
        let more = f.frames.len().saturating_sub(FINDING_FRAMES);
        t.row_classed(
            (f.severity == "warning").then_some("warning"),
            vec![
                Cell::text(f.severity),
                Cell::text(f.kind),
                Cell::prose(&f.summary),
                Cell::Markup(html! {
                    @for n in f.frames.iter().take(FINDING_FRAMES) {
                        code data-frame=(n) { (show(*n)) }
                        br;
                    }
                    @if more > 0 { (more) " more frames" }
                }),
            ],
        );
    }
    t.render()
}

/// The TLS connections, when the capture has any: those not decrypted are traffic the rest
/// of the page does not count.
fn tls_rows(t: &mut Table, s: &StatsOut) {
    if let Some(tls) = &s.tls {
        t.row(vec![
            Cell::text("TLS connections decrypted"),
            Cell::count(tls.decrypted),
        ]);
        let class = (tls.not_decrypted > 0).then_some("warning");
        t.row_classed(
            class,
            vec![
                Cell::text("TLS connections not decrypted"),
                Cell::count(tls.not_decrypted),
            ],
        );
        t.row_classed(
            class,
            vec![
                Cell::text("bytes encrypted in TLS connections not decrypted"),
                Cell::count(tls.not_decrypted_bytes),
            ],
        );
    }
}

/// Health, error codes (and, with the analyses, the findings).
pub fn health_and_errors(r: &Report<'_>) -> Section {
    let s = r.stats;
    let mut health = Table::new("health", &[("capture health", "name"), ("count", "count")]);
    for (name, n, lost) in health_rows(&s.health) {
        // The last three are shown only when they happened, as in the text table.
        let when_happened = ["frames cut off", "frames still", "requests no longer"];
        if n == 0 && when_happened.iter().any(|w| name.starts_with(w)) {
            continue;
        }
        let class = match (n, lost) {
            (0, _) => Some("zero"),
            (_, true) => Some("error"),
            _ => None,
        };
        health.row_classed(class, vec![Cell::text(name), Cell::count(n)]);
        if name == "messages of APIs not decoded" {
            tls_rows(&mut health, s);
        }
    }
    let mut errors = Table::new(
        "errors",
        &[("error", "name"), ("code", "code"), ("count", "count")],
    );
    for e in &s.errors {
        errors.row(vec![
            Cell::text(e.name.unwrap_or("unknown")),
            Cell::num(e.code.to_string(), f64::from(e.code)),
            Cell::count(e.count),
        ]);
    }
    Section {
        id: "health",
        title: "Health and errors".into(),
        body: html! {
            div class="cols" {
                div { h3 { "Capture health" } (health.render()) }
                div {
                    h3 { "Error codes answered" }
                    @if s.errors.is_empty() { p { "No answer carried an error code." } }
                    @else { (errors.render()) }
                }
            }
            @if let Some(list) = r.analyses.and_then(|a| a.findings.as_deref()) {
                h3 id="findings" { "Findings" }
                @if list.is_empty() { p { "Nothing found that deserves a look." } }
                @else { (findings_table(list, r.inputs)) }
            }
        },
    }
}

/// `Metadata (3)`.
fn api_label(key: i16, name: &str) -> String {
    format!("{name} ({key})")
}

/// Microseconds as a duration cell.
fn us_cell(v: Option<f64>) -> Cell {
    Cell::opt(v, |us| units::duration_ms(us / 1000.0))
}

/// APIs given a small chart of their latency at most (the busiest).
const LATENCY_CHARTS: usize = 8;

/// The largest latency per bucket of the busiest APIs (by requests), a small chart each on
/// its own scale: a 500 ms long poll beside 2 ms answers hides them on one scale.
fn latency_charts(a: &AnalysesOut, apis: &[ApiOut]) -> Markup {
    let mut requests: HashMap<i16, u64> = HashMap::new();
    for x in apis {
        *requests.entry(x.api_key).or_default() += x.requests;
    }
    let mut rows: Vec<_> = a
        .api_latency
        .iter()
        .filter(|r| r.max_ms.iter().any(Option::is_some))
        .collect();
    // Stable: equally busy APIs keep their key order.
    rows.sort_by_key(|r| std::cmp::Reverse(requests.get(&r.api_key).copied().unwrap_or(0)));
    let more = rows.len().saturating_sub(LATENCY_CHARTS);
    let charts: Vec<LineChart> = rows
        .iter()
        .take(LATENCY_CHARTS)
        .enumerate()
        .map(|(i, r)| LineChart {
            id: format!("api-latency-{i}"),
            title: format!(
                "{} ({} requests)",
                r.api_name,
                units::count(requests.get(&r.api_key).copied().unwrap_or(0))
            ),
            unit: Unit::Millis,
            scale: Scale::Linear,
            merge: Merge::Max,
            buckets: grid(a),
            series: vec![Series::new(&r.api_name, r.max_ms.clone())],
            note: None,
        })
        .collect();
    html! {
        @if !charts.is_empty() {
            (charts::small_multiples(
                "api-latency",
                &format!("Largest request-to-response latency per bucket, the {} busiest APIs", charts.len()),
                &charts,
            ))
            @if more > 0 {
                p class="note" { (more) " more APIs: the table has their percentiles." }
            }
        }
    }
}

/// The Kafka API table with its latency percentiles (and, with the analyses, the latency
/// chart).
pub fn latency(r: &Report<'_>) -> Section {
    let s = r.stats;
    let mut t = Table::new(
        "apis",
        &[
            ("API", "api_name"),
            ("version", "api_version"),
            ("requests", "requests"),
            ("responses", "responses"),
            ("unanswered", "unanswered"),
            ("with errors", "with_errors"),
            ("malformed", "malformed"),
            ("p50", "latency.p50"),
            ("p95", "latency.p95"),
            ("p99", "latency.p99"),
            ("max", "latency.max"),
        ],
    );
    for a in &s.apis {
        let class = if a.malformed > 0 {
            Some("error")
        } else if a.with_errors > 0 || a.unanswered > 0 {
            Some("warning")
        } else {
            None
        };
        t.row_classed(
            class,
            vec![
                Cell::text(api_label(a.api_key, &a.api_name)),
                Cell::num(a.api_version.to_string(), f64::from(a.api_version)),
                Cell::count(a.requests),
                Cell::count(a.responses),
                Cell::count(a.unanswered),
                Cell::count(a.with_errors),
                Cell::count(a.malformed),
                us_cell(a.latency_us.p50),
                us_cell(a.latency_us.p95),
                us_cell(a.latency_us.p99),
                us_cell(a.latency_us.max),
            ],
        );
    }
    Section {
        id: "latency",
        title: "Latency per API".into(),
        body: html! {
            p class="note" { "Request to response, per API and version; a Fetch answer waits up to the consumer's fetch.max.wait.ms when there is nothing to send, so its latency is a long poll, not a delay." }
            @if let Some(a) = r.analyses { (latency_charts(a, &s.apis)) }
            @if s.apis.is_empty() { p { "No Kafka message was decoded." } } @else { (t.render()) }
            @if let Some(tls) = s.tls.filter(|t| t.not_decrypted > 0) {
                p class="note" { "Not counted above: " (units::count(tls.not_decrypted)) " TLS connections not decrypted ("
                    (units::bytes(tls.not_decrypted_bytes as f64)) ")." }
            }
            @if s.other_api_messages > 0 {
                p class="note" { (units::count(s.other_api_messages)) " messages of API versions past the rows kept are not broken down." }
            }
        },
    }
}

/// One row per client (software, client id, address): every API with the versions used, and what
/// is older than the broker offers, not advertised, or answered in another layout.
fn clients_table(list: &[ClientVersionsOut]) -> Markup {
    let mut t = Table::new(
        "client-versions",
        &[
            ("software", "software"),
            ("client id", "client_id"),
            ("APIs and versions used", "apis"),
            ("to look at", "flags"),
        ],
    );
    for c in list {
        let used: Vec<String> = c
            .apis
            .iter()
            .map(|u| {
                let v: Vec<String> = u.versions.iter().map(|v| format!("v{v}")).collect();
                format!("{} {}", u.api_name, v.join(" "))
            })
            .collect();
        let mut flags = Vec::new();
        for u in &c.apis {
            if u.older_than_broker {
                let newest = u.versions.iter().max().copied().unwrap_or_default();
                flags.push(format!(
                    "{} v{newest} older than the broker's v{}",
                    u.api_name,
                    u.broker_max.unwrap_or_default()
                ));
            }
            if u.not_advertised > 0 {
                flags.push(format!(
                    "{} ×{} not advertised",
                    u.api_name,
                    units::count(u.not_advertised)
                ));
            }
            if u.other_layout > 0 {
                flags.push(format!(
                    "{} ×{} answered in another layout",
                    u.api_name,
                    units::count(u.other_layout)
                ));
            }
        }
        t.row_classed(
            (!flags.is_empty()).then_some("warning"),
            vec![
                Cell::text(software_text(c)),
                Cell::text(match &c.address {
                    Some(address) => format!("{} ({address})", c.client_id),
                    None => c.client_id.clone(),
                }),
                Cell::prose(used.join(", ")),
                Cell::prose(flags.join("; ")),
            ],
        );
    }
    t.render()
}

/// The software and version a client's ApiVersions request gave, or what its versions show
/// it to be, or that it said nothing.
fn software_text(c: &ClientVersionsOut) -> String {
    match (&c.software, &c.version, c.recognised_as) {
        (Some(software), Some(version), _) => format!("{software} {version}"),
        (Some(software), None, _) => software.clone(),
        (None, _, Some(like)) => format!("unnamed (versions of {like})"),
        (None, _, None) => "unnamed".to_string(),
    }
}

/// The versions each node advertised against those used on it.
pub fn versions(r: &Report<'_>) -> Section {
    let s = r.stats;
    let mut t = Table::new(
        "version-skew",
        &[
            ("API", "api_name"),
            ("node", "node"),
            ("advertised", "advertised"),
            ("used", "used"),
            ("status", "status"),
        ],
    );
    for v in &s.version_skew {
        // A node whose ApiVersions answer was not captured is not at fault.
        let class = match v.status.as_str() {
            "ok" => None,
            s if s.starts_with("no ApiVersions") => Some("zero"),
            _ => Some("warning"),
        };
        t.row_classed(
            class,
            vec![
                Cell::text(api_label(v.api_key, &v.api_name)),
                Cell::text(&v.node),
                Cell::text(&v.advertised),
                Cell::text(&v.used),
                Cell::text(&v.status),
            ],
        );
    }
    let clients = r.analyses.and_then(|a| a.client_versions.as_deref());
    Section {
        id: "versions",
        title: "Versions".into(),
        body: html! {
            @if let Some(c) = clients {
                h3 { "Per client software" }
                @if c.is_empty() { p { "No request was captured." } } @else { (clients_table(c)) }
            }
            h3 { "Advertised by each node against used by clients" }
            @if s.version_skew.is_empty() { p { "No request was sent to a node." } }
            @else { (t.render()) }
            @if s.unchecked_requests > 0 {
                p class="note" { (units::count(s.unchecked_requests)) " requests to nodes past those checked." }
            }
        },
    }
}

/// The connections, the busiest first, the rest summed.
pub fn connections(r: &Report<'_>) -> Section {
    let s = r.stats;
    let several = !s.files.is_empty();
    let mut columns = vec![
        ("stream", "stream"),
        ("client_id", "client_id"),
        ("client", "client"),
        ("broker", "broker"),
        ("messages", "messages"),
        ("bytes", "bytes"),
    ];
    let tls = s.connections.iter().any(|c| c.tls.is_some());
    if tls {
        columns.push(("TLS", "tls"));
    }
    if several {
        columns.insert(0, ("file", "file"));
    }
    let mut t = Table::new("connections", &columns);
    let mut conns: Vec<_> = s.connections.iter().collect();
    conns.sort_by_key(|c| std::cmp::Reverse(c.messages));
    let shown = MAX_ROWS - 1;
    for c in conns.iter().take(shown) {
        let mut row = vec![
            c.stream.map_or_else(
                || Cell::text("*"),
                |n| Cell::num(n.to_string(), f64::from(n)),
            ),
            Cell::text(c.client_id.as_deref().unwrap_or("-")),
            Cell::text(&c.client),
            Cell::text(&c.broker),
            Cell::count(c.messages),
            Cell::num(units::bytes(c.bytes as f64), c.bytes as f64),
        ];
        if tls {
            row.push(Cell::text(c.tls.unwrap_or("-")));
        }
        if several {
            row.insert(0, Cell::text(c.file.as_deref().unwrap_or("-")));
        }
        t.row_classed((c.tls == Some("not decrypted")).then_some("warning"), row);
    }
    let rest = &conns[shown.min(conns.len())..];
    if !rest.is_empty() {
        let messages: u64 = rest.iter().map(|c| c.messages).sum();
        let bytes: u64 = rest.iter().map(|c| c.bytes).sum();
        let mut row = vec![
            Cell::text("…"),
            Cell::text(format!(
                "{} more connections",
                units::count(rest.len() as u64)
            )),
            Cell::text("-"),
            Cell::text("-"),
            Cell::count(messages),
            Cell::num(units::bytes(bytes as f64), bytes as f64),
        ];
        if tls {
            row.push(Cell::text("-"));
        }
        if several {
            row.insert(0, Cell::text("-"));
        }
        t.row_classed(Some("more"), row);
    }
    Section {
        id: "connections",
        title: "Connections".into(),
        body: html! {
            @if let Some(a) = r.analyses {
                p { (units::count(a.connections.opened as u64)) " connections opened in the capture, at most "
                    (units::count(a.connections.most_in_one_second as u64)) " within one second." }
            }
            (t.render())
        },
    }
}

/// The TLS connections, when the capture has any: how many were read, and those that were
/// not (their bytes are in no other section), the largest first, with what to do about them.
pub fn tls(r: &Report<'_>) -> Option<Section> {
    let s = r.stats;
    let tls = s.tls?;
    let mut hidden: Vec<_> = s
        .connections
        .iter()
        .filter(|c| c.tls == Some("not decrypted"))
        .collect();
    hidden.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    let mut t = Table::new(
        "tls-not-decrypted",
        &[
            ("stream", "stream"),
            ("client", "client"),
            ("broker", "broker"),
            ("bytes", "bytes"),
        ],
    );
    for c in &hidden {
        t.row(vec![
            c.stream.map_or_else(
                || Cell::text("*"),
                |n| Cell::num(n.to_string(), f64::from(n)),
            ),
            Cell::text(&c.client),
            Cell::text(&c.broker),
            Cell::num(units::bytes(c.bytes as f64), c.bytes as f64),
        ]);
    }
    Some(Section {
        id: "tls",
        title: "TLS".into(),
        body: html! {
            p {
                (units::count(tls.connections)) " TLS connections: "
                (units::count(tls.decrypted)) " decrypted with the key log, "
                (units::count(tls.not_decrypted)) " not decrypted"
                @if tls.not_decrypted > 0 {
                    " (" (units::bytes(tls.not_decrypted_bytes as f64)) " encrypted, counted in no other section)"
                }
                "."
            }
            @if tls.not_decrypted > 0 {
                p class="note" {
                    "Give their session secrets with --keylog FILE (an SSLKEYLOGFILE the clients or the broker wrote; docs/tls.md says how)."
                }
                @if hidden.is_empty() {
                    p class="note" { "The connections past those the table keeps are summed in its last row." }
                } @else {
                    h3 { "Connections not decrypted" }
                    (t.render())
                }
            }
        },
    })
}
