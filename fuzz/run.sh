#!/usr/bin/env bash
# Runs every fuzz target of the load engine's parsers (HTTP/1.1 answers,
# HTTP/2 frames, HPACK blocks), of the Hurl and TOML scenario parsers, of the
# scenario expressions, of the scenario evaluator against hostile answers and of
# the xpath query on hostile bodies for a while each, with cargo fuzz (libFuzzer)
# on the nightly toolchain. CI runs it with 30 seconds per target (.ci/run);
# fuzz/README.md says what each target holds.
#
#   fuzz/run.sh [SECONDS_PER_TARGET]        # default 120
#   TARGETS="scenario_eval" fuzz/run.sh 600  # some targets only
#
# Needs: rustup's nightly toolchain and `cargo install cargo-fuzz`. A crash is
# saved under fuzz/artifacts/<target>/; reproduce it with
#   cargo +nightly fuzz run <target> fuzz/artifacts/<target>/crash-...
# and keep it as a unit test beside the parser it broke.
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-120}
command -v cargo-fuzz >/dev/null || { echo "cargo fuzz is missing: cargo install cargo-fuzz" >&2; exit 1; }
rustup run nightly rustc --version >/dev/null 2>&1 || { echo "the nightly toolchain is missing: rustup toolchain install nightly" >&2; exit 1; }
status=0
for target in ${TARGETS:-http1_answer h2c_frames hpack_block hurl_file scenario_file scenario_expr scenario_eval xpath}; do
  mkdir -p "corpus/$target"
  echo "== $target, ${seconds}s"
  log="artifacts/$target.log"
  mkdir -p artifacts
  if cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=70000 >"$log" 2>&1; then
    tail -n 1 "$log"
  else
    # The panic's message and place, the input that caused it, and how to replay it.
    grep -m 1 -A 1 "panicked at" "$log" || tail -n 20 "$log"
    grep -E "SUMMARY|Test unit written" "$log" || true
    for unit in $(grep -o "artifacts/$target/[a-z]*-[0-9a-f]*" "$log" | sort -u); do
      echo "input ($unit), as hex:"; od -A d -t x1 "$unit" | head -n 20
    done
    echo "!! $target crashed: see fuzz/$log and fuzz/artifacts/$target/" >&2
    status=1
  fi
done
exit $status
