#!/usr/bin/env bash
# Installs the external clients that crates/protocol/tests/external_clients.rs
# drives: the mariadb CLI (Debian package mariadb-client) and PyMySQL with
# the `cryptography` package it needs for caching_sha2_password over RSA.
# Idempotent; run before `cargo test -p basalt-protocol`.
set -euo pipefail

SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO="sudo"
fi

if ! command -v mariadb >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq mariadb-client >/dev/null
fi

if ! python3 -c 'import pymysql, cryptography' >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore pymysql cryptography
fi

mariadb --version
python3 -c 'import pymysql, cryptography; print("pymysql", pymysql.__version__, "cryptography", cryptography.__version__)'
