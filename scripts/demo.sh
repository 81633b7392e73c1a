#!/usr/bin/env bash
# The main job: build kompakt and show it end to end on generated data.
#   bash scripts/demo.sh            (about 4 minutes on 2 cores, most of it the first builds)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

echo "== building kompakt (release)"
cargo build --release --locked -p kompakt-cli
K="$PWD/target/release/kompakt"
OUT="${KOMPAKT_DEMO_DIR:-$PWD/target/demo}"
rm -rf "$OUT" && mkdir -p "$OUT"
cd "$OUT"

echo "== generating data in $OUT"
"$PY" "$OLDPWD/scripts/gen_demo_data.py" data --rows "${KOMPAKT_DEMO_ROWS:-2000000}"
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

echo; echo "== random access: bytes 10,000,000..10,000,040 of the table, decoding one block"
"$K" cat table.bin.kpk --range 10000000:10000040 | od -A d -t x1 | head -3
"$PY" - "$OUT" <<'PY'
import subprocess, sys
out = sys.argv[1]
want = open(f"{out}/data/table.bin", "rb").read()[10_000_000:10_000_040]
got = subprocess.run([f"{out}/../release/kompakt", "cat", f"{out}/table.bin.kpk", "-r", "10000000:10000040"],
                     check=True, capture_output=True).stdout
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
echo; echo "== Python: pip install . (builds the extension), then save/load objects"
"$PY" -m pip install --quiet "$OLDPWD[test]"
"$PY" "$OLDPWD/scripts/demo_python.py" "$OUT" "${KOMPAKT_DEMO_ROWS:-2000000}"
echo; echo "demo done: outputs in $OUT"
