//! The page's charts, as inline SVG written through maud: line charts of bucketed series on
//! a time axis, and the group Gantt. No chart library does this without a script or an
//! external asset, and the page must read the same with scripts off, so the drawing is here:
//! axes with ticks, gaps left as gaps, one-sample runs drawn as dots, at most
//! [`MAX_SERIES`] series a chart in colours that differ, and a legend that is HTML under the
//! plot (laid out by the browser: it never overlaps itself or the plot).
//!
//! Each chart carries its numbers for the reader and the tests: a series' `data-values` (one
//! value per bucket, `null` where empty) and the time grid on the `svg` (`data-start`,
//! `data-step`, in seconds from the capture's first message).

use super::units;
use maud::{html, Markup};

/// Width and height of a line chart's drawing, in CSS pixels: the page's width less its
/// margins (the page is about 1,400 px wide).
pub const WIDTH: f64 = 1320.0;
const HEIGHT: f64 = 280.0;

/// Series drawn in one chart at most; past it, the largest `MAX_SERIES - 1` and one series
/// of the others ([`top_and_others`]).
pub const MAX_SERIES: usize = 8;

/// Points a series is drawn with at most (more than the plot has pixels would be lost):
/// past it, neighbouring buckets are merged.
pub const MAX_POINTS: usize = 600;

/// A qualitative palette of 8 colours that differ in hue and lightness on white (Tableau's,
/// the grey last: "others" always takes it).
pub const PALETTE: [&str; MAX_SERIES] = [
    "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#17becf", "#9c755f", "#7f7f7f",
];

/// Font size of the charts' text.
const FONT: f64 = 11.0;

/// The width `s` takes at [`FONT`], over-estimated: SVG text does not wrap, so space is
/// made for it before the browser lays it out. Widths are DejaVu Sans' (the widest common
/// sans-serif) rounded up, per kind of character.
fn text_width(s: &str) -> f64 {
    let em: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.34,
            ' ' | 'f' | 'r' | 't' | '(' | ')' | '[' | ']' | '-' | '/' => 0.45,
            'm' | 'w' | 'M' | 'W' | '@' | '%' | '…' => 1.0,
            c if c.is_ascii_uppercase() => 0.80,
            c if c.is_ascii_digit() => 0.64,
            c if c.is_ascii_lowercase() => 0.64,
            _ => 1.0,
        })
        .sum();
    em * FONT
}

/// What a series' values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A duration in milliseconds.
    Millis,
    /// A number of records.
    Records,
    /// Records per second.
    RecordsPerSecond,
    /// Bytes per second.
    BytesPerSecond,
}

impl Unit {
    /// A value as the legend and the hover show it.
    pub fn value(self, v: f64) -> String {
        match self {
            Unit::Millis => units::duration_ms(v),
            Unit::Records if v == 1.0 => "1 record".into(),
            Unit::Records => units::si(v, "records"),
            Unit::RecordsPerSecond => units::per_second(v, "records"),
            Unit::BytesPerSecond => units::si(v, "B/s"),
        }
    }

    /// A tick's label: short, with its unit.
    fn tick(self, v: f64) -> String {
        match self {
            Unit::Millis => units::duration_ms(v),
            Unit::Records => units::si(v, "rec"),
            Unit::RecordsPerSecond => units::si(v, "rec/s"),
            Unit::BytesPerSecond => units::si(v, "B/s"),
        }
    }

    /// The unit's name for the page's script (`data-unit`).
    fn key(self) -> &'static str {
        match self {
            Unit::Millis => "ms",
            Unit::Records => "records",
            Unit::RecordsPerSecond => "records/s",
            Unit::BytesPerSecond => "B/s",
        }
    }

    /// Whether values are whole (ticks then step by 1 at least).
    fn whole(self) -> bool {
        self == Unit::Records
    }
}

/// How the y axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Logarithmic, for latencies: a 500 ms long poll beside 2 ms answers.
    Log,
}

/// How buckets (or series) merge into one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// The largest (lag, latency).
    Max,
    /// The mean (rates).
    Mean,
}

/// Equal time buckets: bucket `i` spans `start + i*step .. start + (i+1)*step` seconds from
/// the capture's first message, and its point is drawn at its middle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Buckets {
    /// Wall-clock time of time 0, in ns since 1970 (the axis names it).
    pub origin_ns: i64,
    pub step: f64,
    pub count: usize,
}

