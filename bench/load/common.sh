# Sourced by the scripts in bench/load: the anchor server and the CPU meter they share.
#
# start_nginx DIR PORT [H2C_PORT]: nginx (one worker, pinned to core 0) answering every
#   path with `return 200 '{"count":1}'` (application/json; `/session` sets a cookie too)
#   on 127.0.0.1:PORT, and over h2c on H2C_PORT when given; its config, pid and log in
#   DIR. Waits until it answers. Stop it with: kill "$(cat DIR/nginx.pid)".
# start_nginx_tls DIR PORT [reused]: the same nginx over TLS 1.3 on 127.0.0.1:PORT (HTTP/1.1 and
#   HTTP/2 by ALPN), with a self-signed ECDSA P-256 certificate for 127.0.0.1 and localhost made
#   now (DIR/cert.pem, DIR/key.pem); session tickets on, as nginx ships. With `reused`, each
#   request's `$ssl_session_reused` ("r" on a resumed session, "." on a full handshake) is
#   logged to DIR/reused.log (buffered); handshakes_of counts them.
# handshakes_of DIR: "FULL RESUMED", the handshakes of the requests logged since the last call
#   (with a connection per request, one handshake each).
# cpu_of FILE CMD...: runs CMD (stdout to FILE.stdout, stderr to FILE.stderr) and
#   writes its "user system" CPU seconds to FILE.

start_nginx() {
  local dir=$1 port=$2 h2=${3:-} h2server=""
  if [ -n "$h2" ]; then
    h2server="server {
    listen 127.0.0.1:$h2 http2;
    location / { default_type application/json; return 200 '{\"count\":1}'; }
  }"
  fi
  cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$port;
    location / { default_type application/json; return 200 '{"count":1}'; }
    location /session {
      add_header Set-Cookie "sid=3f2a9c; Path=/; HttpOnly";
      default_type application/json; return 200 '{"count":1}';
    }
  }
  $h2server
}
CONF
  taskset -c 0 nginx -c "$dir/nginx.conf" -e "$dir/error.log" &
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0; sleep 0.1; done
  echo "nginx did not answer on 127.0.0.1:$port; see $dir/error.log" >&2
  return 1
}

cpu_of() {
  local out=$1; shift
  local TIMEFORMAT='%U %S'
  { time "$@" >"$out.stdout" 2>"$out.stderr"; } 2>"$out"
}

start_nginx_tls() {
  local dir=$1 port=$2 log="access_log off;"
  if [ "${3:-}" = reused ]; then
    log="log_format reused '\$ssl_session_reused'; access_log $dir/reused.log reused buffer=64k flush=1s;"
  fi
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -addext "basicConstraints=critical,CA:FALSE" \
    -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null
  cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 4096; }
http {
  $log
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  server {
    listen 127.0.0.1:$port ssl http2;
    ssl_certificate $dir/cert.pem;
    ssl_certificate_key $dir/key.pem;
    ssl_protocols TLSv1.3;
    location / { default_type application/json; return 200 '{"count":1}'; }
  }
}
CONF
  taskset -c 0 nginx -c "$dir/nginx.conf" -e "$dir/error.log" &
  for _ in $(seq 50); do curl -s -o /dev/null --cacert "$dir/cert.pem" "https://127.0.0.1:$port/" && return 0; sleep 0.1; done
  echo "nginx did not answer on https://127.0.0.1:$port; see $dir/error.log" >&2
  return 1
}

handshakes_of() {
  local dir=$1 from
  from=$(cat "$dir/reused.from" 2>/dev/null || echo 0)
  # nginx writes its buffer out within a second (flush=1s).
  sleep 1.5
  stat -c %s "$dir/reused.log" >"$dir/reused.from"
  tail -c +"$((from + 1))" "$dir/reused.log" | awk '$1 == "r" { r++ } $1 == "." { f++ } END { print f + 0, r + 0 }'
}
