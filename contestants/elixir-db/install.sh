#!/bin/sh
# Installs what the Elixir db-read contestant needs and builds it. Idempotent: a
# second run checks the Debian packages and the release's stamp, and exits.
#
# Debian packages (installed with apt-get when missing): elixir, erlang-dev,
# erlang-yaws (Yaws 2.1), erlang-jiffy (JSON), erlang-p1-pgsql (PostgreSQL),
# erlang-p1-mysql (MySQL/MariaDB), erlang-redis-client (eredis, Redis),
# erlang-ssl (OTP's TLS, for HTTPS), and mariadb-client when there is no mysql
# client (for mysql-user.sh). No Hex package.
# The build is a Mix release, self-contained, in _build/prod/rel/ex_db.
set -eu
cd "$(dirname "$0")"

pkgs="elixir erlang-dev erlang-yaws erlang-jiffy erlang-p1-pgsql erlang-p1-mysql erlang-redis-client erlang-ssl"
missing=""
for p in $pkgs; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] || missing="$missing $p"
done
# mysql-user.sh (the plan's build) needs a mysql client.
command -v mysql >/dev/null 2>&1 || missing="$missing mariadb-client"
if [ -n "$missing" ]; then
  echo "install.sh: installing Debian packages:$missing" >&2
  apt="apt-get -o DPkg::Lock::Timeout=600"
  # shellcheck disable=SC2086
  if ! $apt install -y $missing; then
    $apt update && $apt install -y $missing || {
      echo "install.sh: cannot install the Debian packages$missing (run as root: apt-get install -y$missing)" >&2
      exit 1
    }
  fi
fi

stamp=_build/prod/rel/ex_db/.built
if [ -f "$stamp" ] && [ -z "$(find mix.exs config lib rel priv -newer "$stamp" | head -n 1)" ]; then
  exit 0
fi
MIX_ENV=prod mix release --overwrite --quiet
touch "$stamp"
