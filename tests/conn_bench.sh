#!/usr/bin/env bash
# Connection and round-trip throughput of basaltd beside MariaDB on this
# machine: starts a release basaltd and a private MariaDB (own datadir,
# loopback, spare ports), creates the same `bench` account
# (mysql_native_password) in both, and runs conn_bench against both,
# interleaved, printing medians and ratios (basalt/mariadb).
#
#   tests/conn_bench.sh [rounds] [seconds]        # defaults: 3 rounds, 3 s
#
# Needs mariadbd, mariadb-install-db and the mariadb client (Debian
# packages mariadb-server and mariadb-client). Builds with
# CARGO_TARGET_DIR if set.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECONDS_PER=${2:-3}
TARGET=${CARGO_TARGET_DIR:-target}

cargo build --release -q -p basaltd -p basalt-tests --bin basaltd --bin conn_bench
BASALTD="$TARGET/release/basaltd"
BENCH="$TARGET/release/conn_bench"

WORK=$(mktemp -d /tmp/basalt-bench.XXXXXX)
cleanup() {
    [ -n "${BASALT_PID:-}" ] && kill "$BASALT_PID" 2>/dev/null || true
    [ -n "${MARIADB_PID:-}" ] && kill "$MARIADB_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# basaltd on a free port.
"$BASALTD" --no-defaults --datadir="$WORK/basalt" --port=0 --max-connections=200 \
    >"$WORK/basalt.log" 2>&1 &
BASALT_PID=$!
for _ in $(seq 1 200); do
    grep -q "ready for connections" "$WORK/basalt.log" && break
    sleep 0.1
done
BASALT_PORT=$(grep -o "ready for connections: address [0-9.]* port [0-9]*" "$WORK/basalt.log" | awk '{print $NF}')
[ -n "$BASALT_PORT" ] || { cat "$WORK/basalt.log"; exit 1; }
mariadb --no-defaults -h127.0.0.1 -P"$BASALT_PORT" -uroot \
    -e "CREATE USER bench@'%' IDENTIFIED WITH mysql_native_password BY 'bench'"

# A private MariaDB on a spare port.
MARIADB_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mariadb-install-db --no-defaults --datadir="$WORK/mariadb" --auth-root-authentication-method=normal \
    >"$WORK/mariadb-install.log" 2>&1
mariadbd --no-defaults --datadir="$WORK/mariadb" --port="$MARIADB_PORT" --bind-address=127.0.0.1 \
    --socket="$WORK/mariadb.sock" --user="$(id -un)" --max-connections=200 --skip-name-resolve \
    >"$WORK/mariadb.log" 2>&1 &
MARIADB_PID=$!
for _ in $(seq 1 200); do
    mariadb --no-defaults -h127.0.0.1 -P"$MARIADB_PORT" -uroot -e "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.1
done
mariadb --no-defaults -h127.0.0.1 -P"$MARIADB_PORT" -uroot \
    -e "CREATE USER bench@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('bench')"

echo "# machine: $(nproc) cores, $(uname -r)"
"$BENCH" --target basalt=127.0.0.1:"$BASALT_PORT" --target mariadb=127.0.0.1:"$MARIADB_PORT" \
    --user bench --password bench --rounds "$ROUNDS" --seconds "$SECONDS_PER" --connections 1,4,16
