#!/usr/bin/env bash
# Instructions per message, counted by valgrind's callgrind: unlike time, the count does not
# move with the load of a shared machine, so it is the figure to compare between commits.
# Runs kdissect in each view over one capture built from the real samples
# (scripts/make-big-capture) and prints instructions per message and per byte of input.
#
#   scripts/bench-instructions.sh [SIZE_MB]      (default 5: about 30 s a view under callgrind)
#
# Environment: KDISSECT=path (default: cargo build --release), BENCH_DIR (default
# /tmp/kdissect-bench), TSHARK=1 to count tshark too on the same capture (its one-line-a-packet
# fields and its -V tree, with the Kafka dissector on port 9092: minutes under callgrind).
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
f="$work/cap-$mb.big.pcap"
[ -s "$f" ] || scripts/make-big-capture "$f" "$mb" >/dev/null 2>&1
bytes=$(stat -c %s "$f")
# kdissect exits 1 on the damaged traffic the big captures replay: not a failure here.
messages=$({ "$K" --json --no-progress "$f" 2>/dev/null || true; } | wc -l)
echo "kdissect $("$K" --version | awk '{print $2}') at $(git rev-parse --short HEAD 2>/dev/null || echo '?'); capture $f: $bytes bytes, $messages messages"
printf '%-22s %16s %14s %12s\n' view instructions "per message" "per byte"
# count NAME CMD...: one run under callgrind, one line of figures.
count() {
  local name=$1; shift
  local log=$work/callgrind.log
  valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$log" "$@" >/dev/null 2>&1 || true
  local ir; ir=$(grep -o 'Collected : [0-9]*' "$log" | awk '{print $3}')
  [ -n "$ir" ] || { echo "bench-instructions: no count for $name (see $log)" >&2; exit 1; }
  awk -v v="$name" -v ir="$ir" -v m="$messages" -v b="$bytes" \
    'BEGIN { printf "%-22s %16.0f %14.0f %12.1f\n", v, ir, ir / m, ir / b }'
}
for view in summary -V -x --json "--stats -q"; do
  args=()
  [ "$view" = summary ] || read -r -a args <<<"$view"
  count "kdissect $view" "$K" --no-progress --color never "${args[@]}" "$f"
done
if [ -n "${TSHARK:-}" ]; then
  D=(-d tcp.port==9092,kafka)
  count "tshark -T fields" tshark -r "$f" "${D[@]}" -T fields -e frame.number \
    -e kafka.correlation_id -e kafka.api_key -e kafka.api_version -e kafka.error
  count "tshark -V" tshark -r "$f" "${D[@]}" -V
fi
