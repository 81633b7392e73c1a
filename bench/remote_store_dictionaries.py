#!/usr/bin/env python3
"""The store on object storage with a namespace's dictionary shared through the bucket: small
values set by one machine and read by another, with and without the dictionary, beside raw
bytes put with s3fs, in one run against moto's S3 server.

    .venv/bin/python bench/remote_store_dictionaries.py [--values 200] [--quick]

The values are those of bench/dictionaries.py (JSON log lines, pickled dicts, small pickled
DataFrames, Spark-like map statuses) at about 100 B, 1 KB and 4 KB. For each kind and size, in
fresh prefixes of one bucket:

- *without*: ``kompakt.Store(url, dictionaries=False)``;
- *with*: ``kompakt.Store(url)`` given the dictionary the store itself would train, from 2000
  warm-up values (``train_dictionary`` with the store's own rule: at least 10 % smaller, at
  most 5 % slower, where on object storage the time of a set's requests counts beside the
  codec's; the trial's verdict is in the JSON);
- *s3fs raw*: the raw bytes, ``fs.pipe`` and ``fs.cat`` (what storing small values on S3
  without a store costs: nothing compressed, one request each way).

Then ``--values`` values are set (``set_bytes``, one namespace); "another machine" (an empty
cache folder) gets each once, then again. Bytes on the server are the growth of the store's
``stored_bytes`` (objects; the dictionary is counted apart). Requests and response bytes come
from python/tests/s3server.py's counting proxy. Times on loopback include moto's own cost per
request (milliseconds: it is Python), not a network's; requests and bytes carry over. Medians.

Outputs bench/results/remote_store_dictionaries.md and .json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "tests"))

from common import git_state, machine_info  # noqa: E402
from dictionaries import make_values  # noqa: E402
from remote_store import measure as timed  # noqa: E402  (seconds, requests, bytes received)
from s3server import Proxy, S3Server, use_server_environment  # noqa: E402

BUCKET = "kompakt-bench-dictionaries"
NAMESPACE = "values"
WARM_UP = 2000
KINDS = ["json_logs", "pickled_dicts", "dataframes", "map_statuses"]
SIZES = [100, 1000, 4000]


def medians(results: list[tuple[float, int, int]]) -> dict:
    return {
        "ms": statistics.median(r[0] for r in results) * 1e3,
        "requests": statistics.median(r[1] for r in results),
        "received": statistics.median(r[2] for r in results),
    }


def run_store(counter, work: str, mode: str, warm: list[bytes], test: list[bytes]) -> dict:
    import kompakt

    url = f"s3://{BUCKET}/{uuid.uuid4().hex[:12]}"
    options = {"dictionaries": False} if mode == "without" else {}
    writer = kompakt.Store(url, cache_dir=os.path.join(work, f"{mode}-writer"), **options)
    dictionary_bytes, trial = 0, None
    if mode == "with":
        trial = dict(writer._core.train_dictionary(NAMESPACE, warm))
        if not trial["adopted"]:
            print(f"  the store's rule refused the dictionary: {trial['reason']}", flush=True)
        dictionary_bytes = trial["dictionary_bytes"] if trial["adopted"] else 0
    before = writer.info()["stored_bytes"]
    keys = [(f"v{i}", v) for i, v in enumerate(test)]
    sets = [timed(counter, lambda k=k, v=v: writer.set_bytes(k, v, namespace=NAMESPACE)) for k, v in keys]
    stored = writer.info()["stored_bytes"] - before
    reader = kompakt.Store(url, cache_dir=os.path.join(work, f"{mode}-reader"), **options)
    got: list[bytes] = []
    gets = [timed(counter, lambda k=k: got.append(reader.get_bytes(k, namespace=NAMESPACE))) for k, _ in keys]
    assert got == test
    again = [timed(counter, lambda k=k: reader.get_bytes(k, namespace=NAMESPACE)) for k, _ in keys]
    assert reader.verify()["problems"] == []
    writer.close()
    reader.close()
    return {
        "trial": trial,
        "stored_bytes": stored,
        "dictionary_bytes": dictionary_bytes,
        "set": medians(sets),
        "first_get": {"ms": gets[0][0] * 1e3, "requests": gets[0][1], "received": gets[0][2]},
        "get": medians(gets[1:]),
        "get_again": medians(again),
    }


def run_s3fs(counter, fs, test: list[bytes]) -> dict:
    prefix = f"{BUCKET}/{uuid.uuid4().hex[:12]}-raw"
    sets = [timed(counter, lambda i=i, v=v: fs.pipe(f"{prefix}/v{i}", v)) for i, v in enumerate(test)]
    got: list[bytes] = []
    gets = [timed(counter, lambda i=i: got.append(fs.cat(f"{prefix}/v{i}"))) for i in range(len(test))]
    assert got == test
    raw = sum(map(len, test))
    return {"stored_bytes": raw, "set": medians(sets), "get": medians(gets), "get_again": medians(gets)}


def render(doc: dict) -> str:
    m = doc["machine"]
    lines = [
        "# The store on object storage: small values with the namespace's shared dictionary",
        "",
        f"Commit {doc['git']['commit']}, {doc['date']}; {m['cpu']}, {m['cores']} cores; moto's S3 server "
        f"on loopback behind a counting proxy; {doc['values']} values per row, zstd:1; medians "
        "(bench/remote_store_dictionaries.py).",
        "",
        "Ratio = raw bytes / bytes of the objects on the server. *set*, *get* (another machine, "
        "empty cache; its first get apart, which fetches the dictionary) and *again* (the same "
        "machine again): ms and requests per value, as *without / with / s3fs raw*.",
        "",
        "| kind | size | dict B | ratio without | ratio with | set ms | set req | first get ms (req) "
        "| get ms | get req | get KB recv | again ms |",
        "|--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in doc["rows"]:
        w, d, s = r["without"], r["with"], r["s3fs"]
        raw = r["raw_bytes"]
        trio = [w, d, s]

        def f(part, field, scale=1.0, fmt="{:.1f}"):
            return " / ".join(fmt.format(x[part][field] * scale) for x in trio)

        lines.append(
            f"| {r['kind']} | {r['size']} | {d['dictionary_bytes']} | {raw / w['stored_bytes']:.2f} | "
            f"{raw / d['stored_bytes']:.2f} | {f('set', 'ms')} | {f('set', 'requests', fmt='{:g}')} | "
            f"{w['first_get']['ms']:.1f} ({w['first_get']['requests']}) / "
            f"{d['first_get']['ms']:.1f} ({d['first_get']['requests']}) | {f('get', 'ms')} | "
            f"{f('get', 'requests', fmt='{:g}')} | {f('get', 'received', 1e-3, '{:.2f}')} | "
            f"{f('get_again', 'ms')} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--values", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="JSON logs and pickled dicts at 100 B and 1 KB only")
    a = ap.parse_args()

    import s3fs

    kinds, sizes = (KINDS[:2], SIZES[:2]) if a.quick else (KINDS, SIZES)
    work = tempfile.mkdtemp(prefix="kompakt-remote-dict-")
    rows = []
    try:
        with S3Server() as server:
            counter = Proxy(server)
            server.client().create_bucket(Bucket=BUCKET)
            use_server_environment(server)
            os.environ["AWS_ENDPOINT_URL"] = counter.endpoint
            fs = s3fs.S3FileSystem(endpoint_url=counter.endpoint)
            for kind in kinds:
                for size in sizes:
                    values = make_values(kind, size, (WARM_UP + a.values) * 2)
                    if values is None or len(values) < WARM_UP + a.values:
                        print(f"{kind} {size} B: not enough values", flush=True)
                        continue
                    warm, test = values[:WARM_UP], values[WARM_UP : WARM_UP + a.values]
                    row = {"kind": kind, "size": size, "raw_bytes": sum(map(len, test))}
                    for mode in ["without", "with"]:
                        row[mode] = run_store(counter, os.path.join(work, f"{kind}-{size}"), mode, warm, test)
                    row["s3fs"] = run_s3fs(counter, fs, test)
                    w, d = row["without"], row["with"]
                    print(
                        f"{kind} {size} B: ratio {row['raw_bytes'] / w['stored_bytes']:.2f} -> "
                        f"{row['raw_bytes'] / d['stored_bytes']:.2f}; set {w['set']['ms']:.1f} -> "
                        f"{d['set']['ms']:.1f} ms ({w['set']['requests']:g} -> {d['set']['requests']:g} req); "
                        f"get {w['get']['ms']:.1f} -> {d['get']['ms']:.1f} ms; first get "
                        f"{w['first_get']['requests']} -> {d['first_get']['requests']} req",
                        flush=True,
                    )
                    rows.append(row)
            counter.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    doc = {
        "date": time.strftime("%Y-%m-%d"),
        "git": git_state(),
        "machine": machine_info(),
        "values": a.values,
        "rows": rows,
    }
    out = os.path.join(HERE, "results", "remote_store_dictionaries" + ("_quick" if a.quick else ""))
    with open(out + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    with open(out + ".md", "w") as f:
        f.write(render(doc))
    print(render(doc))


if __name__ == "__main__":
    main()
