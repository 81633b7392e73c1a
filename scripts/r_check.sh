#!/usr/bin/env bash
# The R package as a user gets it: its source tarball (scripts/r_package.sh), installed once,
# then `R CMD check` on the tarball, whose examples and testthat tests run against that install:
#   bash scripts/r_check.sh [TARGET_DIR [R_LIBRARY]]
# TARGET_DIR: cargo's target folder (default: the workspace's). The tarball, the install log,
# the check's output (kompakt.Rcheck) and cargo's build of the package (cargo/, kept between
# runs: a second run on the same machine compiles nothing) go to TARGET_DIR/r-package.
# R_LIBRARY (default: TARGET_DIR/R-library) gets the package and must hold the packages it
# suggests (scripts/setup.sh's kompakt_r_setup installs them there).
# The tests read KOMPAKT_BIN, KOMPAKT_PYTHON_BIN, KOMPAKT_GOLDEN_DIR, KOMPAKT_BAD_OPTIONS and KOMPAKT_REQUIRE_* from
# the environment (scripts/test.sh sets them). Fails when the check has an ERROR or a WARNING;
# its NOTEs are printed (r/kompakt/README.md says why each is there).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then . "$HOME/.cargo/env"; fi
TARGET_DIR="${1:-$(cargo metadata --format-version 1 --no-deps --locked --manifest-path "$ROOT/Cargo.toml" |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')}"
R_LIBRARY="${2:-$TARGET_DIR/R-library}"
OUT="$TARGET_DIR/r-package"
mkdir -p "$OUT" "$R_LIBRARY"
R_LIBRARY="$(cd "$R_LIBRARY" && pwd)"
started=$SECONDS
elapsed() { echo "r_check: $1 in $((SECONDS - started)) s"; started=$SECONDS; }

# gzip: the vendored crates packed ten times faster than with xz (a tarball of 33 MB, not 20).
TARBALL="$(KOMPAKT_VENDOR_COMPRESSION="${KOMPAKT_VENDOR_COMPRESSION:-gzip}" bash "$ROOT/scripts/r_package.sh" "$OUT")"
elapsed "built $TARBALL ($(du -h "$TARBALL" | cut -f1))"

# Installed once, from the tarball, as a user would; the check uses this install.
LOG="$OUT/install.log"
# KOMPAKT_C_LIB (a libkompakt_c.a built from the same sources, such as the workspace's): linked
# instead of compiled again from the vendored crates (about 12 CPU minutes).
echo "r_check: R CMD INSTALL (cargo builds in $OUT/cargo${KOMPAKT_C_LIB:+, or links $KOMPAKT_C_LIB}; log: $LOG)"
if ! CARGO_TARGET_DIR="$OUT/cargo" R CMD INSTALL --no-multiarch -l "$R_LIBRARY" "$TARBALL" >"$LOG" 2>&1; then
  tail -n 60 "$LOG"
  echo "r_check: R CMD INSTALL failed (the whole log: $LOG)" >&2
  exit 1
fi
elapsed "installed in $R_LIBRARY ($(du -sh "$R_LIBRARY/kompakt/libs" | cut -f1) of libs)"

# _R_CHECK_TESTS_NLINES_=0: a failing test's whole output goes to the log.
rm -rf "$OUT/kompakt.Rcheck"
status=0
(cd "$OUT" && R_LIBS="$R_LIBRARY${R_LIBS:+:$R_LIBS}" _R_CHECK_TESTS_NLINES_=0 \
  R CMD check --no-manual --install="check:$LOG" --library="$R_LIBRARY" "$TARBALL") || status=$?
elapsed "R CMD check"
CHECK_LOG="$OUT/kompakt.Rcheck/00check.log"
if [ "$status" != 0 ] || grep -q '^Status:.*\(ERROR\|WARNING\)' "$CHECK_LOG"; then
  for out in "$OUT"/kompakt.Rcheck/tests/*.Rout.fail; do
    [ -f "$out" ] && { echo "---- $out"; tail -n 80 "$out"; }
  done
  echo "r_check: R CMD check found errors or warnings (see $CHECK_LOG)" >&2
  exit 1
fi
grep '^Status:' "$CHECK_LOG"
