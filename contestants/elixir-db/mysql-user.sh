#!/bin/sh
# Creates the MariaDB/MySQL account the p1_mysql drivers log in with, and
# lets it read the database:
#   mysql-user.sh ADMIN_URL USER PASSWORD
#   mysql-user.sh mysql://root@127.0.0.1:3306/stackbench_test ex_db_reader ex_db_reader
# Why: p1_mysql always answers the server's challenge with a password hash,
# also for an empty password, so it cannot log in to an account that has no
# password (like root on a fresh MariaDB): the server answers "Access denied
# (using password: YES)". Idempotent (CREATE USER IF NOT EXISTS, then the
# password and the grant set again). Needs the mysql client (install.sh
# installs mariadb-client when it is missing).
set -eu
[ $# -eq 3 ] || { echo "usage: mysql-user.sh ADMIN_URL USER PASSWORD" >&2; exit 2; }
url=$1 user=$2 password=$3
case "$user$password" in *[!A-Za-z0-9_]*) echo "mysql-user.sh: USER and PASSWORD must be [A-Za-z0-9_]" >&2; exit 2;; esac
rest=${url#*://}
auth=${rest%%@*}; [ "$auth" = "$rest" ] && auth=root
hostport=${rest#*@}; hostport=${hostport%%/*}
db=${rest#*/}; db=${db%%\?*}
admin=${auth%%:*}; adminpw=""; [ "$admin" != "$auth" ] && adminpw=${auth#*:}
host=${hostport%%:*}; port=3306; [ "$host" != "$hostport" ] && port=${hostport#*:}
MYSQL_PWD=$adminpw mysql --protocol=TCP -h "$host" -P "$port" -u "$admin" -e "
  CREATE USER IF NOT EXISTS '$user'@'%' IDENTIFIED BY '$password';
  ALTER USER '$user'@'%' IDENTIFIED BY '$password';
  GRANT SELECT ON \`$db\`.* TO '$user'@'%';"
