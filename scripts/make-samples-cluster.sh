#!/usr/bin/env bash
# Remakes the running-cluster captures samples/cluster-*.pcap and their logs
# samples/logs/cluster-NAME-*.log: a real Apache Kafka 4.4.0 cluster (scripts/kafka-cluster: a
# dedicated KRaft controller 127.0.0.1:9093 and brokers 127.0.0.2:9092, 127.0.0.3:9192,
# 127.0.0.4:9292, replication factor 3, min.insync.replicas=2) with Java, Go, Python and Streams
# clients running, and tcpdump started only once everything is already running, so that
# connections are picked up mid-stream and long-poll Fetches are cut between request and
# response.
#
#   sudo scripts/make-samples-cluster.sh                  # every scenario
#   sudo scripts/make-samples-cluster.sh steady restart   # some of them (names: SCENARIOS)
#
# Each scenario: a fresh cluster (new storage, new random cluster id), the setup run (topics
# cluster-orders, cluster-txn, cluster-order-counts with 3 partitions and replication factor 3;
# __consumer_offsets and __transaction_state warmed up), then the clients, started one after
# the other in the background and left running for WARM seconds (groups formed, transactions
# flowing), then `tcpdump -i lo -U --immediate-mode -B 16384` on the namespace's loopback for
# every Kafka port (the controller's 9093 too) for CAPTURE seconds, during which the scenario's
# action runs (nothing, a clean broker restart, a SIGKILL and restart, admin runs). tcpdump is
# stopped before the clients end, so no connection of theirs closes in the capture unless the
# action closes it. A capture with packets dropped by the kernel fails the scenario.
#
# Kept per scenario, in samples/logs/:
#   cluster-NAME-<client>.log  the client's log, cut to the capture's time window (from 2 s
#                              before tcpdump started to 2 s after it stopped), lines longer than
#                              LINE_MAX characters cut, with a header naming the command
#   cluster-NAME-nodes.log     the controller's and brokers' own lines of that window about
#                              registration, fencing, controlled shutdown, leader and ISR changes,
#                              each prefixed with its node id
#   cluster-NAME-capture.log   the tcpdump command and its "packets captured / dropped by kernel"
#                              lines, and the time line of the scenario's actions
#
# Needs root, Java 17, Maven, Go, Python 3 (venv + pip), tcpdump, and what scripts/kafka-cluster
# needs. About 2-3 minutes a scenario.
# Environment: OUT (default samples/), WORK (scratch, default a new directory under /tmp),
# KEEP_WORK=1 to keep it, KAFKA_CLUSTER_NS (default kdcluster), KAFKA_CLUSTER_WORK, WARM
# (default 20), CAPTURE (default per scenario), LINE_MAX (default 6000).

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/samples}
WORK=${WORK:-$(mktemp -d /tmp/kdissect-cluster-samples.XXXXXX)}
CLUSTER=$ROOT/scripts/kafka-cluster
CLIENTS=$ROOT/scripts/clients
export KAFKA_CLUSTER_NS=${KAFKA_CLUSTER_NS:-kdcluster}
export KAFKA_CLUSTER_WORK=${KAFKA_CLUSTER_WORK:-/tmp/kdissect-cluster}
WARM=${WARM:-20}
LINE_MAX=${LINE_MAX:-6000}
SEEDS=127.0.0.2:9092,127.0.0.3:9192,127.0.0.4:9292
FILTER='tcp port 9093 or tcp port 9092 or tcp port 9192 or tcp port 9292'

# name | capture seconds | action (a function below)
SCENARIOS=(
    "steady|15|action_none"
    "restart|25|action_restart"
    "kill|25|action_kill"
    "admin|15|action_admin"
)

CAPTURE_PID=
CLIENT_PIDS=()
T0=
T1=

log() { printf '==> %s\n' "$*" >&2; }
stamp() { date +%H:%M:%S.%3N; }
in_ns() { ip netns exec "$KAFKA_CLUSTER_NS" "$@"; }

