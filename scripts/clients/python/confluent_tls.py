"""confluent-kafka (librdkafka) over TLS for kdissect's TLS captures, and the same workload in
plaintext for the plaintext leg.

    python confluent_tls.py BOOTSTRAP

Environment: KD_SECURITY (PLAINTEXT, default, or SSL), KD_CA (PEM file of the broker's
certificates, ssl.ca.location). The wheel's librdkafka links OpenSSL statically and offers no
key log, so this program writes none: the key log of its capture comes from the broker's JVM.

The workload: a Producer (acks=all, idempotent, no compression, linger.ms=50) writing 12
messages to tls-orders, message i to partition i % 3 with timestamp 2026-01-01T00:00:00Z + i s,
then message 12, 20000 random bytes (random.Random(20)) with key "big", to partition 0; then
a Consumer in group tls-rd-group reading the 13 messages, committing synchronously and closing.
librdkafka's protocol debug lines go to stderr, RESULT lines to stdout.
"""

import json
import os
import random
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, Producer

TOPIC = "tls-orders"
T0 = 1767225600000


def result(kind, **fields):
    fields["result"] = kind
    sys.stdout.write("RESULT " + json.dumps(fields, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


def security():
    if os.environ.get("KD_SECURITY", "PLAINTEXT") != "SSL":
        return {}
    return {"security.protocol": "SSL", "ssl.ca.location": os.environ["KD_CA"]}


def main():
    bootstrap = sys.argv[1]
    sec = security()
    result("security", confluent_kafka=confluent_kafka.version()[0], librdkafka=confluent_kafka.libversion()[0],
           security=os.environ.get("KD_SECURITY", "PLAINTEXT"))
    producer = Producer({"bootstrap.servers": bootstrap, "client.id": "rd-tls-producer", "acks": "all",
                         "enable.idempotence": True, "linger.ms": 50, "debug": "protocol,security", **sec})
    delivered = []
    for i in range(12):
        key = None if i % 5 == 4 else f"rd-key-{i % 3}".encode()
        headers = [("trace-id", f"rd-{i:04d}".encode())] if i % 4 == 0 else None
        producer.produce(TOPIC, key=key, value=f"librdkafka tls order {i}: {10 * i + 1} units".encode(),
                         partition=i % 3, timestamp=T0 + 1000 * i, headers=headers,
                         on_delivery=lambda err, msg: delivered.append((err, msg)))
    rng = random.Random(20)
    producer.produce(TOPIC, key=b"big", value=bytes(rng.getrandbits(8) for _ in range(20000)), partition=0,
                     timestamp=T0 + 12000, on_delivery=lambda err, msg: delivered.append((err, msg)))
    producer.flush(30)
    for err, msg in delivered:
        result("produced", partition=msg.partition(), offset=msg.offset(), error=str(err) if err else None)
    consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": "rd-tls-consumer", "group.id": "tls-rd-group",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "debug": "protocol,security", **sec})
    consumer.subscribe([TOPIC])
    got, deadline = 0, time.time() + 40
    while got < 13 and time.time() < deadline:
        msg = consumer.poll(1.0)
        if msg is None or msg.error():
            continue
        got += 1
        result("consumed", partition=msg.partition(), offset=msg.offset(),
               key=msg.key().decode() if msg.key() is not None else None, value_len=len(msg.value()))
    consumer.commit(asynchronous=False)
    result("consumed_total", group="tls-rd-group", records=got)
    consumer.close()


if __name__ == "__main__":
    main()
