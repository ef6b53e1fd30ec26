//! `--report FILE.html` opened in headless Chromium (Debian's `chromium`): the page is laid
//! out as a reader sees it at 1,400 px, and a test script run in it measures what a reader
//! would check by eye. Charts have axes with ticks (the y ticks with their unit), every
//! series has a visible mark, no legend entry overlaps another or the plot, no text leaves
//! its box, and nothing outside the file is loaded. With JavaScript off, the page holds every
//! table and chart with the numbers `--stats --json` gives.
//! Skipped, with a message, where Chromium is not installed.

use regex::Regex;
use serde_json::Value as J;
use std::path::{Path, PathBuf};
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

fn kdissect(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run kdissect")
}

/// The ports a sample's Kafka traffic is on, past the default 9092: the issue 35 cluster's
/// controller and brokers (samples/README.md).
fn ports(sample: &str) -> Vec<&'static str> {
    if sample.contains("issue35-") {
        vec!["-p", "9093", "-p", "9092", "-p", "9192", "-p", "9292"]
    } else {
        Vec::new()
    }
}

/// Writes the report of `sample` to `out` with `--report` alone, as a user would, and checks
/// what the run says: no message line on stdout, where the page went on stderr.
fn write_report(sample: &str, out: &Path) -> String {
    let path = out.to_str().expect("utf-8 path");
    let mut args = vec!["--report", path, sample];
    args.extend(ports(sample));
    let o = kdissect(&args);
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stdout.is_empty(),
        "--report alone prints no summary line: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    let html = std::fs::read_to_string(out).expect("report written");
    let said = format!(
        "kdissect: wrote report to {path} ({} KB)",
        html.len().div_ceil(1024)
    );
    assert!(err.lines().any(|l| l == said), "{said:?} not in {err}");
    html
}

/// The `--stats --json` object of a sample, with every analysis.
fn stats_json(sample: &str) -> J {
    let o = kdissect(&["--stats", "--json", "-q", "--analyses", sample]);
    let j: J = serde_json::from_slice(&o.stdout).expect("stats json");
    j["stats"].clone()
}

/// Arguments every Chromium run takes: headless, no network of its own, a fresh profile.
fn browser_args(profile: &Path) -> Vec<String> {
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--window-size=1400,1000",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--user-data-dir={}", profile.display())])
    .collect()
}

