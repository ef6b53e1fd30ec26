#!/usr/bin/env bash
# Remakes the analysis captures samples/ana-*.pcap with the clients' own figures beside them:
# samples/logs/ana-*.log (the Java program's RESULT lines: records-lag-max and per-partition
# records-lag sampled once a second, positions, commits, assignments, acknowledgement times,
# each stamped "t" in epoch milliseconds, the clock of the capture) and, for the groups,
# samples/logs/ana-*.describe.log (kafka-consumer-groups / kafka-share-groups --describe,
# taken every few seconds during the run, each output between two timestamps).
#
#   sudo scripts/make-samples-analyses.sh                 # every scenario
#   sudo scripts/make-samples-analyses.sh lag ...         # some (names: --list)
#
# Scenarios (Analyses.java has the workloads):
#   lag               a steady producer (10 records a second to lag-events, 3 partitions) and
#                     a classic-group consumer (lag-group) that keeps up for 8 s, falls behind
#                     for 15 s (max.poll.records=10, 3 s asleep after each poll), then catches
#                     up; the producer stops 32 s after the first records are consumed;
#                     commitSync once a second.
#   rebalance-classic members in group rb-classic on rb-events (6 partitions, 3 records a
#                     second), classic protocol: rb-m1 joins; 4 s after it has partitions rb-m2
#                     joins; 4 s after rb-m2 has partitions rb-m3 starts in its own JVM; 5 s
#                     after rb-m3 has partitions it is killed with SIGKILL (no LeaveGroup: the
#                     group waits out its 6 s session timeout); 12 s later rb-m2 leaves
#                     cleanly; 8 s later rb-m1 leaves. The steps wait for the group, not the
#                     clock, so they hold on a loaded machine.
#   rebalance-kip848  the same with group.protocol=consumer (group rb-kip848); the node runs
#                     with group.consumer.session.timeout.ms=6000 and a 2 s heartbeat
#                     interval, so that the killed member is fenced within the run.
#   share-group       share consumers sh-c1 (0 s), sh-c2 (8 s to 22 s) and sh-c3 (14 s) in
#                     share group share-jobs-group on share-jobs (2 partitions, 10 records a
#                     second), explicit acknowledgement with RELEASE and REJECT.
#   slow-acks         producers slow-acks-all (acks=all, idempotent) and slow-acks-one
#                     (acks=1), 5 records a second each for 20 s to partition 0 of slow-acks
#                     (replicas 1, 2, 3, leader 1) on scripts/kafka-cluster (a controller and
#                     three brokers), whose followers 2 and 3 fetch with
#                     replica.fetch.min.bytes=1048576 and replica.fetch.wait.max.ms=400: the
#                     leader holds every acks=all answer until both followers' next fetch,
#                     up to about 400 ms, while acks=1 answers at once. The capture holds
#                     broker 1's port (clients and the followers' Fetch requests).
#
# The single-node scenarios run on scripts/kafka-broker (a fresh node each, cluster id
# a2Rpc3NlY3QtYW5hLTAwMQ); tcpdump captures PLAINTEXT 9092 only. The admin tool talks to the
# SSL listener 9093, which is not captured, so the capture holds only the workload's traffic.
#
# Needs root, Java 17, Maven, tcpdump, tshark (the message counts it prints).
# Environment: OUT (default samples/), WORK (scratch, default a new directory under /tmp),
# KEEP_WORK=1 to keep it, KAFKA_NS (default kdana), KAFKA_CLUSTER_NS (default kdanac).

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/samples}
WORK=${WORK:-$(mktemp -d /tmp/kdissect-ana.XXXXXX)}
BROKER=$ROOT/scripts/kafka-broker
CLUSTER=$ROOT/scripts/kafka-cluster
CLIENTS=$ROOT/scripts/clients
export KAFKA_WORK=$WORK/kafka
export KAFKA_NS=${KAFKA_NS:-kdana}
export KAFKA_CLUSTER_WORK=$WORK/cluster
export KAFKA_CLUSTER_NS=${KAFKA_CLUSTER_NS:-kdanac}
export KAFKA_CLUSTER_ID=${KAFKA_CLUSTER_ID:-a2Rpc3NlY3QtYW5hLTAwMQ}
# KIP-848 and share groups: a killed member is fenced after 6 s, not the default 45 s.
export KAFKA_EXTRA_CONFIG="group.consumer.min.session.timeout.ms=6000
group.consumer.session.timeout.ms=6000
group.consumer.min.heartbeat.interval.ms=1000
group.consumer.heartbeat.interval.ms=2000
group.share.min.session.timeout.ms=6000
group.share.session.timeout.ms=6000
group.share.min.heartbeat.interval.ms=1000
group.share.heartbeat.interval.ms=2000"
CAPTURE_PID=
DESCRIBE_PID=
NS=$KAFKA_NS
SCENARIOS=(lag rebalance-classic rebalance-kip848 share-group slow-acks)

