#!/usr/bin/env bash
# SQLite vs redb for the embedded event store; prints a Markdown table.
# Pinned to core 0 like the contestant. Usage: bench/event-log/embedded-choice/run.sh
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"
cargo build --release -q
taskset -c 0 "$CARGO_TARGET_DIR/release/embedded-choice"
