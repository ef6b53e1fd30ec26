//! Embeds every message spec under `schema/` so that adding an API is adding a JSON file:
//! no Rust code lists the files by hand.
use std::{env, fs, path::Path};

fn main() {
    let dir = Path::new("schema");
    println!("cargo:rerun-if-changed=schema");
    let mut names: Vec<String> = fs::read_dir(dir)
        .expect("schema/ directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
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
