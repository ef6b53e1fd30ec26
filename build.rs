//! Embeds every message spec under `schema/` (and `schema/legacy/`) so that adding an API is
//! adding a JSON file: no Rust code lists the files by hand.
use std::{env, fs, path::Path};

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

fn main() {
    println!("cargo:rerun-if-changed=schema");
    println!("cargo:rerun-if-changed=schema/legacy");
    let mut names = Vec::new();
    collect(Path::new("schema"), "", &mut names);
    names.sort();
    let mut out = String::from("pub(crate) static SPEC_FILES: &[(&str, &str)] = &[\n");
    for n in &names {
        println!("cargo:rerun-if-changed=schema/{n}");
        out.push_str(&format!(
            "    ({n:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/schema/{n}\"))),\n"
        ));
    }
    out.push_str("];\n");
    let dest = Path::new(&env::var("OUT_DIR").expect("OUT_DIR")).join("spec_files.rs");
    fs::write(dest, out).expect("write spec_files.rs");
}