impl Buckets {
    fn mid(&self, i: usize) -> f64 {
        (i as f64 + 0.5) * self.step
    }

    fn end(&self) -> f64 {
        self.count as f64 * self.step
    }
}

/// One line: a value per bucket, `None` where the bucket has none.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
    /// The merge of the series past the first ones: drawn grey and dashed.
    pub others: bool,
}

/// Characters of a series' name at most (names are made of identifiers from the wire).
const MAX_NAME: usize = 120;

impl Series {
    pub fn new(name: impl Into<String>, values: Vec<Option<f64>>) -> Series {
        Series {
            name: super::page::clip(&name.into(), MAX_NAME),
            values,
            others: false,
        }
    }

    fn peak(&self) -> Option<f64> {
        self.values.iter().flatten().copied().reduce(f64::max)
    }

    fn total(&self) -> f64 {
        self.values.iter().flatten().sum()
    }
}

/// A line chart.
#[derive(Debug, Clone)]
pub struct LineChart {
    pub id: String,
    pub title: String,
    pub unit: Unit,
    pub scale: Scale,
    pub merge: Merge,
    pub buckets: Buckets,
    pub series: Vec<Series>,
    /// What was merged or left out, said under the chart.
    pub note: Option<String>,
}

/// How series are ranked for the [`MAX_SERIES`] kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rank {
    /// By their largest value.
    Peak,
    /// By the sum of their values.
    Total,
    /// In the order given (the caller ranked them).
    Given,
}

/// The series to draw: all when they are at most [`MAX_SERIES`], else the first
/// `MAX_SERIES - 1` by `rank` (ties: the order given) and one series merging the others
/// bucket by bucket, named for how many it holds. Series without a value are left out (they
/// have nothing to draw); the note says so.
pub fn top_and_others(
    series: Vec<Series>,
    rank: Rank,
    merge: Merge,
) -> (Vec<Series>, Option<String>) {
    let total = series.len();
    let mut kept: Vec<Series> = series.into_iter().filter(|s| s.peak().is_some()).collect();
    let empty = total - kept.len();
    let mut note = Vec::new();
    if empty > 0 {
        note.push(format!(
            "{} without a sample in any bucket not drawn",
            plural(empty, "series", "series")
        ));
    }
    if kept.len() <= MAX_SERIES {
        return (kept, (!note.is_empty()).then(|| note.join("; ")));
    }
    let key = |s: &Series| match rank {
        Rank::Peak => s.peak().unwrap_or(0.0),
        Rank::Total => s.total(),
        Rank::Given => 0.0,
    };
    // A stable sort keeps the caller's order among equals.
    kept.sort_by(|a, b| key(b).total_cmp(&key(a)));
    let rest = kept.split_off(MAX_SERIES - 1);
    let n = rest.len();
    let len = rest.iter().map(|s| s.values.len()).max().unwrap_or(0);
    let values = (0..len)
        .map(|i| {
            merge_values(
                rest.iter()
                    .filter_map(|s| s.values.get(i).copied().flatten()),
                merge,
            )
        })
        .collect();
    let how = match merge {
        Merge::Max => "largest",
        Merge::Mean => "mean",
    };
    kept.push(Series {
        name: format!("{n} others ({how})"),
        values,
        others: true,
    });
    note.push(format!(
        "{} series: the {} with the {} shown, the other {n} merged ({how} per bucket)",
        total - empty,
        MAX_SERIES - 1,
        match rank {
            Rank::Peak => "largest peaks",
            Rank::Total => "largest totals",
            Rank::Given => "most requests",
        }
    ));
    (kept, Some(note.join("; ")))
}

