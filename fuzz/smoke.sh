#!/usr/bin/env bash
# Fuzz smoke test: builds every cargo-fuzz target and runs each for a fixed time, one after
# the other (the machines have 2 cores). Exits non-zero if a target crashes, hangs, runs out
# of memory, or if the nightly toolchain is missing.
#
# usage: bash fuzz/smoke.sh [SECONDS_PER_TARGET]     (default 20)
#
# Environment:
#   FUZZ_TARGETS    space-separated targets to run (default: all ten)
#   FUZZ_SANITIZER  cargo-fuzz sanitizer (default: none; the core crate's three audited
#                   unsafe blocks are small and unit-tested, and the C codecs are not
#                   instrumented by cargo-fuzz, so ASan mostly costs speed here; use
#                   "address" for a deeper run)
#
# Crash inputs land in fuzz/artifacts/<target>/; logs in fuzz/target/smoke/<target>.log.
set -euo pipefail

SECONDS_PER_TARGET="${1:-20}"
if ! [[ "$SECONDS_PER_TARGET" =~ ^[0-9]+$ ]] || [ "$SECONDS_PER_TARGET" -lt 1 ]; then
    echo "usage: bash fuzz/smoke.sh [SECONDS_PER_TARGET]   (a positive integer, default 20)" >&2
    exit 2
fi
SANITIZER="${FUZZ_SANITIZER:-none}"
TARGETS="${FUZZ_TARGETS:-reader sequential forged codec roundtrip store table index remote_records rserial}"

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$FUZZ_DIR")"
cd "$ROOT"
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# Largest input per target: a file or payload this size exercises every structure; larger
# ones only slow the run down.
max_len() {
    case "$1" in
        codec) echo 65536 ;;
        *) echo 32768 ;;
    esac
}

# --- toolchain --------------------------------------------------------------------------
if ! command -v rustup >/dev/null 2>&1; then
    echo "fuzz smoke: FAILED: rustup not found; cargo-fuzz needs a nightly Rust toolchain installed with rustup" >&2
    exit 1
fi
toolchains="$(rustup toolchain list)"
if ! grep nightly >/dev/null <<<"$toolchains"; then
    echo "fuzz smoke: FAILED: no nightly toolchain (cargo-fuzz needs one)." >&2
    echo "  installed toolchains:" >&2
    sed 's/^/    /' <<<"$toolchains" >&2
    echo "  install it with: rustup toolchain install nightly --profile minimal" >&2
    exit 1
fi
echo "fuzz smoke: using $(rustc +nightly --version)"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz smoke: cargo-fuzz not found; installing it (cargo install cargo-fuzz --locked)"
    start=$SECONDS
    cargo install cargo-fuzz --locked
    echo "fuzz smoke: cargo-fuzz installed in $((SECONDS - start)) s"
fi
echo "fuzz smoke: $(cargo fuzz --version)"

# --- seeds ------------------------------------------------------------------------------
need_seeds=0
for t in $TARGETS; do
    if [ ! -d "$FUZZ_DIR/corpus/$t" ] || [ -z "$(ls -A "$FUZZ_DIR/corpus/$t")" ]; then
        need_seeds=1
    fi
done
if [ "$need_seeds" = 1 ]; then
    echo "fuzz smoke: generating the seed corpus"
    (cd "$FUZZ_DIR" && cargo +nightly run --quiet --example gen_corpus)
fi

# --- build ------------------------------------------------------------------------------
start=$SECONDS
cargo +nightly fuzz build --sanitizer "$SANITIZER" --debug-assertions
echo "fuzz smoke: targets built in $((SECONDS - start)) s"

# --- run --------------------------------------------------------------------------------
LOG_DIR="$FUZZ_DIR/target/smoke"
mkdir -p "$LOG_DIR"
failed=()
summary=()
for t in $TARGETS; do
    log="$LOG_DIR/$t.log"
    echo "fuzz smoke: running $t for ${SECONDS_PER_TARGET} s (log: $log)"
    status=0
    cargo +nightly fuzz run "$t" --sanitizer "$SANITIZER" --debug-assertions -- \
        -max_total_time="$SECONDS_PER_TARGET" \
        -max_len="$(max_len "$t")" \
        -rss_limit_mb=2048 \
        -timeout=60 \
        -print_final_stats=1 \
        >"$log" 2>&1 || status=$?
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    secs="$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)"
    cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)"
    rate="?"
    if [ -n "$runs" ] && [ -n "$secs" ] && [ "$secs" -gt 0 ]; then
        rate=$((runs / secs))
    fi
    if [ "$status" -ne 0 ]; then
        failed+=("$t")
        summary+=("$t: FAILED (exit $status)")
        echo "fuzz smoke: $t FAILED (exit $status); full log: $log" >&2
        # The panic message (or libFuzzer's OOM / timeout / leak report) and the saved input.
        grep -m 2 -A 1 -E "panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer" "$log" | sed 's/^/    /' >&2 || true
        grep -o 'Test unit written to .*' "$log" | sed 's/^/    /' >&2 || true
        if ! grep -q -E "panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer|Test unit written" "$log"; then
            tail -n 40 "$log" >&2   # failed before fuzzing (build or setup): show why
        fi
    else
        summary+=("$t: ok, ${runs:-?} runs, ${rate} exec/s, ${cov:-cov ?}")
    fi
done

echo
echo "fuzz smoke summary (${SECONDS_PER_TARGET} s per target, sanitizer $SANITIZER):"
printf '  %s\n' "${summary[@]}"
if [ "${#failed[@]}" -ne 0 ]; then
    echo "fuzz smoke: FAILED: ${failed[*]}" >&2
    echo "  reproduce: cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/<crash-file> -s $SANITIZER -a" >&2
    echo "  minimize:  cargo +nightly fuzz tmin TARGET fuzz/artifacts/TARGET/<crash-file> -s $SANITIZER -a" >&2
    exit 1
fi
echo "fuzz smoke: all targets passed"
