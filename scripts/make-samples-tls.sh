#!/usr/bin/env bash
# Remakes the TLS captures samples/tls-*.pcap, their key logs samples/tls-*.keys (NSS key log
# format) and their plaintext legs samples/tls-CLIENT[-sasl-MECHANISM]-plaintext.pcap, with the clients' logs in
# samples/logs/tls-*.log: Java (kafka-clients 4.4.0), franz-go, kafka-python, kafkajs,
# confluent-kafka and kcat (librdkafka) against a real Apache Kafka 4.4.0 node
# (scripts/kafka-broker: SSL 9093, SASL_SSL 9096, SSL_CHACHA 9097, SSL_ECDSA 9098; PLAINTEXT
# 9092 and SASL_PLAINTEXT 9094 for the plaintext legs).
#
#   sudo scripts/make-samples-tls.sh                 # every scenario
#   sudo scripts/make-samples-tls.sh java-ssl13 ...  # some (names: --list)
#   sudo scripts/make-samples-tls.sh --list
#
# Each leg (the TLS run, then the plaintext run of the same program) gets a freshly formatted
# node with the same cluster id, the same uncaptured setup (topics orders and tls-orders with 3
# partitions; 20 records to orders, so that the producer id manager and __consumer_offsets are
# warm and the captured producer gets producer id 1 in both legs), then tcpdump on the
# namespace's loopback for every listener port while the client runs, stopped a second after
# it exits (0 packets dropped, or the leg fails). Every connection starts with its SYN.
#
# Key logs:
#   - Java: the agent name.neykov:extract-tls-secrets:4.0.0 (Maven Central) on the client JVM
#     (-javaagent:extract-tls-secrets-4.0.0.jar=FILE) gives NAME.keys, and on the broker JVM
#     (KAFKA_JAVA_OPTS) NAME.broker.keys: the same secrets seen from the other end;
#   - franz-go: tls.Config.KeyLogWriter; kafka-python: SSLContext.keylog_filename; kafkajs: each
#     TLS socket's 'keylog' event; kcat (Debian's librdkafka, libssl linked dynamically): the
#     LD_PRELOAD shim scripts/clients/sslkeylog/sslkeylog.c; confluent-kafka (OpenSSL linked
#     statically into the wheel, no key log): the broker's agent alone.
# Special files: tls-java-nokeys.pcap (no key log at all), tls-java-wrongkeys.pcap with
# tls-java-wrongkeys.keys (the secrets of tls-java-ssl13.keys under this capture's ClientHello
# randoms, so every record fails its tag), tls-java-ssl13-dsb.pcapng (editcap
# --inject-secrets tls,tls-java-ssl13.keys: the key log inside the pcapng).
#
# Needs root, Java 17, Maven, Go, Python 3 with confluent-kafka and kafka-python
# (scripts/clients/python/requirements.txt), Node.js with kafkajs, kcat, cc, tcpdump, editcap,
# tshark (the message counts it prints). About a minute a leg.
# Environment: OUT (default samples/), WORK (scratch, default a new directory under /tmp),
# KEEP_WORK=1 to keep it, KAFKA_NS (default kdtls), KAFKA_CLUSTER_ID (default
# a2Rpc3NlY3QtdGxzLTAwMQ, the base64 of "kdissect-tls-001").

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/samples}
WORK=${WORK:-$(mktemp -d /tmp/kdissect-tls.XXXXXX)}
BROKER=$ROOT/scripts/kafka-broker
CLIENTS=$ROOT/scripts/clients
export KAFKA_WORK=$WORK/kafka
export KAFKA_NS=${KAFKA_NS:-kdtls}
export KAFKA_CLUSTER_ID=${KAFKA_CLUSTER_ID:-a2Rpc3NlY3QtdGxzLTAwMQ}
FILTER='tcp port 9092 or tcp port 9093 or tcp port 9094 or tcp portrange 9096-9098'
AGENT_ARTIFACT=name.neykov:extract-tls-secrets:4.0.0
AGENT=${AGENT:-$HOME/.m2/repository/name/neykov/extract-tls-secrets/4.0.0/extract-tls-secrets-4.0.0.jar}
CAPTURE_PID=
BROKER_OPTS=

