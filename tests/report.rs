//! `--report FILE.html` opened in headless Chromium (Debian's `chromium`, driven with
//! `--dump-dom`): the page the browser builds holds every chart and table, with the numbers
//! `--stats --json` gives for the same capture, and nothing the page would fetch or run.
//! Skipped, with a message, where Chromium is not installed.

use regex::Regex;
use serde_json::Value as J;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn chromium() -> Option<String> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(|c| c.to_string())
}

/// The report and the `--stats --json` object of one run.
fn report(sample: &str, out: &std::path::Path) -> J {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--stats", "--json", "-q", "--report"])
        .arg(out)
        .arg(sample)
        .current_dir(root())
        .output()
        .expect("run kdissect");
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: J = serde_json::from_slice(&o.stdout).expect("stats json");
    j["stats"].clone()
}

/// The DOM Chromium builds of `page`; with `script`, JavaScript runs (the test's own, added to
/// a copy of the page), otherwise it is off as for a reader who turned it off.
fn dump_dom(browser: &str, page: &std::path::Path, script: bool) -> String {
    let profile =
        std::env::temp_dir().join(format!("kdissect-chromium-{}-{script}", std::process::id()));
    let mut args = vec!["--headless", "--no-sandbox", "--disable-gpu"];
    if !script {
        args.push("--disable-javascript");
    }
    let o = Command::new(browser)
        .args(args)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("utf8 DOM")
}

fn arr(v: &J) -> &[J] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// A JSON array of bucket values as the page writes them.
fn data_values(v: &J) -> String {
    arr(v)
        .iter()
        .map(|x| x.as_f64().map_or("null".into(), |f| f.to_string()))
        .collect::<Vec<_>>()
        .join(",")
}

/// The text of the cells with `data-key=KEY` in the table `data-table=ID`, in order.
fn column(dom: &str, id: &str, key: &str) -> Vec<String> {
    let start = dom
        .find(&format!("data-table=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id}"));
    let end = start + dom[start..].find("</table>").expect("table end");
    let re = Regex::new(&format!(
        r#"<td data-key="{}">([^<]*)</td>"#,
        regex::escape(key)
    ))
    .expect("re");
    re.captures_iter(&dom[start..end])
        .map(|c| c[1].to_string())
        .collect()
}

#[test]
fn the_report_renders_every_chart_and_table_with_the_json_numbers() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: chromium is not installed (Debian: apt-get install chromium)");
        return;
    };
    let sample = "samples/cluster-steady.pcap";
    let page = std::env::temp_dir().join(format!("kdissect-report-{}.html", std::process::id()));
    let stats = report(sample, &page);
    let html = std::fs::read_to_string(&page).expect("report written");
    assert!(!html.contains("<script"), "the page runs no script");
    assert!(
        !Regex::new(r#"(src|href)="(https?:)?//"#)
            .expect("re")
            .is_match(&html),
        "no external asset"
    );
    let dom = dump_dom(&browser, &page, false);
    let _ = std::fs::remove_file(&page);
    let a = &stats["analyses"];
    for chart in ["api-latency", "lag", "throughput", "group-timeline"] {
        assert!(
            dom.contains(&format!("<figure data-chart=\"{chart}\">")),
            "chart {chart}"
        );
    }
    assert!(dom.matches("<svg").count() >= 4, "every chart is an SVG");
    for table in [
        "apis",
        "lag",
        "end-to-end",
        "unconsumed",
        "throughput",
        "codecs",
        "slowest",
        "groups",
        "generations",
        "versions",
        "findings",
    ] {
        assert!(
            dom.contains(&format!("data-table=\"{table}\"")),
            "table {table}"
        );
    }
    // Lag: a table row and a chart line per series, with the JSON's figures and buckets.
    let series = arr(&a["lag"]["series"]);
    assert!(!series.is_empty());
    let max: Vec<String> = series.iter().map(|s| s["max"].to_string()).collect();
    assert_eq!(column(&dom, "lag", "max"), max);
    let median: Vec<String> = series.iter().map(|s| s["median"].to_string()).collect();
    assert_eq!(column(&dom, "lag", "median"), median);
    for s in series {
        let values = format!("data-values=\"{}\"", data_values(&s["buckets"]));
        assert!(dom.contains(&values), "lag line {s}");
    }
    // End-to-end percentiles, throughput, generations, as JSON gives them.
    let p99: Vec<String> = arr(&a["end_to_end"]["latency"])
        .iter()
        .map(|r| r["latency_ms"]["p99"].to_string())
        .collect();
    assert_eq!(column(&dom, "end-to-end", "latency_ms.p99"), p99);
    let records: Vec<String> = arr(&a["throughput"]["partitions"])
        .iter()
        .map(|r| r["records"].to_string())
        .collect();
    assert_eq!(column(&dom, "throughput", "records"), records);
    for r in arr(&a["throughput"]["series"]["produce"]) {
        assert!(dom.contains(&format!("data-values=\"{}\"", data_values(&r["records"]))));
    }
    let gens: usize = arr(&a["groups"])
        .iter()
        .map(|g| arr(&g["generations"]).len())
        .sum();
    assert_eq!(column(&dom, "generations", "generation").len(), gens);
    assert_eq!(dom.matches("<rect data-generation=").count(), gens);
    for r in arr(&a["api_latency"]) {
        assert!(dom.contains(&format!("data-values=\"{}\"", data_values(&r["max_ms"]))));
    }
    // Every finding's frames, as the command that shows them (the capture's path quoted
    // for the shell).
    for f in arr(&a["findings"]) {
        for n in arr(&f["frames"]) {
            let cmd = format!("kdissect -Y 'frame == {n}' -V '{sample}'").replace('\'', "&#39;");
            assert!(
                dom.contains(&cmd) || dom.contains(&cmd.replace("&#39;", "'")),
                "finding frame {n}"
            );
        }
    }
}

