//! The shape of the code: no function in src/ runs past `LIMIT` lines unless the comment
//! above it says why it is long (the word "long" in its doc or line comments).
//!
//! A function is found by a line starting (after indentation and `pub`/`pub(crate)`/`const`)
//! with `fn NAME`; it ends at the first later line holding only `}` at the same indentation,
//! as rustfmt writes it. Unit tests (after `mod tests`) are left out.
//!
//! Also the layering: nothing under src/capture, src/tcp, src/tls or src/kafka uses render,
//! flags, sinks or the CLI; the rooms of src/kafka use one another one way only (`ROOMS`); and
//! no renderer, filter or fact collector tests a node's name or type against a literal beyond
//! the debts listed in `NAME_TESTS_ALLOWED`, which only shrink.

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

/// Paths a module of the decoding side may not use: the decoder knows nothing of how its
/// results are shown, chosen or written.
const OUTER: [&str; 7] = [
    "crate::render",
    "crate::flags",
    "crate::sinks",
    "crate::cli",
    "crate::hex_run",
    "crate::pipeline",
    "crate::subcommands",
];

/// Lines of `path` that name a module of the outer side: (line number, text).
fn outward_uses(path: &Path) -> Vec<(usize, String)> {
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| OUTER.iter().any(|o| l.contains(o)))
        .map(|(i, l)| (i + 1, l.trim().to_string()))
        .collect()
}

#[test]
fn capture_tcp_tls_and_kafka_use_nothing_of_the_outer_side() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for dir in ["capture", "tcp", "tls", "kafka"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 20, "src/ not found");
    let found: Vec<_> = files
        .iter()
        .flat_map(|f| {
            outward_uses(f)
                .into_iter()
                .map(move |(n, l)| format!("{}:{n}: {l}", f.display()))
        })
        .collect();
    assert!(
        found.is_empty(),
        "the decoding side uses render, flags, sinks or the CLI: {found:#?}"
    );
}

/// The rooms of src/kafka, in the order data moves through them, and the rooms each may use:
/// arrows go one way (src/kafka/mod.rs says why each arrow is there).
const ROOMS: [(&str, &[&str]); 5] = [
    ("spec", &[]),
    ("meaning", &["spec"]),
    ("walk", &["spec", "meaning"]),
    ("records", &["spec", "meaning", "walk"]),
    ("conversation", &["spec", "meaning", "walk", "records"]),
];

/// Lines of `path`, a file of room `room`, that reach a room it may not use (by a
/// `crate::kafka::ROOM` path), or leave their room by `super::` (in a room's `mod.rs`) or
/// `super::super::` (in its other files), or use what src/kafka/mod.rs re-exports (which
/// hides the room it comes from). Unit tests are left out.
fn room_trespasses(path: &Path, room: &str, allowed: &[&str]) -> Vec<(usize, String)> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let top = path.file_name().is_some_and(|n| n == "mod.rs");
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("mod tests") {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        let escapes = if top {
            line.contains("super::")
        } else {
            line.contains("super::super")
        };
        let reaches = line.match_indices("crate::kafka::").any(|(at, m)| {
            let rest = &line[at + m.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            name != room && !allowed.contains(&name.as_str())
        });
        if escapes || reaches {
            found.push((i + 1, t.to_string()));
        }
    }
    found
}

#[test]
fn the_rooms_of_kafka_use_one_another_one_way() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/kafka");
    let mut checked = 0;
    let mut found = Vec::new();
    for (room, allowed) in ROOMS {
        let mut files = Vec::new();
        rust_files(&root.join(room), &mut files);
        assert!(!files.is_empty(), "no room {room}");
        for f in &files {
            checked += 1;
            found.extend(
                room_trespasses(f, room, allowed)
                    .into_iter()
                    .map(|(n, l)| format!("{}:{n}: {l}", f.display())),
            );
        }
    }
    // Every file of src/kafka but mod.rs and example.rs lies in a room.
    let mut all = Vec::new();
    rust_files(&root, &mut all);
    assert_eq!(
        checked + 2,
        all.len(),
        "a file of src/kafka outside the rooms"
    );
    assert!(
        found.is_empty(),
        "arrows between rooms the wrong way: {found:#?}"
    );
}

/// Tests of a node's (or a field's) name or type against a literal, and children taken by
/// position (`children.get(2)`, `children[0]`): what renderers, filters and fact collectors
/// must not do (they read a node's kind and shape and the role of its field).
const NAME_TESTS: [&str; 16] = [
    ".name == \"",
    ".name != \"",
    "name.as_ref() == \"",
    "name.as_str(), \"",
    ".ty == \"",
    ".ty != \"",
    "ty.as_ref() == \"",
    ".name.starts_with(\"",
    ".name.ends_with(\"",
    ".name.contains(\"",
    "name() == \"",
    "contains(\"Header\")",
    ".child(\"",
    "field(",
    "children.get(",
    "children[",
];

