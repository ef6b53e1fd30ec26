package kdissect.clients;

import static kdissect.clients.Json.obj;
import static kdissect.clients.Main.consumerProps;
import static kdissect.clients.Main.error;
import static kdissect.clients.Main.ids;
import static kdissect.clients.Main.producerProps;
import static kdissect.clients.Main.result;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The client side of the cluster captures (samples/cluster-*.pcap): long-running clients of a
 * three-broker cluster (scripts/kafka-cluster) that keep a steady, slow flow of requests while
 * the capture starts and stops around them, and one-shot admin runs. Each prints RESULT lines
 * ({@code RESULT {json}}) with what it got back; NetworkClient's DEBUG lines show every request
 * and response.
 *
 * <pre>
 * java -cp 'target/classes:target/lib/*' kdissect.clients.Cluster SCENARIO [ARGS]
 * </pre>
 *
 * Environment: KD_BOOTSTRAP (default the three brokers), KD_CONTROLLER (default 127.0.0.1:9093).
 */
public final class Cluster {
    static final String ORDERS = "cluster-orders";
    static final String TXN = "cluster-txn";
    static final String COUNTS = "cluster-order-counts";

    private Cluster() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage();
            System.exit(2);
        }
        String cmd = args[0];
        result(obj("op", "start", "scenario", cmd, "args", List.of(args).subList(1, args.length),
                "clientVersion", AppInfoParser.getVersion(), "clientCommit", AppInfoParser.getCommitId()));
        switch (cmd) {
            case "setup" -> setup();
            case "producer" -> producer(seconds(args, 1), Double.parseDouble(args[2]));
            case "consumer" -> consumer(args[1], seconds(args, 2));
            case "txn" -> transactions(seconds(args, 1));
            case "admin-brokers" -> adminBrokers(args.length > 1 ? args[1] : "a");
            case "admin-controller" -> adminController();
            case "streams" -> streams(seconds(args, 1));
            default -> {
                usage();
                System.exit(2);
            }
        }
        result(obj("op", "end", "scenario", cmd));
        System.exit(0);
    }

    static void usage() {
        System.err.println("""
                usage: Cluster SCENARIO [ARGS]
                  setup                       topics cluster-orders, cluster-txn, cluster-order-counts
                                              (3 partitions, RF 3); warm __consumer_offsets and
                                              __transaction_state
                  producer SECONDS RATE       idempotent producer, acks=all, RATE records/s to cluster-orders
                  consumer classic|consumer SECONDS   group consumer, commitSync every 2 s
                  txn SECONDS                 transactional producer to cluster-txn, one transaction
                                              every 3 s, every third aborted
                  admin-brokers [TAG]         Admin through the brokers: create topics and partitions,
                                              configs, quotas, SCRAM credentials, reassignment, election
                  admin-controller            Admin with bootstrap.controllers
                  streams SECONDS             Kafka Streams (group.protocol=streams): counts per key""");
    }

    static long seconds(String[] args, int i) {
        return (long) (Double.parseDouble(args[i]) * 1000);
    }

    static Properties base(String clientId) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                Main.env("KD_BOOTSTRAP", "127.0.0.2:9092,127.0.0.3:9192,127.0.0.4:9292"));
        p.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        // Metadata every 5 s: short captures then hold Metadata answers (cluster id, brokers).
        p.put(CommonClientConfigs.METADATA_MAX_AGE_CONFIG, 5000);
        return p;
    }

    // ---------------------------------------------------------------- setup

    static void setup() throws Exception {
        try (Admin admin = Admin.create(base("cluster-setup-admin"))) {
            List<NewTopic> topics = List.of(new NewTopic(ORDERS, 3, (short) 3), new NewTopic(TXN, 3, (short) 3),
                    new NewTopic(COUNTS, 3, (short) 3));
            CreateTopicsResult r = admin.createTopics(topics);
            r.all().get();
            for (NewTopic t : topics) {
                result(obj("op", "createTopic", "topic", t.name(), "partitions", t.numPartitions(),
                        "topicId", r.topicId(t.name()).get().toString()));
            }
            admin.listConsumerGroupOffsets("warmup-group").partitionsToOffsetAndMetadata().get();
        }
        Properties p = producerProps(base("cluster-setup-txn"));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "warmup-txn");
        try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
            prod.initTransactions();
        }
        result(obj("op", "warmed", "internalTopics", List.of("__consumer_offsets", "__transaction_state")));
    }

    // ---------------------------------------------------------------- producers and consumers

    static byte[] value(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Record i: key customer-(i % 7), value "order i", timestamp now. */
    static void producer(long millis, double rate) throws Exception {
        Properties p = producerProps(base("cluster-producer"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 20);
        long end = System.currentTimeMillis() + millis;
        long gap = (long) (1000 / rate);
        try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
            for (int i = 0; System.currentTimeMillis() < end; i++) {
                final int n = i;
                String key = "customer-" + (i % 7);
                prod.send(new ProducerRecord<>(ORDERS, key, value("order " + i)), (md, ex) -> {
                    if (ex != null) {
                        result(obj("op", "send", "i", n, "key", key, "error", error(ex)));
                    } else {
                        result(obj("op", "send", "i", n, "key", key, "partition", md.partition(), "offset",
                                md.offset(), "timestamp", md.timestamp()));
                    }
                });
                Thread.sleep(gap);
            }
            prod.flush();
        }
    }

    static void consumer(String protocol, long millis) throws Exception {
        String group = "classic".equals(protocol) ? "cluster-classic" : "cluster-kip848";
        Properties p = consumerProps(base("cluster-consumer-" + protocol));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        long end = System.currentTimeMillis() + millis;
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(ORDERS));
            long lastCommit = System.currentTimeMillis();
            int n = 0;
            while (System.currentTimeMillis() < end) {
                ConsumerRecords<String, byte[]> recs = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, byte[]> r : recs) {
                    result(obj("op", "record", "partition", r.partition(), "offset", r.offset(), "key", r.key(),
                            "value", new String(r.value(), StandardCharsets.UTF_8)));
                    n++;
                }
                if (System.currentTimeMillis() - lastCommit >= 2000) {
                    commit(consumer, group);
                    lastCommit = System.currentTimeMillis();
                }
            }
            commit(consumer, group);
            result(obj("op", "consumed", "groupId", group, "records", n, "memberId",
                    consumer.groupMetadata().memberId(), "generationId", consumer.groupMetadata().generationId()));
        }
    }

    static void commit(KafkaConsumer<String, byte[]> consumer, String group) {
        Map<TopicPartition, OffsetAndMetadata> offs = new LinkedHashMap<>();
        for (TopicPartition tp : consumer.assignment()) {
            offs.put(tp, new OffsetAndMetadata(consumer.position(tp)));
        }
        try {
            consumer.commitSync(offs);
            Map<String, Object> m = new TreeMap<>();
            offs.forEach((tp, om) -> m.put(tp.toString(), om.offset()));
            result(obj("op", "commit", "groupId", group, "offsets", m));
        } catch (RuntimeException e) {
            result(obj("op", "commit", "groupId", group, "error", error(e)));
        }
    }

    static void transactions(long millis) throws Exception {
        Properties p = producerProps(base("cluster-txn-producer"));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "cluster-txn");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 10);
        long end = System.currentTimeMillis() + millis;
        try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
            prod.initTransactions();
            result(obj("op", "initTransactions", "transactionalId", "cluster-txn"));
            for (int t = 0; System.currentTimeMillis() < end; t++) {
                boolean abort = t % 3 == 2;
                try {
                    prod.beginTransaction();
                    List<Future<RecordMetadata>> fs = new ArrayList<>();
                    for (int i = 0; i < 3; i++) {
                        fs.add(prod.send(new ProducerRecord<>(TXN, i, "txn-" + t,
                                value((abort ? "aborted" : "committed") + " txn " + t + " record " + i))));
                    }
                    prod.flush();
                    for (Future<RecordMetadata> f : fs) {
                        RecordMetadata md = f.get();
                        result(obj("op", "send", "transaction", t, "partition", md.partition(), "offset", md.offset()));
                    }
                    if (abort) prod.abortTransaction();
                    else prod.commitTransaction();
                    result(obj("op", abort ? "abort" : "commit", "transaction", t));
                } catch (ExecutionException | RuntimeException e) {
                    result(obj("op", "transactionFailed", "transaction", t, "error", error(e)));
                    try {
                        prod.abortTransaction();
                    } catch (RuntimeException e2) {
                        result(obj("op", "abortFailed", "transaction", t, "error", error(e2)));
                    }
                }
                Thread.sleep(3000);
            }
        }
    }

    static void streams(long millis) throws Exception {
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, "cluster-streams");
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG,
                Main.env("KD_BOOTSTRAP", "127.0.0.2:9092,127.0.0.3:9192,127.0.0.4:9292"));
        p.put(StreamsConfig.CLIENT_ID_CONFIG, "cluster-streams");
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.consumerPrefix(CommonClientConfigs.METADATA_MAX_AGE_CONFIG), 5000);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 2000);
        p.put(StreamsConfig.STATE_DIR_CONFIG, Main.env("KD_STATE_DIR", "/tmp/kdissect-streams-state"));
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        StreamsBuilder b = new StreamsBuilder();
        b.stream(ORDERS, Consumed.with(Serdes.String(), Serdes.ByteArray()))
                .groupByKey()
                .count()
                .toStream()
                .peek((k, v) -> result(obj("op", "count", "key", k, "count", v)))
                .to(COUNTS, Produced.with(Serdes.String(), Serdes.Long()));
        try (KafkaStreams ks = new KafkaStreams(b.build(), p)) {
            ks.setStateListener((now, before) -> result(obj("op", "state", "from", before.name(), "to", now.name())));
            ks.start();
            Thread.sleep(millis);
            ks.close(Duration.ofSeconds(20));
        }
    }

    // ---------------------------------------------------------------- admin

    /**
     * Admin requests a broker forwards to the controller inside Envelope: CreateTopics,
     * CreatePartitions, IncrementalAlterConfigs (topic and broker), AlterClientQuotas,
     * AlterUserScramCredentials, AlterPartitionReassignments, ElectLeaders, DeleteTopics.
     */
    static void adminBrokers(String tag) throws Exception {
        String topic = "cluster-admin-" + tag;
        try (Admin admin = Admin.create(base("cluster-admin-brokers"))) {
            DescribeClusterResult c = admin.describeCluster();
            result(obj("op", "describeCluster", "clusterId", c.clusterId().get(), "controller",
                    c.controller().get().id(), "nodes", ids(c.nodes().get())));

            CreateTopicsResult cr = admin.createTopics(List.of(new NewTopic(topic, 2, (short) 3)
                    .configs(Map.of("retention.ms", "3600000", "min.insync.replicas", "2"))));
            cr.all().get();
            result(obj("op", "createTopics", "topic", topic, "partitions", 2, "topicId",
                    cr.topicId(topic).get().toString()));

            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(4))).all().get();
            result(obj("op", "createPartitions", "topic", topic, "totalCount", 4));

            ConfigResource t = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            admin.incrementalAlterConfigs(Map.of(t, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.APPEND))))
                    .all().get();
            result(obj("op", "incrementalAlterConfigs", "resource", "TOPIC:" + topic, "set",
                    obj("retention.ms", "7200000"), "append", obj("cleanup.policy", "compact")));

            ConfigResource b2 = new ConfigResource(ConfigResource.Type.BROKER, "2");
            admin.incrementalAlterConfigs(Map.of(b2, List.of(new AlterConfigOp(
                    new ConfigEntry("log.cleaner.backoff.ms", "20000"), AlterConfigOp.OpType.SET)))).all().get();
            result(obj("op", "incrementalAlterConfigs", "resource", "BROKER:2", "set",
                    obj("log.cleaner.backoff.ms", "20000")));

            Config cfg = admin.describeConfigs(List.of(t)).all().get().get(t);
            Map<String, Object> dynamic = new TreeMap<>();
            for (ConfigEntry e : cfg.entries()) {
                if (e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) dynamic.put(e.name(), e.value());
            }
            result(obj("op", "describeConfigs", "resource", "TOPIC:" + topic, "dynamicTopicConfigs", dynamic));

            ClientQuotaEntity user = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "alice"));
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(user, List.of(
                    new ClientQuotaAlteration.Op("producer_byte_rate", 1048576.0),
                    new ClientQuotaAlteration.Op("request_percentage", 50.0))))).all().get();
            result(obj("op", "alterClientQuotas", "entity", "user=alice", "producer_byte_rate", 1048576.0,
                    "request_percentage", 50.0));

            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion("bob",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "bob-secret"))).all().get();
            result(obj("op", "alterUserScramCredentials", "user", "bob", "mechanism", "SCRAM-SHA-256",
                    "iterations", 4096, "fakePassword", "bob-secret"));

            // Move partition 0's leadership: reverse its replica list, then elect the preferred leader.
            TopicPartition tp0 = new TopicPartition(topic, 0);
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            TopicPartitionInfo p0 = d.partitions().get(0);
            List<Integer> reversed = new ArrayList<>(ids(p0.replicas()));
            java.util.Collections.reverse(reversed);
            admin.alterPartitionReassignments(Map.of(tp0, Optional.of(new NewPartitionReassignment(reversed))))
                    .all().get();
            result(obj("op", "alterPartitionReassignments", "partition", tp0.toString(), "before",
                    ids(p0.replicas()), "leaderBefore", p0.leader().id(), "target", reversed));
            Thread.sleep(1000);
            try {
                admin.electLeaders(ElectionType.PREFERRED, java.util.Set.of(tp0)).all().get();
                result(obj("op", "electLeaders", "partition", tp0.toString(), "error", null));
            } catch (ExecutionException e) {
                result(obj("op", "electLeaders", "partition", tp0.toString(), "error", error(e)));
            }
            TopicDescription after = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            result(Main.describe("describeTopics", after));

            admin.deleteTopics(List.of(topic)).all().get();
            result(obj("op", "deleteTopics", "topic", topic));
        }
    }

    /** Admin talking to the controller directly (bootstrap.controllers). */
    static void adminController() throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG, Main.env("KD_CONTROLLER", "127.0.0.1:9093"));
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "cluster-admin-controller");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000);
        try (Admin admin = Admin.create(p)) {
            DescribeClusterResult c = admin.describeCluster();
            result(obj("op", "describeCluster", "clusterId", c.clusterId().get(), "controller",
                    c.controller().get().id(), "nodes", ids(c.nodes().get())));
            QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get();
            List<Object> voters = new ArrayList<>();
            for (QuorumInfo.ReplicaState r : q.voters()) {
                voters.add(obj("replicaId", r.replicaId(), "logEndOffset", r.logEndOffset()));
            }
            List<Object> observers = new ArrayList<>();
            for (QuorumInfo.ReplicaState r : q.observers()) {
                observers.add(obj("replicaId", r.replicaId(), "logEndOffset", r.logEndOffset()));
            }
            result(obj("op", "describeMetadataQuorum", "leaderId", q.leaderId(), "leaderEpoch", q.leaderEpoch(),
                    "highWatermark", q.highWatermark(), "voters", voters, "observers", observers));
            FeatureMetadata f = admin.describeFeatures().featureMetadata().get();
            Map<String, Object> fin = new TreeMap<>();
            f.finalizedFeatures().forEach((k, v) -> fin.put(k, v.maxVersionLevel()));
            result(obj("op", "describeFeatures", "finalized", fin, "epoch", f.finalizedFeaturesEpoch()));
            // The controller's own configs: brokers are not nodes this Admin knows (asking for
            // broker 1 makes it poll DescribeCluster until its timeout).
            ConfigResource c0 = new ConfigResource(ConfigResource.Type.BROKER, "0");
            Config cfg = admin.describeConfigs(List.of(c0)).all().get().get(c0);
            result(obj("op", "describeConfigs", "resource", "BROKER:0", "entries", cfg.entries().size()));
            admin.incrementalAlterConfigs(Map.of(c0, List.of(new AlterConfigOp(
                    new ConfigEntry("log.cleaner.max.compaction.lag.ms", "86400000"), AlterConfigOp.OpType.SET))))
                    .all().get();
            result(obj("op", "incrementalAlterConfigs", "resource", "BROKER:0", "set",
                    obj("log.cleaner.max.compaction.lag.ms", "86400000")));
            try {
                CreateTopicsResult cr = admin.createTopics(List.of(new NewTopic("cluster-from-controller", 1, (short) 3)));
                cr.all().get();
                result(obj("op", "createTopics", "topic", "cluster-from-controller", "topicId",
                        cr.topicId("cluster-from-controller").get().toString()));
            } catch (ExecutionException | RuntimeException e) {
                result(obj("op", "createTopics", "topic", "cluster-from-controller", "error", error(e)));
            }
        }
    }
}
