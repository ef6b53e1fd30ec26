#!/usr/bin/env bash
# Remakes the Apache Kafka captures samples/ak44-*.pcap and their client logs
# samples/logs/ak44-*.log: the official Java clients (kafka-clients 4.4.0, the Maven project in
# scripts/clients/java) talking to a real Apache Kafka 4.4.0 node (scripts/kafka-broker: one
# KRaft broker+controller, PLAINTEXT 9092, SSL 9093, SASL_PLAINTEXT 9094) inside a private network
# namespace whose loopback has an MTU of 1500 and TSO/GSO/GRO off.
#
#   sudo scripts/make-samples-kafka.sh                    # every scenario
#   sudo scripts/make-samples-kafka.sh admin produce-lz4  # some of them (names: see SCENARIOS)
#   sudo scripts/make-samples-kafka.sh --list
#
# Each scenario gets a fresh node (new storage, new random cluster id unless KAFKA_CLUSTER_ID is
# set), then setup steps that are not captured (topics, seed records, warm-up of the internal
# topics __consumer_offsets and __transaction_state, group configs), then tcpdump -i lo
# 'tcp port 9092 or tcp port 9093 or tcp port 9094' in the namespace while the captured client
# runs; tcpdump is stopped a second after the client exits and must report 0 dropped packets.
# The client's log (NetworkClient DEBUG: every request and response; RESULT lines) is kept,
# minus noise, as samples/logs/ak44-NAME.log.
#
# Needs root, Java 17, Maven (Maven Central), tcpdump, ethtool, keytool. A few minutes.
# Environment: OUT (default samples/), WORK (scratch, default a new directory under /tmp),
# KEEP_WORK=1 to keep it, KAFKA_NS (default kdkafka), KAFKA_CLUSTER_ID.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/samples}
WORK=${WORK:-$(mktemp -d /tmp/kdissect-ak44.XXXXXX)}
BROKER=$ROOT/scripts/kafka-broker
CLIENTS=$ROOT/scripts/clients/java
export KAFKA_WORK=$WORK/kafka
export KAFKA_NS=${KAFKA_NS:-kdkafka}
FILTER='tcp port 9092 or tcp port 9093 or tcp port 9094'

# name | broker format features | setup steps (;-separated client invocations) | captured client args
SCENARIOS=(
    "admin||setup-topics orders:3;setup-produce none;setup-warm-groups;setup-groups|admin"
    "describe-topics-cursor||setup-topics inventory-a:5 inventory-b:3 inventory-c:4|describe-topics-cursor"
    "produce-gzip||setup-topics orders:3|produce gzip"
    "produce-snappy||setup-topics orders:3|produce snappy"
    "produce-lz4||setup-topics orders:3|produce lz4"
    "produce-zstd||setup-topics orders:3|produce zstd"
    "transactions||setup-topics orders:3;setup-warm-groups;setup-warm-txn|transactions"
    "transactions-tv1|transaction.version=1|setup-topics orders:3;setup-warm-groups;setup-warm-txn|transactions"
    "consumer-classic||setup-topics orders:3;setup-produce none;setup-warm-groups|consume classic"
    "consumer-kip848||setup-topics orders:3;setup-produce zstd;setup-warm-groups|consume consumer"
    "share-consumer||setup-topics orders:3;setup-produce lz4;setup-share-group orders-share|share-consume"
    "sasl-plain||setup-topics orders:3|sasl PLAIN"
    "sasl-scram-sha-256||setup-topics orders:3|sasl SCRAM-SHA-256"
    "sasl-scram-sha-512||setup-topics orders:3|sasl SCRAM-SHA-512"
    "sasl-oauthbearer||setup-topics orders:3|sasl OAUTHBEARER"
    "ssl||setup-topics orders:3|ssl"
)

CAPTURE_PID=

log() { printf '==> %s\n' "$*" >&2; }

cleanup() {
    set +e
    if [ -n "$CAPTURE_PID" ]; then kill -INT "$CAPTURE_PID" 2>/dev/null; wait "$CAPTURE_PID" 2>/dev/null; fi
    "$BROKER" stop 2>/dev/null
    if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}

