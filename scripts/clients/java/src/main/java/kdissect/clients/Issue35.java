package kdissect.clients;

import static kdissect.clients.Json.obj;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;
import org.apache.kafka.streams.processor.api.RecordMetadata;

/**
 * The Java side of the issue-35 captures (samples/issue35-*.pcap, scripts/make-samples-issue35.sh).
 * Every line on stdout is one JSON object (NDJSON) in the schema of samples/README.md: "ts_ns"
 * (wall clock, nanoseconds, the clock of tcpdump's timestamps), "client" (role name), "client_id",
 * "event". The Kafka clients' own log goes to stderr (the script gives a log4j2 configuration).
 *
 * <pre>
 * Issue35 topics SPEC...                                 create topics NAME:PARTITIONS (RF 3)
 * Issue35 consumer NAME CLIENT_ID GROUP TOPIC PROTOCOL SECONDS   group consumer
 * Issue35 streams NAME CLIENT_ID APP_ID IN OUT SECONDS    Kafka Streams, group.protocol=streams
 * </pre>
 *
 * Environment: KD_BOOTSTRAP (default the three brokers of scripts/kafka-cluster).
 */
public final class Issue35 {
    private static String name = "java";
    private static String clientId = "";

    private Issue35() {}

    public static void main(String[] args) throws Exception {
        switch (args.length > 0 ? args[0] : "") {
            case "topics" -> topics(List.of(args).subList(1, args.length));
            case "consumer" -> consumer(args[1], args[2], args[3], args[4], args[5], seconds(args[6]));
            case "streams" -> streams(args[1], args[2], args[3], args[4], args[5], seconds(args[6]));
            default -> {
                System.err.println("usage: Issue35 topics SPEC... | consumer NAME CLIENT_ID GROUP TOPIC"
                        + " PROTOCOL SECONDS | streams NAME CLIENT_ID APP_ID IN OUT SECONDS");
                System.exit(2);
            }
        }
        System.exit(0);
    }

    static long seconds(String s) {
        return (long) (Double.parseDouble(s) * 1000);
    }

    /** Wall clock in nanoseconds (Instant has the system clock's full resolution). */
    static long nowNs() {
        java.time.Instant t = java.time.Instant.now();
        return t.getEpochSecond() * 1_000_000_000L + t.getNano();
    }

    static synchronized void emit(String event, Object... kv) {
        Map<String, Object> m = obj("ts_ns", nowNs(), "client", name, "client_id", clientId, "event", event);
        m.putAll(obj(kv));
        System.out.println(Json.write(m));
        System.out.flush();
    }

