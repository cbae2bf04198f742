#!/bin/sh
# The Bubble Benchmark's Go server (a third-party server: its own repository,
# not this one), built as its go/Dockerfile builds it and started for a plan.
#
#   BUBBLE_BENCHMARK_DIR=/path/to/checkout bubble-benchmark-go.sh build
#   PORT=50051 bubble-benchmark-go.sh run
#
# BUBBLE_BENCHMARK_DIR is a checkout of that repository: the directory holding
# go/ (main.go, go.mod, go.sum, Dockerfile) and proto/. `build` never writes
# there: like the Dockerfile's `COPY ./proto ./proto` and `COPY ./go ./go`, it
# copies both into build/bubble-benchmark/ beside this script, then runs the
# Dockerfile's builder steps with the machine's Go in module mode:
#   - the code generators, `go install MODULE@VERSION`, at the versions of the
#     Dockerfile's own `RUN go install` lines (read from it, not restated here);
#   - `go mod download` (its go.mod and go.sum, from the Go module proxy);
#   - `protoc --proto_path=../proto ../proto/*.proto --go_out=gen --go-grpc_out=gen`;
#   - `go build -ldflags="-w -s" -o ./dist/bubblesort`.
# Its protoc is Alpine's package; here it is Debian's protobuf-compiler (the
# only stand-in: no Go module comes from Debian). The Dockerfile's GOARCH=amd64
# is left to the machine, so the binary runs where it is built.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
work="$here/build/bubble-benchmark"

build() {
  src="${BUBBLE_BENCHMARK_DIR:-}"
  [ -n "$src" ] || { echo "bubble-benchmark-go.sh: set BUBBLE_BENCHMARK_DIR to a checkout of the Bubble Benchmark repository (the directory holding go/ and proto/)" >&2; exit 1; }
  for f in go/main.go go/go.mod go/go.sum go/Dockerfile proto; do
    [ -e "$src/$f" ] || { echo "bubble-benchmark-go.sh: $src/$f is missing; BUBBLE_BENCHMARK_DIR must be the checkout's top directory" >&2; exit 1; }
  done
  command -v go >/dev/null || { echo "bubble-benchmark-go.sh: no \`go\` on PATH" >&2; exit 1; }
  command -v protoc >/dev/null || { echo "bubble-benchmark-go.sh: no \`protoc\` on PATH (Debian: apt-get install protobuf-compiler)" >&2; exit 1; }
  # The generators, as the Dockerfile installs them: only lines of the exact
  # form `RUN go install MODULE/PATH@VERSION` are taken.
  installs="$(sed -n 's/^RUN go install \([A-Za-z0-9._/-]*@[A-Za-z0-9._+-]*\)[[:space:]]*$/\1/p' "$src/go/Dockerfile")"
  [ -n "$installs" ] || { echo "bubble-benchmark-go.sh: no \`RUN go install MODULE@VERSION\` line in $src/go/Dockerfile" >&2; exit 1; }

  rm -rf "$work"
  mkdir -p "$work"
  cp -R "$src/proto" "$src/go" "$work/"
  # -buildvcs=false: the copy has no .git of its own, as in the image; without
  # it Go would stamp the binary with the status of the repository around it.
  export GO111MODULE=on GOFLAGS=-buildvcs=false GOBIN="$work/tools" PATH="$work/tools:$PATH"
  cd "$work/go"
  for module in $installs; do
    echo "bubble-benchmark-go.sh: go install $module" >&2
    go install "$module"
  done
  go mod download
  mkdir gen
  protoc --proto_path=../proto ../proto/*.proto --go_out=gen --go-grpc_out=gen
  GOOS=linux go build -ldflags="-w -s" -o ./dist/bubblesort
  echo "bubble-benchmark-go.sh: built $work/go/dist/bubblesort ($(go version))" >&2
}

case "${1:-}" in
  build) build ;;
  run)
    : "${PORT:?set PORT}"
    [ -x "$work/go/dist/bubblesort" ] || { echo "bubble-benchmark-go.sh: run \`bubble-benchmark-go.sh build\` first" >&2; exit 1; }
    exec "$work/go/dist/bubblesort" ;;
  *) echo "usage: bubble-benchmark-go.sh build|run" >&2; exit 2 ;;
esac
