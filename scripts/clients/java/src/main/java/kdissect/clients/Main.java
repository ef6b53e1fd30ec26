package kdissect.clients;

import static kdissect.clients.Json.obj;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.internals.AppInfoParser;

/**
 * The client side of the Apache Kafka captures (samples/ak44-*.pcap). Each scenario uses the
 * official Java clients; NetworkClient's DEBUG log lines show every request and response, and
 * the program prints what it got back as {@code RESULT {json}} lines.
 *
 * <pre>
 * java -cp 'target/classes:target/lib/*' kdissect.clients.Main SCENARIO [ARGS]
 * </pre>
 *
 * Environment: KD_BOOTSTRAP (default 127.0.0.1:9092), KD_TRUSTSTORE (PKCS12 trust store for the
 * SSL scenario), KD_TRUSTSTORE_PASSWORD (default kdissect-test). The scenarios are listed in
 * {@link #main}. Every password used here is a fake test value.
 */
public final class Main {
    /** Record timestamps: 2026-01-01T00:00:00Z plus one second per record. */
    static final long T0 = 1767225600000L;

    static final String ORDERS = "orders";

    private Main() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage();
            System.exit(2);
        }
        String cmd = args[0];
        String arg = args.length > 1 ? args[1] : null;
        result(obj("op", "start", "scenario", cmd, "arg", arg, "clientVersion", AppInfoParser.getVersion(),
                "clientCommit", AppInfoParser.getCommitId()));
        switch (cmd) {
            // Setup steps (not captured).
            case "setup-topics" -> setupTopics(List.of(args).subList(1, args.length));
            case "setup-produce" -> produceOrders(arg == null ? "none" : arg, "ak44-setup-producer", false);
            case "setup-warm-groups" -> warmGroups();
            case "setup-warm-txn" -> warmTransactions();
            case "setup-groups" -> {
                consume("classic", "orders-classic", "ak44-setup-classic", 20);
                consume("consumer", "orders-kip848", "ak44-setup-kip848", 20);
            }
            case "setup-share-group" -> setupShareGroup(arg == null ? "orders-share" : arg);
            case "setup-replicated" -> Analyses.setupReplicated(arg);
            // Captured scenarios.
            case "admin" -> admin();
            case "describe-topics-cursor" -> describeTopicsCursor();
            case "produce" -> produceOrders(arg, "ak44-producer-" + arg, true);
            case "transactions" -> transactions();
            case "consume" -> consume(arg, "orders-" + ("consumer".equals(arg) ? "kip848" : arg),
                    "ak44-consumer-" + arg, 20);
            case "share-consume" -> shareConsume();
            case "sasl" -> sasl(arg);
            case "ssl" -> ssl();
            case "tls-run" -> Tls.run(arg == null ? "tls" : arg);
            case "lag" -> Analyses.lag();
            case "rebalance" -> Analyses.rebalance(arg == null ? "classic" : arg);
            case "rebalance-member" -> Analyses.rebalanceMember(arg == null ? "classic" : arg);
            case "share-group" -> Analyses.shareGroup();
            case "slow-acks" -> Analyses.slowAcks();
            case "describe-loop" -> DescribeLoop.run(java.util.Arrays.copyOfRange(args, 1, args.length));
            default -> {
                usage();
                System.exit(2);
            }
        }
        result(obj("op", "end", "scenario", cmd));
    }

    static void usage() {
        System.err.println("""
                usage: Main SCENARIO [ARG]
                  setup-topics NAME:PARTITIONS[:KEY=VALUE,...]...   create topics
                  setup-produce [CODEC]        the 20 order records to 'orders'
                  setup-warm-groups            create __consumer_offsets (a FindCoordinator)
                  setup-warm-txn               create __transaction_state (a throwaway transactional producer)
                  setup-groups                 groups orders-classic and orders-kip848 consume and commit
                  setup-share-group [GROUP]    share.auto.offset.reset=earliest for the share group
                  admin                        Admin: cluster, topics, configs, offsets, groups
                  describe-topics-cursor       describeTopics with partitionSizeLimitPerResponse=4
                  produce CODEC                idempotent producer, acks=all, compression CODEC
                  transactions                 transactional producer, then a read_committed consumer
                  consume classic|consumer     group consumer with group.protocol=classic|consumer
                  share-consume                KafkaShareConsumer, explicit acknowledgement
                  sasl PLAIN|SCRAM-SHA-256|SCRAM-SHA-512|OAUTHBEARER   Admin and producer on 9094
                  ssl                          Admin and producer over TLS on 9093
                  tls-run [TAG]                the TLS workload (Tls.java; security from KD_* variables)
                  lag                          a consumer falling behind a steady producer and catching up
                  rebalance classic|consumer   group members joining and leaving (Analyses.java)
                  rebalance-member classic|consumer   one member in its own JVM (to be killed)
                  share-group                  share consumers joining and leaving a share group
                  slow-acks                    acks=all and acks=1 producers to a slowed replica set
                  describe-loop consumer|share EVERY_MS STOP_FILE ARGS...   the groups tool, again and again""");
    }

    // ---------------------------------------------------------------- helpers

    static void result(Map<String, Object> m) {
        System.out.println("RESULT " + Json.write(m));
        System.out.flush();
    }

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? dflt : v;
    }

    static Properties base(String clientId) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, env("KD_BOOTSTRAP", "127.0.0.1:9092"));
        p.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        return p;
    }

    static Properties producerProps(Properties p) {
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    static Properties consumerProps(Properties p) {
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return p;
    }

    static String error(Throwable t) {
        while (t instanceof ExecutionException && t.getCause() != null) t = t.getCause();
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    static List<Integer> ids(Collection<Node> nodes) {
        List<Integer> l = new ArrayList<>();
        if (nodes != null) for (Node n : nodes) l.add(n.id());
        return l;
    }

    static Map<String, Object> describe(String op, TopicDescription d) {
        List<Object> parts = new ArrayList<>();
        for (TopicPartitionInfo p : d.partitions()) {
            parts.add(obj("partition", p.partition(), "leader", p.leader() == null ? null : p.leader().id(),
                    "replicas", ids(p.replicas()), "isr", ids(p.isr())));
        }
        List<String> ops = new ArrayList<>();
        if (d.authorizedOperations() != null) d.authorizedOperations().forEach(o -> ops.add(o.name()));
        return obj("op", op, "topic", d.name(), "topicId", d.topicId().toString(), "internal", d.isInternal(),
                "partitions", parts, "authorizedOperations", d.authorizedOperations() == null ? null : ops);
    }

    /** Key, headers and value of order record i; see samples/README.md. */
    static ProducerRecord<String, byte[]> order(String topic, int i) {
        String key = i % 5 == 4 ? null : "customer-" + (i % 3);
        RecordHeaders headers = new RecordHeaders();
        if (i % 4 == 0) headers.add("trace-id", String.format("trace-%04d", i).getBytes(StandardCharsets.UTF_8));
        if (i == 6) {
            headers.add("source", "kdissect".getBytes(StandardCharsets.UTF_8));
            headers.add("empty", null);
        }
        byte[] value;
        if (i == 7) {
            value = new byte[] {(byte) 0xff, (byte) 0xfe, 0x00, (byte) 0x80, (byte) 0xc3, 0x28, 0x01, 0x02, 0x03};
        } else if (i == 13) {
            value = new byte[6000]; // incompressible: spans several segments whatever the codec
            new Random(13).nextBytes(value);
        } else if (i == 16) {
            value = "order line: widget x 1 @ 9.99 EUR; ".repeat(80).getBytes(StandardCharsets.UTF_8);
        } else {
            value = String.format("order %d: crème brûlée ×%d", i, i).getBytes(StandardCharsets.UTF_8);
        }
        return new ProducerRecord<>(topic, i % 3, T0 + 1000L * i, key, value, headers);
    }

    static boolean isUtf8(byte[] b) {
        try {
            StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b));
            return true;
        } catch (java.nio.charset.CharacterCodingException e) {
            return false;
        }
    }

    static List<String> headerKeys(Iterable<Header> hs) {
        List<String> l = new ArrayList<>();
        for (Header h : hs) l.add(h.key());
        return l;
    }

    static Map<String, Object> recordResult(ConsumerRecord<String, byte[]> r) {
        Map<String, Object> m = obj("op", "record", "topic", r.topic(), "partition", r.partition(),
                "offset", r.offset(), "timestamp", r.timestamp(), "key", r.key(),
                "valueSize", r.value() == null ? null : r.value().length, "headers", headerKeys(r.headers()));
        if (r.value() != null && r.value().length < 64) {
            if (isUtf8(r.value())) m.put("value", new String(r.value(), StandardCharsets.UTF_8));
            else m.put("valueHex", HexFormat.of().formatHex(r.value()));
        }
        r.deliveryCount().ifPresent(c -> m.put("deliveryCount", c.intValue()));
        return m;
    }

    // ---------------------------------------------------------------- setup

    static void setupTopics(List<String> specs) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (String spec : specs) {
            String[] f = spec.split(":", 3);
            NewTopic t = new NewTopic(f[0], Integer.parseInt(f[1]), (short) 1);
            if (f.length == 3) {
                Map<String, String> cfg = new LinkedHashMap<>();
                for (String kv : f[2].split(",")) {
                    String[] x = kv.split("=", 2);
                    cfg.put(x[0], x[1]);
                }
                t.configs(cfg);
            }
            topics.add(t);
        }
        try (Admin admin = Admin.create(base("ak44-setup-admin"))) {
            CreateTopicsResult r = admin.createTopics(topics);
            r.all().get();
            for (NewTopic t : topics) {
                result(obj("op", "createTopic", "topic", t.name(), "partitions", t.numPartitions(),
                        "topicId", r.topicId(t.name()).get().toString()));
            }
        }
    }

    static void warmGroups() throws Exception {
        try (Admin admin = Admin.create(base("ak44-setup-admin"))) {
            admin.listConsumerGroupOffsets("warmup-group").partitionsToOffsetAndMetadata().get();
            result(obj("op", "warmGroups"));
        }
    }

    static void warmTransactions() {
        Properties p = producerProps(base("ak44-setup-txn"));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "warmup-txn");
        try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
            prod.initTransactions();
            result(obj("op", "warmTransactions"));
        }
    }

    static void setupShareGroup(String group) throws Exception {
        try (Admin admin = Admin.create(base("ak44-setup-admin"))) {
            ConfigResource res = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(res, List.of(new AlterConfigOp(
                    new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
            result(obj("op", "setShareGroupConfig", "group", group, "share.auto.offset.reset", "earliest"));
        }
    }

    // ---------------------------------------------------------------- admin

    static void admin() throws Exception {
        try (Admin admin = Admin.create(base("ak44-admin"))) {
            DescribeClusterResult c = admin.describeCluster();
            result(obj("op", "describeCluster", "clusterId", c.clusterId().get(), "controller",
                    c.controller().get().id(), "nodes", ids(c.nodes().get())));

            Map<String, TopicListing> listing = admin.listTopics(new ListTopicsOptions().listInternal(true))
                    .namesToListings().get();
            Map<String, Object> names = new TreeMap<>();
            listing.forEach((n, l) -> names.put(n, obj("topicId", l.topicId().toString(), "internal", l.isInternal())));
            result(obj("op", "listTopics", "topics", names));

            List<NewTopic> create = List.of(new NewTopic("payments", 2, (short) 1),
                    new NewTopic("audit-log", 1, (short) 1).configs(Map.of("cleanup.policy", "compact")),
                    new NewTopic(ORDERS, 3, (short) 1));
            CreateTopicsResult cr = admin.createTopics(create);
            for (NewTopic t : create) {
                try {
                    cr.values().get(t.name()).get();
                    result(obj("op", "createTopics", "topic", t.name(), "partitions", t.numPartitions(),
                            "topicId", cr.topicId(t.name()).get().toString(), "error", null));
                } catch (ExecutionException e) {
                    result(obj("op", "createTopics", "topic", t.name(), "error", error(e)));
                }
            }

            Uuid ordersId = listing.get(ORDERS).topicId();
            Uuid paymentsId = cr.topicId("payments").get();
            Map<Uuid, TopicDescription> byId = admin.describeTopics(TopicCollection.ofTopicIds(List.of(ordersId, paymentsId)))
                    .allTopicIds().get();
            for (Uuid id : List.of(ordersId, paymentsId)) {
                result(describe("describeTopicsById", byId.get(id)));
            }
            Uuid unknown = Uuid.fromString("3q2-7wAAQACAAAAAAAAAAQ");
            try {
                admin.describeTopics(TopicCollection.ofTopicIds(List.of(unknown))).allTopicIds().get();
                result(obj("op", "describeTopicsById", "topicId", unknown.toString(), "error", null));
            } catch (ExecutionException e) {
                result(obj("op", "describeTopicsById", "topicId", unknown.toString(), "error", error(e)));
            }

            ConfigResource payments = new ConfigResource(ConfigResource.Type.TOPIC, "payments");
            admin.incrementalAlterConfigs(Map.of(payments, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "86400000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("max.message.bytes", "2097152"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("segment.ms", null), AlterConfigOp.OpType.DELETE)))).all().get();
            result(obj("op", "incrementalAlterConfigs", "resource", "TOPIC:payments",
                    "set", obj("retention.ms", "86400000", "max.message.bytes", "2097152"), "delete", List.of("segment.ms")));
            Config cfg = admin.describeConfigs(List.of(payments)).all().get().get(payments);
            Map<String, Object> dynamic = new TreeMap<>();
            for (ConfigEntry e : cfg.entries()) {
                if (e.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) dynamic.put(e.name(), e.value());
            }
            result(obj("op", "describeConfigs", "resource", "TOPIC:payments", "entries", cfg.entries().size(),
                    "dynamicTopicConfigs", dynamic));

            TopicPartition o0 = new TopicPartition(ORDERS, 0), o1 = new TopicPartition(ORDERS, 1),
                    o2 = new TopicPartition(ORDERS, 2);
            Map<TopicPartition, OffsetSpec> specs = new LinkedHashMap<>();
            specs.put(o0, OffsetSpec.earliest());
            specs.put(o1, OffsetSpec.latest());
            specs.put(o2, OffsetSpec.maxTimestamp());
            listOffsets(admin, specs, Map.of(o0, "earliest", o1, "latest", o2, "maxTimestamp"));
            listOffsets(admin, Map.of(o0, OffsetSpec.forTimestamp(T0 + 9000)), Map.of(o0, "forTimestamp " + (T0 + 9000)));

            List<Object> groups = new ArrayList<>();
            for (GroupListing g : admin.listGroups().all().get()) {
                groups.add(obj("groupId", g.groupId(), "type", g.type().map(Enum::name), "protocol", g.protocol(),
                        "state", g.groupState().map(Enum::name)));
            }
            groups.sort((a, b) -> String.valueOf(((Map<?, ?>) a).get("groupId")).compareTo(
                    String.valueOf(((Map<?, ?>) b).get("groupId"))));
            result(obj("op", "listGroups", "groups", groups));

            Map<String, ConsumerGroupDescription> dg = admin.describeConsumerGroups(
                    List.of("orders-kip848", "orders-classic")).all().get();
            for (ConsumerGroupDescription g : new TreeMap<>(dg).values()) {
                List<Object> members = new ArrayList<>();
                for (MemberDescription m : g.members()) members.add(obj("memberId", m.consumerId(), "clientId", m.clientId()));
                result(obj("op", "describeConsumerGroups", "groupId", g.groupId(), "type", g.type().name(),
                        "state", g.groupState().name(), "assignor", g.partitionAssignor(), "coordinator",
                        g.coordinator() == null ? null : g.coordinator().id(), "members", members,
                        "groupEpoch", g.groupEpoch(), "targetAssignmentEpoch", g.targetAssignmentEpoch()));
            }

            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets("orders-classic")
                    .partitionsToOffsetAndMetadata().get();
            Map<String, Object> offs = new TreeMap<>();
            committed.forEach((tp, om) -> offs.put(tp.toString(), om == null ? null : om.offset()));
            result(obj("op", "listConsumerGroupOffsets", "groupId", "orders-classic", "offsets", offs));

            admin.deleteTopics(TopicCollection.ofTopicNames(List.of("audit-log"))).all().get();
            result(obj("op", "deleteTopics", "topics", List.of("audit-log")));
        }
    }

    static void listOffsets(Admin admin, Map<TopicPartition, OffsetSpec> specs, Map<TopicPartition, String> label)
            throws Exception {
        Map<TopicPartition, ListOffsetsResultInfo> r = admin.listOffsets(specs).all().get();
        for (TopicPartition tp : specs.keySet()) {
            ListOffsetsResultInfo i = r.get(tp);
            result(obj("op", "listOffsets", "partition", tp.toString(), "spec", label.get(tp), "offset", i.offset(),
                    "timestamp", i.timestamp(), "leaderEpoch", i.leaderEpoch()));
        }
    }

    static void describeTopicsCursor() throws Exception {
        try (Admin admin = Admin.create(base("ak44-admin-cursor"))) {
            List<String> names = List.of("inventory-a", "inventory-b", "inventory-c");
            DescribeTopicsOptions opts = new DescribeTopicsOptions().partitionSizeLimitPerResponse(4)
                    .includeAuthorizedOperations(true);
            Map<String, TopicDescription> d = admin.describeTopics(TopicCollection.ofTopicNames(names), opts)
                    .allTopicNames().get();
            for (String n : names) {
                result(describe("describeTopics", d.get(n)));
            }
            try {
                admin.describeTopics(List.of("missing-topic")).allTopicNames().get();
                result(obj("op", "describeTopics", "topic", "missing-topic", "error", null));
            } catch (ExecutionException e) {
                result(obj("op", "describeTopics", "topic", "missing-topic", "error", error(e)));
            }
        }
    }

    // ---------------------------------------------------------------- producers

    /** The 20 order records: 0-9, flush, 10-19, flush. */
    static void produceOrders(String codec, String clientId, boolean log) throws Exception {
        Properties p = producerProps(base(clientId));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 100);
        try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
            sendAndReport(prod, 0, 10, codec);
            sendAndReport(prod, 10, 20, codec);
        }
    }

    static void sendAndReport(KafkaProducer<String, byte[]> prod, int from, int to, String codec) throws Exception {
        List<ProducerRecord<String, byte[]>> recs = new ArrayList<>();
        List<Future<RecordMetadata>> fs = new ArrayList<>();
        for (int i = from; i < to; i++) {
            ProducerRecord<String, byte[]> r = order(ORDERS, i);
            recs.add(r);
            fs.add(prod.send(r));
        }
        prod.flush();
        for (int k = 0; k < fs.size(); k++) {
            RecordMetadata md = fs.get(k).get();
            ProducerRecord<String, byte[]> r = recs.get(k);
            result(obj("op", "send", "i", from + k, "codec", codec, "partition", md.partition(), "offset",
                    md.offset(), "timestamp", md.timestamp(), "key", r.key(), "valueSize", r.value().length,
                    "headers", headerKeys(r.headers())));
        }
    }

    static void transactions() throws Exception {
        Properties p = producerProps(base("ak44-txn-producer"));
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "orders-txn");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 50);
        try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
            prod.initTransactions();
            result(obj("op", "initTransactions", "transactionalId", "orders-txn"));

            prod.beginTransaction();
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                fs.add(prod.send(new ProducerRecord<>(ORDERS, i % 3, T0 + 1000L * i, "txn-1",
                        ("committed order " + i).getBytes(StandardCharsets.UTF_8))));
            }
            Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
            offsets.put(new TopicPartition(ORDERS, 0), new OffsetAndMetadata(5, "txn-1"));
            offsets.put(new TopicPartition(ORDERS, 1), new OffsetAndMetadata(6, null));
            prod.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata("orders-txn-group"));
            prod.commitTransaction();
            reportSends(fs, "txn-1", "commit");
            result(obj("op", "sendOffsetsToTransaction", "groupId", "orders-txn-group", "offsets",
                    obj("orders-0", 5, "orders-1", 6)));

            prod.beginTransaction();
            fs.clear();
            for (int i = 0; i < 3; i++) {
                fs.add(prod.send(new ProducerRecord<>(ORDERS, i % 3, T0 + 10000L + 1000L * i, "txn-2",
                        ("aborted order " + i).getBytes(StandardCharsets.UTF_8))));
            }
            prod.flush();
            reportSends(fs, "txn-2", "abort");
            prod.abortTransaction();

            prod.beginTransaction();
            fs.clear();
            fs.add(prod.send(new ProducerRecord<>(ORDERS, 0, T0 + 20000L, "txn-3",
                    "committed order 4".getBytes(StandardCharsets.UTF_8))));
            prod.commitTransaction();
            reportSends(fs, "txn-3", "commit");
        }

        Properties c = consumerProps(base("ak44-txn-reader"));
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(c)) {
            List<TopicPartition> tps = List.of(new TopicPartition(ORDERS, 0), new TopicPartition(ORDERS, 1),
                    new TopicPartition(ORDERS, 2));
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            int n = 0;
            long idleSince = System.currentTimeMillis();
            long deadline = idleSince + 30000;
            while (System.currentTimeMillis() - idleSince < 2000 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, byte[]> recs = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, byte[]> r : recs) {
                    result(recordResult(r));
                    n++;
                }
                if (!recs.isEmpty()) idleSince = System.currentTimeMillis();
            }
            Map<String, Object> pos = new TreeMap<>();
            for (TopicPartition tp : tps) pos.put(tp.toString(), consumer.position(tp));
            result(obj("op", "readCommitted", "records", n, "positions", pos));
        }

        try (Admin admin = Admin.create(base("ak44-txn-admin"))) {
            Map<String, Object> offs = new TreeMap<>();
            admin.listConsumerGroupOffsets("orders-txn-group").partitionsToOffsetAndMetadata().get()
                    .forEach((tp, om) -> offs.put(tp.toString(), om == null ? null : om.offset()));
            result(obj("op", "listConsumerGroupOffsets", "groupId", "orders-txn-group", "offsets", offs));
        }
    }

    static void reportSends(List<Future<RecordMetadata>> fs, String txn, String outcome) throws Exception {
        for (Future<RecordMetadata> f : fs) {
            RecordMetadata md = f.get();
            result(obj("op", "send", "transaction", txn, "outcome", outcome, "partition", md.partition(),
                    "offset", md.offset(), "timestamp", md.timestamp()));
        }
    }

    // ---------------------------------------------------------------- consumers

    static void consume(String protocol, String group, String clientId, int expected) throws Exception {
        Properties p = consumerProps(base(clientId));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(ORDERS));
            int n = 0;
            long deadline = System.currentTimeMillis() + 60000;
            while (n < expected && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    result(recordResult(r));
                    n++;
                }
            }
            consumer.commitSync();
            Set<TopicPartition> assigned = consumer.assignment();
            Map<String, Object> committed = new TreeMap<>();
            consumer.committed(assigned).forEach((tp, om) -> committed.put(tp.toString(), om == null ? null : om.offset()));
            ConsumerGroupMetadata gm = consumer.groupMetadata();
            result(obj("op", "consumed", "groupProtocol", protocol, "groupId", group, "records", n,
                    "committed", committed, "memberId", gm.memberId(), "generationId", gm.generationId()));
        }
    }

    static void shareConsume() {
        Properties p = consumerProps(base("ak44-share-consumer"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "orders-share");
        p.put("share.acknowledgement.mode", "explicit");
        int accepted = 0, rejected = 0, released = 0;
        try (KafkaShareConsumer<String, byte[]> consumer = new KafkaShareConsumer<>(p)) {
            consumer.subscribe(List.of(ORDERS));
            long deadline = System.currentTimeMillis() + 60000;
            while (accepted + rejected < 20 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, byte[]> recs = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, byte[]> r : recs) {
                    AcknowledgeType t = AcknowledgeType.ACCEPT;
                    short delivery = r.deliveryCount().orElse((short) 1);
                    if (r.partition() == 0 && r.offset() == 3) t = AcknowledgeType.REJECT;
                    else if (r.partition() == 1 && r.offset() == 2 && delivery == 1) t = AcknowledgeType.RELEASE;
                    consumer.acknowledge(r, t);
                    Map<String, Object> m = recordResult(r);
                    m.put("acknowledge", t.name());
                    result(m);
                    switch (t) {
                        case ACCEPT -> accepted++;
                        case REJECT -> rejected++;
                        case RELEASE -> released++;
                        default -> { }
                    }
                }
                if (!recs.isEmpty()) {
                    Map<TopicIdPartition, Optional<KafkaException>> res = consumer.commitSync();
                    Map<String, Object> m = new TreeMap<>();
                    res.forEach((tip, ex) -> m.put(tip.topicPartition().toString() + " " + tip.topicId(),
                            ex.map(Main::error).orElse(null)));
                    result(obj("op", "commitSync", "results", m));
                }
            }
        }
        result(obj("op", "shareConsumed", "groupId", "orders-share", "accepted", accepted, "rejected", rejected,
                "released", released));
    }

    // ---------------------------------------------------------------- security

    static void sasl(String mechanism) throws Exception {
        String user, password, module;
        switch (mechanism) {
            case "PLAIN" -> { user = "alice"; password = "alice-secret"; module = "org.apache.kafka.common.security.plain.PlainLoginModule"; }
            case "SCRAM-SHA-256" -> { user = "bob"; password = "bob-secret"; module = "org.apache.kafka.common.security.scram.ScramLoginModule"; }
            case "SCRAM-SHA-512" -> { user = "carol"; password = "carol-secret"; module = "org.apache.kafka.common.security.scram.ScramLoginModule"; }
            case "OAUTHBEARER" -> { user = "dave"; password = null; module = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"; }
            default -> throw new IllegalArgumentException("mechanism " + mechanism);
        }
        String tag = mechanism.toLowerCase();
        Properties sec = new Properties();
        sec.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, env("KD_BOOTSTRAP", "127.0.0.1:9094"));
        sec.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        sec.put("sasl.mechanism", mechanism);
        if (password == null) {
            // Kafka's unsecured JWS tokens (alg "none", unsigned, for development), one
            // extension; the login callback handler is Kafka's own unsecured one, subclassed
            // only to print each token it makes.
            sec.put("sasl.jaas.config", module + " required unsecuredLoginStringClaim_sub=\"" + user
                    + "\" unsecuredLoginExtension_traceid=\"" + OAUTH_TRACE_ID + "\";");
            sec.put("sasl.login.callback.handler.class", TokenPrintingLoginCallbackHandler.class.getName());
        } else {
            sec.put("sasl.jaas.config", module + " required username=\"" + user + "\" password=\"" + password + "\";");
            result(obj("op", "login", "mechanism", mechanism, "user", user, "password", password, "fakePassword", true));
        }
        secured(sec, "ak44-sasl-" + tag, "sasl " + mechanism);
    }

    static final String OAUTH_TRACE_ID = "kdissect-trace-0001";

    /**
     * Kafka's OAuthBearerUnsecuredLoginCallbackHandler (unsigned test tokens), printing the RESULT
     * login line with each token it makes (one per client login).
     */
    public static class TokenPrintingLoginCallbackHandler extends
            org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler {
        @Override
        public void handle(javax.security.auth.callback.Callback[] callbacks)
                throws java.io.IOException, javax.security.auth.callback.UnsupportedCallbackException {
            super.handle(callbacks);
            for (javax.security.auth.callback.Callback cb : callbacks) {
                if (cb instanceof org.apache.kafka.common.security.oauthbearer.OAuthBearerTokenCallback tc
                        && tc.token() != null) {
                    result(obj("op", "login", "mechanism", "OAUTHBEARER", "user", tc.token().principalName(),
                            "token", tc.token().value(), "extensions", Map.of("traceid", OAUTH_TRACE_ID),
                            "fakeToken", true));
                }
            }
        }
    }

    static void ssl() throws Exception {
        Properties sec = new Properties();
        sec.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, env("KD_BOOTSTRAP", "127.0.0.1:9093"));
        sec.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
        sec.put("ssl.truststore.type", "PKCS12");
        sec.put("ssl.truststore.location", env("KD_TRUSTSTORE", "client.truststore.p12"));
        sec.put("ssl.truststore.password", env("KD_TRUSTSTORE_PASSWORD", "kdissect-test"));
        secured(sec, "ak44-ssl", "ssl");
    }

    /** Admin describeCluster and listTopics, then a producer sending 3 records, over a secured listener. */
    static void secured(Properties sec, String clientId, String label) throws Exception {
        Properties a = new Properties();
        a.putAll(sec);
        a.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId + "-admin");
        try (Admin admin = Admin.create(a)) {
            DescribeClusterResult c = admin.describeCluster();
            result(obj("op", "describeCluster", "clusterId", c.clusterId().get(), "controller",
                    c.controller().get().id(), "nodes", ids(c.nodes().get())));
            result(obj("op", "listTopics", "topics", new TreeMap<>(Map.of("names",
                    new ArrayList<>(new java.util.TreeSet<>(admin.listTopics().names().get()))))));
        }
        Properties p = producerProps(new Properties());
        p.putAll(sec);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId + "-producer");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 50);
        try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                fs.add(prod.send(new ProducerRecord<>(ORDERS, i % 3, T0 + 1000L * i, "secure-" + i,
                        (label + " order " + i).getBytes(StandardCharsets.UTF_8))));
            }
            prod.flush();
            for (Future<RecordMetadata> f : fs) {
                RecordMetadata md = f.get();
                result(obj("op", "send", "via", label, "partition", md.partition(), "offset", md.offset(),
                        "timestamp", md.timestamp()));
            }
        }
    }
}
