//! Tables that fit a width without breaking a word, spending the width on identifiers rather
//! than on digits. comfy-table draws them, but its own dynamic arrangement splits a word that
//! is longer than the width it gives a column ("client_i" / "d"); here every column's width is
//! chosen first and handed to comfy-table as an absolute width, so that it only wraps between
//! words.
//!
//! Each cell has a kind, given by the table's builder: a number (right-aligned, never wrapped,
//! never cut), a whole value (an address: never wrapped, cut only when nothing else can be),
//! an identifier (a topic, a group, a client id: never wrapped, cut in the middle when it must
//! be, so that its head and tail stay: `lag-…-orders`), or text (wraps between words). Widths
//! start at each column's content; while the table is too wide it gives up width in this
//! order: text and headers wrap between words; headers are cut down to their column's data (a
//! header is read once, a row on every line); identifiers and words too long for any line are
//! cut in the middle, the widest first; addresses last. Numbers are never cut: a table whose
//! numbers alone do not fit is drawn wider than asked.
//!
//! Every cell's text is measured once, and the widths are chosen from those measures alone,
//! so that fitting costs time linear in the cells, whatever their width (fitting that
//! re-measured every cell at every column given up was quadratic: 30,000 client ids took
//! minutes). Text from the wire is escaped here, in every cell of every table: no control
//! character reaches the terminal.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ColumnConstraint, Table, Width};
use std::borrow::Cow;
use std::fmt::Write as _;
use unicode_width::UnicodeWidthStr;

/// What a cell holds, which says how it may be narrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Words that may wrap between them.
    Text,
    /// One line, cut in the middle when it must be (a client id, a topic).
    Ident,
    /// One line, kept whole unless nothing else can give (an address).
    Whole,
    /// Right-aligned, one line, never cut (a count, a latency).
    Num,
}

/// A cell's text (escaped) and its kind.
#[derive(Debug, Clone)]
pub struct Cell {
    text: String,
    kind: Kind,
}

impl Cell {
    fn of(s: impl ToString, kind: Kind) -> Cell {
        let s = s.to_string();
        let text = match printable(&s) {
            Cow::Borrowed(_) => s,
            Cow::Owned(o) => o,
        };
        Cell { text, kind }
    }

    /// Text that may wrap between words.
    pub fn text(s: impl ToString) -> Cell {
        Cell::of(s, Kind::Text)
    }

    /// Left-aligned text kept on one line, which may be cut in the middle (a client id).
    pub fn atom(s: impl ToString) -> Cell {
        Cell::of(s, Kind::Ident)
    }

    /// Left-aligned text kept on one line and whole (an address).
    pub fn whole(s: impl ToString) -> Cell {
        Cell::of(s, Kind::Whole)
    }

    /// A right-aligned number or measure, kept on one line and whole.
    pub fn num(s: impl ToString) -> Cell {
        Cell::of(s, Kind::Num)
    }

    /// Its pieces that must stay on one line. Text breaks at spaces, but not between a
    /// number and its unit (`8.319 s`, `434 B`): a measure is never split over two lines.
    /// Other kinds are one piece.
    fn words(&self) -> Words<'_> {
        Words {
            rest: self.text.as_str(),
            split: self.kind == Kind::Text,
        }
    }

    fn measure(&self) -> Measure {
        #[cfg(test)]
        tests::MEASURED.with(|m| m.set(m.get() + 1));
        let (mut longest, mut number, mut words) = (0, 0, 0);
        for w in self.words() {
            let n = width_of(w);
            longest = longest.max(n);
            if is_number(w) {
                number = number.max(n);
            }
            words += 1;
        }
        Measure {
            width: width_of(&self.text),
            longest,
            number,
            words,
        }
    }

    /// The cell as drawn in a column `limit` wide: a number as it is; a header's words too
    /// long cut at their end (`part…`); any other piece too long cut in the middle, its head
    /// and tail kept (`lag-…-orders`); text wrapped between its words, the lines joined by
    /// newlines (which escaped text holds no other of), so that comfy-table, given lines
    /// that fit, wraps nothing itself.
    fn drawn(&self, limit: usize, header: bool) -> Cow<'_, str> {
        let fits = width_of(&self.text) <= limit;
        if self.kind == Kind::Num || fits {
            return Cow::Borrowed(&self.text);
        }
        let shorten = |w: &str| {
            if header {
                ellipsis(w, limit)
            } else {
                middle(w, limit)
            }
        };
        if self.kind != Kind::Text {
            return Cow::Owned(shorten(&self.text));
        }
        let keep_numbers = |w: &str| {
            if is_number(w) && !header {
                w.to_string()
            } else {
                shorten(w)
            }
        };
        let mut words: Vec<String> = self.words().map(keep_numbers).collect();
        let mut breaks = fill(words.iter().map(|w| width_of(w)), limit);
        if !header && breaks.len() > MAX_CELL_LINES {
            cut_lines(&mut words, &mut breaks, limit);
        }
        let mut out = String::with_capacity(self.text.len() + breaks.len());
        let mut next_break = breaks.iter().skip(1).peekable();
        for (i, w) in words.iter().enumerate() {
            if i > 0 {
                let new_line = next_break.next_if(|&&b| b == i).is_some();
                out.push(if new_line { '\n' } else { ' ' });
            }
            out.push_str(w);
        }
        Cow::Owned(out)
    }
}