fn merge_values(v: impl Iterator<Item = f64>, merge: Merge) -> Option<f64> {
    let mut n = 0usize;
    let mut acc: Option<f64> = None;
    for x in v {
        n += 1;
        acc = Some(match (acc, merge) {
            (None, _) => x,
            (Some(a), Merge::Max) => a.max(x),
            (Some(a), Merge::Mean) => a + x,
        });
    }
    match merge {
        Merge::Max => acc,
        Merge::Mean => acc.map(|a| a / n as f64),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The chart with at most [`MAX_POINTS`] buckets: `k` neighbours merged into one.
fn resampled(c: &LineChart) -> (Buckets, Vec<Vec<Option<f64>>>) {
    let k = c.buckets.count.div_ceil(MAX_POINTS).max(1);
    let values = c
        .series
        .iter()
        .map(|s| {
            s.values
                .chunks(k)
                .map(|ch| merge_values(ch.iter().flatten().copied(), c.merge))
                .collect()
        })
        .collect();
    let b = Buckets {
        step: c.buckets.step * k as f64,
        count: c.buckets.count.div_ceil(k),
        ..c.buckets
    };
    (b, values)
}

/// A "nice" step (1, 2, 2.5 or 5 times a power of ten) of at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw * 0.999_999)
        .unwrap_or(10.0 * p)
}

/// The y axis: its ticks (values), and where a value sits between 0 (bottom) and 1 (top).
struct YAxis {
    ticks: Vec<f64>,
    scale: Scale,
    lo: f64,
    hi: f64,
}

impl YAxis {
    fn new(values: impl Iterator<Item = f64> + Clone, scale: Scale, whole: bool) -> YAxis {
        let max = values.clone().fold(0.0f64, f64::max);
        match scale {
            Scale::Log => {
                let min = values
                    .filter(|v| *v > 0.0)
                    .fold(f64::INFINITY, f64::min)
                    .min(max);
                let (min, max) = if max > 0.0 { (min, max) } else { (1.0, 1.0) };
                // Whole exponents: 10^-1 is 0.1 where 0.1 * 10 * 10 is not 10.
                let lo_exp = min.log10().floor() as i32;
                let hi_exp = (max.log10().ceil() as i32).max(lo_exp + 1);
                let (lo, hi) = (10f64.powi(lo_exp), 10f64.powi(hi_exp));
                let decades = hi_exp - lo_exp;
                let mut ticks = Vec::new();
                for e in lo_exp..=hi_exp {
                    let base = 10f64.powi(e);
                    ticks.push(base);
                    if decades <= 2 && e < hi_exp {
                        ticks.extend([2.0 * base, 5.0 * base]);
                    }
                }
                YAxis {
                    ticks,
                    scale,
                    lo,
                    hi,
                }
            }
            Scale::Linear => {
                let mut step = nice_step(max / 4.0);
                if whole {
                    step = step.max(1.0).round();
                }
                let mut top = ((max / step).ceil() * step).max(step);
                // A peak on the top line would be drawn on the frame, half of its dot cut:
                // one more step above it.
                if max > 0.0 && top - max < step * 0.05 {
                    top += step;
                }
                let n = (top / step).round() as usize;
                YAxis {
                    ticks: (0..=n).map(|i| i as f64 * step).collect(),
                    scale,
                    lo: 0.0,
                    hi: top,
                }
            }
        }
    }

    fn frac(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => (v / self.hi).clamp(0.0, 1.0),
            Scale::Log => {
                let v = v.max(self.lo);
                ((v / self.lo).log10() / (self.hi / self.lo).log10()).clamp(0.0, 1.0)
            }
        }
    }
}

/// Steps of the time axis, in seconds.
const TIME_STEPS: [f64; 22] = [
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0,
    120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0,
];

