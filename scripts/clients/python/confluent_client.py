"""confluent-kafka (librdkafka) client runs for kdissect's sample captures against Apache Kafka.

    python confluent_client.py BOOTSTRAP setup     create topic confluent-orders (3 partitions)
    python confluent_client.py BOOTSTRAP admin     AdminClient: cluster, topics, configs, offsets,
                                                   groups, ACLs (no authorizer), SCRAM users
    python confluent_client.py BOOTSTRAP produce   idempotent lz4 producer, then a consumer with
                                                   group.protocol=consumer (KIP-848)
    python confluent_client.py BOOTSTRAP sasl      SASL/SCRAM-SHA-256 on the SASL_PLAINTEXT
                                                   listener: a wrong password, then the right one

librdkafka's debug log (debug=protocol,msg,broker...) goes to stderr, RESULT lines to stdout
(one JSON object each) with what the client got back.
"""

import json
import os
import random
import sys
import time

import confluent_kafka
from confluent_kafka import (ConsumerGroupTopicPartitions, Consumer, KafkaError, Producer,
                             TopicCollection, TopicPartition)
from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType,
                                   AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource,
                                   NewPartitions, NewTopic, OffsetSpec, ResourcePatternType,
                                   ResourceType)

TOPIC = "confluent-orders"
N_RECORDS = 12

def result(kind, **fields):
    fields["result"] = kind
    sys.stdout.write("RESULT " + json.dumps(fields, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


def err_code(err):
    if err is None:
        return 0
    if isinstance(err, confluent_kafka.KafkaException):
        err = err.args[0]
    if isinstance(err, KafkaError):
        return err.code()
    return -1


def base_conf(bootstrap, client_id, debug="protocol,broker,msg"):
    # No "logger": librdkafka then writes its log lines to stderr itself, as they happen (a
    # Python logger only gets them when the client is polled).
    return {"bootstrap.servers": bootstrap, "client.id": client_id, "debug": debug}


def setup(bootstrap):
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "confluent-setup"})
    for future in admin.create_topics([NewTopic(TOPIC, num_partitions=3,
                                                replication_factor=1)]).values():
        try:
            future.result(15)
        except confluent_kafka.KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise


def admin(bootstrap):
    a = AdminClient(base_conf(bootstrap, "confluent-admin", "protocol,broker,admin"))
    cluster = a.describe_cluster(request_timeout=10).result()
    result("describe_cluster", cluster_id=cluster.cluster_id, controller=cluster.controller.id,
           nodes=[(n.id, n.host, n.port) for n in cluster.nodes])

    topics = [NewTopic("confluent-admin-a", num_partitions=2, replication_factor=1,
                       config={"retention.ms": "7200000", "max.message.bytes": "200000"}),
              NewTopic("confluent-admin-b", num_partitions=1, replication_factor=1)]
    for name, future in sorted(a.create_topics(topics, operation_timeout=10).items()):
        try:
            future.result()
            result("create_topic", topic=name, error_code=0)
        except confluent_kafka.KafkaException as e:
            result("create_topic", topic=name, error_code=err_code(e), error=str(e))

    for name, future in a.describe_topics(TopicCollection(["confluent-admin-a", TOPIC]),
                                          request_timeout=10).items():
        d = future.result()
        result("describe_topic", topic=name, topic_id=str(d.topic_id),
               partitions=len(d.partitions), internal=d.is_internal)

    for name, future in a.create_partitions([NewPartitions("confluent-admin-b", 3)],
                                            operation_timeout=10).items():
        try:
            future.result()
            result("create_partitions", topic=name, total=3, error_code=0)
        except confluent_kafka.KafkaException as e:
            result("create_partitions", topic=name, error_code=err_code(e), error=str(e))

    res = ConfigResource(ResourceType.TOPIC, "confluent-admin-a", incremental_configs=[
        ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE)])
    for r, future in a.incremental_alter_configs([res]).items():
        future.result()
        result("incremental_alter_configs", resource=r.name, error_code=0)

    res = ConfigResource(ResourceType.TOPIC, "confluent-admin-a")
    for r, future in a.describe_configs([res]).items():
        configs = future.result()
        result("describe_configs", resource=r.name, configs_returned=len(configs),
               some_values={k: configs[k].value for k in
                            ("cleanup.policy", "retention.ms", "max.message.bytes")})

    offsets = a.list_offsets({TopicPartition(TOPIC, p): OffsetSpec.latest() for p in range(3)},
                             request_timeout=10)
    for tp, future in sorted(offsets.items(), key=lambda kv: kv[0].partition):
        info = future.result()
        result("list_offsets", topic=tp.topic, partition=tp.partition, offset=info.offset,
               spec="latest")

    groups = a.list_consumer_groups(request_timeout=10).result()
    result("list_consumer_groups", groups=sorted(g.group_id for g in groups.valid),
           errors=len(groups.errors))

    try:
        acls = a.describe_acls(AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY,
                                                None, None, AclOperation.ANY,
                                                AclPermissionType.ANY),
                               request_timeout=10).result()
        # The node has no authorizer and answers SECURITY_DISABLED (54); librdkafka 2.16 hands
        # back an empty list instead of an error.
        result("describe_acls", error_code=0, acls=[str(acl) for acl in acls])
    except confluent_kafka.KafkaException as e:
        result("describe_acls", error_code=err_code(e), error=str(e))

    try:
        users = a.describe_user_scram_credentials(request_timeout=10).result()
        result("describe_user_scram_credentials",
               users={u: [(str(i.mechanism), i.iterations) for i in d.scram_credential_infos]
                      for u, d in sorted(users.items())})
    except confluent_kafka.KafkaException as e:
        result("describe_user_scram_credentials", error_code=err_code(e), error=str(e))

    for name, future in sorted(a.delete_topics(["confluent-admin-a", "confluent-admin-b"],
                                               operation_timeout=10).items()):
        try:
            future.result()
            result("delete_topic", topic=name, error_code=0)
        except confluent_kafka.KafkaException as e:
            result("delete_topic", topic=name, error_code=err_code(e), error=str(e))


