//! Which versions each known client software sends by design, read from its sources: a
//! version older than the broker offers is worth a finding only when the newest release of
//! that client would send a newer one in the same role. A Java 4.4 classic consumer commits
//! with OffsetCommit v9 (v10, by topic id, goes only with group.protocol=consumer): that is
//! its design, not an old client; a librdkafka 2.0 producer's Produce v7 is older than what
//! librdkafka 2.15 sends (v10), and worth an upgrade.
//!
//! Each family lists, per API, the lowest version its newest release sends by design (in
//! some role or configuration): a version at or above it is by design. An API a family does
//! not list is sent at the newest version the broker offers (by the families that negotiate)
//! and a lower one is not by design. ApiVersions itself is left out everywhere: it is sent
//! before the broker's versions are known (the Java client's SASL authenticator opens with
//! ApiVersions v0).

/// One client family.
#[derive(Debug)]
pub struct Family {
    /// How it is shown.
    pub name: &'static str,
    /// Where the versions come from.
    pub source: &'static str,
    /// (API key, lowest version sent by design, why).
    pub floors: &'static [(i16, i16, &'static str)],
}

impl Family {
    /// The lowest version this family sends `key` at by design, and why.
    pub fn floor(&self, key: i16) -> Option<(i16, &'static str)> {
        self.floors
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, v, why)| (*v, *why))
    }
}

/// The Apache Kafka Java client, 4.x. Read from kafka-clients-4.4.0.jar (`javap -c -p
/// -constants`): `OffsetCommitRequest$Builder.forTopicNames` caps the version at 9 and is
/// what `ConsumerCoordinator` (group.protocol=classic) and the Admin's
/// `AlterConsumerGroupOffsetsHandler` use; `forTopicIdsOrNames` (the latest, 10) is used by
/// `CommitRequestManager` (group.protocol=consumer) when every topic id is known. The same
/// for `OffsetFetchRequest$Builder` (9: `ConsumerCoordinator`,
/// `ListConsumerGroupOffsetsHandler`). Without transaction.version 2 the producer stays at
/// `ProduceRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2` = 11,
/// `EndTxnRequest....` = 4 and `TxnOffsetCommitRequest....` = 4;
/// `AddPartitionsToTxnRequest.LAST_CLIENT_VERSION` = 3 (v4 and up are the brokers').
pub const JAVA: Family = Family {
    name: "apache-kafka-java",
    source: "kafka-clients 4.4.0",
    floors: &[
        (
            0,
            11,
            "transactional producer without transaction.version 2",
        ),
        (
            8,
            9,
            "classic consumer or Admin (v10 only with group.protocol=consumer)",
        ),
        (
            9,
            9,
            "classic consumer or Admin (v10 only with group.protocol=consumer)",
        ),
        (24, 3, "the clients' highest (v4+ are for brokers)"),
        (26, 4, "without transaction.version 2"),
        (28, 4, "without transaction.version 2"),
    ],
};

/// librdkafka 2.x (and the clients built on it, confluent-kafka-*), from
/// confluentinc/librdkafka at 4c3b017 (v2.15.0): the highest version each request asks
/// `rd_kafka_broker_ApiVersion_supported()` for (src/rdkafka_request.c; Fetch in
/// rdkafka_fetcher.c, Produce in rdkafka_msgset_writer.c, TxnOffsetCommit in
/// rdkafka_txnmgr.c, DescribeUserScramCredentials in rdkafka_admin.c). Metadata goes up to
/// 13, but to 10 when the cluster's authorized operations are asked (KIP-700 removed them).
pub const LIBRDKAFKA: Family = Family {
    name: "librdkafka",
    source: "librdkafka 2.15.0",
    floors: &[
        (0, 10, "librdkafka's highest"),
        (1, 16, "librdkafka's highest"),
        (2, 7, "librdkafka's highest"),
        (
            3,
            10,
            "v10 when authorized operations are asked, else up to 13",
        ),
        (8, 9, "librdkafka's highest"),
        (9, 9, "librdkafka's highest"),
        (10, 2, "librdkafka's highest"),
        (11, 5, "librdkafka's highest"),
        (12, 3, "librdkafka's highest"),
        (13, 1, "librdkafka's highest"),
        (14, 3, "librdkafka's highest"),
        (15, 5, "librdkafka's highest"),
        (16, 5, "librdkafka's highest"),
        (17, 1, "librdkafka's highest"),
        (19, 4, "librdkafka's highest"),
        (20, 4, "librdkafka's highest"),
        (21, 2, "librdkafka's highest"),
        (22, 4, "librdkafka's highest"),
        (23, 2, "librdkafka's highest"),
        (24, 0, "librdkafka's highest"),
        (25, 0, "librdkafka's highest"),
        (26, 1, "librdkafka's highest"),
        (28, 3, "librdkafka's highest"),
        (29, 2, "librdkafka's highest"),
        (30, 2, "librdkafka's highest"),
        (31, 2, "librdkafka's highest"),
        (32, 1, "librdkafka's highest"),
        (33, 2, "librdkafka's highest"),
        (36, 1, "librdkafka's highest"),
        (37, 2, "librdkafka's highest"),
        (42, 2, "librdkafka's highest"),
        (43, 2, "librdkafka's highest"),
        (44, 1, "librdkafka's highest"),
        (47, 0, "librdkafka's highest"),
        (50, 0, "librdkafka's highest"),
        (51, 0, "librdkafka's highest"),
        (68, 1, "librdkafka's highest"),
        (69, 0, "librdkafka's highest"),
        (71, 0, "librdkafka's highest"),
        (72, 0, "librdkafka's highest"),
        (76, 1, "librdkafka's highest"),
        (78, 1, "librdkafka's highest"),
        (79, 1, "librdkafka's highest"),
    ],
};

