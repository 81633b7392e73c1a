#!/usr/bin/env bash
# Builds kompakt for the JVM: the JNI library (crates/kompakt-jni, release profile) inside the
# jar java/target/kompakt-VERSION.jar, copied into the Python package (python/kompakt/jars/) so
# that `kompakt.spark.jar_path()` finds it. Extra arguments are Maven goals and flags
# (default: `package -DskipTests`; `verify` also runs the JUnit and Spark tests).
#
#   bash scripts/build_jar.sh
#   bash scripts/build_jar.sh verify
set -euo pipefail
CALLER_DIR="$PWD"
cd "$(dirname "$0")/.."
case "${CARGO_TARGET_DIR:-}" in "" | /*) ;; *) export CARGO_TARGET_DIR="$CALLER_DIR/$CARGO_TARGET_DIR" ;; esac
source scripts/setup.sh
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps --locked | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
kompakt_jar "$TARGET_DIR" "$@"
echo "jar: $KOMPAKT_JAR"
