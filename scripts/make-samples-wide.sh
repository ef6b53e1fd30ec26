#!/usr/bin/env bash
# Remakes samples/wide-ak44.pcap and its logs (samples/logs/wide-ak44.ndjson,
# samples/logs/wide-ak44-topics-*.log): the real traffic behind the `wide` benchmark mix
# (scripts/make-big-capture --mix wide). One Apache Kafka 4.4.0 node (scripts/kafka-broker)
# with three topics of hundreds of partitions, and, captured:
#   - librdkafka AdminClients (confluent-kafka 2.16.1) asking Metadata for every topic and for
#     each wide topic alone (answers of 200-850 partitions), several at once;
#   - the Java kafka-topics tool 4.4.0 (org.apache.kafka.tools.TopicCommand): --list (Metadata)
#     and --describe with --partition-size-limit-per-response, which sends
#     DescribeTopicPartitions v0 and follows NextCursor page after page;
#   - many short-lived librdkafka clients, PROCS of them (default 50), PARALLEL at a time
#     (default 12), each a producer sending RECORDS (default 3) small records, one Produce each,
#     to one partition of a wide topic, then a consumer without a group assigned there reading
#     them back (small Fetch exchanges); every one of them also asks Metadata for its topic.
#
#   sudo scripts/make-samples-wide.sh
#
# The capture: `tcpdump -s 0 -i lo -U --immediate-mode -B 16384 'tcp port 9092'` in the
# node's namespace (loopback MTU 1500, TSO/GSO/GRO off), started after the topics are made
# (setup, not captured) and stopped one second after the last client; a capture with packets
# dropped by the kernel fails the run. Every client's own log is kept: the Python clients'
# NDJSON lines (ts_ns, client, event: produced, consumed, metadata_topic, metadata, closed)
# merged in time order into samples/logs/wide-ak44.ndjson; each kafka-topics run's output with
# its NetworkClient DEBUG lines (every request and response it sent and received) in
# samples/logs/wide-ak44-topics-NAME.log.
#
# Needs root, Java 17, Maven, Python 3 (venv + pip), tcpdump.
# Environment: OUT (default samples/), WORK (scratch, default a new directory under /tmp),
# KEEP_WORK=1 keeps it, KAFKA_NS (default kdwide), VENV (default $WORK/venv, made when
# missing), TOPICS (default "wide-a:200 wide-b:300 wide-c:350"), PROCS, PARALLEL, RECORDS,
# PAGE (partitions a DescribeTopicPartitions page, default 50).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/samples}
WORK=${WORK:-$(mktemp -d /tmp/kdissect-wide.XXXXXX)}
BROKER=$ROOT/scripts/kafka-broker
CLIENTS=$ROOT/scripts/clients
export KAFKA_WORK=$WORK/kafka
export KAFKA_NS=${KAFKA_NS:-kdwide}
VENV=${VENV:-$WORK/venv}
TOPICS=${TOPICS:-wide-a:200 wide-b:300 wide-c:350}
PROCS=${PROCS:-50}
PARALLEL=${PARALLEL:-12}
RECORDS=${RECORDS:-3}
PAGE=${PAGE:-50}
BOOT=127.0.0.1:9092
NAME=wide-ak44
CAPTURE_PID=

log() { printf '==> %s\n' "$*" >&2; }

cleanup() {
    set +e
    if [ -n "$CAPTURE_PID" ]; then kill -INT "$CAPTURE_PID" 2>/dev/null; wait "$CAPTURE_PID" 2>/dev/null; fi
    "$BROKER" stop 2>/dev/null
    if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}

prepare() {
    log "building the Java clients (scripts/clients/java) and the Python environment"
    (cd "$CLIENTS/java" && mvn -q -B package)
    CP="$CLIENTS/java/target/kdissect-java-clients-1.jar:$CLIENTS/java/target/lib/*"
    if ! "$VENV/bin/python" -c 'import confluent_kafka' 2>/dev/null; then
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install -q confluent-kafka==2.16.1
    fi
}

# topics NAME ARGS...: one run of kafka-topics (TopicCommand) in the namespace; its output and
# its NetworkClient DEBUG lines (the jar's log4j2.properties) go to $WORK/topics-NAME.log.
topics() {
    local name=$1; shift
    "$BROKER" exec java -Xmx256m -cp "$CP" org.apache.kafka.tools.TopicCommand \
        --bootstrap-server "$BOOT" "$@" >"$WORK/topics-$name.log" 2>&1
}

