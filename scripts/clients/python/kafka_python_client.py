"""kafka-python client runs for kdissect's sample captures against Apache Kafka.

    python kafka_python_client.py BOOTSTRAP setup   create topic kp-payments (2 partitions)
    python kafka_python_client.py BOOTSTRAP admin   KafkaAdminClient: topics, cluster, quorum,
                                                    configs, partitions, offsets, log dirs, groups
    python kafka_python_client.py BOOTSTRAP group   gzip KafkaProducer, then a KafkaConsumer in a
                                                    classic group that commits
    python kafka_python_client.py SEEDS cluster SECONDS   for the cluster captures: a producer
                                                    (acks=all, one record a second to
                                                    cluster-orders) and a consumer in group
                                                    kp-cluster committing every 2 s

kafka-python's own DEBUG log of kafka.net.connection (every request and response it sends and
receives, with correlation ids and decoded fields) goes to stdout, with RESULT lines, one JSON
object each, for what the client got back.
"""

import json
import logging
import random
import sys
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient,
                         OffsetSpec)
from kafka.admin._partitions import NewPartitions
from kafka.admin._topics import NewTopic

TOPIC = "kp-payments"
N_RECORDS = 8

logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                    format="%(asctime)s.%(msecs)03d %(levelname)s %(name)s %(message)s",
                    datefmt="%H:%M:%S")
logging.getLogger("kafka.net.connection").setLevel(logging.DEBUG)


def result(kind, **fields):
    fields["result"] = kind
    sys.stdout.write("RESULT " + json.dumps(fields, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


def setup(bootstrap):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafka-python-setup")
    admin.create_topics([NewTopic(TOPIC, 2, 1)], raise_errors=False)
    admin.close()


def admin(bootstrap):
    a = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafka-python-admin")
    created = a.create_topics([NewTopic("kp-admin-a", 3, 1, topic_configs={"retention.ms": "900000"}),
                               NewTopic("kp-admin-b", 1, 1), NewTopic(TOPIC, 2, 1)],
                              raise_errors=False)
    result("create_topics", topics=[(t["name"], t["error_code"], str(t.get("topic_id")),
                                     t.get("num_partitions")) for t in created["topics"]])
    cluster = a.describe_cluster()
    result("describe_cluster", cluster_id=cluster.get("cluster_id"),
           controller_id=cluster.get("controller_id"),
           brokers=[(b.get("broker_id", b.get("node_id")), b.get("host"), b.get("port"))
                    for b in cluster.get("brokers", [])])
    dtp = a.describe_topic_partitions(["kp-admin-a", TOPIC, "kp-no-such-topic"])
    result("describe_topic_partitions",
           topics=[(t["name"], t["error_code"], str(t["topic_id"]), len(t["partitions"]))
                   for t in dtp["topics"]], next_cursor=dtp["next_cursor"])
    quorum = a.describe_metadata_quorum()
    result("describe_metadata_quorum", quorum=quorum)
    a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "kp-admin-a", configs={
        "cleanup.policy": (AlterConfigOp.SET, "compact"),
        "retention.ms": (AlterConfigOp.DELETE, None)})])
    result("alter_configs", resource="kp-admin-a")
    configs = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "kp-admin-a"),
                                  ConfigResource(ConfigResourceType.BROKER, "1",
                                                 configs={"log.segment.bytes": None,
                                                          "num.io.threads": None})])
    result("describe_configs", configs=configs)
    a.create_partitions({"kp-admin-b": NewPartitions(2)})
    result("create_partitions", topic="kp-admin-b", total=2)
    offsets = a.list_partition_offsets({TopicPartition(TOPIC, 0): OffsetSpec.EARLIEST,
                                        TopicPartition(TOPIC, 1): OffsetSpec.MAX_TIMESTAMP})
    result("list_partition_offsets", offsets={f"{tp.topic}/{tp.partition}": list(o)
                                              for tp, o in sorted(offsets.items())})
    dirs = a.describe_log_dirs()
    result("describe_log_dirs", brokers=[d["broker"] for d in dirs],
           dirs=[ld.get("log_dir") for d in dirs for ld in d["log_dirs"]])
    result("list_groups", groups=a.list_groups())
    deleted = a.delete_topics(["kp-admin-a", "kp-admin-b"], raise_errors=False)
    result("delete_topics", topics=[(t["name"], t["error_code"], str(t.get("topic_id")))
                                    for t in deleted["topics"]])
    a.close()


