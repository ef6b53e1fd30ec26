"""confluent-kafka (librdkafka) producer and group consumers for the issue-35 captures
(samples/issue35-*.pcap, made by scripts/make-samples-issue35.sh).

    python issue35_confluent.py producer --bootstrap B --client-id ID --topic T --rate R --seconds S
    python issue35_confluent.py consumer --bootstrap B --client-id ID --group G --topic T
                                         [--protocol classic|consumer] --seconds S
                                         [--slow-seconds S --slow-ms M]

Every line on stdout is one JSON object (NDJSON), the schema of samples/README.md ("issue 35"):
"ts_ns" is time.time_ns() when the event was seen (the wall clock of the same machine as
tcpdump's timestamps), "client" the role name given with --name, "client_id" the Kafka
client.id, "event" what happened. librdkafka's own warnings go to stderr.

producer: idempotent (enable.idempotence=true, acks=all), linger.ms=20, RATE records a second
for S seconds, record i with key "k-<i % 24>" and value "issue35 i=<i>" (so a consumer can tell
the record); one "delivered" line per record: sent_ns (just before produce()), ts_ns (when the
delivery report was served), partition, offset, latency_s (librdkafka's own produce()->ack
time), error.

consumer: subscribes to the topic in group G (classic: session.timeout.ms=6000,
heartbeat.interval.ms=1000; consumer: KIP-848, the broker's timeouts), auto commit every 1 s,
statistics every 1 s; one "received" line per record (partition, offset, key, record
timestamp, i), "assigned" / "revoked" / "lost" with the partitions, "committed" for every
commit (on_commit), "stats" with librdkafka's per-partition figures, "closing" / "closed" around
close() (a LeaveGroup, or a ConsumerGroupHeartbeat with epoch -1). During the first
--slow-seconds after the first record it sleeps --slow-ms after each record (slow, then fast).
"""

import argparse
import json
import sys
import time

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, Producer

ARGS = None


def emit(event, **fields):
    line = {"ts_ns": time.time_ns(), "client": ARGS.name, "client_id": ARGS.client_id, "event": event}
    line.update(fields)
    sys.stdout.write(json.dumps(line, ensure_ascii=False, sort_keys=False) + "\n")
    sys.stdout.flush()


def err_str(err):
    if err is None:
        return None
    if isinstance(err, KafkaError):
        return err.name()
    return str(err)


def tps(partitions):
    return [[p.topic, p.partition] for p in partitions]


def started(role, conf):
    emit("started", role=role, software="confluent-kafka-python",
         version=confluent_kafka.version(), librdkafka=confluent_kafka.libversion()[0],
         config={k: v for k, v in conf.items() if not callable(v)})


# ---------------------------------------------------------------- producer

def producer():
    conf = {"bootstrap.servers": ARGS.bootstrap, "client.id": ARGS.client_id, "acks": "all",
            "enable.idempotence": True, "linger.ms": 20}
    started("producer", conf)
    p = Producer(conf)
    end = time.time() + ARGS.seconds
    gap = 1.0 / ARGS.rate
    i = 0
    next_t = time.time()
    while time.time() < end:
        sent_ns = time.time_ns()
        key = "k-%d" % (i % 24)

        def report(err, msg, i=i, sent_ns=sent_ns, key=key):
            emit("delivered", topic=msg.topic(), partition=msg.partition(),
                 offset=msg.offset() if err is None else None, i=i, key=key, sent_ns=sent_ns,
                 timestamp_ms=msg.timestamp()[1], latency_s=msg.latency(), error=err_str(err))

        while True:
            try:
                p.produce(ARGS.topic, value=("issue35 i=%d" % i).encode(), key=key.encode(),
                          on_delivery=report)
                break
            except BufferError:
                p.poll(0.05)
        i += 1
        next_t += gap
        while True:
            left = next_t - time.time()
            p.poll(max(0.0, min(left, 0.05)))
            if left <= 0:
                break
    emit("flushing", produced=i)
    left = p.flush(30)
    emit("closed", produced=i, undelivered=left)


# ---------------------------------------------------------------- consumer

STATS_FIELDS = ("fetch_state", "leader", "desired", "committed_offset", "committed_leader_epoch",
                "next_offset", "app_offset", "stored_offset", "hi_offset", "ls_offset", "lo_offset",
                "eof_offset", "consumer_lag", "consumer_lag_stored", "rxmsgs", "msgq_cnt", "fetchq_cnt")