cleanup() {
    set +e
    if [ -n "$CAPTURE_PID" ]; then kill -INT "$CAPTURE_PID" 2>/dev/null; wait "$CAPTURE_PID" 2>/dev/null; fi
    stop_clients
    "$CLUSTER" stop >/dev/null 2>&1
    if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}

build_clients() {
    log "building the Java clients (scripts/clients/java)"
    (cd "$CLIENTS/java" && mvn -q -B package)
    CP="$CLIENTS/java/target/kdissect-java-clients-1.jar:$CLIENTS/java/target/lib/*"
    JAVA=(java -Xms64m -Xmx256m -XX:TieredStopAtLevel=1 -cp "$CP" kdissect.clients.Cluster)
    mkdir -p "$WORK/bin"
    log "building the franz-go client"
    (cd "$CLIENTS/go-franz" && go build -o "$WORK/bin/go-franz" .)
    if [ ! -x "$WORK/venv/bin/python" ]; then
        log "installing $(paste -sd' ' "$CLIENTS/python/requirements.txt")"
        python3 -m venv "$WORK/venv"
        "$WORK/venv/bin/pip" install -q -r "$CLIENTS/python/requirements.txt"
    fi
}

java_client() { in_ns "${JAVA[@]}" "$@"; }

# start_client NAME CMD...: runs CMD in the namespace in the background, output to
# $WORK/NAME.raw.log; the client stops by itself (each takes a duration), timeout is a guard.
start_client() {
    local name=$1
    shift
    printf '%s\n' "$*" | sed "s|$WORK|\$WORK|g; s|$ROOT/||g" >"$WORK/$name.cmd"
    setsid timeout 300 "$@" >"$WORK/$name.raw.log" 2>&1 </dev/null &
    CLIENT_PIDS+=($!)
    NAMES+=("$name")
}

stop_clients() {
    local pid
    for pid in "${CLIENT_PIDS[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
    for pid in "${CLIENT_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    CLIENT_PIDS=()
}

wait_clients() {
    local pid
    for pid in "${CLIENT_PIDS[@]}"; do wait "$pid" || log "a client exited with status $?"; done
    CLIENT_PIDS=()
}

# The clients of every scenario. Each runs for the warm-up, the capture and a margin.
start_all_clients() {
    local d=$1 py=$WORK/venv/bin/python ns=(ip netns exec "$KAFKA_CLUSTER_NS")
    start_client producer "${ns[@]}" "${JAVA[@]}" producer "$d" 2
    sleep 2
    start_client consumer-classic "${ns[@]}" "${JAVA[@]}" consumer classic "$d"
    sleep 2
    start_client consumer-kip848 "${ns[@]}" "${JAVA[@]}" consumer consumer "$d"
    sleep 2
    start_client txn "${ns[@]}" "${JAVA[@]}" txn "$d"
    sleep 2
    start_client streams "${ns[@]}" env KD_STATE_DIR="$WORK/streams-state" "${JAVA[@]}" streams "$d"
    start_client franz "${ns[@]}" "$WORK/bin/go-franz" "$SEEDS" cluster "$d"
    start_client kafka-python "${ns[@]}" "$py" -u "$CLIENTS/python/kafka_python_client.py" "$SEEDS" cluster "$d"
}

start_capture() {
    local pcap=$1 err=$WORK/tcpdump.err
    rm -f "$err"
    # ip netns exec execs tcpdump: $! is tcpdump itself, which SIGINT stops.
    ip netns exec "$KAFKA_CLUSTER_NS" tcpdump -Z root -i lo -U --immediate-mode -B 16384 -w "$pcap" \
        "$FILTER" 2>"$err" &
    CAPTURE_PID=$!
    for _ in $(seq 100); do grep -qs "listening on" "$err" && break; sleep 0.1; done
    grep -q "listening on" "$err" || { cat "$err" >&2; return 1; }
    T0=$(date +%s.%N)
    timeline "tcpdump started"
}

