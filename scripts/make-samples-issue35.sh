#!/usr/bin/env bash
# Remakes the issue-35 captures samples/issue35-*.pcap and their NDJSON logs
# samples/logs/issue35-RUN.ndjson: group consumers of several client libraries on a real
# Apache Kafka 4.4.0 cluster (scripts/kafka-cluster: a KRaft controller 127.0.0.1:9093 and
# brokers 127.0.0.2:9092, 127.0.0.3:9192, 127.0.0.4:9292), with members that are slow then
# fast, closed cleanly, killed with SIGKILL and joining late, each client logging every record
# it sent or received, every assignment and its own lag figures. samples/README.md ("issue 35")
# describes each run and the log schema.
#
#   sudo scripts/make-samples-issue35.sh              # every run
#   sudo scripts/make-samples-issue35.sh classic ...  # some (names: --list)
#
# Runs (each on its own topics and groups of one cluster, started fresh once):
#   classic   librdkafka (confluent-kafka 2.16.1) classic group + one Java 4.4 member:
#             issue35-classic.pcap (tcpdump started before any client) and
#             issue35-classic-late.pcap (a second tcpdump started while everything runs)
#   kip848    the same with group.protocol=consumer (KIP-848): issue35-kip848.pcap and
#             issue35-kip848-late.pcap
#   streams   Kafka Streams 4.4 (group.protocol=streams) instances joining, killed and closed,
#             and a franz-go classic group beside them: issue35-streams.pcap
#   unnamed   clients that send no software name in ApiVersions: aiokafka and kafka-go
#             producers and groups: issue35-unnamed.pcap
#   nonascii  librdkafka clients with client ids "café" and "クライアント": issue35-nonascii.pcap
#             and issue35-nonascii-late.pcap (started while they run; like every capture it is
#             written to OUT, but the committed one is kept in samples/issue35/, out of the
#             tests that read every file of samples/, until issue 35 item 19 is fixed: move a
#             remade one there)
#   busy      (not in the default list, not committed: too large) a long capture for the
#             bounds of issue 35 item 12: a producer, a Java member and a churn of librdkafka
#             members of one classic group for DURATION seconds (default 600), written to
#             BUSY_OUT (default /tmp) as issue35-busy.pcap and issue35-busy.ndjson
#
# Every capture: `tcpdump -i lo -U --immediate-mode -B 16384` in the cluster's namespace on the
# four Kafka ports; a capture with packets dropped by the kernel fails the run. Each client's
# stdout is NDJSON (ts_ns = wall clock in ns, the clock of tcpdump's timestamps); this script
# adds its own events (client "run": captures started and stopped, kills) and merges all,
# sorted by ts_ns, into samples/logs/issue35-RUN.ndjson.
#
# Needs root, Java 17, Maven, Python 3 (venv + pip), Go, tcpdump.
# Environment: OUT (default samples/), WORK (scratch, default a new directory under /tmp),
# KEEP_WORK=1 to keep it, KAFKA_CLUSTER_NS (default kd35), KAFKA_CLUSTER_WORK (default
# $WORK/cluster), REUSE_CLUSTER=1 (use the cluster if it runs, leave it running: for trying
# runs again; topics and groups are deleted and made again), RATE (records a second of each producer, default 25), VENV (the Python
# virtual environment, default $WORK/venv; made and filled when missing).

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/samples}
WORK=${WORK:-$(mktemp -d /tmp/kdissect-issue35.XXXXXX)}
CLUSTER=$ROOT/scripts/kafka-cluster
CLIENTS=$ROOT/scripts/clients
export KAFKA_CLUSTER_NS=${KAFKA_CLUSTER_NS:-kd35}
export KAFKA_CLUSTER_WORK=${KAFKA_CLUSTER_WORK:-$WORK/cluster}
export KAFKA_NODE_HEAP=${KAFKA_NODE_HEAP:--Xms96m -Xmx384m}
RATE=${RATE:-25}
VENV=${VENV:-$WORK/venv}
T0_NS=0
SEEDS=127.0.0.2:9092,127.0.0.3:9192,127.0.0.4:9292
FILTER='tcp port 9093 or tcp port 9092 or tcp port 9192 or tcp port 9292'
RUNS=(classic kip848 streams unnamed nonascii)

