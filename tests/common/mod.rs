//! Helpers shared by the integration tests.
#![allow(dead_code)]

use kdissect::kafka::{Message, Node, NodeKind, Value};
use std::path::PathBuf;

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Bytes of a `tests/fixtures/vectors/*.hex` file.
pub fn vector(name: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(fixture(&format!("vectors/{name}"))).expect("vector file");
    kdissect::capture::hex::parse(&text).expect("vector hex")
}

/// Checks that every byte of the frame belongs to exactly one leaf, and that every group
/// spans exactly its children.
pub fn assert_tiles(msg: &Message) {
    let mut next = 0usize;
    for leaf in msg.root.leaves() {
        if leaf.kind == NodeKind::Error {
            assert_eq!(leaf.len, 0, "error node {} covers bytes", leaf.name);
            continue;
        }
        assert_eq!(
            leaf.offset, next,
            "leaf {} {} starts at 0x{:04x}, expected 0x{next:04x}",
            leaf.name, leaf.ty, leaf.offset
        );
        next = leaf.offset + leaf.len;
    }
    assert_eq!(
        next, msg.size,
        "leaves end at {next}, frame has {} bytes",
        msg.size
    );
    msg.root.walk(&mut |n, _| {
        if n.children.is_empty() {
            return;
        }
        let first = n.children.first().map(|c| c.offset).unwrap_or(n.offset);
        let last = n.children.iter().map(|c| c.end()).max().unwrap_or(n.offset);
        assert_eq!(
            first, n.offset,
            "group {} starts before its first child",
            n.name
        );
        assert_eq!(
            last,
            n.end(),
            "group {} [0x{:04x}, {}B] does not end with its children",
            n.name,
            n.offset,
            n.len
        );
    });
}

/// Follows a dotted path from the message body: `Brokers[1].Host`, `Topics[0].Partitions[2]`.
/// `X[i]` selects element i of array X.
pub fn get<'a>(msg: &'a Message, path: &str) -> &'a Node {
    try_get(msg, path).unwrap_or_else(|e| panic!("{e}"))
}

/// Like [`get`], but says what is missing instead of panicking.
pub fn try_get<'a>(msg: &'a Message, path: &str) -> Result<&'a Node, String> {
    let mut cur = msg
        .body()
        .ok_or_else(|| format!("no body in {}", msg.root.name))?;
    for part in path.split('.') {
        let (name, idx) = match part.split_once('[') {
            Some((n, rest)) => (
                n,
                Some(
                    rest.trim_end_matches(']')
                        .parse::<usize>()
                        .map_err(|e| format!("{path}: {e}"))?,
                ),
            ),
            None => (part, None),
        };
        cur = find_field(cur, name)
            .ok_or_else(|| format!("no {name} in {} (path {path})", cur.name))?;
        if let Some(i) = idx {
            let suffix = format!("[{i}]");
            cur = cur
                .children
                .iter()
                .find(|c| c.name.ends_with(&suffix))
                .ok_or_else(|| format!("no element {i} in {name} (path {path})"))?;
        }
    }
    Ok(cur)
}

/// A field by name among the children, looking through tagged-field wrappers.
fn find_field<'a>(n: &'a Node, name: &str) -> Option<&'a Node> {
    for c in &n.children {
        if c.name == name {
            if c.ty == "tagged_field" {
                return c.children.iter().find(|g| g.name == name);
            }
            return Some(c);
        }
    }
    None
}

pub fn has(msg: &Message, path: &str) -> bool {
    try_get(msg, path).is_ok()
}

pub fn int(msg: &Message, path: &str) -> i64 {
    match get(msg, path).value {
        Value::Int(i) => i,
        ref v => panic!("{path} is {v:?}, not an integer"),
    }
}

pub fn string(msg: &Message, path: &str) -> Option<String> {
    match &get(msg, path).value {
        Value::Str(s) => s.clone(),
        v => panic!("{path} is {v:?}, not a string"),
    }
}

pub fn boolean(msg: &Message, path: &str) -> bool {
    match get(msg, path).value {
        Value::Bool(b) => b,
        ref v => panic!("{path} is {v:?}, not a bool"),
    }
}

pub fn uuid(msg: &Message, path: &str) -> [u8; 16] {
    match get(msg, path).value {
        Value::Uuid(u) => u,
        ref v => panic!("{path} is {v:?}, not a uuid"),
    }
}

/// Element count of an array, `None` when null.
pub fn count(msg: &Message, path: &str) -> Option<usize> {
    match get(msg, path).value {
        Value::Array(n) => Some(n),
        Value::Null => None,
        ref v => panic!("{path} is {v:?}, not an array"),
    }
}

/// Integer elements of an array of ints.
pub fn ints(msg: &Message, path: &str) -> Option<Vec<i64>> {
    let n = get(msg, path);
    match n.value {
        Value::Null => None,
        Value::Array(_) => Some(
            n.children
                .iter()
                .filter(|c| c.kind != NodeKind::Length)
                .map(|c| match c.value {
                    Value::Int(i) => i,
                    ref v => panic!("{path} element is {v:?}"),
                })
                .collect(),
        ),
        ref v => panic!("{path} is {v:?}, not an array"),
    }
}