log() { printf '==> %s\n' "$*" >&2; }

cleanup() {
    set +e
    [ -z "$DESCRIBE_PID" ] || kill "$DESCRIBE_PID" 2>/dev/null
    if [ -n "$CAPTURE_PID" ]; then kill -INT "$CAPTURE_PID" 2>/dev/null; wait "$CAPTURE_PID" 2>/dev/null; fi
    "$BROKER" stop >/dev/null 2>&1
    "$CLUSTER" stop >/dev/null 2>&1
    if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}

# build_clients: the Java programs, built in a copy under $WORK (so that a run of another
# sample script using scripts/clients/java/target is not disturbed).
build_clients() {
    log "building the clients"
    rm -rf "$WORK/java"
    mkdir -p "$WORK/java"
    cp -r "$CLIENTS/java/pom.xml" "$CLIENTS/java/src" "$WORK/java/"
    (cd "$WORK/java" && mvn -q -B package)
    CP="$WORK/java/target/kdissect-java-clients-1.jar:$WORK/java/target/lib/*"
}

in_ns() { ip netns exec "$NS" "$@"; }

java_main() { in_ns java -Xmx384m -cp "$CP" kdissect.clients.Main "$@"; }

fresh_broker() {
    "$BROKER" stop >/dev/null 2>&1 || true
    "$BROKER" start --fresh
    NS=$KAFKA_NS
    java_main setup-warm-groups >>"$WORK/setup.log" 2>&1 || { tail -n 30 "$WORK/setup.log" >&2; return 1; }
}

# slow_cluster: a fresh cluster whose followers 2 and 3 wait up to 400 ms for 1 MiB.
slow_cluster() {
    "$CLUSTER" stop >/dev/null 2>&1 || true
    local slow="replica.fetch.min.bytes=1048576
replica.fetch.wait.max.ms=400"
    KAFKA_CLUSTER_EXTRA_CONFIG_2=$slow KAFKA_CLUSTER_EXTRA_CONFIG_3=$slow "$CLUSTER" start --fresh
    NS=$KAFKA_CLUSTER_NS
}

start_capture() {
    local file=$1 filter=$2 err=$WORK/tcpdump.err
    rm -f "$err"
    ip netns exec "$NS" tcpdump -Z root -U --immediate-mode -B 16384 -w "$file" -i lo "$filter" 2>"$err" &
    CAPTURE_PID=$!
    for _ in $(seq 100); do grep -q "listening on" "$err" && return 0; sleep 0.1; done
    cat "$err" >&2
    return 1
}

stop_capture() {
    sleep 1
    kill -INT "$CAPTURE_PID"
    wait "$CAPTURE_PID" || true
    CAPTURE_PID=
    grep -h packets "$WORK/tcpdump.err" >&2
    grep -q '^0 packets dropped by kernel' "$WORK/tcpdump.err" || { log "tcpdump dropped packets"; return 1; }
}

now_ms() { date +%s%3N; }

