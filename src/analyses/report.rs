//! `--report FILE.html`: one self-contained HTML file, with no script and no external asset,
//! drawn from the same JSON object `--stats --json` prints, so that every table and chart
//! holds its numbers. Charts are inline SVG written here; each carries its values in
//! `data-values` attributes and is followed by a table of the same values, so that the page
//! reads the same with JavaScript off and can be checked by structure.

use serde_json::Value as J;
use std::fmt::Write;

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A cell's text from a JSON value.
fn cell(v: &J) -> String {
    match v {
        J::Null => "-".into(),
        J::String(s) => s.clone(),
        J::Array(a) => a.iter().map(cell).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// A table of `rows` (objects), with the `cols` given as (header, key).
fn table(id: &str, rows: &[J], cols: &[(&str, &str)]) -> String {
    let mut s = format!("<table data-table=\"{}\"><thead><tr>", esc(id));
    for (h, _) in cols {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        s.push_str("<tr>");
        for (_, k) in cols {
            let v = k.split('.').fold(r, |v, part| &v[part]);
            let _ = write!(s, "<td data-key=\"{}\">{}</td>", esc(k), esc(&cell(v)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>\n");
    s
}

/// Colours of the series, in turn.
const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Height of a legend row: more than a 10 px text's box (about 12 px), so rows never touch.
const LEGEND_ROW: f64 = 15.0;

/// Width allowed per character of a 10 px legend name: more than sans-serif letters take
/// (4.5 to 6 px on average, by font), so that names never reach the next column.
const LEGEND_CHAR: f64 = 6.5;

/// A line chart of bucketed series (`None`: no value in that bucket), with its legend and
/// a table of the same values. The legend sits under the plot, each series a swatch of its
/// colour and its name, in as many columns (up to 4) as the longest name leaves room for,
/// filled down then across: it neither covers the lines nor overlaps itself however many
/// series there are.
pub fn line_chart(
    id: &str,
    title: &str,
    unit: &str,
    series: &[(String, Vec<Option<f64>>)],
) -> String {
    let (w, plot_h, pad) = (720.0, 220.0, 40.0);
    let longest = series
        .iter()
        .map(|s| s.0.chars().count())
        .max()
        .unwrap_or(0);
    let columns = ((w - 2.0 * pad) / (20.0 + LEGEND_CHAR * longest as f64 + 20.0))
        .floor()
        .clamp(1.0, 4.0) as usize;
    let rows = series.len().div_ceil(columns);
    let column_w = (w - 2.0 * pad) / columns as f64;
    let legend_top = plot_h - pad + 12.0;
    let h = legend_top + LEGEND_ROW * rows as f64 + 4.0;
    let n = series.iter().map(|s| s.1.len()).max().unwrap_or(0).max(2);
    let top = series
        .iter()
        .flat_map(|s| s.1.iter().flatten())
        .fold(0.0f64, |m, v| m.max(*v))
        .max(1.0);
    let x = |i: usize| pad + (w - 2.0 * pad) * i as f64 / (n - 1) as f64;
    let y = |v: f64| plot_h - pad - (plot_h - 2.0 * pad) * v / top;
    let mut s = format!(
        "<figure data-chart=\"{}\"><figcaption>{}</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{}\">",
        esc(id),
        esc(title),
        esc(title)
    );
    let _ = write!(
        s,
        "<line x1=\"{pad}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#888\"/><line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{0}\" stroke=\"#888\"/><text x=\"2\" y=\"{pad}\" font-size=\"10\">{2} {3}</text><text x=\"2\" y=\"{0}\" font-size=\"10\">0</text>",
        plot_h - pad,
        w - pad,
        top,
        esc(unit)
    );
    for (k, (name, vals)) in series.iter().enumerate() {
        let colour = COLOURS[k % COLOURS.len()];
        let points: Vec<String> = vals
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.map(|v| format!("{:.1},{:.1}", x(i), y(v))))
            .collect();
        let data: Vec<String> = vals
            .iter()
            .map(|v| v.map_or("null".into(), |v| v.to_string()))
            .collect();
        let _ = write!(
            s,
            "<polyline data-series=\"{}\" data-values=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" points=\"{}\"/>",
            esc(name),
            data.join(","),
            points.join(" ")
        );
        // Series k in the legend: a swatch, then the name, its baseline 4 px above its row's end.
        let row = legend_top + LEGEND_ROW * (k % rows) as f64;
        let left = pad + column_w * (k / rows) as f64;
        let _ = write!(
            s,
            "<g data-legend=\"{}\"><rect x=\"{left:.1}\" y=\"{}\" width=\"14\" height=\"4\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"10\" fill=\"{colour}\">{}</text></g>",
            esc(name),
            row + 5.5,
            left + 20.0,
            row + LEGEND_ROW - 4.0,
            esc(name)
        );
    }
    s.push_str("</svg>\n<details><summary>values</summary><table data-values-of=\"");
    s.push_str(&esc(id));
    s.push_str("\"><tbody>");
    for (name, vals) in series {
        let cells: String = vals
            .iter()
            .map(|v| format!("<td>{}</td>", v.map_or("-".into(), |v| v.to_string())))
            .collect();
        let _ = write!(s, "<tr><th>{}</th>{cells}</tr>", esc(name));
    }
    s.push_str("</tbody></table></details></figure>\n");
    s
}

/// A JSON array of numbers or nulls as chart values.
fn values(v: &J) -> Vec<Option<f64>> {
    v.as_array()
        .map(|a| a.iter().map(J::as_f64).collect())
        .unwrap_or_default()
}

fn arr(v: &J) -> &[J] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// The group timeline: one row per group, each generation a bar from its start to its end,
/// each happening a tick, times relative to the capture's first message.
fn timeline_chart(groups: &[J], start: i64, span_ns: i64) -> String {
    let (w, row, pad) = (720.0, 28.0, 120.0);
    let h = 20.0 + row * groups.len() as f64;
    let x = |ts: i64| pad + (w - pad - 10.0) * ((ts - start) as f64 / span_ns.max(1) as f64);
    let mut s = format!(
        "<figure data-chart=\"group-timeline\"><figcaption>Group timeline</figcaption>\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"group timeline\">"
    );
    for (i, g) in groups.iter().enumerate() {
        let y = 10.0 + row * i as f64;
        let _ = write!(
            s,
            "<text x=\"2\" y=\"{}\" font-size=\"11\">{}</text>",
            y + 14.0,
            esc(&cell(&g["group"]))
        );
        for gen in arr(&g["generations"]) {
            let a = gen["start_ns"].as_i64().unwrap_or(start);
            let z = gen["end_ns"].as_i64().unwrap_or(a);
            let _ = write!(
                s,
                "<rect data-generation=\"{}\" data-duration-ms=\"{}\" x=\"{:.1}\" y=\"{y}\" width=\"{:.1}\" height=\"18\" fill=\"#9ecae1\" stroke=\"#3182bd\"><title>generation {} ({} ms)</title></rect>",
                cell(&gen["generation"]),
                cell(&gen["duration_ms"]),
                x(a),
                (x(z) - x(a)).max(2.0),
                cell(&gen["generation"]),
                cell(&gen["duration_ms"])
            );
        }
        for t in arr(&g["timeline"]) {
            let at = t["ts_ns"].as_i64().unwrap_or(start);
            let _ = write!(
                s,
                "<line data-what=\"{}\" data-frame=\"{}\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y}\" y2=\"{}\" stroke=\"#d62728\"><title>{} {}</title></line>",
                esc(&cell(&t["what"])),
                cell(&t["frame"]),
                x(at),
                x(at),
                y + 18.0,
                esc(&cell(&t["what"])),
                esc(&cell(&t["member"]))
            );
        }
    }
    s.push_str("</svg></figure>\n");
    s
}

/// The whole page: `stats` is the object `--stats --json` prints under "stats", `analyses`
/// that object's "analyses"; `capture` names the file the findings' commands read.
pub fn html(stats: &J, capture: &str) -> String {
    let a = &stats["analyses"];
    let start = a["span"]["first_ns"].as_i64().unwrap_or(0);
    let span_ns = a["span"]["last_ns"].as_i64().unwrap_or(start) - start;
    let mut s = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>kdissect report</title>\n<style>body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left}code{background:#f4f4f4}figure{margin:1em 0}</style></head><body>\n");
    let _ = writeln!(s, "<h1>kdissect report: {}</h1>", esc(capture));
    let _ = writeln!(
        s,
        "<p data-span-seconds=\"{}\">{} s of traffic, buckets of {} ms.</p>",
        cell(&a["span"]["seconds"]),
        cell(&a["span"]["seconds"]),
        cell(&a["interval"]["width_ms"])
    );
    s.push_str("<h2 id=\"apis\">Kafka APIs</h2>\n");
    s.push_str(&table(
        "apis",
        arr(&stats["apis"]),
        &[
            ("API", "api_name"),
            ("version", "api_version"),
            ("requests", "requests"),
            ("responses", "responses"),
            ("p50 µs", "latency_us.p50"),
            ("p99 µs", "latency_us.p99"),
        ],
    ));
    let lat: Vec<(String, Vec<Option<f64>>)> = arr(&a["api_latency"])
        .iter()
        .map(|r| (cell(&r["api_name"]), values(&r["max_ms"])))
        .collect();
    s.push_str(&line_chart(
        "api-latency",
        "Latency per API over time (largest per bucket)",
        "ms",
        &lat,
    ));
    lag_and_latency(&mut s, a);
    throughput_and_groups(&mut s, a, start, span_ns);
    versions_and_findings(&mut s, a, capture);
    s.push_str("</body></html>\n");
    s
}

/// The lag table and chart, the end-to-end latency tables.
fn lag_and_latency(s: &mut String, a: &J) {
    s.push_str("<h2 id=\"lag\">Consumer lag</h2>\n");
    let lag = arr(&a["lag"]["series"]);
    s.push_str(&table(
        "lag",
        lag,
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
            ("growing since (frame)", "growing_since.frame"),
            ("status", "status"),
        ],
    ));
    let series: Vec<(String, Vec<Option<f64>>)> = lag
        .iter()
        .map(|r| {
            let name = format!(
                "{} {}-{} {}",
                cell(&r["owner"]),
                cell(&r["topic"]),
                cell(&r["partition"]),
                cell(&r["kind"])
            );
            (name, values(&r["buckets"]))
        })
        .collect();
    s.push_str(&line_chart(
        "lag",
        "Lag per partition over time (largest per bucket)",
        "records",
        &series,
    ));
    s.push_str("<h2 id=\"latency\">End-to-end record latency</h2>\n");
    s.push_str(&table(
        "end-to-end",
        arr(&a["end_to_end"]["latency"]),
        &[
            ("topic", "topic"),
            ("group or client", "owner"),
            ("records", "records"),
            ("p50 ms", "latency_ms.p50"),
            ("p95 ms", "latency_ms.p95"),
            ("p99 ms", "latency_ms.p99"),
            ("max ms", "latency_ms.max"),
        ],
    ));
    s.push_str(&table(
        "unconsumed",
        arr(&a["end_to_end"]["unconsumed"]),
        &[
            ("topic", "topic"),
            ("produced", "produced"),
            ("consumed", "consumed"),
            ("never consumed", "never_consumed"),
        ],
    ));
}

/// The throughput tables and chart, then the groups.
fn throughput_and_groups(s: &mut String, a: &J, start: i64, span_ns: i64) {
    s.push_str("<h2 id=\"throughput\">Throughput</h2>\n");
    let t = &a["throughput"];
    s.push_str(&table(
        "throughput",
        arr(&t["partitions"]),
        &[
            ("topic", "topic"),
            ("partition", "partition"),
            ("direction", "direction"),
            ("records", "records"),
            ("records/s", "records_per_s"),
            ("wire B/s", "wire_bytes_per_s"),
            ("uncompressed B/s", "uncompressed_bytes_per_s"),
            ("batches", "batches"),
        ],
    ));
    s.push_str(&table(
        "codecs",
        arr(&t["codecs"]),
        &[
            ("codec", "codec"),
            ("batches", "batches"),
            ("wire bytes", "wire_bytes"),
            ("uncompressed bytes", "uncompressed_bytes"),
            ("ratio", "ratio"),
        ],
    ));
    s.push_str(&table(
        "slowest",
        arr(&t["slowest_acks_all"]),
        &[
            ("frame", "frame"),
            ("client_id", "client_id"),
            ("records", "records"),
            ("latency ms", "latency_ms"),
        ],
    ));
    let mut tp: Vec<(String, Vec<Option<f64>>)> = Vec::new();
    for dir in ["produce", "fetch"] {
        for r in arr(&t["series"][dir]) {
            tp.push((
                format!("{} {dir}", cell(&r["topic"])),
                values(&r["records"]),
            ));
        }
    }
    s.push_str(&line_chart(
        "throughput",
        "Records per bucket per topic",
        "records",
        &tp,
    ));
    groups(s, a, start, span_ns);
}

/// The group tables and their timeline.
fn groups(s: &mut String, a: &J, start: i64, span_ns: i64) {
    s.push_str("<h2 id=\"groups\">Groups</h2>\n");
    let groups = arr(&a["groups"]);
    s.push_str(&table(
        "groups",
        groups,
        &[
            ("group", "group"),
            ("protocol", "protocol"),
            ("joins", "joins"),
            ("leaves", "leaves"),
            ("rebalance in progress", "rebalance_in_progress"),
            ("fenced", "fenced"),
            ("rebalancing ms", "rebalancing_ms"),
        ],
    ));
    let gens: Vec<J> = groups
        .iter()
        .flat_map(|g| {
            arr(&g["generations"]).iter().map(move |x| {
                let mut x = x.clone();
                x["group"] = g["group"].clone();
                x
            })
        })
        .collect();
    s.push_str(&table(
        "generations",
        &gens,
        &[
            ("group", "group"),
            ("generation", "generation"),
            ("start frame", "start_frame"),
            ("duration ms", "duration_ms"),
            ("leader", "leader"),
        ],
    ));
    s.push_str(&timeline_chart(groups, start, span_ns));
}

/// Version negotiation per client software, and the findings with their commands.
fn versions_and_findings(s: &mut String, a: &J, capture: &str) {
    s.push_str("<h2 id=\"versions\">Version negotiation</h2>\n");
    let uses: Vec<J> = arr(&a["client_versions"])
        .iter()
        .flat_map(|c| {
            arr(&c["apis"]).iter().map(move |x| {
                let mut x = x.clone();
                x["software"] =
                    J::String(format!("{} {}", cell(&c["software"]), cell(&c["version"])));
                x
            })
        })
        .collect();
    s.push_str(&table(
        "versions",
        &uses,
        &[
            ("software", "software"),
            ("API", "api_name"),
            ("used", "versions"),
            ("broker max", "broker_max"),
            ("older", "older_than_broker"),
            ("not advertised", "not_advertised"),
            ("other layout", "other_layout"),
        ],
    ));
    s.push_str("<h2 id=\"findings\">Findings</h2>\n<table data-table=\"findings\"><thead><tr><th>severity</th><th>finding</th><th>summary</th><th>frames</th></tr></thead><tbody>");
    for f in arr(&a["findings"]) {
        let cmds: Vec<String> = arr(&f["frames"])
            .iter()
            .map(|n| {
                let cmd = super::findings::show_command(&[n.as_u64().unwrap_or(0)], capture);
                format!("<code data-frame=\"{}\">{}</code>", cell(n), esc(&cmd))
            })
            .collect();
        let _ = write!(
            s,
            "<tr><td>{}</td><td data-key=\"kind\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&cell(&f["severity"])),
            esc(&cell(&f["kind"])),
            esc(&cell(&f["summary"])),
            cmds.join("<br>")
        );
    }
    s.push_str("</tbody></table>\n");
}