/// Ticks of a time axis over `from..to` seconds: at most `most` of them, on a round step.
pub fn time_ticks(from: f64, to: f64, most: usize) -> Vec<f64> {
    let len = (to - from).max(0.001);
    let step = TIME_STEPS
        .iter()
        .copied()
        .find(|s| len / s <= most as f64)
        .unwrap_or_else(|| (len / most as f64 / 3600.0).ceil() * 3600.0);
    let first = (from / step).ceil() as i64;
    let last = (to / step + 1e-9).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// A time of the axis: `12 s`, `0.5 s`, `1:30`, `1:02:00`, by the span it is part of.
pub fn time_label(t: f64, span: f64) -> String {
    if span < 60.0 {
        let s = format!("{t:.3}");
        format!("{} s", s.trim_end_matches('0').trim_end_matches('.'))
    } else {
        let whole = t.round() as i64;
        if span < 3600.0 {
            format!("{}:{:02}", whole / 60, whole % 60)
        } else {
            format!("{}:{:02}:{:02}", whole / 3600, whole / 60 % 60, whole % 60)
        }
    }
}

/// The x axis' title: which clock it is.
fn time_title(origin_ns: i64, span: f64) -> String {
    let form = if span < 60.0 {
        "seconds"
    } else if span < 3600.0 {
        "min:s"
    } else {
        "h:min:s"
    };
    format!(
        "time since the first message ({form}); it was at {}",
        units::wall_datetime(origin_ns)
    )
}

/// One decimal, for coordinates.
fn px(v: f64) -> String {
    format!("{v:.1}")
}

/// The plot's box inside the drawing.
struct Plot {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    /// The times at the plot's left and right edges, in seconds from the first message.
    from: f64,
    span: f64,
}

impl Plot {
    fn x(&self, t: f64) -> f64 {
        let len = (self.span - self.from).max(1e-3);
        self.left + (self.right - self.left) * ((t - self.from) / len).clamp(0.0, 1.0)
    }
}

/// The x axis: ticks, their labels and grid lines, and the clock's title under them (left
/// to the caption of a grid of small charts).
fn x_axis(p: &Plot, origin_ns: i64) -> Markup {
    x_axis_titled(p, Some(origin_ns))
}

fn x_axis_titled(p: &Plot, origin_ns: Option<i64>) -> Markup {
    let gap = if p.right - p.left < 500.0 { 60.0 } else { 90.0 };
    let most = ((p.right - p.left) / gap).floor().max(2.0) as usize;
    let ticks = time_ticks(p.from, p.span, most);
    html! {
        g class="axis x" {
            line x1=(px(p.left)) y1=(px(p.bottom)) x2=(px(p.right)) y2=(px(p.bottom)) stroke="#555" {}
            @for t in &ticks {
                line x1=(px(p.x(*t))) y1=(px(p.top)) x2=(px(p.x(*t))) y2=(px(p.bottom)) stroke="#eee" {}
                line x1=(px(p.x(*t))) y1=(px(p.bottom)) x2=(px(p.x(*t))) y2=(px(p.bottom + 4.0)) stroke="#555" {}
                text class="tick xtick" x=(px(p.x(*t))) y=(px(p.bottom + 16.0)) text-anchor="middle" font-size=(FONT) { (time_label(*t, p.span)) }
            }
            @if let Some(origin_ns) = origin_ns {
                text class="axis-title" x=(px(p.right)) y=(px(p.bottom + 32.0)) text-anchor="end" font-size=(FONT) fill="#555" { (time_title(origin_ns, p.span)) }
            }
        }
    }
}

/// The y axis: ticks with their unit, and grid lines.
fn y_axis(p: &Plot, y: &YAxis, unit: Unit) -> Markup {
    let at = |v: f64| p.bottom - (p.bottom - p.top) * y.frac(v);
    html! {
        g class="axis y" {
            line x1=(px(p.left)) y1=(px(p.top)) x2=(px(p.left)) y2=(px(p.bottom)) stroke="#555" {}
            @for v in &y.ticks {
                line x1=(px(p.left)) y1=(px(at(*v))) x2=(px(p.right)) y2=(px(at(*v))) stroke="#eee" {}
                line x1=(px(p.left - 4.0)) y1=(px(at(*v))) x2=(px(p.left)) y2=(px(at(*v))) stroke="#555" {}
                text class="tick ytick" x=(px(p.left - 7.0)) y=(px(at(*v) + 4.0)) text-anchor="end" font-size=(FONT) { (unit.tick(*v)) }
            }
        }
    }
}

/// Runs of consecutive values: (first bucket, values).
fn runs(values: &[Option<f64>]) -> Vec<(usize, Vec<f64>)> {
    let mut out: Vec<(usize, Vec<f64>)> = Vec::new();
    let mut open = false;
    for (i, v) in values.iter().enumerate() {
        match (v, open) {
            (Some(v), true) => {
                if let Some(last) = out.last_mut() {
                    last.1.push(*v);
                }
            }
            (Some(v), false) => {
                out.push((i, vec![*v]));
                open = true;
            }
            (None, _) => open = false,
        }
    }
    out
}

/// A value list for `data-values`: `1,null,2.5`.
fn data_values(values: &[Option<f64>]) -> String {
    values
        .iter()
        .map(|v| v.map_or_else(|| "null".to_string(), |v| v.to_string()))
        .collect::<Vec<_>>()
        .join(",")
}

/// A drawing's size, and whether its x axis is titled (a small chart's grid says it once).
struct Size {
    width: f64,
    height: f64,
    titled: bool,
}

const FULL: Size = Size {
    width: WIDTH,
    height: HEIGHT,
    titled: true,
};

/// A small chart of a grid of 4 a row.
const SMALL: Size = Size {
    width: 320.0,
    height: 150.0,
    titled: false,
};

/// The line chart, its legend under it and its note.
pub fn line_chart(c: &LineChart) -> Markup {
    draw(c, &FULL)
}

/// Small multiples: one small chart per series, 4 a row, each on its own y scale, under one
/// caption that names the time axis.
pub fn small_multiples(id: &str, title: &str, charts: &[LineChart]) -> Markup {
    let origin = charts.first().map(|c| c.buckets.origin_ns);
    let span = charts.first().map_or(0.0, |c| c.buckets.end());
    html! {
        div class="multiples-block" data-multiples=(id) {
            h3 { (title) }
            @if let Some(o) = origin {
                p class="note" { (time_title(o, span)) }
            }
            div class="multiples" {
                @for c in charts { (draw(c, &SMALL)) }
            }
        }
    }
}

/// A line chart's legend: a swatch, the series' name, its largest value.
fn legend(c: &LineChart) -> Markup {
    html! {
        ul class="legend" {
            @for (k, s) in c.series.iter().enumerate() {
                @let colour = if s.others { PALETTE[MAX_SERIES - 1] } else { PALETTE[k % MAX_SERIES] };
                li data-legend=(s.name) {
                    span class=(if s.others { "sw dashed" } else { "sw" }) style={"border-color:" (colour)} {}
                    span class="name" { (s.name) }
                    @if let Some(peak) = s.peak() {
                        span class="peak" { "max " (c.unit.value(peak)) }
                    }
                }
            }
        }
    }
}

/// The chart's note, with how many buckets were merged into one point when they were.
fn merged_note(c: &LineChart, b: &Buckets) -> Option<String> {
    match (&c.note, b.count < c.buckets.count) {
        (Some(n), true) => Some(format!(
            "{n}; buckets merged {} to one point ({} wide)",
            c.buckets.count.div_ceil(b.count),
            units::duration_ms(b.step * 1000.0)
        )),
        (None, true) => Some(format!(
            "buckets merged {} to one point ({} wide)",
            c.buckets.count.div_ceil(b.count),
            units::duration_ms(b.step * 1000.0)
        )),
        (n, false) => n.clone(),
    }
}

fn draw(c: &LineChart, size: &Size) -> Markup {
    let (b, values) = resampled(c);
    let y = YAxis::new(
        values.iter().flatten().flatten().copied(),
        c.scale,
        c.unit.whole(),
    );
    let label_w = y
        .ticks
        .iter()
        .map(|v| text_width(&c.unit.tick(*v)))
        .fold(0.0, f64::max);
    let p = Plot {
        left: (label_w + 14.0).max(48.0),
        right: size.width - 12.0,
        top: 10.0,
        bottom: size.height - if size.titled { 40.0 } else { 24.0 },
        from: 0.0,
        span: b.end().max(1e-3),
    };
    let at = |v: f64| p.bottom - (p.bottom - p.top) * y.frac(v);
    let note = merged_note(c, &b);
    html! {
        figure class="chart" data-chart=(c.id) {
            figcaption { (c.title) }
            @if c.series.is_empty() {
                p class="empty" { "No samples." }
            } @else {
                svg xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (size.width) " " (size.height)} width=(size.width) height=(size.height)
                    role="img" aria-label=(c.title) data-unit=(c.unit.key())
                    data-step=(b.step) data-count=(b.count) data-left=(px(p.left)) data-right=(px(p.right)) {
                    (y_axis(&p, &y, c.unit))
                    (x_axis_titled(&p, size.titled.then_some(b.origin_ns)))
                    @for (k, (s, vals)) in c.series.iter().zip(&values).enumerate() {
                        @let colour = if s.others { PALETTE[MAX_SERIES - 1] } else { PALETTE[k % MAX_SERIES] };
                        g class="series" data-series=(s.name) data-values=(data_values(vals))
                            stroke=(colour) fill=(colour) stroke-dasharray=[s.others.then_some("6 3")] {
                            title { (s.name) }
                            @for (first, run) in runs(vals) {
                                @if run.len() == 1 {
                                    circle cx=(px(p.x(b.mid(first)))) cy=(px(at(run[0]))) r="3.5" stroke="none" {}
                                } @else {
                                    polyline fill="none" stroke-width="2" stroke-linejoin="round" points=(
                                        run.iter().enumerate()
                                            .map(|(i, v)| format!("{},{}", px(p.x(b.mid(first + i))), px(at(*v))))
                                            .collect::<Vec<_>>().join(" ")
                                    ) {}
                                }
                            }
                        }
                    }
                    line class="hover" x1="0" y1=(px(p.top)) x2="0" y2=(px(p.bottom)) stroke="#333" stroke-width="1" visibility="hidden" {}
                }
                (legend(c))
                div class="tip" hidden {}
            }
            @if let Some(n) = note {
                p class="note" { (n) }
            }
        }
    }
}

