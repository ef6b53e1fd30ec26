#!/usr/bin/env bash
# One fuzzing campaign: fuzz/run.sh TARGET MINUTES [extra libFuzzer flags...]
#
# Fuzzes a clean export of a commit (HEAD by default), so that work in progress in src/ does
# not change the code under test, with the settings of this file: AddressSanitizer (cargo-fuzz's
# default), the target's dictionary (fuzz/dict/), -max_len, and the memory limits that make a
# blow-up a finding (-rss_limit_mb, -malloc_limit_mb; see LIMITS below). Fork mode keeps going
# after a finding, which is saved to fuzz/artifacts/TARGET/ (crash-*, oom-*, timeout-*).
# At the end a row goes to fuzz/RESULTS.md ("Runs by fuzz/run.sh"): date, commit, target,
# minutes, execs, coverage start -> end, features, corpus, OOMs / timeouts / crashes.
#
#   fuzz/run.sh frame 30                 # 30 minutes of the frame target on HEAD
#   FUZZ_COMMIT=abc123 fuzz/run.sh pipeline 30
#   fuzz/run.sh hex 1 -runs=1000         # extra flags go to libFuzzer, after these
#
# Targets: hex frame frame_registry facts_walk reassembly pipeline. On a 2-core machine run at most two
# at once. A finding is replayed with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run -O --fuzz-dir EXPORT/fuzz TARGET fuzz/artifacts/TARGET/oom-...
# then minimised into fuzz/regressions/TARGET-NAME and turned into a test in tests/.
#
# Environment:
#   FUZZ_COMMIT=rev    commit to fuzz (default HEAD); FUZZ_TREE=live fuzzes the working tree
#   FUZZ_WORK=dir      exports, the shared build directory and logs (default /tmp/kdissect-fuzz)
#   FUZZ_CORPUS=dir    corpus directory (default EXPORT/fuzz/corpus/TARGET: each commit starts
#                      from the seeds, written by fuzz/seed when the corpus is empty)
#   FUZZ_RSS_MB, FUZZ_MALLOC_MB   override the memory limits below
#   FUZZ_NO_RECORD=1   do not append to fuzz/RESULTS.md
#   FUZZ_TOOLCHAIN=nightly        run `cargo +nightly fuzz` instead of stable + RUSTC_BOOTSTRAP=1
# Needs cargo-fuzz (cargo install cargo-fuzz), a C++ compiler, Python 3 (the hostile seeds).
set -euo pipefail
FUZZ=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$FUZZ")
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
target=$1 minutes=$2
shift 2
[[ $minutes =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || usage

# LIMITS, measured (per input, peak RSS under ASan, quarantine 32 MB; see fuzz/RESULTS.md):
# clean inputs peak at 132 MB (frame: a 27 KB Metadata response through every renderer) and
# 99 MB (pipeline); an input that decompresses a full --max-decompressed (64 MiB) peaks at
# 220-285 MB once the memory fixes are in. Before them, the hostile seeds took 614 MB (7 batch
# bombs), 853 MB (the 145-byte nested-wrapper frame of item 1, in a capture) and 1.6 GB (the
# `everything` capture) in the pipeline target, and the frame targets render -V and JSON too
# (3.9 GB for item 1 without ASan). So:
#   -rss_limit_mb=384    between the two; about 256 MiB of real memory once ASan's shadow and
#                        redzones are taken off, the issue's target for -V/--json;
#   -malloc_limit_mb=160 one allocation of 160 MiB or more is a finding: --max-decompressed's
#                        buffer (64 MiB) may double once, to 128 MiB, while it grows;
#   ASAN_OPTIONS quarantine_size_mb=32: ASan's default quarantine (256 MB of freed memory
#                        kept to catch use-after-free) would otherwise count against the limit.
# -max_len: frames up to 16 KiB (room for 7 zstd bombs of 2 KiB), captures up to 128 KiB.
case $target in
  hex)            dict=hex.dict;      max_len=65536;  rss=384; malloc=160; extra=(-only_ascii=1) ;;
  frame)          dict=kafka.dict;    max_len=16384;  rss=384; malloc=160; extra=() ;;
  frame_registry) dict=kafka.dict;    max_len=16384;  rss=384; malloc=160; extra=() ;;
  facts_walk)     dict=kafka.dict;    max_len=16384;  rss=384; malloc=160; extra=() ;;
  reassembly)     dict=kafka.dict;    max_len=32768;  rss=384; malloc=160; extra=() ;;
  pipeline)       dict=pipeline.dict; max_len=131072; rss=384; malloc=160; extra=() ;;
  *) echo "fuzz/run.sh: unknown target $target (hex frame frame_registry facts_walk reassembly pipeline)" >&2; exit 2 ;;
esac
rss=${FUZZ_RSS_MB:-$rss}
malloc=${FUZZ_MALLOC_MB:-$malloc}

WORK=${FUZZ_WORK:-/tmp/kdissect-fuzz}
mkdir -p "$WORK/logs"
if [ "${FUZZ_TREE:-export}" = live ]; then
  src=$ROOT
  rev="$(git -C "$ROOT" rev-parse --short=12 HEAD)+worktree"
else
  sha=$(git -C "$ROOT" rev-parse --verify "${FUZZ_COMMIT:-HEAD}^{commit}")
  rev=${sha:0:12}
  src=$WORK/src-$rev
  if [ ! -d "$src" ]; then
    rm -rf "$src.tmp"
    mkdir -p "$src.tmp"
    git -C "$ROOT" archive "$sha" | tar -x -C "$src.tmp"
    mv "$src.tmp" "$src"
  fi
