//! Which header version a frame of an API version has, as Kafka chooses it: the spec's
//! `headerVersions` map where it gives one (Kafka 4.5 on, KAFKA-20923: request header v3 and
//! its client instance id, KIP-1313, are reached only through it), and otherwise Kafka's old
//! rule, told by the spec tables (flexible versions have the flexible headers) with its two
//! exceptions.

use super::schema::{registry, Direction, MessageSpec};

/// Request header version for (key, version): the spec's map; else v2 in flexible versions,
/// v1 otherwise, and v0 for ControlledShutdown v0 (the old rule's one exception).
pub fn request_header_version(api_key: i16, version: i16) -> i16 {
    let table = table_for(api_key, Direction::Request, version);
    if let Some(h) = table.and_then(|(s, _)| s.header_version(version)) {
        return h;
    }
    if api_key == 7 && version == 0 {
        return 0;
    }
    if table.is_some_and(|(s, at)| s.is_flexible(at)) {
        2
    } else {
        1
    }
}

/// Response header version: the spec's map; else v1 in flexible versions, v0 otherwise, and
/// always v0 for ApiVersions so that a client can read the answer before it knows the
/// broker's versions.
pub fn response_header_version(api_key: i16, version: i16) -> i16 {
    let table = table_for(api_key, Direction::Response, version);
    if let Some(h) = table.and_then(|(s, _)| s.header_version(version)) {
        return h;
    }
    if api_key == 18 {
        return 0;
    }
    if table.is_some_and(|(s, at)| s.is_flexible(at)) {
        1
    } else {
        0
    }
}

/// The header version of a frame of `direction` whose API is (key, version), if known. A
/// request whose header is too short to name its API is read at v1, the baseline.
pub(crate) fn header_version(direction: Direction, api: Option<(i16, i16)>) -> i16 {
    match (direction, api) {
        (Direction::Request, Some((k, v))) => request_header_version(k, v),
        (Direction::Request, None) => 1,
        (Direction::Response, Some((k, v))) => response_header_version(k, v),
        (Direction::Response, None) => 0,
    }
}

/// The table that decides the header of (key, version), and the version whose layout it
/// reads: the table that has the version, or for a version newer than the tables the current
/// one at its newest version (Kafka never turns flexible versions back, and a header map's
/// last range is open).
fn table_for(
    api_key: i16,
    direction: Direction,
    version: i16,
) -> Option<(&'static MessageSpec, i16)> {
    match registry().get_for(api_key, direction, version) {
        Some(s) if s.valid_versions.contains(version) => Some((s, version)),
        _ => registry().newest_layout(api_key, direction, version),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::kafka::spec::schema::parse_spec;

    /// Where the tables give no map, the old rule; OffsetDelete's map (schema-src/ahead.json,
    /// KAFKA-20924) sends v1 and later with request header v3.
    #[test]
    fn the_map_where_given_the_old_rule_elsewhere() {
        assert_eq!(request_header_version(3, 8), 1);
        assert_eq!(request_header_version(3, 9), 2);
        assert_eq!(request_header_version(3, 40), 2);
        assert_eq!(response_header_version(3, 9), 1);
        assert_eq!(response_header_version(18, 4), 0);
        assert_eq!(request_header_version(7, 0), 0);
        assert_eq!(request_header_version(47, 0), 1);
        assert_eq!(request_header_version(47, 1), 3);
        assert_eq!(request_header_version(47, 5), 3);
        assert_eq!(response_header_version(47, 1), 0);
    }

    #[test]
    fn maps_are_read_as_kafka_writes_them() {
        let spec = |map: &str| {
            parse_spec(&format!(
                r#"{{"apiKey": 3, "type": "request", "name": "MetadataRequest", "validVersions": "0-13",
                "flexibleVersions": "9+", "headerVersions": {map}, "fields": []}}"#
            ))
        };
        let s = spec(r#"{"9+": "2", "0-8": "1"}"#).unwrap();
        let got: Vec<Option<i16>> = [0, 8, 9, 13, 99]
            .iter()
            .map(|&v| s.header_version(v))
            .collect();
        assert_eq!(got, vec![Some(1), Some(1), Some(2), Some(2), Some(2)]);
        assert_eq!(spec(r#"{"0+": 2}"#).unwrap().header_version(4), Some(2));
        for bad in [
            r#"{"1+": "2"}"#,
            r#"{"0-3": "1", "5+": "2"}"#,
            r#"{"0-3": "1"}"#,
            r#"{"0+": "1", "2+": "2"}"#,
            r#"{"0+": "two"}"#,
            r#"{"x": "1"}"#,
        ] {
            let e = spec(bad).unwrap_err();
            assert!(e.contains("headerVersions"), "{bad}: {e}");
        }
        let none = parse_spec(
            r#"{"apiKey": 3, "type": "request", "name": "MetadataRequest", "validVersions": "0",
            "flexibleVersions": "none", "fields": []}"#,
        )
        .unwrap();
        assert_eq!(none.header_version(0), None);
    }
}
