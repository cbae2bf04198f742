#!/bin/sh
# Builds the Gin contestant into bin/go-gin as a Go team builds it: module
# mode, every dependency pinned by go.mod and go.sum, fetched from the Go
# module proxy into the module cache (`go env GOMODCACHE`), built with the
# machine's Go (1.26 or newer: go.mod says `go 1.26`). Idempotent: when
# bin/go-gin is newer than every source file, go.mod, go.sum and this script,
# it does nothing; otherwise it runs go vet and the tests, then builds.
set -eu
cd "$(dirname "$0")"

# Not Go: gcc for cgo (go-sqlite3 compiles the SQLite it bundles), curl and
# psql for reset.sh. Go itself and every Go library come through go.mod.
packages="gcc libc6-dev curl postgresql-client"

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

if [ -x bin/go-gin ] &&
  [ -z "$(find . -maxdepth 1 \( -name '*.go' -o -name go.mod -o -name go.sum -o -name install.sh \) -newer bin/go-gin)" ]; then
  exit 0
fi
command -v go >/dev/null ||
  { echo "install.sh: no \`go\` on PATH; install Go 1.26 or newer and run this again" >&2; exit 1; }
# Module mode whatever the caller's environment says; CGO for go-sqlite3.
export GO111MODULE=on CGO_ENABLED=1
go mod download
go vet -trimpath ./... >&2
go test -trimpath ./... >&2
mkdir -p bin
go build -trimpath -ldflags '-s -w' -o bin/go-gin.tmp .
mv bin/go-gin.tmp bin/go-gin
