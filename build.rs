//! Embeds every message spec under `schema/` (and `schema/legacy/`) so that adding an API is
//! adding a JSON file: no Rust code lists the files by hand. The two header specs, under
//! `schema/headers/`, the embedded data messages (`schema/data/`) and the KRaft metadata
//! records (`schema/metadata/`) are embedded apart, so that every file of the first list is
//! one direction of one API.
//!
//! These texts are for tests: the specs themselves are the static tables, and their walks the
//! functions, that codegen/ generates (src/kafka/spec/tables/, src/kafka/walk/generated/walks/).
use std::{env, fs, path::Path};

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
    let dir = env::var("OUT_DIR").expect("OUT_DIR");
    fs::write(Path::new(&dir).join("spec_files.rs"), out).expect("write spec_files.rs");
}