fi
[ -f "$src/fuzz/dict/$dict" ] || { echo "fuzz/run.sh: $src/fuzz/dict/$dict missing (commit too old?)" >&2; exit 2; }
corpus=${FUZZ_CORPUS:-$src/fuzz/corpus/$target}
artifacts=$FUZZ/artifacts/$target
mkdir -p "$corpus" "$artifacts"

export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32}
if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then
  fuzz_cmd=(cargo "+$FUZZ_TOOLCHAIN" fuzz)
else
  export RUSTC_BOOTSTRAP=1
  fuzz_cmd=(cargo fuzz)
fi

# Seeds: the samples, the test vectors and the hostile inputs at fuzz scale (fuzz/seed).
if [ -z "$(ls -A "$corpus")" ]; then
  echo "== seeding $corpus" >&2
  (cd "$src/fuzz" && cargo run --quiet --release --manifest-path seed/Cargo.toml \
      --target-dir "$WORK/target-seed") 2>&1 | tail -3 >&2
  if [ "$corpus" != "$src/fuzz/corpus/$target" ]; then
    cp -n "$src/fuzz/corpus/$target"/* "$corpus"/
  fi
fi
seeds=$(find "$corpus" -type f | wc -l)

stamp=$(date -u +%Y%m%dT%H%M%SZ)
log=$WORK/logs/$target-$rev-$stamp.log
flags=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=10
       -rss_limit_mb="$rss" -malloc_limit_mb="$malloc" -max_len="$max_len"
       -dict="$src/fuzz/dict/$dict" -artifact_prefix="$artifacts/"
       -max_total_time=$((minutes * 60)) -print_final_stats=1 "${extra[@]}" "$@")
echo "== $target on $rev for $minutes min: ${flags[*]}" >&2
echo "== log: $log" >&2
(cd "$src" && "${fuzz_cmd[@]}" build -O --fuzz-dir "$src/fuzz" --target-dir "$WORK/target" "$target") >&2
start=$WORK/logs/.start-$target-$stamp
touch "$start"
t0=$(date +%s)
(cd "$src" && "${fuzz_cmd[@]}" run -O --fuzz-dir "$src/fuzz" --target-dir "$WORK/target" \
    "$target" "$corpus" -- "${flags[@]}") > "$log" 2>&1 || true
t1=$(date +%s)

# Figures from the log. Fork mode prints "#EXECS: cov: C ft: F corp: N exec/s: E
# oom/timeout/crash: O/T/X time: Ss job: J"; the first such line is the start.
stats=$(grep -E '^#[0-9]+: cov: ' "$log" || true)
if [ -z "$stats" ]; then
  echo "fuzz/run.sh: no progress lines in $log; its end:" >&2
  tail -30 "$log" >&2
  exit 1
fi
first=$(head -1 <<<"$stats")
last=$(tail -1 <<<"$stats")
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' <<<"$2"; }
execs=$(awk '{ sub(/^#/, "", $1); sub(/:$/, "", $1); print $1 }' <<<"$last")
cov0=$(field cov: "$first")
cov1=$(field cov: "$last")
ft=$(field ft: "$last")
corp=$(field corp: "$last")
otc=$(field oom/timeout/crash: "$last")
IFS=/ read -r ooms timeouts crashes <<<"$otc"
# Inputs saved in this run, by kind: they include findings of the first pass over the seeds,
# which the fork-mode counters above leave out.
saved() { find "$artifacts" -maxdepth 1 -type f -name "$1-*" -newer "$start" | wc -l; }
s_oom=$(saved oom) s_timeout=$(saved timeout) s_crash=$(( $(saved crash) + $(saved leak) ))
rm -f "$start"
wall=$((t1 - t0))
echo "$target on $rev: $minutes min ($wall s), $execs execs, cov $cov0 -> $cov1, ft $ft, corpus $corp (from $seeds), OOMs/timeouts/crashes saved $s_oom/$s_timeout/$s_crash (fork-mode counters $ooms/$timeouts/$crashes)"
ls -t "$artifacts" 2>/dev/null | head -$((s_oom + s_timeout + s_crash)) | sed "s|^|  $artifacts/|" >&2

if [ -z "${FUZZ_NO_RECORD:-}" ]; then
  results=$FUZZ/RESULTS.md
  if ! grep -q '^## Runs by fuzz/run.sh' "$results"; then
    cat >> "$results" <<'EOF'

## Runs by fuzz/run.sh

One row per run of `fuzz/run.sh TARGET MINUTES` (ASan, fork mode, the target's dictionary in
fuzz/dict/, -max_len and the memory limits set in fuzz/run.sh, -timeout=10,
ASAN_OPTIONS=quarantine_size_mb=32). The commit is the
clean export that was fuzzed. OOMs, timeouts and crashes: the inputs saved to
fuzz/artifacts/TARGET/ during the run (the first pass over the seeds included), then in
parentheses libFuzzer's fork-mode counters (fuzzing jobs only; one input may count twice).

| date (UTC) | commit | target | min | wall s | execs | cov start → end | ft | corpus (seeds) | OOMs / timeouts / crashes saved (fork counters) | flags |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
EOF
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s → %s | %s | %s (%s) | %s / %s / %s (%s / %s / %s) | %s |\n' \
    "$(date -u +%Y-%m-%d)" "$rev" "$target" "$minutes" "$wall" "$execs" "$cov0" "$cov1" "$ft" \
    "$corp" "$seeds" "$s_oom" "$s_timeout" "$s_crash" "$ooms" "$timeouts" "$crashes" \
    "$(echo "-max_len=$max_len -rss_limit_mb=$rss -malloc_limit_mb=$malloc ${extra[*]} $*" | sed 's/ *$//')" >> "$results"
fi
