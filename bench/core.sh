#!/usr/bin/env bash
# Core-engine benchmark of kompakt, in one command:
#
#   bash bench/core.sh
#
# builds kompakt (release), installs zstd, lz4 and GNU time if missing, generates the inputs
# in bench/data/ if absent (bench/gen_data.py), then measures and writes
#   bench/results/core.md        the report
#   bench/results/core.json      the summary figures the report is made from
#   bench/results/core/          raw outputs (kompakt bench JSON, zstd/lz4 -b output, timings)
#
# Environment knobs (defaults in brackets):
#   BENCH_SECONDS [0.5]    --seconds per kompakt bench measurement (best run counts) for the
#                          filter and level-curve runs; six times that per codec timed alone
#   BENCH_TOOL_SECONDS [1] -i for zstd -b / lz4 -b (minimum evaluation seconds), and --seconds of
#                          the kompakt runs paired with them (same budget on both sides)
#   BENCH_SIZE_MB [256]    size of the typed inputs (mixed.bin: 10M rows at 256)
#   BENCH_BIG_GB [2]       size of big.bin for the peak-RSS test (0 skips the test)
#   BENCH_IDLE_WAIT [30]    seconds to wait, before each section, for other processes to go quiet
#   BENCH_RETRIES [1]      extra attempts of a section during which other processes used more
#   BENCH_BUSY_MAX [0.25]  than BENCH_BUSY_MAX cores (the best figure over attempts counts)
#   BENCH_PAIR_REPEAT [3]  rounds of kompakt-then-C-tool per codec and file (best counts)
#   BENCH_SKIP_BUILD [0]   1 = use the existing target/release/kompakt
#   BENCH_TMP [mktemp -d]  where whole-file outputs go (on disk)
#   BENCH_DATA, BENCH_RESULTS  other folders for the inputs and the results
#   BENCH_REMEASURE        e.g. "mixed.bin:lz4 int64_sorted.bin:zstd:1": measure only these
#                          kompakt/C-tool pairs again, with the binary of the last run, add them to
#                          its raw outputs (the best figure over all attempts counts) and rewrite
#                          the report; for pairs that a busy machine spoiled in every attempt
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
DATA=${BENCH_DATA:-$HERE/data}
RES=${BENCH_RESULTS:-$HERE/results}
RAW=$RES/core
SECS=${BENCH_SECONDS:-0.5}
TOOL_SECS=${BENCH_TOOL_SECONDS:-1}
SIZE_MB=${BENCH_SIZE_MB:-256}
BIG_GB=${BENCH_BIG_GB:-2}
IDLE_WAIT=${BENCH_IDLE_WAIT:-30}
RETRIES=${BENCH_RETRIES:-1}
PAIR_REPEAT=${BENCH_PAIR_REPEAT:-3}
REMEASURE=${BENCH_REMEASURE:-}
ATT_BASE=0
BUSY_MAX=${BENCH_BUSY_MAX:-0.25}
CODECS=none,lz4,lz4hc:9,zstd:1,zstd:3,zstd:9,auto
LEVELS=0,5,10,15,20,21,25,30,40,50,60,70,80,90,100
FILES=(mixed.bin float64_random.bin int64_sorted.bin)
PY=${PYTHON:-python3}
T0=$EPOCHREALTIME

