#!/usr/bin/env bash
# The README's first command on its first use, timed end to end: a new clone of this
# repository, `cargo build --release`, then `target/release/stackbench bench`, with every cache
# empty (cargo's registry and target directory, Go's build and module caches, npm, pip, Maven),
# so the crates and the contestants' packages are downloaded and built as on a new machine.
# Each output line is stamped with the seconds since the clone began; the last lines say when
# the build ended and when the first verdict came. What it leaves out: the Debian packages and
# toolchains a new machine would install first.
#
# Usage: bench/first-use.sh [DIR]   (DIR: where to clone and cache, default a new temporary
# directory, removed at the end unless KEEP=1). Run it on a quiet machine.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
if [ -z "${1:-}" ] && [ "${KEEP:-0}" != 1 ]; then
  trap 'rm -rf "$work"' EXIT
fi
[ ! -e "$work/clone" ] || { echo "first-use.sh: $work/clone exists; give an empty DIR" >&2; exit 2; }

export CARGO_HOME="$work/cargo-home" CARGO_TARGET_DIR="$work/clone/target"
export GOCACHE="$work/go-build" GOMODCACHE="$work/go-mod" npm_config_cache="$work/npm"
export PIP_CACHE_DIR="$work/pip" MAVEN_OPTS="-Dmaven.repo.local=$work/m2"
mkdir -p "$CARGO_HOME"
# The toolchain rustup installed stays where it is; only cargo's caches start empty.
[ -n "${RUSTUP_HOME:-}" ] || export RUSTUP_HOME="$HOME/.rustup"

t0=$EPOCHREALTIME
stamp() {
  while IFS= read -r line; do
    LINE=$line awk -v now="$EPOCHREALTIME" -v t0="$t0" 'BEGIN { printf "%7.1f %s\n", now - t0, ENVIRON["LINE"] }'
  done
}
{
  git clone -q "$here" "$work/clone" && echo "cloned"
  cd "$work/clone"
  if cargo build --release >"$work/build.log" 2>&1; then
    grep -E '^ *Finished' "$work/build.log" || true
    echo "built"
  else
    tail -n 30 "$work/build.log"
    echo "build failed"
    exit 1
  fi
  status=0
  target/release/stackbench bench 2>&1 || status=$?
  echo "exit $status"
} | stamp | tee "$work/first-use.log"

built=$(awk '$2 == "built" {print $1; exit}' "$work/first-use.log")
first=$(awk '/decided after round/ {print $1; exit}' "$work/first-use.log")
echo "build ended ${built:-?} s after the clone began; first verdict at ${first:-none} s"
