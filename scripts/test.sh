#!/usr/bin/env bash
# Every test of the project, as CI runs it:
#   bash scripts/test.sh
# formatting and lints (Rust and Python), unit/property/golden/corruption/CLI tests, the type
# stubs against the compiled module, a short run of every fuzz target, then the JVM's tests. Everything is built
# once, in the cargo profile `ci` (release without link-time optimisation, see Cargo.toml): the
# lints, the tests, the CLI the Python and R tests run, the Python extension, the C library. Python runs in the project's venv, .venv/ (scripts/setup.sh).
set -euo pipefail
CALLER_DIR="$PWD"
cd "$(dirname "$0")/.."
# A relative CARGO_TARGET_DIR is taken from where the script was started.
case "${CARGO_TARGET_DIR:-}" in "" | /*) ;; *) export CARGO_TARGET_DIR="$CALLER_DIR/$CARGO_TARGET_DIR" ;; esac
source scripts/setup.sh
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# The cargo target folder (CARGO_TARGET_DIR, a cargo config's build.target-dir, or target/):
# the tests run the kompakt binary built there.
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps --locked | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== Python lint and format check (ruff; settings in pyproject.toml)"
# The tools of the `lint` extra, read from pyproject.toml: installed without building the package.
"$PY" -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["lint"]))' \
  > "$VENV/lint-requirements.txt"
"$PY" -m pip install --quiet -r "$VENV/lint-requirements.txt"
"$PY" -m ruff check .
"$PY" -m ruff format --check .
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --profile ci --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --profile ci --locked
BUILT="$TARGET_DIR/ci"
echo "== C API: a C program built against the static library (crates/kompakt-c)"
KPK_PROFILE=ci bash crates/kompakt-c/tests/run_c_tests.sh "$TARGET_DIR"
echo "== JVM: the JNI library (crates/kompakt-jni) inside the jar (java/, Maven; its tests run last)"
KPK_PROFILE=ci kompakt_jar "$TARGET_DIR"
echo "== Python package: pip install .[test,spark] (maturin builds the extension: minutes the first time), then pytest"
MATURIN_PEP517_ARGS="--profile ci" "$PY" -m pip install -v ".[test,spark]"
KOMPAKT_BIN="$BUILT/kompakt" KOMPAKT_REQUIRE_SPARK=1 "$PY" -m pytest -q python/tests
echo "== R package (r/kompakt): its source tarball (scripts/r_package.sh), installed into \$TARGET_DIR/R-library,"
echo "   then R CMD check on it, which runs the testthat tests and examples against that install"
echo "   (with the CLI and the Python package, for the tests of stores and tables shared by all three)"
kompakt_r_setup "$TARGET_DIR" deps
# storr's own driver specification (storr driver) and a tar_make() pipeline (targets format):
# required when ../shared has them.
storr_required=""
targets_required=""
if ls ../shared/vendor/storr_*.tar.gz >/dev/null 2>&1; then storr_required=1; fi
if ls ../shared/vendor/targets_*.tar.gz >/dev/null 2>&1; then targets_required=1; fi
# The tarball links the C library the C tests above built from the same sources
# (KOMPAKT_C_LIB) instead of compiling every crate again from its vendored copies (about 12 CPU
# minutes, measured in r/kompakt/README.md); `bash scripts/r_check.sh` alone does that.
KOMPAKT_C_LIB="$BUILT/libkompakt_c.a" \
  KOMPAKT_BIN="$BUILT/kompakt" KOMPAKT_PYTHON_BIN="$PY" KOMPAKT_GOLDEN_DIR="$PWD/tests/golden/v1" \
  KOMPAKT_BAD_OPTIONS="$PWD/crates/kompakt-api/tests/bad_options.tsv" \
  KOMPAKT_REQUIRE_STORR="$storr_required" KOMPAKT_REQUIRE_TARGETS="$targets_required" KOMPAKT_REQUIRE_SUGGESTS=1 \
  bash scripts/r_check.sh "$TARGET_DIR" "$R_LIBRARY"
echo "   kompakt for R is installed in $R_LIBRARY: run R with R_LIBS=$R_LIBRARY to use it"
echo "== type stubs: python/kompakt/_core.pyi against the compiled module (mypy stubtest)"
# MYPYPATH: the stubs of the source tree, not the copy installed with the package.
MYPYPATH=python "$PY" -m mypy.stubtest --mypy-config-file pyproject.toml kompakt._core
echo "== Python fuzz smoke run (atheris: object decoder and KompaktFile)"
"$PY" -m pip install --quiet atheris
mkdir -p fuzz/corpus/python-objects
"$PY" fuzz/python/objects.py fuzz/corpus/python-objects -max_total_time="${KOMPAKT_FUZZ_SECONDS:-20}" \
  -rss_limit_mb=2048 -max_len=16384 -print_final_stats=0 2>&1 | tail -n 3
echo "== fuzz smoke run"
bash fuzz/smoke.sh "${KOMPAKT_FUZZ_SECONDS:-20}"
echo "== JVM tests (mvn verify): JUnit round trips, goldens, the fuzz corpus above as hostile input, files"
echo "   shared with the CLI, Python and R, and a local SparkSession with kompakt as its codec and"
echo "   its data source (tables read and written, on disk and on a moto S3 server)"
KPK_PROFILE=ci KOMPAKT_GOLDEN_DIR="$PWD/tests/golden" KOMPAKT_BIN="$BUILT/kompakt" KOMPAKT_PYTHON_BIN="$PY" \
  KOMPAKT_BAD_OPTIONS="$PWD/crates/kompakt-api/tests/bad_options.tsv" KOMPAKT_FUZZ_CORPUS="$PWD/fuzz/corpus" \
  KOMPAKT_R_LIBRARY="$R_LIBRARY" KOMPAKT_REQUIRE_INTEROP=1 kompakt_jar "$TARGET_DIR" verify
