#!/usr/bin/env bash
# Instructions per message, counted by valgrind's callgrind: unlike time, the count does not
# move with the load of a shared machine, so it is the figure to compare between commits.
# Runs kdissect in each view over three captures built from the real samples by
# scripts/make-big-capture, the three mixes of issue 36's targets:
#   bench     every API and version, produce/consume, a group, transactions (the project's
#             bench mix);
#   metadata  admin clients' Metadata and the like, compressed produce and fetch, a running
#             cluster's controller and brokers;
#   wide      thousands of connections open at once (OPEN, default 2500), Metadata answers of
#             200-850 partitions, DescribeTopicPartitions pages, many small Produce and Fetch
#             exchanges of short-lived librdkafka clients (samples/wide-ak44.pcap).
# Prints, per capture and view, instructions per message, the same with the start-up (a run
# over a header-only capture) taken off, instructions per byte, the target of
# docs/performance.md and the verdict (per message, start-up included, against the target).
#
#   scripts/bench-instructions.sh [SIZE_MB]      (default 5: about 30 s a view under callgrind)
#
# Environment: KDISSECT=path (default: cargo build --release), BENCH_DIR (default
# /tmp/kdissect-bench), TSHARK=1 to count tshark too on the same captures (its one-line-a-packet
# fields, its -V tree and its -T json, with the Kafka dissector on the mixes' broker ports:
# minutes under callgrind), BENCH_MIXES (default "bench metadata wide"), BENCH_VIEWS (default
# "summary,--stats -q,--json,-V,--stats -q --analyses,-x", comma-separated: "summary,--stats -q"),
# WIDE_MB (size of the wide mix's capture, default 10: from 10 MB on, 2 500 connections are
# open at once; a 5 MB one reaches 2 039).
# Needs valgrind (Debian: valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-5}
work=${BENCH_DIR:-/tmp/kdissect-bench}
mkdir -p "$work"
command -v valgrind >/dev/null || { echo "bench-instructions: needs valgrind" >&2; exit 2; }
if [ -z "${KDISSECT:-}" ]; then
  cargo build --quiet --release
  K=target/release/kdissect
else
  K=$KDISSECT
fi
IFS=, read -r -a views <<<"${BENCH_VIEWS:-summary,--stats -q,--json,-V,--stats -q --analyses,-x}"
# target VIEW: instructions per message the issue asks for (docs/performance.md), or -.
target() {
  case $1 in
    summary) echo 8000 ;;
    "--stats -q") echo 8000 ;;
    --json) echo 40000 ;;
    -V) echo 120000 ;;
    "--stats -q --analyses") echo 16000 ;;
    *) echo - ;;
  esac
}
# count LOG CMD...: one run under callgrind; prints its instruction count.
count() {
  local log=$1; shift
  command -v "$1" >/dev/null || { echo "bench-instructions: $1 not found" >&2; exit 2; }
  rm -f "$log"
  valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$log" "$@" >/dev/null 2>&1 || true
  local ir; ir=$(grep -o 'Collected : [0-9]*' "$log" 2>/dev/null | awk '{print $3}')
  [ -n "$ir" ] || { echo "bench-instructions: no count (see $log)" >&2; exit 1; }
  echo "$ir"
}
# line NAME IR START MESSAGES BYTES TARGET: one row of figures.
line() {
  awk -v v="$1" -v ir="$2" -v s="$3" -v m="$4" -v b="$5" -v t="$6" \
    'BEGIN { verdict = (t == "-") ? "" : (ir / m <= t ? "met" : sprintf("missed %.1fx", ir / m / t))
             printf "%-34s %14.0f %12.0f %12.0f %10.1f %10s  %s\n", v, ir, ir / m, (ir - s) / m, ir / b, t, verdict }'
}
empty=$work/header-only.pcap
# tshark decodes Kafka on the broker ports of both mixes.
D=(-d tcp.port==9092,kafka -d tcp.port==9093,kafka -d tcp.port==9192,kafka -d tcp.port==9292,kafka)
echo "kdissect $("$K" --version | awk '{print $2}') at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
for mix in ${BENCH_MIXES:-bench metadata wide}; do
  size=$mb
  [ "$mix" = wide ] && size=${WIDE_MB:-10}
  case $mix in
    bench) f="$work/cap-$size.big.pcap" ;;
    *) f="$work/$mix-$size.big.pcap" ;;
  esac
  [ -s "$f" ] || scripts/make-big-capture --mix "$mix" "$f" "$size" >/dev/null 2>&1
  [ -s "$empty" ] || head -c 24 "$f" >"$empty"
  bytes=$(stat -c %s "$f")
  # kdissect exits 1 on the damaged traffic the big captures replay: not a failure here.
  messages=$({ "$K" --json --no-progress "$f" 2>/dev/null || true; } | wc -l)
  echo "== $mix mix: $f, $bytes bytes, $messages messages"
  printf '%-34s %14s %12s %12s %10s %10s  %s\n' view instructions "per message" "net start" "per byte" target verdict
  for view in "${views[@]}"; do
    args=()
    [ "$view" = summary ] || read -r -a args <<<"$view"
    start=$(count "$work/callgrind.log" "$K" --no-progress --color never "${args[@]}" "$empty")
    ir=$(count "$work/callgrind.log" "$K" --no-progress --color never "${args[@]}" "$f")
    line "kdissect $view" "$ir" "$start" "$messages" "$bytes" "$(target "$view")"
  done
  if [ -n "${TSHARK:-}" ]; then
    start=$(count "$work/callgrind.log" tshark -r "$empty" "${D[@]}" -T fields -e frame.number)
    ir=$(count "$work/callgrind.log" tshark -r "$f" "${D[@]}" -T fields -e frame.number \
      -e kafka.correlation_id -e kafka.api_key -e kafka.api_version -e kafka.error)
    line "tshark -T fields" "$ir" "$start" "$messages" "$bytes" -
    start=$(count "$work/callgrind.log" tshark -r "$empty" "${D[@]}" -V)
    ir=$(count "$work/callgrind.log" tshark -r "$f" "${D[@]}" -V)
    line "tshark -V" "$ir" "$start" "$messages" "$bytes" -
    start=$(count "$work/callgrind.log" tshark -r "$empty" "${D[@]}" -T json)
    ir=$(count "$work/callgrind.log" tshark -r "$f" "${D[@]}" -T json)
    line "tshark -T json" "$ir" "$start" "$messages" "$bytes" -
  fi
done