    static Properties base(String id) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
                Main.env("KD_BOOTSTRAP", "127.0.0.2:9092,127.0.0.3:9192,127.0.0.4:9292"));
        p.put(CommonClientConfigs.CLIENT_ID_CONFIG, id);
        return p;
    }

    static void started(String role, Properties p) {
        Map<String, Object> conf = new TreeMap<>();
        p.forEach((k, v) -> conf.put(k.toString(), v.toString()));
        emit("started", "role", role, "software", "apache-kafka-java", "version", AppInfoParser.getVersion(),
                "commit", AppInfoParser.getCommitId(), "config", conf);
    }

    static List<Object> tps(Collection<TopicPartition> parts) {
        List<Object> l = new ArrayList<>();
        parts.stream().sorted((a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition())
                : a.topic().compareTo(b.topic())).forEach(tp -> l.add(List.of(tp.topic(), tp.partition())));
        return l;
    }

    // ---------------------------------------------------------------- setup

    /**
     * Creates each topic NAME:PARTITIONS (replication factor 3); one that exists already (a rerun
     * on a running cluster) is deleted first, and each group:NAME is deleted, so that a rerun
     * starts from empty topics and groups.
     */
    static void topics(List<String> specs) throws Exception {
        name = "setup";
        clientId = "issue35-setup";
        try (Admin admin = Admin.create(base(clientId))) {
            List<NewTopic> topics = new ArrayList<>();
            List<String> groups = new ArrayList<>();
            for (String s : specs) {
                String[] nt = s.split(":");
                if (nt[0].equals("group")) groups.add(nt[1]);
                else topics.add(new NewTopic(nt[0], Integer.parseInt(nt[1]), (short) 3));
            }
            if (!groups.isEmpty()) {
                try {
                    admin.deleteConsumerGroups(groups).all().get();
                    emit("groups_deleted", "groups", groups);
                } catch (java.util.concurrent.ExecutionException e) {
                    // GroupIdNotFound: nothing to delete
                }
            }
            java.util.Set<String> existing = admin.listTopics().names().get();
            List<String> old = topics.stream().map(NewTopic::name).filter(existing::contains).toList();
            if (!old.isEmpty()) {
                admin.deleteTopics(old).all().get();
                emit("topics_deleted", "topics", old);
                while (admin.listTopics().names().get().stream().anyMatch(old::contains)) Thread.sleep(500);
                Thread.sleep(2000);
            }
            CreateTopicsResult r = admin.createTopics(topics);
            r.all().get();
            for (NewTopic t : topics) {
                emit("topic_created", "topic", t.name(), "partitions", t.numPartitions(), "replication_factor", 3,
                        "topic_id", r.topicId(t.name()).get().toString());
            }
            admin.listConsumerGroupOffsets("issue35-warmup").partitionsToOffsetAndMetadata().get();
        }
    }

    // ---------------------------------------------------------------- consumer

    /**
     * A group consumer: "received" per record, "assigned" / "revoked" / "lost" from the rebalance
     * listener (with generation and member id), "committed" for every commit (commitAsync of the
     * positions every second, commitSync on revocation), and once a second "stats" with, per
     * assigned partition, position, records-lag and records-lead (the consumer's own metrics; null
     * before the first fetch of the partition).
     */
    static void consumer(String nm, String id, String group, String topic, String protocol, long millis)
            throws Exception {
        name = nm;
        clientId = id;
        Properties p = base(id);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        if ("classic".equals(protocol)) {
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
            // The assignor librdkafka's members of the same group also offer.
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                    "org.apache.kafka.clients.consumer.RangeAssignor");
        }
        started("consumer", p);
        long end = System.currentTimeMillis() + millis;
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> parts) {
                    emit("revoked", "group", group, "protocol", protocol, "member_id", c.groupMetadata().memberId(),
                            "generation", c.groupMetadata().generationId(), "partitions", tps(parts));
                    commitSync(c, group, parts);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                    emit("assigned", "group", group, "protocol", protocol, "member_id", c.groupMetadata().memberId(),
                            "generation", c.groupMetadata().generationId(), "partitions", tps(parts),
                            "assignment", tps(c.assignment()));
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> parts) {
                    emit("lost", "group", group, "protocol", protocol, "member_id", c.groupMetadata().memberId(),
                            "generation", c.groupMetadata().generationId(), "partitions", tps(parts));
                }
            });
            emit("subscribed", "group", group, "protocol", protocol, "topics", List.of(topic));
            long lastTick = System.currentTimeMillis();
            int n = 0;
            while (System.currentTimeMillis() < end) {
                ConsumerRecords<String, byte[]> recs = c.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, byte[]> r : recs) {
                    String v = new String(r.value(), StandardCharsets.UTF_8);
                    Integer i = v.startsWith("issue35 i=") ? Integer.valueOf(v.substring(10)) : null;
                    emit("received", "topic", r.topic(), "partition", r.partition(), "offset", r.offset(), "key",
                            r.key(), "timestamp_ms", r.timestamp(), "i", i);
                    n++;
                }
                if (System.currentTimeMillis() - lastTick >= 1000) {
                    lastTick = System.currentTimeMillis();
                    stats(c, group);
                    commitAsync(c, group);
                }
            }
            commitSync(c, group, c.assignment());
            emit("closing", "group", group, "received", n, "member_id", c.groupMetadata().memberId(), "generation",
                    c.groupMetadata().generationId());
        }
        emit("closed", "group", group);
    }

    static List<Object> offsetList(Map<TopicPartition, OffsetAndMetadata> offs) {
        List<Object> l = new ArrayList<>();
        offs.forEach((tp, om) -> l.add(obj("topic", tp.topic(), "partition", tp.partition(), "offset", om.offset())));
        return l;
    }

    static Map<TopicPartition, OffsetAndMetadata> positions(KafkaConsumer<String, byte[]> c,
            Collection<TopicPartition> parts) {
        Map<TopicPartition, OffsetAndMetadata> offs = new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
        for (TopicPartition tp : parts) {
            try {
                offs.put(tp, new OffsetAndMetadata(c.position(tp, Duration.ofMillis(100))));
            } catch (RuntimeException e) {
                // no position yet (still resetting): nothing to commit for it
            }
        }
        return offs;
    }

    static void commitAsync(KafkaConsumer<String, byte[]> c, String group) {
        Map<TopicPartition, OffsetAndMetadata> offs = positions(c, c.assignment());
        if (offs.isEmpty()) return;
        c.commitAsync(offs, (done, ex) -> emit("committed", "group", group, "sync", false, "error",
                ex == null ? null : ex.getClass().getSimpleName() + ": " + ex.getMessage(), "offsets",
                offsetList(offs)));
    }

    static void commitSync(KafkaConsumer<String, byte[]> c, String group, Collection<TopicPartition> parts) {
        Map<TopicPartition, OffsetAndMetadata> offs = positions(c, parts);
        if (offs.isEmpty()) return;
        try {
            c.commitSync(offs);
            emit("committed", "group", group, "sync", true, "error", null, "offsets", offsetList(offs));
        } catch (RuntimeException e) {
            emit("committed", "group", group, "sync", true, "error", e.getClass().getSimpleName() + ": " + e.getMessage(),
                    "offsets", offsetList(offs));
        }
    }

    static Double metric(Map<MetricName, ? extends Metric> ms, String mname, TopicPartition tp) {
        for (Map.Entry<MetricName, ? extends Metric> e : ms.entrySet()) {
            MetricName k = e.getKey();
            if (k.name().equals(mname) && "consumer-fetch-manager-metrics".equals(k.group())
                    && tp.topic().equals(k.tags().get("topic"))
                    && String.valueOf(tp.partition()).equals(k.tags().get("partition"))) {
                Object v = e.getValue().metricValue();
                if (v instanceof Double d && !d.isNaN() && !d.isInfinite()) return d;
                return null;
            }
        }
        return null;
    }

    static Double metric(Map<MetricName, ? extends Metric> ms, String mname) {
        for (Map.Entry<MetricName, ? extends Metric> e : ms.entrySet()) {
            MetricName k = e.getKey();
            if (k.name().equals(mname) && "consumer-fetch-manager-metrics".equals(k.group()) && !k.tags().containsKey("topic")) {
                Object v = e.getValue().metricValue();
                if (v instanceof Double d && !d.isNaN() && !d.isInfinite()) return d;
                return null;
            }
        }
        return null;
    }

    static void stats(KafkaConsumer<String, byte[]> c, String group) {
        Map<MetricName, ? extends Metric> ms = c.metrics();
        List<Object> parts = new ArrayList<>();
        for (Object o : tps(c.assignment())) {
            List<?> tpl = (List<?>) o;
            TopicPartition tp = new TopicPartition((String) tpl.get(0), (Integer) tpl.get(1));
            Long pos = null;
            try {
                pos = c.position(tp, Duration.ofMillis(50));
            } catch (RuntimeException e) {
                // no position yet
            }
            parts.add(obj("topic", tp.topic(), "partition", tp.partition(), "position", pos, "records_lag",
                    metric(ms, "records-lag", tp), "records_lead", metric(ms, "records-lead", tp)));
        }
        emit("stats", "group", group, "member_id", c.groupMetadata().memberId(), "generation",
                c.groupMetadata().generationId(), "records_lag_max", metric(ms, "records-lag-max"), "partitions", parts);
    }

    // ---------------------------------------------------------------- streams

    /**
     * Kafka Streams with group.protocol=streams: IN grouped by key and counted into OUT. Logs
     * "received" for every record the source processes (topic, partition, offset), "state" for
     * every state change, and "tasks" whenever the active or standby tasks of this instance
     * change (checked every 200 ms), with each task's input partitions.
     */
    static void streams(String nm, String id, String appId, String in, String out, long millis) throws Exception {
        name = nm;
        clientId = id;
        Properties p = new Properties();
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG,
                Main.env("KD_BOOTSTRAP", "127.0.0.2:9092,127.0.0.3:9192,127.0.0.4:9292"));
        p.put(StreamsConfig.CLIENT_ID_CONFIG, id);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 1000);
        p.put(StreamsConfig.STATE_DIR_CONFIG, Main.env("KD_STATE_DIR", "/tmp/kdissect-streams-state") + "/" + nm);
        p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        started("streams", p);
        StreamsBuilder b = new StreamsBuilder();
        b.stream(in, Consumed.with(Serdes.String(), Serdes.ByteArray()))
                .processValues(() -> new FixedKeyProcessor<String, byte[], byte[]>() {
                    private FixedKeyProcessorContext<String, byte[]> ctx;

                    @Override
                    public void init(FixedKeyProcessorContext<String, byte[]> context) {
                        ctx = context;
                    }

                    @Override
                    public void process(FixedKeyRecord<String, byte[]> r) {
                        RecordMetadata md = ctx.recordMetadata().orElse(null);
                        String v = new String(r.value(), StandardCharsets.UTF_8);
                        Integer i = v.startsWith("issue35 i=") ? Integer.valueOf(v.substring(10)) : null;
                        emit("received", "topic", md == null ? null : md.topic(), "partition",
                                md == null ? null : md.partition(), "offset", md == null ? null : md.offset(), "key",
                                r.key(), "timestamp_ms", r.timestamp(), "i", i, "task", ctx.taskId().toString());
                        ctx.forward(r);
                    }
                })
                .groupByKey()
                .count()
                .toStream()
                .to(out, Produced.with(Serdes.String(), Serdes.Long()));
        try (KafkaStreams ks = new KafkaStreams(b.build(), p)) {
            ks.setStateListener((now, before) -> emit("state", "from", before.name(), "to", now.name()));
            ks.start();
            long end = System.currentTimeMillis() + millis;
            Object last = null;
            while (System.currentTimeMillis() < end) {
                Object cur = tasks(ks);
                if (!Objects.equals(cur, last)) {
                    emit("tasks", "tasks", cur);
                    last = cur;
                }
                Thread.sleep(200);
            }
            emit("closing");
            ks.close(Duration.ofSeconds(20));
        }
        emit("closed");
    }

    static Object tasks(KafkaStreams ks) {
        List<Object> threads = new ArrayList<>();
        for (ThreadMetadata t : ks.metadataForLocalThreads()) {
            threads.add(obj("thread", t.threadName(), "state", t.threadState(), "active", taskList(t.activeTasks()),
                    "standby", taskList(t.standbyTasks())));
        }
        return threads;
    }

    static List<Object> taskList(Collection<TaskMetadata> ts) {
        List<Object> l = new ArrayList<>();
        ts.stream().sorted((a, b) -> a.taskId().toString().compareTo(b.taskId().toString()))
                .forEach(t -> l.add(obj("task", t.taskId().toString(), "partitions", tps(t.topicPartitions()))));
        return l;
    }
}