/// The DOM Chromium builds of `page`; with `script`, JavaScript runs (the page's and the
/// test's own, added to a copy of the page), otherwise it is off, as for a reader who turned
/// it off.
fn dump_dom(browser: &str, page: &Path, script: bool) -> String {
    let profile = std::env::temp_dir().join(format!(
        "kdissect-chromium-{}-{}",
        std::process::id(),
        page.file_name().and_then(|n| n.to_str()).unwrap_or("page")
    ));
    let mut args = browser_args(&profile);
    if !script {
        args.push("--disable-javascript".into());
    }
    let o = Command::new(browser)
        .args(args)
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

/// The text of the cells with `data-key=KEY` in the table `data-table=ID`, in order.
fn column(dom: &str, id: &str, key: &str) -> Vec<String> {
    let start = dom
        .find(&format!("data-table=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id}"));
    let end = start + dom[start..].find("</table>").expect("table end");
    let re = Regex::new(&format!(
        r#"<td (?:class="n" )?data-key="{}"(?: data-v="[^"]*")?>([^<]*)</td>"#,
        regex::escape(key)
    ))
    .expect("re");
    re.captures_iter(&dom[start..end])
        .map(|c| c[1].replace("&amp;", "&"))
        .collect()
}

/// A count as the page writes it: `17,787`.
fn count(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Runs in the page after its own script: measures every chart (ticks, series' marks,
/// legend entries, texts, bars, markers), every element whose text could overflow, and
/// what the page loaded; writes it as JSON into `<pre id="layout">`.
const MEASURE: &str = r#"<script>
(function(){
const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
const all = (root, sel) => [...root.querySelectorAll(sel)];
const out = {
  resources: performance.getEntriesByType('resource').map(e => e.name),
  csp: (document.querySelector('meta[http-equiv="Content-Security-Policy"]') || {}).content || null,
  width: [document.documentElement.scrollWidth, window.innerWidth],
  overflow: all(document, 'th,td,li,p,h1,h2,h3,figcaption,code,span,a')
    .filter(e => getComputedStyle(e).display !== 'inline' && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.tagName + ': ' + e.textContent.slice(0, 80)),
  charts: all(document, 'figure[data-chart]').map(f => ({
    chart: f.dataset.chart,
    gantt: f.classList.contains('gantt'),
    svg: f.querySelector('svg') ? box(f.querySelector('svg')) : null,
    axes: all(f, 'g.axis > line').length,
    xticks: all(f, 'text.xtick').map(t => ({box: box(t), text: t.textContent})),
    yticks: all(f, 'text.ytick').map(t => ({box: box(t), text: t.textContent})),
    series: all(f, 'g.series').map(g => ({
      name: g.dataset.series,
      colour: g.getAttribute('stroke'),
      marks: all(g, 'polyline,circle').filter(m => getComputedStyle(m).visibility !== 'hidden').map(box),
      values: g.dataset.values,
      lines: all(g, 'polyline').map(l => l.points.numberOfItems),
      dots: all(g, 'circle').length,
    })),
    legend: all(f, 'ul.legend > li').map(box),
    texts: all(f, 'svg text').map(t => ({box: box(t), text: t.textContent})),
    bar_labels: all(f, 'g.bar').filter(g => g.querySelector('text')).map(g => ({bar: box(g.querySelector('rect')), text: box(g.querySelector('text'))})),
    row_labels: all(f, 'text.row-label').map(box),
    bars: all(f, 'g.bar rect').map(box),
    marks: all(f, 'path.mark').map(m => ({kind: m.dataset.mark, box: box(m)})),
    band_labels: all(f, 'text.band-label').map(box),
  })),
};
// The page's script: a pointer over a line chart shows the values under it; a click on a
// header sorts its table.
out.hover = (() => {
  const svg = document.querySelector('figure.chart svg[data-step]');
  if (!svg) return null;
  const r = svg.getBoundingClientRect();
  svg.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true}));
  const tip = svg.parentNode.querySelector('.tip');
  return {hidden: tip.hidden, text: tip.textContent, series: all(svg, 'g.series').map(g => g.dataset.series)};
})();
out.sorted = (() => {
  const t = document.querySelector('table[data-table="connections"]');
  const i = [...t.querySelectorAll('thead th')].findIndex(th => th.dataset.key === 'messages');
  t.querySelectorAll('thead th')[i].click();
  return [...t.tBodies[0].rows].filter(r => !r.classList.contains('more')).map(r => parseFloat(r.cells[i].dataset.v));
})();
const pre = document.createElement('pre');
pre.id = 'layout';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
})();
</script>"#;

type Box4 = [f64; 4];

fn b4(v: &J) -> Box4 {
    let n = |i: usize| v[i].as_f64().expect("coordinate");
    [n(0), n(1), n(2), n(3)]
}

fn boxes(v: &J) -> Vec<Box4> {
    arr(v).iter().map(b4).collect()
}

/// Whether two boxes share some area (touching edges do not count).
fn overlap(a: &Box4, b: &Box4) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}

/// Whether `a` lies within `b` (half a pixel of rounding allowed).
fn inside(a: &Box4, b: &Box4) -> bool {
    a[0] >= b[0] - 0.5 && a[1] >= b[1] - 0.5 && a[2] <= b[2] + 0.5 && a[3] <= b[3] + 0.5
}

fn union(bs: &[Box4]) -> Option<Box4> {
    bs.iter().copied().reduce(|a, b| {
        [
            a[0].min(b[0]),
            a[1].min(b[1]),
            a[2].max(b[2]),
            a[3].max(b[3]),
        ]
    })
}