/// What happened to a member at a time, drawn as a marker on its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    Joined,
    Left,
    Fenced,
    Other,
}

impl MarkKind {
    /// The marker's shape around (0, 0), about 10 px, and its colour.
    fn shape(self) -> (&'static str, &'static str) {
        match self {
            MarkKind::Joined => ("M0,-6 L6,5 L-6,5 Z", "#2e7d32"),
            MarkKind::Left => ("M-5,-5 L5,5 M5,-5 L-5,5", "#c62828"),
            MarkKind::Fenced => ("M0,-6 L6,0 L0,6 L-6,0 Z", "#ef6c00"),
            MarkKind::Other => ("M-3,-3 L3,-3 L3,3 L-3,3 Z", "#555"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MarkKind::Joined => "joined",
            MarkKind::Left => "left",
            MarkKind::Fenced => "fenced",
            MarkKind::Other => "other event",
        }
    }
}

/// A marker on a member's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Seconds from the capture's first message.
    pub t: f64,
    pub kind: MarkKind,
    /// The hover text: what, when, which frame.
    pub title: String,
}

/// A member's time in one generation.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub start: f64,
    pub end: f64,
    /// Written inside the bar where it fits (its assignment).
    pub label: String,
    pub title: String,
}

/// One member's row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub label: String,
    /// The hover text (the whole member id).
    pub title: String,
    pub bars: Vec<Bar>,
    pub marks: Vec<Mark>,
}

