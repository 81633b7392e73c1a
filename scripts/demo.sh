#!/usr/bin/env bash
# The main job: build kompakt and show it end to end on generated data.
#   bash scripts/demo.sh            (the first time over 10 minutes on 2 cores: about 1,400
#                                    CPU-seconds, nearly all of it builds; 10 min 14 s measured
#                                    on 2026-12-06 with the table crate and everything over it
#                                    rebuilding)
#
# Environment:
#   KOMPAKT_DEMO_DIR   where the generated data and outputs go (default: target/demo). The
#                      folder is emptied first, so it must be new, empty or an earlier demo's.
#   KOMPAKT_DEMO_ROWS  rows of the generated tables (default 2000000)
#   CARGO_TARGET_DIR   cargo's target folder, as for cargo itself (default: target/)
set -euo pipefail
CALLER_DIR="$PWD"
cd "$(dirname "$0")/.."
ROOT="$PWD"
# Relative folders in the environment are taken from where the demo was started.
case "${CARGO_TARGET_DIR:-}" in "" | /*) ;; *) export CARGO_TARGET_DIR="$CALLER_DIR/$CARGO_TARGET_DIR" ;; esac
source scripts/setup.sh

ROWS="${KOMPAKT_DEMO_ROWS:-2000000}"
if ! [[ "$ROWS" =~ ^[0-9]+$ ]] || [ "$ROWS" -lt 1000 ]; then
  echo "KOMPAKT_DEMO_ROWS must be a whole number of at least 1000, not '$ROWS'" >&2
  exit 2
fi
OUT="${KOMPAKT_DEMO_DIR:-$ROOT/target/demo}"
case "$OUT" in /*) ;; *) OUT="$CALLER_DIR/$OUT" ;; esac
# The demo empties its folder: never a chosen one that holds anything but an earlier demo's files.
if [ -n "${KOMPAKT_DEMO_DIR:-}" ] && [ -d "$OUT" ] && [ -n "$(ls -A "$OUT")" ] && [ ! -f "$OUT/.kompakt-demo" ]; then
  echo "KOMPAKT_DEMO_DIR=$OUT is not empty and is not an earlier demo's folder; choose another" >&2
  exit 2
fi

echo "== building kompakt (release; minutes the first time, cargo shows its progress)"
# The whole workspace, as the README's `cargo build --release` builds it: one set of features
# for every crate, so neither that command nor the C library the R package links rebuilds
# anything afterwards.
cargo build --release --locked
# The binary is in cargo's target folder: CARGO_TARGET_DIR, a cargo config's build.target-dir,
# or target/.
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps --locked | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
K="$TARGET_DIR/release/kompakt"
[ -x "$K" ] || { echo "the build did not leave $K" >&2; exit 1; }

rm -rf "$OUT" && mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
touch "$OUT/.kompakt-demo"
cd "$OUT"

echo "== generating data in $OUT ($ROWS rows; pure Python, a few seconds per million rows)"
"$PY" "$ROOT/scripts/gen_demo_data.py" data --rows "$ROWS"
ls -l data

echo; echo "== compress with the default level (21 = zstd:1), all cores"
for f in table.bin log.txt floats.f64; do "$K" compress "data/$f" -o "$f.kpk"; done
echo; echo "== typed data: element size 8 turns on byte shuffle; delta suits sorted ids"
"$K" compress data/ids.i64 -o ids-plain.kpk
"$K" compress data/ids.i64 -o ids-shuffle.kpk --typesize 8
"$K" compress data/ids.i64 -o ids-delta.kpk --typesize 8 --filter delta
"$K" compress data/ids.i64 -o ids-auto.kpk --typesize 8 --codec auto

echo; echo "== inspect"
"$K" inspect table.bin.kpk
"$K" inspect ids-delta.kpk

# 40 bytes from byte 10,000,000 (from the middle when the table is smaller than that).
size=$(stat -c %s data/table.bin)
start=$(( size >= 20000000 ? 10000000 : size / 2 ))
end=$(( start + 40 ))
echo; echo "== random access: bytes $start..$end of the table, decoding one block"
"$K" cat table.bin.kpk --range "$start:$end" | od -A d -t x1 | head -3
"$PY" - "$K" "$OUT" "$start" "$end" <<'PY'
import subprocess
import sys

kompakt, out, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(f"{out}/data/table.bin", "rb") as f:
    want = f.read()[start:end]
got = subprocess.run(
    [kompakt, "cat", f"{out}/table.bin.kpk", "-r", f"{start}:{end}"], check=True, capture_output=True
).stdout
assert got == want, "random access returned wrong bytes"
print("range matches the original bytes")
PY

echo; echo "== round trips (file and pipe) must give identical bytes"
"$K" decompress table.bin.kpk -o table.out
cmp data/table.bin table.out && echo "table.bin: identical"
"$K" compress - -q < data/log.txt | "$K" decompress - | cmp - data/log.txt && echo "log.txt through a pipe: identical"

echo; echo "== verify; then flip one byte and verify again (exit code 1 = damaged)"
"$K" verify table.bin.kpk ids-delta.kpk
cp table.bin.kpk damaged.kpk
"$PY" -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=1; open(p,'wb').write(b)" damaged.kpk
set +e; "$K" verify damaged.kpk; rc=$?; set -e
echo "verify exit code: $rc"
[ "$rc" = 1 ]

echo; echo "== bench: codecs on the table's column bytes (in memory, 1 and 2 threads)"
"$K" bench data/table.bin --codecs lz4,zstd:1,zstd:3,auto --typesize 1 --seconds 0.3 -q
echo; echo "== JVM: the jar (the JNI library inside; Maven fetches Spark for the codec's build the"
echo "   first time), then kompakt from Java on the table file"
# Not in a subshell: kompakt_jar exports KOMPAKT_JAR, the jar's path.
pushd "$ROOT" >/dev/null
kompakt_jar "$TARGET_DIR"
popd >/dev/null
java -cp "$KOMPAKT_JAR" "$ROOT/scripts/DemoJava.java" data/table.bin
"$K" decompress data/table.bin.java.kpk -o table.from-java.bin && cmp data/table.bin table.from-java.bin &&
  echo "the CLI reads Java's file: identical"

echo; echo "== Python: pip install . (maturin builds the extension, several minutes the first time;"
echo "   cargo's progress follows), then save/load objects"
"$PY" -m pip install -v "$ROOT[test,spark]"
echo
"$PY" "$ROOT/scripts/demo_python.py" "$OUT" "$ROWS"

echo; echo "== Spark from PySpark: one shuffle-heavy job with Spark's lz4 and with kompakt as its codec"
"$PY" "$ROOT/scripts/demo_spark.py" "$OUT/spark" "${KOMPAKT_DEMO_SPARK_ROWS:-2000000}"

echo; echo "== R: R CMD INSTALL r/kompakt (R from Debian when missing), then save and read an R object"
(cd "$ROOT" && kompakt_r_setup "$TARGET_DIR")
R_LIBS="$TARGET_DIR/R-library" Rscript -e '
library(kompakt)
frame <- data.frame(id = seq_len(1e6), price = round(runif(1e6, 1, 100), 2),
                    city = factor(sample(c("Oslo", "Lima", "Quito"), 1e6, TRUE)))
t_save <- system.time(kpk_save(frame, "frame.kpk"))[["elapsed"]]
t_rds <- system.time(saveRDS(frame, "frame.rds", compress = FALSE))[["elapsed"]]
t_read <- system.time(back <- kpk_read("frame.kpk"))[["elapsed"]]
cat(sprintf("kpk_save %.2f s (%.1f MB) | saveRDS(compress = FALSE) %.2f s (%.1f MB) | kpk_read %.2f s, identical: %s\n",
            t_save, file.size("frame.kpk") / 1e6, t_rds, file.size("frame.rds") / 1e6, t_read, identical(back, frame)))
'
"$K" verify frame.kpk
"$PY" -c 'import kompakt; kompakt.load("frame.kpk")' 2>&1 | tail -n 1 || true

echo; echo "demo done: outputs in $OUT"
