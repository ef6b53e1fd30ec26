package kdissect.clients;

import static kdissect.clients.Json.obj;
import static kdissect.clients.Main.consumerProps;
import static kdissect.clients.Main.env;
import static kdissect.clients.Main.producerProps;
import static kdissect.clients.Main.result;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;

/**
 * The analysis captures (samples/ana-*.pcap): consumer lag, group rebalances (classic and
 * KIP-848), a share group and slow acks=all produces, each with the clients' own figures in
 * RESULT lines stamped with the wall clock ({@code "t"}, epoch milliseconds, the clock of the
 * capture's timestamps).
 *
 * <ul>
 * <li>{@code lag}: a producer writes KD_RATE records a second (default 20) to lag-events (3
 * partitions, record i to partition i % 3) for KD_PRODUCE_S seconds (default 40); a classic
 * group consumer (group lag-group, max.poll.records=10, max.partition.fetch.bytes=1024,
 * commitSync once a second) polls freely for KD_FAST_S seconds (default 10), then sleeps
 * KD_SLOW_SLEEP_MS (default 1000) after each poll for KD_SLOW_S seconds (default 15), falling
 * behind, then polls freely again until it has read everything and stays idle 3 s (the phases
 * and KD_PRODUCE_S count from the first records consumed, after the group join). Once a
 * second it prints the records-lag-max metric and each partition's records-lag and
 * records-lead (metrics.sample.window.ms=5000).</li>
 * <li>{@code rebalance classic|consumer}: a producer at KD_RATE records a second (default 10) over the 6
 * partitions of rb-events; members rb-m1 and rb-m2 join group rb-classic or rb-kip848 one
 * after the other, the script runs rb-m3 in its own JVM ({@code rebalance-member}) and kills
 * it, then rb-m2 and rb-m1 leave (the steps are in {@link #rebalance}). Every assignment
 * change is a RESULT line.</li>
 * <li>{@code share-group}: a producer at 10 records a second to share-jobs (2 partitions);
 * share consumers sh-c1 (0 s), sh-c2 (8 s), sh-c3 (14 s) in share group share-jobs-group
 * (explicit acknowledgement: ACCEPT, but RELEASE on first delivery of every offset divisible
 * by 7 and REJECT every offset divisible by 11); sh-c2 leaves at 22 s, the others at 32 s.</li>
 * <li>{@code slow-acks}: producers slow-acks-all (acks=all) and slow-acks-one (acks=1), each
 * 5 records a second for KD_PRODUCE_S seconds (default 20) to partition 0 of slow-acks
 * (replicas 1, 2, 3, leader 1); each acknowledgement is a RESULT line with the time from
 * send() to the callback, and the producers' request-latency metrics are printed at the
 * end.</li>
 * </ul>
 */
final class Analyses {
    private Analyses() {}

    static long now() {
        return System.currentTimeMillis();
    }