# py NAME ARGS...: one Python client in the namespace, NDJSON to $WORK/py/NAME.ndjson.
py() {
    local name=$1; shift
    "$BROKER" exec "$VENV/bin/python" "$CLIENTS/python/wide_client.py" "$@" \
        >"$WORK/py/$name.ndjson" 2>"$WORK/py/$name.err"
}

main() {
    [ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
    trap cleanup EXIT
    mkdir -p "$WORK/py" "$OUT/logs"
    prepare
    "$BROKER" stop >/dev/null 2>&1 || true
    "$BROKER" start --fresh
    local spec names=() counts=()
    for spec in $TOPICS; do
        names+=("${spec%%:*}"); counts+=("${spec##*:}")
        log "setup: topic ${spec%%:*} with ${spec##*:} partitions"
        topics "create-${spec%%:*}" --create --topic "${spec%%:*}" --partitions "${spec##*:}" \
            --replication-factor 1
    done
    sleep 2
    local pcap=$OUT/$NAME.pcap err=$WORK/tcpdump.err
    "$BROKER" exec tcpdump -Z root -s 0 -U --immediate-mode -B 16384 -w "$pcap" -i lo \
        'tcp port 9092' 2>"$err" &
    CAPTURE_PID=$!
    for _ in $(seq 100); do grep -q "listening on" "$err" && break; sleep 0.1; done
    grep -q "listening on" "$err" || { cat "$err" >&2; return 1; }
    sleep 0.5

    log "captured: librdkafka admins (Metadata of every topic, then of each)"
    local i pids=()
    for i in 1 2 3 4; do py "admin-$i" admin "$i" "$BOOT" "${names[@]}" & pids+=($!); done
    log "captured: kafka-topics --list, --describe in pages of $PAGE"
    topics list --list &
    pids+=($!)
    topics describe-all --describe --partition-size-limit-per-response "$PAGE" & pids+=($!)
    for i in "${pids[@]}"; do wait "$i"; done

    log "captured: $PROCS short-lived producer/consumer pairs, $PARALLEL at a time"
    local jobs=$WORK/pc.jobs k t n p
    : >"$jobs"
    for ((i = 1; i <= PROCS; i++)); do
        k=$(( (i - 1) % ${#names[@]} )); t=${names[$k]}; n=${counts[$k]}
        p=$(( (i * 37) % n ))
        printf '%02d %s %s\n' "$i" "$t" "$p" >>"$jobs"
    done
    # A second describe of one topic runs among the short-lived clients.
    topics describe-"${names[0]}" --describe --topic "${names[0]}" \
        --partition-size-limit-per-response "$PAGE" &
    local desc=$!
    export -f py
    export BROKER VENV CLIENTS WORK BOOT RECORDS
    xargs -P "$PARALLEL" -L 1 bash -c 'py "pc-$0" pc "$0" "$BOOT" "$1" "$2" "$RECORDS"' <"$jobs"
    wait "$desc"
    py admin-5 admin 5 "$BOOT" "${names[@]}"
    sleep 1
    kill -INT "$CAPTURE_PID"
    wait "$CAPTURE_PID" || true
    CAPTURE_PID=
    cat "$err" >&2
    grep -q '^0 packets dropped by kernel' "$err" || { log "tcpdump dropped packets"; return 1; }
    "$BROKER" stop

    # Logs: the Python clients' lines merged by time (a client's own order kept for equal
    # times), the kafka-topics runs' output as they wrote it.
    python3 - "$WORK/py" "$OUT/logs/$NAME.ndjson" <<'EOF'
import glob, json, os, sys
lines = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.ndjson"))):
    for n, line in enumerate(open(f, encoding="utf-8")):
        if line.strip():
            lines.append((json.loads(line)["ts_ns"], f, n, line))
lines.sort()
with open(sys.argv[2], "w", encoding="utf-8") as out:
    out.writelines(l for *_, l in lines)
EOF
    for f in "$WORK"/topics-list.log "$WORK"/topics-describe-*.log; do
        cp "$f" "$OUT/logs/$NAME-$(basename "$f")"
    done
    grep -h . "$WORK"/py/*.err >&2 || true
    log "$pcap: $(stat -c %s "$pcap") bytes"
}

main "$@"