log() { printf '[core.sh %6.0fs] %s\n' "$(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN{print b-a}')" "$*" >&2; }

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------
ensure_tools() {
    local missing=()
    command -v zstd >/dev/null || missing+=(zstd)
    command -v lz4 >/dev/null || missing+=(lz4)
    [[ -x /usr/bin/time ]] || missing+=(time)
    if ((${#missing[@]})); then
        log "installing ${missing[*]} from Debian"
        local sudo=()
        [[ $(id -u) -eq 0 ]] || sudo=(sudo)
        "${sudo[@]}" apt-get update -qq
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
            -o DPkg::Lock::Timeout=600 zstd lz4 time >/dev/null
    fi
    command -v "$PY" >/dev/null || { echo "core.sh: python3 is required" >&2; exit 1; }
    command -v cargo >/dev/null || { echo "core.sh: cargo is required" >&2; exit 1; }
}

# ---------------------------------------------------------------------------------------------
# Section bookkeeping: wait for a quiet machine, and record how much CPU other processes used
# while each section ran (the report flags sections measured on a busy machine).
# ---------------------------------------------------------------------------------------------
# measure NAME FUNCTION: runs FUNCTION (with $ATT = attempt number, used in its output names);
# when other processes used more than BENCH_BUSY_MAX cores meanwhile, measures again, up to
# BENCH_RETRIES more times. The report keeps the best figure over the attempts.
measure() {
    local name=$1 fn=$2 busy start end other
    for ((ATT = ATT_BASE; ATT <= ATT_BASE + RETRIES; ATT++)); do
        busy=$("$PY" "$HERE/machine.py" idle "$IDLE_WAIT")
        log "section $name, attempt $ATT (other load before start: $busy cores)"
        start=$("$PY" "$HERE/machine.py" snap $$)
        "$fn"
        end=$("$PY" "$HERE/machine.py" snap $$)
        printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$ATT" "$busy" "$start" "$end" >>"$RAW/sections.tsv"
        other=$("$PY" "$HERE/machine.py" other "$start" "$end")
        if awk -v o="$other" -v m="$BUSY_MAX" 'BEGIN { exit !(o <= m) }'; then
            break
        fi
        log "section $name: other processes used $other cores while it ran"
    done
}

# ---------------------------------------------------------------------------------------------
# Timing of whole commands (wall clock), output to the temp dir
# ---------------------------------------------------------------------------------------------
# time_runs NAME TOOL THREADS KIND INPUT OUTPUT RUNS -- command...
# appends one line per run to cli.tsv: name tool threads kind input_bytes output_bytes seconds
time_runs() {
    local name=$1 tool=$2 threads=$3 kind=$4 input=$5 output=$6 runs=$7
    shift 8
    local i s e
    for ((i = 0; i < runs; i++)); do
        rm -f "$output"
        s=$EPOCHREALTIME
        "$@"
        e=$EPOCHREALTIME
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$tool" "$threads" "$kind" \
            "$(stat -c %s "$input")" "$(stat -c %s "$output")" \
            "$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.4f", b-a}')" >>"$RAW/cli.tsv"
    done
}

# ---------------------------------------------------------------------------------------------
ensure_tools
mkdir -p "$DATA" "$RES"
TMP=${BENCH_TMP:-$(mktemp -d /tmp/kompakt-bench.XXXXXX)}
mkdir -p "$TMP"
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT
if [[ -z $REMEASURE ]]; then
    rm -rf "$RAW"
    mkdir -p "$RAW/bin"

    log "building kompakt (release)"
    if [[ ${BENCH_SKIP_BUILD:-0} != 1 ]]; then
        (cd "$ROOT" && cargo build --release -p kompakt-cli --bin kompakt)
    fi
    # Measure a private copy: a rebuild by someone else during the run must not change the binary.
    cp "$ROOT/target/release/kompakt" "$RAW/bin/kompakt"
    K=$RAW/bin/kompakt
    # The codecs alone (section d's yardstick) is a bench target of the core crate; cargo names
    # its binary.
    bench_bin=$(cd "$ROOT" && cargo bench -p kompakt --bench codec_scaling --no-run --message-format=json |
        "$PY" -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "codec_scaling" and m.get("executable"):
        print(m["executable"])')
    cp "$bench_bin" "$RAW/bin/codec_scaling"
    {
        echo "kompakt_version=$("$K" --version)"
        echo "git_head=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
        echo "git_dirty_files=$(git -C "$ROOT" status --porcelain -- crates Cargo.toml Cargo.lock 2>/dev/null | wc -l)"
        echo "binary_sha256=$(sha256sum "$K" | cut -c1-16)"
        echo "seconds=$SECS"
        echo "tool_seconds=$TOOL_SECS"
        echo "pair_repeat=$PAIR_REPEAT"
        echo "started=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    } >"$RAW/build.txt"
    "$PY" "$HERE/machine.py" env >"$RAW/env.json"

    log "generating data (skipped when up to date)"
    "$PY" "$HERE/gen_data.py" --out "$DATA" --size-mb "$SIZE_MB" --big-gb "$BIG_GB" \
        --only "mixed,float64_random,int64_sorted,bytes_random$([[ $BIG_GB != 0 ]] && echo ,big)"
    # The level-curve slices: the first 50 MB of mixed.bin (its flag column and most of qty), and a
    # 50 MB table with every column (the first 1,612,903 rows of each column of mixed.bin).
    if [[ ! -s $DATA/mixed_head50.bin || $DATA/mixed_head50.bin -ot $DATA/mixed.bin ]]; then
        head -c 50000000 "$DATA/mixed.bin" >"$DATA/mixed_head50.bin"
    fi
    if [[ ! -s $DATA/mixed_rows50.bin || $DATA/mixed_rows50.bin -ot $DATA/mixed.bin ]]; then
        rows=$(($(stat -c %s "$DATA/mixed.bin") / 31))
        take=$((50000000 / 31))
        off=0
        : >"$DATA/mixed_rows50.bin.tmp"
        for w in 1 4 8 2 8 8; do
            dd if="$DATA/mixed.bin" iflag=skip_bytes,count_bytes skip=$off count=$((take * w)) bs=1M \
                status=none >>"$DATA/mixed_rows50.bin.tmp"
            off=$((off + rows * w))
        done
        mv "$DATA/mixed_rows50.bin.tmp" "$DATA/mixed_rows50.bin"
    fi
else
    [[ -x $RAW/bin/kompakt && -s $RAW/sections.tsv ]] || { echo "core.sh: no earlier run in $RAW to add to" >&2; exit 1; }
    K=$RAW/bin/kompakt
fi
PATHS=()
for f in "${FILES[@]}"; do PATHS+=("$DATA/$f"); done

# ---------------------------------------------------------------------------------------------
# a. kompakt bench, in memory, 1 MiB blocks, threads 1 and 2
# ---------------------------------------------------------------------------------------------
# Each kompakt codec is measured right next to the C tool at the same level (a "pair"), so both
# see the same machine load; a pair measured while other processes were busy is measured again.
PAIR_FILE= PAIR_CODEC=
kompakt_pair() {
    local tag=${PAIR_FILE%.bin}.${PAIR_CODEC//:/} rep s
    # k, C, k, C, ...: PAIR_REPEAT rounds each (one when a round takes over 30 s: slow codecs
    # average out the noise within a run); the best figure of each side counts.
    for ((rep = 1; rep <= PAIR_REPEAT; rep++)); do
        s=$EPOCHREALTIME
        "$K" bench "$DATA/$PAIR_FILE" --codecs "$PAIR_CODEC" --threads 1,2 --block-size 1M \
            --seconds "$TOOL_SECS" --unverified --json -q >"$RAW/kb_bytes.$tag.$ATT$rep.json"
        case $PAIR_CODEC in
            lz4) lz4 -q -b1 -e1 -i"$TOOL_SECS" -B1048576 "$DATA/$PAIR_FILE" >"$RAW/lz4_b1_${PAIR_FILE%.bin}.$ATT$rep.txt" 2>&1 ;;
            lz4hc:9) lz4 -q -b9 -e9 -i"$TOOL_SECS" -B1048576 "$DATA/$PAIR_FILE" >"$RAW/lz4_b9_${PAIR_FILE%.bin}.$ATT$rep.txt" 2>&1 ;;
            zstd:*)
                local l=${PAIR_CODEC#zstd:}
                zstd -q -b$l -e$l -T1 -i"$TOOL_SECS" -B1M "$DATA/$PAIR_FILE" >"$RAW/zstd_b${l}_T1_${PAIR_FILE%.bin}.$ATT$rep.txt" 2>&1
                ;;
        esac
        if awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN { exit !(b - a > 30) }'; then
            break
        fi
    done
}

# The codecs alone at 1 and 2 threads, in alternating rounds: how far this machine lets 2 threads
# scale at all, with no block stream around the codec (the yardstick of section d).
codec_scaling() {
    "$RAW/bin/codec_scaling" --seconds "$(awk -v s="$SECS" 'BEGIN { print 6 * s }')" "$DATA/mixed.bin" \
        "$DATA/int64_sorted.bin" >"$RAW/codec_scaling.$ATT.json"
}

kompakt_filters() {
    "$K" bench "$DATA/float64_random.bin" "$DATA/int64_sorted.bin" --codecs "$CODECS" --threads 1,2 \
        --typesize 8 --filter shuffle --block-size 1M --seconds "$SECS" --json -q >"$RAW/kb_shuffle8.$ATT.json"
    "$K" bench "$DATA/int64_sorted.bin" --codecs "$CODECS" --threads 1,2 \
        --typesize 8 --filter delta --block-size 1M --seconds "$SECS" --json -q >"$RAW/kb_delta8.$ATT.json"
}

# ---------------------------------------------------------------------------------------------
# b. (the 1-thread C tool figures are taken in the pairs above) zstd -b -T2 on whole files,
#    zstd's own multithreading, for reference
# ---------------------------------------------------------------------------------------------
c_tools_t2() {
    local f l
    for f in "${FILES[@]}"; do
        for l in 1 3; do
            zstd -q -b$l -e$l -T2 -i"$TOOL_SECS" "$DATA/$f" >"$RAW/zstd_b${l}_T2_${f%.bin}.$ATT.txt" 2>&1
        done
    done
}

# ---------------------------------------------------------------------------------------------
# e. incompressible data: default codec (unified level 21 = zstd:1) and auto vs memcpy, on the
#    random float64 (whose exponent bytes leave zstd's entropy stage ~6 % to gain) and on
#    uniformly random bytes (nothing to gain at all)
# ---------------------------------------------------------------------------------------------
incompressible() {
    "$K" bench "$DATA/float64_random.bin" "$DATA/bytes_random.bin" --codecs 21,auto --threads 1,2 \
        --block-size 1M --seconds 1 --json -q >"$RAW/kb_incompressible.$ATT.json"
}

# ---------------------------------------------------------------------------------------------
# c. whole-file CLI timings on mixed.bin, files on disk, best of 3 (of every attempt),
#    kompakt and the tool alternating
# ---------------------------------------------------------------------------------------------
cli() {
    local M=$DATA/mixed.bin i
    cat "$M" >/dev/null # page cache
    # kompakt and the tool alternate (k, t, k, t, k, t) so that both see the same machine speed.
    for i in 1 2 3; do
        time_runs k-zstd1-T1 kompakt 1 compress "$M" "$TMP/m.kpk" 1 -- "$K" compress -q -f --codec zstd:1 --threads 1 "$M" -o "$TMP/m.kpk"
        time_runs zstd1-T1 zstd 1 compress "$M" "$TMP/m.zst" 1 -- zstd -q -f -1 -T1 "$M" -o "$TMP/m.zst"
        time_runs zstd1-T1-fsync zstd 1 compress "$M" "$TMP/m.zst" 1 -- bash -c 'zstd -q -f -1 -T1 "$1" -o "$2" && sync "$2"' _ "$M" "$TMP/m.zst"
        time_runs k-zstd1-T1-stdout kompakt 1 compress "$M" "$TMP/m.kpk" 1 -- bash -c '"$1" compress -q --codec zstd:1 --threads 1 "$2" -o - >"$3"' _ "$K" "$M" "$TMP/m.kpk"
    done
    for i in 1 2 3; do
        time_runs k-zstd1-T2 kompakt 2 compress "$M" "$TMP/m.kpk" 1 -- "$K" compress -q -f --codec zstd:1 --threads 2 "$M" -o "$TMP/m.kpk"
        time_runs zstd1-T2 zstd 2 compress "$M" "$TMP/m.zst" 1 -- zstd -q -f -1 -T2 "$M" -o "$TMP/m.zst"
    done
    for i in 1 2 3; do
        time_runs k-lz4-T1 kompakt 1 compress "$M" "$TMP/m.kpk" 1 -- "$K" compress -q -f --codec lz4 --threads 1 "$M" -o "$TMP/m.kpk"
        time_runs lz4-1 lz4 1 compress "$M" "$TMP/m.lz4" 1 -- lz4 -q -f -1 "$M" "$TMP/m.lz4"
    done
    # decompression of files made by each tool at the same level
    "$K" compress -q -f --codec zstd:1 --threads 2 "$M" -o "$TMP/m.kpk"
    zstd -q -f -1 -T2 "$M" -o "$TMP/m.zst"
    for i in 1 2 3; do
        time_runs kd-zstd1-T1 kompakt 1 decompress "$TMP/m.kpk" "$TMP/m.out" 1 -- "$K" decompress -q -f --threads 1 "$TMP/m.kpk" -o "$TMP/m.out"
        time_runs kd-zstd1-T2 kompakt 2 decompress "$TMP/m.kpk" "$TMP/m.out" 1 -- "$K" decompress -q -f --threads 2 "$TMP/m.kpk" -o "$TMP/m.out"
        time_runs zstdd-1 zstd 1 decompress "$TMP/m.zst" "$TMP/m.out" 1 -- zstd -q -f -d "$TMP/m.zst" -o "$TMP/m.out"
        # kompakt fsyncs what it decompresses, zstd does not: each side also the other way.
        time_runs zstdd-1-fsync zstd 1 decompress "$TMP/m.zst" "$TMP/m.out" 1 -- bash -c 'zstd -q -f -d "$1" -o "$2" && sync "$2"' _ "$TMP/m.zst" "$TMP/m.out"
        time_runs kd-zstd1-T1-stdout kompakt 1 decompress "$TMP/m.kpk" "$TMP/m.out" 1 -- bash -c '"$1" decompress -q --threads 1 "$2" -o - >"$3"' _ "$K" "$TMP/m.kpk" "$TMP/m.out"
    done
    cmp "$M" "$TMP/m.out"
    "$K" compress -q -f --codec lz4 --threads 2 "$M" -o "$TMP/m.kpk"
    lz4 -q -f -1 "$M" "$TMP/m.lz4"
    for i in 1 2 3; do
        time_runs kd-lz4-T1 kompakt 1 decompress "$TMP/m.kpk" "$TMP/m.out" 1 -- "$K" decompress -q -f --threads 1 "$TMP/m.kpk" -o "$TMP/m.out"
        time_runs lz4d-1 lz4 1 decompress "$TMP/m.lz4" "$TMP/m.out" 1 -- lz4 -q -f -d "$TMP/m.lz4" "$TMP/m.out"
    done
    cmp "$M" "$TMP/m.out"
    rm -f "$TMP"/m.*
}

# ---------------------------------------------------------------------------------------------
# f. peak RSS for a ~2 GB input (default codec and threads), compress and decompress
# ---------------------------------------------------------------------------------------------
rss() {
    local B=$DATA/big.bin
    cat "$B" >/dev/null
    /usr/bin/time -v -o "$RAW/rss_compress.txt" "$K" compress -q -f "$B" -o "$TMP/big.kpk"
    /usr/bin/time -v -o "$RAW/rss_decompress.txt" "$K" decompress -q -f "$TMP/big.kpk" -o "$TMP/big.out"
    cmp "$B" "$TMP/big.out"
    rm -f "$TMP/big.out"
    /usr/bin/time -v -o "$RAW/rss_compress_auto.txt" "$K" compress -q -f --codec auto "$B" -o "$TMP/big.auto.kpk"
    /usr/bin/time -v -o "$RAW/rss_zstd_T2.txt" zstd -q -f -1 -T2 "$B" -o "$TMP/big.zst"
    /usr/bin/time -v -o "$RAW/rss_zstd_d.txt" zstd -q -f -d "$TMP/big.zst" -o "$TMP/big.out"
    stat -c %s "$B" "$TMP/big.kpk" "$TMP/big.zst" >"$RAW/rss_sizes.txt"
    rm -f "$TMP"/big.*
}

# ---------------------------------------------------------------------------------------------
# g. the unified level curve on 50 MB slices (d. scaling comes from a.)
# ---------------------------------------------------------------------------------------------
levels() {
    "$K" bench "$DATA/mixed_head50.bin" --codecs "$LEVELS" --threads 1 --block-size 1M \
        --seconds 0.3 --json -q >"$RAW/levels_head50.$ATT.json"
    "$K" bench "$DATA/mixed_rows50.bin" --codecs "$LEVELS" --threads 1 --block-size 1M \
        --seconds 0.3 --json -q >"$RAW/levels_rows50.$ATT.json"
}

if [[ -n $REMEASURE ]]; then
    ATT_BASE=$(($(wc -l <"$RAW/sections.tsv") + 1))
    for pair in $REMEASURE; do
        PAIR_FILE=${pair%%:*}
        PAIR_CODEC=${pair#*:}
        measure "pair ${PAIR_FILE%.bin} $PAIR_CODEC" kompakt_pair
    done
    echo "remeasured=$(date -u +%Y-%m-%dT%H:%M:%SZ) $REMEASURE" >>"$RAW/build.txt"
    "$PY" "$HERE/core_report.py" --raw "$RAW" --levels "$LEVELS" --out "$RES/core.md" --json "$RES/core.json"
    exit 0
fi

: >"$RAW/cli.tsv"
for PAIR_FILE in "${FILES[@]}"; do
    for PAIR_CODEC in none auto lz4 lz4hc:9 zstd:1 zstd:3 zstd:9; do
        measure "pair ${PAIR_FILE%.bin} $PAIR_CODEC" kompakt_pair
    done
done
measure codec-scaling codec_scaling
measure kompakt-filters kompakt_filters
measure c-tools-T2 c_tools_t2
measure incompressible incompressible
measure cli cli
if [[ $BIG_GB != 0 ]]; then
    RETRIES=0 measure rss rss # RSS does not depend on the load
fi
RETRIES=0 measure levels levels # the ratios are what matters here

echo "finished=$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$RAW/build.txt"
echo "wall_seconds=$(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.0f", b-a}')" >>"$RAW/build.txt"
log "writing the report"
"$PY" "$HERE/core_report.py" --raw "$RAW" --levels "$LEVELS" --out "$RES/core.md" --json "$RES/core.json"
log "done: $RES/core.md"