/// The page of `sample` as laid out by Chromium, measured by [`MEASURE`].
fn layout(browser: &str, sample: &str) -> (String, J) {
    let name = Path::new(sample)
        .file_stem()
        .and_then(|n| n.to_str())
        .unwrap_or("sample");
    let page = std::env::temp_dir().join(format!(
        "kdissect-layout-{}-{name}.html",
        std::process::id()
    ));
    let html = write_report(sample, &page);
    std::fs::write(&page, html.replace("</body>", &format!("{MEASURE}</body>")))
        .expect("page with the measuring script");
    let dom = dump_dom(browser, &page, true);
    let _ = std::fs::remove_file(&page);
    let start = dom.find("<pre id=\"layout\">").expect("layout measured") + 17;
    let end = start + dom[start..].find("</pre>").expect("end of layout");
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    (html, serde_json::from_str(&text).expect("layout json"))
}

/// Every check a reader makes by eye, on one measured page.
fn check_layout(sample: &str, html: &str, m: &J) {
    // Nothing is loaded: no resource fetched, a policy that allows none, no URL in the page.
    assert_eq!(
        arr(&m["resources"]).len(),
        0,
        "{sample}: loaded {}",
        m["resources"]
    );
    let csp = m["csp"].as_str().expect("a content security policy");
    assert!(csp.starts_with("default-src 'none'"), "{csp}");
    assert!(
        !Regex::new(r#"(?i)(src|href|action)\s*=\s*"[a-z]+:|url\("#)
            .expect("re")
            .is_match(html),
        "{sample}: a URL in the page"
    );
    // No text leaves its box, and the page is no wider than the window.
    assert_eq!(
        arr(&m["overflow"]).len(),
        0,
        "{sample}: overflow {}",
        m["overflow"]
    );
    assert!(
        m["width"][0].as_f64() <= m["width"][1].as_f64(),
        "{sample}: page wider than the window: {}",
        m["width"]
    );
    // The script works: the hover lists every series of the chart, a click sorts.
    let hover = &m["hover"];
    assert!(!hover.is_null(), "{sample}: no line chart");
    assert_eq!(
        hover["hidden"],
        J::Bool(false),
        "{sample}: no hover {hover}"
    );
    let tip = hover["text"].as_str().unwrap_or("");
    assert!(tip.contains(" s to "), "{sample}: hover {tip:?}");
    for s in arr(&hover["series"]) {
        assert!(
            tip.contains(s.as_str().unwrap_or("?")),
            "{sample}: {s} not in {tip:?}"
        );
    }
    let sorted: Vec<f64> = arr(&m["sorted"]).iter().filter_map(J::as_f64).collect();
    assert!(sorted.len() > 1, "{sample}: {sorted:?}");
    assert!(
        sorted.windows(2).all(|w| w[0] <= w[1]),
        "{sample}: not sorted {sorted:?}"
    );
    let charts = arr(&m["charts"]);
    assert!(!charts.is_empty(), "{sample}: no chart");
    for c in charts {
        let name = format!("{sample} {}", c["chart"].as_str().unwrap_or("?"));
        let Some(svg) = (!c["svg"].is_null()).then(|| b4(&c["svg"])) else {
            continue;
        };
        // Axes and ticks: a time axis of at least two labelled ticks, ticks apart.
        assert!(c["axes"].as_u64() >= Some(1), "{name}: no axis line");
        let xticks = arr(&c["xticks"]);
        assert!(xticks.len() >= 2, "{name}: {} time ticks", xticks.len());
        for t in xticks {
            let text = t["text"].as_str().unwrap_or("");
            assert!(
                text.ends_with(" s") || text.contains(':'),
                "{name}: time tick {text:?}"
            );
        }
        for ticks in [xticks, arr(&c["yticks"])] {
            for (i, a) in ticks.iter().enumerate() {
                for b in &ticks[i + 1..] {
                    assert!(
                        !overlap(&b4(&a["box"]), &b4(&b["box"])),
                        "{name}: ticks {} and {} overlap",
                        a["text"],
                        b["text"]
                    );
                }
            }
        }
        // Every text of the drawing lies inside it.
        for t in arr(&c["texts"]) {
            assert!(
                inside(&b4(&t["box"]), &svg),
                "{name}: text {} outside",
                t["text"]
            );
        }
        let legend = boxes(&c["legend"]);
        for (i, a) in legend.iter().enumerate() {
            for b in &legend[i + 1..] {
                assert!(
                    !overlap(a, b),
                    "{name}: legend entries {a:?} and {b:?} overlap"
                );
            }
            assert!(
                !overlap(a, &svg),
                "{name}: legend entry {a:?} on the drawing"
            );
        }
        if c["gantt"].as_bool() == Some(true) {
            check_gantt(&name, c);
            continue;
        }
        // A line chart: y ticks with their unit, at most 8 series in 8 colours, each with a
        // visible mark inside the drawing, one legend entry each.
        let yticks = arr(&c["yticks"]);
        assert!(yticks.len() >= 2, "{name}: {} y ticks", yticks.len());
        for t in yticks {
            let text = t["text"].as_str().unwrap_or("");
            assert!(
                text.chars().any(|ch| ch.is_alphabetic()),
                "{name}: y tick {text:?} has no unit"
            );
        }
        let series = arr(&c["series"]);
        assert!(series.len() <= 8, "{name}: {} series", series.len());
        assert_eq!(
            legend.len(),
            series.len(),
            "{name}: one legend entry a series"
        );
        let mut colours: Vec<&str> = series.iter().filter_map(|s| s["colour"].as_str()).collect();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), series.len(), "{name}: a colour repeats");
        for s in series {
            let marks = boxes(&s["marks"]);
            let u = union(&marks).unwrap_or_else(|| panic!("{name}: {} has no mark", s["name"]));
            assert!(
                u[2] - u[0] > 0.0 || u[3] - u[1] > 0.0,
                "{name}: {} has an empty mark {u:?}",
                s["name"]
            );
            assert!(inside(&u, &svg), "{name}: {} drawn outside", s["name"]);
            // Gaps are gaps: one line per run of buckets with a value, as many points as
            // the run has buckets; a run of one bucket is a dot.
            let runs = runs(s["values"].as_str().expect("data-values"));
            let lines: Vec<u64> = arr(&s["lines"]).iter().filter_map(J::as_u64).collect();
            let want: Vec<u64> = runs.iter().copied().filter(|n| *n > 1).collect();
            assert_eq!(
                lines, want,
                "{name}: {} lines against runs {runs:?}",
                s["name"]
            );
            let dots = runs.iter().filter(|n| **n == 1).count() as u64;
            assert_eq!(s["dots"].as_u64(), Some(dots), "{name}: {} dots", s["name"]);
        }
    }
}