# name | client | TLS leg: environment (space-separated K=V) and bootstrap | plaintext bootstrap
# ("-" for none) | broker agent (yes/no)
SCENARIOS=(
    "java-ssl13|java|KD_SECURITY=SSL KD_TLS_PROTOCOL=TLSv1.3|127.0.0.1:9093|127.0.0.1:9092|yes"
    "java-ssl12|java|KD_SECURITY=SSL KD_TLS_PROTOCOL=TLSv1.2|127.0.0.1:9093|-|yes"
    "java-sasl-ssl13|java|KD_SECURITY=SASL_SSL KD_SASL=SCRAM-SHA-256 KD_TLS_PROTOCOL=TLSv1.3 KD_TLS_SUITES=TLS_AES_128_GCM_SHA256|127.0.0.1:9096|127.0.0.1:9094|yes"
    "java-sasl-ssl12|java|KD_SECURITY=SASL_SSL KD_SASL=PLAIN KD_TLS_PROTOCOL=TLSv1.2 KD_TLS_SUITES=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256|127.0.0.1:9096|127.0.0.1:9094|yes"
    "java-chacha13|java|KD_SECURITY=SSL KD_TLS_PROTOCOL=TLSv1.3 KD_TLS_SUITES=TLS_CHACHA20_POLY1305_SHA256|127.0.0.1:9093|-|yes"
    "java-keyupdate|java|KD_SECURITY=SSL KD_TLS_PROTOCOL=TLSv1.3 KD_TLS_SUITES=TLS_AES_128_GCM_SHA256 KD_KEYUPDATE=1|127.0.0.1:9093|-|yes"
    "java-nokeys|java|KD_SECURITY=SSL KD_TLS_PROTOCOL=TLSv1.3 KD_NO_KEYLOG=1|127.0.0.1:9093|-|no"
    "java-wrongkeys|java|KD_SECURITY=SSL KD_TLS_PROTOCOL=TLSv1.3 KD_WRONG_KEYS=java-ssl13|127.0.0.1:9093|-|no"
    "franz-chacha13|franz|KD_SECURITY=SSL KD_TLS_MAX=1.3|127.0.0.1:9097|127.0.0.1:9092|no"
    "franz-chacha12|franz|KD_SECURITY=SSL KD_TLS_MAX=1.2 KD_TLS_SUITES=TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256|127.0.0.1:9097|-|no"
    "franz-ecdsa12|franz|KD_SECURITY=SSL KD_TLS_MAX=1.2 KD_TLS_SUITES=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256|127.0.0.1:9098|-|no"
    "kafka-python-aes128-13|kafka-python|KD_SECURITY=SSL KD_TLS13_SUITES=TLS_AES_128_GCM_SHA256|127.0.0.1:9093|127.0.0.1:9092|no"
    "kafka-python-ecdsa-chacha12|kafka-python|KD_SECURITY=SSL KD_TLS_MAX=1.2 KD_TLS12_CIPHERS=ECDHE-ECDSA-CHACHA20-POLY1305|127.0.0.1:9098|-|no"
    "kafkajs-aes128-12|kafkajs|KD_SECURITY=SSL KD_TLS_MAX=TLSv1.2 KD_CIPHERS=ECDHE-RSA-AES128-GCM-SHA256|127.0.0.1:9093|127.0.0.1:9092|no"
    "kafkajs-ecdsa-aes256-12|kafkajs|KD_SECURITY=SSL KD_TLS_MAX=TLSv1.2 KD_CIPHERS=ECDHE-ECDSA-AES256-GCM-SHA384|127.0.0.1:9098|-|no"
    "kafkajs-chacha13|kafkajs|KD_SECURITY=SSL KD_TLS_MAX=TLSv1.3 KD_CIPHERS=TLS_CHACHA20_POLY1305_SHA256|127.0.0.1:9093|-|no"
    # Resumption: franz-go offers its cached session (pre_shared_key) on every later connection,
    # here to a broker keeping sessions in its own cache instead of stateless tickets. The
    # broker (JSSE) declines it all the same, as it does with stateless tickets and for Java.
    "franz-psk13|franz|KD_SECURITY=SSL KD_TLS_MAX=1.3 KD_BROKER_STATEFUL=1|127.0.0.1:9093|-|yes"
    "kcat-ssl13|kcat|KD_SECURITY=SSL|127.0.0.1:9093|127.0.0.1:9092|no"
    # TLS 1.2 CBC suites (MAC-then-encrypt, explicit IV): HMAC-SHA256, HMAC-SHA1, HMAC-SHA384.
    # Their plaintext legs are those of the same programs above.
    "java-cbc12|java|KD_SECURITY=SSL KD_TLS_PROTOCOL=TLSv1.2 KD_TLS_SUITES=TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256|127.0.0.1:9093|-|yes"
    "franz-cbc12|franz|KD_SECURITY=SSL KD_TLS_MAX=1.2 KD_TLS_SUITES=TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA|127.0.0.1:9093|-|no"
    "kafka-python-cbc12|kafka-python|KD_SECURITY=SSL KD_TLS_MAX=1.2 KD_TLS12_CIPHERS=ECDHE-RSA-AES256-SHA384|127.0.0.1:9093|-|no"
    "confluent-broker-keys|confluent|KD_SECURITY=SSL|127.0.0.1:9093|127.0.0.1:9092|yes"
)

