#!/usr/bin/env python3
"""Short-lived librdkafka (confluent-kafka) clients for the wide capture
(scripts/make-samples-wide.sh): many small Produce and Fetch exchanges and Metadata answers
with hundreds of partitions, each client printing one NDJSON line per thing it saw.

  wide_client.py pc ID BOOTSTRAP TOPIC PARTITION N
      a producer (client.id wide-pc-ID-p) sends N small records to TOPIC/PARTITION, one
      Produce each (flush after every record), then a consumer without a group
      (client.id wide-pc-ID-c) assigned to that partition at the first record's offset reads
      them back; both close.
  wide_client.py admin ID BOOTSTRAP TOPIC...
      an AdminClient (client.id wide-admin-ID) asks Metadata for every topic, then for each
      TOPIC alone, and logs each topic's partition count and every partition's leader.

Lines: {"ts_ns", "client", "event", ...}; ts_ns is the wall clock (tcpdump's clock).
"""
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient


def emit(client, event, **fields):
    line = {"ts_ns": time.time_ns(), "client": client, "event": event}
    line.update(fields)
    print(json.dumps(line, ensure_ascii=False), flush=True)


def produce_consume(ident, bootstrap, topic, partition, n):
    pid = f"wide-pc-{ident}-p"
    producer = Producer({
        "bootstrap.servers": bootstrap,
        "client.id": pid,
        "linger.ms": 0,
        "acks": "all",
        "enable.idempotence": False,
        "compression.type": "none",
        "topic.metadata.refresh.interval.ms": 300000,
    })
    sent = []

    def delivered(err, msg):
        if err is not None:
            emit(pid, "delivery_error", topic=msg.topic(), partition=msg.partition(), error=str(err))
            return
        rec = {"topic": msg.topic(), "partition": msg.partition(), "offset": msg.offset(),
               "key": msg.key().decode(), "value": msg.value().decode(),
               "timestamp_ms": msg.timestamp()[1]}
        sent.append(rec)
        emit(pid, "produced", **rec)

    for i in range(n):
        producer.produce(topic, key=f"k-{ident}-{i}".encode(),
                         value=f"wide {ident} record {i}".encode(), partition=partition,
                         callback=delivered)
        producer.flush(10)
    producer.flush(10)
    emit(pid, "closed", produced=len(sent))
    if not sent:
        return 1
    cid = f"wide-pc-{ident}-c"
    consumer = Consumer({
        "bootstrap.servers": bootstrap,
        "client.id": cid,
        "group.id": f"wide-unused-{ident}",  # required by librdkafka; no group calls without subscribe or commit
        "enable.auto.commit": False,
        "fetch.wait.max.ms": 100,
        "topic.metadata.refresh.interval.ms": 300000,
    })
    first = min(r["offset"] for r in sent)
    consumer.assign([TopicPartition(topic, partition, first)])
    got = 0
    deadline = time.time() + 15
    while got < len(sent) and time.time() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            emit(cid, "fetch_error", error=str(msg.error()))
            continue
        got += 1
        emit(cid, "consumed", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
             key=msg.key().decode(), value=msg.value().decode(), timestamp_ms=msg.timestamp()[1])
    consumer.close()
    emit(cid, "closed", consumed=got)
    return 0 if got == len(sent) else 1


def admin(ident, bootstrap, topics):
    aid = f"wide-admin-{ident}"
    client = AdminClient({"bootstrap.servers": bootstrap, "client.id": aid})

    def log_metadata(asked, md):
        for name in sorted(md.topics):
            t = md.topics[name]
            leaders = {str(p): t.partitions[p].leader for p in sorted(t.partitions)}
            emit(aid, "metadata_topic", asked=asked, topic=name, partitions=len(t.partitions),
                 error=str(t.error) if t.error else None, leaders=leaders)
        emit(aid, "metadata", asked=asked, cluster_id=md.cluster_id,
             controller_id=md.controller_id, brokers=sorted(md.brokers), topics=len(md.topics))

    log_metadata("all", client.list_topics(timeout=15))
    for t in topics:
        log_metadata(t, client.list_topics(topic=t, timeout=15))
    emit(aid, "closed")
    return 0


def main(argv):
    role = argv[1]
    if role == "pc":
        return produce_consume(argv[2], argv[3], argv[4], int(argv[5]), int(argv[6]))
    if role == "admin":
        return admin(argv[2], argv[3], argv[4:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