/// Lines a cell of a row takes at most: the rest of a long text (a finding's every moved
/// partition, a generation's every member) is cut, with an ellipsis, so that one row cannot
/// take a screen; `--json` keeps it whole.
pub const MAX_CELL_LINES: usize = 2;

/// Keeps the first [`MAX_CELL_LINES`] lines of `words` broken at `breaks`, the last ending
/// with an ellipsis (in place of its last words while it would not fit `limit`).
fn cut_lines(words: &mut Vec<String>, breaks: &mut Vec<usize>, limit: usize) {
    let Some(&end) = breaks.get(MAX_CELL_LINES) else {
        return;
    };
    words.truncate(end);
    breaks.truncate(MAX_CELL_LINES);
    let first = breaks.last().copied().unwrap_or(0);
    let line_width = |words: &[String]| -> usize {
        let n: usize = words.iter().map(|w| width_of(w)).sum();
        n + words.len().saturating_sub(1)
    };
    while words.len() > first + 1 && line_width(&words[first..]) + 2 > limit {
        words.pop();
    }
    // The ellipsis is a word of its own, so that no word is cut: a line of one word too
    // wide to take it after becomes the ellipsis alone, unless that word is a number (a
    // time, a count), which is kept as numbers always are.
    if line_width(&words[first..]) + 2 <= limit {
        words.push("…".to_string());
    } else if let Some(last) = words.last_mut().filter(|w| !is_number(w)) {
        *last = "…".to_string();
    }
}

/// Where greedy filling breaks lines of words this wide into lines of `w` columns: the index
/// of each line's first word (the first line's, 0, included).
fn fill(widths: impl Iterator<Item = usize>, w: usize) -> Vec<usize> {
    let mut starts = vec![0];
    let mut used = 0;
    for (i, n) in widths.enumerate() {
        if i == 0 {
            used = n;
        } else if used + 1 + n <= w {
            used += 1 + n;
        } else {
            starts.push(i);
            used = n;
        }
    }
    starts
}

/// Lines greedy filling ([`fill`]) makes of words this wide in lines of `w` columns, without
/// keeping where they break.
fn line_count(widths: impl Iterator<Item = usize>, w: usize) -> usize {
    let mut lines = 1;
    let mut used = None;
    for n in widths {
        used = match used {
            Some(u) if u + 1 + n <= w => Some(u + 1 + n),
            Some(_) => {
                lines += 1;
                Some(n)
            }
            None => Some(n),
        };
    }
    lines
}

/// A text cell as fitting counts its lines: its width and its words' widths, measured once.
/// Fitting a table asks each column's cost at many widths, and splitting the cells' text
/// into words again at each was most of the work of drawing the analyses' tables.
#[derive(Debug, Clone, Default)]
struct Wrapped {
    width: usize,
    words: Vec<usize>,
}

impl Wrapped {
    fn of(cell: &Cell) -> Wrapped {
        Wrapped {
            width: width_of(&cell.text),
            words: cell.words().map(width_of).collect(),
        }
    }

    /// Lines it takes at content width `w`, as [`Cell::drawn`] fills them.
    fn lines_at(&self, w: usize) -> usize {
        if self.width <= w {
            return 1;
        }
        line_count(self.words.iter().copied(), w).min(MAX_CELL_LINES)
    }
}

/// Units that stay on the line of the number before them.
const UNITS: [&str; 10] = ["s", "ms", "µs", "ns", "B", "KiB", "MiB", "GiB", "%", "B/s"];

/// The words of a cell ([`Cell::words`]): slices of its text.
struct Words<'a> {
    rest: &'a str,
    split: bool,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest.trim_start_matches(' ');
        if rest.is_empty() {
            self.rest = rest;
            return None;
        }
        if !self.split {
            self.rest = "";
            return Some(rest);
        }
        let mut end = rest.find(' ').unwrap_or(rest.len());
        // A number's unit, if one follows after a single space, joins it.
        let (word, after) = rest.split_at(end);
        if word.ends_with(|c: char| c.is_ascii_digit()) {
            if let Some(next) = after.strip_prefix(' ') {
                let unit = next.split(' ').next().unwrap_or("");
                if UNITS.contains(&unit.trim_end_matches([',', ';', ')', '.'])) {
                    end += 1 + unit.len();
                }
            }
        }
        let (word, after) = rest.split_at(end);
        self.rest = after;
        Some(word)
    }
}

/// The columns `s` takes on a terminal: its length when ASCII (escaped text holds no control),
/// else its Unicode width (a CJK character takes two).
fn width_of(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.width()
    }
}

