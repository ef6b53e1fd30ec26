//! The two numbers every Kafka message is about, as types: the API key (what is asked) and the
//! error code (how it went).

use crate::kafka::spec::headers::{request_header_version, response_header_version};
use crate::kafka::spec::names;
use crate::kafka::spec::schema::{registry, Direction};
use std::fmt;

/// An API key: names itself and knows its header versions and flexible versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiKey(pub i16);

impl ApiKey {
    /// The API's name in Kafka's specs (`Metadata`), if the key is one Kafka defines.
    pub fn name(self) -> Option<&'static str> {
        names::api_name(self.0)
    }

    /// A key by name (`metadata`, `describe-cluster`, `DescribeCluster`) or number.
    pub fn parse(s: &str) -> Option<ApiKey> {
        names::api_key_from_str(s).map(ApiKey)
    }

    /// The request header version a request of this version carries (0, 1 or 2).
    pub fn request_header_version(self, version: i16) -> i16 {
        request_header_version(self.0, version)
    }

    /// The response header version an answer of this version carries (0 or 1).
    pub fn response_header_version(self, version: i16) -> i16 {
        response_header_version(self.0, version)
    }

    /// Whether this version of the request uses the flexible (compact, tagged) encoding;
    /// `None` when the tables have no such version.
    pub fn is_flexible(self, version: i16) -> Option<bool> {
        registry()
            .get_for(self.0, Direction::Request, version)
            .filter(|s| s.valid_versions.contains(version))
            .map(|s| s.is_flexible(version))
    }
}

impl fmt::Display for ApiKey {
    /// The name, or the number for a key Kafka does not define.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "ApiKey({})", self.0),
        }
    }
}

/// Error codes whose exception is retriable in Kafka 4.4's Java client (the exception class
/// extends `RetriableException`): a client that gets one may try the same request again,
/// usually after refreshing its metadata.
const RETRIABLE: &[i16] = &[
    2, 3, 5, 6, 7, 9, 13, 14, 15, 16, 19, 20, 41, 51, 56, 70, 71, 72, 74, 75, 78, 80, 83, 84, 88,
    89, 100, 103, 106, 122, 123, 133,
];

/// An error code from a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ErrorCode(pub i16);

impl ErrorCode {
    pub const NONE: ErrorCode = ErrorCode(0);

    /// `NOT_LEADER_OR_FOLLOWER`, or `None` for a code Kafka does not define.
    pub fn name(self) -> Option<&'static str> {
        names::error_name(self.0)
    }

    /// Anything but `NONE`.
    pub fn is_error(self) -> bool {
        self.0 != 0
    }

    /// Whether Kafka's client treats the error as passing: trying again may succeed.
    pub fn is_retriable(self) -> bool {
        RETRIABLE.contains(&self.0)
    }
}

impl fmt::Display for ErrorCode {
    /// The name, or the number for a code Kafka does not define.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "error {}", self.0),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_name_themselves_and_know_their_headers() {
        let metadata = ApiKey::parse("metadata").unwrap();
        assert_eq!(metadata, ApiKey(3));
        assert_eq!(metadata.to_string(), "Metadata");
        assert_eq!(ApiKey(9999).to_string(), "ApiKey(9999)");
        assert_eq!(metadata.is_flexible(8), Some(false));
        assert_eq!(metadata.is_flexible(9), Some(true));
        assert_eq!(metadata.is_flexible(99), None);
        assert_eq!(metadata.request_header_version(8), 1);
        assert_eq!(metadata.request_header_version(9), 2);
        assert_eq!(metadata.response_header_version(9), 1);
        // ApiVersions answers with header v0 whatever the version; ControlledShutdown v0
        // asks with header v0.
        assert_eq!(ApiKey(18).response_header_version(3), 0);
        assert_eq!(ApiKey(7).request_header_version(0), 0);
    }

    #[test]
    fn error_codes_name_themselves_and_say_if_retriable() {
        let e = ErrorCode(6);
        assert_eq!(e.to_string(), "NOT_LEADER_OR_FOLLOWER");
        assert!(e.is_error() && e.is_retriable());
        // TOPIC_AUTHORIZATION_FAILED is final, UNKNOWN_TOPIC_OR_PARTITION passes.
        assert!(!ErrorCode(29).is_retriable());
        assert!(ErrorCode(3).is_retriable());
        assert!(!ErrorCode::NONE.is_error());
        assert_eq!(ErrorCode(-32000).to_string(), "error -32000");
        // Every retriable code is one Kafka defines.
        assert!(RETRIABLE.iter().all(|c| ErrorCode(*c).name().is_some()));
    }
}
