#!/bin/sh
# Builds the grpc-go contestant into bin/go-grpc as a Go team builds it:
# module mode, every dependency pinned by go.mod and go.sum (fetched from the
# Go module proxy into the module cache), the machine's Go (1.26 or newer).
# The code generators protoc-gen-go and protoc-gen-go-grpc are `tool`
# directives of go.mod, so their versions are pinned beside the runtime's;
# protoc is Debian's. The Go code of ../../proto/sort/v1/sort.proto is
# generated into sortv1/ (not committed). Idempotent: when bin/go-grpc is
# newer than every source file, go.mod, go.sum, this script and the proto, it
# does nothing; otherwise it generates, runs go vet and the tests, and builds.
set -eu
cd "$(dirname "$0")"
proto_root=../../proto
proto=sort/v1/sort.proto

# Not Go: protoc. Go itself and every Go module come through go.mod.
packages="protobuf-compiler"

missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install.sh: installing Debian packages:$missing" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "install.sh: need root (or sudo) to install:$missing" >&2; exit 1; }
    sudo=sudo
  fi
  # shellcheck disable=SC2086
  if ! $sudo apt-get install -y -q -o DPkg::Lock::Timeout=600 $missing >&2; then
    $sudo apt-get update -q -o DPkg::Lock::Timeout=600 >&2
    # shellcheck disable=SC2086
    $sudo apt-get install -y -q -o DPkg::Lock::Timeout=600 $missing >&2 ||
      { echo "install.sh: could not install:$missing" >&2; exit 1; }
  fi
fi
[ -f "$proto_root/$proto" ] || { echo "install.sh: $proto_root/$proto is missing" >&2; exit 1; }

if [ -x bin/go-grpc ] && [ -f sortv1/sort.pb.go ] &&
  [ -z "$(find . "$proto_root/$proto" -maxdepth 1 \( -name '*.go' -o -name go.mod -o -name go.sum -o -name install.sh -o -name sort.proto \) -newer bin/go-grpc)" ]; then
  exit 0
fi
command -v go >/dev/null ||
  { echo "install.sh: no \`go\` on PATH; install Go 1.26 or newer and run this again" >&2; exit 1; }
export GO111MODULE=on
go mod download
# The generators at the versions go.mod pins, into _build/bin.
GOBIN="$PWD/_build/bin" go install tool
# The proto has no go_package: M maps it to this module's sortv1 package.
pkg=stackbench.local/go-grpc/sortv1
rm -rf sortv1
protoc -I "$proto_root" \
  --plugin=protoc-gen-go="$PWD/_build/bin/protoc-gen-go" \
  --plugin=protoc-gen-go-grpc="$PWD/_build/bin/protoc-gen-go-grpc" \
  --go_out=. --go_opt="module=stackbench.local/go-grpc" --go_opt="M$proto=$pkg" \
  --go-grpc_out=. --go-grpc_opt="module=stackbench.local/go-grpc" --go-grpc_opt="M$proto=$pkg" \
  "$proto"
go vet -trimpath ./... >&2
go test -trimpath ./... >&2
mkdir -p bin
go build -trimpath -ldflags '-s -w' -o bin/go-grpc.tmp .
mv bin/go-grpc.tmp bin/go-grpc
