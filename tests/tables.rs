//! The `--stats --analyses` tables on the samples and on hostile captures: numbers are never
//! cut at any width; at 100 columns no identifier is cut while a number column could be
//! narrower; a cut identifier keeps its head and tail; wire text with terminal controls is
//! escaped in every table, and wide characters keep the lines aligned.
//!
//! Hostile captures come from scripts/hostile/generate.py (`client-ids`) and
//! scripts/hostile/wide_tables.py (`hostile-names`, made from a sample); both need `python3`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use unicode_width::UnicodeWidthStr;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `--stats -q --analyses FILE` through a pipe with COLUMNS=`columns`.
fn tables(file: &str, columns: u16) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--no-progress", "--color", "never", "--stats", "-q"])
        .args(["--analyses", file])
        // Every connection: the tests look for the wide client ids among them.
        .args(["--stats-connections", "all"])
        .env("COLUMNS", columns.to_string())
        .output()
        .expect("run kdissect");
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// The samples of a cluster and of the analyses.
fn samples() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("samples"))
        .expect("samples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            (name.starts_with("cluster-") || name.starts_with("ana-")) && name.ends_with(".pcap")
        })
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    files
}

/// One table as drawn: its columns' content widths, its header lines and its data lines,
/// each line split into its cells as drawn (padding included).
struct Drawn<'a> {
    widths: Vec<usize>,
    header: Vec<Vec<&'a str>>,
    rows: Vec<Vec<&'a str>>,
}

impl Drawn<'_> {
    /// Per column, whether it holds right-aligned cells (numbers): a cell with more than
    /// the one space of padding before its text and just one after, and none with more
    /// after (left-aligned text may start with a space of its own: an empty client id
    /// first in a list).
    fn right_aligned(&self) -> Vec<bool> {
        let after = |cell: &str| cell.len() - cell.trim_end().len();
        let right =
            |cell: &str| !cell.trim().is_empty() && cell.starts_with("  ") && after(cell) == 1;
        let left = |cell: &str| !cell.trim().is_empty() && after(cell) >= 2;
        (0..self.widths.len())
            .map(|c| {
                let mut cells = self.rows.iter().filter_map(|r| r.get(c));
                cells.clone().any(|x| right(x)) && !cells.any(|x| left(x))
            })
            .collect()
    }
}

/// Every table of `text`.
fn parse(text: &str) -> Vec<Drawn<'_>> {
    let mut out = Vec::new();
    let mut cur: Option<Drawn> = None;
    let mut in_header = false;
    for l in text.lines() {
        if let Some(top) = l.strip_prefix('┌') {
            let widths = top
                .trim_end_matches('┐')
                .split('┬')
                .map(|s| s.chars().count().saturating_sub(2))
                .collect();
            cur = Some(Drawn {
                widths,
                header: Vec::new(),
                rows: Vec::new(),
            });
            in_header = true;
        } else if l.starts_with('╞') {
            in_header = false;
        } else if l.starts_with('└') {
            out.extend(cur.take());
        } else if let (Some(t), Some(inner)) = (cur.as_mut(), l.strip_prefix('│')) {
            let cells: Vec<&str> = inner.trim_end_matches('│').split('┆').collect();
            if in_header {
                t.header.push(cells);
            } else {
                t.rows.push(cells);
            }
        }
    }
    out
}

/// The number cells of every table (right-aligned columns), with how often each occurs.
fn number_cells(text: &str) -> HashMap<String, usize> {
    let mut n = HashMap::new();
    for t in parse(text) {
        let right = t.right_aligned();
        for r in &t.rows {
            for (c, cell) in r.iter().enumerate() {
                let v = cell.trim();
                if right.get(c) == Some(&true) && !v.is_empty() {
                    *n.entry(v.to_string()).or_default() += 1;
                }
            }
        }
    }
    n
}

/// Every cell's text of every table, with how often each occurs.
fn all_cells(text: &str) -> HashMap<String, usize> {
    let mut n = HashMap::new();
    for t in parse(text) {
        for cell in t.rows.iter().flatten() {
            let v = cell.trim();
            if !v.is_empty() {
                *n.entry(v.to_string()).or_default() += 1;
            }
        }
    }
    n
}

