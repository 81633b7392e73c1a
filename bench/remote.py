#!/usr/bin/env python3
"""Reads over the network: requests made and bytes transferred by kompakt and by pyarrow (Parquet,
through s3fs and through pyarrow's own S3 filesystem) reading the same table from the same S3
server, in one run.

    .venv/bin/python bench/remote.py                  the fst-blog table, 10 M rows
    .venv/bin/python bench/remote.py --rows 1000000 --rounds 1

The server is moto's (python/tests/s3server.py), on the loopback address, behind a counting
proxy in this process that forwards every request and counts requests and response bytes, so
every client is measured the same way, outside itself. The table is bench/table.py's ``fst``
dataset, written once as kompakt (``write_table`` defaults) and once as Parquet
(``pyarrow.parquet.write_table`` defaults, and with ``compression="zstd"``), then uploaded.

Each read runs in a fresh process (opening the file included, imports not):

- ``slice``: 1000 rows x 2 columns (``Real``, ``Factor``) from the middle of the table;
  kompakt ``read_table(url, cols, rows=slice(a, b), to="arrow")``, Parquet the row groups
  covering the rows (``ParquetFile(...).read_row_groups(groups, columns=cols)``);
- ``full``: every column and row; kompakt ``read_table(url, to="arrow")``, Parquet
  ``pq.read_table(path, filesystem=fs)``.

Times are on loopback (no network latency or bandwidth limit) and the proxy is Python: they
show the requests' cost on this machine, not on a real network; requests and bytes are what
carry over. Figures are medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "tests"))

from common import MB, logger, machine_info  # noqa: E402
from s3server import Proxy, S3Server  # noqa: E402
from table import ensure_dataset, load_dataset  # noqa: E402

BUCKET = "kompakt-bench"
COLUMNS = ["Real", "Factor"]
TAKE = 1000
METHODS = ["kompakt", "parquet-s3fs", "parquet-arrowfs", "parquet-zstd-s3fs", "parquet-zstd-arrowfs"]


WORKER = r"""
import json, sys, time
import pyarrow as pa, pyarrow.parquet as pq
method, url, op, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cols = json.loads(sys.argv[5]); endpoint = sys.argv[6]
a, b = rows // 2, rows // 2 + int(sys.argv[7])
sys.path.insert(0, sys.argv[8])
from table import parquet_slice  # the row groups covering the rows, as bench/table.py reads them
if method == "kompakt":
    import kompakt
    t0 = time.perf_counter()
    if op == "slice":
        out = kompakt.read_table(url, cols, rows=slice(a, b), to="arrow")
    else:
        out = kompakt.read_table(url, to="arrow")
else:
    path = url.removeprefix("s3://")
    if method.endswith("s3fs"):
        import s3fs
        fs = s3fs.S3FileSystem(endpoint_url=endpoint)
    else:
        import pyarrow.fs as pafs
        fs = pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", region="us-east-1")
    t0 = time.perf_counter()
    if op == "slice":
        f = fs.open(path, "rb") if method.endswith("s3fs") else fs.open_input_file(path)
        out = parquet_slice(f, cols, a, b)
    else:
        out = pq.read_table(path, filesystem=fs)
seconds = time.perf_counter() - t0
print(json.dumps({"seconds": seconds, "rows": out.num_rows, "columns": out.num_columns}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data", "table"))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    log = logger("remote", time.time())
    os.makedirs(a.out, exist_ok=True)

    import pyarrow.parquet as pq

    import kompakt

    source = ensure_dataset(a.data_dir, "fst", a.rows, log)
    table = load_dataset(source)
    work = os.path.join(a.data_dir, "out", "remote")
    os.makedirs(work, exist_ok=True)
    files = {
        "kompakt": os.path.join(work, "t.kpk"),
        "parquet": os.path.join(work, "t.parquet"),
        "parquet-zstd": os.path.join(work, "t.zstd.parquet"),
    }
    kompakt.write_table(table, files["kompakt"])
    pq.write_table(table, files["parquet"])
    pq.write_table(table, files["parquet-zstd"], compression="zstd")
    del table

    with S3Server() as server:
        counter = Proxy(server)
        endpoint = counter.endpoint
        client = server.client()
        client.create_bucket(Bucket=BUCKET)
        for path in files.values():
            with open(path, "rb") as f:
                client.put_object(Bucket=BUCKET, Key=os.path.basename(path), Body=f.read())
        env = {**os.environ, **server.env, "AWS_ENDPOINT_URL": endpoint, "OPENBLAS_NUM_THREADS": "1"}
        counter.take()
        results = []
        for op in ["slice", "full"]:
            for method in METHODS:
                kind = "kompakt" if method == "kompakt" else method.rsplit("-", 1)[0]
                url = f"s3://{BUCKET}/{os.path.basename(files[kind])}"
                runs = []
                for _ in range(a.rounds):
                    counter.take()
                    cmd = [sys.executable, "-c", WORKER, method, url, op, str(a.rows), json.dumps(COLUMNS)]
                    out = subprocess.run([*cmd, endpoint, str(TAKE), HERE], capture_output=True, text=True, env=env)
                    if out.returncode != 0:
                        raise SystemExit(f"{method} {op} failed:\n{out.stderr}")
                    got = json.loads(out.stdout.strip().splitlines()[-1])
                    requests, received = counter.take()
                    runs.append({**got, "requests": requests, "bytes": received})
                row = {
                    "op": op,
                    "method": method,
                    "file_bytes": os.path.getsize(files[kind]),
                    "requests": statistics.median(r["requests"] for r in runs),
                    "bytes": statistics.median(r["bytes"] for r in runs),
                    "seconds": statistics.median(r["seconds"] for r in runs),
                    "rows": runs[0]["rows"],
                }
                results.append(row)
                log(
                    f"{op:5} {method:22} {row['requests']:6.0f} requests {row['bytes'] / MB:9.2f} MB "
                    f"(file {row['file_bytes'] / MB:7.1f} MB) {row['seconds'] * 1e3:9.1f} ms"
                )
        counter.close()

    stamp = time.strftime("%Y%m%d-%H%M%S")
    doc = {"machine": machine_info(), "rows": a.rows, "rounds": a.rounds, "results": results}
    path = os.path.join(a.out, f"remote-{stamp}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    log(f"wrote {path}")


if __name__ == "__main__":
    main()
