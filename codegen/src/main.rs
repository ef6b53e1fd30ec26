//! `cargo run -p kdissect-codegen [ROOT]`: writes the spec tables and the walks of the
//! kdissect crate at ROOT (default: the workspace, this crate's parent) from its schema/ and
//! schema-src/records.json, and removes the files of either the specs no longer make.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
        PathBuf::from,
    );
    let files = match kdissect_codegen::generate(&root) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("kdissect-codegen: {e}");
            return ExitCode::FAILURE;
        }
    };
    for old in kdissect_codegen::existing(&root) {
        if !files.iter().any(|(p, _)| *p == old) {
            if let Err(e) = std::fs::remove_file(root.join(&old)) {
                eprintln!("kdissect-codegen: {}: {e}", old.display());
                return ExitCode::FAILURE;
            }
        }
    }
    for (path, text) in &files {
        let path = root.join(path);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text));
        if let Err(e) = written {
            eprintln!("kdissect-codegen: {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!(
        "kdissect-codegen: {} files under {} and {}",
        files.len(),
        root.join(kdissect_codegen::TABLES).display(),
        root.join(kdissect_codegen::WALKS).display()
    );
    ExitCode::SUCCESS
}