/// A report that cannot be written is refused before the capture is read: exit status 2, the
/// path named, and no message printed.
#[test]
fn an_unwritable_report_is_refused_before_reading() {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .arg("--report")
        .arg("/nonexistent-dir/report.html")
        .arg(root().join("samples/ak44-admin.pcap"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent-dir/report.html"), "{err}");
}

/// Measures, in the browser, the boxes of every chart's legend texts, the plot they label (the
/// lines' union), the chart, and the timeline's group names and bars; writes them as JSON
/// into `<pre id="layout">`.
const MEASURE: &str = r#"<script>
const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const union = bs => bs.length ? [Math.min(...bs.map(b => b[0])), Math.min(...bs.map(b => b[1])),
  Math.max(...bs.map(b => b[2])), Math.max(...bs.map(b => b[3]))] : null;
const out = [...document.querySelectorAll('figure[data-chart]')].map(f => ({
  chart: f.dataset.chart,
  svg: box(f.querySelector('svg')),
  legends: [...f.querySelectorAll('[data-legend] text')].map(box),
  plot: union([...f.querySelectorAll('polyline')].map(box)),
  labels: [...f.querySelectorAll('svg > text')].map(box),
  bars: [...f.querySelectorAll('rect[data-generation]')].map(box),
}));
const pre = document.createElement('pre');
pre.id = 'layout';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"#;

fn boxes(v: &J) -> Vec<[f64; 4]> {
    arr(v)
        .iter()
        .map(|b| {
            let n = |i: usize| b[i].as_f64().expect("coordinate");
            [n(0), n(1), n(2), n(3)]
        })
        .collect()
}

/// Whether two boxes share some area (touching edges do not count).
fn overlap(a: &[f64; 4], b: &[f64; 4]) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

/// The charts' legends are laid out apart: in the browser, no two legend texts of a chart
/// overlap, none covers the plotted lines or leaves the chart, and the timeline's group names
/// do not run into its bars.
#[test]
fn legends_and_labels_do_not_overlap() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: chromium is not installed (Debian: apt-get install chromium)");
        return;
    };
    for sample in [
        "samples/cluster-steady.pcap",
        "samples/ana-rebalance-classic.pcap",
        "samples/ana-share-group.pcap",
    ] {
        let page =
            std::env::temp_dir().join(format!("kdissect-layout-{}.html", std::process::id()));
        report(sample, &page);
        let html = std::fs::read_to_string(&page).expect("report written");
        std::fs::write(&page, html.replace("</body>", &format!("{MEASURE}</body>")))
            .expect("page with the measuring script");
        let dom = dump_dom(&browser, &page, true);
        let _ = std::fs::remove_file(&page);
        let start = dom.find("<pre id=\"layout\">").expect("layout measured") + 17;
        let end = start + dom[start..].find("</pre>").expect("end of layout");
        let text = dom[start..end]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        let charts: J = serde_json::from_str(&text).expect("layout json");
        let mut legends = 0;
        for c in arr(&charts) {
            let name = c["chart"].as_str().unwrap_or("");
            let svg = boxes(&J::Array(vec![c["svg"].clone()]))[0];
            let texts = boxes(&c["legends"]);
            legends += texts.len();
            for (i, a) in texts.iter().enumerate() {
                for b in &texts[i + 1..] {
                    assert!(!overlap(a, b), "{sample} {name}: legends {a:?} and {b:?}");
                }
                if !c["plot"].is_null() {
                    let plot = boxes(&J::Array(vec![c["plot"].clone()]))[0];
                    assert!(
                        !overlap(a, &plot),
                        "{sample} {name}: legend {a:?} on the plot {plot:?}"
                    );
                }
                assert!(
                    a[0] >= svg[0] && a[2] <= svg[2] && a[1] >= svg[1] && a[3] <= svg[3],
                    "{sample} {name}: legend {a:?} outside the chart {svg:?}"
                );
            }
            for l in boxes(&c["labels"])
                .iter()
                .filter(|_| name == "group-timeline")
            {
                for b in boxes(&c["bars"]) {
                    assert!(!overlap(l, &b), "{sample}: group name {l:?} on a bar {b:?}");
                }
            }
        }
        assert!(legends > 3, "{sample}: {legends} legends measured");
    }
}
