#!/usr/bin/env bash
# stackbench load vs wrk (HTTP/1.1), h2load (HTTP/2) and oha, side by side in one run.
#
# The server is nginx (Debian nginx-light), one worker pinned to core 0, answering
# `return 200 '{"count":1}'` (application/json). Each load generator is pinned to
# core 1 with one thread and 100 connections for 10 s. The figure of merit is
# requests completed per CPU-second of the generator process (user + system, from
# the kernel's rusage of the child), so a generator that spends less CPU per request
# wins even when nginx is the bottleneck. stackbench records every latency in its
# HdrHistogram while doing so. Each round runs the anchor and stackbench back to
# back; the script prints every round and the median ratio with its spread.
#
# MODE=cleartext (the default): HTTP/1.1 vs wrk, h2c vs h2load.
# MODE=tls: nginx with TLS 1.3 and a self-signed ECDSA P-256 certificate made at the start,
#   each row twice for stackbench: as it offers by default (X25519MLKEM768 first; nginx on
#   OpenSSL 3.0 takes X25519, so only the ClientHello's extra key share differs) and with
#   --tls-groups X25519 (the anchors' offer):
#   https1      keep-alive HTTP/1.1: wrk vs stackbench
#   h2tls       HTTP/2 over TLS: h2load vs stackbench --http2
#   oha         keep-alive HTTP/1.1: oha vs stackbench
#   new-conn    a new connection and a TLS handshake per request: wrk -H 'Connection: close'
#               and oha --disable-keepalive vs stackbench --no-keepalive; nginx logs
#               $ssl_session_reused and the row prints each side's full and resumed handshakes
#               (those of its completed requests). stackbench keeps a ticket per connection,
#               so only each connection's first handshake is full; oha keeps rustls's 8 tickets
#               per server, so at -c 100 a share of its handshakes are full; wrk (OpenSSL)
#               resumes each connection's session. The resumed ones are TLS 1.3 PSK handshakes
#               with a fresh key exchange.
#   oha checks the certificate as stackbench does (--cacert), so both do the same work in a full
#   handshake; the `--insecure` row runs both without it (oha then skips the handshake's
#   signature too, stackbench still checks it).
# ROWS=REGEX runs only the rows whose name matches.
#
# Usage: [MODE=tls] bench/load/vs-anchors.sh [ROUNDS] [DURATION]   (defaults: 5 rounds, 10s)
# Needs: nginx-light, wrk, nghttp2-client (h2load), openssl, oha for MODE=tls
# (`cargo install oha --locked`, outside this repository; OHA=path overrides), and a
# release build:
#   apt-get install -y nginx-light wrk nghttp2-client && cargo build --release
# STACKBENCH=path/to/stackbench overrides the binary; SB_IO=io_uring runs it with --io io_uring
# (cleartext only: TLS runs on epoll).
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/load/common.sh
rounds=${1:-5}
duration=${2:-10s}
secs=${duration%s}
mode=${MODE:-cleartext}
sb=${STACKBENCH:-${CARGO_TARGET_DIR:-target}/release/stackbench}
oha=${OHA:-oha}
io=${SB_IO:-epoll}
for tool in nginx wrk h2load taskset python3; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y nginx-light wrk nghttp2-client" >&2; exit 1; }
done
if [ "$mode" = tls ]; then
  command -v openssl >/dev/null || { echo "missing openssl" >&2; exit 1; }
  command -v "$oha" >/dev/null || { echo "missing oha: cargo install oha --locked (or set OHA)" >&2; exit 1; }
fi
[ -x "$sb" ] || { echo "no stackbench binary at $sb: cargo build --release (or set STACKBENCH)" >&2; exit 1; }

work=$(mktemp -d)
trap 'kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
h1=18380
h2=18381
tls=18382
if [ "$mode" = tls ]; then
  start_nginx_tls "$work" "$tls" reused
else
  start_nginx "$work" "$h1" "$h2"
fi

# requests FILE KIND: the requests a generator completed, from its output.
requests() {
  case $2 in
    wrk) grep -oE '^ *[0-9]+ requests in' "$1.stdout" | grep -oE '[0-9]+' ;;
    h2load) grep -oE '^requests: [0-9]+ total, [0-9]+ started, [0-9]+ done' "$1.stdout" | grep -oE '[0-9]+ done' | grep -oE '[0-9]+' ;;
    oha) python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["statusCodeDistribution"].values()))' "$1.stdout" ;;
    sb) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["requests"])' "$1.json" ;;
  esac
}

# ratio ANCHOR_FILE ANCHOR_KIND SB_FILE: "anchor_req anchor_req/cpu sb_req sb_req/cpu ratio".
ratio() {
  python3 - "$1" "$(requests "$1" "$2")" "$3" "$(requests "$3" sb)" <<'PY'
import sys
def cpu(p): u, s = open(p).read().split(); return float(u) + float(s)
a, b = int(sys.argv[2]) / cpu(sys.argv[1]), int(sys.argv[4]) / cpu(sys.argv[3])
print(f"{sys.argv[2]} {a:.0f} {sys.argv[4]} {b:.0f} {b / a:.3f}")
PY
}