/// A generation: its rebalance from `start` until `settled` (the answers that gave its
/// assignment), then in force until `end`.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub label: String,
    pub start: f64,
    pub settled: Option<f64>,
    pub end: f64,
    pub title: String,
}

/// A group's Gantt: one row per member, its bars per generation, its markers.
#[derive(Debug, Clone)]
pub struct Gantt {
    pub id: String,
    pub title: String,
    pub origin_ns: i64,
    /// Seconds from the first message the axis spans: `from` (the first generation drawn,
    /// or 0) to `span` (the capture's end).
    pub from: f64,
    pub span: f64,
    pub bands: Vec<Band>,
    pub rows: Vec<Row>,
    pub note: Option<String>,
}

const ROW_H: f64 = 22.0;
const BAR_H: f64 = 14.0;
/// Height of the band labels' line above the rows.
const BAND_HEAD: f64 = 18.0;

/// Where a bar's label starts, from the bar's left edge at `x0`: after every marker that
/// would cover its letters (a join at the bar's start, a join or leave within it), so that a
/// marker and a label never share pixels. Markers are about 12 px wide.
fn label_inset(label: &str, x0: f64, marks: impl Iterator<Item = f64> + Clone) -> f64 {
    let width = text_width(label);
    let mut inset = 4.0;
    // Each pass moves the label past the markers it still covers; a marker passed is not
    // met again, so this ends after as many passes as there are markers at most.
    loop {
        let (from, to) = (x0 + inset - 7.0, x0 + inset + width + 7.0);
        let past = marks
            .clone()
            .filter(|x| (from..to).contains(x))
            .fold(inset, |a: f64, x| a.max(x - x0 + 9.0));
        if past <= inset {
            return inset;
        }
        inset = past;
    }
}

/// The Gantt's legend: what bars, shades and markers mean.
fn gantt_legend() -> Markup {
    html! {
        ul class="legend" {
            li { span class="sw box" style="background:#9ecae1;border-color:#3182bd" {} span class="name" { "member in a generation (its assignment inside where it fits)" } }
            li { span class="sw box" style="background:#fde0c5;border-color:#fde0c5" {} span class="name" { "rebalancing (join to assignment)" } }
            @for k in [MarkKind::Joined, MarkKind::Left, MarkKind::Fenced] {
                @let (path, colour) = k.shape();
                li {
                    svg class="glyph" width="14" height="14" viewBox="-7 -7 14 14" {
                        path d=(path) stroke=(colour) stroke-width="2" fill=(colour) {}
                    }
                    span class="name" { (k.name()) }
                }
            }
        }
    }
}