def on_stats(raw):
    s = json.loads(raw)
    parts = []
    for tname, t in sorted(s.get("topics", {}).items()):
        for pid, p in sorted(t.get("partitions", {}).items(), key=lambda kv: int(kv[0])):
            if int(pid) < 0:
                continue
            row = {"topic": tname, "partition": int(pid)}
            row.update({f: p.get(f) for f in STATS_FIELDS})
            parts.append(row)
    cg = s.get("cgrp") or {}
    emit("stats", librdkafka_ts_us=s.get("ts"), librdkafka_time_s=s.get("time"),
         cgrp={k: cg.get(k) for k in ("state", "stateage", "join_state", "rebalance_age",
                                      "rebalance_cnt", "rebalance_reason", "assignment_size")},
         partitions=parts)


def on_commit(err, partitions):
    emit("committed", group=ARGS.group, error=err_str(err),
         offsets=[{"topic": p.topic, "partition": p.partition, "offset": p.offset,
                   "error": err_str(p.error)} for p in partitions])


def consumer():
    conf = {"bootstrap.servers": ARGS.bootstrap, "client.id": ARGS.client_id,
            "group.id": ARGS.group, "group.protocol": ARGS.protocol,
            "auto.offset.reset": "earliest", "enable.auto.commit": True,
            "auto.commit.interval.ms": 1000, "statistics.interval.ms": 1000}
    if ARGS.protocol == "classic":
        conf.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000,
                     "partition.assignment.strategy": "range"})
    conf_logged = dict(conf)
    conf.update({"stats_cb": on_stats, "on_commit": on_commit})
    started("consumer", conf_logged)
    c = Consumer(conf)

    # "partitions" is what the callback was given (with group.protocol=consumer only the
    # partitions added or taken away), "assignment" the whole assignment once it is applied.
    def assigned(cons, parts):
        if ARGS.protocol == "consumer":
            cons.incremental_assign(parts)
        else:
            cons.assign(parts)
        emit("assigned", group=ARGS.group, protocol=ARGS.protocol, member_id=cons.memberid(),
             partitions=tps(parts), assignment=tps(cons.assignment()))

    def revoked(cons, parts):
        if ARGS.protocol == "consumer":
            cons.incremental_unassign(parts)
        else:
            cons.unassign()
        emit("revoked", group=ARGS.group, protocol=ARGS.protocol, member_id=cons.memberid(),
             partitions=tps(parts), assignment=tps(cons.assignment()))

    def lost(cons, parts):
        if ARGS.protocol == "consumer":
            cons.incremental_unassign(parts)
        else:
            cons.unassign()
        emit("lost", group=ARGS.group, protocol=ARGS.protocol, member_id=cons.memberid(),
             partitions=tps(parts), assignment=tps(cons.assignment()))

    c.subscribe([ARGS.topic], on_assign=assigned, on_revoke=revoked, on_lost=lost)
    emit("subscribed", group=ARGS.group, protocol=ARGS.protocol, topics=[ARGS.topic])
    end = time.time() + ARGS.seconds
    slow_until = None
    n = 0
    while time.time() < end:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            emit("error", error=err_str(m.error()), text=str(m.error()))
            continue
        now = time.time()
        if slow_until is None:
            slow_until = now + ARGS.slow_seconds
            if ARGS.slow_seconds > 0:
                emit("phase", phase="slow", until_ns=int(slow_until * 1e9), sleep_ms=ARGS.slow_ms)
        value = m.value() or b""
        i = None
        if value.startswith(b"issue35 i="):
            i = int(value[10:])
        emit("received", topic=m.topic(), partition=m.partition(), offset=m.offset(),
             key=(m.key() or b"").decode(errors="replace"), timestamp_ms=m.timestamp()[1], i=i)
        n += 1
        if slow_until is not None and now < slow_until:
            time.sleep(ARGS.slow_ms / 1000.0)
            if time.time() >= slow_until:
                emit("phase", phase="fast")
    emit("closing", group=ARGS.group, received=n, member_id=c.memberid())
    c.close()
    emit("closed", group=ARGS.group, received=n)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["producer", "consumer"])
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--client-id", required=True)
    ap.add_argument("--name", help="role name in the log (default the client id)")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--group")
    ap.add_argument("--protocol", default="classic", choices=["classic", "consumer"])
    ap.add_argument("--rate", type=float, default=100.0)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--slow-seconds", type=float, default=0.0)
    ap.add_argument("--slow-ms", type=float, default=0.0)
    ARGS = ap.parse_args()
    if ARGS.name is None:
        ARGS.name = ARGS.client_id
    if ARGS.role == "producer":
        producer()
    else:
        consumer()


if __name__ == "__main__":
    main()