/// The lengths of the runs of values (`null` ends one) of a `data-values` list.
fn runs(values: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let mut n = 0;
    for v in values.split(',') {
        if v == "null" {
            if n > 0 {
                out.push(n);
            }
            n = 0;
        } else {
            n += 1;
        }
    }
    if n > 0 {
        out.push(n);
    }
    out
}

/// The group chart: bars' labels inside their bars, member names clear of the bars, every
/// marker visible, generation labels apart.
fn check_gantt(name: &str, c: &J) {
    for l in arr(&c["bar_labels"]) {
        assert!(
            inside(&b4(&l["text"]), &b4(&l["bar"])),
            "{name}: bar label {} outside its bar {}",
            l["text"],
            l["bar"]
        );
    }
    // No marker covers a bar's label.
    for l in arr(&c["bar_labels"]) {
        for m in arr(&c["marks"]) {
            assert!(
                !overlap(&b4(&l["text"]), &b4(&m["box"])),
                "{name}: marker {} on the bar label {}",
                m["kind"],
                l["text"]
            );
        }
    }
    let bars = boxes(&c["bars"]);
    for l in boxes(&c["row_labels"]) {
        for b in &bars {
            assert!(!overlap(&l, b), "{name}: member name {l:?} on a bar {b:?}");
        }
    }
    for m in arr(&c["marks"]) {
        let b = b4(&m["box"]);
        assert!(b[2] > b[0] && b[3] > b[1], "{name}: empty marker {m}");
    }
    let labels = boxes(&c["band_labels"]);
    for (i, a) in labels.iter().enumerate() {
        for b in &labels[i + 1..] {
            assert!(!overlap(a, b), "{name}: generation labels overlap");
        }
    }
}

