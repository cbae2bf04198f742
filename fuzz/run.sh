#!/usr/bin/env bash
# Runs every fuzz target of the load engine's parsers (HTTP/1.1 answers,
# HTTP/2 frames, HPACK blocks), of the Hurl and TOML scenario parsers, of the
# scenario expressions, of the scenario evaluator against hostile answers and of
# the xpath query on hostile bodies for a while each, with cargo fuzz (libFuzzer)
# on the nightly toolchain. CI runs it with 30 seconds per target (.ci/run);
# fuzz/README.md says what each target holds.
#
#   fuzz/run.sh [SECONDS_PER_TARGET]        # default 120
#   fuzz/run.sh build                       # build the targets only (CI builds them beside the tests)
#   TARGETS="scenario_eval" fuzz/run.sh 600  # some targets only
#   JOBS=1 fuzz/run.sh 60                    # one target at a time (default: one per core)
#
# Needs: rustup's nightly toolchain and `cargo install cargo-fuzz`. A crash is
# saved under fuzz/artifacts/<target>/; reproduce it with
#   cargo +nightly fuzz run <target> fuzz/artifacts/<target>/crash-...
# and keep it as a unit test beside the parser it broke.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-120}
build_only=false
[ "$seconds" != build ] || build_only=true
command -v cargo-fuzz >/dev/null || { echo "cargo fuzz is missing: cargo install cargo-fuzz" >&2; exit 1; }
rustup run nightly rustc --version >/dev/null 2>&1 || { echo "the nightly toolchain is missing: rustup toolchain install nightly" >&2; exit 1; }
targets=${TARGETS:-http1_answer h2c_frames hpack_block hurl_file scenario_file scenario_expr scenario_eval xpath}
# libFuzzer runs one process per target on one core: the targets run JOBS at a time (default:
# every core), after one build of them all, so each still gets its SECONDS on a core of its own.
jobs=${JOBS:-$(nproc)}
mkdir -p artifacts
for target in $targets; do cargo +nightly fuzz build "$target"; done
! $build_only || exit 0

# Runs one target; prints its lines only once it ends, so two targets' lines never interleave.
fuzz_one() {
  local target=$1 log="artifacts/$1.log"
  mkdir -p "corpus/$target"
  if cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=70000 >"$log" 2>&1; then
    echo "== $target, ${seconds}s: $(tail -n 1 "$log")"
    return 0
  fi
  # The panic's message and place, the input that caused it, and how to replay it.
  {
    echo "== $target, ${seconds}s: CRASHED"
    grep -m 1 -A 1 "panicked at" "$log" || tail -n 20 "$log"
    grep -E "SUMMARY|Test unit written" "$log" || true
    for unit in $(grep -o "artifacts/$target/[a-z]*-[0-9a-f]*" "$log" | sort -u); do
      echo "input ($unit), as hex:"; od -A d -t x1 "$unit" | head -n 20
    done
    echo "!! $target crashed: see fuzz/$log and fuzz/artifacts/$target/"
  } >&2
  return 1
}

status=0
running=0
for target in $targets; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
exit $status
