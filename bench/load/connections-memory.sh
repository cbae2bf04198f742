#!/usr/bin/env bash
# What one open connection costs the generator in memory, cleartext and over TLS: the
# engine's resident set size with -c SMALL and with -c LARGE keep-alive connections to
# nginx (one worker on core 0; TLS 1.3, a self-signed ECDSA P-256 certificate made now),
# the load on core 1, its peak over the run (every connection is open before the measured
# 10 s); (RSS_large - RSS_small) / (LARGE - SMALL) is the cost of one connection. Over TLS
# twice: as stackbench runs by default, and with --no-resume (no session store), so that the
# difference is what the session tickets kept for resumption cost. nginx (OpenSSL) sends one
# ticket after a resumed handshake, rustls two: the last row is a rustls server, sb-dummy's
# hyper stack on core 0 (GET /events/count), whose tickets would fill a store that kept them.
#
# Usage: bench/load/connections-memory.sh [LARGE] [SMALL]     (defaults: 10000, 1000)
# ROWS=REGEX measures only the rows whose name matches (e.g. ROWS=rustls).
# Needs: nginx-light, openssl, curl, and a release build (STACKBENCH and SB_DUMMY override the
# binaries);
# the open-file limit is raised to its hard limit, which must hold 2 × LARGE + 1000 (nginx and the
# generator share it).
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/load/common.sh
large=${1:-10000}
small=${2:-1000}
sb=${STACKBENCH:-${CARGO_TARGET_DIR:-target}/release/stackbench}
dummy=${SB_DUMMY:-${CARGO_TARGET_DIR:-target}/release/sb-dummy}
[ -x "$sb" ] || { echo "no stackbench binary at $sb: cargo build --release (or set STACKBENCH)" >&2; exit 1; }
[ -x "$dummy" ] || { echo "no sb-dummy binary at $dummy: cargo build --release (or set SB_DUMMY)" >&2; exit 1; }
ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d)
# nginx closing 2 × LARGE connections takes a while: wait for it, so that a run just after binds.
trap 'for p in $(cat "$work/nginx.pid" "$work/dummy.pid" 2>/dev/null); do kill "$p" 2>/dev/null || true
      for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; done; rm -rf "$work"' EXIT
plain=18383
tls=18384
rustls=18385
start_nginx_tls "$work" "$tls"
kill "$(cat "$work/nginx.pid")"; sleep 0.5
# The same nginx with room for every connection, cleartext and TLS.
sed -i "s/worker_connections 4096;/worker_connections $((large * 2 + 100));/; s/^worker_processes 1;/worker_processes 1;\nworker_rlimit_nofile $((large * 2 + 1000));/" "$work/nginx.conf"
sed -i "s|^  server {|  server { listen 127.0.0.1:$plain; location / { return 200 '{\"count\":1}'; } }\n  server {|" "$work/nginx.conf"
taskset -c 0 nginx -c "$work/nginx.conf" -e "$work/error.log" &
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$plain/" && break; sleep 0.1; done
taskset -c 0 "$dummy" --stack hyper --port "$rustls" --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" >/dev/null &
echo $! >"$work/dummy.pid"
for _ in $(seq 50); do curl -s -o /dev/null --cacert "$work/cert.pem" "https://127.0.0.1:$rustls/events/count" && break; sleep 0.1; done

# rss URL C [FLAGS...]: the generator's peak RSS (kB) over a 10 s closed-model run of C connections.
rss() {
  local url=$1 c=$2; shift 2
  taskset -c 1 "$sb" load "$url" -c "$c" -d 10s --threads 1 --timeout 30s -q --json "$work/r.json" "$@" >/dev/null &
  local pid=$! kb=0 now
  # The peak: every connection is open (TLS: every handshake made) before the measured 10 s.
  while kill -0 "$pid" 2>/dev/null; do
    now=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ "${now:-0}" -gt "$kb" ] && kb=$now
    sleep 0.5
  done
  wait "$pid"
  python3 - "$work/r.json" "$c" >&2 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s, c = r["summary"], r.get("connections") or {}
t = c.get("tls") or {}
hs = f", {t['full']} full and {t['resumed']} resumed handshakes" if t else ""
print(f"  {sys.argv[2]} connections: {s['requests']} requests, {s['errors']} errors, {c.get('opened', 0)} opened{hs}")
PY
  echo "$kb"
}

echo "# $(date -u +%FT%TZ) $(uname -r), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in cleartext tls "tls --no-resume" "tls to rustls" "tls to rustls --no-resume"; do
  case $kind in
    cleartext) url="http://127.0.0.1:$plain/"; flags=() ;;
    tls) url="https://127.0.0.1:$tls/"; flags=(--cacert "$work/cert.pem") ;;
    "tls --no-resume") url="https://127.0.0.1:$tls/"; flags=(--cacert "$work/cert.pem" --no-resume) ;;
    "tls to rustls") url="https://127.0.0.1:$rustls/events/count"; flags=(--cacert "$work/cert.pem") ;;
    *) url="https://127.0.0.1:$rustls/events/count"; flags=(--cacert "$work/cert.pem" --no-resume) ;;
  esac
  [[ $kind =~ ${ROWS:-.} ]] || continue
  a=$(rss "$url" "$small" "${flags[@]}")
  b=$(rss "$url" "$large" "${flags[@]}")
  python3 -c "import sys; a, b, s, l = map(int, sys.argv[1:5]); print(f'{sys.argv[5]}: RSS {a / 1024:.0f} MiB with {s} connections, {b / 1024:.0f} MiB with {l}: {(b - a) * 1024 / (l - s) / 1024:.1f} KiB per connection')" "$a" "$b" "$small" "$large" "$kind"
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
