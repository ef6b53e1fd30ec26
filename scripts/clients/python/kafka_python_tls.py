"""kafka-python over TLS for kdissect's TLS captures (samples/tls-kafka-python-*.pcap), and the
same workload in plaintext for their plaintext legs.

    python kafka_python_tls.py BOOTSTRAP

Environment:
    KD_SECURITY     PLAINTEXT (default) or SSL
    KD_TLS_MAX      1.2 or 1.3 (default): SSLContext.maximum_version
    KD_TLS12_CIPHERS  OpenSSL cipher string for TLS 1.2 (SSLContext.set_ciphers)
    KD_CA           PEM file of the broker's certificates
    KD_KEYLOG       NSS key log file (SSLContext.keylog_filename)
    TLS 1.3 suites cannot be narrowed through Python's ssl module: the scripts set
    OPENSSL_CONF to a file with "Ciphersuites = ...".

The workload: a KafkaProducer (acks=all, no compression) writing 12 records to tls-orders,
record i to partition i % 3 with timestamp 2026-01-01T00:00:00Z + i s, then record 12, 20000
random bytes (random.Random(20)) with key "big", to partition 0; then a KafkaConsumer in group
tls-kp-group reading the 13 records, committing and closing. kafka.net.connection DEBUG lines
and RESULT lines go to stdout.
"""

import json
import logging
import os
import random
import ssl
import sys
import time

import kafka
from kafka import KafkaConsumer, KafkaProducer

TOPIC = "tls-orders"
T0 = 1767225600000

logging.basicConfig(stream=sys.stdout, level=logging.INFO,
                    format="%(asctime)s.%(msecs)03d %(levelname)s %(name)s %(message)s",
                    datefmt="%H:%M:%S")
logging.getLogger("kafka.net.connection").setLevel(logging.DEBUG)


def result(kind, **fields):
    fields["result"] = kind
    sys.stdout.write("RESULT " + json.dumps(fields, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


def security():
    if os.environ.get("KD_SECURITY", "PLAINTEXT") != "SSL":
        return {}
    ctx = ssl.create_default_context(cafile=os.environ["KD_CA"])
    ctx.check_hostname = False  # the client connects to an IP address; the CA file pins the certificate
    if os.environ.get("KD_TLS_MAX") == "1.2":
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    if os.environ.get("KD_TLS12_CIPHERS"):
        ctx.set_ciphers(os.environ["KD_TLS12_CIPHERS"])
    if os.environ.get("KD_KEYLOG"):
        ctx.keylog_filename = os.environ["KD_KEYLOG"]
    return {"security_protocol": "SSL", "ssl_context": ctx}


def records():
    out = []
    for i in range(12):
        key = None if i % 5 == 4 else f"kp-key-{i % 3}".encode()
        headers = [("trace-id", f"kp-{i:04d}".encode())] if i % 4 == 0 else []
        out.append((i % 3, key, f"kafka-python tls order {i}: {10 * i + 1} units".encode(), headers,
                    T0 + 1000 * i))
    rng = random.Random(20)
    out.append((0, b"big", bytes(rng.getrandbits(8) for _ in range(20000)), [], T0 + 12000))
    return out


def main():
    bootstrap = sys.argv[1]
    sec = security()
    result("security", kafka_python=kafka.__version__, openssl=ssl.OPENSSL_VERSION,
           security=os.environ.get("KD_SECURITY", "PLAINTEXT"), tls_max=os.environ.get("KD_TLS_MAX"),
           tls12_ciphers=os.environ.get("KD_TLS12_CIPHERS"), openssl_conf=os.environ.get("OPENSSL_CONF"))
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="kp-tls-producer", acks="all",
                             linger_ms=50, **sec)
    futures = [producer.send(TOPIC, key=k, value=v, partition=p, headers=h, timestamp_ms=ts)
               for p, k, v, h, ts in records()]
    producer.flush()
    for f in futures:
        md = f.get(10)
        result("produced", topic=md.topic, partition=md.partition, offset=md.offset)
    producer.close()
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=bootstrap, client_id="kp-tls-consumer",
                             group_id="tls-kp-group", auto_offset_reset="earliest",
                             enable_auto_commit=False, fetch_max_wait_ms=500, **sec)
    got, deadline = 0, time.time() + 30
    while got < 13 and time.time() < deadline:
        for recs in consumer.poll(timeout_ms=1000).values():
            for r in recs:
                got += 1
                result("consumed", topic=r.topic, partition=r.partition, offset=r.offset,
                       key=r.key.decode() if r.key is not None else None, value_len=len(r.value),
                       timestamp=r.timestamp)
    consumer.commit()
    result("consumed_total", group="tls-kp-group", records=got)
    consumer.close()


if __name__ == "__main__":
    main()
