//! The spec tables (src/kafka/spec/tables/) and the walks (src/kafka/walk/generated/walks/)
//! are what the generator (codegen/) writes from schema/ and schema-src/records.json today: a
//! spec changed without running `cargo run -p kdissect-codegen`, a table or a walk edited by
//! hand, or a file the generator no longer writes, fails here. And the tables say
//! what their files say, read as JSON the way the runtime read them before they were
//! generated (`parse_spec`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use kdissect::kafka::schema::{
    data_files, header_files, metadata_files, parse_spec, registry, spec_files, Direction,
    MessageSpec,
};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The first line where two texts differ, for the failure message.
fn first_difference(a: &str, b: &str) -> String {
    let line = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or_else(|| a.lines().count().min(b.lines().count()));
    format!(
        "line {}: checked in {:?}, generated {:?}",
        line + 1,
        a.lines().nth(line),
        b.lines().nth(line)
    )
}

/// Every generated file, against the checked-in one.
fn stale(root: &Path) -> Vec<String> {
    let generated = kdissect_codegen::generate(root).expect("the generator runs");
    let mut problems = Vec::new();
    for (path, text) in &generated {
        match std::fs::read_to_string(root.join(path)) {
            Ok(old) if old == *text => {}
            Ok(old) => problems.push(format!(
                "{} differs ({})",
                path.display(),
                first_difference(&old, text)
            )),
            Err(e) => problems.push(format!("{} is missing: {e}", path.display())),
        }
    }
    let made: Vec<&PathBuf> = generated.iter().map(|(p, _)| p).collect();
    for old in kdissect_codegen::existing(root) {
        if !made.contains(&&old) {
            problems.push(format!("{} is not generated any more", old.display()));
        }
    }
    problems
}

#[test]
fn checked_in_tables_and_walks_are_what_the_generator_writes() {
    let problems = stale(root());
    assert!(
        problems.is_empty(),
        "run `cargo run -p kdissect-codegen`: {problems:#?}"
    );
}

/// Copies what the generator reads and the tables into a temporary tree.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// The check above can fail: a table or a walk edited by hand, a spec changed without
/// regenerating, and a table or walk file left over are each caught, in a copy of the tree.
#[test]
fn an_edited_table_walk_or_spec_is_caught() {
    let tmp = std::env::temp_dir().join(format!("kdissect-codegen-fresh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    for dir in [
        "schema",
        "schema-src",
        kdissect_codegen::TABLES,
        kdissect_codegen::WALKS,
    ] {
        copy_tree(&root().join(dir), &tmp.join(dir));
    }
    assert!(stale(&tmp).is_empty(), "the copy is fresh");

    let table = tmp
        .join(kdissect_codegen::TABLES)
        .join("metadata_response.rs");
    let text = std::fs::read_to_string(&table).unwrap();
    std::fs::write(
        &table,
        text.replacen("\"ThrottleTimeMs\"", "\"ThrottleMs\"", 1),
    )
    .unwrap();
    let problems = stale(&tmp);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("tables/metadata_response.rs differs"),
        "{problems:?}"
    );
    std::fs::write(&table, &text).unwrap();

    // A walk edited by hand: an error code no longer read as one.
    let walk = tmp
        .join(kdissect_codegen::WALKS)
        .join("metadata_response.rs");
    let code = std::fs::read_to_string(&walk).unwrap();
    assert!(code.contains("d.error_code(f, x);"));
    std::fs::write(&walk, code.replacen("d.error_code(f, x);", "", 1)).unwrap();
    let problems = stale(&tmp);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("walks/metadata_response.rs differs"),
        "{problems:?}"
    );
    std::fs::write(&walk, &code).unwrap();

    let spec = tmp.join("schema/MetadataResponse.json");
    let json = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(
        &spec,
        json.replacen(
            "\"validVersions\": \"0-13\"",
            "\"validVersions\": \"0-14\"",
            1,
        ),
    )
    .unwrap();
    assert!(json.contains("\"validVersions\": \"0-13\""));
    // Its table, the walks' dispatch (a version more) and its walks (a named v14).
    let problems = stale(&tmp);
    for what in [
        "tables/metadata_response.rs differs",
        "walks/mod.rs differs",
        "walks/metadata_response.rs differs",
    ] {
        assert!(
            problems.iter().any(|p| p.contains(what)),
            "a spec changed without regenerating: {what} in {problems:#?}"
        );
    }
    std::fs::write(&spec, &json).unwrap();

    // A file left over in either tree (each run of the generator takes a while: both at once).
    let dirs = [kdissect_codegen::TABLES, kdissect_codegen::WALKS];
    for dir in dirs {
        std::fs::write(tmp.join(dir).join("legacy").join("left_over.rs"), "").unwrap();
    }
    let problems = stale(&tmp);
    assert_eq!(problems.len(), 2, "{problems:?}");
    for dir in dirs {
        let left = format!("{dir}/legacy/left_over.rs is not generated any more");
        assert!(problems.contains(&left), "{left} in {problems:?}");
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// A generated table against its file read as JSON (its walk index is the generator's,
/// which `parse_spec` does not know).
fn same(table: &MessageSpec, text: &str, file: &str) {
    let parsed = parse_spec(text).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(
        MessageSpec {
            walk: table.walk,
            ..parsed
        },
        *table,
        "{file}"
    );
}

#[test]
fn every_table_says_what_its_file_says() {
    let reg = registry();
    let mut seen = 0;
    for (i, (file, text)) in spec_files().enumerate() {
        let parsed = parse_spec(text).unwrap();
        let table = reg
            .message_specs()
            .find(|s| s.walk == Some(u16::try_from(i).unwrap()))
            .unwrap_or_else(|| panic!("no table for {file}"));
        assert_eq!(
            (table.api_key, table.direction),
            (parsed.api_key, parsed.direction),
            "{file}"
        );
        same(table, text, file);
        seen += 1;
    }
    assert_eq!(seen, reg.message_specs().count());
    for (file, text) in header_files() {
        let parsed = parse_spec(text).unwrap();
        let table = reg
            .header_specs()
            .find(|s| s.direction == parsed.direction && s.valid_versions == parsed.valid_versions)
            .unwrap_or_else(|| panic!("no table for headers/{file}"));
        same(table, text, file);
    }
    for (file, text) in data_files() {
        let parsed = parse_spec(text).unwrap();
        same(reg.data(parsed.name).expect("a data table"), text, file);
    }
    for (file, text) in metadata_files() {
        let parsed = parse_spec(text).unwrap();
        same(
            reg.metadata_record(parsed.api_key)
                .expect("a metadata table"),
            text,
            file,
        );
    }
    // The index puts an API's current table first.
    let fetch = reg.get(1, Direction::Request).unwrap();
    assert!(reg
        .message_specs()
        .filter(|s| s.api_key == 1 && s.direction == Direction::Request)
        .all(|s| s.max_version() <= fetch.max_version()));
}
