#!/usr/bin/env bash
# The C API's C tests, against the libraries as install.sh installs them (a temporary prefix):
#   bash crates/kompakt-c/tests/run_c_tests.sh [TARGET_DIR]
# TARGET_DIR is cargo's target folder (default: target); the libraries are built in release.
#
#   api_test     tests/c/api_test.c, linked with the static library, then with the shared one
#                (found through its SONAME, libkompakt_c.so.N, as a program installed with it)
#   dlopen_test  tests/c/dlopen_test.c, with no link-time dependency: it loads the shared
#                library with dlopen and checks its API version before any other call
#
# Every program is built with -std=c11 -Wall -Wextra -Wpedantic -Werror, as a C front end
# would build it: the header must be clean. pkg-config (kompakt.pc, kompakt-static.pc) gives
# the flags when it is installed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
TARGET_DIR="${1:-$ROOT/target}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"
bash "$ROOT/crates/kompakt-c/install.sh" "$PREFIX" "$TARGET_DIR"
CC="${CC:-cc}"
CFLAGS=(-std=c11 -Wall -Wextra -Wpedantic -Werror -O1)

# The flags of kompakt.pc ($1 = kompakt or kompakt-static), from pkg-config when there is one.
flags() {
  if command -v pkg-config >/dev/null 2>&1; then
    PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig" pkg-config --cflags --libs "$1"
  elif [ "$1" = kompakt-static ]; then
    echo "-I$PREFIX/include $PREFIX/lib/libkompakt_c.a -lpthread -ldl -lm"
  else
    echo "-I$PREFIX/include -L$PREFIX/lib -lkompakt_c"
  fi
}

needed() { # the shared libraries a program names (ELF systems with readelf)
  if command -v readelf >/dev/null 2>&1; then readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; fi
}

echo "== api_test, static library"
mkdir -p "$WORK/static"
# shellcheck disable=SC2046 # the flags are words
"$CC" "${CFLAGS[@]}" -o "$WORK/api_test_static" "$HERE/c/api_test.c" $(flags kompakt-static)
if needed "$WORK/api_test_static" | grep -q kompakt; then
  echo "run_c_tests: api_test_static depends on a shared kompakt" >&2
  exit 1
fi
"$WORK/api_test_static" "$WORK/static"

echo "== api_test, shared library"
mkdir -p "$WORK/shared"
# shellcheck disable=SC2046
"$CC" "${CFLAGS[@]}" -o "$WORK/api_test_shared" "$HERE/c/api_test.c" $(flags kompakt) -Wl,-rpath,"$PREFIX/lib"
if command -v readelf >/dev/null 2>&1; then
  api="$(sed -n 's/^#define KPK_API_VERSION \([0-9][0-9]*\).*/\1/p' "$ROOT/crates/kompakt-c/include/kompakt.h")"
  if ! needed "$WORK/api_test_shared" | grep -qx "libkompakt_c.so.$api"; then
    echo "run_c_tests: api_test_shared does not load libkompakt_c.so.$api by its SONAME:" >&2
    needed "$WORK/api_test_shared" >&2
    exit 1
  fi
fi
"$WORK/api_test_shared" "$WORK/shared"

echo "== dlopen_test"
"$CC" "${CFLAGS[@]}" -I "$PREFIX/include" -o "$WORK/dlopen_test" "$HERE/c/dlopen_test.c" -ldl
if needed "$WORK/dlopen_test" | grep -q kompakt; then
  echo "run_c_tests: dlopen_test is linked with kompakt; it must load it itself" >&2
  exit 1
fi
case "$(uname -s)" in
  Darwin) shared="$(ls "$PREFIX"/lib/libkompakt_c.*.dylib)" ;;
  *) shared="$(ls "$PREFIX"/lib/libkompakt_c.so.*)" ;;
esac
"$WORK/dlopen_test" "$shared"
