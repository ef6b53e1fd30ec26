//! The cluster changes' section: what the KRaft metadata log changed (brokers fenced and
//! unfenced, leaders moved, ISRs shrunk or expanded, topics created or deleted, configs), in
//! time order, and each broker as the log left it.
//!
//! The section reads a view of the cluster analysis' output ([`ClusterView`], made by
//! [`view`]): its tests build views by hand, without running the analysis.

use super::page::{Cell, Section, Table};
use super::units;
use crate::analyses::cluster::ClusterOut;
use maud::html;

/// The view of the cluster analysis' typed output.
pub fn view(c: &ClusterOut) -> ClusterView<'_> {
    ClusterView {
        changes: c
            .changes
            .iter()
            .map(|r| ChangeView {
                ts_ns: r.ts_ns,
                frame: r.frame,
                // In the words of the text table.
                kind: r.kind.words().to_string(),
                subjects: &r.subjects,
                count: r.count,
                detail: &r.detail,
            })
            .collect(),
        brokers: c
            .brokers
            .iter()
            .map(|b| BrokerView {
                broker: b.broker,
                epoch: b.epoch,
                registered: b.registered,
                fenced: b.fenced,
                shutting_down: b.shutting_down,
            })
            .collect(),
        records: c.records,
        seen_again: c.seen_again,
        not_kept: c.not_kept,
    }
}

/// One row of the change list: a change, or identical changes of several subjects folded.
pub struct ChangeView<'a> {
    /// Capture time (ns since 1970) and frame where the first of them was seen.
    pub ts_ns: i64,
    pub frame: u64,
    /// As a reader says it: `broker fenced`, `ISR shrunk`.
    pub kind: String,
    /// The first few subjects (`orders-0`, `broker 2`).
    pub subjects: &'a [String],
    /// Changes the row folds (subjects past the first few included).
    pub count: u64,
    /// `1→3`, `[1,2,3]→[1,3]`, `retention.ms=86400000`.
    pub detail: &'a str,
}

/// A broker as the log left it.
pub struct BrokerView {
    pub broker: i32,
    pub epoch: i64,
    pub registered: bool,
    pub fenced: Option<bool>,
    pub shutting_down: bool,
}

/// The cluster analysis' output, as the page reads it.
pub struct ClusterView<'a> {
    pub changes: Vec<ChangeView<'a>>,
    pub brokers: Vec<BrokerView>,
    /// Records of the log that changed something, each counted once.
    pub records: u64,
    /// Sightings of a record already counted (one per fetcher).
    pub seen_again: u64,
    /// Changes past the analysis' bounds.
    pub not_kept: u64,
}

/// Within one frame, brokers first: the broker fenced is why the ISRs shrank.
fn rank(kind: &str) -> u8 {
    if kind.starts_with("broker") || kind.starts_with("controller") {
        0
    } else if kind.starts_with("topic") {
        1
    } else {
        2
    }
}

/// `orders-0, orders-1 +3 more`.
fn subjects_text(c: &ChangeView<'_>) -> String {
    let mut parts: Vec<String> = c.subjects.to_vec();
    let more = c.count.saturating_sub(c.subjects.len() as u64);
    if more > 0 {
        parts.push(format!("+{more} more"));
    }
    parts.join(", ")
}

/// A change is bad news for a reader when it takes capacity away.
fn class(kind: &str) -> Option<&'static str> {
    match kind {
        "broker fenced" | "broker unregistered" | "leader lost" | "ISR shrunk" => Some("warning"),
        "broker shutting down" | "topic deleted" => Some("warning"),
        _ => None,
    }
}

