"""aiokafka producer and group consumer for the issue-35 captures (samples/issue35-*.pcap, made
by scripts/make-samples-issue35.sh). aiokafka announces no client software name in ApiVersions.

    python issue35_aiokafka.py producer --bootstrap B --client-id ID --topic T --rate R --seconds S
    python issue35_aiokafka.py consumer --bootstrap B --client-id ID --group G --topic T --seconds S

Every line on stdout is one JSON object (NDJSON) in the schema of samples/README.md ("issue 35"):
ts_ns (time.time_ns(), the clock of tcpdump's timestamps), client (--name), client_id, event.
Besides the events of the other clients ("delivered", "received", "assigned", "revoked",
"committed", "stats", "closing", "closed"), every request the client writes is a "request" line
(api_key, api_version, api (aiokafka's struct name), correlation_id, broker, local_port), taken
from aiokafka's connection as it sends, and every ApiVersions answer's use is visible there too:
aiokafka picks each version from the broker's ranges itself.

producer: acks=all, enable_idempotence=True, linger_ms=20; record i has key "k-<i % 24>" and
value "issue35 i=<i>". consumer: group G (classic protocol: aiokafka has no other),
session_timeout_ms=6000, heartbeat_interval_ms=1000, commits its positions every second
(commit(), logged), stats every second: per assigned partition position, highwater,
last_stable_offset and lag (highwater - position).
"""

import argparse
import asyncio
import json
import sys
import time

import aiokafka
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka.conn import AIOKafkaConnection

ARGS = None


def emit(event, **fields):
    line = {"ts_ns": time.time_ns(), "client": ARGS.name, "client_id": ARGS.client_id, "event": event}
    line.update(fields)
    sys.stdout.write(json.dumps(line, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def log_requests():
    """Wraps AIOKafkaConnection.send: the correlation id is assigned synchronously inside it."""
    orig = AIOKafkaConnection.send

    def send(self, request, expect_response=True):
        result = orig(self, request, expect_response)
        try:
            st = request.prepare(self._versions)
            sock = self._writer.get_extra_info("sockname") if self._writer else None
            emit("request", api_key=st.API_KEY, api_version=st.API_VERSION, api=type(st).__name__,
                 correlation_id=self._correlation_id, broker="%s:%d" % (self._host, self._port),
                 local_port=sock[1] if sock else None, expect_response=expect_response)
        except Exception as e:  # the log must never break the client
            emit("request", error=repr(e))
        return result

    AIOKafkaConnection.send = send


def started(role, conf):
    emit("started", role=role, software="aiokafka", version=aiokafka.__version__, config=conf)


async def producer():
    conf = {"acks": "all", "enable_idempotence": True, "linger_ms": 20}
    started("producer", conf)
    p = AIOKafkaProducer(bootstrap_servers=ARGS.bootstrap.split(","), client_id=ARGS.client_id, **conf)
    await p.start()
    end = time.time() + ARGS.seconds
    gap = 1.0 / ARGS.rate
    next_t = time.time()
    pending = []
    i = 0

    async def report(fut, i, key, sent_ns):
        try:
            md = await fut
            emit("delivered", topic=md.topic, partition=md.partition, offset=md.offset, i=i, key=key,
                 sent_ns=sent_ns, timestamp_ms=md.timestamp, error=None)
        except Exception as e:
            emit("delivered", topic=ARGS.topic, partition=None, offset=None, i=i, key=key,
                 sent_ns=sent_ns, error=repr(e))

    while time.time() < end:
        key = "k-%d" % (i % 24)
        sent_ns = time.time_ns()
        fut = await p.send(ARGS.topic, value=("issue35 i=%d" % i).encode(), key=key.encode())
        pending.append(asyncio.ensure_future(report(fut, i, key, sent_ns)))
        i += 1
        next_t += gap
        await asyncio.sleep(max(0.0, next_t - time.time()))
    emit("flushing", produced=i)
    await p.flush()
    await asyncio.gather(*pending)
    await p.stop()
    emit("closed", produced=i)


class Listener(ConsumerRebalanceListener):
    def __init__(self, consumer):
        self.c = consumer

    def _meta(self):
        sub = self.c._subscription.subscription
        coord = self.c._coordinator
        return {"group": ARGS.group, "protocol": "classic",
                "member_id": getattr(coord, "member_id", None),
                "generation": getattr(coord, "generation", None)} if sub is not None else {}

    async def on_partitions_revoked(self, revoked):
        emit("revoked", partitions=[[tp.topic, tp.partition] for tp in sorted(revoked)], **self._meta())

    async def on_partitions_assigned(self, assigned):
        emit("assigned", partitions=[[tp.topic, tp.partition] for tp in sorted(assigned)], **self._meta())


async def consumer():
    conf = {"group_id": ARGS.group, "auto_offset_reset": "earliest", "enable_auto_commit": False,
            "session_timeout_ms": 6000, "heartbeat_interval_ms": 1000}
    started("consumer", conf)
    c = AIOKafkaConsumer(bootstrap_servers=ARGS.bootstrap.split(","), client_id=ARGS.client_id, **conf)
    await c.start()
    c.subscribe([ARGS.topic], listener=Listener(c))
    emit("subscribed", group=ARGS.group, protocol="classic", topics=[ARGS.topic])
    end = time.time() + ARGS.seconds
    last = time.time()
    n = 0
    while time.time() < end:
        batches = await c.getmany(timeout_ms=200)
        for tp, msgs in sorted(batches.items()):
            for m in msgs:
                v = m.value or b""
                i = int(v[10:]) if v.startswith(b"issue35 i=") else None
                emit("received", topic=m.topic, partition=m.partition, offset=m.offset,
                     key=(m.key or b"").decode(errors="replace"), timestamp_ms=m.timestamp, i=i)
                n += 1
        if time.time() - last >= 1.0:
            last = time.time()
            await stats_and_commit(c)
    await stats_and_commit(c)
    emit("closing", group=ARGS.group, received=n)
    await c.stop()
    emit("closed", group=ARGS.group, received=n)


async def stats_and_commit(c):
    rows, offsets = [], {}
    for tp in sorted(c.assignment()):
        try:
            pos = await c.position(tp)
        except Exception:
            pos = None
        hw = c.highwater(tp)
        rows.append({"topic": tp.topic, "partition": tp.partition, "position": pos, "hi_offset": hw,
                     "ls_offset": c.last_stable_offset(tp),
                     "lag": hw - pos if hw is not None and pos is not None else None})
        if pos is not None:
            offsets[tp] = pos
    coord = c._coordinator
    emit("stats", group=ARGS.group, member_id=getattr(coord, "member_id", None),
         generation=getattr(coord, "generation", None), partitions=rows)
    if offsets:
        try:
            await c.commit(offsets)
            err = None
        except Exception as e:
            err = repr(e)
        emit("committed", group=ARGS.group, error=err,
             offsets=[{"topic": tp.topic, "partition": tp.partition, "offset": o}
                      for tp, o in sorted(offsets.items())])


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["producer", "consumer"])
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--client-id", required=True)
    ap.add_argument("--name")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--group")
    ap.add_argument("--rate", type=float, default=25.0)
    ap.add_argument("--seconds", type=float, required=True)
    ARGS = ap.parse_args()
    if ARGS.name is None:
        ARGS.name = ARGS.client_id
    log_requests()
    asyncio.run(producer() if ARGS.role == "producer" else consumer())


if __name__ == "__main__":
    main()
