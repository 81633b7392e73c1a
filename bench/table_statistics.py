#!/usr/bin/env python3
"""Row-group statistics: what they cost to write and what they save on filtered reads, in one run.

    .venv/bin/python bench/table_statistics.py                 10 M rows per dataset
    .venv/bin/python bench/table_statistics.py --rows 1000000 --repeats 2

Write cost: each of bench/table.py's ``fst``, ``strings`` and ``sorted`` tables is written with
``kompakt.write_table(..., statistics=True)`` and ``statistics=False`` in turn (best of
``--repeats``, page cache warm, no fsync), and the file sizes compared.

Filtered reads: ``kompakt.read_batches(path, filters=...)`` against
``pyarrow.parquet.read_table(path, filters=...)`` (zstd, pyarrow's default row groups of 1 Mi
rows, its own statistics) on the same rows, for

- ``sorted``'s ``reading`` (a random walk: unsorted, but each row group spans a narrow range)
  above its 99th percentile: the case statistics are for;
- ``fst``'s ``Integer`` (uniform 1..100, every row group holds every value) equal to 42: nothing
  can be skipped, so this shows what reading the statistics costs.

``groups read`` is the share of row groups the plan keeps (kompakt) or that pyarrow's fragment
keeps after its statistics (Parquet). Times are the best of ``--repeats``.

The same filters as Polars predicates: ``kompakt.polars.scan_table(path).filter(...)`` against
``polars.scan_parquet(parquet).filter(...)``, collected (Polars skips by its statistics too).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import MB, logger  # noqa: E402
from table import gen_batches  # noqa: E402


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data", "statistics"))
    a = ap.parse_args()
    log = logger("statistics", time.time())

    import numpy as np
    import polars as pl
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    import kompakt
    import kompakt.polars
    from kompakt._plan import plan

    os.makedirs(a.data_dir, exist_ok=True)
    tables = {
        name: pa.Table.from_batches(list(gen_batches(name, a.rows, 1 << 20))) for name in ("fst", "strings", "sorted")
    }
    print(f"{a.rows:,} rows per table, best of {a.repeats}\n")
    print("| table | file without | statistics add | write without | write with | with / without |")
    print("|--|--:|--:|--:|--:|--:|")
    paths = {}
    for name, table in tables.items():
        sizes, times = {}, {}
        for stats in (False, True):
            path = os.path.join(a.data_dir, f"{name}-{stats}.kpk")
            times[stats] = best(
                lambda path=path, stats=stats: kompakt.write_table(table, path, statistics=stats), a.repeats
            )
            sizes[stats] = os.path.getsize(path)
            paths[name] = path
        log(f"{name}: write {times[False]:.3f} s without, {times[True]:.3f} s with")
        print(
            f"| {name} | {sizes[False] / MB:.1f} MB | {(sizes[True] - sizes[False]) / 1e3:.1f} kB "
            f"({100 * (sizes[True] - sizes[False]) / sizes[False]:.2f} %) | {times[False]:.3f} s | "
            f"{times[True]:.3f} s | {times[True] / times[False]:.3f}x |"
        )

    cases = {
        "sorted: reading > p99": (
            "sorted",
            "reading",
            ">",
            float(np.quantile(tables["sorted"].column("reading"), 0.99)),
        ),
        "fst: Integer == 42": ("fst", "Integer", "==", 42),
    }
    print(
        "\n| filter | rows kept | kompakt groups read | kompakt | Parquet groups read | Parquet | kompakt / Parquet |"
    )
    print("|--|--:|--:|--:|--:|--:|--:|")
    polars_rows = []
    for label, (name, column, op, value) in cases.items():
        path = paths[name]
        parquet = os.path.join(a.data_dir, f"{name}.parquet")
        pq.write_table(tables[name], parquet, compression="zstd")
        filters = [(column, op, value)]
        t = kompakt.TableFile(path)
        kept = sum(b - a for p in plan(path, None, filters) for a, b in p.row_ranges())
        k_share = kept / t.num_rows
        fragment = next(ds.dataset(parquet).get_fragments())
        expr = pc.field(column) > value if op == ">" else pc.field(column) == value
        p_groups = len(fragment.split_by_row_group(expr))
        p_share = p_groups / pq.ParquetFile(parquet).num_row_groups
        rows = {}

        def read_kompakt(path=path, filters=filters):
            rows["kompakt"] = kompakt.read_batches(path, None, filters).read_all().num_rows

        def read_parquet(parquet=parquet, filters=filters):
            rows["parquet"] = pq.read_table(parquet, filters=filters).num_rows

        k_time = best(read_kompakt, a.repeats)
        p_time = best(read_parquet, a.repeats)
        assert rows["kompakt"] == rows["parquet"], rows
        log(f"{label}: kompakt {k_time:.3f} s ({100 * k_share:.1f} % of groups), Parquet {p_time:.3f} s")
        print(
            f"| {label} | {rows['kompakt']:,} | {100 * k_share:.1f} % | {k_time:.3f} s | {100 * p_share:.0f} % | "
            f"{p_time:.3f} s | {k_time / p_time:.2f}x |"
        )
        predicate = pl.col(column) > value if op == ">" else pl.col(column) == value

        def scan_kompakt(path=path, predicate=predicate):
            rows["kompakt"] = kompakt.polars.scan_table(path).filter(predicate).collect().height

        def scan_parquet(parquet=parquet, predicate=predicate):
            rows["parquet"] = pl.scan_parquet(parquet).filter(predicate).collect().height

        k_time = best(scan_kompakt, a.repeats)
        p_time = best(scan_parquet, a.repeats)
        assert rows["kompakt"] == rows["parquet"], rows
        log(f"{label}, Polars: kompakt {k_time:.3f} s, Parquet {p_time:.3f} s")
        polars_rows.append(f"| {label} | {k_time:.3f} s | {p_time:.3f} s | {k_time / p_time:.2f}x |")
    print("\n| Polars predicate | kompakt scan_table | scan_parquet | kompakt / Parquet |")
    print("|--|--:|--:|--:|")
    print("\n".join(polars_rows))


if __name__ == "__main__":
    main()
