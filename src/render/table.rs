//! Tables that fit a width without breaking a word. comfy-table draws them, but its own dynamic
//! arrangement splits a word that is longer than the width it gives a column ("client_i" /
//! "d"); here every column's width is chosen first, never under its longest word, and handed to
//! comfy-table as an absolute width, so that it only wraps between words.
//!
//! Widths start at each column's content; while the table is too wide, the widest column that
//! can still wrap gives up a column. When even the longest words do not fit, the longest are
//! cut with an ellipsis, so that a cell is shortened, never broken.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{CellAlignment, ColumnConstraint, Table, Width};
use unicode_width::UnicodeWidthStr;

/// A cell's text, whether it may wrap between its words, and whether it may be cut.
#[derive(Debug, Clone)]
pub struct Cell {
    text: String,
    /// A number, an address, a latency: never wrapped (`0.04 ms` stays on one line).
    atom: bool,
    /// What it says is lost if cut (a number, an address): cut only when nothing else can be.
    keep: bool,
    right: bool,
}

impl Cell {
    /// Text that may wrap between words.
    pub fn text(s: impl ToString) -> Cell {
        Cell {
            text: s.to_string(),
            atom: false,
            keep: false,
            right: false,
        }
    }

    /// Left-aligned text kept on one line, which may be cut at the end (a client id).
    pub fn atom(s: impl ToString) -> Cell {
        Cell {
            atom: true,
            ..Cell::text(s)
        }
    }

    /// Left-aligned text kept on one line and whole (an address).
    pub fn whole(s: impl ToString) -> Cell {
        Cell {
            keep: true,
            ..Cell::atom(s)
        }
    }

    /// A right-aligned number or measure, kept on one line and whole.
    pub fn num(s: impl ToString) -> Cell {
        Cell {
            right: true,
            ..Cell::whole(s)
        }
    }

    /// Its pieces that must stay whole.
    fn words(&self) -> Vec<&str> {
        if self.atom {
            vec![self.text.as_str()]
        } else {
            self.text.split_whitespace().collect()
        }
    }

    fn width(&self) -> usize {
        self.text.width()
    }

    /// Widest piece that must stay whole.
    fn longest_word(&self) -> usize {
        self.words().iter().map(|w| w.width()).max().unwrap_or(0)
    }

    /// Lines it takes at content width `w`, filled word by word as comfy-table fills them.
    fn lines_at(&self, w: usize) -> usize {
        if self.atom || self.width() <= w {
            return 1;
        }
        let mut lines = 1;
        let mut used = 0;
        for word in self.words() {
            let n = word.width();
            if used == 0 {
                used = n;
            } else if used + 1 + n <= w {
                used += 1 + n;
            } else {
                lines += 1;
                used = n;
            }
        }
        lines
    }

    /// The same with every piece wider than `limit` cut to it, an ellipsis last.
    fn cut(&self, limit: usize) -> Cell {
        if self.longest_word() <= limit {
            return self.clone();
        }
        let text = if self.atom {
            ellipsis(&self.text, limit)
        } else {
            let words: Vec<String> = self.words().iter().map(|w| ellipsis(w, limit)).collect();
            words.join(" ")
        };
        Cell { text, ..*self }
    }
}

