#!/usr/bin/env bash
# Peak memory of kdissect on the hostile inputs (scripts/hostile/generate.py, full scale), in
# every view (summary, -V, -x, --json, --stats -q; --hex and --hex --json for the hex inputs),
# against the targets of docs/robustness.md: every run peaks under 128 MiB; an input holding
# a full 100 MiB frame (`everything`) under 256 MiB in every view (each view holds the frame
# whole and may inflate 64 MiB of it); `frames-in-progress` under --max-frames-total and a
# little; `worst-case`, which fills every memory budget at the same moment, under the sum of
# the budgets at their defaults (LIMIT_WORST, computed in docs/robustness.md).
# Prints one line per run (peak RSS, seconds, exit status, limit, verdict), then the worst
# case measured (the `worst-case` capture's largest peak); exits 1 if any run FAILs. Run on
# demand, not in CI: the inputs take ~1.3 GB and a few minutes to make, the runs about ten
# minutes. Memory is measured here, never in a test.
#
#   scripts/bench-memory.sh                  # every input
#   scripts/bench-memory.sh nested-bomb junk # some (names: scripts/hostile/generate.py LIST)
#   scripts/bench-memory.sh --mixes [SIZE_MB...]
#       the other half: peak RSS on ordinary traffic, the three benchmark mixes of issue 36
#       (scripts/make-big-capture --mix bench|metadata|wide, captures in BENCH_CAPTURES, default
#       /tmp/kdissect-bench, made when missing: delete them after) at each size (default 256
#       and 1024 MiB), in the summary, `--stats -q` and `--stats -q --analyses` views, against
#       the targets of docs/performance.md: 16, 16 and 64 MiB (BENCH_MIXES narrows the mixes,
#       BENCH_VIEWS the views: summary stats analyses). Prints peak RSS, CPU seconds (user +
#       sys), exit status, target and verdict per run; exits 1 if any is missed.
#
# Environment:
#   KDISSECT=path     binary to measure (default: `cargo build --release`, target/release/kdissect)
#   BENCH_DIR=dir     where the inputs are made and kept (default /tmp/kdissect-hostile); they
#                     are remade when scripts/hostile/generate.py is newer than they are
#   BENCH_TIMEOUT=s   seconds a run may take before it is stopped and FAILs (default 300)
#   BENCH_VMEM_MB=n   address-space cap per run (ulimit -v, default 6144), so that a blow-up
#                     ends in an allocation failure (FAIL, "capped") instead of taking the machine
#   BENCH_HEX_MIB=n   MiB of hex text piped to --hex for hex-stream (default 64; today ~50 s)
#   BENCH_EVICT_S=s   many-connections must finish within this many seconds (default 30): item 5
#                     of the issue is time, not memory (a linear eviction takes a few seconds)
#   BENCH_VIEWS=list  views to run, space-separated among: summary tree bytes json stats
#                     (default all; hex inputs run in the summary and json views)
# Needs GNU time (/usr/bin/time, Debian package `time`) and Python 3.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
GEN=$ROOT/scripts/hostile/generate.py
DIR=${BENCH_DIR:-/tmp/kdissect-hostile}
TIMEOUT=${BENCH_TIMEOUT:-300}
VMEM=${BENCH_VMEM_MB:-6144}
HEX_MIB=${BENCH_HEX_MIB:-64}
EVICT_S=${BENCH_EVICT_S:-30}
VIEWS=${BENCH_VIEWS:-summary tree bytes json stats}
LIMIT=128
LIMIT_BIG=256
# frames-in-progress: five 100 MiB frames arriving at once are held to --max-frames-total
# (256 MiB), plus the process's own few MiB.
LIMIT_FRAMES=288
# worst-case: the sum of every budget at its default (docs/robustness.md, "Memory model").
LIMIT_WORST=1303
[ -x /usr/bin/time ] || { echo "bench-memory: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }
if [ -z "${KDISSECT:-}" ]; then
  cargo build --quiet --release || exit 2
  K=$ROOT/target/release/kdissect
else
  K=$KDISSECT
fi
# --mixes: peak RSS on the benchmark mixes against the issue's targets, then exit.
if [ "${1:-}" = --mixes ]; then
  shift
  sizes=${*:-256 1024}
  CAPS=${BENCH_CAPTURES:-/tmp/kdissect-bench}
  mkdir -p "$CAPS"
  misses=0
  echo "kdissect: $K ($($K --version 2>/dev/null | awk '{print $2}')) at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  printf '%-9s %6s %-24s %10s %9s %5s %7s  %s\n' mix MiB view "peak MiB" "CPU s" exit target verdict
  for mix in ${BENCH_MIXES:-bench metadata wide}; do
    for mb in $sizes; do
      case $mix in bench) f=$CAPS/cap-$mb.big.pcap ;; *) f=$CAPS/$mix-$mb.big.pcap ;; esac
      [ -s "$f" ] || scripts/make-big-capture --mix "$mix" "$f" "$mb" >/dev/null 2>&1 || exit 2
      for v in ${BENCH_VIEWS:-summary stats analyses}; do
        case $v in
          summary) args=(); limit=16; name=summary ;;
          stats) args=(--stats -q); limit=16; name="--stats -q" ;;
          analyses) args=(--stats -q --analyses); limit=64; name="--stats -q --analyses" ;;
          *) continue ;;
        esac
        /usr/bin/time -o "$DIR.time" -f '%M %U %S %x' "$K" --no-progress --color never "${args[@]}" "$f" >/dev/null 2>&1
        read -r kib u s code < <(tail -1 "$DIR.time")
        mib=$(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }')
        cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
        verdict=$(awk -v m="$mib" -v l="$limit" 'BEGIN { print (m <= l ? "met" : sprintf("missed %.1fx", m / l)) }')
        [ "$verdict" = met ] || misses=$((misses + 1))
        printf '%-9s %6s %-24s %10s %9s %5s %7s  %s\n' "$mix" "$mb" "$name" "$mib" "$cpu" "$code" "$limit" "$verdict"
      done
    done
  done
  rm -f "$DIR.time"
  echo "$misses targets missed"
  [ "$misses" = 0 ]
  exit
