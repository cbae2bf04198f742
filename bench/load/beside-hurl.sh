#!/usr/bin/env bash
# stackbench beside Hurl itself on the same .hurl files: requests per generator CPU-second of
# `stackbench load -c U --threads 1` for SECS seconds (default 5, every answer checked) and of
# `hurl --test --repeat N --jobs U` (N = HURL_REPEAT, default 5000), each on core 1, against
# nginx on core 0 (bench/load/common.sh: fixed answers, so the server's work is the same for
# both). The files: one per feature group Hurl users write (bench/load/groups/*.hurl: queries
# and filters, [Query] and [Form], [Multipart], [BasicAuth] and headers, cookies, redirects,
# XML and xpath, chained captures, bytes and hashes, templates and filters), then
# dummy-like.hurl and cookie-like.hurl (run with --keep-cookies: Hurl starts each repetition
# with an empty cookie store, so it never sends that cookie back where stackbench does).
# For U in USERS (default "1 10"), HURL_ROUNDS rounds (default 3), each round ours then theirs:
# per file the rounds' medians and the median (min..max) of the rounds' ratios, "met" where
# every round's ratio is at least 20. A run that fails, counts an error or a failed check, or a
# repetition Hurl does not pass, stops the script: it is not a figure.
#
# Usage: cargo build --release && HURL=path/to/hurl bench/load/beside-hurl.sh [FILE.hurl...]
# (hurl 8.0.1: cargo install hurl@8.0.1 --locked). SB=path/to/stackbench for another build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
[ -n "${HURL:-}" ] || { echo "set HURL=path/to/hurl (8.0.1: cargo install hurl@8.0.1 --locked)" >&2; exit 2; }
sb=${SB:-$here/../../target/release/stackbench}
secs=${SECS:-5}
port=${PORT:-18503}
rounds=${HURL_ROUNDS:-3}
dir=$(mktemp -d)
trap 'kill "$(cat "$dir/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$dir"' EXIT
start_nginx "$dir" "$port"
if [ "$#" -gt 0 ]; then files=("$@"); else files=("$here"/groups/*.hurl "$here/dummy-like.hurl" "$here/cookie-like.hurl"); fi

echo "requests per generator CPU-second beside Hurl ($("$HURL" --version | head -n 1))"
echo "stackbench -c U --threads 1 for ${secs}s, hurl --test --repeat ${HURL_REPEAT:-5000} --jobs U;" \
  "$rounds rounds (ours, theirs); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| U | file | stackbench | hurl | stackbench / hurl: median (min..max) | >= 20x |"
echo "|---:|---|---:|---:|---:|---|"
for users in ${USERS:-1 10}; do
  for f in "${files[@]}"; do
    name=$(basename "$f" .hurl)
    extra=()
    [ "$name" = cookie-like ] && extra=(--keep-cookies)
    pairs=()
    for _ in $(seq "$rounds"); do
      ours=$(conns=$users per_cpu_second "u$users-$name" --scenario-file "$f" --check-every 1 "${extra[@]}")
      theirs=$(hurl_per_cpu_second "$f" "$users")
      pairs+=("$ours" "$theirs")
    done
    python3 - "$users" "$name" "${pairs[@]}" <<'PY'
import statistics, sys
users, name, v = sys.argv[1], sys.argv[2], list(map(int, sys.argv[3:]))
ours, theirs = v[0::2], v[1::2]
r = [a / b for a, b in zip(ours, theirs)]
met = "met" if min(r) >= 20 else "not met"
print(f"| {users} | `{name}.hurl` | {round(statistics.median(ours)):,} | {round(statistics.median(theirs)):,} |"
      f" {statistics.median(r):.1f}x ({min(r):.1f}..{max(r):.1f}) | {met} |")
PY
  done
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
