//! The page around the sections: its head (style, the content security policy that keeps
//! the browser from loading anything, the small script for hover and sorting), the sections'
//! frame, and tables that stop at [`MAX_ROWS`] rows and say how many more there are.

use maud::{html, Markup, PreEscaped, DOCTYPE};

/// Rows a table shows at most: the page stays bounded whatever the capture, and the JSON
/// (`--stats --json`) holds every row.
pub const MAX_ROWS: usize = 50;

/// Nothing is fetched or run from elsewhere: no source is allowed but the page's own inline
/// style and script.
const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

const STYLE: &str = r#"
body{font:14px/1.4 "DejaVu Sans",Verdana,sans-serif;margin:0 auto;padding:8px 24px 40px;max-width:1352px;color:#222}
h1{font-size:20px;margin:8px 0 2px}h2{font-size:17px;margin:28px 0 6px;padding-top:6px;border-top:2px solid #ddd}
h3{font-size:15px;margin:16px 0 4px}
nav{position:sticky;top:0;background:#fff;padding:4px 0;border-bottom:1px solid #ddd;z-index:2;font-size:13px}
nav a{margin-right:14px;color:#1a5fb4;text-decoration:none}
.meta{color:#555;margin:0 0 6px}
.glance{display:flex;flex-wrap:wrap;gap:8px;margin:10px 0;padding:0;list-style:none}
.glance li{border:1px solid #ccc;border-radius:4px;padding:4px 10px;background:#fafafa}
.glance li.warn{border-color:#e0a800;background:#fff8e1}.glance li.bad{border-color:#c62828;background:#fdecea}
.glance b{font-size:16px;margin-right:4px}
table{border-collapse:collapse;margin:4px 0 12px;font-size:13px;max-width:100%}
th,td{border:1px solid #d6d6d6;padding:2px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f2f2f2;font-weight:600;white-space:nowrap}
th.sortable{cursor:pointer}th.sortable:after{content:" \2195";color:#aaa;font-size:11px}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.zero td{color:#999}tr.more td{font-style:italic;color:#555;background:#fafafa}
tr.warning td,td.warning{background:#fff8e1}tr.error td,td.error{background:#fdecea}
code{background:#f4f4f4;padding:0 3px;font-size:12px;overflow-wrap:anywhere}
td[data-key=frames]{min-width:36em}td[data-key=kind]{white-space:nowrap}
figure.chart{margin:8px 0 18px;position:relative}
figcaption{font-weight:600;margin-bottom:2px}
figure.chart svg{display:block;max-width:100%;height:auto;font-family:"DejaVu Sans",Verdana,sans-serif}
ul.legend{display:flex;flex-wrap:wrap;gap:4px 18px;list-style:none;margin:4px 0 0;padding:0 0 0 8px;font-size:12px}
ul.legend li{display:flex;align-items:center;gap:5px;max-width:100%}
.sw{display:inline-block;width:18px;height:0;border-top:3px solid;flex:none}
.sw.dashed{border-top-style:dashed}.sw.box{height:10px;border:1px solid;width:14px}
.glyph{flex:none}.name{overflow-wrap:anywhere}.peak{color:#666;white-space:nowrap}
p.note{color:#555;font-size:12px;margin:2px 0 0 8px}p.empty{color:#777}
.tip{position:absolute;pointer-events:none;background:#fff;border:1px solid #999;padding:4px 8px;font-size:12px;box-shadow:0 1px 4px rgba(0,0,0,.2);z-index:3;white-space:nowrap}
details{margin:4px 0 10px}summary{cursor:pointer;color:#1a5fb4}
.cols{display:flex;flex-wrap:wrap;gap:0 32px;align-items:flex-start}
.multiples{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:4px 16px}
.multiples figure.chart{margin:4px 0 8px}.multiples figcaption{font-weight:normal}
"#;

/// Sorting a table by a column (a click on its header; numbers by their `data-v`), and the
/// line charts' hover: the time under the pointer and each series' value there. Text goes in
/// through `textContent` only.
const SCRIPT: &str = r#"
(function(){
function fmt(v,u){if(v===null)return '-';var a=Math.abs(v);
 function s3(x){return Number(x.toPrecision(3)).toString();}
 function si(x,unit){var p=[[1e9,' G'],[1e6,' M'],[1e3,' k']];for(var i=0;i<p.length;i++){if(Math.abs(x)>=p[i][0]*0.9995)return s3(x/p[i][0])+p[i][1]+unit;}return s3(x)+' '+unit;}
 if(u==='ms')return a<1000?s3(v)+' ms':s3(v/1000)+' s';
 if(u==='records/s')return si(v,'records/s');
 if(u==='B/s')return si(v,'B/s');return si(v,u);}
function tlabel(t){return t<60?Number(t.toFixed(3))+' s':Math.floor(t/60)+':'+('0'+Math.floor(t%60)).slice(-2);}
document.querySelectorAll('table[data-table]').forEach(function(tb){
 var heads=tb.querySelectorAll('thead th');
 heads.forEach(function(th,ci){th.classList.add('sortable');th.addEventListener('click',function(){
  var body=tb.tBodies[0];if(!body)return;var rows=[].slice.call(body.rows).filter(function(r){return !r.classList.contains('more');});
  var more=[].slice.call(body.rows).filter(function(r){return r.classList.contains('more');});
  var dir=th.dataset.dir==='asc'?-1:1;th.dataset.dir=dir===1?'asc':'desc';
  function key(r){var c=r.cells[ci];if(!c)return '';return c.dataset.v!==undefined?parseFloat(c.dataset.v):c.textContent;}
  rows.sort(function(a,b){var x=key(a),y=key(b);if(typeof x==='number'&&typeof y==='number')return (x-y)*dir;return String(x).localeCompare(String(y))*dir;});
  rows.concat(more).forEach(function(r){body.appendChild(r);});});});});
document.querySelectorAll('figure.chart svg[data-step]').forEach(function(svg){
 var fig=svg.parentNode,tip=fig.querySelector('.tip'),rule=svg.querySelector('line.hover');
 var step=parseFloat(svg.dataset.step),n=parseInt(svg.dataset.count,10),l=parseFloat(svg.dataset.left),r=parseFloat(svg.dataset.right),u=svg.dataset.unit;
 var series=[].slice.call(svg.querySelectorAll('g.series')).map(function(g){return {name:g.dataset.series,c:g.getAttribute('stroke'),v:g.dataset.values.split(',').map(function(x){return x==='null'?null:parseFloat(x);})};});
 svg.addEventListener('mousemove',function(e){
  var m=svg.getScreenCTM();if(!m)return;var x=(e.clientX-m.e)/m.a;if(x<l||x>r){tip.hidden=true;rule.setAttribute('visibility','hidden');return;}
  var i=Math.min(n-1,Math.max(0,Math.floor((x-l)/(r-l)*n)));var cx=l+(r-l)*(i+0.5)/n;
  rule.setAttribute('x1',cx);rule.setAttribute('x2',cx);rule.setAttribute('visibility','visible');
  tip.textContent='';var h=document.createElement('div');h.textContent=tlabel(i*step)+' to '+tlabel((i+1)*step);h.style.fontWeight='600';tip.appendChild(h);
  series.forEach(function(s){var d=document.createElement('div');var b=document.createElement('span');b.textContent='\u25A0 ';b.style.color=s.c;d.appendChild(b);d.appendChild(document.createTextNode(s.name+': '+fmt(s.v[i],u)));tip.appendChild(d);});
  tip.hidden=false;var fr=fig.getBoundingClientRect();var left=e.clientX-fr.left+14;if(left+tip.offsetWidth>fr.width)left=e.clientX-fr.left-tip.offsetWidth-14;
  tip.style.left=Math.max(0,left)+'px';tip.style.top=(e.clientY-fr.top+10)+'px';});
 svg.addEventListener('mouseleave',function(){tip.hidden=true;rule.setAttribute('visibility','hidden');});});
})();
"#;

/// A section of the page: its anchor, its title, its content.
pub struct Section {
    pub id: &'static str,
    pub title: String,
    pub body: Markup,
}

/// The whole page.
pub fn page(title: &str, header: Markup, sections: &[Section]) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(CSP);
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                (header)
                nav {
                    @for s in sections {
                        a href={"#" (s.id)} { (s.title) }
                    }
                }
                @for s in sections {
                    section id=(s.id) {
                        h2 { (s.title) }
                        (s.body)
                    }
                }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    }
}

/// A table's cell: text, a number (right-aligned, sorted by `v`), or markup of ours.
pub enum Cell {
    Text(String),
    Num {
        text: String,
        v: f64,
    },
    /// Text (left-aligned) sorted by a number: a time with its frame.
    Sorted {
        text: String,
        v: f64,
    },
    Markup(Markup),
}

/// Characters of a text cell shown at most: a Kafka string may hold 32,767 bytes, and 50
/// rows of those would make megabytes of one table (the JSON has the whole text).
const MAX_TEXT: usize = 300;
/// Characters of a [`Cell::prose`] cell shown at most.
const MAX_PROSE: usize = 2_000;

/// `s`, cut to `max` characters with an ellipsis.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        let s = s.into();
        Cell::Text(if s.len() > MAX_TEXT {
            clip(&s, MAX_TEXT)
        } else {
            s
        })
    }

    /// Text of ours that names many things (a finding's summary, the versions a client
    /// used): longer than a name from the wire, still bounded.
    pub fn prose(s: impl Into<String>) -> Cell {
        let s = s.into();
        Cell::Text(if s.len() > MAX_PROSE {
            clip(&s, MAX_PROSE)
        } else {
            s
        })
    }

    /// A whole number, with its thousands separated.
    pub fn count(n: u64) -> Cell {
        Cell::Num {
            text: super::units::count(n),
            v: n as f64,
        }
    }

    /// A number shown as `text`, sorted by `v`.
    pub fn num(text: impl Into<String>, v: f64) -> Cell {
        Cell::Num {
            text: text.into(),
            v,
        }
    }

    /// Text sorted by `v`.
    pub fn sorted(text: impl Into<String>, v: f64) -> Cell {
        Cell::Sorted {
            text: text.into(),
            v,
        }
    }

    /// A number that may be missing (`-`).
    pub fn opt(v: Option<f64>, text: impl Fn(f64) -> String) -> Cell {
        match v {
            Some(v) => Cell::num(text(v), v),
            None => Cell::Num {
                text: "-".into(),
                v: -1e300,
            },
        }
    }
}

/// A table: its columns (header and the key tests find the cells by), its rows, and what
/// was left out.
pub struct Table {
    pub id: &'static str,
    pub columns: Vec<(&'static str, &'static str)>,
    pub rows: Vec<(Option<&'static str>, Vec<Cell>)>,
    /// Rows there were in all (more than `rows` when cut).
    pub total: usize,
    /// What a reader does to see the rest.
    pub rest: &'static str,
}

impl Table {
    pub fn new(id: &'static str, columns: &[(&'static str, &'static str)]) -> Table {
        Table {
            id,
            columns: columns.to_vec(),
            rows: Vec::new(),
            total: 0,
            rest: "--stats --json lists them all",
        }
    }

    /// One more row, kept while fewer than [`MAX_ROWS`] are.
    pub fn row(&mut self, cells: Vec<Cell>) {
        self.row_classed(None, cells);
    }

    /// One more row with a class (`zero`, `warning`, `error`).
    pub fn row_classed(&mut self, class: Option<&'static str>, cells: Vec<Cell>) {
        self.total += 1;
        if self.rows.len() < MAX_ROWS {
            self.rows.push((class, cells));
        }
    }

    pub fn render(&self) -> Markup {
        let numeric: Vec<bool> = (0..self.columns.len())
            .map(|i| {
                self.rows
                    .iter()
                    .any(|(_, r)| matches!(r.get(i), Some(Cell::Num { .. })))
            })
            .collect();
        html! {
            table data-table=(self.id) {
                thead { tr {
                    @for ((h, key), n) in self.columns.iter().zip(&numeric) {
                        th class=[n.then_some("n")] data-key=(key) { (h) }
                    }
                } }
                tbody {
                    @for (class, r) in &self.rows {
                        tr class=[*class] {
                            @for (c, (_, key)) in r.iter().zip(&self.columns) {
                                @match c {
                                    Cell::Text(t) => td data-key=(key) { (t) },
                                    Cell::Num { text, v } => td class="n" data-key=(key) data-v=(format!("{v:e}")) { (text) },
                                    Cell::Sorted { text, v } => td data-key=(key) data-v=(format!("{v:e}")) { (text) },
                                    Cell::Markup(m) => td data-key=(key) { (m) },
                                }
                            }
                        }
                    }
                    @if self.total > self.rows.len() {
                        tr class="more" {
                            td colspan=(self.columns.len()) {
                                (self.total - self.rows.len()) " more rows not shown (" (self.rest) ")"
                            }
                        }
                    }
                }
            }
        }
    }
}
