#!/usr/bin/env bash
# Times kdissect against `cat` (the floor) and tshark on the same big captures, in one run, and
# prints throughput (MB/s), peak RSS and the ratios. Needs tshark (Debian: tshark) and GNU time.
#
#   scripts/bench.sh [SIZE_MB_BIG] [SIZE_MB_TSHARK]      (defaults: 1024 and 20)
#
# tshark reads 0.4-2.5 MB/s on this traffic, so it runs on a smaller capture made the same way
# (same samples, same replication); its throughput is what the ratios compare.
set -euo pipefail
cd "$(dirname "$0")/.."
big_mb=${1:-1024}
small_mb=${2:-20}
work=${BENCH_DIR:-/tmp/kdissect-bench}
mkdir -p "$work"
cargo build --quiet --release
K=target/release/kdissect
for mb in 100 256 "$big_mb" "$small_mb"; do
  f="$work/cap-$mb.big.pcap"
  [ -s "$f" ] || scripts/make-big-capture "$f" "$mb" >/dev/null 2>&1
done
# Warm the page cache so that every tool reads from memory.
cat "$work"/cap-*.big.pcap > /dev/null

# run NAME FILE CMD...: prints "NAME  MB/s  seconds  peakRSS(MiB)". Wall time from the
# shell's microsecond clock (GNU time rounds to 10 ms, too coarse for `cat`), peak RSS from
# GNU time. kdissect exits 1 on damaged traffic (the big captures replay real broker bugs), so
# exit statuses are not checked here.
run() {
  local name=$1 file=$2; shift 2
  local size; size=$(stat -c %s "$file")
  # REPS=n runs the command n times in one process tree and reports one run's share: GNU
  # time counts CPU in 10 ms steps, coarser than one `cat` of 256 MiB.
  local reps=${REPS:-1}
  local t0=$EPOCHREALTIME
  /usr/bin/time -o "$work/rss" -f "%M %U %S" \
    sh -c 'n=$1; shift; while [ "$n" -gt 0 ]; do "$@"; n=$((n - 1)); done' _ "$reps" "$@" \
    > /dev/null 2>/dev/null || true
  local t1; t1=$(awk -v a="$t0" -v b="$EPOCHREALTIME" -v r="$reps" 'BEGIN { printf "%.6f", a + (b - a) / r }')
  local rss cpu; read -r rss u s < <(tail -1 "$work/rss"); cpu=$(awk -v u="$u" -v s="$s" -v r="$reps" 'BEGIN { print (u + s) / r }')
  # Columns of $work/results: 2 MB/s, 3 wall seconds, 4 peak RSS MiB, 5 CPU seconds
  # (user + sys, GNU time: 10 ms steps), the figure ratios on a shared machine should use.
  awk -v n="$name" -v s="$size" -v a="$t0" -v b="$t1" -v r="$rss" -v c="$cpu" -v sec="$section" -v out="$work/results" \
    'BEGIN { t = b - a; if (t < 0.0001) t = 0.0001
             printf "%-34s %10.1f MB/s %8.3f s %8.3f s CPU %8.1f MiB\n", n, s/1e6/t, t, c, r/1024
             printf "%s/%s\t%f\t%f\t%f\t%f\n", sec, n, s/1e6/t, t, r/1024, (c > 0 ? c : 0.01) >> out }'
}

# ratio LABEL COLUMN A B: column (2 MB/s, 3 seconds, 4 MiB) of row A over row B, this run.
ratio() {
  awk -F'\t' -v l="$1" -v c="$2" -v a="$3" -v b="$4" '
    { v[$1] = $c }
    END { if (v[b] > 0) printf "%-58s %8.3f\n", l, v[a] / v[b] }' "$work/results"
}
: > "$work/results"
section=
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r)"
echo "kdissect $($K --version | awk '{print $2}'), $(tshark --version 2>/dev/null | head -1)"
for mb in $(printf '%s\n' 100 256 "$big_mb" | awk '!seen[$0]++'); do
  f="$work/cap-$mb.big.pcap"
  section=$mb
  echo "== $mb MiB capture ($(stat -c %s "$f") bytes)"
  REPS=20 run "cat" "$f" cat "$f"
  run "kdissect (summary)" "$f" $K --no-progress "$f"
  run "kdissect --stats -q" "$f" $K --no-progress --stats -q "$f"
  # The verbose views scale the same way; on the big capture they only add minutes.
  if [ "$mb" = 100 ]; then
    run "kdissect --json" "$f" $K --json "$f"
    run "kdissect -V" "$f" $K --no-progress -V --color never "$f"
  fi
