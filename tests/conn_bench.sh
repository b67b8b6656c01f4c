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
#
# Environment:
#   BASALTD=path          measure this basaltd instead of building one
#   BASELINE_BASALTD=path also measure a second basaltd (target "before",
#                         e.g. a copy of an earlier build), interleaved with
#                         the others, for before/after comparisons
#   BASALT_ARGS="..."     extra options for every basaltd started, e.g.
#                         --default-authentication-plugin=mysql_native_password
#                         to greet with MariaDB's default plugin (the bench
#                         accounts use mysql_native_password; with Basalt's
#                         default, caching_sha2_password, every connect costs
#                         an auth-switch round trip, as with MySQL 8.0)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SECONDS_PER=${2:-3}
TARGET=${CARGO_TARGET_DIR:-target}

if [ -n "${BASALTD:-}" ]; then
    cargo build --release -q -p basalt-tests --bin conn_bench
else
    cargo build --release -q -p basaltd -p basalt-tests --bin basaltd --bin conn_bench
    BASALTD="$TARGET/release/basaltd"
fi
BENCH="$TARGET/release/conn_bench"

WORK=$(mktemp -d /tmp/basalt-bench.XXXXXX)
cleanup() {
    [ -n "${BASALT_PID:-}" ] && kill "$BASALT_PID" 2>/dev/null || true
    [ -n "${BEFORE_PID:-}" ] && kill "$BEFORE_PID" 2>/dev/null || true
    [ -n "${MARIADB_PID:-}" ] && kill "$MARIADB_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# Starts a basaltd ($1) with datadir $2; sets STARTED_PID and STARTED_PORT.
start_basaltd() {
    # shellcheck disable=SC2086
    "$1" --no-defaults --datadir="$2" --port=0 --max-connections=200 ${BASALT_ARGS:-} >"$2.log" 2>&1 &
    STARTED_PID=$!
    for _ in $(seq 1 200); do
        grep -q "ready for connections" "$2.log" && break
        sleep 0.1
    done
    STARTED_PORT=$(grep -o "ready for connections: address [0-9.]* port [0-9]*" "$2.log" | awk '{print $NF}')
    [ -n "$STARTED_PORT" ] || { cat "$2.log"; exit 1; }
    mariadb --no-defaults -h127.0.0.1 -P"$STARTED_PORT" -uroot \
        -e "CREATE USER bench@'%' IDENTIFIED WITH mysql_native_password BY 'bench'"
}

start_basaltd "$BASALTD" "$WORK/basalt"
BASALT_PID=$STARTED_PID
TARGETS=(--target basalt=127.0.0.1:"$STARTED_PORT")
if [ -n "${BASELINE_BASALTD:-}" ]; then
    start_basaltd "$BASELINE_BASALTD" "$WORK/before"
    BEFORE_PID=$STARTED_PID
    TARGETS+=(--target before=127.0.0.1:"$STARTED_PORT")
fi

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

echo "# machine: $(nproc) cores, $(uname -r); basaltd options: ${BASALT_ARGS:-(defaults)}"
"$BENCH" "${TARGETS[@]}" --target mariadb=127.0.0.1:"$MARIADB_PORT" \
    --user bench --password bench --rounds "$ROUNDS" --seconds "$SECONDS_PER" --connections 1,4,16
