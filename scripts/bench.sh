#!/usr/bin/env bash
# Times kdissect against `cat` (the floor) and tshark on the same big captures, in one run, and
# prints throughput (MB/s), CPU time, peak RSS and the ratios, on each of the three mixes of
# issue 36 (scripts/make-big-capture: bench, metadata, wide; docs/performance.md), each figure
# beside its target. Needs tshark (Debian: tshark) and GNU time.
#
#   scripts/bench.sh [SIZE_MB_BIG] [SIZE_MB_TSHARK]      (defaults: 1024 and 20)
#
# Per mix: captures of 100 MiB, 256 MiB and SIZE_MB_BIG; `cat` (20 runs, one's share), the
# summary, `--stats -q` and `--stats -q --analyses` on each (peak RSS targets: 16 MiB, 16 MiB,
# 64 MiB at 256 MiB and at 1 GiB), `--json` and `-V` on the 100 MiB one; then kdissect and
# tshark side by side on SIZE_MB_TSHARK (tshark reads 0.4-2.5 MB/s on this traffic, so it runs
# on a smaller capture made the same way: same samples, same replication; its CPU time is what
# the ratios compare). Environment: BENCH_MIXES (default "bench metadata wide"), BENCH_DIR
# (default /tmp/kdissect-bench; about 4.2 GB of captures for the three mixes at the defaults:
# delete them after).
set -euo pipefail
cd "$(dirname "$0")/.."
big_mb=${1:-1024}
small_mb=${2:-20}
work=${BENCH_DIR:-/tmp/kdissect-bench}
mixes=${BENCH_MIXES:-bench metadata wide}
mkdir -p "$work"
cargo build --quiet --release
K=target/release/kdissect
# cap MIX MB: the capture of that mix and size (bench-instructions.sh uses the same names).
cap() {
  case $1 in
    bench) echo "$work/cap-$2.big.pcap" ;;
    *) echo "$work/$1-$2.big.pcap" ;;
  esac
}
for mix in $mixes; do
  for mb in 100 256 "$big_mb" "$small_mb"; do
    f=$(cap "$mix" "$mb")
    [ -s "$f" ] || scripts/make-big-capture --mix "$mix" "$f" "$mb" >/dev/null 2>&1
  done
done

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
echo "kdissect $($K --version | awk '{print $2}') at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(tshark --version 2>/dev/null | head -1)"
# tshark decodes Kafka on the broker ports of every mix.
D=(-d tcp.port==9092,kafka -d tcp.port==9093,kafka -d tcp.port==9192,kafka -d tcp.port==9292,kafka)
for mix in $mixes; do
  sizes=$(printf '%s\n' 100 256 "$big_mb" | awk '!seen[$0]++')
  for mb in $sizes; do
    f=$(cap "$mix" "$mb")
    section=$mix/$mb
    # Warm the page cache so that every tool reads from memory.
    cat "$f" > /dev/null
    echo "== $mix mix, $mb MiB capture ($(stat -c %s "$f") bytes)"
    REPS=20 run "cat" "$f" cat "$f"
    run "kdissect (summary)" "$f" $K --no-progress "$f"
    run "kdissect --stats -q" "$f" $K --no-progress --stats -q "$f"
    run "kdissect --stats -q --analyses" "$f" $K --no-progress --stats -q --analyses "$f"
    # The verbose views scale the same way; on the big capture they only add minutes.
    if [ "$mb" = 100 ]; then
      run "kdissect --json" "$f" $K --json "$f"
      run "kdissect -V" "$f" $K --no-progress -V --color never "$f"
    fi
  done
  f=$(cap "$mix" "$small_mb")
  section=$mix/side
  cat "$f" > /dev/null
  echo "== $mix mix, $small_mb MiB capture, kdissect and tshark side by side"
  REPS=20 run "cat" "$f" cat "$f"
  run "kdissect (summary)" "$f" $K --no-progress "$f"
  run "tshark -T fields" "$f" tshark -r "$f" "${D[@]}" -T fields -e frame.number -e kafka.correlation_id -e kafka.api_key -e kafka.api_version -e kafka.error
  run "kdissect --stats -q" "$f" $K --no-progress --stats -q "$f"
  run "tshark -z (stats)" "$f" tshark -r "$f" "${D[@]}" -q -z io,stat,0,kafka
  run "kdissect --json" "$f" $K --json "$f"
  run "tshark -T json" "$f" tshark -r "$f" "${D[@]}" -T json
  run "kdissect -V" "$f" $K --no-progress -V --color never "$f"
  run "tshark -V" "$f" tshark -r "$f" "${D[@]}" -V