stop_capture() {
    kill -INT "$CAPTURE_PID"
    wait "$CAPTURE_PID" || true
    CAPTURE_PID=
    T1=$(date +%s.%N)
    timeline "tcpdump stopped"
    cat "$WORK/tcpdump.err" >&2
    grep -q '^0 packets dropped by kernel' "$WORK/tcpdump.err" || { log "tcpdump dropped packets"; return 1; }
}

timeline() { printf '%s %s\n' "$(stamp)" "$*" >>"$WORK/timeline"; }

# Actions run while the capture runs; each takes the capture's length in seconds.
action_none() { sleep "$1"; }

action_restart() {
    sleep 5
    timeline "stop-broker 2 (SIGTERM: controlled shutdown)"
    "$CLUSTER" stop-broker 2
    timeline "broker 2 exited"
    sleep 3
    timeline "start-broker 2"
    "$CLUSTER" start-broker 2
    timeline "broker 2 answers and is unfenced"
    sleep_rest "$1"
}

action_kill() {
    sleep 5
    timeline "kill-broker 3 (SIGKILL)"
    "$CLUSTER" kill-broker 3
    sleep 8
    timeline "start-broker 3"
    "$CLUSTER" start-broker 3
    timeline "broker 3 answers and is unfenced"
    sleep_rest "$1"
}

action_admin() {
    sleep 2
    timeline "Admin through the brokers (admin-brokers)"
    java_client admin-brokers a >"$WORK/admin-brokers.raw.log" 2>&1 || log "admin-brokers failed"
    echo "java ... kdissect.clients.Cluster admin-brokers a" >"$WORK/admin-brokers.cmd"
    NAMES+=(admin-brokers)
    timeline "Admin with bootstrap.controllers (admin-controller)"
    java_client admin-controller >"$WORK/admin-controller.raw.log" 2>&1 || log "admin-controller failed"
    echo "java ... kdissect.clients.Cluster admin-controller" >"$WORK/admin-controller.cmd"
    NAMES+=(admin-controller)
    timeline "admin runs done"
    sleep_rest "$1"
}

# Sleeps until the capture has run for $1 seconds.
sleep_rest() {
    local left
    left=$(python3 -c "import time; print(max(0.0, $T0 + $1 - time.time()))")
    sleep "$left"
}

# window FILE: the lines of FILE whose time of day lies in the capture's window (2 s margin);
# a line without a time takes the time of the line before it. Long lines are cut.
window() {
    python3 - "$T0" "$T1" "$LINE_MAX" "$1" <<'EOF'
import re, sys, datetime
t0, t1, line_max, path = float(sys.argv[1]) - 2, float(sys.argv[2]) + 2, int(sys.argv[3]), sys.argv[4]
day = datetime.datetime.fromtimestamp(t0).date()
pat = re.compile(r"(?:^|\[)(?:\d{4}-\d\d-\d\d )?(\d\d):(\d\d):(\d\d)[.,](\d+)")
cur = None
for line in open(path, errors="replace"):
    m = pat.match(line)
    if m:
        h, mi, s, frac = m.groups()
        cur = datetime.datetime.combine(day, datetime.time(int(h), int(mi), int(s))).timestamp() + float("0." + frac)
    if cur is None or not (t0 <= cur <= t1):
        continue
    line = line.rstrip("\n")
    if len(line) > line_max:
        line = line[:line_max] + f" ... [{len(line) - line_max} more characters cut]"
    print(line)
EOF
}

# Client lines worth keeping: requests and responses, RESULT lines, warnings and errors, the
# clients' own INFO lines; no stack frames, no telemetry give-ups.
trim_client() {
    grep -v -E '^\s+at |^\s+\.\.\. [0-9]+ more|Give up sending telemetry request|from least loaded node selection' || true
}