fi
mkdir -p "$DIR"
mapfile -t ALL < <(python3 "$GEN" LIST | awk '{print $1 "." $2}')
if [ $# -gt 0 ]; then
  want=()
  for n in "$@"; do
    m=$(printf '%s\n' "${ALL[@]}" | grep -x "$n\.[a-z.]*") || { echo "bench-memory: no input named $n" >&2; exit 2; }
    want+=("$m")
  done
else
  want=("${ALL[@]}")
fi

# Inputs, made once (hex-stream is piped from the generator at each run).
for f in "${want[@]}"; do
  name=${f%%.*}
  [ "$name" = hex-stream ] && continue
  if [ ! -s "$DIR/$f" ] || [ "$GEN" -nt "$DIR/$f" ]; then
    printf 'making %s ... ' "$f" >&2
    python3 "$GEN" "$name" "$DIR/$f.tmp" --scale full && mv "$DIR/$f.tmp" "$DIR/$f" || exit 2
    echo "$(stat -c %s "$DIR/$f") bytes" >&2
  fi
done

fails=0
runs=0
worst=0
worst_run=
echo "kdissect: $K ($($K --version 2>/dev/null | awk '{print $2}'))"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); cap ${VMEM} MiB address space, ${TIMEOUT} s per run"
printf '%-18s %-8s %12s %9s %6s %7s  %s\n' input view "peak MiB" seconds exit limit verdict