/// One member's row of the Gantt at height `y`: its name, its bars (the assignment inside
/// where it fits, past any marker), its markers.
fn gantt_row(r: &Row, y: f64, p: &Plot) -> Markup {
    html! {
        g class="member" data-member=(r.title) {
            text class="row-label" x=(px(p.left - 8.0)) y=(px(y + ROW_H / 2.0 + 4.0)) text-anchor="end" font-size=(FONT) {
                title { (r.title) }
                (r.label)
            }
            @for b in &r.bars {
                @let (x0, x1) = (p.x(b.start), p.x(b.end));
                @let w = (x1 - x0).max(2.0);
                @let inset = label_inset(&b.label, x0, r.marks.iter().map(|m| p.x(m.t)));
                g class="bar" {
                    title { (b.title) }
                    rect x=(px(x0)) y=(px(y + (ROW_H - BAR_H) / 2.0)) width=(px(w)) height=(BAR_H) rx="2"
                        fill="#9ecae1" stroke="#3182bd" {}
                    @if !b.label.is_empty() && text_width(&b.label) + inset + 4.0 <= w {
                        text class="bar-label" x=(px(x0 + inset)) y=(px(y + ROW_H / 2.0 + 4.0)) font-size=(FONT) fill="#08306b" { (b.label) }
                    }
                }
            }
            @for m in &r.marks {
                @let (path, colour) = m.kind.shape();
                path class="mark" data-mark=(m.kind.name()) d=(path)
                    transform={"translate(" (px(p.x(m.t))) "," (px(y + ROW_H / 2.0)) ")"}
                    stroke=(colour) stroke-width="2" fill=(colour) {
                    title { (m.title) }
                }
            }
        }
    }
}

