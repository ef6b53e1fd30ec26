//! The statistics as typed values: what `--stats --json` prints under `stats` (serialized
//! field by field in this order), and what the `--report` page reads. A field renamed here
//! is renamed in both, and the compiler finds every reader.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// Everything the statistics counted, outside the analyses.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StatsOut {
    /// Per API and version.
    pub apis: Vec<ApiOut>,
    /// Per connection, in stream order; the connections past the kept rows summed in a last
    /// row of client and broker `*`.
    pub connections: Vec<ConnOut>,
    /// Per error code answered.
    pub errors: Vec<ErrorOut>,
    /// Per node: the versions its ApiVersions answer advertised.
    pub advertised: Advertised,
    /// Per API and node: the versions used against those advertised.
    pub version_skew: Vec<SkewOut>,
    pub health: HealthOut,
    /// The TLS connections, when the capture has any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsOut>,
    /// Messages of API versions past the rows kept (not broken down).
    #[serde(skip)]
    pub other_api_messages: u64,
    /// Requests to nodes past those checked.
    #[serde(skip)]
    pub unchecked_requests: u64,
    /// The input files, when there are several (connections name theirs).
    #[serde(skip)]
    pub files: Vec<String>,
}

/// One API version's counts and its request-to-response latencies.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ApiOut {
    pub api_key: i16,
    pub api_name: String,
    pub api_version: i16,
    pub requests: u64,
    pub responses: u64,
    pub unanswered: u64,
    pub with_errors: u64,
    pub malformed: u64,
    pub latency_us: LatencyUs,
}

/// Latency percentiles (nearest rank) and the largest, in microseconds.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct LatencyUs {
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

/// One connection (or, with `stream` `None`, the sum of those past the rows kept).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConnOut {
    /// Its input file, when several were read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub stream: Option<u32>,
    pub client_id: Option<String>,
    pub client: String,
    pub broker: String,
    pub messages: u64,
    pub bytes: u64,
    /// A TLS connection: `decrypted` or `not decrypted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls: Option<&'static str>,
}

/// TLS connections: those decrypted with a key log, those not, and the bytes not read.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct TlsOut {
    pub connections: u64,
    pub decrypted: u64,
    pub not_decrypted: u64,
    pub not_decrypted_bytes: u64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ErrorOut {
    pub code: i16,
    pub name: Option<&'static str>,
    pub count: u64,
}

/// One API as used on one node.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SkewOut {
    pub api_key: i16,
    pub api_name: String,
    pub node: String,
    /// `v0-v12`, or `-`.
    pub advertised: String,
    /// `v3 v12`.
    pub used: String,
    pub status: String,
}

/// Node (address) → its advertised versions, in node order; a JSON object keyed by node.
#[derive(Debug, Clone, Default)]
pub struct Advertised(pub Vec<(String, Vec<AdvertisedApi>)>);

impl Serialize for Advertised {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (node, apis) in &self.0 {
            m.serialize_entry(node, apis)?;
        }
        m.end()
    }
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct AdvertisedApi {
    pub api_key: i16,
    pub min: i64,
    pub max: i64,
}

/// The capture health counters (as the closing report's, over what the statistics count).
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct HealthOut {
    pub packets: u64,
    pub truncated_packets: u64,
    pub gaps: u64,
    pub partial: u64,
    pub retransmissions: u64,
    pub conflicting_overlaps: u64,
    pub midstream_pickups: u64,
    pub resyncs: u64,
    pub bad_sizes: u64,
    pub unmatched_responses: u64,
    pub unanswered: u64,
    pub malformed: u64,
    pub undecoded: u64,
    pub backwards: u64,
    pub frames_dropped: u64,
    pub pending_dropped: u64,
    pub ended_in_frame: u64,
}
