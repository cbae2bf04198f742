#!/bin/sh
# Builds the db-read contestant into bin/go-db. Dependencies are Debian packages
# (Go 1.19 and the Go libraries under /usr/share/gocode), built in GOPATH mode:
# no module proxy, no network beyond apt. Idempotent: when the packages are
# installed and bin/go-db is newer than every source file, it does nothing.
set -eu
cd "$(dirname "$0")"

# Go toolchain and the drivers (gcc: cgo for go-sqlite3).
packages="golang-go gcc libsqlite3-dev
  golang-github-jackc-pgx-v4-dev golang-github-lib-pq-dev golang-github-jmoiron-sqlx-dev
  golang-github-go-sql-driver-mysql-dev golang-github-mattn-go-sqlite3-dev"

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

if [ -x bin/go-db ] && [ -z "$(find . -maxdepth 1 \( -name '*.go' -o -name install.sh \) -newer bin/go-db)" ]; then
  exit 0
fi
export GO111MODULE=off GOPATH="$PWD/_build/gopath:/usr/share/gocode" GOCACHE="${GOCACHE:-$PWD/_build/cache}" GOFLAGS=
mkdir -p bin
go build -trimpath -ldflags '-s -w' -o bin/go-db.tmp .
mv bin/go-db.tmp bin/go-db