done
f="$work/cap-$small_mb.big.pcap"
section=side
echo "== $small_mb MiB capture, kdissect and tshark side by side"
D=(-d tcp.port==9092,kafka)
run "kdissect (summary)" "$f" $K --no-progress "$f"
run "tshark -T fields" "$f" tshark -r "$f" "${D[@]}" -T fields -e frame.number -e kafka.correlation_id -e kafka.api_key -e kafka.api_version -e kafka.error
run "kdissect --stats -q" "$f" $K --no-progress --stats -q "$f"
run "tshark -z (stats)" "$f" tshark -r "$f" "${D[@]}" -q -z io,stat,0,kafka
run "kdissect --json" "$f" $K --json "$f"
run "tshark -T json" "$f" tshark -r "$f" "${D[@]}" -T json
run "kdissect -V" "$f" $K --no-progress -V --color never "$f"
run "tshark -V" "$f" tshark -r "$f" "${D[@]}" -V

f="$work/cap-$big_mb.big.pcap"
echo "== first line and stop: kdissect $big_mb MiB | head -1 (target < 0.2 s), tshark beside it"
for tool in kdissect tshark; do
  t0=$EPOCHREALTIME
  if [ $tool = kdissect ]; then
    # Both stop on the broken pipe, with a status of their own: not a failure here.
    { $K --no-progress "$f" || true; } | head -1 > /dev/null
  else
    { tshark -r "$f" "${D[@]}" 2>/dev/null || true; } | head -1 > /dev/null
  fi
  t1=$EPOCHREALTIME
  awk -v n="$tool | head -1" -v a="$t0" -v b="$t1" 'BEGIN { printf "%-34s %8.3f s\n", n, b - a }'
done

B=$big_mb
echo "== figures beside their targets (docs/performance.md), this run"
ratio "summary CPU time, cat / kdissect, 256 MiB (target >= 0.2)" 5 "256/cat" "256/kdissect (summary)"
ratio "--stats -q CPU time, cat / kdissect, 256 MiB" 5 "256/cat" "256/kdissect --stats -q"
awk -F'\t' '$1 == "256/kdissect (summary)" { printf "%-58s %8.1f\n", "summary peak RSS MiB, 256 MiB (target <= 16)", $4 }
             $1 == "256/kdissect --stats -q" { printf "%-58s %8.1f\n", "--stats -q peak RSS MiB, 256 MiB (target <= 16)", $4 }
             $1 == "256/cat" { printf "%-58s %8.1f\n", "cat peak RSS MiB, 256 MiB", $4 }' "$work/results"
ratio "summary CPU / tshark -T fields CPU, $small_mb MiB (tshark / kdissect)" 5 "side/tshark -T fields" "side/kdissect (summary)"
ratio "--json: tshark -T json CPU / kdissect (target >= 50, in instructions: bench-instructions.sh)" 5 "side/tshark -T json" "side/kdissect --json"
ratio "-V: tshark -V CPU / kdissect (target >= 4, in instructions)" 5 "side/tshark -V" "side/kdissect -V"
echo "instructions per message per view, both mixes, beside their targets: scripts/bench-instructions.sh (TSHARK=1 for tshark's)"
echo "== ratios of the earlier targets"
ratio "summary / tshark -T fields (target >= 100)" 2 "side/kdissect (summary)" "side/tshark -T fields"
ratio "--stats -q / tshark -z (target >= 100)" 2 "side/kdissect --stats -q" "side/tshark -z (stats)"
ratio "--stats -q / tshark -T fields (target >= 100)" 2 "side/kdissect --stats -q" "side/tshark -T fields"
ratio "--json / tshark -T json (target >= 100)" 2 "side/kdissect --json" "side/tshark -T json"
ratio "-V / tshark -V (target >= 100)" 2 "side/kdissect -V" "side/tshark -V"
ratio "summary / cat, $B MiB (target >= 0.125)" 2 "$B/kdissect (summary)" "$B/cat"
ratio "--stats -q / cat, $B MiB (target >= 0.125)" 2 "$B/kdissect --stats -q" "$B/cat"
ratio "summary time, $B MiB / 100 MiB (target 8.5-11.5 at 1024)" 3 "$B/kdissect (summary)" "100/kdissect (summary)"
ratio "--stats -q time, $B MiB / 100 MiB (target 8.5-11.5 at 1024)" 3 "$B/kdissect --stats -q" "100/kdissect --stats -q"
ratio "summary peak RSS, $B MiB / 100 MiB (target <= 1.10)" 4 "$B/kdissect (summary)" "100/kdissect (summary)"
ratio "--stats -q peak RSS, $B MiB / 100 MiB (target <= 1.10)" 4 "$B/kdissect --stats -q" "100/kdissect --stats -q"
