#!/usr/bin/env python3
"""Rows by number: a take of 1000 random rows x 2 columns, kompakt against Vortex, Lance and
Parquet, in one run; with ``--op slice``, 1000 rows in a row (from the middle of the table)
instead, Feather and the CLI's ``head`` included.

    .venv/bin/python bench/take.py                 the fst-blog table, 10 M rows, 3 rounds
    .venv/bin/python bench/take.py --rows 1000000 --rounds 1
    .venv/bin/python bench/take.py --op slice --rounds 21

The table is bench/table.py's ``fst`` dataset (cached in bench/data/table/), written once per
format with library defaults: kompakt (``write_table``), Vortex (``vortex.io.write``), Lance
(``lance.write_dataset``) and Parquet (``pyarrow.parquet.write_table``). The rows are 1000
distinct random positions (fixed seed), sorted (Vortex requires sorted indices; every format
gets the same list), of the columns ``Real`` and ``Factor``.

Each format runs in a fresh process per round: ``first`` is the first take after the imports
(opening the file included; pyarrow and numpy are imported before), ``warm`` the median of 20
more, each a whole call as a user writes it, opening the file by path (each library keeps what
caches it keeps):

- kompakt: ``kompakt.read_table(path, ["Real", "Factor"], rows=indices, to="arrow")``
- Vortex: ``vortex.open(path).scan(["Real", "Factor"], indices=vortex.array(pa.array(indices))).read_all()``
- Lance: ``lance.dataset(path).take(indices, columns=["Real", "Factor"])``
- Parquet (no take of its own): ``pq.read_table(path, columns=[...]).take(indices)``

Slices (``--op slice``, rows [rows/2, rows/2 + 1000)) read the way bench/table.py's slice
column does: kompakt ``read_table(path, cols, rows=slice(a, b), to="arrow")``, Feather its IPC
batches (memory-mapped, the two fields only), Parquet the row groups covering the rows,
Vortex ``to_repeated_scan(cols).execute(row_range=(a, b))``, Lance ``to_table(offset, limit)``.
``kompakt-cli`` runs the native ``kompakt head -q -n 1000 --columns Real,Factor`` (the first
1000 rows; ``KOMPAKT_BIN``, else target/release/kompakt) as a process per round: its "first"
is the process's wall time less that of ``kompakt --version`` (starting the process), its
"warm" that of ``kompakt --version``.

Every result is checked against the original's rows (the CLI's only by its exit status).
Figures are medians over the rounds; with many rounds the 10th and 90th percentiles too, since
first calls on this VM are bimodal (the kernel backs fresh memory slowly at times).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from common import MB, logger, machine_info  # noqa: E402
from table import ensure_dataset, load_dataset  # noqa: E402

COLUMNS = ["Real", "Factor"]
TAKE = 1000
WARM_CALLS = 20
METHODS = ["kompakt", "vortex", "lance", "parquet"]
SLICE_METHODS = ["kompakt", "kompakt-cli", "feather", "parquet", "vortex", "lance"]

WORKER = (
    r"""
import json, sys, time
import numpy as np
import pyarrow as pa  # every method returns Arrow: its import is not the take's
method, path = sys.argv[1], sys.argv[2]
rows, take_rows, warm_calls = (int(v) for v in sys.argv[3:6])
cols = json.loads(sys.argv[6])
op, here = sys.argv[7], sys.argv[8]
indices = np.sort(np.random.default_rng(42).choice(rows, size=take_rows, replace=False))
a, b = rows // 2, rows // 2 + take_rows
if op == "slice":
    sys.path.insert(0, here)
    import table as bench_table
    take = {
        "feather": lambda: bench_table.feather_slice_ipc(path, cols, a, b),
        "parquet": lambda: bench_table.parquet_slice(path, cols, a, b),
        "vortex": lambda: bench_table.vortex_slice_range(path, cols, a, b),
        "lance": lambda: bench_table.lance_slice_offset(path, cols, a, b),
    }.get(method)
    if method == "kompakt":
        import kompakt
        take = lambda: kompakt.read_table(path, cols, rows=slice(a, b), to="arrow")
    # What the slice functions import, imported before the clock starts.
    import pyarrow.ipc, pyarrow.parquet
    if method == "vortex":
        import vortex
    elif method == "lance":
        import lance
elif method == "kompakt":
    import kompakt
    take = lambda: kompakt.read_table(path, cols, rows=indices, to="arrow")
elif method == "vortex":
    import vortex as vx
    take = lambda: vx.open(path).scan(cols, indices=vx.array(pa.array(indices))).read_all().to_arrow_table()
elif method == "lance":
    import lance
    take = lambda: lance.dataset(path).take(indices, columns=cols)
else:
    import pyarrow.parquet as pq
    take = lambda: pq.read_table(path, columns=cols).take(indices)
t0 = time.perf_counter(); first = take(); t_first = time.perf_counter() - t0
warm = []
for _ in range(warm_calls):
    t0 = time.perf_counter(); got = take(); warm.append(time.perf_counter() - t0)
