#!/usr/bin/env bash
# Remakes the samples/ak44-<client>-*.pcap captures and their samples/logs/ak44-<client>-*.log
# client logs: non-Java clients (franz-go, IBM/sarama, confluent-kafka, kafka-python, kafkajs)
# talking to a real Apache Kafka 4.4.0 node started by scripts/kafka-broker.
#
#   sudo scripts/make-samples-clients.sh                          # all of them
#   sudo scripts/make-samples-clients.sh franz-admin sarama-group # some (names in STEPS below)
#
# Each capture gets a freshly formatted node (same cluster id every time) in its own network
# namespace (default kdclients, so that it can run beside another scripts/kafka-broker node),
# a setup run of the client that is not captured (topics, and records to read where the capture
# is only about consuming), then tcpdump on the namespace's loopback for ports 9092-9094 while
# the client runs, stopped a second after the client exits; a capture with dropped packets
# fails the step. The client programs are in scripts/clients/{go-franz,go-sarama,python,node}/;
# each writes its library's protocol debug log and RESULT lines (one JSON object each: what the
# client got back), which are trimmed to the request/response and RESULT lines into
# samples/logs/.
#
# Needs root (ip netns, tcpdump), Go, Python 3, Node.js and npm, and what scripts/kafka-broker
# needs (Java 17+, Maven). Library versions are pinned: go.mod/go.sum of the Go programs,
# scripts/clients/python/requirements.txt, scripts/clients/node/package.json.
#
# Environment: OUT (captures, default samples/), WORK (scratch, default a new directory under
# /tmp), KEEP_WORK=1 to keep it, KAFKA_NS (default kdclients), KAFKA_WORK (the node's directory,
# default /tmp/kdclients-kafka), KAFKA_CLUSTER_ID (default a2RjbGllbnRzLWFrNDQtMQ, the base64 of
# "kdclients-ak44-1").

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/samples}
WORK=${WORK:-$(mktemp -d /tmp/kdclients-samples.XXXXXX)}
export KAFKA_NS=${KAFKA_NS:-kdclients}
export KAFKA_WORK=${KAFKA_WORK:-/tmp/kdclients-kafka}
export KAFKA_CLUSTER_ID=${KAFKA_CLUSTER_ID:-a2RjbGllbnRzLWFrNDQtMQ}
BROKER=$ROOT/scripts/kafka-broker
CLIENTS=$ROOT/scripts/clients
PORTS='tcp port 9092 or tcp port 9093 or tcp port 9094'
CAPTURE_PID=

STEPS=(franz-admin franz-produce-consume franz-kip848 franz-share sarama-group confluent-admin
       confluent-produce-kip848 confluent-sasl-scram kafka-python-admin kafka-python-group
       kafkajs-admin kafkajs-group)

log() { printf '==> %s\n' "$*" >&2; }

cleanup() {
    set +e
    [ -n "$CAPTURE_PID" ] && kill -TERM "$CAPTURE_PID" 2>/dev/null && wait "$CAPTURE_PID"
    "$BROKER" stop >/dev/null 2>&1
    if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}
trap cleanup EXIT

install_clients() {
    command -v tcpdump >/dev/null || { apt-get update -q; apt-get install -y -q tcpdump; }
    mkdir -p "$WORK/bin"
    log "building the Go clients (versions from go.mod/go.sum)"
    (cd "$CLIENTS/go-franz" && go build -o "$WORK/bin/go-franz" .)
    (cd "$CLIENTS/go-sarama" && go build -o "$WORK/bin/go-sarama" .)
    if [ ! -x "$WORK/venv/bin/python" ]; then
        log "installing $(paste -sd' ' "$CLIENTS/python/requirements.txt")"
        python3 -m venv "$WORK/venv"
        "$WORK/venv/bin/pip" install -q -r "$CLIENTS/python/requirements.txt"
    fi
    PY=$WORK/venv/bin/python
    if [ ! -d "$WORK/node/node_modules/kafkajs" ]; then
        log "installing kafkajs (scripts/clients/node/package.json)"
        mkdir -p "$WORK/node"
        cp "$CLIENTS/node/package.json" "$WORK/node/"
        (cd "$WORK/node" && npm install -q --no-audit --no-fund >/dev/null)
    fi
    export NODE_PATH=$WORK/node/node_modules
}

fresh_broker() {
    "$BROKER" stop >/dev/null 2>&1 || true
    "$BROKER" start --fresh
}

in_ns() { ip netns exec "$KAFKA_NS" "$@"; }

start_capture() {
    local file=$1 err=$WORK/tcpdump.err
    rm -f "$err"
    ip netns exec "$KAFKA_NS" tcpdump -Z root -U --immediate-mode -B 16384 -w "$file" -i lo \
        "$PORTS" 2>"$err" &
    CAPTURE_PID=$!
    for _ in $(seq 100); do
        grep -q "listening on" "$err" && return 0
        sleep 0.1
    done
    cat "$err" >&2
    return 1
}

