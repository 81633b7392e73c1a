#!/usr/bin/env bash
# Builds kompakt's C API and installs it under PREFIX:
#   bash crates/kompakt-c/install.sh PREFIX [TARGET_DIR]
#
#   PREFIX/include/kompakt.h
#   PREFIX/lib/libkompakt_c.a                 the static library
#   PREFIX/lib/libkompakt_c.so.N              the shared library, N = the C API version (its
#   PREFIX/lib/libkompakt_c.so -> .so.N         SONAME); on macOS libkompakt_c.N.dylib and
#                                               libkompakt_c.dylib
#   PREFIX/lib/pkgconfig/kompakt.pc           cc app.c $(pkg-config --cflags --libs kompakt)
#   PREFIX/lib/pkgconfig/kompakt-static.pc    ... --libs kompakt-static: the .a and what it needs
#
# TARGET_DIR is cargo's target folder (default: cargo's own choice, CARGO_TARGET_DIR or
# target/); the libraries are built there in release (`cargo build --release -p kompakt-c`,
# which rebuilds only what changed), or in the cargo profile KPK_PROFILE names (the tests: ci). Debug information is stripped from the installed copies
# (the workspace's release profile keeps some for profiling) unless KPK_INSTALL_DEBUG=1.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 PREFIX [TARGET_DIR]" >&2
  exit 2
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
mkdir -p "$1"
PREFIX="$(cd "$1" && pwd)"

target_args=()
if [ $# -ge 2 ]; then target_args=(--target-dir "$2"); fi
PROFILE="${KPK_PROFILE:-release}"
cargo build --profile "$PROFILE" --locked -p kompakt-c --manifest-path "$ROOT/Cargo.toml" "${target_args[@]}"
TARGET_DIR="${2:-$(cargo metadata --format-version 1 --no-deps --locked --manifest-path "$ROOT/Cargo.toml" |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')}"
BUILT="$TARGET_DIR/$PROFILE"

API="$(sed -n 's/^#define KPK_API_VERSION \([0-9][0-9]*\).*/\1/p' "$HERE/include/kompakt.h")"
VERSION="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\([^"]*\)".*/\1/p' "$ROOT/Cargo.toml")"
[ -n "$API" ] && [ -n "$VERSION" ] || { echo "install.sh: no API version or package version found" >&2; exit 1; }

mkdir -p "$PREFIX/include" "$PREFIX/lib/pkgconfig"
install -m 644 "$HERE/include/kompakt.h" "$PREFIX/include/kompakt.h"
install -m 644 "$BUILT/libkompakt_c.a" "$PREFIX/lib/libkompakt_c.a"
case "$(uname -s)" in
  Darwin)
    shared="libkompakt_c.$API.dylib"
    link="libkompakt_c.dylib"
    install -m 755 "$BUILT/libkompakt_c.dylib" "$PREFIX/lib/$shared"
    ;;
  *)
    shared="libkompakt_c.so.$API"
    link="libkompakt_c.so"
    install -m 755 "$BUILT/libkompakt_c.so" "$PREFIX/lib/$shared"
    ;;
esac
ln -sf "$shared" "$PREFIX/lib/$link"
if [ "${KPK_INSTALL_DEBUG:-0}" != 1 ] && command -v strip >/dev/null 2>&1; then
  case "$(uname -s)" in
    Darwin) strip -S "$PREFIX/lib/$shared" "$PREFIX/lib/libkompakt_c.a" 2>/dev/null || true ;;
    *) strip --strip-debug "$PREFIX/lib/$shared" "$PREFIX/lib/libkompakt_c.a" ;;
  esac
fi

# What the static library needs besides itself (rustc --print native-static-libs on Linux).
case "$(uname -s)" in
  Darwin) native="-framework CoreFoundation -framework Security -liconv -lc -lm" ;;
  *) native="-lpthread -ldl -lm" ;;
esac
pc_head() {
  cat <<EOF
prefix=$PREFIX
libdir=\${prefix}/lib
includedir=\${prefix}/include
api_version=$API

EOF
}
{
  pc_head
  cat <<EOF
Name: kompakt
Description: kompakt's C API (shared library, C API version $API): compressed, checksummed block-stream files, stores and tables
Version: $VERSION
Libs: -L\${libdir} -lkompakt_c
Libs.private: $native
Cflags: -I\${includedir}
EOF
} >"$PREFIX/lib/pkgconfig/kompakt.pc"
{
  pc_head
  cat <<EOF
Name: kompakt-static
Description: kompakt's C API (static library, C API version $API)
Version: $VERSION
Libs: \${libdir}/libkompakt_c.a $native
Cflags: -I\${includedir}
EOF
} >"$PREFIX/lib/pkgconfig/kompakt-static.pc"
echo "install.sh: kompakt $VERSION (C API version $API) installed in $PREFIX"