/// Sarama (IBM/sarama at bd98b3a, v1.60.1 and later): each request's `isValidVersion()`
/// bounds the versions it implements; it sends the highest its `Config.Version` allows
/// (`DefaultVersion` is 2.8.0, so an unset Config.Version sends older versions than these).
pub const SARAMA: Family = Family {
    name: "sarama",
    source: "sarama 1.60",
    floors: &[
        (0, 10, "sarama's highest"),
        (1, 12, "sarama's highest"),
        (2, 6, "sarama's highest"),
        (3, 11, "sarama's highest"),
        (8, 8, "sarama's highest"),
        (9, 8, "sarama's highest"),
        (10, 3, "sarama's highest"),
        (11, 8, "sarama's highest"),
        (12, 4, "sarama's highest"),
        (13, 5, "sarama's highest"),
        (14, 5, "sarama's highest"),
        (15, 5, "sarama's highest"),
        (16, 5, "sarama's highest"),
        (17, 1, "sarama's highest"),
        (19, 7, "sarama's highest"),
        (20, 6, "sarama's highest"),
        (21, 2, "sarama's highest"),
        (22, 4, "sarama's highest"),
        (24, 3, "sarama's highest"),
        (25, 3, "sarama's highest"),
        (26, 3, "sarama's highest"),
        (28, 3, "sarama's highest"),
        (29, 2, "sarama's highest"),
        (30, 2, "sarama's highest"),
        (31, 2, "sarama's highest"),
        (32, 4, "sarama's highest"),
        (33, 2, "sarama's highest"),
        (35, 4, "sarama's highest"),
        (36, 2, "sarama's highest"),
        (37, 3, "sarama's highest"),
        (42, 2, "sarama's highest"),
        (43, 2, "sarama's highest"),
        (44, 1, "sarama's highest"),
        (45, 0, "sarama's highest"),
        (46, 0, "sarama's highest"),
        (47, 0, "sarama's highest"),
        (48, 1, "sarama's highest"),
        (49, 1, "sarama's highest"),
        (50, 0, "sarama's highest"),
        (51, 0, "sarama's highest"),
        (57, 0, "sarama's highest"),
        (60, 2, "sarama's highest"),
        (61, 0, "sarama's highest"),
        (65, 0, "sarama's highest"),
        (66, 1, "sarama's highest"),
    ],
};

/// kafkajs 2.2.4 (tulios/kafkajs at 55b0b41): the highest of each request's
/// src/protocol/requests/<api>/v<N>. kafkajs sends ApiVersions v2, which carries no
/// software name: it is recognised by its versions alone ([`recognise`]).
pub const KAFKAJS: Family = Family {
    name: "kafkajs",
    source: "kafkajs 2.2.4",
    floors: &[
        (0, 7, "kafkajs's highest"),
        (1, 11, "kafkajs's highest"),
        (2, 3, "kafkajs's highest"),
        (3, 6, "kafkajs's highest"),
        (8, 5, "kafkajs's highest"),
        (9, 4, "kafkajs's highest"),
        (10, 2, "kafkajs's highest"),
        (11, 5, "kafkajs's highest"),
        (12, 3, "kafkajs's highest"),
        (13, 3, "kafkajs's highest"),
        (14, 3, "kafkajs's highest"),
        (15, 2, "kafkajs's highest"),
        (16, 2, "kafkajs's highest"),
        (17, 1, "kafkajs's highest"),
        (19, 3, "kafkajs's highest"),
        (20, 1, "kafkajs's highest"),
        (21, 1, "kafkajs's highest"),
        (22, 1, "kafkajs's highest"),
        (24, 1, "kafkajs's highest"),
        (25, 1, "kafkajs's highest"),
        (26, 1, "kafkajs's highest"),
        (28, 1, "kafkajs's highest"),
        (29, 1, "kafkajs's highest"),
        (30, 1, "kafkajs's highest"),
        (31, 1, "kafkajs's highest"),
        (32, 2, "kafkajs's highest"),
        (33, 1, "kafkajs's highest"),
        (36, 1, "kafkajs's highest"),
        (37, 1, "kafkajs's highest"),
        (42, 1, "kafkajs's highest"),
        (45, 0, "kafkajs's highest"),
        (46, 0, "kafkajs's highest"),
    ],
};