fn changes_table(c: &ClusterView<'_>, start_ns: i64) -> Table {
    let mut t = Table::new(
        "cluster-changes",
        &[
            ("at", "ts"),
            ("frame", "frame"),
            ("change", "kind"),
            ("of", "subjects"),
            ("detail", "detail"),
        ],
    );
    let mut rows: Vec<&ChangeView<'_>> = c.changes.iter().collect();
    rows.sort_by_key(|r| (r.ts_ns, r.frame, rank(&r.kind)));
    for r in rows {
        t.row_classed(
            class(&r.kind),
            vec![
                Cell::num(units::since_start(r.ts_ns, start_ns), r.ts_ns as f64),
                Cell::num(r.frame.to_string(), r.frame as f64),
                Cell::text(&r.kind),
                Cell::text(subjects_text(r)),
                Cell::text(r.detail),
            ],
        );
    }
    t
}

fn brokers_table(c: &ClusterView<'_>) -> Table {
    let mut t = Table::new(
        "cluster-brokers",
        &[
            ("broker", "broker"),
            ("epoch", "epoch"),
            ("registered", "registered"),
            ("fenced", "fenced"),
            ("shutting down", "shutting_down"),
        ],
    );
    let yes = |b: bool| if b { "yes" } else { "no" };
    for b in &c.brokers {
        let down = !b.registered || b.fenced == Some(true) || b.shutting_down;
        t.row_classed(
            down.then_some("warning"),
            vec![
                Cell::num(b.broker.to_string(), f64::from(b.broker)),
                Cell::num(b.epoch.to_string(), b.epoch as f64),
                Cell::text(yes(b.registered)),
                Cell::text(b.fenced.map_or("-", yes)),
                Cell::text(yes(b.shutting_down)),
            ],
        );
    }
    t
}

/// The section: a line of counts, the changes in time order, the brokers' last state.
pub fn section(c: &ClusterView<'_>, start_ns: i64) -> Section {
    Section {
        id: "cluster",
        title: "Cluster changes".into(),
        body: html! {
            p class="note" {
                "From the KRaft metadata log the brokers fetch: " (units::count(c.records))
                " records changed something (each counted once; fetched "
                (units::count(c.seen_again)) " more times by other fetchers)."
            }
            @if c.changes.is_empty() {
                p { "No change to the cluster was captured." }
            } @else {
                (changes_table(c, start_ns).render())
            }
            @if !c.brokers.is_empty() {
                h3 { "Brokers as the log left them" }
                (brokers_table(c).render())
            }
            @if c.not_kept > 0 {
                p class="note" { (units::count(c.not_kept)) " changes past the analysis' bounds were not kept." }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyses::cluster::Kind;

    #[test]
    fn changes_in_time_order_brokers_first_and_escaped() {
        let isr = vec!["orders-0".to_string(), "<b>x</b>-1".to_string()];
        let broker = vec!["broker 2".to_string()];
        let view = ClusterView {
            changes: vec![
                ChangeView {
                    ts_ns: 2_000_000_000,
                    frame: 40,
                    kind: Kind::IsrShrunk.words().to_string(),
                    subjects: &isr,
                    count: 5,
                    detail: "[1,2,3]→[1,3]",
                },
                ChangeView {
                    ts_ns: 2_000_000_000,
                    frame: 40,
                    kind: Kind::BrokerFenced.words().to_string(),
                    subjects: &broker,
                    count: 1,
                    detail: "epoch 7",
                },
            ],
            brokers: vec![BrokerView {
                broker: 2,
                epoch: 7,
                registered: true,
                fenced: Some(true),
                shutting_down: false,
            }],
            records: 2,
            seen_again: 4,
            not_kept: 0,
        };
        let page = section(&view, 1_000_000_000).body.into_string();
        let fenced = page.find("broker fenced").expect("fenced row");
        let shrunk = page.find("ISR shrunk").expect("ISR row");
        assert!(fenced < shrunk, "brokers first within a frame");
        assert!(page.contains("orders-0, &lt;b&gt;x&lt;/b&gt;-1, +3 more"));
        assert!(page.contains("1 s"));
        assert!(page.contains("2 records changed something"));
        assert!(page.contains("data-table=\"cluster-brokers\""));
    }
}
