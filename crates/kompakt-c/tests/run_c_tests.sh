#!/usr/bin/env bash
# Builds the C API test program against the static library and runs it:
#   bash crates/kompakt-c/tests/run_c_tests.sh [TARGET_DIR]
# TARGET_DIR is cargo's target folder (default: target); the library is built in release.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
TARGET_DIR="${1:-$ROOT/target}"
cargo build --release --locked -p kompakt-c --manifest-path "$ROOT/Cargo.toml"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# -Werror with the pedantic warnings a C front end would build with: the header must be clean.
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O1 -I "$ROOT/crates/kompakt-c/include" \
    -o "$WORK/api_test" "$HERE/c/api_test.c" "$TARGET_DIR/release/libkompakt_c.a" -lpthread -ldl -lm
"$WORK/api_test" "$WORK"