    static int envInt(String name, int dflt) {
        return Integer.parseInt(env(name, Integer.toString(dflt)));
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(Math.max(0, ms));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static Properties base(String clientId) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, env("KD_BOOTSTRAP", "127.0.0.1:9092"));
        p.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        return p;
    }

    static byte[] value(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A producer writing rate records a second, record i to partition i % partitions, until stop. */
    static Thread steadyProducer(String clientId, String topic, int partitions, int rate, String acks,
            AtomicBoolean stop, AtomicLong produced) {
        Thread t = new Thread(() -> {
            Properties p = producerProps(base(clientId));
            p.put(ProducerConfig.ACKS_CONFIG, acks);
            p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
                long start = now();
                long i = 0;
                while (!stop.get()) {
                    long due = start + i * 1000L / rate;
                    sleep(due - now());
                    final long n = i;
                    final long sent = now();
                    prod.send(new ProducerRecord<>(topic, (int) (n % partitions), sent, "key-" + (n % partitions),
                            value(String.format("%s event %d sent at %d", topic, n, sent))), (md, e) -> {
                                if (e != null) {
                                    result(obj("op", "sendError", "t", now(), "client", clientId, "i", n,
                                            "error", Main.error(e)));
                                } else if (n % 50 == 0) {
                                    result(obj("op", "send", "t", now(), "client", clientId, "i", n,
                                            "partition", md.partition(), "offset", md.offset(), "timestamp", sent));
                                }
                            });
                    produced.incrementAndGet();
                    i++;
                }
                prod.flush();
                result(obj("op", "producerDone", "t", now(), "client", clientId, "records", i));
            }
        }, clientId);
        t.start();
        return t;
    }

    static Map<String, Object> lagMetrics(Map<MetricName, ? extends Metric> metrics) {
        Map<String, Object> m = new TreeMap<>();
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName n = e.getKey();
            if (!n.group().equals("consumer-fetch-manager-metrics")) continue;
            String name = n.name();
            if (!name.equals("records-lag-max") && !name.equals("records-lag") && !name.equals("records-lead")) continue;
            String key = name;
            if (n.tags().containsKey("partition")) key = name + " " + n.tags().get("topic") + "-" + n.tags().get("partition");
            else if (n.tags().containsKey("topic")) continue;
            Object v = e.getValue().metricValue();
            // NaN (no sample in the window yet) is not JSON: written as null.
            if (v instanceof Double d && (d.isNaN() || d.isInfinite())) v = null;
            m.put(key, v);
        }
        return m;
    }

    // ---------------------------------------------------------------- lag

    static void lag() throws Exception {
        int rate = envInt("KD_RATE", 20);
        int produceS = envInt("KD_PRODUCE_S", 40);
        int fastS = envInt("KD_FAST_S", 10);
        int slowS = envInt("KD_SLOW_S", 15);
        int slowSleep = envInt("KD_SLOW_SLEEP_MS", 1000);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong produced = new AtomicLong();
        long t0 = now();
        result(obj("op", "lagPlan", "t", t0, "rate", rate, "produceS", produceS, "fastS", fastS, "slowS", slowS,
                "slowSleepMs", slowSleep));
        Thread producer = steadyProducer("lag-producer", "lag-events", 3, rate, "all", stop, produced);

        Properties p = consumerProps(base("lag-consumer"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "lag-group");
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10);
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 1024);
        p.put(ConsumerConfig.METRICS_SAMPLE_WINDOW_MS_CONFIG, 5000);
        long consumed = 0;
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of("lag-events"));
            long lastReport = 0, lastCommit = 0, idleSince = now();
            // The phases count from the first records consumed (joining the group takes a few
            // seconds, longer on a loaded machine), and so does the producer's run time.
            long first = -1;
            String phase = "joining";
            while (true) {
                long t = first < 0 ? -1 : now() - first;
                String want = t < 0 ? "joining" : t < fastS * 1000L ? "fast"
                        : t < (fastS + slowS) * 1000L ? "slow" : "catch-up";
                if (!want.equals(phase)) {
                    phase = want;
                    result(obj("op", "phase", "t", now(), "phase", phase));
                }
                if (t >= produceS * 1000L && !stop.get()) stop.set(true);
                ConsumerRecords<String, byte[]> recs = consumer.poll(Duration.ofMillis(100));
                consumed += recs.count();
                if (!recs.isEmpty()) idleSince = now();
                if (!recs.isEmpty() && first < 0) first = now();
                if (now() - lastCommit >= 1000 && !consumer.assignment().isEmpty()) {
                    consumer.commitSync();
                    lastCommit = now();
                }
                if (now() - lastReport >= 1000) {
                    lastReport = now();
                    Map<String, Object> m = obj("op", "metrics", "t", lastReport, "phase", phase, "produced",
                            produced.get(), "consumed", consumed);
                    m.putAll(lagMetrics(consumer.metrics()));
                    Map<String, Object> pos = new TreeMap<>();
                    for (TopicPartition tp : consumer.assignment()) pos.put(tp.toString(), consumer.position(tp));
                    m.put("positions", pos);
                    result(m);
                }
                if (stop.get() && !producer.isAlive() && now() - idleSince > 3000) break;
                if ("slow".equals(phase)) sleep(slowSleep);
            }
            consumer.commitSync();
            result(obj("op", "consumed", "t", now(), "records", consumed, "produced", produced.get()));
        }
        producer.join();
    }

    // ---------------------------------------------------------------- rebalance

    static Properties groupProps(String protocol, String clientId) {
        Properties p = consumerProps(base(clientId));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "consumer".equals(protocol) ? "rb-kip848" : "rb-classic");
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, true);
        p.put(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, 1000);
        if ("classic".equals(protocol)) {
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6000);
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1000);
        }
        return p;
    }

    static List<String> names(Collection<TopicPartition> tps) {
        List<String> l = new ArrayList<>();
        for (TopicPartition tp : tps) l.add(tp.toString());
        l.sort(null);
        return l;
    }

    /** One group member: polls until stop, printing each assignment change and a lag line every 2 s. */
    static void member(String protocol, String clientId, AtomicBoolean stop) {
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(groupProps(protocol, clientId))) {
            consumer.subscribe(List.of("rb-events"), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> parts) {
                    result(obj("op", "revoked", "t", now(), "member", clientId, "partitions", names(parts)));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                    result(obj("op", "assigned", "t", now(), "member", clientId, "partitions", names(parts),
                            "assignment", names(consumer.assignment()), "generation",
                            consumer.groupMetadata().generationId(), "memberId", consumer.groupMetadata().memberId()));
                    if (!consumer.assignment().isEmpty()) ASSIGNED.computeIfAbsent(clientId, k -> new CountDownLatch(1)).countDown();
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> parts) {
                    result(obj("op", "lost", "t", now(), "member", clientId, "partitions", names(parts)));
                }
            });
            result(obj("op", "join", "t", now(), "member", clientId, "protocol", protocol));
            long consumed = 0, lastReport = now();
            while (!stop.get()) {
                consumed += consumer.poll(Duration.ofMillis(200)).count();
                if (now() - lastReport >= 2000) {
                    lastReport = now();
                    Map<String, Object> m = obj("op", "metrics", "t", lastReport, "member", clientId, "consumed",
                            consumed, "generation", consumer.groupMetadata().generationId(), "assignment",
                            names(consumer.assignment()));
                    m.putAll(lagMetrics(consumer.metrics()));
                    result(m);
                }
            }
            result(obj("op", "leave", "t", now(), "member", clientId, "consumed", consumed));
        }
        result(obj("op", "closed", "t", now(), "member", clientId));
    }

    static Thread memberThread(String protocol, String clientId, AtomicBoolean stop) {
        Thread t = new Thread(() -> member(protocol, clientId, stop), clientId);
        t.start();
        return t;
    }

    /** Members that have been given partitions at least once. */
    static final Map<String, CountDownLatch> ASSIGNED = new ConcurrentHashMap<>();

    static void awaitAssigned(String clientId, int seconds) throws InterruptedException {
        if (!ASSIGNED.computeIfAbsent(clientId, k -> new CountDownLatch(1)).await(seconds, TimeUnit.SECONDS)) {
            result(obj("op", "timeout", "t", now(), "waitingFor", clientId + " assigned"));
        }
    }

    /** Waits until FILE exists (created by the sample script), at most seconds. */
    static void awaitFile(Path file, int seconds) {
        long until = now() + seconds * 1000L;
        while (!Files.exists(file) && now() < until) sleep(100);
        if (!Files.exists(file)) result(obj("op", "timeout", "t", now(), "waitingFor", file.toString()));
    }

    /**
     * The steps follow the group, not the clock (a loaded machine starts JVMs and joins groups
     * slowly): rb-m1 joins; KD_STEP_S (default 4) seconds after it has partitions rb-m2 joins;
     * KD_STEP_S after rb-m2 has partitions the file KD_SIGNAL_DIR/m3-start is written, for the
     * script to start rb-m3 in its own JVM and later kill it; when the script writes
     * KD_SIGNAL_DIR/m2-leave, rb-m2 leaves; 2 * KD_STEP_S later rb-m1 leaves and the producer
     * stops.
     */
    static void rebalance(String protocol) throws Exception {
        int step = envInt("KD_STEP_S", 4);
        Path dir = Path.of(env("KD_SIGNAL_DIR", "."));
        long t0 = now();
        result(obj("op", "rebalancePlan", "t", t0, "protocol", protocol, "stepS", step));
        AtomicBoolean stopAll = new AtomicBoolean(), stop2 = new AtomicBoolean();
        AtomicLong produced = new AtomicLong();
        Thread producer = steadyProducer("rb-producer", "rb-events", 6, envInt("KD_RATE", 10), "all", stopAll, produced);
        Thread m1 = memberThread(protocol, "rb-m1", stopAll);
        awaitAssigned("rb-m1", 120);
        sleep(step * 1000L);
        Thread m2 = memberThread(protocol, "rb-m2", stop2);
        awaitAssigned("rb-m2", 120);
        sleep(step * 1000L);
        Files.writeString(dir.resolve("m3-start"), Long.toString(now()));
        result(obj("op", "signal", "t", now(), "file", "m3-start"));
        awaitFile(dir.resolve("m2-leave"), 180);
        stop2.set(true);
        m2.join();
        sleep(2L * step * 1000L);
        stopAll.set(true);
        m1.join();
        producer.join();
        result(obj("op", "rebalanceDone", "t", now(), "produced", produced.get()));
    }

    /** rb-m3 alone in this JVM, polling until the JVM is killed (or KD_MEMBER_S seconds pass). */
    static void rebalanceMember(String protocol) {
        AtomicBoolean stop = new AtomicBoolean();
        Thread t = memberThread(protocol, "rb-m3", stop);
        sleep(envInt("KD_MEMBER_S", 120) * 1000L);
        stop.set(true);
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- share group

    static void shareMember(String clientId, AtomicBoolean stop, Map<String, Long> counts) {
        Properties p = consumerProps(base(clientId));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "share-jobs-group");
        p.put("share.acknowledgement.mode", "explicit");
        long accepted = 0, released = 0, rejected = 0;
        try (KafkaShareConsumer<String, byte[]> consumer = new KafkaShareConsumer<>(p)) {
            consumer.subscribe(List.of("share-jobs"));
            result(obj("op", "join", "t", now(), "member", clientId));
            long lastReport = now();
            while (!stop.get()) {
                ConsumerRecords<String, byte[]> recs = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, byte[]> r : recs) {
                    short delivery = r.deliveryCount().orElse((short) 1);
                    AcknowledgeType type = AcknowledgeType.ACCEPT;
                    if (r.offset() % 11 == 0) type = AcknowledgeType.REJECT;
                    else if (r.offset() % 7 == 0 && delivery == 1) type = AcknowledgeType.RELEASE;
                    consumer.acknowledge(r, type);
                    switch (type) {
                        case ACCEPT -> accepted++;
                        case RELEASE -> released++;
                        case REJECT -> rejected++;
                        default -> { }
                    }
                    if (type != AcknowledgeType.ACCEPT) {
                        result(obj("op", "acknowledge", "t", now(), "member", clientId, "partition", r.partition(),
                                "offset", r.offset(), "deliveryCount", delivery, "type", type.name()));
                    }
                }
                if (!recs.isEmpty()) consumer.commitSync();
                if (now() - lastReport >= 2000) {
                    lastReport = now();
                    result(obj("op", "metrics", "t", lastReport, "member", clientId, "accepted", accepted,
                            "released", released, "rejected", rejected));
                }
            }
            result(obj("op", "leave", "t", now(), "member", clientId, "accepted", accepted, "released", released,
                    "rejected", rejected));
        }
        counts.merge("accepted", accepted, Long::sum);
        counts.merge("released", released, Long::sum);
        counts.merge("rejected", rejected, Long::sum);
        result(obj("op", "closed", "t", now(), "member", clientId));
    }

    static Thread shareThread(String clientId, AtomicBoolean stop, Map<String, Long> counts) {
        Thread t = new Thread(() -> shareMember(clientId, stop, counts), clientId);
        t.start();
        return t;
    }

    static void shareGroup() throws Exception {
        long t0 = now();
        result(obj("op", "sharePlan", "t", t0, "c2JoinS", 8, "c3JoinS", 14, "c2LeaveS", 22, "endS", 32));
        AtomicBoolean stopAll = new AtomicBoolean(), stop2 = new AtomicBoolean();
        AtomicLong produced = new AtomicLong();
        Map<String, Long> counts = new ConcurrentHashMap<>();
        Thread producer = steadyProducer("sh-producer", "share-jobs", 2, 10, "all", stopAll, produced);
        Thread c1 = shareThread("sh-c1", stopAll, counts);
        sleep(t0 + 8000 - now());
        Thread c2 = shareThread("sh-c2", stop2, counts);
        sleep(t0 + 14000 - now());
        Thread c3 = shareThread("sh-c3", stopAll, counts);
        sleep(t0 + 22000 - now());
        stop2.set(true);
        c2.join();
        sleep(t0 + 32000 - now());
        stopAll.set(true);
        producer.join();
        c1.join();
        c3.join();
        result(obj("op", "shareDone", "t", now(), "produced", produced.get(), "counts", new TreeMap<>(counts)));
    }

    // ---------------------------------------------------------------- slow acks

    static Thread timedProducer(String clientId, String acks, int seconds, CountDownLatch done) {
        Thread t = new Thread(() -> {
            Properties p = producerProps(base(clientId));
            p.put(ProducerConfig.ACKS_CONFIG, acks);
            p.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "all".equals(acks));
            try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
                long start = now();
                int n = 5 * seconds;
                for (int i = 0; i < n; i++) {
                    sleep(start + i * 200L - now());
                    final int k = i;
                    final long sent = now();
                    prod.send(new ProducerRecord<>("slow-acks", 0, sent, clientId + "-" + i,
                            value(String.format("%s record %d acks=%s", clientId, i, acks))), (md, e) -> {
                                long ackAt = now();
                                result(obj("op", "ack", "t", ackAt, "client", clientId, "acks", acks, "i", k,
                                        "sent", sent, "latencyMs", ackAt - sent, "offset", md == null ? null : md.offset(),
                                        "error", e == null ? null : Main.error(e)));
                            });
                }
                prod.flush();
                Map<String, Object> m = new TreeMap<>();
                for (Map.Entry<MetricName, ? extends Metric> e : prod.metrics().entrySet()) {
                    MetricName mn = e.getKey();
                    if (mn.group().equals("producer-metrics") && (mn.name().startsWith("request-latency")
                            || mn.name().startsWith("record-queue-time"))) {
                        m.put(mn.name(), e.getValue().metricValue());
                    }
                }
                result(obj("op", "producerMetrics", "t", now(), "client", clientId, "acks", acks, "metrics", m));
            }
            done.countDown();
        }, clientId);
        t.start();
        return t;
    }

    static void slowAcks() throws Exception {
        int seconds = envInt("KD_PRODUCE_S", 20);
        CountDownLatch done = new CountDownLatch(2);
        result(obj("op", "slowAcksPlan", "t", now(), "seconds", seconds, "ratePerProducer", 5));
        describeReplicas("slow-acks");
        timedProducer("slow-acks-all", "all", seconds, done);
        timedProducer("slow-acks-one", "1", seconds, done);
        done.await(seconds + 60, TimeUnit.SECONDS);
        describeReplicas("slow-acks");
    }

    /** Leader, replicas and ISR of each partition of topic, as a RESULT line. */
    static void describeReplicas(String topic) throws Exception {
        try (Admin admin = Admin.create(base("slow-acks-admin"))) {
            List<Object> parts = new ArrayList<>();
            for (org.apache.kafka.common.TopicPartitionInfo p : admin.describeTopics(List.of(topic)).allTopicNames().get()
                    .get(topic).partitions()) {
                parts.add(obj("partition", p.partition(), "leader", p.leader() == null ? null : p.leader().id(),
                        "replicas", Main.ids(p.replicas()), "isr", Main.ids(p.isr())));
            }
            result(obj("op", "describeTopic", "t", now(), "topic", topic, "partitions", parts));
        }
    }

    /** setup-replicated TOPIC: one partition with replicas 1, 2, 3 (leader 1) on the cluster. */
    static void setupReplicated(String topic) throws Exception {
        try (Admin admin = Admin.create(base("ana-setup-admin"))) {
            admin.createTopics(List.of(new NewTopic(topic, Map.of(0, List.of(1, 2, 3))))).all().get();
            result(obj("op", "createTopic", "topic", topic, "replicas", List.of(1, 2, 3)));
        }
    }
}