/// The words of the data rows of every table (wrapped text comes apart into its words).
fn data_words(text: &str) -> Vec<String> {
    parse(text)
        .iter()
        .flat_map(|t| t.rows.iter().flatten())
        .flat_map(|c| c.split(' '))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `cut` (`head…tail`) is `whole` with its middle taken out. The tail may be empty
/// only in a column too narrow for the wide character that ends `whole` (`cli…` for
/// `client クライアント` in 4 columns).
fn is_middle_cut_of(cut: &str, whole: &str) -> bool {
    let wide_end = whole
        .chars()
        .last()
        .is_some_and(|c| c.to_string().width() > 1);
    match cut.split_once('…') {
        Some((head, tail)) => {
            !head.is_empty()
                && (!tail.is_empty() || (wide_end && cut.width() <= 4))
                && whole.starts_with(head)
                && whole.ends_with(tail)
                && head.len() + tail.len() < whole.len()
        }
        None => false,
    }
}

/// At 60, 80, 100, 120 and 200 columns, on every cluster and analyses sample: every number
/// of the tables drawn as wide as their content is drawn whole; every line fits; a word cut
/// in a data row keeps its head and its tail around `…`; and at 100 columns or more, a table
/// that cuts a data word has every number column as narrow as its numbers (or the 3 columns
/// a header keeps).
#[test]
fn numbers_are_never_cut_and_identifiers_keep_head_and_tail() {
    let mut middle_cuts = 0;
    for f in samples() {
        let wide = tables(&f, 1000);
        let numbers = number_cells(&wide);
        assert!(!numbers.is_empty(), "{f}");
        let words: Vec<String> = data_words(&wide);
        let wide_cells = all_cells(&wide);
        for columns in [60u16, 80, 100, 120, 200] {
            let text = tables(&f, columns);
            let cells = all_cells(&text);
            for (n, count) in &numbers {
                let drawn = cells.get(n).copied().unwrap_or(0);
                assert!(
                    drawn >= *count,
                    "{f} at {columns}: the number {n:?} is drawn {drawn} times of {count}\n{text}"
                );
            }
            // Every line fits, but for a table whose columns are all as narrow as they go
            // (3 columns, or their numbers): ten columns need 61 at least.
            for t in parse(&text) {
                let drawn: usize = t.widths.iter().map(|w| w + 3).sum::<usize>() + 1;
                if drawn <= usize::from(columns) {
                    continue;
                }
                for (c, &w) in t.widths.iter().enumerate() {
                    // Numbers, unless a cell shows the column left-aligned: numbers as
                    // wide as their column show no alignment.
                    let cells = t.rows.iter().filter_map(|r| r.get(c));
                    let left = cells.clone().any(|x| {
                        let v = x.trim();
                        !v.is_empty() && x.starts_with(&format!(" {v}  "))
                    });
                    let numbers = cells
                        .filter(|_| !left)
                        .map(|x| x.trim().width())
                        .max()
                        .unwrap_or(0);
                    assert!(
                        w <= numbers.max(3),
                        "{f} at {columns}: {drawn} wide, column {c} is {w} wide\n{text}"
                    );
                }
            }

            // A word of text is cut alone; an identifier holding spaces as a whole.
            for t in parse(&text) {
                for cell in t.rows.iter().flatten() {
                    let cell = cell.trim();
                    if !cell.contains('…') || cell == "…" {
                        continue;
                    }
                    // A lone `…` ends a cell cut at its last line (render::table's
                    // MAX_CELL_LINES): no word is cut there.
                    let word_cut = cell
                        .split(' ')
                        .filter(|w| w.contains('…') && *w != "…")
                        .all(|w| words.iter().any(|x| is_middle_cut_of(w, x)));
                    assert!(
                        word_cut || wide_cells.keys().any(|x| is_middle_cut_of(cell, x)),
                        "{f} at {columns}: {cell:?} is not one with its middle cut\n{text}"
                    );
                    middle_cuts += 1;
                }
            }
            if columns < 100 {
                continue;
            }
            for t in parse(&text) {
                let cut = t
                    .rows
                    .iter()
                    .flatten()
                    .any(|c| c.split(' ').any(|w| w.contains('…') && w != "…"));
                if !cut {
                    continue;
                }
                for (c, right) in t.right_aligned().into_iter().enumerate() {
                    let data = t
                        .rows
                        .iter()
                        .filter_map(|r| r.get(c))
                        .map(|x| x.trim().width())
                        .max()
                        .unwrap_or(0);
                    assert!(
                        !right || t.widths[c] <= data.max(3),
                        "{f} at {columns}: an identifier is cut while number column {c} is \
                         {} wide for numbers {data} wide\n{text}",
                        t.widths[c]
                    );
                }
            }
        }
    }
    // The cluster's long ids are cut at 60 and 80.
    assert!(middle_cuts > 0);
}

/// At 100 columns (a pipe's width), the ids of the cluster samples are drawn whole in the
/// Connections table where they fit once the number columns give their spare width.
#[test]
fn at_100_columns_client_ids_are_whole() {
    let text = tables(
        &root().join("samples/cluster-steady.pcap").to_string_lossy(),
        100,
    );
    let conns = text.split("\nConnections\n").nth(1).expect("Connections");
    assert!(
        conns.contains("┆ cluster-streams-StreamThread-1-consumer ┆"),
        "{conns}"
    );
}

fn hostile(kind: &str, extra: &[&str]) -> String {
    let dir = std::env::temp_dir().join(format!("kdissect-tables-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join(format!("{kind}.pcap"));
    let st = Command::new("python3")
        .arg(root().join("scripts/hostile/wide_tables.py"))
        .args([kind, &out.to_string_lossy()])
        .args(extra)
        .current_dir(root())
        .status()
        .expect("python3 (the hostile inputs need Python 3)");
    assert!(st.success(), "wide_tables.py {kind}: {st}");
    out.to_string_lossy().into_owned()
}

/// Names made of terminal controls and wide characters: at every width, no control byte
/// (C0 but newline, DEL, C1) leaves kdissect in the tables, each name is shown escaped, and
/// every line of a table is as wide on a terminal as the others (wide characters counted
/// twice). The JSON keeps the names as JSON strings, escaped as JSON requires.
#[test]
fn wire_text_with_controls_is_escaped_in_every_table() {
    let f = hostile("hostile-names", &[]);
    for columns in [1000u16, 200, 100, 80, 60] {
        let text = tables(&f, columns);
        for c in text.chars() {
            assert!(
                c == '\n' || !(c.is_control()),
                "at {columns}: raw control {c:?}\n{text}"
            );
        }
        let tables_drawn = parse(&text);
        assert!(tables_drawn.len() >= 10, "{text}");
        assert_aligned(&text, &format!("at {columns}"));
        if columns >= 200 {
            for escaped in [
                r"\x1b]52;c;Y\x07t",
                r"\x1b[2J\x1b[Hg!",
                r"\r\n│ fake!\x07",
                r"\u{9b}2Jクラab",
                r"クライアン\x07\x1b",
            ] {
                assert!(text.contains(escaped), "{escaped} at {columns}\n{text}");
            }
        }
    }
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--no-progress", "--stats", "--json", "-q", "--analyses", &f])
        .output()
        .expect("run");
    let json = String::from_utf8(o.stdout).expect("UTF-8");
    assert!(!json.bytes().any(|b| b < 0x20 && b != b'\n'), "{json}");
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("JSON");
    let ids: Vec<&str> = v["stats"]["connections"]
        .as_array()
        .expect("connections")
        .iter()
        .filter_map(|c| c["client_id"].as_str())
        .collect();
    assert!(ids.contains(&"\r\n│ fake!\u{7}"), "{ids:?}");
}

/// Every table of `text` has lines equally wide on a terminal (wide characters counted two).
fn assert_aligned(text: &str, what: &str) {
    let mut widths: Vec<usize> = Vec::new();
    for l in text.lines() {
        if l.starts_with('┌') {
            widths.clear();
        }
        if l.starts_with(['┌', '│', '╞', '├', '└']) {
            widths.push(l.width());
        }
        if l.starts_with('└') {
            assert!(
                widths.iter().all(|&w| w == widths[0]),
                "{what}: {widths:?}\n{text}"
            );
        }
    }
}

/// Real client ids in Japanese, Chinese and accented Latin (librdkafka clients 'café',
/// 'クライアント', 'naïve-消费者-2'): measured by display width, so that every table stays
/// aligned, whole where there is room and cut in the middle where there is not.
#[test]
fn wide_characters_keep_the_lines_aligned() {
    let f = root().join("samples/issue35-nonascii.pcap");
    let f = f.to_string_lossy();
    let wide = tables(&f, 1000);
    let (words, cells) = (data_words(&wide), all_cells(&wide));
    for columns in [1000u16, 100, 80, 60] {
        let text = tables(&f, columns);
        assert_aligned(&text, &format!("at {columns}"));
        // A wide id is whole, or cut in its middle: never broken over two lines. (An
        // identifier holding spaces is cut as a whole: `confluen…-2.16.0`.)
        for t in parse(&text) {
            for cell in t.rows.iter().flatten().map(|c| c.trim()) {
                let whole_or_cut = |w: &str| {
                    words.iter().any(|x| x == w) || words.iter().any(|x| is_middle_cut_of(w, x))
                };
                let ok = cell.is_ascii()
                    || cell.split(' ').all(|w| w == "…" || whole_or_cut(w))
                    || cells.keys().any(|x| is_middle_cut_of(cell, x));
                assert!(ok, "{cell:?} at {columns}\n{text}");
            }
        }
        if columns >= 100 {
            let conns = text.split("\nConnections\n").nth(1).expect("Connections");
            for id in ["┆ クライアント ", "┆ naïve-消费者-2 ", "┆ café "] {
                assert!(conns.contains(id), "{id} at {columns}\n{conns}");
            }
        }
    }
}

/// `scripts/hostile/generate.py NAME` at small scale into a scratch file.
fn generated(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tables-hostile");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let out = dir.join(format!("{name}.{}.pcap", std::process::id()));
    let st = Command::new("python3")
        .arg(root().join("scripts/hostile/generate.py"))
        .arg(name)
        .arg(&out)
        .args(["--scale", "small"])
        .status()
        .expect("python3 (the hostile inputs need Python 3)");
    assert!(st.success(), "generate.py {name}: {st}");
    out.to_string_lossy().into_owned()
}

/// The hostile capture of many client ids (`client-ids`: 2,000 at small scale, 30,000 in
/// full), none announcing its software: the versions table lists them in a cell of
/// thousands of words, fitted to the width, every id whole. The fitting is linear in the
/// cells (render::table's unit test counts the measures); its time is measured in release,
/// never asserted here.
#[test]
fn thousands_of_client_ids_fit_the_width() {
    let f = generated("client-ids");
    for columns in [100u16, 80] {
        let text = tables(&f, columns);
        let versions = text
            .split("Version negotiation per client\n")
            .nth(1)
            .expect("versions table");
        assert!(versions.contains("client-00000"), "{versions}");
        // Every id listed, or the ones left out counted.
        assert!(
            versions.contains("client-01999")
                || versions.contains(" more")
                || versions.contains(" …"),
            "{versions}"
        );
        for l in text.lines() {
            assert!(l.width() <= usize::from(columns), "at {columns}: {l}");
        }
        assert_aligned(&text, &format!("at {columns}"));
        // No id is cut: each `client-` is followed by its five digits.
        for (i, _) in text.match_indices("client-") {
            let digits = text[i + 7..].bytes().take_while(u8::is_ascii_digit).count();
            assert_eq!(
                digits,
                5,
                "at {columns}: {}",
                &text[i..(i + 20).min(text.len())]
            );
        }
    }
}
