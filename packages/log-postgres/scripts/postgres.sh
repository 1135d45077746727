#!/usr/bin/env bash
# Prints a PostgreSQL URL for the log's server tests (TAY_PG_URL).
#
# 1. TAY_PG_URL already set and answering: prints it.
# 2. 127.0.0.1:5432 answering (user postgres, database test): prints that.
# 3. Otherwise: installs Debian's postgresql if its binaries are missing
#    (apt-get update first), then starts a private cluster as a non-root
#    user (PostgreSQL refuses to run as root) in a temporary directory, on
#    a free loopback port, with trust authentication for loopback only, and
#    prints its URL. The cluster keeps running; stop it with the command
#    printed on stderr.
#
# TAY_PG_PRIVATE=1 skips 1 and 2: always a private cluster.
#
# `postgres.sh --cluster` always starts a private cluster and prints what a
# test needs to crash and restart it, one KEY=VALUE a line: url, data (the
# data directory; its postmaster.pid names the postmaster), bin, user (who
# runs it: "" when not root, the caller itself), log. The settings are in
# the cluster's postgresql.conf, so `pg_ctl -D DATA -l LOG -w start` (as
# that user) restarts it exactly as it was (test/support/cluster.ts).
#
# Usage: export TAY_PG_URL="$(packages/log-postgres/scripts/postgres.sh)"
set -euo pipefail

answers() { psql "$1" -Atqc 'SELECT 1' >/dev/null 2>&1; }

describe=0
if [ "${1:-}" = "--cluster" ]; then describe=1; fi
private="${TAY_PG_PRIVATE:-0}"
if [ "$describe" = 1 ]; then private=1; fi
if [ "$private" != 1 ] && [ -n "${TAY_PG_URL:-}" ] && command -v psql >/dev/null && answers "$TAY_PG_URL"; then
  echo "$TAY_PG_URL"; exit 0
fi
fallback="postgres://postgres@127.0.0.1:5432/test"
if [ "$private" != 1 ] && command -v psql >/dev/null && answers "$fallback"; then
  echo "$fallback"; exit 0
fi

bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
  echo "installing Debian's postgresql" >&2
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql >&2
  bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
fi

# A user of our own: initdb and postgres refuse root.
user="${TAY_PG_USER:-taypg}"
if [ "$(id -u)" = 0 ]; then
  id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
  as_user() { runuser -u "$user" -- "$@"; }
else
  user=""
  as_user() { "$@"; }
fi

dir="$(mktemp -d /tmp/tay-pg.XXXXXX)"
if [ -n "$user" ]; then chown "$user" "$dir"; fi
chmod 700 "$dir"

# A free loopback port: ask the kernel for one.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

as_user "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync >&2
# In postgresql.conf rather than on pg_ctl's command line: a restart takes them too.
cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
fsync = on
synchronous_commit = on
CONF
as_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >&2
as_user "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres test >&2
url="postgres://postgres@127.0.0.1:$port/test"
if [ "$describe" = 1 ]; then
  printf 'url=%s\ndata=%s\nbin=%s\nuser=%s\nlog=%s\n' "$url" "$dir/data" "$bin" "$user" "$dir/log"
  exit 0
fi
if [ -n "$user" ]; then
  echo "stop it with: runuser -u $user -- $bin/pg_ctl -D $dir/data stop" >&2
else
  echo "stop it with: $bin/pg_ctl -D $dir/data stop" >&2
fi
echo "$url"