stop_capture() {
    sleep 1
    kill -TERM "$CAPTURE_PID"
    wait "$CAPTURE_PID" 2>/dev/null || true
    CAPTURE_PID=
    grep -h "packets" "$WORK/tcpdump.err" >&2
    if ! grep -q "^0 packets dropped by kernel" "$WORK/tcpdump.err"; then
        echo "tcpdump dropped packets: run this step again" >&2
        return 1
    fi
}

# trim KIND < raw log > kept lines: the request/response lines and RESULT lines of each client,
# with very long lines (kafka-python prints whole decoded messages) cut at 3000 characters.
trim() {
    case $1 in
    franz | sarama) grep -E '^RESULT |WIRE |KGO |SARAMA |FAILED' ;;
    confluent) grep -E '^RESULT |\|(SEND|RECV|FAIL|ERROR|SASL|SASLMECHS|SASLSCRAM|PROTOERR|REQERR)\||^%[0-4]\|' |
        grep -vE 'Received [A-Z]+ op' ;;
    kafka-python) grep -E '^RESULT |kafka\.net\.connection|ERROR|WARNING' ;;
    kafkajs) grep -E '^RESULT | (Request|Response) [A-Za-z]+\(key|WARN|ERROR' ;;
    esac | awk '{ if (length($0) > 3000) print substr($0, 1, 3000) " ... [" length($0) - 3000 " more characters cut]"; else print }'
}

# capture NAME KIND SETUP-CMD|"" CLIENT-CMD...: one capture with a fresh node.
capture() {
    local name=$1 kind=$2 setup=$3
    shift 3
    log "$name"
    fresh_broker
    if [ -n "$setup" ]; then in_ns bash -c "$setup" >"$WORK/$name.setup.log" 2>&1; fi
    start_capture "$WORK/$name.pcap"
    in_ns timeout 120 "$@" >"$WORK/$name.raw.log" 2>&1 || {
        tail -20 "$WORK/$name.raw.log" >&2
        stop_capture || true
        return 1
    }
    stop_capture
    cp "$WORK/$name.pcap" "$OUT/ak44-$name.pcap"
    {
        printf '# ak44-%s.pcap: client log (trimmed to request/response and RESULT lines)\n' "$name"
        printf '# command: %s\n' "$*" | sed "s|$WORK|\$WORK|g; s|$ROOT/||g"
        trim "$kind" <"$WORK/$name.raw.log"
    } >"$OUT/logs/ak44-$name.log"
    log "$(ls -l "$OUT/ak44-$name.pcap")"
}

main() {
    mkdir -p "$OUT/logs" "$WORK"
    install_clients
    local franz=$WORK/bin/go-franz sarama=$WORK/bin/go-sarama
    local confluent=$CLIENTS/python/confluent_client.py kp=$CLIENTS/python/kafka_python_client.py
    local kjs=$CLIENTS/node/kafkajs_client.js
    local b=127.0.0.1:9092
    local steps=("$@")
    [ ${#steps[@]} -eq 0 ] && steps=("${STEPS[@]}")
    for step in "${steps[@]}"; do
        case $step in
        franz-admin)
            capture "$step" franz "$franz $b setup" "$franz" "$b" admin ;;
        franz-produce-consume)
            capture "$step" franz "$franz $b setup" "$franz" "$b" produce ;;
        franz-kip848)
            capture "$step" franz "$franz $b setup && $franz $b seed" "$franz" "$b" kip848 ;;
        franz-share)
            capture "$step" franz "$franz $b setup" "$franz" "$b" share ;;
        sarama-group)
            capture "$step" sarama "$sarama $b setup" "$sarama" "$b" run ;;
        confluent-admin)
            capture "$step" confluent "$PY $confluent $b setup" "$PY" -u "$confluent" "$b" admin ;;
        confluent-produce-kip848)
            capture "$step" confluent "$PY $confluent $b setup" "$PY" -u "$confluent" "$b" produce ;;
        confluent-sasl-scram)
            capture "$step" confluent "$PY $confluent $b setup" \
                "$PY" -u "$confluent" 127.0.0.1:9094 sasl ;;
        kafka-python-admin)
            capture "$step" kafka-python "$PY $kp $b setup" "$PY" -u "$kp" "$b" admin ;;
        kafka-python-group)
            capture "$step" kafka-python "$PY $kp $b setup" "$PY" -u "$kp" "$b" group ;;
        kafkajs-admin)
            capture "$step" kafkajs "node $kjs $b setup" node "$kjs" "$b" admin ;;
        kafkajs-group)
            capture "$step" kafkajs "node $kjs $b setup" node "$kjs" "$b" group ;;
        *) echo "unknown step $step (one of: ${STEPS[*]})" >&2; exit 2 ;;
        esac
    done
}

main "$@"
