//! Every primitive of the spec language, through the generic decoder, in non-flexible and
//! flexible versions, from a spec made for the test.

use kdissect::kafka::message::decode_body_with;
use kdissect::kafka::schema::{parse_spec, MessageSpec};
use kdissect::kafka::{Node, RecordSet, Value};
use kdissect::render::value::record_set;

const SPEC: &str = r#"{
  "apiKey": 9000, "type": "request", "name": "AllTypesRequest",
  "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [
    { "name": "I8", "type": "int8", "versions": "0+" },
    { "name": "U16", "type": "uint16", "versions": "0+" },
    { "name": "U32", "type": "uint32", "versions": "0+" },
    { "name": "I64", "type": "int64", "versions": "0+" },
    { "name": "F64", "type": "float64", "versions": "0+" },
    { "name": "Data", "type": "bytes", "versions": "0+" },
    { "name": "NullData", "type": "bytes", "versions": "0+", "nullableVersions": "0+" },
    { "name": "Recs", "type": "records", "versions": "0+", "nullableVersions": "0+" },
    { "name": "Strs", "type": "[]string", "versions": "0+", "nullableVersions": "0+" },
    { "name": "Opt", "type": "Inner", "versions": "0+", "nullableVersions": "0+" },
    { "name": "Common", "type": "Shared", "versions": "0+" },
    { "name": "Late", "type": "int32", "versions": "1+", "taggedVersions": "1+", "tag": 4 }
  ],
  "commonStructs": [
    { "name": "Shared", "versions": "0+", "fields": [ { "name": "X", "type": "int16", "versions": "0+" } ] },
    { "name": "Inner", "versions": "0+", "fields": [ { "name": "Y", "type": "bool", "versions": "0+" } ] }
  ]
}"#;

fn spec() -> &'static MessageSpec {
    Box::leak(Box::new(parse_spec(SPEC).expect("spec")))
}

fn child<'a>(n: &'a Node, name: &str) -> &'a Node {
    n.children
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn common_prefix() -> Vec<u8> {
    let mut b = vec![0xfe]; // I8 = -2
    b.extend(0xfffeu16.to_be_bytes());
    b.extend(0xffff_fffeu32.to_be_bytes());
    b.extend((-5i64).to_be_bytes());
    b.extend(1.5f64.to_be_bytes());
    b
}

#[test]
fn non_flexible_version() {
    let mut b = common_prefix();
    b.extend(3i32.to_be_bytes());
    b.extend([1, 2, 3]); // Data
    b.extend((-1i32).to_be_bytes()); // NullData
    b.extend(2i32.to_be_bytes());
    b.extend([9, 9]); // Recs
    b.extend(2i32.to_be_bytes()); // Strs
    b.extend(1i16.to_be_bytes());
    b.push(b'a');
    b.extend((-1i16).to_be_bytes()); // null string element
    b.push(0xff); // Opt null (presence -1)
    b.extend(7i16.to_be_bytes()); // Common.X
    let (body, err, diags) = decode_body_with(spec(), 0, &b);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(body.len, b.len());
    assert_eq!(child(&body, "I8").value, Value::Int(-2));
    assert_eq!(child(&body, "U16").value, Value::Int(0xfffe));
    assert_eq!(child(&body, "U32").value, Value::Int(0xffff_fffe));
    assert_eq!(child(&body, "I64").value, Value::Int(-5));
    assert_eq!(child(&body, "F64").value, Value::Float(1.5));
    let data = child(&body, "Data");
    assert_eq!(
        (data.value.clone(), data.enc.text().unwrap_or_default()),
        (Value::Bytes(Some((27, 3))), "(int32 len=3)".to_string())
    );
    assert_eq!(child(&body, "NullData").value, Value::Bytes(None));
    // Two bytes cannot hold a batch header: shown as a partial batch, as a fetch may end.
    let recs = child(&body, "Recs");
    let Value::Records(set) = &recs.value else {
        panic!("records field without its count: {:?}", recs.value)
    };
    assert_eq!(*set, RecordSet::default());
    assert_eq!(record_set(set), "0 batches, 0 records");
    assert_eq!(
        (child(recs, "partial").offset, child(recs, "partial").len),
        (38, 2)
    );
    let strs = child(&body, "Strs");
    assert_eq!(strs.value, Value::Array(2));
    assert_eq!(strs.children[1].value, Value::Str(Some("a".into())));
    // A null element in a non-nullable string array is diagnosed, not fatal.
    assert_eq!(strs.children[2].value, Value::Str(None));
    assert_eq!(diags.len(), 1, "{diags:?}");
    let opt = child(&body, "Opt");
    assert_eq!(opt.value, Value::Null);
    assert_eq!(child(opt, "present").value, Value::Int(-1));
    assert_eq!(child(child(&body, "Common"), "X").value, Value::Int(7));
    assert!(body.children.iter().all(|c| c.name != "Late"));
}

#[test]
fn flexible_version_with_known_and_unknown_tags() {
    let mut b = common_prefix();
    b.extend([4, 1, 2, 3]); // Data, compact len+1=4
    b.push(0); // NullData null
    b.extend([3, 9, 9]); // Recs
    b.extend([2, 2, b'z']); // Strs: 1 element "z"
    b.extend([1, 1, 0]); // Opt present, Y=true, tagged_fields=0
    b.extend(7i16.to_be_bytes());
    b.push(0); // Common tagged_fields
               // Top-level tagged fields: tag 4 (Late, int32 = 42), then unknown tag 9 with 2 bytes.
    b.extend([2, 4, 4]);
    b.extend(42i32.to_be_bytes());
    b.extend([9, 2, 0xaa, 0xbb]);
    let (body, err, diags) = decode_body_with(spec(), 1, &b);
    assert!(err.is_none() && diags.is_empty(), "{err:?} {diags:?}");
    assert_eq!(body.len, b.len());
    let late = child(&body, "Late");
    assert_eq!(late.ty, "tagged_field");
    assert_eq!(child(late, "Late").value, Value::Int(42));
    let unknown = child(&body, "unknown_tag_9");
    assert_eq!(
        child(unknown, "data").value,
        Value::Bytes(Some((b.len() - 2, 2)))
    );
    let opt = child(&body, "Opt");
    assert_eq!(child(opt, "Y").value, Value::Bool(true));
}

#[test]
fn hostile_lengths_stop_cleanly() {
    // An array claiming 2^31-1 elements in 4 bytes, a string claiming more than is there, and
    // a varint that never ends: each stops with a reason and allocates nothing by the length.
    let mut b = common_prefix();
    b.extend(0i32.to_be_bytes());
    b.extend((-1i32).to_be_bytes());
    b.extend((-1i32).to_be_bytes());
    b.extend(i32::MAX.to_be_bytes());
    let (_, err, _) = decode_body_with(spec(), 0, &b);
    assert!(err
        .expect("error")
        .detail
        .to_string()
        .contains("array length 2147483647 exceeds"));
    let mut b = common_prefix();
    b.extend([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    let (_, err, _) = decode_body_with(spec(), 1, &b);
    assert!(err.expect("error").detail.to_string().contains("varint"));
}
