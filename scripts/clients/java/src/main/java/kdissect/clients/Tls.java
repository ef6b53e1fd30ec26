package kdissect.clients;

import static kdissect.clients.Json.obj;
import static kdissect.clients.Main.consumerProps;
import static kdissect.clients.Main.env;
import static kdissect.clients.Main.ids;
import static kdissect.clients.Main.producerProps;
import static kdissect.clients.Main.recordResult;
import static kdissect.clients.Main.result;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.Future;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The TLS captures (samples/tls-*.pcap) and their plaintext legs: one workload, run once over a
 * TLS listener and once over the matching plaintext one, so that the decrypted messages can be
 * held against the plaintext ones. Security settings come from the environment:
 *
 * <pre>
 * KD_BOOTSTRAP      127.0.0.1:9093 (SSL), :9096 (SASL_SSL), :9092 / :9094 for the plaintext legs
 * KD_SECURITY       PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
 * KD_TLS_PROTOCOL   TLSv1.3 | TLSv1.2  (ssl.protocol and ssl.enabled.protocols)
 * KD_TLS_SUITES     ssl.cipher.suites, comma-separated (the client offers only these)
 * KD_SASL           PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512  (fake test users, as in Main.sasl)
 * KD_TRUSTSTORE, KD_TRUSTSTORE_PASSWORD   the broker's trust store (PKCS12)
 * </pre>
 *
 * The workload: an Admin describeCluster; an idempotent producer (acks=all, linger.ms=50, no
 * compression) sending the 20 order records of Main.order to topic tls-orders and then record
 * 20, a 20000-byte incompressible value (java.util.Random(20)) with key "big" to partition 0,
 * so that one Produce request and one Fetch answer are larger than a TLS record (16 KiB); a
 * classic-group consumer (group tls-group, earliest, no auto commit) reading the 21 records,
 * committing and leaving.
 */
final class Tls {
    static final String TOPIC = "tls-orders";
    static final int BIG = 20000;

    private Tls() {}

    static Properties security(String clientId) {
        Properties p = new Properties();
        p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, env("KD_BOOTSTRAP", "127.0.0.1:9093"));
        p.put(CommonClientConfigs.CLIENT_ID_CONFIG, clientId);
        String proto = env("KD_SECURITY", "SSL");
        p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, proto);
        if (proto.endsWith("SSL")) {
            p.put("ssl.truststore.type", "PKCS12");
            p.put("ssl.truststore.location", env("KD_TRUSTSTORE", "client.truststore.p12"));
            p.put("ssl.truststore.password", env("KD_TRUSTSTORE_PASSWORD", "kdissect-test"));
            String tls = env("KD_TLS_PROTOCOL", "TLSv1.3");
            p.put("ssl.protocol", tls);
            p.put("ssl.enabled.protocols", tls);
            String suites = env("KD_TLS_SUITES", "");
            if (!suites.isEmpty()) p.put("ssl.cipher.suites", suites);
        }
        if (proto.startsWith("SASL")) {
            String mech = env("KD_SASL", "PLAIN");
            String jaas = switch (mech) {
                case "PLAIN" -> "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"alice\" password=\"alice-secret\";";
                case "SCRAM-SHA-256" -> "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"bob\" password=\"bob-secret\";";
                case "SCRAM-SHA-512" -> "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"carol\" password=\"carol-secret\";";
                default -> throw new IllegalArgumentException("KD_SASL " + mech);
            };
            p.put("sasl.mechanism", mech);
            p.put("sasl.jaas.config", jaas);
        }
        return p;
    }

    static ProducerRecord<String, byte[]> big() {
        byte[] v = new byte[BIG];
        new Random(20).nextBytes(v);
        return new ProducerRecord<>(TOPIC, 0, Main.T0 + 20000L, "big", v);
    }

    static void run(String tag) throws Exception {
        result(obj("op", "security", "protocol", env("KD_SECURITY", "SSL"), "bootstrap",
                env("KD_BOOTSTRAP", "127.0.0.1:9093"), "tls", env("KD_TLS_PROTOCOL", "TLSv1.3"),
                "suites", env("KD_TLS_SUITES", ""), "sasl", env("KD_SASL", "")));
        Properties a = security(tag + "-admin");
        a.put(AdminClientConfig.CLIENT_ID_CONFIG, tag + "-admin");
        try (Admin admin = Admin.create(a)) {
            DescribeClusterResult c = admin.describeCluster();
            result(obj("op", "describeCluster", "clusterId", c.clusterId().get(), "controller",
                    c.controller().get().id(), "nodes", ids(c.nodes().get())));
        }
        produce(tag);
        consume(tag);
    }

    static void produce(String tag) throws Exception {
        Properties p = producerProps(security(tag + "-producer"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 50);
        try (KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p)) {
            List<ProducerRecord<String, byte[]>> recs = new ArrayList<>();
            for (int i = 0; i < 20; i++) recs.add(Main.order(TOPIC, i));
            recs.add(big());
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (ProducerRecord<String, byte[]> r : recs) fs.add(prod.send(r));
            prod.flush();
            for (int i = 0; i < fs.size(); i++) {
                RecordMetadata md = fs.get(i).get();
                result(obj("op", "send", "i", i, "partition", md.partition(), "offset", md.offset(),
                        "timestamp", md.timestamp(), "key", recs.get(i).key(), "valueSize", recs.get(i).value().length));
            }
        }
    }

    static void consume(String tag) throws Exception {
        Properties p = consumerProps(security(tag + "-consumer"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, "tls-group");
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(TOPIC));
            int n = 0;
            long deadline = System.currentTimeMillis() + 60000;
            while (n < 21 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    result(recordResult(r));
                    n++;
                }
            }
            consumer.commitSync();
            Map<String, Object> committed = new TreeMap<>();
            for (Map.Entry<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> e
                    : consumer.committed(consumer.assignment()).entrySet()) {
                committed.put(e.getKey().toString(), e.getValue() == null ? null : e.getValue().offset());
            }
            result(obj("op", "consumed", "groupId", "tls-group", "records", n, "committed", committed));
        }
    }
}
