#!/usr/bin/env bash
# Installs the PostgreSQL servers the team library tests start:
# - Debian's `postgresql` package (the server teams run, without pgvector: Debian bookworm's
#   archive has no pgvector package), from Debian's own archive with apt;
# - with `--pgvector DIR`: a second server that has the pgvector extension, PostgreSQL 16 with
#   pgvector's `vector.so` and extension SQL as the `pgserver` wheel on PyPI ships them, fetched
#   with pip and unpacked (not installed: only its server binaries are used) into DIR.
# The tests run initdb into a temporary directory and start each server on a loopback port
# themselves; no cluster of a package is used. Idempotent; the apt step needs root (CI runs as
# root); prints nothing on stdout.
#
#   tests/team/provision.sh [--pgvector DIR]
set -euo pipefail
log() { printf 'provision postgresql: %s\n' "$*" >&2; }
PGSERVER=pgserver==0.1.4
if [ "${1:-}" = "--pgvector" ]; then
  dir="${2:?--pgvector needs a directory}"
  if [ -x "$dir/pgserver/pginstall/bin/postgres" ] && [ -e "$dir/pgserver/pginstall/share/postgresql/extension/vector.control" ]; then
    exit 0
  fi
  command -v python3 >/dev/null || { log "python3 (with pip) is needed to fetch the pgvector server wheel"; exit 1; }
  log "fetching $PGSERVER from PyPI (PostgreSQL 16 with pgvector) into $dir"
  rm -rf "$dir.part" && mkdir -p "$dir.part/wheel"
  # The wheel's server binaries do not depend on the Python version: ask for the cp311 build
  # whatever Python runs pip.
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux2014_x86_64 -d "$dir.part/wheel" "$PGSERVER" >&2
  python3 -m zipfile -e "$dir.part"/wheel/*.whl "$dir.part" >&2
  rm -rf "$dir.part/wheel"
  chmod -R a+rX "$dir.part" && chmod a+x "$dir.part"/pgserver/pginstall/bin/*
  rm -rf "$dir" && mv "$dir.part" "$dir"
  exit 0
fi
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then exit 0; fi
command -v apt-get >/dev/null || { log "apt-get is needed to install Debian's postgresql package"; exit 1; }
[ "$(id -u)" = 0 ] || { log "run as root (or install the postgresql package yourself: apt-get install postgresql)"; exit 1; }
log "installing Debian's postgresql package"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# policy-rc.d keeps the package from starting its own cluster service.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get install -y -qq --no-install-recommends postgresql >&2
ls /usr/lib/postgresql/*/bin/initdb >&2