# describer KIND GROUP EVERY-S OUT [MEMBERS]: the admin tool's --describe of GROUP every EVERY-S
# seconds (--offsets; with MEMBERS=members every other round --members --verbose) over the
# uncaptured SSL listener, until stop_describer. KIND is consumer (kafka-consumer-groups,
# ConsumerGroupCommand) or share (kafka-share-groups, ShareGroupCommand); the tool runs round
# after round in one JVM (Main describe-loop), so each answer is dated within a few ms.
describer() {
    local kind=$1 group=$2 every=$3 out=$4 members=${5:-no}
    rm -f "$WORK/stop-describe" "$out"
    printf 'security.protocol=SSL\nssl.truststore.type=PKCS12\nssl.truststore.location=%s\nssl.truststore.password=kdissect-test\n' \
        "$KAFKA_WORK/config/client.truststore.p12" >"$WORK/admin-ssl.properties"
    # The tool's own log: warnings only (the client programs' log4j2.properties logs every request).
    printf 'status = warn\nappender.err.type = Console\nappender.err.name = err\nappender.err.target = SYSTEM_OUT\nappender.err.layout.type = PatternLayout\nappender.err.layout.pattern = %%d{HH:mm:ss.SSS} %%-5p %%c{1}: %%m%%n\nrootLogger.level = WARN\nrootLogger.appenderRef.err.ref = err\n' \
        >"$WORK/admin-log4j2.properties"
    local common=(--bootstrap-server 127.0.0.1:9093 --command-config "$WORK/admin-ssl.properties" --group "$group")
    local rounds=("${common[@]}" --describe --offsets)
    [ "$members" != members ] || rounds+=(+ "${common[@]}" --describe --members --verbose)
    in_ns java -Xmx192m -Dlog4j2.configurationFile="$WORK/admin-log4j2.properties" -cp "$CP" \
        kdissect.clients.Main describe-loop "$kind" $((every * 1000)) "$WORK/stop-describe" "${rounds[@]}" 2>&1 |
        grep -v -E 'SLF4J|^\s*$|^\s+at |^\s+\.\.\. [0-9]+ more|^java\.util\.concurrent\.ExecutionException|^Caused by' >"$out" || true
}

# stop_describer: lets the running --describe finish, then ends the loop.
stop_describer() {
    touch "$WORK/stop-describe"
    wait "$DESCRIBE_PID" 2>/dev/null || true
    DESCRIBE_PID=
}

# keep_logs NAME: the program's RESULT lines and warnings (not the clients' INFO chatter), and
# the admin tool's output.
keep_logs() {
    local name=$1
    {
        printf '# ana-%s.pcap: the Java program'"'"'s RESULT lines (Analyses.java), "t" = epoch ms\n' "$name"
        # A metric without a sample yet is NaN, which JSON cannot hold: null.
        grep -E '^RESULT |WARN|ERROR' "$WORK/$name.log" | grep -v -E 'Give up sending telemetry|from least loaded node' |
            sed -E 's/:(-?Infinity|NaN)([,}])/:null\2/g' || true
    } >"$OUT/logs/ana-$name.log"
    if [ -f "$WORK/$name.describe.log" ]; then
        {
            printf '# ana-%s.pcap: the admin tool'"'"'s --describe during the run (SSL listener 9093, not captured)\n' "$name"
            cat "$WORK/$name.describe.log"
        } >"$OUT/logs/ana-$name.describe.log"
    fi
}

tshark_count() {
    tshark -r "$1" -d tcp.port==9092,kafka -Y kafka -T fields -E occurrence=a -E aggregator=, \
        -e kafka.correlation_id 2>/dev/null | tr ',' '\n' | grep -c . || true
}

finish() {
    local name=$1
    stop_capture
    cp "$WORK/$name.pcap" "$OUT/ana-$name.pcap"
    keep_logs "$name"
    log "ana-$name.pcap: $(stat -c %s "$OUT/ana-$name.pcap") bytes; tshark finds $(tshark_count "$OUT/ana-$name.pcap") Kafka PDUs"
}

run_lag() {
    fresh_broker
    java_main setup-topics lag-events:3 >>"$WORK/setup.log" 2>&1
    start_capture "$WORK/lag.pcap" 'tcp port 9092'
    describer consumer lag-group 2 "$WORK/lag.describe.log" &
    DESCRIBE_PID=$!
    in_ns env KD_RATE=10 KD_PRODUCE_S=32 KD_FAST_S=8 KD_SLOW_S=15 KD_SLOW_SLEEP_MS=3000 \
        timeout 180 java -Xmx384m -cp "$CP" kdissect.clients.Main lag >"$WORK/lag.log" 2>&1
    stop_describer
    finish lag
    "$BROKER" stop >/dev/null
}

# wait_line FILE PATTERN SECONDS: until a line of FILE matches the extended regex PATTERN.
wait_line() {
    local i
    for i in $(seq $(($3 * 10))); do
        grep -q -E "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    log "timed out waiting for /$2/ in $1"
    return 1
}