/// franz-go (kgo) v1.22.3 defaults to `kversion.Stable()`, Kafka 4.4's versions
/// (pkg/kversion/kversion.go: `relversion(b44, c44, z39)`), and otherwise negotiates the
/// highest the broker offers: nothing below a 4.4 broker's newest is by design.
pub const FRANZ_GO: Family = Family {
    name: "kgo",
    source: "franz-go 1.22.3",
    floors: &[],
};

/// The family of a client software name and version (ApiVersions v3+).
pub fn family(name: &str, version: &str) -> Option<&'static Family> {
    let rdkafka = name == "librdkafka"
        || name.starts_with("confluent-kafka-")
        || version.to_ascii_lowercase().contains("rdkafka");
    match name {
        "apache-kafka-java" => Some(&JAVA),
        "sarama" => Some(&SARAMA),
        "kgo" => Some(&FRANZ_GO),
        _ if rdkafka => Some(&LIBRDKAFKA),
        _ => None,
    }
}

/// Families that send no software name, recognised by their versions: one whose every API
/// used (ApiVersions aside) is at that family's highest, at least three of them, is taken
/// for it. `used` gives (API key, highest version used).
pub fn recognise(used: &[(i16, i16)]) -> Option<&'static Family> {
    let rest: Vec<&(i16, i16)> = used.iter().filter(|(k, _)| *k != 18).collect();
    let fits = rest
        .iter()
        .all(|(k, v)| KAFKAJS.floor(*k).is_some_and(|(f, _)| f == *v));
    (rest.len() >= 3 && fits).then_some(&KAFKAJS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_found_by_name_and_wrapped_librdkafka_by_version() {
        assert_eq!(
            family("apache-kafka-java", "4.4.0").map(|f| f.name),
            Some("apache-kafka-java")
        );
        assert_eq!(
            family("confluent-kafka-python", "2.16.1-rdkafka-2.16.0").map(|f| f.name),
            Some("librdkafka")
        );
        assert_eq!(
            family("librdkafka", "2.15.0").map(|f| f.name),
            Some("librdkafka")
        );
        assert_eq!(family("sarama", "v1.61.1").map(|f| f.name), Some("sarama"));
        assert_eq!(family("kgo", "v1.22.3").map(|f| f.name), Some("kgo"));
        assert!(family("kafka-python", "3.0.12").is_none());
    }

    #[test]
    fn a_java_classic_commit_is_by_design_and_a_java_fetch_below_the_newest_is_not() {
        assert_eq!(JAVA.floor(8).map(|f| f.0), Some(9));
        assert!(JAVA.floor(1).is_none());
    }

    #[test]
    fn kafkajs_is_recognised_by_its_versions_alone() {
        // ak44-kafkajs-group: what kafkajs 2.2.4 sent to a Kafka 4.4 broker.
        let used = [(0, 7), (1, 11), (2, 3), (3, 6), (8, 5), (9, 4), (18, 2)];
        assert_eq!(recognise(&used).map(|f| f.name), Some("kafkajs"));
        // One version off (a newer or older kafkajs, or another client): not recognised.
        let other = [(0, 9), (1, 11), (3, 6)];
        assert!(recognise(&other).is_none());
        assert!(recognise(&[(3, 6), (18, 2)]).is_none());
    }

    #[test]
    fn every_floor_names_an_api_once() {
        for f in [&JAVA, &LIBRDKAFKA, &SARAMA, &KAFKAJS, &FRANZ_GO] {
            let mut keys: Vec<i16> = f.floors.iter().map(|x| x.0).collect();
            let n = keys.len();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), n, "{}", f.name);
        }
    }
}