real = [float(v) for v in got.column("Real").to_pylist()]
factor = [str(v) for v in got.column("Factor").to_pylist()]
print(json.dumps({"first": t_first, "warm": sorted(warm)[len(warm) // 2], "real": real, "factor": factor}))
""".replace("TAKE", str(TAKE))
    .replace("COLUMNS", repr(COLUMNS))
    .replace("WARM_CALLS", str(WARM_CALLS))
)


def write(method: str, table, path: str) -> None:
    if method in ("kompakt", "kompakt-cli"):
        import kompakt

        kompakt.write_table(table, path)
    elif method == "vortex":
        import vortex as vx

        vx.io.write(table, path)
    elif method == "lance":
        import lance

        lance.write_dataset(table, path)
    elif method == "feather":
        import pyarrow.feather as feather

        feather.write_feather(table, path)
    else:
        import pyarrow.parquet as pq

        pq.write_table(table, path)


def size_of(path: str) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cli_binary() -> str:
    """The native CLI (``KOMPAKT_BIN``, else the release build): the Python package's
    ``kompakt`` entry point would time Python's start-up instead."""
    built = os.path.join(os.path.dirname(HERE), "target", "release", "kompakt")
    return os.environ.get("KOMPAKT_BIN") or (built if os.path.exists(built) else "kompakt")


def cli_round(path: str) -> tuple[float, float]:
    """One process of ``kompakt head`` and one of ``kompakt --version``: wall times."""
    cli = cli_binary()
    head = [cli, "head", "-q", "-n", str(TAKE), "--columns", ",".join(COLUMNS), path]
    times = []
    for argv in (head, [cli, "--version"]):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
        times.append(time.perf_counter() - t0)
    return times[0], times[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--op", choices=["take", "slice"], default="take")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--methods", default=None, help="default: all of the op's")
    ap.add_argument("--out", default=None, help="default: bench/results/<op>.md")
    args = ap.parse_args()
    log = logger(args.op, time.time())
    import numpy as np

    data_dir = os.path.join(HERE, "data", "table")
    table = load_dataset(ensure_dataset(data_dir, "fst", args.rows, log))
    if args.op == "take":
        indices = np.sort(np.random.default_rng(42).choice(args.rows, size=TAKE, replace=False))
        want = table.select(COLUMNS).take(indices)
    else:
        want = table.select(COLUMNS).slice(args.rows // 2, TAKE)
    want_real = [float(v) for v in want.column("Real").to_pylist()]
    want_factor = [str(v) for v in want.column("Factor").to_pylist()]
    work = os.path.join(HERE, "data", args.op)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    methods = (args.methods or ",".join(METHODS if args.op == "take" else SLICE_METHODS)).split(",")
    rows = []
    for m in methods:
        path = os.path.join(work, f"fst.{m}")
        t0 = time.perf_counter()
        write(m, table, path)
        log(f"{m}: written in {time.perf_counter() - t0:.2f} s, {size_of(path) / MB:.1f} MB")
        time.sleep(2.1)  # a file read after it was written, not within its first 2 s
        firsts, warms = [], []
        for r in range(args.rounds):
            if m == "kompakt-cli":
                whole, start = cli_round(path)
                res = {"first": whole - start, "warm": start}
            else:
                argv = [sys.executable, "-c", WORKER, m, path, str(args.rows), str(TAKE), str(WARM_CALLS)]
                argv += [json.dumps(COLUMNS), args.op, HERE]
                out = subprocess.run(argv, capture_output=True, text=True, check=False)
                if out.returncode != 0:
                    raise SystemExit(f"{m}: {out.stderr.strip()[-2000:]}")
                res = json.loads(out.stdout.strip().splitlines()[-1])
                if res["real"] != want_real or res["factor"] != want_factor:
                    raise SystemExit(f"{m}: the rows read differ from the original's")
            firsts.append(res["first"])
            warms.append(res["warm"])
            log(f"{m} round {r + 1}: first {res['first'] * 1e3:.2f} ms, warm {res['warm'] * 1e3:.2f} ms")
        rows.append((m, size_of(path), firsts, warms))
    info = machine_info()
    what = f"Take of {TAKE} random rows" if args.op == "take" else f"Slice of {TAKE} rows from row {args.rows // 2:,}"
    spread = args.rounds >= 10
    md = [
        f"# {what} x {len(COLUMNS)} columns ({', '.join(COLUMNS)}), fst table of {args.rows:,} rows",
        "",
        f"{time.strftime('%Y-%m-%d %H:%M')}; {info.get('cpu', '')}; {args.rounds} round(s), medians; "
        f"first = first call in a fresh process, warm = median of {WARM_CALLS} more"
        + (" (kompakt-cli: see bench/take.py)." if "kompakt-cli" in methods else "."),
        "",
        "| format | file MB | first ms | warm ms |" + (" first p10 ms | first p90 ms |" if spread else ""),
        "|--|--:|--:|--:|" + ("--:|--:|" if spread else ""),
    ]
    for m, size, firsts, warms in rows:
        line = (
            f"| {m} | {size / MB:.1f} | {statistics.median(firsts) * 1e3:.2f} | {statistics.median(warms) * 1e3:.2f} |"
        )
        if spread:
            line += f" {percentile(firsts, 0.1) * 1e3:.2f} | {percentile(firsts, 0.9) * 1e3:.2f} |"
        md.append(line)
    out_path = args.out or os.path.join(HERE, "results", f"{args.op}.md")
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