# Short group timeouts, so that a member killed with SIGKILL is dropped within a capture:
# KIP-848 and streams groups take them from the broker (classic members ask for 6 s themselves).
GROUP_CONFIG="group.consumer.min.session.timeout.ms=6000
group.consumer.session.timeout.ms=6000
group.consumer.min.heartbeat.interval.ms=1000
group.consumer.heartbeat.interval.ms=2000
group.streams.min.session.timeout.ms=6000
group.streams.session.timeout.ms=6000
group.streams.min.heartbeat.interval.ms=1000
group.streams.heartbeat.interval.ms=2000"
export KAFKA_CLUSTER_EXTRA_CONFIG_1=$GROUP_CONFIG
export KAFKA_CLUSTER_EXTRA_CONFIG_2=$GROUP_CONFIG
export KAFKA_CLUSTER_EXTRA_CONFIG_3=$GROUP_CONFIG

declare -A CAPTURE_PIDS=()
declare -A PIDS=()
RUN_DIR=

log() { printf '==> %s\n' "$*" >&2; }
in_ns() { ip netns exec "$KAFKA_CLUSTER_NS" "$@"; }
now_ns() { date +%s%N; }

# at S: sleeps until S seconds after T0_NS (the run's first capture started); at once if late.
at() {
    local d=$((T0_NS + $1 * 1000000000 - $(now_ns)))
    [ "$d" -le 0 ] || sleep "$((d / 1000000000)).$(printf '%09d' $((d % 1000000000)))"
}

cleanup() {
    set +e
    local k
    for k in "${!CAPTURE_PIDS[@]}"; do kill -INT "${CAPTURE_PIDS[$k]}" 2>/dev/null; done
    for k in "${!PIDS[@]}"; do kill -KILL "${PIDS[$k]}" 2>/dev/null; done
    wait 2>/dev/null
    [ "${REUSE_CLUSTER:-0}" = 1 ] || "$CLUSTER" stop >/dev/null 2>&1
    if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}

# ev CLIENT EVENT [JSON-FRAGMENT]: one line of the run's own NDJSON (client "run" or the client
# the event is about, e.g. a kill).
ev() {
    printf '{"ts_ns":%s,"client":"%s","client_id":null,"event":"%s"%s}\n' "$(now_ns)" "$1" "$2" "${3:+,$3}" \
        >>"$RUN_DIR/run.ndjson"
}

build_clients() {
    log "building the Java clients in $WORK/java"
    rm -rf "$WORK/java"
    mkdir -p "$WORK/java"
    cp -r "$CLIENTS/java/pom.xml" "$CLIENTS/java/src" "$WORK/java/"
    (cd "$WORK/java" && mvn -q -B package)
    CP="$WORK/java/target/kdissect-java-clients-1.jar:$WORK/java/target/lib/*"
    # The Kafka clients' own log: warnings, to stderr (stdout is the NDJSON).
    printf 'status = warn\nappender.err.type = Console\nappender.err.name = err\nappender.err.target = SYSTEM_ERR\nappender.err.layout.type = PatternLayout\nappender.err.layout.pattern = %%d{HH:mm:ss.SSS} %%-5p [%%t] %%c{1}: %%m%%n\nrootLogger.level = WARN\nrootLogger.appenderRef.err.ref = err\n' \
        >"$WORK/log4j2.properties"
    JAVA=(java -Xms32m -Xmx192m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
        "-Dlog4j2.configurationFile=$WORK/log4j2.properties" -cp "$CP" kdissect.clients.Issue35)
    if [ ! -x "$VENV/bin/python" ]; then
        log "installing confluent-kafka 2.16.1 in $VENV"
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install -q confluent-kafka==2.16.1
    fi
    PY=("$VENV/bin/python" -u)
    "$VENV/bin/python" -c 'import aiokafka' 2>/dev/null || "$VENV/bin/pip" install -q aiokafka==0.14.0
    mkdir -p "$WORK/bin"
    log "building the Go clients (franz-go, kafka-go)"
    (cd "$CLIENTS/go-franz" && go build -o "$WORK/bin/go-franz" .)
    (cd "$CLIENTS/go-kafkago" && go build -o "$WORK/bin/go-kafkago" .)
}

