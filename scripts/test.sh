#!/usr/bin/env bash
# Every test of the project, as CI runs it:
#   bash scripts/test.sh
# formatting, lints, unit/property/golden/corruption/CLI tests (release build: the same artifacts
# as the demo), then a short run of every fuzz target. Python runs in the project's venv, .venv/
# (made by scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --release --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --release --locked
echo "== Python package: pip install .[test], then pytest"
"$PY" -m pip install --quiet ".[test]"
KOMPAKT_BIN="$PWD/target/release/kompakt" "$PY" -m pytest -q python/tests
echo "== Python fuzz smoke run (atheris: object decoder and KompaktFile)"
"$PY" -m pip install --quiet atheris
mkdir -p fuzz/corpus/python-objects
"$PY" fuzz/python/objects.py fuzz/corpus/python-objects -max_total_time="${KOMPAKT_FUZZ_SECONDS:-20}" \
  -rss_limit_mb=4096 -max_len=16384 -print_final_stats=0 2>&1 | tail -n 3
echo "== fuzz smoke run"
bash fuzz/smoke.sh "${KOMPAKT_FUZZ_SECONDS:-20}"
