# Sourced by the scripts in bench/load: the anchor server and the CPU meter they share.
#
# start_nginx DIR PORT [H2C_PORT]: nginx (one worker, pinned to core 0) answering every
#   path with `return 200 '{"count":1}'` (application/json; `/session` sets a cookie too)
#   on 127.0.0.1:PORT, and over h2c on H2C_PORT when given; its config, pid and log in
#   DIR. Waits until it answers. Stop it with: kill "$(cat DIR/nginx.pid)". Over HTTP/1.1 it
#   also serves the fixed answers of bench/load/groups/*.hurl (groups_locations).
# groups_locations: nginx locations (exact or prefix, no regex, so `/` is matched as before)
#   answering the files of bench/load/groups/ with fixed JSON, XML and bytes, a 302, cookies
#   set, and 400/401 where a request misses the query, credentials or cookie its file sends.
# start_nginx_tls DIR PORT [reused]: the same nginx over TLS 1.3 on 127.0.0.1:PORT (HTTP/1.1 and
#   HTTP/2 by ALPN), with a self-signed ECDSA P-256 certificate for 127.0.0.1 and localhost made
#   now (DIR/cert.pem, DIR/key.pem); session tickets on, as nginx ships. With `reused`, each
#   request's `$ssl_session_reused` ("r" on a resumed session, "." on a full handshake) is
#   logged to DIR/reused.log (buffered); handshakes_of counts them.
# handshakes_of DIR: "FULL RESUMED", the handshakes of the requests logged since the last call
#   (with a connection per request, one handshake each).
# cpu_of FILE CMD...: runs CMD (stdout to FILE.stdout, stderr to FILE.stderr) and
#   writes its "user system" CPU seconds to FILE.
# per_cpu_second NAME ARGS...: requests per generator CPU-second of one run of
#   `$sb load http://127.0.0.1:$port -c ${conns:-10} --threads 1 -d ${secs}s ARGS` on core 1
#   (its record in $dir/NAME.native.json); a run that fails or counts an error fails.
# hurl_per_cpu_second FILE JOBS: requests per CPU-second (user + system) of
#   `$HURL --test --repeat ${HURL_REPEAT:-5000} --jobs JOBS FILE` on core 1, base_url
#   http://127.0.0.1:$port, counting the requests Hurl says it made (redirects' hops too);
#   one repetition that does not pass fails.

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
$(groups_locations)
  }
  $h2server
}
CONF
  taskset -c 0 nginx -c "$dir/nginx.conf" -e "$dir/error.log" &
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0; sleep 0.1; done
  echo "nginx did not answer on 127.0.0.1:$port; see $dir/error.log" >&2
  return 1
}

