#!/usr/bin/env bash
# A throw-away PostgreSQL server for the tests: `start` prints the DSN, `stop` removes it.
# Installs the Debian package when no server binaries are present. The server refuses to run
# as root, so the cluster lives in a temporary directory owned by the postgres user, on a
# spare port, with its socket in that directory. TK_PG_STATE names another state folder:
# a second server (a test that restarts its server uses one of its own).
set -euo pipefail
cd "$(dirname "$0")/.."
STATE="${TK_PG_STATE:-$(pwd)/.pgtest}"
cmd=${1:-start}

pg_bin() {
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && { echo "$d"; return; }
    done
}

as_postgres() {  # from /, which the postgres user can always enter
    if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

case "$cmd" in
start)
    if [ -f "$STATE/dsn" ] && [ -d "$(cat "$STATE/dir" 2>/dev/null)" ] \
        && as_postgres "$(pg_bin)/pg_ctl" -D "$(cat "$STATE/dir")/data" status >/dev/null 2>&1; then
        cat "$STATE/dsn"; exit 0
    fi
    if [ -z "$(pg_bin)" ]; then
        echo "pg-test-server: installing postgresql (apt-get)" >&2
        apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq postgresql >/dev/null
    fi
    BIN=$(pg_bin)
    if [ -z "$BIN" ]; then echo "pg-test-server: no PostgreSQL server binaries" >&2; exit 1; fi
    if ! id postgres >/dev/null 2>&1; then
        echo "pg-test-server: no postgres user (install the postgresql package)" >&2; exit 1
    fi
    DIR=$(mktemp -d /tmp/tk-pgtest.XXXXXX)
    chmod 755 "$DIR"
    chown postgres "$DIR" 2>/dev/null || true
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    as_postgres "$BIN/initdb" -D "$DIR/data" -U postgres -A trust --no-sync >"$DIR/initdb.log" 2>&1 \
        || { echo "pg-test-server: initdb failed, see $DIR/initdb.log" >&2; exit 1; }
    as_postgres "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w \
        -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60" \
        start >/dev/null || { echo "pg-test-server: start failed, see $DIR/server.log" >&2; exit 1; }
    mkdir -p "$STATE"
    echo "$DIR" > "$STATE/dir"
    echo "postgresql://postgres@127.0.0.1:$PORT/postgres" > "$STATE/dsn"
    cat "$STATE/dsn"
    ;;
restart)
    DIR=$(cat "$STATE/dir")
    as_postgres "$(pg_bin)/pg_ctl" -D "$DIR/data" -m fast -w restart >/dev/null
    ;;
stop)
    if [ -f "$STATE/dir" ]; then
        DIR=$(cat "$STATE/dir")
        [ -d "$DIR/data" ] && as_postgres "$(pg_bin)/pg_ctl" -D "$DIR/data" -m immediate stop \
            >/dev/null 2>&1 || true
        rm -rf "$DIR" "$STATE"
    fi
    ;;
*)
    echo "usage: $0 start|restart|stop" >&2; exit 2 ;;
esac
