#!/usr/bin/env bash
# compare-views: every view of two kdissect builds, byte for byte, on every sample, every hex
# sample, every hostile input (small scale) and the fuzz regressions. For a change that must
# keep output as it was (a refactoring, a speed-up): build the old binary, keep it, build the
# new one, and run
#
#   scripts/compare-views.sh OLD_BINARY NEW_BINARY
#
# Each run's standard output, standard error and exit status are compared; the first lines of
# each difference are printed, and the script exits 1 if any run differs. The hostile inputs
# are made once into $COMPARE_DIR (default /tmp/kdissect-compare). COMPARE_VIEWS narrows the
# views (names as in VIEWS below, e.g. COMPARE_VIEWS="summary json").
set -uo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: compare-views.sh OLD_BINARY NEW_BINARY}
new=${2:?usage: compare-views.sh OLD_BINARY NEW_BINARY}
work=${COMPARE_DIR:-/tmp/kdissect-compare}
mkdir -p "$work/hostile" "$work/out"
if [ ! -e "$work/hostile/.made" ] || [ scripts/hostile/generate.py -nt "$work/hostile/.made" ]; then
  python3 scripts/hostile/generate.py all "$work/hostile" --scale small >/dev/null && touch "$work/hostile/.made"
fi

# name|arguments (FILE is replaced by the input); capture views, then hex views.
CAPTURE_VIEWS=(
  "summary|--no-progress FILE"
  "tree|--no-progress -V FILE"
  "brief|--no-progress -V --brief FILE"
  "bytes|--no-progress -x --ascii FILE"
  "json|--no-progress --json FILE"
  "tjson|--no-progress -T json -Y topic FILE"
  "spans|--no-progress --json --json-spans FILE"
  "stats|--no-progress --stats FILE"
  "statsjson|--no-progress --stats --json -q FILE"
  "analyses|--no-progress --stats -q --analyses FILE"
  "analysesjson|--no-progress --stats --json -q --analyses FILE"
  "fields|--no-progress -T fields -e frame.number -e kafka.correlation_id -e kafka.api_key -e kafka.api_version -e kafka.error -e kafka.topic_name FILE"
  "ek|--no-progress -T ek FILE"
  "filter|--no-progress -Y topic FILE"
  "filtertopic|--no-progress -Y partition==1||topic==test||topic==ak44-demo FILE"
  "filterheader|--no-progress -Y error||api==3||latency>5ms||corr==1 FILE"
  "filtercount|--no-progress -c 7 -Y !(api==ApiVersions) FILE"
  "statstopic|--no-progress --stats -Y topic FILE"
  "filterstats|--no-progress --stats -q -Y api==Fetch||api==Produce||malformed FILE"
  "errors|--no-progress --errors -V FILE"
)
HEX_VIEWS=(
  "hexsummary|--hex FILE"
  "hextree|--hex -V FILE"
  "hexbytes|--hex -x FILE"
  "hexjson|--hex --json FILE"
)

wanted() {
  [ -z "${COMPARE_VIEWS:-}" ] && return 0
  case " $COMPARE_VIEWS " in *" $1 "*) return 0 ;; esac
  return 1
}

runs=0
diffs=0
# one BINARY INPUT ARGS... -> "$work/out/TAG.{out,err,rc}"
one() {
  local tag=$1 bin=$2 input=$3; shift 3
  local args=()
  for a in "$@"; do
    if [ "$a" = FILE ]; then
      case "$input" in
        *.hex) args+=(-) ;;
        *) args+=("$input") ;;
      esac
    else
      args+=("$a")
    fi
  done
  case "$input" in
    *.hex) NO_COLOR=1 COLUMNS=100 timeout 120 "$bin" "${args[@]}" <"$input" >"$work/out/$tag.out" 2>"$work/out/$tag.err" ;;
    *) NO_COLOR=1 COLUMNS=100 timeout 120 "$bin" "${args[@]}" </dev/null >"$work/out/$tag.out" 2>"$work/out/$tag.err" ;;
  esac
  echo $? >"$work/out/$tag.rc"
}

compare() {
  local input=$1 spec=$2
  local name=${spec%%|*} rest=${spec#*|}
  wanted "$name" || return 0
  local words
  read -r -a words <<<"$rest"
  one old "$old" "$input" "${words[@]}"
  one new "$new" "$input" "${words[@]}"
  runs=$((runs + 1))
  local what
  for what in out err rc; do
    if ! cmp -s "$work/out/old.$what" "$work/out/new.$what"; then
      diffs=$((diffs + 1))
      echo "== $input [$name] std$what differs"
      diff "$work/out/old.$what" "$work/out/new.$what" | head -8
    fi
  done
}

shopt -s nullglob
captures=(samples/*.pcap samples/*.pcapng "$work"/hostile/*.pcap "$work"/hostile/*.pcapng fuzz/regressions/pipeline-*)
hexes=(samples/hex/*.hex tests/fixtures/vectors/*.hex "$work"/hostile/*.hex)
for f in "${captures[@]}"; do
  for v in "${CAPTURE_VIEWS[@]}"; do compare "$f" "$v"; done
done
for f in "${hexes[@]}"; do
  for v in "${HEX_VIEWS[@]}"; do compare "$f" "$v"; done
done
echo "compare-views: $runs runs, $diffs differences (${#captures[@]} captures, ${#hexes[@]} hex inputs)"
[ "$diffs" = 0 ]