build_clients() {
    log "building the Java clients (scripts/clients/java)"
    (cd "$CLIENTS" && mvn -q -B package)
    CP="$CLIENTS/target/kdissect-java-clients-1.jar:$CLIENTS/target/lib/*"
}

# client ARGS...: one run of the Java program inside the namespace.
client() {
    # shellcheck disable=SC2086
    "$BROKER" exec env KD_TRUSTSTORE="$KAFKA_WORK/config/client.truststore.p12" \
        KD_TRUSTSTORE_PASSWORD=kdissect-test java -Xmx512m -cp "$CP" kdissect.clients.Main "$@"
}

# Drop the lines that say nothing about the wire: telemetry give-ups, stack frames of the
# expected UnsupportedVersionException, least-loaded-node bookkeeping.
trim_log() {
    grep -v -E '^\s+at |^\s+\.\.\. [0-9]+ more|Give up sending telemetry request|from least loaded node selection|^org\.apache\.kafka\.common\.errors\.UnsupportedVersionException: The node does not support GET_TELEMETRY' "$1" || true
}

run_scenario() {
    local spec=$1 name features setup args
    IFS='|' read -r name features setup args <<<"$spec"
    local pcap=$OUT/ak44-$name.pcap clientlog=$WORK/$name.client.log err=$WORK/$name.tcpdump.err
    log "scenario $name"
    "$BROKER" stop >/dev/null 2>&1 || true
    KAFKA_FORMAT_FEATURES=$features "$BROKER" start --fresh
    local step
    IFS=';' read -r -a steps <<<"$setup"
    for step in "${steps[@]}"; do
        # shellcheck disable=SC2086
        client $step >>"$WORK/$name.setup.log" 2>&1 || { tail -n 40 "$WORK/$name.setup.log" >&2; return 1; }
    done
    "$BROKER" exec tcpdump -Z root -U --immediate-mode -B 16384 -w "$pcap" -i lo "$FILTER" 2>"$err" &
    CAPTURE_PID=$!
    for _ in $(seq 100); do grep -q "listening on" "$err" && break; sleep 0.1; done
    grep -q "listening on" "$err" || { cat "$err" >&2; return 1; }
    sleep 0.5
    # shellcheck disable=SC2086
    if ! client $args >"$clientlog" 2>&1; then
        tail -n 40 "$clientlog" >&2
        log "client failed in scenario $name"
        return 1
    fi
    sleep 1
    kill -INT "$CAPTURE_PID"
    wait "$CAPTURE_PID" || true
    CAPTURE_PID=
    cat "$err" >&2
    grep -q '^0 packets dropped by kernel' "$err" || { log "tcpdump dropped packets in $name"; return 1; }
    "$BROKER" stop
    mkdir -p "$OUT/logs"
    trim_log "$clientlog" >"$OUT/logs/ak44-$name.log"
    log "$pcap: $(stat -c %s "$pcap") bytes; log $(stat -c %s "$OUT/logs/ak44-$name.log") bytes"
}

main() {
    if [ "${1:-}" = --list ]; then
        for s in "${SCENARIOS[@]}"; do printf '%s\n' "${s%%|*}"; done
        return 0
    fi
    [ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
    local wanted=("$@") s w found
    for w in "${wanted[@]}"; do
        found=0
        for s in "${SCENARIOS[@]}"; do [ "${s%%|*}" = "$w" ] && found=1; done
        [ $found = 1 ] || { echo "unknown scenario: $w (--list lists them)" >&2; exit 2; }
    done
    trap cleanup EXIT
    mkdir -p "$WORK" "$OUT"
    build_clients
    for s in "${SCENARIOS[@]}"; do
        if [ ${#wanted[@]} -eq 0 ]; then run_scenario "$s"; continue; fi
        for w in "${wanted[@]}"; do [ "${s%%|*}" = "$w" ] && run_scenario "$s"; done
    done
    log "done"
}

main "$@"