log() { printf '==> %s\n' "$*" >&2; }

cleanup() {
    set +e
    if [ -n "$CAPTURE_PID" ]; then kill -INT "$CAPTURE_PID" 2>/dev/null; wait "$CAPTURE_PID" 2>/dev/null; fi
    "$BROKER" stop >/dev/null 2>&1
    if [ "${KEEP_WORK:-0}" != 1 ]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}

install_clients() {
    [ -f "$AGENT" ] || mvn -q -B dependency:get -Dartifact=$AGENT_ARTIFACT -Dtransitive=false
    [ -f "$AGENT" ] || { log "agent $AGENT_ARTIFACT not found at $AGENT"; exit 1; }
    log "building the clients"
    (cd "$CLIENTS/java" && mvn -q -B package)
    CP="$CLIENTS/java/target/kdissect-java-clients-1.jar:$CLIENTS/java/target/lib/*"
    mkdir -p "$WORK/bin"
    (cd "$CLIENTS/go-franz" && go build -o "$WORK/bin/go-franz" .)
    cc -shared -fPIC -O2 -o "$WORK/bin/sslkeylog.so" "$CLIENTS/sslkeylog/sslkeylog.c" -ldl
    if [ ! -x "$WORK/venv/bin/python" ]; then
        python3 -m venv "$WORK/venv"
        "$WORK/venv/bin/pip" install -q -r "$CLIENTS/python/requirements.txt"
    fi
    PY=$WORK/venv/bin/python
    if [ ! -d "$WORK/node/node_modules/kafkajs" ]; then
        mkdir -p "$WORK/node"
        cp "$CLIENTS/node/package.json" "$WORK/node/"
        (cd "$WORK/node" && npm install -q --no-audit --no-fund >/dev/null)
    fi
    # JSSE: a KeyUpdate after every 2^14 bytes of AES-GCM (a Security property: it must come
    # from a java.security file, a plain -D does nothing).
    printf 'jdk.tls.keyLimits=AES/GCM/NoPadding KeyUpdate 2^14, ChaCha20-Poly1305 KeyUpdate 2^14\n' \
        >"$WORK/keyupdate.security"
}

in_ns() { ip netns exec "$KAFKA_NS" "$@"; }

setup_java() {
    in_ns java -Xmx256m -cp "$CP" kdissect.clients.Main "$@"
}

# fresh_broker BROKER-KEYLOG|"" KEYUPDATE(0/1): a new node, set up as every leg needs it.
fresh_broker() {
    local keys=$1 ku=$2 opts=""
    [ -z "$keys" ] || opts="-javaagent:$AGENT=$keys"
    [ "$ku" = 0 ] || opts="$opts -Djava.security.properties=$WORK/keyupdate.security"
    [ -z "${BROKER_OPTS:-}" ] || opts="$opts $BROKER_OPTS"
    "$BROKER" stop >/dev/null 2>&1 || true
    KAFKA_JAVA_OPTS=$opts "$BROKER" start --fresh
    {
        setup_java setup-topics orders:3 tls-orders:3
        setup_java setup-produce none
        setup_java setup-warm-groups
    } >>"$WORK/setup.log" 2>&1 || { tail -n 30 "$WORK/setup.log" >&2; return 1; }
}