/// Lines of `path` (before its unit tests, comments left out) that test a name or type
/// against a literal: (line number, text). `field(x, "Name")` counts when a literal is its
/// second argument.
fn name_tests(path: &Path) -> Vec<(usize, String)> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("mod tests") {
            break;
        }
        if t.starts_with("//") {
            continue;
        }
        let hit = NAME_TESTS.iter().any(|p| match *p {
            "field(" => line.match_indices("field(").any(|(at, _)| {
                let call = &line[at..];
                let args = call.split(')').next().unwrap_or("");
                !line[..at].ends_with("fn ") && args.contains(", \"")
            }),
            "children.get(" | "children[" => line
                .match_indices(*p)
                .any(|(at, m)| line[at + m.len()..].starts_with(|c: char| c.is_ascii_digit())),
            p => line.contains(p),
        });
        if hit {
            found.push((i + 1, t.to_string()));
        }
    }
    found
}

/// Files that still test names, with how many lines do: each is a debt, and the count may
/// only go down (lower it here when it does). A file not listed may have none.
const NAME_TESTS_ALLOWED: [(&str, usize); 0] = [];

#[test]
fn renderers_filters_and_fact_collectors_do_not_test_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src/render", "src/filter", "src/analyses"] {
        rust_files(&root.join(dir), &mut files);
    }
    rust_files(&root.join("src/sinks"), &mut files);
    files.push(root.join("src/kafka/meaning/facts.rs"));
    files.push(root.join("src/kafka/walk/collect.rs"));
    files.push(root.join("src/kafka/walk/tree_facts.rs"));
    files.push(root.join("src/kafka/conversation/topics.rs"));
    assert!(files.len() > 20, "src/ not found");
    let mut over = Vec::new();
    let mut under = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(root)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        let found = name_tests(f);
        let allowed = NAME_TESTS_ALLOWED
            .iter()
            .find(|(p, _)| *p == rel)
            .map_or(0, |(_, n)| *n);
        if found.len() > allowed {
            over.push((rel, allowed, found.len(), found));
        } else if found.len() < allowed {
            under.push((rel, allowed, found.len()));
        }
    }
    assert!(
        over.is_empty(),
        "names or types tested against literals (read the node's kind or its field's role \
         instead): {over:#?}"
    );
    assert!(
        under.is_empty(),
        "fewer name tests than allowed: lower NAME_TESTS_ALLOWED to match (file, allowed, found): \
         {under:?}"
    );
}

#[test]
fn the_scans_find_an_outward_use_and_a_name_test() {
    let dir = std::env::temp_dir().join(format!("kdissect-layers-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let inward = dir.join("inward.rs");
    fs::write(
        &inward,
        "use super::node::Node;\n// not crate::render, a comment\nfn f() {}\n",
    )
    .unwrap();
    let outward = dir.join("outward.rs");
    fs::write(&outward, "use crate::render::tree;\nfn f() {}\n").unwrap();
    assert!(outward_uses(&inward).is_empty());
    assert_eq!(outward_uses(&outward).len(), 1);
    let clean = dir.join("clean.rs");
    fs::write(
        &clean,
        "fn f(n: &Node) -> bool {\n    n.kind == NodeKind::Array && role(n) == Role::Topics\n}\n\
         fn field(n: &Node, id: FieldId) {}\n#[cfg(test)]\nmod tests {\n    \
         fn t() { assert!(n.name == \"x\"); }\n}\n",
    )
    .unwrap();
    let names = dir.join("names.rs");
    fs::write(
        &names,
        "fn f(n: &Node) -> bool {\n    n.name == \"Topics\" || n.ty == \"struct\"\n}\n\
         fn g(b: &Node) { let t = field(b, \"TopicId\"); }\n\
         fn h(n: &Node) { n.name.starts_with(\"Request\"); }\n\
         fn p(n: &Node) { n.children.get(2); }\n\
         fn q(n: &Node) { n.children[0]; n.children.get(i); }\n",
    )
    .unwrap();
    assert!(name_tests(&clean).is_empty(), "{:?}", name_tests(&clean));
    assert_eq!(name_tests(&names).len(), 5, "{:?}", name_tests(&names));
    let walk = dir.join("walk.rs");
    fs::write(
        &walk,
        "use crate::kafka::spec::schema::Role;
use crate::kafka::conversation::stream::Tracker;
         use super::super::records;
use crate::kafka::Direction;
use super::node::Node;
         // crate::kafka::conversation in a comment
#[cfg(test)]
mod tests {
             use crate::kafka::conversation::frames;
}
",
    )
    .unwrap();
    let found = room_trespasses(&walk, "walk", &["spec", "meaning"]);
    assert_eq!(
        found.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        [2, 3, 4],
        "{found:?}"
    );
    let _ = fs::remove_dir_all(&dir);
}