# client NAME CMD...: CMD in the namespace in the background; stdout (NDJSON) to
# RUN_DIR/NAME.ndjson, stderr to RUN_DIR/NAME.err. `ip netns exec` execs CMD, so PIDS[NAME] is
# the client's own process (a SIGKILL reaches it, not a wrapper).
client() {
    local name=$1
    shift
    printf '%s\n' "$*" | sed "s|$VENV|\$VENV|g; s|$WORK|\$WORK|g; s|$ROOT/||g" >"$RUN_DIR/$name.cmd"
    ip netns exec "$KAFKA_CLUSTER_NS" "$@" >"$RUN_DIR/$name.ndjson" 2>"$RUN_DIR/$name.err" </dev/null &
    PIDS[$name]=$!
    ev run client_started "\"name\":\"$name\",\"pid\":$!"
}

kill_client() {
    local name=$1
    ev "$name" killed "\"signal\":\"KILL\",\"pid\":${PIDS[$name]}"
    kill -KILL "${PIDS[$name]}"
    wait "${PIDS[$name]}" 2>/dev/null || true
    unset "PIDS[$name]"
}

wait_clients() {
    local name
    for name in "${!PIDS[@]}"; do
        wait "${PIDS[$name]}" || log "client $name exited with status $?"
        unset "PIDS[$name]"
    done
}

# capture FILE: tcpdump (its own process: `ip netns exec` execs it, so SIGINT reaches it) on the namespace's loopback until stop_capture FILE.
capture() {
    local file=$1 err=$RUN_DIR/$1.tcpdump.log
    ip netns exec "$KAFKA_CLUSTER_NS" tcpdump -Z root -i lo -U --immediate-mode -B 16384 -w "$RUN_DIR/$file" "$FILTER" 2>"$err" &
    CAPTURE_PIDS[$file]=$!
    for _ in $(seq 100); do grep -qs "listening on" "$err" && break; sleep 0.1; done
    grep -q "listening on" "$err" || { cat "$err" >&2; return 1; }
    ev run capture_started "\"file\":\"$file\",\"command\":\"ip netns exec $KAFKA_CLUSTER_NS tcpdump -Z root -i lo -U --immediate-mode -B 16384 -w $file '$FILTER'\""
}

stop_capture() {
    local file=$1 err=$RUN_DIR/$1.tcpdump.log
    kill -INT "${CAPTURE_PIDS[$file]}"
    wait "${CAPTURE_PIDS[$file]}" || true
    unset "CAPTURE_PIDS[$file]"
    local said
    said=$(grep -E 'packets' "$err" | paste -sd';' | sed 's/"/\\"/g')
    ev run capture_stopped "\"file\":\"$file\",\"tcpdump\":\"$said\""
    grep -q '^0 packets dropped by kernel' "$err" || { log "tcpdump dropped packets ($file)"; return 1; }
    cp "$RUN_DIR/$file" "$OUT/$file"
    log "$file: $(stat -c %s "$OUT/$file") bytes; $said"
}