/// The samples whose pages are checked in the browser: classic and KIP-848 groups of
/// several clients joining, leaving and killed (one captured from mid-stream), a cluster's steady traffic (many
/// APIs, lag of five groups, transactions), a killed broker, rebalances of both protocols, a
/// share group, lag and slow acks.
const SAMPLES: [&str; 9] = [
    "samples/issue35-classic.pcap",
    "samples/issue35-kip848-late.pcap",
    "samples/cluster-steady.pcap",
    "samples/cluster-kill.pcap",
    "samples/ana-rebalance-classic.pcap",
    "samples/ana-rebalance-kip848.pcap",
    "samples/ana-share-group.pcap",
    "samples/ana-lag.pcap",
    "samples/ana-slow-acks.pcap",
];

#[test]
fn charts_legends_and_text_are_laid_out_as_a_reader_needs() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: chromium is not installed (Debian: apt-get install chromium)");
        return;
    };
    for sample in SAMPLES {
        let (html, m) = layout(&browser, sample);
        check_layout(sample, &html, &m);
    }
}

/// With JavaScript off, the page holds every section, table and chart, with the numbers of
/// `--stats --json`.
#[test]
fn the_page_holds_the_json_numbers_without_script() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: chromium is not installed (Debian: apt-get install chromium)");
        return;
    };
    let sample = "samples/cluster-steady.pcap";
    let page = std::env::temp_dir().join(format!("kdissect-report-{}.html", std::process::id()));
    write_report(sample, &page);
    let stats = stats_json(sample);
    let dom = dump_dom(&browser, &page, false);
    let _ = std::fs::remove_file(&page);
    // Health and errors come first, then latency, lag, end to end, throughput, groups,
    // cluster changes, versions, connections.
    let order: Vec<usize> = [
        "id=\"health\"",
        "id=\"latency\"",
        "id=\"lag\"",
        "id=\"end-to-end\"",
        "id=\"throughput\"",
        "id=\"groups\"",
        "id=\"cluster\"",
        "id=\"versions\"",
        "id=\"connections\"",
    ]
    .iter()
    .map(|s| dom.find(s).unwrap_or_else(|| panic!("section {s}")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    let requests: Vec<String> = arr(&stats["apis"])
        .iter()
        .map(|a| count(a["requests"].as_u64().expect("requests")))
        .collect();
    assert_eq!(column(&dom, "apis", "requests"), requests);
    let errors: Vec<String> = arr(&stats["errors"])
        .iter()
        .map(|e| e["name"].as_str().unwrap_or("unknown").to_string())
        .collect();
    assert_eq!(column(&dom, "errors", "name"), errors);
    assert_eq!(
        column(&dom, "health", "count")[0],
        count(stats["health"]["packets"].as_u64().expect("packets"))
    );
    let skew: Vec<String> = arr(&stats["version_skew"])
        .iter()
        .map(|v| v["node"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(column(&dom, "version-skew", "node"), skew);
    let a = &stats["analyses"];
    // Lag: every series in one of the two tables (ever behind, at 0 throughout), with its
    // largest lag; each line drawn is one series' buckets.
    let mut want: Vec<String> = arr(&a["lag"]["series"])
        .iter()
        .map(|s| count(s["max"].as_u64().expect("max")))
        .collect();
    let mut got = column(&dom, "lag", "max");
    got.extend(column(&dom, "lag-zero", "max"));
    want.sort();
    got.sort();
    assert_eq!(got, want);
    let buckets: Vec<String> = arr(&a["lag"]["series"])
        .iter()
        .map(|s| {
            arr(&s["buckets"])
                .iter()
                .map(|v| v.as_i64().map_or("null".into(), |n| n.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let drawn =
        Regex::new(r#"<g class="series" data-series="([^"]*)" data-values="([^"]*)""#).expect("re");
    let start = dom.find("data-chart=\"lag-committed\"").expect("lag chart");
    let end = start + dom[start..].find("</figure>").expect("chart end");
    let lines: Vec<_> = drawn.captures_iter(&dom[start..end]).collect();
    assert!(!lines.is_empty());
    for c in lines.iter().filter(|c| !c[1].contains("others")) {
        assert!(buckets.contains(&c[2].to_string()), "lag line {}", &c[1]);
    }
    // End to end, throughput, generations, findings, as the JSON gives them.
    let records: Vec<String> = arr(&a["end_to_end"]["latency"])
        .iter()
        .map(|r| count(r["records"].as_u64().expect("records")))
        .collect();
    assert_eq!(column(&dom, "end-to-end", "records"), records);
    let records: Vec<String> = arr(&a["throughput"]["topics"])
        .iter()
        .map(|r| count(r["records"].as_u64().expect("records")))
        .collect();
    assert_eq!(column(&dom, "throughput-topics", "records"), records);
    let gens: usize = arr(&a["groups"])
        .iter()
        .map(|g| arr(&g["generations"]).len())
        .sum();
    assert_eq!(column(&dom, "generations", "generation").len(), gens);
    let kinds: Vec<String> = arr(&a["findings"])
        .iter()
        .map(|f| f["kind"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(column(&dom, "findings", "kind"), kinds);
    // Every finding's frames, as the command that shows them.
    for f in arr(&a["findings"]) {
        for n in arr(&f["frames"]).iter().take(5) {
            let cmd = format!("kdissect -Y &#39;frame == {n}&#39; -V &#39;{sample}&#39;");
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

/// TLS connections without their keys are said at the top and in health: the page does not
/// look like a clean, empty capture.
#[test]
fn tls_not_decrypted_is_said() {
    let page = std::env::temp_dir().join(format!("kdissect-tls-{}.html", std::process::id()));
    let path = page.to_str().expect("utf-8");
    let o = kdissect(&[
        "-p",
        "9093",
        "--report",
        path,
        "samples/tls-java-nokeys.pcap",
    ]);
    assert!(o.stdout.is_empty());
    let html = std::fs::read_to_string(&page).expect("report written");
    let _ = std::fs::remove_file(&page);
    assert!(html.contains("TLS connections not decrypted</a> (89.2 kB not read: give --keylog)"));
    let row = Regex::new(
        r#"<td data-key="name">TLS connections not decrypted</td><td class="n" data-key="count" data-v="[^"]*">7</td>"#,
    )
    .expect("re");
    assert!(row.is_match(&html), "no health row");
    assert!(html.contains("No Kafka message was decoded."));
    // Not called clean; a TLS section lists the 7 connections not read, the largest first.
    assert!(
        !html.contains("<b>clean</b>"),
        "a capture not read called clean"
    );
    let tls = &html[html.find("<section id=\"tls\">").expect("a TLS section")..];
    let tls = &tls[..tls.find("</section>").expect("section end")];
    assert!(tls.contains("7 TLS connections: 0 decrypted with the key log, 7 not decrypted"));
    let bytes: Vec<f64> = Regex::new(r#"data-key="bytes" data-v="([^"]*)""#)
        .expect("re")
        .captures_iter(tls)
        .map(|c| c[1].parse().expect("bytes"))
        .collect();
    assert_eq!(bytes.len(), 7, "{tls}");
    assert!(bytes.windows(2).all(|w| w[0] >= w[1]), "{bytes:?}");
    assert_eq!(bytes.iter().sum::<f64>(), 89_226.0);
}

/// `--report` beside a view prints that view as before: the page is written too.
#[test]
fn a_view_asked_for_beside_the_report_is_printed() {
    let page = std::env::temp_dir().join(format!("kdissect-beside-{}.html", std::process::id()));
    let path = page.to_str().expect("utf-8");
    let o = kdissect(&["--report", path, "--stats", "-q", "samples/ak44-admin.pcap"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Kafka APIs"), "{out}");
    let o = kdissect(&["--report", path, "samples/ak44-admin.pcap", "-c", "1"]);
    assert!(o.stdout.is_empty());
    let o = kdissect(&["--report", path, "-V", "-c", "1", "samples/ak44-admin.pcap"]);
    assert!(!o.stdout.is_empty(), "-V beside --report prints its tree");
    let _ = std::fs::remove_file(&page);
}