/// The Gantt, with its legend under it.
pub fn gantt(g: &Gantt) -> Markup {
    let label_w = g
        .rows
        .iter()
        .map(|r| text_width(&r.label))
        .fold(0.0, f64::max);
    let p = Plot {
        left: (label_w + 16.0).clamp(80.0, 320.0),
        right: WIDTH - 12.0,
        top: BAND_HEAD + 4.0,
        bottom: BAND_HEAD + 4.0 + ROW_H * g.rows.len().max(1) as f64,
        from: g.from,
        span: g.span.max(g.from + 1e-3),
    };
    let height = p.bottom + 40.0;
    // Band labels are written where the previous one ends: a label that would run into it is
    // left to the band's hover text.
    let mut label_end = f64::NEG_INFINITY;
    let band_labels: Vec<(f64, &str)> = g
        .bands
        .iter()
        .filter_map(|b| {
            let x = p.x(b.start);
            let w = text_width(&b.label);
            (x >= label_end && x + w <= p.right).then(|| {
                label_end = x + w + 6.0;
                (x, b.label.as_str())
            })
        })
        .collect();
    html! {
        figure class="chart gantt" data-chart=(g.id) {
            figcaption { (g.title) }
            svg xmlns="http://www.w3.org/2000/svg" viewBox={"0 0 " (WIDTH) " " (px(height))} width=(WIDTH) height=(px(height))
                role="img" aria-label=(g.title) {
                @for (i, b) in g.bands.iter().enumerate() {
                    @let (x0, x1) = (p.x(b.start), p.x(b.end));
                    g class="band" data-band=(b.label) {
                        title { (b.title) }
                        rect x=(px(x0)) y=(px(p.top)) width=(px((x1 - x0).max(1.0))) height=(px(p.bottom - p.top))
                            fill=(if i % 2 == 0 { "#f3f6fa" } else { "#ffffff" }) {}
                        @if let Some(s) = b.settled {
                            rect class="rebalance" x=(px(x0)) y=(px(p.top)) width=(px((p.x(s) - x0).max(1.5)))
                                height=(px(p.bottom - p.top)) fill="#fde0c5" {}
                        }
                        line x1=(px(x0)) y1=(px(p.top - 4.0)) x2=(px(x0)) y2=(px(p.bottom)) stroke="#bbb" {}
                    }
                }
                (x_axis(&p, g.origin_ns))
                @for (x, label) in &band_labels {
                    text class="band-label" x=(px(*x + 2.0)) y=(px(BAND_HEAD)) font-size=(FONT) fill="#333" { (label) }
                }
                @for (i, r) in g.rows.iter().enumerate() {
                    (gantt_row(r, p.top + ROW_H * i as f64, &p))
                }
            }
            (gantt_legend())
            @if let Some(n) = &g.note {
                p class="note" { (n) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(series: Vec<Series>, count: usize) -> LineChart {
        LineChart {
            id: "t".into(),
            title: "test".into(),
            unit: Unit::Records,
            scale: Scale::Linear,
            merge: Merge::Max,
            buckets: Buckets {
                origin_ns: 0,
                step: 1.0,
                count,
            },
            series,
            note: None,
        }
    }

    #[test]
    fn gaps_split_lines_and_single_samples_are_dots() {
        let s = Series::new("a", vec![Some(1.0), Some(2.0), None, Some(3.0), None, None]);
        let html = line_chart(&chart(vec![s], 6)).into_string();
        // Two buckets joined by one line; the lone third value a dot; nothing across the gap.
        assert_eq!(html.matches("<polyline").count(), 1, "{html}");
        assert_eq!(html.matches("<circle").count(), 1, "{html}");
        assert!(html.contains("data-values=\"1,2,null,3,null,null\""));
    }

    #[test]
    fn at_most_eight_series_the_rest_merged() {
        let series: Vec<Series> = (0..20)
            .map(|i| Series::new(format!("s{i}"), vec![Some(f64::from(i)), None]))
            .chain([Series::new("empty", vec![None, None])])
            .collect();
        let (kept, note) = top_and_others(series, Rank::Peak, Merge::Max);
        assert_eq!(kept.len(), MAX_SERIES);
        assert_eq!(kept[0].name, "s19");
        assert_eq!(kept[6].name, "s13");
        assert_eq!(kept[7].name, "13 others (largest)");
        assert_eq!(kept[7].values, vec![Some(12.0), None]);
        let note = note.expect("a note");
        assert!(note.contains("1 series without a sample"), "{note}");
        assert!(note.contains("20 series: the 7"), "{note}");
    }

    #[test]
    fn long_series_are_merged_to_the_points_drawn() {
        let values: Vec<Option<f64>> = (0..1800).map(|i| Some(f64::from(i % 7))).collect();
        let c = chart(vec![Series::new("a", values)], 1800);
        let (b, v) = resampled(&c);
        assert_eq!(b.count, 600);
        assert_eq!(b.step, 3.0);
        assert_eq!(v[0][0], Some(2.0));
    }

    #[test]
    fn bar_labels_start_past_the_markers_they_would_cover() {
        let w = text_width("orders[2,3]");
        // No marker: a small margin. A join at the bar's start, then one in the middle of
        // where the label would be: it starts past both.
        assert_eq!(label_inset("orders[2,3]", 100.0, [].into_iter()), 4.0);
        assert_eq!(label_inset("orders[2,3]", 100.0, [100.0].into_iter()), 9.0);
        let inset = label_inset(
            "orders[2,3]",
            100.0,
            [100.0, 100.0 + 9.0 + w / 2.0].into_iter(),
        );
        assert!((inset - (9.0 + w / 2.0 + 9.0)).abs() < 1e-9, "{inset}");
        // A marker well past the label does not move it.
        assert_eq!(
            label_inset("orders[2,3]", 100.0, [100.0 + w + 40.0].into_iter()),
            4.0
        );
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(23.0), 25.0);
        assert_eq!(nice_step(1.0), 1.0);
        let y = YAxis::new([566.0, 3.0].into_iter(), Scale::Linear, false);
        assert_eq!(y.ticks, vec![0.0, 200.0, 400.0, 600.0]);
        let y = YAxis::new([2.0].into_iter(), Scale::Linear, true);
        assert_eq!(y.ticks, vec![0.0, 1.0, 2.0, 3.0]);
        let y = YAxis::new([1.5].into_iter(), Scale::Linear, true);
        assert_eq!(y.ticks, vec![0.0, 1.0, 2.0]);
        let y = YAxis::new([0.8, 566.0].into_iter(), Scale::Log, false);
        assert_eq!(y.ticks, vec![0.1, 1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(
            time_ticks(0.0, 46.4, 12),
            vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0]
        );
        assert_eq!(time_ticks(61.0, 100.0, 5), vec![70.0, 80.0, 90.0, 100.0]);
        assert_eq!(time_label(90.0, 300.0), "1:30");
        assert_eq!(time_label(2.5, 14.0), "2.5 s");
    }
}