groups_locations() {
  cat <<'CONF'
    location = /api/books {
      default_type application/json;
      return 200 '{"books":[{"category":"reference","author":"Nigel Rees","title":"Sayings of the Century","price":8.95,"isbn":"0-553-21311-3"},{"category":"fiction","author":"Evelyn Waugh","title":"Sword of Honour","price":12.99,"isbn":"0-679-43136-5"},{"category":"fiction","author":"Herman Melville","title":"Moby Dick","price":8.99,"isbn":"0-553-21311-3"},{"category":"fiction","author":"J. R. R. Tolkien","title":"The Lord of the Rings","price":22.99,"isbn":"0-395-19395-8"}],"tags":"fiction,reference,classic","total":4,"next":"https://api.example.com/api/books?cursor=b2Zmc2V0PTQ%3D&limit=4"}';
    }
    location = /api/search {
      if ($arg_author != "J.%20R.%20R.%20Tolkien") { return 400; }
      if ($arg_cursor != "b2Zmc2V0PTQ%3D") { return 400; }
      if ($http_x_client != "Si4gUi4gUi4gVG9sa2llbg==") { return 400; }
      default_type application/json;
      return 200 '{"hits":1,"books":[{"title":"The Lord of the Rings","price":22.99}]}';
    }
    location = /oauth/token {
      if ($arg_client_id != "stackbench-web") { return 401; }
      default_type application/json;
      add_header Cache-Control "no-store" always;
      return 200 '{"access_token":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl","token_type":"Bearer","expires_in":3600,"scope":"read write"}';
    }
    location = /api/uploads {
      default_type application/json;
      return 201 '{"id":"f-1029","name":"expenses.csv","status":"stored"}';
    }
    location = /api/me {
      if ($http_authorization != "Basic YWxpY2U6czNjcjN0") { return 401; }
      default_type application/json;
      add_header Cache-Control "private, no-store" always;
      add_header X-Content-Type-Options nosniff always;
      return 200 '{"id":7,"login":"alice","roles":["admin","billing"]}';
    }
    location = /cart {
      if ($cookie_session != "9b1e2f") { return 401; }
      add_header Set-Cookie "cart=c-5512; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax";
      default_type application/json;
      return 200 '{"items":2,"total":"31.98"}';
    }
    location = /old-orders { return 302 /orders; }
    location = /orders {
      default_type application/json;
      return 200 '{"orders":[{"id":"o-1","status":"shipped"},{"id":"o-2","status":"pending"}]}';
    }
    location = /soap/quote {
      default_type application/xml;
      return 200 '<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetQuoteResponse><Symbol>ACME</Symbol><Price currency="EUR">12.50</Price><History><Day>12.10</Day><Day>12.35</Day><Day>12.50</Day></History></GetQuoteResponse></soap:Body></soap:Envelope>';
    }
    location = /api/todos {
      default_type application/json;
      return 201 '{"id":42,"title":"buy milk","done":false}';
    }
    location /api/todos/ {
      default_type application/json;
      return 200 '{"id":42,"title":"buy milk","done":false}';
    }
    location = /assets/app.bin {
      default_type application/octet-stream;
      return 200 'stackbench-asset-v1:0123456789abcdef0123456789abcdef';
    }
CONF
}

cpu_of() {
  local out=$1; shift
  local TIMEFORMAT='%U %S'
  { time "$@" >"$out.stdout" 2>"$out.stderr"; } 2>"$out"
}

per_cpu_second() {
  local name=$1 out="$dir/$1.native"
  shift
  taskset -c 1 "$sb" load "http://127.0.0.1:$port" -c "${conns:-10}" --threads 1 -d "${secs}s" -q \
    --json "$out.json" "$@" >/dev/null 2>"$out.err" ||
    { echo "$name (native) failed:" >&2; tail -n 5 "$out.err" >&2; return 1; }
  python3 - "$out.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
g, s = r["generator"], r["summary"]
if s["errors"] or not s["requests"]:
    sys.exit(f"{sys.argv[2]}: {s['errors']} errors in {s['requests']} requests; see {sys.argv[1]}")
print(round(s["requests"] / (g["cpu_user_s"] + g["cpu_system_s"])))
PY
}

hurl_per_cpu_second() {
  local n=${HURL_REPEAT:-5000} out
  out="$dir/hurl.$(basename "$1").$2"
  cpu_of "$out" taskset -c 1 "$HURL" --test --repeat "$n" --jobs "$2" \
    --variable "base_url=http://127.0.0.1:$port" "$1" ||
    { echo "hurl failed on $1:" >&2; tail -n 12 "$out.stderr" >&2; return 1; }
  grep -q "Succeeded files: *$n (100.0%)" "$out.stderr" ||
    { echo "hurl did not pass all $n runs of $1:" >&2; tail -n 8 "$out.stderr" >&2; return 1; }
  python3 - "$out" <<'PY'
import re, sys
u, s = map(float, open(sys.argv[1]).read().split())
m = re.search(r"Executed requests: *(\d+)", open(sys.argv[1] + ".stderr").read())
print(round(int(m.group(1)) / (u + s)))
PY
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
