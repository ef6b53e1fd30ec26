//! scripts/gen-schemas.py on specs shaped as Kafka 4.5's (trunk since KAFKA-20923): the
//! `headerVersions` maps are kept, checked, and read by kdissect as the header rule;
//! schema-src/ahead.json fills in only what a source lacks, and says when a source has made an
//! entry redundant. Needs `python3` on the PATH.

use kdissect::kafka::schema::parse_spec;
use std::path::{Path, PathBuf};
use std::process::Command;

const REQUEST_HEADER_4_5: &str = r#"{
  "type": "header", "name": "RequestHeader",
  // Version 3 adds the client instance id (KIP-1313).
  "validVersions": "1-3", "flexibleVersions": "2+",
  "fields": [
    { "name": "RequestApiKey", "type": "int16", "versions": "0+" },
    { "name": "RequestApiVersion", "type": "int16", "versions": "0+" },
    { "name": "CorrelationId", "type": "int32", "versions": "0+" },
    { "name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+", "flexibleVersions": "none" },
    { "name": "ClientInstanceId", "type": "uuid", "versions": "3+", "taggedVersions": "3+", "tag": 0 }
  ]
}"#;

const RESPONSE_HEADER: &str = r#"{
  "type": "header", "name": "ResponseHeader", "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [ { "name": "CorrelationId", "type": "int32", "versions": "0+" } ]
}"#;

fn offset_delete(header_versions: &str) -> String {
    format!(
        r#"{{ "apiKey": 47, "type": "request", "name": "OffsetDeleteRequest",
  "validVersions": "0-1", "flexibleVersions": "none"{header_versions},
  "fields": [ {{ "name": "GroupId", "type": "string", "versions": "0+" }} ] }}"#
    )
}

const METADATA_4_5: &str = r#"{ "apiKey": 3, "type": "request", "name": "MetadataRequest",
  "validVersions": "0-13", "flexibleVersions": "9+", "headerVersions": { "0-8": "1", "9+": "2" },
  "fields": [ { "name": "AllowAutoTopicCreation", "type": "bool", "versions": "4+" } ] }"#;

/// A folder of specs, and what the script says and writes from it.
struct Run {
    code: Option<i32>,
    stderr: String,
    out: PathBuf,
}

fn generate(tag: &str, specs: &[(&str, &str)]) -> Run {
    let base = std::env::temp_dir().join(format!("kdissect-gen-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (src, out) = (base.join("src"), base.join("out"));
    std::fs::create_dir_all(&src).expect("mkdir");
    for (name, text) in specs {
        std::fs::write(src.join(name), text).expect("write spec");
    }
    let none = base.join("none.json");
    std::fs::write(&none, "{}").expect("write");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("python3")
        .arg(root.join("scripts/gen-schemas.py"))
        .arg("--new")
        .arg(&src)
        .arg("--out")
        .arg(&out)
        .arg("--content")
        .arg(&none)
        .arg("--enums")
        .arg(&none)
        .current_dir(root)
        .output()
        .expect("python3 scripts/gen-schemas.py");
    Run {
        code: o.status.code(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        out,
    }
}

fn read(run: &Run, rel: &str) -> String {
    std::fs::read_to_string(run.out.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn header_version_maps_are_kept_and_read_as_the_header_rule() {
    let od = offset_delete(r#", "headerVersions": { "0": "1", "1+": "3" }"#);
    let run = generate(
        "trunk",
        &[
            ("RequestHeader.json", REQUEST_HEADER_4_5),
            ("ResponseHeader.json", RESPONSE_HEADER),
            ("OffsetDeleteRequest.json", &od),
            ("MetadataRequest.json", METADATA_4_5),
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let od = parse_spec(&read(&run, "OffsetDeleteRequest.json")).expect("spec");
    let got: Vec<Option<i16>> = [0, 1, 7].iter().map(|&v| od.header_version(v)).collect();
    assert_eq!(got, vec![Some(1), Some(3), Some(3)]);
    let md = parse_spec(&read(&run, "MetadataRequest.json")).expect("spec");
    assert_eq!(
        (md.header_version(8), md.header_version(9)),
        (Some(1), Some(2))
    );
    // The source has what ahead.json adds: it is not added twice, and the script says the
    // entries can go.
    let header = read(&run, "headers/RequestHeader.json");
    assert_eq!(header.matches("ClientInstanceId").count(), 1, "{header}");
    assert!(
        run.stderr.contains(
            "the source has headers.RequestHeader.ClientInstanceId now: remove the entry"
        ) && run
            .stderr
            .contains("the source has headerVersions.OffsetDeleteRequest now"),
        "{}",
        run.stderr
    );
    assert!(!read(&run, "MANIFEST.txt").contains("# ahead:"));
}

#[test]
fn a_source_without_the_maps_gets_what_ahead_json_holds() {
    let od = offset_delete("");
    let old_header = REQUEST_HEADER_4_5
        .replace("\"1-3\"", "\"1-2\"")
        .replace(
            r#",
    { "name": "ClientInstanceId", "type": "uuid", "versions": "3+", "taggedVersions": "3+", "tag": 0 }"#,
            "",
        );
    let run = generate(
        "release",
        &[
            ("RequestHeader.json", &old_header),
            ("ResponseHeader.json", RESPONSE_HEADER),
            ("OffsetDeleteRequest.json", &od),
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let od = parse_spec(&read(&run, "OffsetDeleteRequest.json")).expect("spec");
    assert_eq!(
        (od.header_version(0), od.header_version(1)),
        (Some(1), Some(3))
    );
    let header = parse_spec(&read(&run, "headers/RequestHeader.json")).expect("spec");
    assert!(header.valid_versions.contains(3));
    let id = header
        .fields
        .iter()
        .find(|f| f.name == "ClientInstanceId")
        .expect("field");
    assert_eq!(id.tag, Some(0));
    assert!(read(&run, "MANIFEST.txt")
        .contains("# ahead: schema-src/ahead.json: OffsetDeleteRequest headerVersions"));
    assert!(read(&run, "headers/MANIFEST.txt").contains("RequestHeader v3 (ClientInstanceId)"));
}

#[test]
fn a_map_kafka_would_refuse_is_refused() {
    for (map, why) in [
        (r#"{ "1+": "2" }"#, "versions 0 to 0 have no header version"),
        (r#"{ "0": "1", "0+": "2" }"#, "version 0 is mapped twice"),
        (r#"{ "0": "1" }"#, "the last range must be open"),
        (r#"{ "0": "2", "1+": "1" }"#, "header versions decrease"),
        (
            r#"{ "0+": "4" }"#,
            "header version 4 is not in the header table",
        ),
    ] {
        let od = offset_delete(&format!(r#", "headerVersions": {map}"#));
        let run = generate(
            "bad",
            &[
                ("RequestHeader.json", REQUEST_HEADER_4_5),
                ("ResponseHeader.json", RESPONSE_HEADER),
                ("OffsetDeleteRequest.json", &od),
            ],
        );
        assert_ne!(run.code, Some(0), "{map}");
        assert!(
            run.stderr.contains("OffsetDeleteRequest: headerVersions") && run.stderr.contains(why),
            "{map}: {}",
            run.stderr
        );
    }
}
