#!/usr/bin/env python3
"""Ray Data over many table files: ``kompakt.ray.read_table`` against ``ray.data.read_parquet``
(pyarrow, zstd) on the same local Ray cluster (2 CPUs), in one run.

    .venv/bin/python bench/ray_tables.py                      10 files x 5 M rows
    .venv/bin/python bench/ray_tables.py --files 4 --rows 1000000 --rounds 1

The files are bench/dask_tables.py's (run it first to write them: the fst columns, a sorted
timestamp ``ts`` and a clustered ``sensor``, as kompakt and as Parquet). Each read is reduced on
the workers to the row count of each block (a ``map_batches`` over every column read, so
nothing is answered from metadata), then summed:

- ``full``: every column and row;
- ``2 columns``: ``Integer`` and ``Real``;
- ``1 % filter``: rows whose ``ts`` falls in a window of 1 % of the time range, every column
  (kompakt: ``filters=``; Parquet: ``.filter(expr=...)`` of ``ray.data.expressions``, which
  Ray pushes down into its Parquet reader).

One untimed round first (workers start, imports, page cache); then the median of the rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import logger  # noqa: E402
from dask_tables import dataset_dirs, ts_window  # noqa: E402


def rows_of(batch):
    return {"n": [batch.num_rows]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--rows", type=int, default=5_000_000, help="rows per file")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data", "dask"))
    a = ap.parse_args()
    log = logger("ray", time.time())

    import ray
    import ray.data
    from ray.data.expressions import col

    import kompakt.ray

    kdir, pdir = dataset_dirs(a.data_dir, a.files, a.rows)
    if not os.path.isdir(pdir):
        sys.exit(f"no data in {pdir}: run bench/dask_tables.py --files {a.files} --rows {a.rows} first")
    lo_ts, hi_ts = ts_window(a.files, a.rows)
    window = [("ts", ">=", lo_ts), ("ts", "<", hi_ts)]
    expr = (col("ts") >= lo_ts) & (col("ts") < hi_ts)

    reads = {
        ("kompakt", "full"): lambda: kompakt.ray.read_table(kdir),
        ("parquet", "full"): lambda: ray.data.read_parquet(pdir),
        ("kompakt", "2 columns"): lambda: kompakt.ray.read_table(kdir, ["Integer", "Real"]),
        ("parquet", "2 columns"): lambda: ray.data.read_parquet(pdir, columns=["Integer", "Real"]),
        ("kompakt", "1 % filter"): lambda: kompakt.ray.read_table(kdir, filters=window),
        ("parquet", "1 % filter"): lambda: ray.data.read_parquet(pdir).filter(expr=expr),
    }
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    rows = []
    for (method, op), make in reads.items():
        runs = []
        for r in range(a.rounds + 1):
            start = time.perf_counter()
            n = int(make().map_batches(rows_of, batch_format="pyarrow").sum("n"))
            if r > 0:
                runs.append(time.perf_counter() - start)
        rows.append((op, method, statistics.median(runs), n))
        log(f"{op:10} {method:8} {rows[-1][2]:7.2f} s  {n} rows")
    ray.shutdown()
    print("| read | method | s | rows |\n|--|--|--:|--:|")
    for op, method, seconds, n in rows:
        print(f"| {op} | {method} | {seconds:.2f} | {n} |")


if __name__ == "__main__":
    main()
