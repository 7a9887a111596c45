#!/usr/bin/env bash
# Installs the headless browser the dashboard test drives: Debian's `chromium` package (the real
# browser users open the page in), from Debian's own archive with apt. Idempotent: an installed
# /usr/bin/chromium is left alone. Needs root (CI runs as root); prints nothing on stdout.
#
#   tests/browser/provision.sh
set -euo pipefail
log() { printf 'provision chromium: %s\n' "$*" >&2; }
if [ -x /usr/bin/chromium ] && /usr/bin/chromium --version >/dev/null 2>&1; then exit 0; fi
command -v apt-get >/dev/null || { log "apt-get is needed to install Debian's chromium package"; exit 1; }
[ "$(id -u)" = 0 ] || { log "run as root (or install the chromium package yourself: apt-get install chromium)"; exit 1; }
log "installing Debian's chromium package"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2
/usr/bin/chromium --version >&2
