#!/usr/bin/env bash
# Builds the stackbench image without pulling anything: a root filesystem of the release binary,
# the shared libraries it links (as `ldd` names them), /bin/sh (dash, for the Kubernetes Job's
# `sh -c` command line), an /etc/passwd that names nobody, and /tmp; `docker import`ed as an
# image that runs as nobody (65534:65534) with `stackbench` as its entrypoint.
#
#   image/build.sh [--binary PATH] [TAG]
#
# TAG defaults to stackbench:VERSION (the workspace's version). --binary takes a stackbench
# binary already built (the tests give theirs) instead of `cargo build --release`. The image
# carries its own C library, so it runs on any Linux node of this machine's architecture. It ends
# by printing the tag and the image's size in bytes. docs/beyond-one-machine.md says how the
# image reaches every node of a swarm or a cluster.
set -euo pipefail
cd "$(dirname "$0")/.."

binary=""
tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --binary=*) binary=${1#--binary=}; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "image/build.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [ -z "$tag" ] || { echo "image/build.sh: one TAG only (see --help)" >&2; exit 2; }; tag=$1; shift ;;
  esac
done
if [ -z "$tag" ]; then
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
  tag="stackbench:${version}"
fi
if [ -z "$binary" ]; then
  cargo build --release --locked --bin stackbench >&2
  binary="${CARGO_TARGET_DIR:-target}/release/stackbench"
fi
[ -x "$binary" ] || { echo "image/build.sh: $binary is not an executable" >&2; exit 1; }
command -v docker >/dev/null || { echo "image/build.sh: needs the docker command (Debian: docker.io)" >&2; exit 1; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# Every file the binary and the shell load, at the path the dynamic loader looks for it.
libs() { ldd "$1" | awk '/=> \// {print $3} /^\t\// {print $1}'; }
copy() { mkdir -p "$root$(dirname "$2")"; cp -L "$1" "$root$2"; }
copy "$binary" /usr/local/bin/stackbench
copy "$(readlink -f /bin/sh)" /bin/sh
for lib in $( { libs "$binary"; libs "$(readlink -f /bin/sh)"; } | sort -u); do copy "$lib" "$lib"; done
mkdir -p "$root/etc" "$root/tmp"
chmod 1777 "$root/tmp"
echo 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' > "$root/etc/passwd"
echo 'nogroup:x:65534:' > "$root/etc/group"

tar --numeric-owner --owner=0 --group=0 -C "$root" -c . | docker import \
  --change 'USER 65534:65534' \
  --change 'ENV PATH=/usr/local/bin:/bin' \
  --change 'WORKDIR /tmp' \
  --change 'ENTRYPOINT ["/usr/local/bin/stackbench"]' \
  --change 'CMD ["--help"]' \
  --message "image/build.sh: $(basename "$binary") and what it links" \
  - "$tag" >/dev/null
size=$(docker image inspect --format '{{.Size}}' "$tag")
echo "$tag $size"