# merge RUN: every NDJSON line of the run's clients and of this script, sorted by ts_ns (stable:
# a client's own order is kept for equal times), into samples/logs/issue35-RUN.ndjson.
merge() {
    local run=$1
    python3 - "$RUN_DIR" "$OUT/logs/issue35-$run.ndjson" <<'EOF'
import glob, json, os, sys
d, out = sys.argv[1], sys.argv[2]
lines = []
for f in sorted(glob.glob(os.path.join(d, "*.ndjson"))):
    for n, raw in enumerate(open(f, encoding="utf-8")):
        raw = raw.strip()
        if not raw:
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            sys.stderr.write(f"{f}:{n + 1}: not JSON, left out: {raw[:120]}\n")
            continue
        lines.append((obj["ts_ns"], f, n, obj))
lines.sort(key=lambda t: (t[0], t[1], t[2]))
with open(out, "w", encoding="utf-8") as o:
    for _, _, _, obj in lines:
        o.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
print(f"{out}: {len(lines)} lines", file=sys.stderr)
EOF
    # The clients' stderr (librdkafka and Java warnings), when there is any.
    local f any=0
    for f in "$RUN_DIR"/*.err; do [ -s "$f" ] && any=1; done
    if [ $any = 1 ]; then
        {
            printf '# issue35-%s: the clients'"'"' stderr (librdkafka and Kafka Java client warnings)\n' "$run"
            for f in "$RUN_DIR"/*.err; do
                [ -s "$f" ] || continue
                printf '## %s (%s)\n' "$(basename "$f" .err)" "$(cat "${f%.err}.cmd")"
                head -c 200000 "$f"
            done
        } >"$OUT/logs/issue35-$run.stderr.log"
    fi
}

start_run() {
    RUN_DIR=$WORK/$1
    rm -rf "$RUN_DIR"
    mkdir -p "$RUN_DIR" "$OUT/logs"
    ev run run_started "\"run\":\"$1\",\"cluster_id\":\"$("$CLUSTER" cluster-id)\",\"kafka\":\"4.4.0\",\"seeds\":\"$SEEDS\""
}

topics() { in_ns "${JAVA[@]}" topics "$@" >>"$RUN_DIR/setup.ndjson" 2>>"$RUN_DIR/setup.err"; }

py_producer() { # NAME CLIENT_ID TOPIC SECONDS
    client "$1" "${PY[@]}" "$CLIENTS/python/issue35_confluent.py" producer --bootstrap "$SEEDS" \
        --name "$1" --client-id "$2" --topic "$3" --rate "$RATE" --seconds "$4"
}

py_consumer() { # NAME CLIENT_ID GROUP TOPIC PROTOCOL SECONDS [EXTRA...]
    local name=$1 id=$2 group=$3 topic=$4 protocol=$5 secs=$6
    shift 6
    client "$name" "${PY[@]}" "$CLIENTS/python/issue35_confluent.py" consumer --bootstrap "$SEEDS" \
        --name "$name" --client-id "$id" --group "$group" --topic "$topic" --protocol "$protocol" \
        --seconds "$secs" "$@"
}

java_consumer() { # NAME CLIENT_ID GROUP TOPIC PROTOCOL SECONDS
    client "$1" "${JAVA[@]}" consumer "$@"
}

# group_run RUN PROTOCOL: a producer and five members of one group on topic issue35-RUN (6
# partitions, RF 3); tcpdump A from the start, tcpdump B from 12 s on (after every client's
# Metadata exchanges); t = seconds after A started:
#   1 producer p (RATE records/s for 32 s);  2 c1-slow (sleeps 150 ms after each record for
#   its first 10 s);  3 c2-close (closes itself at about 22 s);  4 c3-kill;  5 j1-java (Java
#   4.4);  12 tcpdump B;  14 SIGKILL c3-kill;  25 c4-late joins;  about 35 everyone closes;
#   37 both captures stop.
group_run() {
    local run=$1 protocol=$2 topic=issue35-$1 group=issue35-$1-group
    local a=issue35-$run.pcap b=issue35-$run-late.pcap
    start_run "$run"
    topics "$topic:6" "group:$group"
    capture "$a"
    T0_NS=$(now_ns)
    at 1
    py_producer p "issue35-$run-producer" "$topic" 32
    at 2
    py_consumer c1-slow "issue35-$run-c1" "$group" "$topic" "$protocol" 33 --slow-seconds 10 --slow-ms 150
    at 3
    py_consumer c2-close "issue35-$run-c2" "$group" "$topic" "$protocol" 19
    at 4
    py_consumer c3-kill "issue35-$run-c3" "$group" "$topic" "$protocol" 120
    at 5
    java_consumer j1-java "issue35-$run-j1" "$group" "$topic" "$protocol" 30
    at 12
    capture "$b"
    at 14
    kill_client c3-kill
    at 25
    py_consumer c4-late "issue35-$run-c4" "$group" "$topic" "$protocol" 10
    wait_clients
    at 37
    stop_capture "$a"
    stop_capture "$b"
    merge "$run"
}

# streams_run: topic issue35-streams (6 partitions) written by a franz-go producer (RATE*0.4
# records/s), read by Kafka Streams instances of application issue35-streams-app
# (group.protocol=streams: counts per key into issue35-streams-counts) and by a franz-go
# classic group issue35-franz-group. t = seconds after tcpdump started:
#   0.5 s1 (streams, to the end);  1 producer f-p (34 s);  2 f1 (franz, to the end);  3 f2
#   (franz, killed at 14);  4 s2 (streams: killed with SIGKILL 3 s after it has active tasks;
#   the broker drops it after its 6 s session timeout);  8 s3 (streams, closes itself 26 s
#   after it started);  12 f3 (franz, joins late, closes at about 24);  stop 1 s after every
#   client has ended (about 42). The Streams steps wait for the instances (a JVM takes several
#   seconds to start on a loaded machine), not the clock.
streams_run() {
    local topic=issue35-streams fgroup=issue35-franz-group a=issue35-streams.pcap rate
    local franz=("$WORK/bin/go-franz" "$SEEDS" issue35)
    rate=$(python3 -c "print($RATE * 0.4)")
    start_run streams
    topics "$topic:6" "issue35-streams-counts:6" "group:$fgroup"
    capture "$a"
    T0_NS=$(now_ns)
    streams s1 40
    at 1
    client f-p "${franz[@]}" producer f-p issue35-franz-producer "$topic" "$rate" 34
    at 2
    client f1 "${franz[@]}" consumer f1 issue35-franz-f1 "$fgroup" "$topic" classic 36
    at 3
    client f2 "${franz[@]}" consumer f2 issue35-franz-f2 "$fgroup" "$topic" classic 120
    at 4
    streams s2 120
    at 8
    streams s3 26
    at 12
    client f3 "${franz[@]}" consumer f3 issue35-franz-f3 "$fgroup" "$topic" classic 12
    at 14
    kill_client f2
    wait_event s2 '"event":"tasks".*"active":\[\{' 60 || true
    sleep 3
    kill_client s2
    wait_clients
    sleep 1
    stop_capture "$a"
    merge streams
}

# wait_event NAME REGEX SECONDS: until client NAME has logged a line matching REGEX.
wait_event() {
    local i
    for i in $(seq $(($3 * 10))); do
        grep -q -E "$2" "$RUN_DIR/$1.ndjson" 2>/dev/null && return 0
        sleep 0.1
    done
    log "timed out waiting for /$2/ from $1"
    return 1
}

streams() { # NAME SECONDS
    client "$1" env KD_STATE_DIR="$RUN_DIR/state" "${JAVA[@]}" streams "$1" "issue35-streams-$1" \
        issue35-streams-app issue35-streams issue35-streams-counts "$2"
}

# unnamed_run: aiokafka and kafka-go, which send no ClientSoftwareName: each a producer
# (RATE/2 records/s for 22 s) and a group of two members on its own topic (3 partitions);
# the second member joins late and closes itself. t: 1 a-p, k-p;  2 a1;  3 k1;  10 a2 (for
# 9 s);  11 k2 (for 9 s);  about 26 everyone closes;  28 stop.
unnamed_run() {
    local a=issue35-unnamed.pcap rate
    local aio=("${PY[@]}" "$CLIENTS/python/issue35_aiokafka.py") kgo=("$WORK/bin/go-kafkago" "$SEEDS")
    rate=$(python3 -c "print($RATE / 2)")
    start_run unnamed
    topics issue35-aio:3 issue35-kgo:3 group:issue35-aio-group group:issue35-kgo-group
    capture "$a"
    T0_NS=$(now_ns)
    at 1
    client a-p "${aio[@]}" producer --bootstrap "$SEEDS" --name a-p --client-id issue35-aiokafka-producer \
        --topic issue35-aio --rate "$rate" --seconds 22
    client k-p "${kgo[@]}" producer k-p issue35-kafka-go-producer issue35-kgo "$rate" 22
    at 2
    client a1 "${aio[@]}" consumer --bootstrap "$SEEDS" --name a1 --client-id issue35-aiokafka-a1 \
        --group issue35-aio-group --topic issue35-aio --seconds 24
    at 3
    client k1 "${kgo[@]}" consumer k1 issue35-kafka-go-k1 issue35-kgo-group issue35-kgo 23
    at 10
    client a2 "${aio[@]}" consumer --bootstrap "$SEEDS" --name a2 --client-id issue35-aiokafka-a2 \
        --group issue35-aio-group --topic issue35-aio --seconds 9
    at 11
    client k2 "${kgo[@]}" consumer k2 issue35-kafka-go-k2 issue35-kgo-group issue35-kgo 9
    wait_clients
    at 28
    stop_capture "$a"
    merge unnamed
}

# nonascii_run: librdkafka clients whose client ids are not ASCII, in a classic group on topic
# issue35-nonascii (3 partitions); tcpdump A from the start, B from 8 s on. t: 1 producer
# "café" (RATE records/s for 20 s);  2 consumer "クライアント";  3 consumer "naïve-消费者-2"
# (closes itself at about 15);  8 tcpdump B;  about 23 everyone closes;  25 stop.
nonascii_run() {
    local topic=issue35-nonascii group=issue35-nonascii-group a=issue35-nonascii.pcap b=issue35-nonascii-late.pcap
    start_run nonascii
    topics "$topic:3" "group:$group"
    capture "$a"
    T0_NS=$(now_ns)
    at 1
    py_producer p "café" "$topic" 20
    at 2
    py_consumer n1 "クライアント" "$group" "$topic" classic 21
    at 3
    py_consumer n2 "naïve-消费者-2" "$group" "$topic" classic 12
    at 8
    capture "$b"
    wait_clients
    at 25
    stop_capture "$a"
    stop_capture "$b"
    merge nonascii
}

# busy_run: DURATION seconds of a producer (RATE records/s) on issue35-busy (12 partitions), a
# Java member for the whole run and a new librdkafka member every 15 s that stays 45 s (about
# three at a time: a rebalance every few seconds). Written to BUSY_OUT, not to samples/.
busy_run() {
    local dur=${DURATION:-600} topic=issue35-busy group=issue35-busy-group k=0 t
    local OUT=${BUSY_OUT:-/tmp}
    mkdir -p "$OUT/logs"
    start_run busy
    topics "$topic:12" "group:$group"
    capture issue35-busy.pcap
    T0_NS=$(now_ns)
    py_producer p issue35-busy-producer "$topic" "$dur"
    java_consumer j1-java issue35-busy-j1 "$group" "$topic" classic "$dur"
    for ((t = 5; t + 45 <= dur; t += 15)); do
        at "$t"
        k=$((k + 1))
        py_consumer "c$k" "issue35-busy-c$k" "$group" "$topic" classic 45
    done
    wait_clients
    stop_capture issue35-busy.pcap
    merge busy
    mv "$OUT/logs/issue35-busy.ndjson" "$OUT/issue35-busy.ndjson"
}

run_one() {
    case $1 in
    busy) busy_run ;;
    classic) group_run classic classic ;;
    kip848) group_run kip848 consumer ;;
    streams) streams_run ;;
    unnamed) unnamed_run ;;
    nonascii) nonascii_run ;;
    *) echo "unknown run: $1 (--list lists them)" >&2; exit 2 ;;
    esac
}

main() {
    if [ "${1:-}" = --list ]; then printf '%s\n' "${RUNS[@]}"; return 0; fi
    [ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
    local wanted=("$@")
    [ ${#wanted[@]} -gt 0 ] || wanted=("${RUNS[@]}")
    trap cleanup EXIT
    mkdir -p "$WORK" "$OUT/logs"
    build_clients
    if [ "${REUSE_CLUSTER:-0}" = 1 ] && "$CLUSTER" status >/dev/null 2>&1; then
        log "reusing the running cluster (REUSE_CLUSTER=1)"
    else
        "$CLUSTER" stop >/dev/null 2>&1 || true
        "$CLUSTER" start --fresh
    fi
    for r in "${wanted[@]}"; do
        log "run $r"
        run_one "$r"
    done
    log "done"
}

main "$@"