def group(bootstrap):
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="kafka-python-producer",
                             linger_ms=100, compression_type="gzip", acks="all")
    rng = random.Random(44)
    futures = []
    for i in range(N_RECORDS):
        key = None if i == 5 else f"account-{i % 2}".encode()
        value = (bytes(rng.getrandbits(8) for _ in range(2600)) if i == 2
                 else f"payment {i}: {10 * i + 5}.00 EUR".encode())
        headers = [("source", b"kafka-python"), ("seq", str(i).encode())] if i % 3 == 0 else None
        futures.append((i, producer.send(TOPIC, key=key, value=value, partition=i % 2,
                                         headers=headers)))
    producer.flush()
    for i, f in futures:
        md = f.get(10)
        result("produced", topic=md.topic, partition=md.partition, offset=md.offset,
               key=None if i == 5 else f"account-{i % 2}")
    producer.close()

    consumer = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap,
                             client_id="kafka-python-consumer", group_id="kp-audit",
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             session_timeout_ms=10000, heartbeat_interval_ms=1000,
                             fetch_max_wait_ms=500)
    got, deadline = 0, time.time() + 30
    while got < N_RECORDS and time.time() < deadline:
        for records in consumer.poll(timeout_ms=1000).values():
            for r in records:
                got += 1
                result("consumed", topic=r.topic, partition=r.partition, offset=r.offset,
                       key=r.key.decode() if r.key is not None else None,
                       value_len=len(r.value), headers=[(k, v.decode()) for k, v in r.headers])
    result("consumed_total", group="kp-audit", records=got)
    time.sleep(1.5)  # time for the heartbeat thread to send a Heartbeat
    consumer.commit()
    result("committed", group="kp-audit",
           offsets={f"{tp.topic}/{tp.partition}": consumer.committed(tp)
                    for tp in sorted(consumer.assignment())})
    consumer.close()


def cluster(bootstrap, seconds):
    seeds = bootstrap.split(",")
    producer = KafkaProducer(bootstrap_servers=seeds, client_id="kafka-python-cluster-producer",
                             acks="all", linger_ms=5, retries=50,
                             metadata_max_age_ms=5000)
    consumer = KafkaConsumer("cluster-orders", bootstrap_servers=seeds,
                             client_id="kafka-python-cluster-consumer", group_id="kp-cluster",
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             session_timeout_ms=10000, heartbeat_interval_ms=1000,
                             fetch_max_wait_ms=500, metadata_max_age_ms=5000)
    end = time.time() + float(seconds)
    last_commit, last_send, i = time.time(), 0.0, 0
    pending = []
    while time.time() < end:
        if time.time() - last_send >= 1:
            key = f"kp-{i % 4}"
            pending.append((i, key, producer.send("cluster-orders", key=key.encode(),
                                                  value=f"kafka-python order {i}".encode())))
            last_send, i = time.time(), i + 1
        for records in consumer.poll(timeout_ms=200).values():
            for r in records:
                result("consumed", partition=r.partition, offset=r.offset,
                       key=r.key.decode() if r.key is not None else None)
        for n, key, f in [p for p in pending if p[2].is_done]:
            try:
                md = f.get(0)
                result("produced", i=n, key=key, partition=md.partition, offset=md.offset)
            except Exception as e:  # reported, the run goes on
                result("produced", i=n, key=key, error=repr(e))
        pending = [p for p in pending if not p[2].is_done]
        if time.time() - last_commit >= 2:
            cluster_commit(consumer)
            last_commit = time.time()
    producer.flush(10)
    cluster_commit(consumer)
    consumer.close()
    producer.close()


def cluster_commit(consumer):
    offsets = {tp: consumer.position(tp) for tp in sorted(consumer.assignment())}
    try:
        consumer.commit()
        result("commit", group="kp-cluster",
               offsets={f"{tp.topic}-{tp.partition}": o for tp, o in offsets.items()})
    except Exception as e:  # a rebalance or a moved coordinator: reported, the run goes on
        result("commit", group="kp-cluster", error=repr(e))


def main():
    bootstrap, step = sys.argv[1], sys.argv[2]
    result("versions", kafka_python=kafka.__version__)
    if step == "cluster":
        cluster(bootstrap, sys.argv[3])
        return
    {"setup": setup, "admin": admin, "group": group}[step](bootstrap)


if __name__ == "__main__":
    main()