def records():
    """Keys, null keys, headers, and one 3000-byte incompressible value (spans segments even
    after lz4)."""
    rng = random.Random(44)
    out = []
    for i in range(N_RECORDS):
        key = None if i % 5 == 4 else f"confluent-key-{i % 3}".encode()
        headers = [("trace-id", f"confluent-{i:04d}".encode())] if i % 4 == 0 else None
        if i == 6:
            headers = [("trace-id", b"confluent-0006"), ("retry", b"1"), ("retry", b"2")]
        if i == 7:
            value = bytes(rng.getrandbits(8) for _ in range(3000))
        elif i == 10:
            value = None  # a tombstone
        else:
            value = f"confluent order {i}: {10 * i + 1} units".encode()
        out.append((i % 3, key, value, headers))
    return out


def produce(bootstrap):
    p = Producer({**base_conf(bootstrap, "confluent-producer"), "enable.idempotence": True,
                  "compression.type": "lz4", "linger.ms": 100})
    delivered = []

    def on_delivery(err, msg):
        delivered.append(msg)
        key = msg.key().decode() if msg.key() is not None else None
        result("produced", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
               key=key, value_len=len(msg.value()) if msg.value() is not None else None,
               error_code=err_code(err))

    for partition, key, value, headers in records():
        p.produce(TOPIC, key=key, value=value, partition=partition, headers=headers,
                  on_delivery=on_delivery)
    left = p.flush(15)
    result("produce_flush", unsent=left, delivered=len(delivered))

    c = Consumer({**base_conf(bootstrap, "confluent-consumer", "protocol,broker,cgrp,fetch"),
                  "group.id": "confluent-848", "group.protocol": "consumer",
                  "auto.offset.reset": "earliest", "enable.auto.commit": False,
                  "fetch.wait.max.ms": 500})
    c.subscribe([TOPIC])
    got, deadline = 0, time.time() + 45
    while got < N_RECORDS and time.time() < deadline:
        msg = c.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            result("consume_error", error_code=msg.error().code(), error=str(msg.error()))
            continue
        got += 1
        result("consumed", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
               key=msg.key().decode() if msg.key() is not None else None,
               value_len=len(msg.value()) if msg.value() is not None else None,
               headers=[(k, v.decode()) for k, v in (msg.headers() or [])])
    result("consumed_total", group="confluent-848", records=got)
    committed = c.commit(asynchronous=False)
    result("committed", group="confluent-848",
           offsets=sorted((tp.topic, tp.partition, tp.offset) for tp in committed))
    c.close()


def sasl(bootstrap):
    conf = {**base_conf(bootstrap, "confluent-sasl", "protocol,broker,security"),
            "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "bob", "linger.ms": 10}
    errors = []
    bad = Producer({**conf, "client.id": "confluent-sasl-badpw",
                    "sasl.password": "not-bobs-password",
                    "error_cb": lambda e: errors.append(e)})
    deadline = time.time() + 10
    while not errors and time.time() < deadline:
        bad.poll(0.2)
    result("sasl_wrong_password", errors=[(e.code(), e.str()) for e in errors[:1]])
    bad.poll(0.5)
    del bad

    good = Producer({**conf, "sasl.password": "bob-secret"})
    md = good.list_topics(TOPIC, timeout=10)
    result("sasl_metadata", cluster_id=md.cluster_id,
           partitions=len(md.topics[TOPIC].partitions))
    good.produce(TOPIC, key=b"sasl-user", value=b"written by bob over SCRAM-SHA-256",
                 partition=0, on_delivery=lambda err, msg: result(
                     "produced", topic=msg.topic(), partition=msg.partition(),
                     offset=msg.offset(), error_code=err_code(err)))
    result("produce_flush", unsent=good.flush(10))


def main():
    bootstrap, step = sys.argv[1], sys.argv[2]
    result("versions", confluent_kafka=confluent_kafka.__version__,
           librdkafka=confluent_kafka.libversion()[0])
    {"setup": setup, "admin": admin, "produce": produce, "sasl": sasl}[step](bootstrap)


if __name__ == "__main__":
    main()