# The nodes' lines about the cluster's shape: registration, fencing, controlled shutdown,
# leadership and ISR changes, elections, replica fetcher starts and stops.
NODE_PATTERN='[Rr]egist|[Ff]enc|[Cc]ontrolled ?[Ss]hutdown|[Ll]eader|ISR|[Ii]sr|[Ee]lect|Transitioning|[Ss]hutting down|shut down completed|started \(kafka|Kafka Server started|ReplicaFetcher|Envelope|[Rr]eassign|PartitionChange|CreateTopics|[Cc]reat(ed|ing) topic|[Dd]elet(ed|ing) topic|IncrementalAlterConfigs|[Qq]uota|SCRAM|[Ff]eature'

keep_logs() {
    local name=$1 n c
    mkdir -p "$OUT/logs"
    for c in "${NAMES[@]}"; do
        {
            printf '# cluster-%s.pcap: %s client log, lines of the capture window only\n' "$name" "$c"
            printf '# command: %s\n' "$(cat "$WORK/$c.cmd")"
            window "$WORK/$c.raw.log" | trim_client
        } >"$OUT/logs/cluster-$name-$c.log"
    done
    {
        printf '# cluster-%s.pcap: lines of the nodes'"'"' logs (server.log, state-change.log) of the capture window\n' "$name"
        printf '# about registration, fencing, shutdown, leaders, ISR and admin changes; node 0 is the controller\n'
        for n in 0 1 2 3; do
            for f in server.log state-change.log; do
                window "$KAFKA_CLUSTER_WORK/node$n/logs/$f" | { grep -E "$NODE_PATTERN" || true; } |
                    sed "s/^/node$n $f: /"
            done
        done
    } >"$OUT/logs/cluster-$name-nodes.log"
    {
        printf '# cluster-%s.pcap: how it was captured\n' "$name"
        printf '# ip netns exec %s tcpdump -Z root -i lo -U --immediate-mode -B 16384 -w cluster-%s.pcap '"'"'%s'"'"'\n' \
            "$KAFKA_CLUSTER_NS" "$name" "$FILTER"
        printf '# cluster id %s; times below are local (UTC offset %s)\n' "$("$CLUSTER" cluster-id)" "$(date +%z)"
        printf '# tcpdump said:\n'
        sed 's/^/#   /' "$WORK/tcpdump.err"
        printf '# time line (local time of day):\n'
        cat "$WORK/timeline"
    } >"$OUT/logs/cluster-$name-capture.log"
}

run_scenario() {
    local spec=$1 name secs action
    IFS='|' read -r name secs action <<<"$spec"
    secs=${CAPTURE:-$secs}
    local pcap=$OUT/cluster-$name.pcap
    log "scenario $name: warm-up ${WARM}s, capture ${secs}s"
    NAMES=()
    rm -f "$WORK/timeline" "$WORK"/*.raw.log "$WORK"/*.cmd
    rm -rf "$WORK/streams-state"
    "$CLUSTER" stop >/dev/null 2>&1 || true
    "$CLUSTER" start --fresh
    timeline "cluster up, id $("$CLUSTER" cluster-id)"
    java_client setup >"$WORK/$name.setup.log" 2>&1 || { tail -n 40 "$WORK/$name.setup.log" >&2; return 1; }
    timeline "setup done"
    start_all_clients $((WARM + secs + 6))
    timeline "clients started"
    sleep "$WARM"
    start_capture "$pcap"
    "$action" "$secs"
    stop_capture
    timeline "waiting for the clients to end"
    wait_clients
    keep_logs "$name"
    "$CLUSTER" stop
    log "$pcap: $(stat -c %s "$pcap") bytes"
}

main() {
    [ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
    local wanted=("$@") s w found
    for w in "${wanted[@]}"; do
        found=0
        for s in "${SCENARIOS[@]}"; do [ "${s%%|*}" = "$w" ] && found=1; done
        [ $found = 1 ] || { echo "unknown scenario: $w (one of: ${SCENARIOS[*]%%|*})" >&2; exit 2; }
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
