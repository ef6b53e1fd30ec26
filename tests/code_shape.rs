//! The shape of the code: no function in src/ runs past `LIMIT` lines unless the comment
//! above it says why it is long (the word "long" in its doc or line comments).
//!
//! A function is found by a line starting (after indentation and `pub`/`pub(crate)`/`const`)
//! with `fn NAME`; it ends at the first later line holding only `}` at the same indentation,
//! as rustfmt writes it. Unit tests (after `mod tests`) are left out.

use std::fs;
use std::path::{Path, PathBuf};

const LIMIT: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The indentation and name of a function starting on this line.
fn fn_start(line: &str) -> Option<(usize, &str)> {
    let body = line.trim_start();
    let indent = line.len() - body.len();
    let mut rest = body;
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "unsafe "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let name = rest.split(['(', '<', ' ']).next()?;
    Some((indent, name))
}

/// Functions longer than LIMIT lines without a reason: (file:line name, length).
fn long_functions(path: &Path) -> Vec<(String, usize)> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start().starts_with("mod tests") {
            break;
        }
        let Some((indent, name)) = fn_start(line) else {
            i += 1;
            continue;
        };
        if line.trim_end().ends_with(';') {
            i += 1;
            continue;
        }
        let close = format!("{}}}", " ".repeat(indent));
        let end = (i..lines.len()).find(|&j| lines[j] == close).unwrap_or(i);
        let len = end - i + 1;
        if len > LIMIT {
            let reason = lines[..i]
                .iter()
                .rev()
                .take_while(|l| {
                    let t = l.trim_start();
                    t.starts_with("//") || t.starts_with("#[")
                })
                .any(|l| l.to_lowercase().contains("long"));
            if !reason {
                found.push((format!("{}:{} {name}", path.display(), i + 1), len));
            }
        }
        i = end.max(i) + 1;
    }
    found
}

#[test]
fn no_function_is_long_without_saying_why() {
    let mut files = Vec::new();
    rust_files(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src").as_path(),
        &mut files,
    );
    assert!(files.len() > 20, "src/ not found");
    let long: Vec<_> = files.iter().flat_map(|f| long_functions(f)).collect();
    assert!(
        long.is_empty(),
        "functions over {LIMIT} lines without a comment saying why: {long:?}"
    );
}

#[test]
fn the_scan_finds_a_long_function() {
    // The check itself: a 90-line function is found, and not once its comment says why.
    let dir = std::env::temp_dir().join(format!("kdissect-shape-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let body = "    let x = 1;\n".repeat(90);
    let plain = dir.join("plain.rs");
    fs::write(&plain, format!("/// Does it.\npub fn big() {{\n{body}}}\n")).unwrap();
    let excused = dir.join("excused.rs");
    fs::write(
        &excused,
        format!("/// Long: one table, read top to bottom.\nfn big() {{\n{body}}}\n"),
    )
    .unwrap();
    assert_eq!(long_functions(&plain).len(), 1);
    assert!(long_functions(&excused).is_empty());
    let _ = fs::remove_dir_all(&dir);
}