/// A cell's width and its widest piece that must stay on one line.
#[derive(Debug, Clone, Copy)]
struct Measure {
    width: usize,
    longest: usize,
    /// The widest word of text that is a number (never cut, as a number cell is not).
    number: usize,
    words: usize,
}

/// Whether a word of text is a number, with its unit if one follows (`8.319 s`, `1108)`,
/// `-3`, `1-7`): digits and their punctuation, no letter (a topic id of hex digits is an
/// identifier). Such a word is never cut.
fn is_number(w: &str) -> bool {
    let w = w.split(' ').next().unwrap_or(w);
    let w = w.trim_start_matches(['-', '+', '(']);
    let w = w.trim_end_matches([')', ',', ';', ':', '%']);
    w.starts_with(|c: char| c.is_ascii_digit())
        && w.chars().all(|c| c.is_ascii_digit() || ".,:-/".contains(c))
}

/// `s` with every character that is not printable text shown as a visible escape: `\n`,
/// `\r`, `\t`, `\x1b` for the other C0 controls and DEL, `\u{9b}` for C1 controls, bidi
/// overrides and invisible formatting characters, and `\\` for a backslash so that an escape
/// is never ambiguous. Wire text (topic names, client ids, software names) goes through here
/// before a terminal sees it: an ESC, OSC or CSI would otherwise drive the terminal, and a
/// newline forge rows. Borrowed when nothing needed escaping, as nearly always.
pub fn printable(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if needs_escape(c) && (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is escaped by [`printable`]: controls (C0, DEL, C1), the backslash, and the
/// invisible characters of [`super::is_invisible`].
fn needs_escape(c: char) -> bool {
    c.is_control() || c == '\\' || super::is_invisible(c)
}

/// `s` cut to at most `limit` columns, the last of them an ellipsis when anything was cut.
fn ellipsis(s: &str, limit: usize) -> String {
    if width_of(s) <= limit {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let n = width_of(c.encode_utf8(&mut [0; 4]));
        if used + n >= limit {
            break;
        }
        used += n;
        out.push(c);
    }
    out.push('…');
    out
}

/// `s` cut to at most `limit` columns by taking out its middle: its head and its tail kept
/// around an ellipsis (`consumer-…-1`), so that ids that differ only at the end (a thread's
/// number, a partition's suffix) stay apart. The head gets the odd column.
fn middle(s: &str, limit: usize) -> String {
    if width_of(s) <= limit {
        return s.to_string();
    }
    let room = limit.saturating_sub(1);
    let mut tail: Vec<char> = Vec::new();
    let mut tail_used = 0;
    for c in s.chars().rev() {
        let n = width_of(c.encode_utf8(&mut [0; 4]));
        if tail_used + n > room / 2 {
            break;
        }
        tail_used += n;
        tail.push(c);
    }
    // The head gets the rest: the odd column, and what a wide character left of the tail's.
    let mut head = String::new();
    let mut used = 0;
    for c in s.chars() {
        let n = width_of(c.encode_utf8(&mut [0; 4]));
        if used + n > room - tail_used {
            break;
        }
        used += n;
        head.push(c);
    }
    head.push('…');
    head.extend(tail.into_iter().rev());
    head
}

/// The rows of a table, before its widths are known.
#[derive(Debug, Clone)]
pub struct Grid {
    header: Vec<Cell>,
    rows: Vec<Vec<Cell>>,
    /// Lines printed under the table ("and 42 more ..."), escaped as cells are.
    notes: Vec<String>,
}

/// How the tables of a run are drawn: the width to fit, and the rows each table shows
/// (`--stats-rows`), the largest first, the rest told in one note under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// Fit every table into this many columns; `None`: each as wide as its content.
    pub width: Option<u16>,
    /// Rows each table shows; `None`: all of them.
    pub rows: Option<usize>,
}

/// Rows a table shows by default (`--stats-rows`).
pub const ROWS_SHOWN: usize = 8;

impl Default for Fit {
    fn default() -> Fit {
        Fit {
            width: None,
            rows: Some(ROWS_SHOWN),
        }
    }
}

impl Fit {
    /// Rows a table shows (`usize::MAX`: all).
    pub fn rows(&self) -> usize {
        self.rows.unwrap_or(usize::MAX)
    }

    /// Every row, as wide as they come: what tests compare whole.
    pub fn all() -> Fit {
        Fit {
            width: None,
            rows: None,
        }
    }
}

/// A column's padding (one space each side) and its share of the vertical lines.
const PADDING: usize = 2;
/// The narrowest a column is cut to when even the longest words do not fit.
const MIN_COLUMN: usize = 3;

/// What fitting needs to know of one column, gathered in one pass over its cells.
#[derive(Debug, Clone, Default)]
struct Column {
    /// Its widest cell, header included.
    natural: usize,
    /// The header, whose lines are counted when it wraps.
    header: Option<Wrapped>,
    /// The rows' text cells while they are few (`EXACT_WORDS` words in all): their lines are
    /// then counted exactly, word by word, as comfy-table will wrap them.
    few_texts: Option<Vec<Wrapped>>,
    /// Words in the rows' text cells.
    text_words: usize,
    /// The header's longest word.
    head_word: usize,
    /// Per kind of the rows' cells, the widest piece that must stay on one line; `num`
    /// counts the numbers among words of text too.
    text_word: usize,
    ident: usize,
    whole: usize,
    num: usize,
    /// The widths of the rows' text cells, ascending, and their running sums: what wrapping
    /// costs at any width, found by a binary search.
    text_widths: Vec<usize>,
    text_sums: Vec<usize>,
}

/// Words of a column's text cells up to which wrapping costs are counted exactly: a few
/// thousand words a step, over steps as many as the columns of width given up (at most a few
/// hundred on a terminal; a 64th of the room at a time beyond). Past it, costs are estimated
/// from the cells' widths alone.
const EXACT_WORDS: usize = 2048;

impl Column {
    /// Narrowest without cutting anything.
    fn least(&self) -> usize {
        self.head_word
            .max(self.text_word)
            .max(self.ident)
            .max(self.whole)
            .max(self.num)
    }

    /// Narrowest with its header cut down to its data.
    fn data(&self) -> usize {
        self.text_word
            .max(self.ident)
            .max(self.whole)
            .max(self.num)
            .max(MIN_COLUMN)
    }

    /// Narrowest with identifiers and long words cut.
    fn cut_floor(&self) -> usize {
        self.whole.max(self.num).max(MIN_COLUMN)
    }

    /// Narrowest of all: numbers are never cut.
    fn floor(&self) -> usize {
        self.num.max(MIN_COLUMN)
    }

    /// What the column costs at content width `w`, in thousandths of a line: its header's
    /// lines, and twice the lines of its rows' text (a wrapped header is the lesser evil).
    /// A text cell `x` wide takes about `x / w` lines when wider than `w` (word wrap wastes a
    /// little more, the same for every column), one otherwise.
    fn cost(&self, w: usize) -> u64 {
        let w = w.max(1);
        let head = self.header.as_ref().map_or(1, |h| h.lines_at(w)) as u64 * 1000;
        if let Some(cells) = &self.few_texts {
            let lines: usize = cells.iter().map(|c| c.lines_at(w)).sum();
            return head + 2 * 1000 * lines as u64;
        }
        let narrow = self.text_widths.partition_point(|&x| x <= w);
        let wide = (self.text_widths.len() - narrow) as u64;
        let total = self.text_sums.last().copied().unwrap_or(0);
        let before = narrow
            .checked_sub(1)
            .and_then(|i| self.text_sums.get(i))
            .copied()
            .unwrap_or(0);
        let wide_sum = (total - before) as u64;
        let rows = narrow as u64 * 1000 + wide_sum * 1000 / w as u64 + wide * 500;
        head + 2 * rows
    }
}

impl Grid {
    /// A table with these column names (they wrap between words, as text does).
    pub fn new(header: &[&str]) -> Grid {
        Grid {
            header: header.iter().map(Cell::text).collect(),
            rows: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// A line under the table: what the rows left out ("and 42 more ... (all in --json)").
    pub fn note(&mut self, text: impl ToString) {
        self.notes.push(printable(&text.to_string()).into_owned());
    }

    /// The table drawn as [`Grid::render`] draws it, then its notes, one a line.
    pub fn text(&self, width: Option<u16>) -> String {
        let mut out = self.render(width).to_string();
        for n in &self.notes {
            out.push('\n');
            out.push_str(n);
        }
        out
    }

    fn columns(&self) -> usize {
        self.header.len()
    }

    /// Every column measured, each cell once.
    fn measure(&self) -> Vec<Column> {
        let mut cols: Vec<Column> = self
            .header
            .iter()
            .map(|h| {
                let m = h.measure();
                Column {
                    natural: m.width,
                    header: Some(Wrapped::of(h)),
                    few_texts: Some(Vec::new()),
                    head_word: m.longest,
                    ..Column::default()
                }
            })
            .collect();
        for row in &self.rows {
            for (c, cell) in row.iter().enumerate() {
                let Some(col) = cols.get_mut(c) else { break };
                let m = cell.measure();
                col.natural = col.natural.max(m.width);
                let widest = match cell.kind {
                    Kind::Text => {
                        col.text_widths.push(m.width);
                        col.text_words += m.words;
                        if col.text_words > EXACT_WORDS {
                            col.few_texts = None;
                        }
                        if let Some(few) = col.few_texts.as_mut() {
                            few.push(Wrapped::of(cell));
                        }
                        col.num = col.num.max(m.number);
                        &mut col.text_word
                    }
                    Kind::Ident => &mut col.ident,
                    Kind::Whole => &mut col.whole,
                    Kind::Num => &mut col.num,
                };
                *widest = (*widest).max(m.longest);
            }
        }
        for col in &mut cols {
            col.text_widths.sort_unstable();
            let mut sum = 0;
            col.text_sums = col
                .text_widths
                .iter()
                .map(|w| {
                    sum += w;
                    sum
                })
                .collect();
        }
        cols
    }

    /// The width of the table drawn with these content widths.
    fn drawn(&self, widths: &[usize]) -> usize {
        widths.iter().map(|w| w + PADDING).sum::<usize>() + self.columns() + 1
    }

    /// The narrowest the table can be drawn without cutting a word.
    pub fn least_width(&self) -> usize {
        let least: Vec<usize> = self.measure().iter().map(Column::least).collect();
        self.drawn(&least)
    }

    /// The table's width with no cell wrapped.
    pub fn natural_width(&self) -> usize {
        let natural: Vec<usize> = self.measure().iter().map(|c| c.natural).collect();
        self.drawn(&natural)
    }

    /// Content widths within `width`, from the columns' measures alone (no cell is looked at
    /// again): the steps of the module's comment, each taken only while the table is too wide.
    fn widths(&self, cols: &[Column], width: usize) -> Vec<usize> {
        let mut w: Vec<usize> = cols.iter().map(|c| c.natural).collect();
        let excess = |w: &[usize]| self.drawn(w).saturating_sub(width);
        let wanted = excess(&w);
        wrap(cols, &mut w, wanted);
        // Then, one column at a time, the widest that can still give.
        for floor in [Column::data, Column::cut_floor, Column::floor] {
            let mut left = excess(&w);
            while left > 0 {
                let widest = (0..w.len())
                    .filter(|&c| w[c] > floor(&cols[c]))
                    .max_by_key(|&c| (w[c], std::cmp::Reverse(c)));
                let Some(c) = widest else { break };
                w[c] -= 1;
                left -= 1;
            }
        }
        w
    }

    /// The table, as wide as its content, or fitted into `width` columns.
    pub fn render(&self, width: Option<u16>) -> Table {
        self.render_until(width, &crate::interrupt::stopping)
    }

    /// [`Grid::render`], giving up its remaining rows with a note when `stop` says so (a
    /// signal during the output at the end of a run): checked every `STOP_EVERY` rows.
    fn render_until(&self, width: Option<u16>, stop: &dyn Fn() -> bool) -> Table {
        let cols = self.measure();
        let natural: Vec<usize> = cols.iter().map(|c| c.natural).collect();
        let widths = match width {
            Some(max) if self.drawn(&natural) > usize::from(max) => {
                Some(self.widths(&cols, usize::from(max)))
            }
            _ => None,
        };
        let cut = |cells: &[Cell], header: bool| -> Vec<comfy_table::Cell> {
            cells
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    let limit = widths
                        .as_ref()
                        .and_then(|w| w.get(c).copied())
                        .unwrap_or(usize::MAX);
                    let out = comfy_table::Cell::new(cell.drawn(limit, header));
                    if cell.kind == Kind::Num {
                        out.set_alignment(CellAlignment::Right)
                    } else {
                        out
                    }
                })
                .collect()
        };
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(cut(&self.header, true));
        for (i, r) in self.rows.iter().enumerate() {
            if i % STOP_EVERY == 0 && stop() {
                let left = self.rows.len() - i;
                t.add_row(vec![comfy_table::Cell::new(format!(
                    "(stopped by a signal: {} not shown)",
                    super::words::count(left as u64, "row")
                ))]);
                break;
            }
            t.add_row(cut(r, false));
        }
        if let Some(w) = &widths {
            let constraints = w.iter().map(|&c| {
                ColumnConstraint::Absolute(Width::Fixed(
                    u16::try_from(c + PADDING).unwrap_or(u16::MAX),
                ))
            });
            t.set_constraints(constraints);
        }
        t
    }
}

/// Rows drawn between two looks for a signal.
const STOP_EVERY: usize = 256;

/// Wrapping, down to each column's longest word: one column at a time gives up width, the one
/// whose lines grow least for the room still wanted (the widest of equals). Costs come from
/// the columns' measures, a binary search each; when a single column can still wrap it gives
/// all the room at once.
fn wrap(cols: &[Column], w: &mut [usize], mut excess: usize) {
    while excess > 0 {
        let can: Vec<usize> = (0..w.len()).filter(|&c| w[c] > cols[c].least()).collect();
        let chosen = match can.as_slice() {
            [] => return,
            [only] => {
                let room = excess.min(w[*only] - cols[*only].least());
                w[*only] -= room;
                return;
            }
            _ => can.iter().copied().min_by_key(|&c| {
                let room = excess.min(w[c] - cols[c].least());
                // Lines never fall as a column narrows (greedy filling): saturating anyway.
                let added = cols[c].cost(w[c] - room).saturating_sub(cols[c].cost(w[c]));
                // Thousandths of a line added per column of room, compared without division.
                (added * 1000 / room as u64, std::cmp::Reverse(w[c]), c)
            }),
        };
        let Some(c) = chosen else { return };
        // One column at a time while little is left to give; a 64th of what is left at a
        // time on a column of thousands (a cell listing every client id), so that the steps
        // grow with the logarithm of the width, not with the width.
        let step = (excess.min(w[c] - cols[c].least()) / 64).max(1);
        w[c] -= step;
        excess -= step;
    }
}

/// A duration as tables show it: three significant digits or so, in the unit that keeps the
/// number short (`8 µs`, `0.83 ms`, `2.50 ms`, `38.2 ms`, `497 ms`, `1.23 s`, `12.3 s`,
/// `754 s`). Under 10 ms it is the summary line's latency (hundredths of a millisecond);
/// above, more digits would be noise (a scheduler's tick) and cost every row of the column.
/// Rounded half up in integers, so that a value and the `--stats` histogram bucket it falls
/// in (its first 4 significant digits) print alike.
pub fn duration_text(nanos: i64) -> String {
    if nanos.unsigned_abs() < 10_000_000 {
        return super::latency_text(nanos);
    }
    let n = nanos.unsigned_abs();
    let sign = if nanos < 0 { "-" } else { "" };
    // (nanoseconds a unit of the last digit, decimals, unit), finest first: the first that
    // keeps the number under 1000 of its last digit.
    const STEPS: [(u64, usize, &str); 5] = [
        (100_000, 1, "ms"),
        (1_000_000, 0, "ms"),
        (10_000_000, 2, "s"),
        (100_000_000, 1, "s"),
        (1_000_000_000, 0, "s"),
    ];
    for (i, (step, decimals, unit)) in STEPS.into_iter().enumerate() {
        let q = n.saturating_add(step / 2) / step;
        if q >= 1000 && i + 1 < STEPS.len() {
            continue;
        }
        let scale = 10u64.pow(decimals as u32);
        return match decimals {
            0 => format!("{sign}{q} {unit}"),
            d => format!("{sign}{}.{:0d$} {unit}", q / scale, q % scale),
        };
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Cells measured on this thread: fitting a table measures each of its cells once.
        pub(super) static MEASURED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn grid() -> Grid {
        let mut g = Grid::new(&["stream", "client_id", "client", "messages", "status"]);
        g.row(vec![
            Cell::num(1),
            Cell::atom("consumer-orders-1"),
            Cell::atom("10.0.0.1:40001"),
            Cell::num(3),
            Cell::text("used outside the advertised range: v13"),
        ]);
        g.row(vec![
            Cell::num(22),
            Cell::atom("-"),
            Cell::atom("[2001:db8::17]:40002"),
            Cell::num(14),
            Cell::text("ok"),
        ]);
        g
    }

    /// Every word of `text` (between spaces and the table's lines) as drawn.
    fn drawn_words(text: &str) -> Vec<String> {
        text.split(|c: char| c.is_whitespace() || "│┆┌┐└┘├┤┬┴┼─╞╡╪═".contains(c))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn wide_enough_it_is_drawn_as_its_content() {
        let g = grid();
        assert_eq!(g.render(Some(200)).to_string(), g.render(None).to_string());
        assert_eq!(
            g.render(None)
                .to_string()
                .lines()
                .next()
                .map(|l| l.chars().count()),
            Some(g.natural_width())
        );
    }

    /// Whether `cut` is `whole` with its middle taken out (head and tail kept around `…`), or
    /// its end (`part…`).
    fn is_cut_of(cut: &str, whole: &str) -> bool {
        match cut.split_once('…') {
            Some((head, tail)) => {
                whole.starts_with(head)
                    && whole.ends_with(tail)
                    && head.len() + tail.len() < whole.len()
            }
            None => false,
        }
    }

    /// A long text cell takes at most `MAX_CELL_LINES` lines, the last ending with an
    /// ellipsis, at any width; a header is never cut so, and notes go under the table.
    #[test]
    fn a_long_cell_stops_at_its_lines_with_an_ellipsis() {
        let words: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
        let mut g = Grid::new(&["kind", "summary"]);
        g.row(vec![Cell::atom("burst"), Cell::text(words.join(" "))]);
        g.note("and 3 more (all in --json)");
        for width in [40u16, 60, 100] {
            let text = g.text(Some(width));
            let body: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with('│') && !l.contains("summary"))
                .collect();
            assert_eq!(body.len(), MAX_CELL_LINES, "{width}\n{text}");
            assert!(body.last().is_some_and(|l| l.contains('…')), "{text}");
            assert!(
                text.lines().all(|l| l.width() <= usize::from(width)),
                "{text}"
            );
            assert_eq!(text.lines().last(), Some("and 3 more (all in --json)"));
        }
        // Unfitted (no width), nothing is cut.
        assert!(g.text(None).contains("word59"));
    }

    /// At every width from the content's down to the narrowest a table can be (every column
    /// at `MIN_COLUMN`, numbers whole), every line fits, and every word drawn is a word of the
    /// cells (whole), or a word cut with an ellipsis when even the longest words do not fit.
    #[test]
    fn narrower_it_wraps_between_words_and_cuts_only_what_cannot_fit() {
        let g = grid();
        let whole: Vec<String> = drawn_words(&g.render(None).to_string());
        let least = g.least_width();
        let floor = g.drawn(&[MIN_COLUMN, MIN_COLUMN, MIN_COLUMN, MIN_COLUMN, MIN_COLUMN]);
        for width in (floor..=g.natural_width()).rev() {
            let text = g.render(Some(width as u16)).to_string();
            for l in text.lines() {
                assert!(l.width() <= width, "{width}: {l}");
            }
            for w in drawn_words(&text) {
                // A lone ellipsis ends a cell cut at `MAX_CELL_LINES` lines.
                assert!(
                    whole.contains(&w)
                        || w == "…"
                        || (width < least && whole.iter().any(|x| is_cut_of(&w, x))),
                    "{width}: {w:?} is not a whole word\n{text}"
                );
            }
            // Numbers are never cut.
            for n in ["22", "14"] {
                assert!(drawn_words(&text).iter().any(|w| w == n), "{width}\n{text}");
            }
            // Atoms stay on one line: an address is never split.
            if width >= least {
                assert!(text.contains("[2001:db8::17]:40002"), "{width}\n{text}");
            }
        }
    }

    #[test]
    fn the_widest_wrappable_column_wraps_first() {
        let g = grid();
        // 105 columns of content into 90: the status column alone gives up 15.
        let text = g.render(Some(90)).to_string();
        assert!(
            text.contains("│      1 ┆ consumer-orders-1 ┆ 10.0.0.1:40001       ┆        3 ┆ used outside the        │"),
            "{text}"
        );
        assert!(text.contains("┆ advertised range: v13   │"), "{text}");
        assert!(text.lines().all(|l| l.width() == 90), "{text}");
    }

    #[test]
    fn ellipsis_cuts_to_the_limit() {
        assert_eq!(ellipsis("consumer-orders-1", 8), "consume…");
        assert_eq!(ellipsis("abc", 8), "abc");
        assert_eq!(ellipsis("abcdefgh", 8), "abcdefgh");
    }

    #[test]
    fn middle_keeps_head_and_tail() {
        assert_eq!(middle("lag-demo-orders", 12), "lag-de…rders");
        assert_eq!(middle("consumer-orders-1", 8), "cons…s-1");
        assert_eq!(middle("abc", 8), "abc");
        assert_eq!(middle("abcdefgh", 8), "abcdefgh");
        assert_eq!(middle("abcdefgh", 3), "a…h");
        // Wide characters count two columns: never more than the limit.
        let cut = middle("クライアント-0001", 9);
        assert_eq!(cut, "クラ…0001");
        assert!(cut.width() <= 9);
        // A wide character that does not fit the tail's half leaves its room to the head.
        assert_eq!(middle("client クライアント", 7), "clie…ト");
        assert_eq!(middle("client クライアント", 6), "cli…ト");
        assert_eq!(middle("client クライアント", 4), "cli…");
    }

    #[test]
    fn numbers_and_their_units_are_one_word() {
        let c = Cell::text("8.319 s (frame 3848) took 12 ms of 5 B, to topic 1a2b");
        let words: Vec<&str> = c.words().collect();
        assert_eq!(
            words,
            ["8.319 s", "(frame", "3848)", "took", "12 ms", "of", "5 B,", "to", "topic", "1a2b"]
        );
        let numbers: Vec<&str> = words.into_iter().filter(|w| is_number(w)).collect();
        assert_eq!(numbers, ["8.319 s", "3848)", "12 ms", "5 B,"]);
        // Never cut, however narrow the column.
        assert_eq!(c.drawn(4, false).lines().next(), Some("8.319 s"));
        assert!(!is_number("4700312325a040589dc6448f89973826"));
        assert!(is_number("1-7") && is_number("-3") && is_number("127.0.0.1:9092"));
    }

    #[test]
    fn durations_keep_three_significant_digits() {
        let ms = |x: f64| duration_text((x * 1e6) as i64);
        assert_eq!(duration_text(8_400), "8 µs");
        assert_eq!(ms(0.83), "0.83 ms");
        assert_eq!(ms(2.5), "2.50 ms");
        assert_eq!(ms(9.994), "9.99 ms");
        assert_eq!(ms(38.249), "38.2 ms");
        assert_eq!(ms(38.25), "38.3 ms");
        assert_eq!(ms(99.96), "100 ms");
        assert_eq!(ms(497.4), "497 ms");
        assert_eq!(ms(999.6), "1.00 s");
        assert_eq!(ms(1234.0), "1.23 s");
        assert_eq!(ms(12_345.0), "12.3 s");
        assert_eq!(ms(754_321.0), "754 s");
        assert_eq!(ms(7_543_210.0), "7543 s");
        assert_eq!(ms(-38.25), "-38.3 ms");
        assert_eq!(duration_text(i64::MIN), "-9223372037 s");
    }

    /// A table like the versions table once was on a capture of 30,000 client ids: one cell
    /// listing them all, beside 30,000 rows of distinct ids. Fitting it at any width measures
    /// each cell once (it re-measured every cell for each column of width given up, minutes
    /// of work), and the widths are chosen from the measures alone.
    #[test]
    fn fitting_measures_each_cell_once_whatever_the_width() {
        let ids: Vec<String> = (0..30_000).map(|i| format!("client-{i:05}")).collect();
        let mut g = Grid::new(&["client software", "client ids", "requests", "status"]);
        g.row(vec![
            Cell::atom("unknown -"),
            Cell::text(ids.join(" ")),
            Cell::num(30_000),
            Cell::text("ok"),
        ]);
        for (i, id) in ids.iter().enumerate() {
            g.row(vec![
                Cell::atom(format!("software-{id}")),
                Cell::text(format!("{id} and some words")),
                Cell::num(i),
                Cell::text("used outside the advertised range: v13"),
            ]);
        }
        let cells = 4 * (ids.len() + 2);
        for width in [60u16, 80, 100, 120, 200] {
            MEASURED.with(|m| m.set(0));
            let t = g.render(Some(width));
            assert_eq!(MEASURED.with(|m| m.get()), cells, "at {width}");
            assert_eq!(t.column_iter().count(), 4);
        }
        // The widths depend on the measures only: the same from measures taken again.
        let cols = g.measure();
        assert_eq!(g.widths(&cols, 100), g.widths(&g.measure(), 100));
        let w = g.widths(&cols, 100);
        assert_eq!(g.drawn(&w), 100, "{w:?}");
    }

    /// A signal while a table is drawn: its remaining rows give way to a note.
    #[test]
    fn a_stop_gives_up_the_remaining_rows() {
        let mut g = Grid::new(&["id", "n"]);
        for i in 0..1000 {
            g.row(vec![Cell::atom(format!("c{i}")), Cell::num(i)]);
        }
        let calls = std::cell::Cell::new(0);
        let stop = || {
            calls.set(calls.get() + 1);
            calls.get() > 2
        };
        let text = g.render_until(Some(80), &stop).to_string();
        assert!(text.contains("c511 "), "{text}");
        assert!(!text.contains("c512 "), "{text}");
        assert!(
            text.contains("(stopped by a signal: 488 rows not shown)"),
            "{text}"
        );
        let whole = g.render_until(Some(80), &|| false).to_string();
        assert!(whole.contains("c999 ") && !whole.contains("stopped"));
    }

    /// Wire text with terminal controls: every one shown as a visible escape.
    #[test]
    fn controls_are_escaped_visibly() {
        assert!(matches!(printable("orders"), Cow::Borrowed("orders")));
        assert_eq!(printable("\x1b[2J"), "\\x1b[2J");
        assert_eq!(printable("a\u{1b}[2Jb"), "a\\x1b[2Jb");
        assert_eq!(printable("\u{1b}]52;c;aGk=\u{7}"), "\\x1b]52;c;aGk=\\x07");
        assert_eq!(printable("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(printable("x\r\n│ fake ┆ row │"), "x\\r\\n│ fake ┆ row │");
        assert_eq!(printable("tab\tdel\u{7f}"), "tab\\tdel\\x7f");
        assert_eq!(printable("evil\u{202e}txt"), "evil\\u{202e}txt");
        assert_eq!(printable("クライアント"), "クライアント");
        assert_eq!(printable("café"), "café");
    }

    /// Cells holding controls and wide characters: no control reaches the drawn table, and
    /// every line of it is as wide as the others on a terminal.
    #[test]
    fn hostile_cells_are_escaped_and_lines_stay_aligned() {
        let hostile = [
            "\u{1b}[2J\u{1b}[H",
            "\u{1b}]52;c;aGVsbG8=\u{7}",
            "bell\u{7}",
            "\u{9b}2J",
            "a\r\n│ fake ┆ 1 │",
            "クライアント",
            "クライアント-with-a-long-tail-0001",
        ];
        let mut g = Grid::new(&["client_id", "topic", "count", "status"]);
        for (i, h) in hostile.iter().enumerate() {
            g.row(vec![
                Cell::atom(h),
                Cell::whole(h),
                Cell::num(i),
                Cell::text(format!("{h} seen {h}")),
            ]);
        }
        for width in [None, Some(200), Some(100), Some(80), Some(60), Some(40)] {
            let text = g.render(width).to_string();
            assert!(
                !text.chars().any(|c| c.is_control() && c != '\n'),
                "{width:?}: {text:?}"
            );
            assert!(!text.contains('\u{9b}'), "{text}");
            let widths: Vec<usize> = text.lines().map(UnicodeWidthStr::width).collect();
            assert!(
                widths.iter().all(|&w| w == widths[0]),
                "{width:?}: {widths:?}\n{text}"
            );
            // One line a row with no wrapping room needed: no forged row.
            if width.is_none() {
                assert_eq!(text.lines().count(), 4 + hostile.len(), "{text}");
            }
        }
    }
}