# run_rebalance NAME PROTOCOL GROUP: the program's steps (Analyses.rebalance) follow the group;
# the script starts rb-m3 when the program asks for it, kills it (SIGKILL, no LeaveGroup) 5 s
# after it has partitions, and 12 s later (6 s session timeout, then the rebalance) tells
# rb-m2 to leave.
run_rebalance() {
    local name=$1 protocol=$2 group=$3 sig=$WORK/$1.signals
    fresh_broker
    java_main setup-topics rb-events:6 >>"$WORK/setup.log" 2>&1
    rm -rf "$sig"
    mkdir -p "$sig"
    start_capture "$WORK/$name.pcap" 'tcp port 9092'
    describer consumer "$group" 2 "$WORK/$name.describe.log" members &
    DESCRIBE_PID=$!
    in_ns env KD_SIGNAL_DIR="$sig" KD_RATE=3 timeout 300 java -Xmx384m -cp "$CP" kdissect.clients.Main rebalance "$protocol" \
        >"$WORK/$name.log" 2>&1 &
    local main=$!
    wait_line "$WORK/$name.log" '"op":"signal"' 200
    # ip netns exec execs the JVM itself: $! is the JVM.
    ip netns exec "$NS" java -Xmx256m -cp "$CP" kdissect.clients.Main rebalance-member "$protocol" \
        >"$WORK/$name.m3.log" 2>&1 &
    local m3=$!
    wait_line "$WORK/$name.m3.log" '"op":"assigned".*"assignment":\["' 120
    sleep 5
    echo "RESULT {\"op\":\"killed\",\"t\":$(now_ms),\"member\":\"rb-m3\",\"signal\":\"KILL\"}" >>"$WORK/$name.m3.log"
    kill -KILL "$m3"
    wait "$m3" 2>/dev/null || true
    sleep 12
    touch "$sig/m2-leave"
    wait "$main"
    stop_describer
    cat "$WORK/$name.m3.log" >>"$WORK/$name.log"
    finish "$name"
    "$BROKER" stop >/dev/null
}

run_share() {
    fresh_broker
    java_main setup-topics share-jobs:2 >>"$WORK/setup.log" 2>&1
    java_main setup-share-group share-jobs-group >>"$WORK/setup.log" 2>&1
    start_capture "$WORK/share-group.pcap" 'tcp port 9092'
    describer share share-jobs-group 2 "$WORK/share-group.describe.log" &
    DESCRIBE_PID=$!
    in_ns timeout 180 java -Xmx384m -cp "$CP" kdissect.clients.Main share-group >"$WORK/share-group.log" 2>&1
    stop_describer
    finish share-group
    "$BROKER" stop >/dev/null
}

run_slow_acks() {
    slow_cluster
    in_ns env KD_BOOTSTRAP=127.0.0.2:9092 java -Xmx256m -cp "$CP" kdissect.clients.Main setup-replicated slow-acks \
        >>"$WORK/setup.log" 2>&1
    start_capture "$WORK/slow-acks.pcap" 'tcp port 9092'
    in_ns env KD_BOOTSTRAP=127.0.0.2:9092 KD_PRODUCE_S=20 timeout 180 java -Xmx384m -cp "$CP" \
        kdissect.clients.Main slow-acks >"$WORK/slow-acks.log" 2>&1
    finish slow-acks
    "$CLUSTER" stop >/dev/null
}

run_scenario() {
    log "ana-$1"
    case $1 in
    lag) run_lag ;;
    rebalance-classic) run_rebalance rebalance-classic classic rb-classic ;;
    rebalance-kip848) run_rebalance rebalance-kip848 consumer rb-kip848 ;;
    share-group) run_share ;;
    slow-acks) run_slow_acks ;;
    *) echo "unknown scenario: $1 (--list lists them)" >&2; exit 2 ;;
    esac
}

main() {
    if [ "${1:-}" = --list ]; then printf '%s\n' "${SCENARIOS[@]}"; return 0; fi
    [ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
    local wanted=("$@")
    [ ${#wanted[@]} -gt 0 ] || wanted=("${SCENARIOS[@]}")
    trap cleanup EXIT
    mkdir -p "$WORK" "$OUT/logs"
    build_clients
    for s in "${wanted[@]}"; do run_scenario "$s"; done
    log "done"
}

main "$@"; exit