start_capture() {
    local file=$1 err=$WORK/tcpdump.err
    rm -f "$err"
    # ip netns exec directly (not the in_ns function, whose subshell would take the signal).
    ip netns exec "$KAFKA_NS" tcpdump -Z root -U --immediate-mode -B 16384 -w "$file" -i lo "$FILTER" 2>"$err" &
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

# run_client CLIENT BOOTSTRAP KEYLOG|"" KEYUPDATE ENV...: one run of the scenario's program.
run_client() {
    local client=$1 bootstrap=$2 keys=$3 ku=$4
    shift 4
    local ca=$KAFKA_WORK/config/ca.pem
    local env=(env "$@" KD_BOOTSTRAP="$bootstrap" KD_CA="$ca"
        KD_TRUSTSTORE="$KAFKA_WORK/config/client.truststore.p12" KD_TRUSTSTORE_PASSWORD=kdissect-test)
    case $client in
    java)
        local jopts=(-Xmx512m)
        [ -z "$keys" ] || jopts+=("-javaagent:$AGENT=$keys")
        [ "$ku" = 0 ] || jopts+=("-Djava.security.properties=$WORK/keyupdate.security")
        in_ns timeout 120 "${env[@]}" java "${jopts[@]}" -cp "$CP" kdissect.clients.Main tls-run tls ;;
    franz)
        in_ns timeout 120 "${env[@]}" KD_KEYLOG="$keys" "$WORK/bin/go-franz" "$bootstrap" tls ;;
    kafka-python)
        local conf=()
        for kv in "$@"; do
            case $kv in KD_TLS13_SUITES=*)
                printf 'openssl_conf = openssl_init\n[openssl_init]\nssl_conf = ssl_sect\n[ssl_sect]\nsystem_default = sd\n[sd]\nCiphersuites = %s\n' \
                    "${kv#*=}" >"$WORK/openssl-tls13.cnf"
                conf=(OPENSSL_CONF="$WORK/openssl-tls13.cnf") ;;
            esac
        done
        in_ns timeout 120 "${env[@]}" "${conf[@]}" KD_KEYLOG="$keys" "$PY" -u "$CLIENTS/python/kafka_python_tls.py" "$bootstrap" ;;
    kafkajs)
        in_ns timeout 120 "${env[@]}" NODE_PATH="$WORK/node/node_modules" KD_KEYLOG="$keys" \
            node "$CLIENTS/node/kafkajs_tls.js" "$bootstrap" ;;
    confluent)
        in_ns timeout 120 "${env[@]}" "$PY" -u "$CLIENTS/python/confluent_tls.py" "$bootstrap" ;;
    kcat)
        kcat_run "$bootstrap" "$keys" "$@" ;;
    esac
}

# kcat (librdkafka 2.0.2 from Debian): 6 messages key:value to tls-orders partition 1, then
# read partition 1 from the beginning to its end. Over TLS the preloaded shim writes the key log.
kcat_run() {
    local bootstrap=$1 keys=$2 sec=() pre=()
    shift 2
    case " $* " in *" KD_SECURITY=SSL "*)
        sec=(-X security.protocol=SSL -X ssl.ca.location="$KAFKA_WORK/config/ca.pem")
        pre=(SSLKEYLOGFILE="$keys" LD_PRELOAD="$WORK/bin/sslkeylog.so") ;;
    esac
    echo "kcat $(kcat -V 2>&1 | head -n 1)"
    for i in 0 1 2 3 4 5; do printf 'kcat-key-%d:kcat tls order %d\n' $((i % 2)) "$i"; done |
        in_ns timeout 60 env "${pre[@]}" kcat -b "$bootstrap" "${sec[@]}" -X client.id=kcat-tls-producer \
            -d protocol -P -t tls-orders -p 1 -K:
    in_ns timeout 60 env "${pre[@]}" kcat -b "$bootstrap" "${sec[@]}" -X client.id=kcat-tls-consumer \
        -d protocol -C -t tls-orders -p 1 -o beginning -e -f 'RESULT {"offset":%o,"key":"%k","value":"%s"}\n'
}

# tshark_count FILE KEYS|"" : the Kafka PDUs tshark finds, decrypting with KEYS.
tshark_count() {
    local o=()
    [ -z "$2" ] || o=(-o "tls.keylog_file:$2")
    # AMS (Beckhoff ADS) claims TCP port 48898 and EtherNet/IP port 44818, which can be a
    # client's ephemeral port.
    tshark -r "$1" --disable-protocol ams --disable-protocol enip "${o[@]}" -d tls.port==9093,kafka -d tls.port==9096,kafka -d tls.port==9097,kafka \
        -d tls.port==9098,kafka -d tcp.port==9092,kafka -d tcp.port==9094,kafka -Y kafka -T fields \
        -E occurrence=a -E aggregator=, -e kafka.correlation_id 2>/dev/null | tr ',' '\n' | grep -c . || true
}