done

f=$(cap bench "$big_mb")
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

# rss LABEL ROW TARGET: a peak RSS of this run beside its target, with the verdict.
rss() {
  awk -F'\t' -v l="$1" -v r="$2" -v t="$3" '$1 == r {
      printf "%-58s %8.1f  %s\n", l " (target <= " t ")", $4, ($4 <= t ? "met" : sprintf("missed %.1fx", $4 / t)) }' "$work/results"
}
B=$big_mb
for mix in $mixes; do
  echo "== $mix mix: figures beside their targets (docs/performance.md), this run"
  for mb in $(printf '%s\n' 256 "$B" | awk '!seen[$0]++'); do
    rss "summary peak RSS MiB, $mb MiB" "$mix/$mb/kdissect (summary)" 16
    rss "--stats -q peak RSS MiB, $mb MiB" "$mix/$mb/kdissect --stats -q" 16
    rss "--stats -q --analyses peak RSS MiB, $mb MiB" "$mix/$mb/kdissect --stats -q --analyses" 64
  done
  ratio "summary CPU time, cat / kdissect, 256 MiB" 5 "$mix/256/cat" "$mix/256/kdissect (summary)"
  ratio "--stats -q CPU time, cat / kdissect, 256 MiB" 5 "$mix/256/cat" "$mix/256/kdissect --stats -q"
  ratio "--analyses CPU time, cat / kdissect, 256 MiB" 5 "$mix/256/cat" "$mix/256/kdissect --stats -q --analyses"
  ratio "summary CPU time, tshark -T fields / kdissect, $small_mb MiB" 5 "$mix/side/tshark -T fields" "$mix/side/kdissect (summary)"
  ratio "--stats -q CPU time, tshark -z / kdissect, $small_mb MiB" 5 "$mix/side/tshark -z (stats)" "$mix/side/kdissect --stats -q"
  ratio "--json CPU time, tshark -T json / kdissect, $small_mb MiB" 5 "$mix/side/tshark -T json" "$mix/side/kdissect --json"
  ratio "-V CPU time, tshark -V / kdissect, $small_mb MiB" 5 "$mix/side/tshark -V" "$mix/side/kdissect -V"
  ratio "summary CPU time, $B MiB / 100 MiB (linear: $B/100)" 5 "$mix/$B/kdissect (summary)" "$mix/100/kdissect (summary)"
  ratio "--stats -q CPU time, $B MiB / 100 MiB (linear: $B/100)" 5 "$mix/$B/kdissect --stats -q" "$mix/100/kdissect --stats -q"
  ratio "--analyses CPU time, $B MiB / 100 MiB (linear: $B/100)" 5 "$mix/$B/kdissect --stats -q --analyses" "$mix/100/kdissect --stats -q --analyses"
  ratio "summary peak RSS, $B MiB / 100 MiB (target <= 1.10)" 4 "$mix/$B/kdissect (summary)" "$mix/100/kdissect (summary)"
  ratio "--analyses peak RSS, $B MiB / 100 MiB (target <= 1.10)" 4 "$mix/$B/kdissect --stats -q --analyses" "$mix/100/kdissect --stats -q --analyses"
done
echo "instructions per message per view, the three mixes, beside their targets: scripts/bench-instructions.sh (TSHARK=1 for tshark's)"
