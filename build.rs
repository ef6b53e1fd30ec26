//! Embeds every message spec under `schema/` (and `schema/legacy/`) so that adding an API is
//! adding a JSON file: no Rust code lists the files by hand. The two header specs, under
//! `schema/headers/`, the embedded data messages (`schema/data/`) and the KRaft metadata
//! records (`schema/metadata/`) are embedded apart, so that every file of the first list is
//! one direction of one API.
//!
//! These texts are for tests (the specs themselves are the static tables that codegen/
//! generates, src/kafka/spec/tables/). It also writes one walk per (API, direction,
//! version) from those specs (build/walks.rs), found by the index of its file in
//! SPEC_FILES, the order codegen gives each table's `walk`.
use std::{env, fs, path::Path};

// The spec language's version ranges and types, shared with the crate.
#[allow(dead_code)]
#[path = "src/kafka/spec/versions.rs"]
mod versions;
// The walks generated from the message specs (src/kafka/walk/generated.rs).
#[path = "build/walks.rs"]
mod walks;

/// Folders inside `schema/` with specs that are not API messages, and their lists' names.
const APART: [(&str, &str); 3] = [
    ("headers", "HEADER_FILES"),
    ("data", "DATA_FILES"),
    ("metadata", "METADATA_FILES"),
];

fn collect(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let r = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        if path.is_dir() {
            collect(&path, &r, out);
        } else if name.ends_with(".json") {
            out.push(r);
        }
    }
}

/// A static list of (name, text) of the files `names` under `schema/`, named without `strip`.
fn list(var: &str, names: &[String], strip: &str) -> String {
    let mut out = format!("pub(crate) static {var}: &[(&str, &str)] = &[\n");
    for n in names {
        println!("cargo:rerun-if-changed=schema/{n}");
        let shown = n.strip_prefix(strip).unwrap_or(n);
        out.push_str(&format!(
            "    ({shown:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/schema/{n}\"))),\n"
        ));
    }
    out.push_str("];\n");
    out
}

fn main() {
    println!("cargo:rerun-if-changed=schema");
    println!("cargo:rerun-if-changed=schema/legacy");
    for (dir, _) in APART {
        println!("cargo:rerun-if-changed=schema/{dir}");
        println!("cargo:rerun-if-changed=schema/{dir}/legacy");
    }
    let mut names = Vec::new();
    collect(Path::new("schema"), "", &mut names);
    names.sort();
    let mut out = String::new();
    for (dir, var) in APART {
        let prefix = format!("{dir}/");
        let (these, rest): (Vec<String>, Vec<String>) =
            names.into_iter().partition(|n| n.starts_with(&prefix));
        out.push_str(&list(var, &these, &prefix));
        names = rest;
    }
    out.push_str(&list("SPEC_FILES", &names, ""));
    println!("cargo:rerun-if-changed=build/walks.rs");
    println!("cargo:rerun-if-changed=src/kafka/spec/versions.rs");
    let specs: Vec<Option<walks::Spec>> = names
        .iter()
        .map(|n| {
            let text = fs::read_to_string(Path::new("schema").join(n)).expect("read a spec");
            walks::parse(&text).ok()
        })
        .collect();
    let dir = env::var("OUT_DIR").expect("OUT_DIR");
    fs::write(Path::new(&dir).join("spec_files.rs"), out).expect("write spec_files.rs");
    fs::write(Path::new(&dir).join("walks.rs"), generate_walks(&specs)).expect("write walks.rs");
}

/// The walks of every message spec, indexed as SPEC_FILES lists them. A spec that does not
/// parse gets none (the registry reports it when it loads).
fn generate_walks(specs: &[Option<walks::Spec>]) -> String {
    let mut g = walks::Gen::default();
    for (i, spec) in specs.iter().enumerate() {
        if let Some(spec) = spec {
            g.spec(i, spec);
        }
    }
    g.source()
}