# client_random_keys CAPTURE KEYS > file: CLIENT_RANDOM lines for the agent's TLS 1.2 lines
# "RSA Session-ID:S Master-Key:M" (the JDK's TLS 1.2 sessions come out only in that form): each
# session id S is matched with the ServerHello that carries it, and that connection's ClientHello
# random gives the line "CLIENT_RANDOM <random> M", one per connection.
client_random_keys() {
    tshark -r "$1" --disable-protocol ams --disable-protocol enip -Y 'tls.handshake.type == 1 or tls.handshake.type == 2' -T fields \
        -E occurrence=f -e tcp.stream -e tls.handshake.type -e tls.handshake.random -e tls.handshake.session_id \
        2>/dev/null | python3 -c '
import sys
master = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 3 and f[0] == "RSA" and f[1].startswith("Session-ID:") and f[2].startswith("Master-Key:"):
        master[f[1][11:].upper()] = f[2][11:].upper()
hello = {}
for line in sys.stdin:
    f = line.rstrip("\n").split("\t") + ["", "", "", ""]
    stream, kind, rnd, sid = f[0], f[1], f[2].upper(), f[3].upper()
    if kind == "1":
        hello[stream] = rnd
    elif kind == "2" and stream in hello and sid in master:
        print("CLIENT_RANDOM", hello[stream], master[sid])
' "$2"
}

# client_randoms FILE: the ClientHello randoms of a capture, one hex string a line, in order.
client_randoms() {
    tshark -r "$1" -Y 'tls.handshake.type == 1' -T fields -e tls.handshake.random 2>/dev/null | tr -d ':'
}

# wrong_keys CAPTURE GOOD-KEYS > file: GOOD-KEYS' secrets, connection by connection, under the
# ClientHello randoms of CAPTURE (a key log that names every connection but holds another
# run's secrets, so every record fails authentication).
wrong_keys() {
    local randoms
    mapfile -t randoms < <(client_randoms "$1")
    awk -v list="${randoms[*]}" 'BEGIN { n = split(list, r, " ") }
        /^#/ || NF < 3 { next }
        { if (!($2 in idx)) { idx[$2] = ++k }; i = idx[$2]; if (i <= n) print $1, r[i], $3 }' "$2"
}

# keep_log FILE CLIENT BOOTSTRAP ENV...: the program's output, minus stack frames, as
# samples/logs/FILE.log.
keep_log() {
    local file=$1 client=$2 bootstrap=$3
    shift 3
    {
        printf '# %s.pcap: the client program'"'"'s output (%s, %s)\n' "$file" "$client" "$bootstrap"
        printf '# environment: %s\n' "${*:-none}"
        grep -v -E '^\s+at |^\s+\.\.\. [0-9]+ more|Give up sending telemetry request|from least loaded node selection' \
            "$WORK/$file.log" | sed "s|$WORK|\$WORK|g" |
            awk '{ if (length($0) > 3000) print substr($0, 1, 3000) " ... [cut]"; else print }'
    } >"$OUT/logs/$file.log"
}

# capture_leg FILE CLIENT BOOTSTRAP KEYS BROKER-KEYS KEYUPDATE ENV...: one captured run on a
# fresh node.
capture_leg() {
    local file=$1 client=$2 bootstrap=$3 keys=$4 bkeys=$5 ku=$6
    shift 6
    rm -f "$WORK/$file.keys" "$WORK/$file.broker.keys"
    log "$file (client $client, $bootstrap)"
    fresh_broker "$bkeys" "$ku"
    start_capture "$WORK/$file.pcap"
    if ! run_client "$client" "$bootstrap" "$keys" "$ku" "$@" >"$WORK/$file.log" 2>&1; then
        tail -n 30 "$WORK/$file.log" >&2
        stop_capture || true
        return 1
    fi
    stop_capture
    "$BROKER" stop >/dev/null
    cp "$WORK/$file.pcap" "$OUT/$file.pcap"
    keep_log "$file" "$client" "$bootstrap" "$@"
}

