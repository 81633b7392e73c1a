#!/usr/bin/env python3
"""Dask over many table files: ``kompakt.dask.read_table`` against ``dask.dataframe.read_parquet``
(pyarrow, zstd) on the same ``distributed.LocalCluster`` (2 worker processes, 1 thread each), in
one run.

    .venv/bin/python bench/dask_tables.py                      10 files x 5 M rows
    .venv/bin/python bench/dask_tables.py --files 4 --rows 1000000 --rounds 1

The data is bench/table.py's ``fst`` columns (Logical, Integer, Real, Factor) plus a sorted
timestamp ``ts`` (one per second) and an unsorted but clustered ``sensor`` (int32: the rows come
in blocks of 100,000 from one sensor each, the sensors in shuffled order), one file per 5 M
rows, written once as kompakt
(``write_table(..., sorted_by="ts")``) and as Parquet (``pyarrow.parquet.write_table(...,
compression="zstd")``, pyarrow's default row groups). Each partition is read on the workers and
reduced on the workers to its row count (an opaque function, so every column of the read is
materialized; only the counts reach the client):

- ``full``: every column and row;
- ``2 columns``: ``Integer`` and ``Real``;
- ``1 % filter``: rows whose ``ts`` falls in a window of 1 % of the time range, every column;
- ``1 % sensors``: rows of 1 % of the sensors (``sensor in [...]``), every column: skipped by
  row-group statistics in both formats, since ``sensor`` is no sort key.

``MB read`` is what the worker processes read from files (``rchar`` of /proc/PID/io, page cache
included), against the total size of the files. Figures are medians over the rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import MB, logger  # noqa: E402
from table import gen_batches  # noqa: E402


def rchar(pid: int) -> int:
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


T0 = 1_700_000_000  # seconds; one row per second across all files


def dataset_dirs(data_dir: str, files: int, rows: int) -> tuple[str, str]:
    """The folders of the kompakt files and of the Parquet files (v2: with the sensor column)."""
    return os.path.join(data_dir, f"kompakt-v2-{files}x{rows}"), os.path.join(data_dir, f"parquet-v2-{files}x{rows}")


def ts_window(files: int, rows: int):
    """The bounds of a window of 1 % of the rows' time range, in its middle (as datetimes)."""
    import numpy as np
    import pyarrow as pa

    total = files * rows
    lo = np.datetime64(T0 + total // 2, "s").astype("datetime64[ns]")
    hi = np.datetime64(T0 + total // 2 + total // 100, "s").astype("datetime64[ns]")
    return pa.scalar(lo, pa.timestamp("ns")).as_py(), pa.scalar(hi, pa.timestamp("ns")).as_py()


def rows_of(frame) -> int:
    """A partition's row count, the partition read whole (an opaque function: Dask cannot
    answer it from metadata, nor drop columns)."""
    return len(frame)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--rows", type=int, default=5_000_000, help="rows per file")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data", "dask"))
    a = ap.parse_args()
    log = logger("dask", time.time())

    import dask.dataframe as dd
    import distributed
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    import kompakt
    import kompakt.dask

    kdir, pdir = dataset_dirs(a.data_dir, a.files, a.rows)
    total = a.files * a.rows
    block = 100_000
    sensors = np.random.default_rng(34).permutation(-(-total // block)).astype(np.int32)
    if not os.path.isdir(pdir) or len(os.listdir(pdir)) != a.files:
        os.makedirs(kdir, exist_ok=True)
        os.makedirs(pdir, exist_ok=True)
        for i, batch in enumerate(gen_batches("fst", a.files * a.rows, a.rows)):
            ts = pa.array(np.arange(T0 + i * a.rows, T0 + (i + 1) * a.rows) * 1_000_000_000, pa.timestamp("ns"))
            rows = np.arange(i * a.rows, (i + 1) * a.rows)
            table = (
                pa.Table.from_batches([batch])
                .append_column("ts", ts)
                .append_column("sensor", pa.array(sensors[rows // block]))
            )
            kompakt.write_table(table, os.path.join(kdir, f"part-{i:03d}.kpk"), sorted_by="ts")
            pq.write_table(table, os.path.join(pdir, f"part-{i:03d}.parquet"), compression="zstd")
            log(f"wrote file {i + 1} of {a.files}")
    sizes = {
        "kompakt": sum(os.path.getsize(os.path.join(kdir, f)) for f in os.listdir(kdir)),
        "parquet": sum(os.path.getsize(os.path.join(pdir, f)) for f in os.listdir(pdir)),
    }
    lo_ts, hi_ts = ts_window(a.files, a.rows)
    window = [("ts", ">=", lo_ts), ("ts", "<", hi_ts)]
    some = [("sensor", "in", [int(x) for x in sensors[: max(1, len(sensors) // 100)]])]

    reads = {
        ("kompakt", "full"): lambda: kompakt.dask.read_table(kdir),
        ("parquet", "full"): lambda: dd.read_parquet(pdir),
        ("kompakt", "2 columns"): lambda: kompakt.dask.read_table(kdir, ["Integer", "Real"]),
        ("parquet", "2 columns"): lambda: dd.read_parquet(pdir, columns=["Integer", "Real"]),
        ("kompakt", "1 % filter"): lambda: kompakt.dask.read_table(kdir, filters=window),
        ("parquet", "1 % filter"): lambda: dd.read_parquet(pdir, filters=window),
        ("kompakt", "1 % sensors"): lambda: kompakt.dask.read_table(kdir, filters=some),
        ("parquet", "1 % sensors"): lambda: dd.read_parquet(pdir, filters=some),
    }
    rows = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        with distributed.Client(c) as client:
            pids = list(client.run(os.getpid).values())
            for (method, op), make in reads.items():
                runs = []
                # A first, untimed round: the workers import the readers (whose module files
                # would count as bytes read) and the page cache holds the files.
                for r in range(a.rounds + 1):
                    before = sum(rchar(p) for p in pids)
                    start = time.perf_counter()
                    # Each partition read whole on a worker; only its row count comes back.
                    n = int(make().map_partitions(rows_of, meta=(None, "i8")).sum().compute())
                    seconds = time.perf_counter() - start
                    read = sum(rchar(p) for p in pids) - before
                    if r > 0:
                        runs.append((seconds, read, n))
                row = {
                    "method": method,
                    "op": op,
                    "seconds": statistics.median(r[0] for r in runs),
                    "mb_read": statistics.median(r[1] for r in runs) / MB,
                    "rows": runs[0][2],
                    "file_mb": sizes[method] / MB,
                }
                rows.append(row)
                log(
                    f"{op:10} {method:8} {row['seconds']:7.2f} s  {row['mb_read']:8.1f} MB read "
                    f"of {row['file_mb']:.0f} MB ({100 * row['mb_read'] / row['file_mb']:.1f} %), {row['rows']} rows"
                )
    print("| read | method | s | MB read | of the files | rows |\n|--|--|--:|--:|--:|--:|")
    for r in rows:
        share = 100 * r["mb_read"] / r["file_mb"]
        print(
            f"| {r['op']} | {r['method']} | {r['seconds']:.2f} | {r['mb_read']:.1f} | {share:.1f} % of "
            f"{r['file_mb']:.0f} MB | {r['rows']} |"
        )


if __name__ == "__main__":
    main()
