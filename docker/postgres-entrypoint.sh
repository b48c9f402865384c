#!/bin/sh
# The first start makes the cluster the way the public postgres image does (user, password, database);
# later starts find it in $PGDATA. Then PostgreSQL runs in the foreground as the container's process.
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "${POSTGRES_PASSWORD:-}" ] || { echo "postgres: set POSTGRES_PASSWORD" >&2; exit 1; }
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 \
         --encoding=UTF8 --no-instructions -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" \
      | postgres --single -D "$PGDATA" -c listen_addresses='' postgres >/dev/null
  fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