declare -A results handshakes
# row NAME ANCHOR_KIND SB_ARGS -- ANCHOR_CMD...: one round of one comparison.
row() {
  local name=$1 kind=$2 sb_args=$3
  shift 4
  [[ $name =~ ${ROWS:-.} ]] || return 0
  local a_hs s_hs
  cpu_of "$work/a" taskset -c 1 "$@"
  [ "$mode" = tls ] && a_hs=$(handshakes_of "$work")
  # shellcheck disable=SC2086
  cpu_of "$work/s" taskset -c 1 "$sb" load $sb_args -d "$duration" --threads 1 -q --json "$work/s.json"
  [ "$mode" = tls ] && s_hs=$(handshakes_of "$work")
  read -r ar arc br brc r <<<"$(ratio "$work/a" "$kind" "$work/s")"
  printf '%-26s %-5s %14s %14s %14s %14s %8s' "$name" "$round" "$ar" "$arc" "$br" "$brc" "$r"
  if [[ $name == new-conn* ]]; then
    printf '   full/resumed: %s / %s' "$(tr ' ' / <<<"$a_hs")" "$(tr ' ' / <<<"$s_hs")"
    handshakes[$name]="${handshakes[$name]:-} $a_hs $s_hs"
  fi
  echo
  results[$name]="${results[$name]:-} $r"
}

echo "# $(date -u +%FT%TZ) $(uname -r), $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# nginx $(nginx -v 2>&1 | cut -d/ -f2) on core 0 (1 worker); generators on core 1, 1 thread, -c 100, $duration, mode $mode"
printf '%-26s %-5s %14s %14s %14s %14s %8s\n' row round anchor_req anchor_req/cpu sb_req sb_req/cpu ratio
for round in $(seq "$rounds"); do
  if [ "$mode" = tls ]; then
    url="https://127.0.0.1:$tls/"
    trust="--cacert $work/cert.pem"
    for groups in "" "--tls-groups X25519"; do
      tag=${groups:+ x25519}
      row "https1 vs wrk$tag" wrk "$url $trust $groups -c 100" -- wrk -t1 -c100 -d"$duration" "$url"
      row "h2tls vs h2load$tag" h2load "$url $trust $groups --http2 -c 100" -- h2load -t1 -c100 -m1 -D "$secs" "$url"
      row "https1 vs oha$tag" oha "$url $trust $groups -c 100" -- "$oha" -z "$duration" -c 100 --worker-threads 1 $trust --no-tui --output-format json "$url"
      row "new-conn vs wrk$tag" wrk "$url $trust $groups -c 100 --no-keepalive" -- wrk -t1 -c100 -d"$duration" -H 'Connection: close' "$url"
      row "new-conn vs oha$tag" oha "$url $trust $groups -c 100 --no-keepalive" -- "$oha" -z "$duration" -c 100 --worker-threads 1 $trust --disable-keepalive --no-tui --output-format json "$url"
      row "new-conn vs oha --insecure$tag" oha "$url --insecure $groups -c 100 --no-keepalive" -- "$oha" -z "$duration" -c 100 --worker-threads 1 --insecure --disable-keepalive --no-tui --output-format json "$url"
    done
  else
    row "http1 vs wrk" wrk "http://127.0.0.1:$h1/ --io $io -c 100" -- wrk -t1 -c100 -d"$duration" "http://127.0.0.1:$h1/"
    row "h2c vs h2load" h2load "http://127.0.0.1:$h2/ --http2 --io $io -c 100" -- h2load -t1 -c100 -m1 -D "$secs" "http://127.0.0.1:$h2/"
  fi
done
for name in "${!results[@]}"; do echo "$name|${results[$name]}"; done | sort | python3 -c '
import statistics, sys
for line in sys.stdin:
    name, xs = line.rstrip("\n").split("|")
    v = sorted(float(x) for x in xs.split())
    print(f"{name}: stackbench requests per generator CPU-second / the anchor'"'"'s = median {statistics.median(v):.2f} "
          f"(min {v[0]:.2f}, max {v[-1]:.2f}, {len(v)} rounds)")
'
for name in "${!handshakes[@]}"; do
  python3 - "$name" ${handshakes[$name]} <<'PY'
import sys
name, xs = sys.argv[1], [int(x) for x in sys.argv[2:]]
af, ar, sf, sr = (sum(xs[i::4]) for i in range(4))
share = lambda f, r: f"{f} full of {f + r} ({100 * f / max(f + r, 1):.0f}%)"
print(f"{name}: handshakes as nginx saw them, all rounds: the anchor {share(af, ar)}, stackbench {share(sf, sr)}")
PY
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
