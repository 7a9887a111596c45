#!/usr/bin/env bash
# Runs every cargo-fuzz target of refrain for a bounded time and prints executions and crashes.
#
#   benches/fuzz.sh [seconds-per-target] [target...]
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`); FUZZ_NO_BUILD=1 runs
# the binaries already built; FUZZ_MERGE=1 merges new coverage back into fuzz/corpus. Each target starts from
# its committed corpus (fuzz/corpus/<target>) copied to a scratch directory, so a run never grows
# the committed corpus; crashing inputs are kept under fuzz/artifacts/<target>/. Builds without a
# sanitizer (refrain forbids unsafe code) and with debug assertions, so overflows panic.
set -euo pipefail

secs="${1:-60}"
shift || true
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here/fuzz"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

if [ -z "${FUZZ_NO_BUILD:-}" ]; then
    cargo +nightly fuzz build -s none -O >/dev/null
fi
bin="$here/fuzz/target/x86_64-unknown-linux-gnu/release"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

printf '%-20s %8s %14s %10s %8s\n' target seconds executions exec/s crashes
total_crashes=0
for t in "${targets[@]}"; do
    mkdir -p "$scratch/$t" "artifacts/$t"
    cp -r "corpus/$t/." "$scratch/$t/" 2>/dev/null || true
    before=$(find "artifacts/$t" -type f | wc -l)
    log="$scratch/$t.log"
    # -fork keeps fuzzing past a crash, so one run counts every distinct crash it finds.
    "$bin/$t" "$scratch/$t" -artifact_prefix="artifacts/$t/" \
        -max_total_time="$secs" -fork=1 -ignore_crashes=1 -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        >"$log" 2>&1 || true
    # The last status line starts with the total executions: "#<execs>: cov: ..." in fork mode.
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    if [ -n "${FUZZ_MERGE:-}" ]; then
        # Keep only the grown inputs that add coverage (a minimized merge into the committed corpus).
        "$bin/$t" -merge=1 -max_len=65536 "corpus/$t" "$scratch/$t" >"$log.merge" 2>&1 || true
    fi
    after=$(find "artifacts/$t" -type f | wc -l)
    crashes=$((after - before))
    total_crashes=$((total_crashes + crashes))
    rate=$(( ${execs:-0} / secs ))
    printf '%-20s %8s %14s %10s %8s\n' "$t" "$secs" "${execs:-0}" "${rate:-0}" "$crashes"
    if [ "$crashes" -gt 0 ]; then
        ls -t "artifacts/$t" | head -"$crashes" | sed "s|^|    artifacts/$t/|"
    fi
done
echo "crashes: $total_crashes"
[ "$total_crashes" -eq 0 ]
