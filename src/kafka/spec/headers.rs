//! Which header version a frame of an API version has, as Kafka chooses it: told by the
//! spec tables (flexible versions have the flexible headers), with Kafka's two exceptions.

use super::schema::{registry, Direction};

/// Request header version for (key, version): v2 in flexible versions, v1 otherwise, and v0
/// for ControlledShutdown v0 (Kafka's one exception).
pub fn request_header_version(api_key: i16, version: i16) -> i16 {
    if api_key == 7 && version == 0 {
        return 0;
    }
    if header_flexible(api_key, Direction::Request, version) {
        2
    } else {
        1
    }
}

/// Response header version: v1 in flexible versions, v0 otherwise, and always v0 for
/// ApiVersions so that a client can read the answer before it knows the broker's versions.
pub fn response_header_version(api_key: i16, version: i16) -> i16 {
    if api_key == 18 {
        return 0;
    }
    if header_flexible(api_key, Direction::Response, version) {
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

/// Whether (key, version) uses the flexible header. A version newer than the tables is
/// flexible when the newest one is: Kafka never turns flexible versions back.
fn header_flexible(api_key: i16, direction: Direction, version: i16) -> bool {
    match registry().get_for(api_key, direction, version) {
        Some(s) if s.valid_versions.contains(version) => s.is_flexible(version),
        _ => registry()
            .newest_layout(api_key, direction, version)
            .is_some_and(|(s, newest)| s.is_flexible(newest)),
    }
}