/// `s` cut to at most `limit` columns, the last of them an ellipsis when anything was cut.
fn ellipsis(s: &str, limit: usize) -> String {
    if s.width() <= limit {
        return s.to_string();
    }
    let mut out = String::new();
    for c in s.chars() {
        if (out.as_str().width() + c.to_string().width()) >= limit {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

/// The rows of a table, before its widths are known.
#[derive(Debug, Clone)]
pub struct Grid {
    header: Vec<Cell>,
    rows: Vec<Vec<Cell>>,
}

/// A column's padding (one space each side) and its share of the vertical lines.
const PADDING: usize = 2;
/// The narrowest a column is cut to when even the longest words do not fit.
const MIN_COLUMN: usize = 3;

impl Grid {
    /// A table with these column names (they wrap between words, as text does).
    pub fn new(header: &[&str]) -> Grid {
        Grid {
            header: header.iter().map(Cell::text).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    fn columns(&self) -> usize {
        self.header.len()
    }

    fn cells_of(&self, col: usize) -> impl Iterator<Item = &Cell> {
        std::iter::once(&self.header[col]).chain(self.rows.iter().filter_map(move |r| r.get(col)))
    }

    /// Each column as wide as its widest cell.
    fn natural(&self) -> Vec<usize> {
        (0..self.columns())
            .map(|c| self.cells_of(c).map(Cell::width).max().unwrap_or(0))
            .collect()
    }

    /// Each column as narrow as its longest word.
    fn narrowest(&self) -> Vec<usize> {
        (0..self.columns())
            .map(|c| self.cells_of(c).map(Cell::longest_word).max().unwrap_or(0))
            .collect()
    }

    /// The width of the table drawn with these content widths.
    fn drawn(&self, widths: &[usize]) -> usize {
        widths.iter().map(|w| w + PADDING).sum::<usize>() + self.columns() + 1
    }

    /// The narrowest the table can be drawn without cutting a word.
    pub fn least_width(&self) -> usize {
        self.drawn(&self.narrowest())
    }

    /// The table's width with no cell wrapped.
    pub fn natural_width(&self) -> usize {
        self.drawn(&self.natural())
    }

    /// What wrapping column `col` at content width `w` costs: the lines its cells take, a
    /// row's line counting twice a header's (a wrapped header is the lesser evil).
    fn cost_at(&self, col: usize, w: usize) -> usize {
        let rows: usize = self
            .rows
            .iter()
            .filter_map(|r| r.get(col))
            .map(|c| c.lines_at(w))
            .sum();
        self.header[col].lines_at(w) + 2 * rows
    }

    /// Per column, the longest word of the cells `which` picks among the rows.
    fn longest_rows(&self, which: impl Fn(&Cell) -> bool) -> Vec<usize> {
        (0..self.columns())
            .map(|c| {
                let rows = self.rows.iter().filter_map(|r| r.get(c));
                rows.filter(|c| which(c))
                    .map(Cell::longest_word)
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// Content widths within `width`. One column at a time gives up one column of width:
    /// among those that can still wrap, the one whose lines grow least for the room still
    /// wanted (the widest of equals). If even the longest words do not fit, the widest
    /// column is cut: first what may be cut (a client id, words of text), down to its header
    /// and to what must stay whole (addresses, numbers); then headers, down to what they
    /// name; then anything.
    fn widths(&self, width: usize) -> Vec<usize> {
        let mut w = self.natural();
        let least = self.narrowest();
        let kept = self.longest_rows(|c| c.keep);
        let data = self.longest_rows(|_| true);
        let heads: Vec<usize> = self.header.iter().map(Cell::longest_word).collect();
        while self.drawn(&w) > width {
            let excess = self.drawn(&w) - width;
            let wrap = (0..w.len()).filter(|&c| w[c] > least[c]).min_by_key(|&c| {
                let room = excess.min(w[c] - least[c]);
                let added = self.cost_at(c, w[c] - room) - self.cost_at(c, w[c]);
                // Lines added per column of room, compared without division.
                (added * 1000 / room, std::cmp::Reverse(w[c]), c)
            });
            let widest = |floor: &dyn Fn(usize) -> usize| {
                (0..w.len())
                    .filter(|&c| w[c] > floor(c))
                    .max_by_key(|&c| (w[c], std::cmp::Reverse(c)))
            };
            let cuttable = widest(&|c| kept[c].max(heads[c]).max(MIN_COLUMN));
            let header = widest(&|c| data[c].min(w[c]).max(kept[c]).max(MIN_COLUMN));
            let cut = widest(&|_| MIN_COLUMN);
            match wrap.or(cuttable).or(header).or(cut) {
                Some(c) => w[c] -= 1,
                None => break,
            }
        }
        w
    }

    /// The table, as wide as its content, or fitted into `width` columns.
    pub fn render(&self, width: Option<u16>) -> Table {
        let widths = match width {
            Some(max) if self.natural_width() > usize::from(max) => {
                Some(self.widths(usize::from(max)))
            }
            _ => None,
        };
        let cut = |cells: &[Cell]| -> Vec<comfy_table::Cell> {
            cells
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    let cell = match &widths {
                        Some(w) => cell.cut(w.get(c).copied().unwrap_or(usize::MAX)),
                        None => cell.clone(),
                    };
                    let out = comfy_table::Cell::new(&cell.text);
                    if cell.right {
                        out.set_alignment(CellAlignment::Right)
                    } else {
                        out
                    }
                })
                .collect()
        };
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(cut(&self.header));
        for r in &self.rows {
            t.add_row(cut(r));
        }
        if let Some(w) = &widths {
            let constraints = w
                .iter()
                .map(|&c| ColumnConstraint::Absolute(Width::Fixed((c + PADDING) as u16)));
            t.set_constraints(constraints);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// At every width from the content's down to the narrowest a table can be (every column
    /// at `MIN_COLUMN`), every line fits, and every word drawn is a word of the cells (whole),
    /// or a word cut with an ellipsis when even the longest words do not fit.
    #[test]
    fn narrower_it_wraps_between_words_and_cuts_only_what_cannot_fit() {
        let g = grid();
        let whole: Vec<String> = drawn_words(&g.render(None).to_string());
        let least = g.drawn(&g.narrowest());
        let floor = g.drawn(&[MIN_COLUMN; 5]);
        for width in (floor..=g.natural_width()).rev() {
            let text = g.render(Some(width as u16)).to_string();
            for l in text.lines() {
                assert!(l.width() <= width, "{width}: {l}");
            }
            for w in drawn_words(&text) {
                let cut = w.strip_suffix('…');
                assert!(
                    whole.contains(&w)
                        || cut.is_some_and(
                            |c| width < least && whole.iter().any(|x| x.starts_with(c))
                        ),
                    "{width}: {w:?} is not a whole word\n{text}"
                );
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
}