# run INPUT VIEW LIMIT_MIB CMD...: one measured run; the command's stdin is $STDIN_FROM
# (a file, or "hex" for the hex stream from the generator).
run() {
  local input=$1 view=$2 limit=$3; shift 3
  local t=$DIR/time.out
  local t0=$EPOCHREALTIME
  if [ "$input" = hex-stream ]; then
    python3 "$GEN" hex-stream - --scale full --mib "$HEX_MIB" 2>/dev/null |
      ( ulimit -v $((VMEM * 1024)); exec timeout -s KILL "$TIMEOUT" /usr/bin/time -o "$t" -f '%M %x' "$@" ) >/dev/null 2>"$DIR/stderr"
  else
    ( ulimit -v $((VMEM * 1024)); exec timeout -s KILL "$TIMEOUT" /usr/bin/time -o "$t" -f '%M %x' "$@" ) </dev/null >/dev/null 2>"$DIR/stderr"
  fi
  local rc=$?
  local t1=$EPOCHREALTIME
  local secs; secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
  # GNU time writes "Command terminated by signal N" / "Command exited with ..." before the
  # figures; the last line is "%M %x". A run killed by timeout leaves no figures.
  local kib=0 code=$rc
  if [ -s "$t" ]; then
    read -r kib code < <(tail -1 "$t")
  fi
  local mib=$((kib / 1024))
  local verdict=PASS why=
  if [ "$rc" = 137 ] && ! grep -q '^[0-9]' "$t" 2>/dev/null; then
    verdict=FAIL; why=" (timeout after ${TIMEOUT} s)"; code=killed
  elif grep -q 'terminated by signal' "$t" 2>/dev/null; then
    verdict=FAIL; why=" ($(grep -o 'signal [0-9]*' "$t" | head -1)$(grep -qi 'memory allocation' "$DIR/stderr" && echo ': capped by BENCH_VMEM_MB'))"
    code=$(grep -o 'signal [0-9]*' "$t" | head -1 | tr ' ' ':')
  elif ! [[ " $EXPECT_EXIT " == *" $code "* ]]; then
    verdict=FAIL; why=" (exit $code: $(grep -m1 -v '^$' "$DIR/stderr" | cut -c1-80))"
  fi
  if [ "$verdict" = PASS ] && [ "$mib" -ge "$limit" ]; then
    verdict=FAIL
  fi
  if [ "$input" = many-connections ] && [ "$verdict" = PASS ] && awk -v s="$secs" -v l="$EVICT_S" 'BEGIN { exit !(s > l) }'; then
    verdict=FAIL; why=" (slower than ${EVICT_S} s: eviction)"
  fi
  printf '%-18s %-8s %12s %9s %6s %7s  %s%s\n' "$input" "$view" "$mib" "$secs" "$code" "$limit" "$verdict" "$why"
  runs=$((runs + 1))
  [ "$verdict" = FAIL ] && fails=$((fails + 1))
  if [ "$input" = worst-case ] && [ "$mib" -gt "$worst" ]; then
    worst=$mib; worst_run="$view"
  fi
  return 0
}

for f in "${want[@]}"; do
  name=${f%%.*}
  file=$DIR/$f
  # Exit statuses that pass: 0 or 1 (clean, or damage reported); an input refused as it is
  # opened (a zstd window over --max-zstd-window) exits 2.
  EXPECT_EXIT="0 1"
  [ "$name" = zstd-window ] && EXPECT_EXIT=2
  case $f in
    *.hex)
      src=$file
      [ "$name" = hex-stream ] && src=-
      for v in $VIEWS; do
        case $v in
          summary) run "$name" hex "$LIMIT" "$K" --hex --color never "$src" ;;
          json) run "$name" hex-json "$LIMIT" "$K" --hex --json "$src" ;;
        esac
      done
      ;;
    *)
      case $name in
        everything) big=$LIMIT_BIG ;;               # holds a full 100 MiB frame
        frames-in-progress) big=$LIMIT_FRAMES ;;    # --max-frames-total and a little
        worst-case) big=$LIMIT_WORST ;;             # every budget full at once
        *) big=$LIMIT ;;
      esac
      for v in $VIEWS; do
        case $v in
          summary) run "$name" summary "$big" "$K" --no-progress --color never "$file" ;;
          tree) run "$name" -V "$big" "$K" --no-progress --color never -V "$file" ;;
          bytes) run "$name" -x "$big" "$K" --no-progress --color never -x "$file" ;;
          json) run "$name" --json "$big" "$K" --no-progress --json "$file" ;;
          stats) run "$name" "stats" "$big" "$K" --no-progress --stats -q "$file" ;;
        esac
      done
      ;;
  esac
done
rm -f "$DIR/time.out" "$DIR/stderr"
if [ -n "$worst_run" ]; then
  echo "worst case (worst-case: every budget full at once, default limits): ${worst} MiB peak RSS, in the $worst_run view"
fi
echo "$runs runs, $fails FAIL"
[ "$fails" = 0 ]