# run_tls NAME CLIENT BOOTSTRAP AGENT ENV...: the TLS leg and its key logs.
run_tls() {
    local name=$1 client=$2 bootstrap=$3 agent=$4 file=tls-$1
    shift 4
    local ku=0 keys=$WORK/$file.keys bkeys="" sec=() kv
    for kv in "$@"; do
        case $kv in
        KD_KEYUPDATE=1) ku=1 ;;
        KD_NO_KEYLOG=1) keys="" ;;
        KD_WRONG_KEYS=*) ;;
        # The broker keeps TLS sessions in its own cache instead of stateless tickets.
        KD_BROKER_STATEFUL=1) BROKER_OPTS=-Djdk.tls.server.enableSessionTicketExtension=false ;;
        *) sec+=("$kv") ;;
        esac
    done
    [ "$agent" != yes ] || bkeys=$WORK/$file.broker.keys
    [ "$client" != confluent ] || keys="" # the wheel's librdkafka writes no key log
    capture_leg "$file" "$client" "$bootstrap" "$keys" "$bkeys" "$ku" "${sec[@]}"
    BROKER_OPTS=
    rm -f "$OUT/$file.keys" "$OUT/$file.broker.keys"
    [ -z "$keys" ] || cp "$keys" "$OUT/$file.keys"
    [ -z "$bkeys" ] || cp "$bkeys" "$OUT/$file.broker.keys"
    case " $* " in *" KD_TLS_PROTOCOL=TLSv1.2 "*)
        [ "$client" != java ] || [ -z "$keys" ] ||
            client_random_keys "$OUT/$file.pcap" "$OUT/$file.keys" >"$OUT/$file.client-random.keys" ;;
    esac
    local k=$OUT/$file.keys
    [ -f "$k" ] || k=$OUT/$file.broker.keys
    [ -f "$k" ] || k=""
    log "$file.pcap: $(stat -c %s "$OUT/$file.pcap") bytes; tshark finds $(tshark_count "$OUT/$file.pcap" "$k") Kafka PDUs with ${k:-no key log}"
}

# The plaintext leg of a SASL_SSL run goes to SASL_PLAINTEXT with the same mechanism.
plain_env() {
    local kv
    for kv in "$@"; do case $kv in KD_SASL=*) echo "$kv" ;; esac; done
}

run_scenario() {
    local spec=$1 name client envs tlsboot plainboot agent
    IFS='|' read -r name client envs tlsboot plainboot agent <<<"$spec"
    local e
    read -r -a e <<<"$envs"
    run_tls "$name" "$client" "$tlsboot" "$agent" "${e[@]}"
    case " $envs " in *" KD_WRONG_KEYS="*)
        local good=${envs##*KD_WRONG_KEYS=}
        good=${good%% *}
        [ -f "$OUT/tls-$good.keys" ] || { log "tls-$good.keys needed first"; return 1; }
        wrong_keys "$OUT/tls-$name.pcap" "$OUT/tls-$good.keys" >"$OUT/tls-$name.keys"
        log "tls-$name.keys: tls-$good.keys' secrets under this capture's randoms; tshark finds $(tshark_count "$OUT/tls-$name.pcap" "$OUT/tls-$name.keys") Kafka PDUs with it" ;;
    esac
    if [ "$name" = java-ssl13 ]; then
        editcap --inject-secrets "tls,$OUT/tls-java-ssl13.keys" "$OUT/tls-java-ssl13.pcap" \
            "$OUT/tls-java-ssl13-dsb.pcapng"
    fi
    [ "$plainboot" = - ] && return 0
    local pe
    pe=$(plain_env "${e[@]}")
    if [ -n "$pe" ]; then
        run_plain "$name" "$client" "$plainboot" KD_SECURITY=SASL_PLAINTEXT "$pe"
    else
        run_plain "$name" "$client" "$plainboot" KD_SECURITY=PLAINTEXT
    fi
}

# run_plain NAME CLIENT BOOTSTRAP ENV...: the plaintext leg, with only the given environment:
# tls-CLIENT-plaintext.pcap, or tls-CLIENT-sasl-MECHANISM-plaintext.pcap (one per client and
# SASL mechanism: the workload does not depend on the TLS version or suite).
run_plain() {
    local name=$1 client=$2 bootstrap=$3 file=tls-$2 kv
    shift 3
    for kv in "$@"; do case $kv in KD_SASL=*) file=$file-sasl-$(echo "${kv#*=}" | tr 'A-Z' 'a-z') ;; esac; done
    file=$file-plaintext
    capture_leg "$file" "$client" "$bootstrap" "" "" 0 "$@"
    log "$file.pcap: $(stat -c %s "$OUT/$file.pcap") bytes; tshark finds $(tshark_count "$OUT/$file.pcap" "") Kafka PDUs"
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
    mkdir -p "$WORK" "$OUT/logs"
    install_clients
    for s in "${SCENARIOS[@]}"; do
        if [ ${#wanted[@]} -eq 0 ]; then run_scenario "$s"; continue; fi
        for w in "${wanted[@]}"; do [ "${s%%|*}" = "$w" ] && run_scenario "$s"; done
    done
    log "done"
}

main "$@"; exit
