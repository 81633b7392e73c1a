#!/usr/bin/env python3
"""zstd dictionaries on small values: kompakt with and without a dictionary, beside
python-zstandard (the same zstd library, bare frames) with and without one.

    .venv/bin/python bench/dictionaries.py            full run (about 5 minutes, 2 cores)
    .venv/bin/python bench/dictionaries.py --quick    fewer values, 1 repeat (~1 minute)
    .venv/bin/python bench/dictionaries.py --report-only

Five kinds of small records, each cut into values of about 100 B, 1 KB, 4 KB and 32 KB (whole
records packed up to the size; a record larger than the size alone, cut to it):

- ``json_logs``: JSON log lines (timestamp, level, service, user, latency, path);
- ``pickled_dicts``: ``pickle.dumps`` of lists of small dicts (id, name, score, tags, flag);
- ``dataframes``: ``pickle.dumps`` of small pandas DataFrames (5 typed columns; none at 100 B,
  an empty DataFrame's pickle is larger than that);
- ``root_baskets``: the decompressed baskets of real ROOT files (scikit-hep-testdata 0.3.0, the
  last release whose wheel holds its files: downloaded from PyPI once into bench/data/, read
  with uproot), per branch, cut into values: floats and ints as HEP experiments store them;
- ``map_statuses``: Spark-like serialized map statuses, a short header (shuffle id, map id,
  executor location) and a few hundred int64 block sizes (log-normal, around 8 MB).

For every kind and size: a dictionary is trained on the first values (about 8 MB, at most 4,000
values; dictionary size 1/100 of that, 1-110 KiB, zstd's rule of thumb) with
``kompakt.train_dictionary``, and the next values (held out, 1,000, or 300 at 32 KB) are
compressed one by one with zstd level 3: kompakt files (``kompakt.compress``, what a store
keeps: ~150 bytes of header, index and checksums around the payload), their payloads alone,
and zstandard frames (``ZstdCompressor(level=3)``, with ``write_checksum=False``). Times are
per value, compress and decompress, the best of the repeats, on one thread.

Outputs bench/results/dictionaries.md and .json (dictionaries_quick.* with --quick).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pickle
import random
import subprocess
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import HERE, git_state, logger, machine_info, rerender_report, save_report  # noqa: E402

SIZES = [100, 1000, 4000, 32000]
LEVEL = 3
TRAIN_BYTES = 8_000_000
DATA = os.path.join(HERE, "data", "dictionaries")
TESTDATA = "scikit-hep-testdata==0.3.0"
ROOT_FILES = [
    "uproot-HZZ-uncompressed.root",
    "uproot-Zmumu-uncompressed.root",
    "uproot-issue63.root",
    "uproot-demo-double32.root",
]


def need(*modules: str) -> None:
    """Installs the PyPI packages a kind needs into this interpreter's environment."""
    missing = [m for m in modules if importlib.util.find_spec(m.split("==")[0].replace("-", "_")) is None]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)


# -------------------------------------------------------------------------------------------
# Records
# -------------------------------------------------------------------------------------------


def json_logs(rnd: random.Random, n: int) -> list[bytes]:
    return [
        json.dumps(
            {
                "ts": f"2026-11-{1 + i % 28:02d}T{rnd.randrange(24):02d}:{rnd.randrange(60):02d}:"
                f"{rnd.randrange(60):02d}.{rnd.randrange(1000):03d}Z",
                "level": rnd.choices(["info", "warn", "error", "debug"], [70, 15, 5, 10])[0],
                "service": rnd.choice(["checkout", "search", "auth", "billing", "inventory"]),
                "user_id": rnd.randrange(1_000_000),
                "latency_ms": round(rnd.expovariate(0.02), 1),
                "path": f"/api/v2/{rnd.choice(['orders', 'carts', 'users'])}/{rnd.randrange(100_000)}",
                "status": rnd.choices([200, 201, 404, 500], [85, 5, 7, 3])[0],
            }
        ).encode()
        + b"\n"
        for i in range(n)
    ]


def small_dict(rnd: random.Random, i: int) -> dict:
    return {
        "id": i,
        "name": f"user{rnd.randrange(100_000)}",
        "score": round(rnd.random() * 100, 3),
        "tags": rnd.sample(["a", "b", "vip", "new", "eu", "us", "beta"], rnd.randrange(1, 4)),
        "active": rnd.random() < 0.8,
    }


def pack(records, size: int) -> list[bytes]:
    """Values of at most `size` bytes from consecutive records joined, or a record's first
    `size` bytes when it alone is larger."""
    values, current = [], b""
    for r in records:
        if current and len(current) + len(r) > size:
            values.append(current)
            current = b""
        current += r
        if len(current) >= size:
            values.append(current[:size])
            current = b""
    return values


def pickled(rnd: random.Random, count: int, size: int, make) -> list[bytes]:
    """`count` values, each the pickle of as many consecutive items from `make` as fit in
    `size` bytes (at least one)."""
    values, i = [], 0
    per = 1
    while len(values) < count:
        items = [make(rnd, i + k) for k in range(per)]
        blob = pickle.dumps(items, protocol=5)
        while len(blob) > size and len(items) > 1:
            items.pop()
            blob = pickle.dumps(items, protocol=5)
        if len(blob) < size * 0.8 and len(items) == per:
            per += max(1, per // 4)
        values.append(blob)
        i += len(items)
    return values


def pickled_dicts(rnd: random.Random, count: int, size: int) -> list[bytes]:
    return pickled(rnd, count, size, small_dict)


def dataframes(rnd: random.Random, count: int, size: int) -> list[bytes] | None:
    import numpy as np
    import pandas as pd

    def frame(rows: int, seed: int) -> bytes:
        g = np.random.default_rng(seed)
        df = pd.DataFrame(
            {
                "ts": pd.Timestamp("2026-11-01") + pd.to_timedelta(np.sort(g.integers(0, 86_400, rows)), unit="s"),
                "sensor": pd.Categorical(g.choice(["a1", "a2", "b7", "c3"], rows)),
                "value": np.round(g.normal(20, 3, rows), 2),
                "count": g.integers(0, 1000, rows).astype("int32"),
                "ok": g.random(rows) < 0.95,
            }
        )
        return pickle.dumps(df, protocol=5)

    if len(frame(1, 0)) > size:
        return None
    rows, values = 1, []
    while len(frame(rows * 2, 0)) <= size:
        rows *= 2
    while len(frame(rows + max(1, rows // 8), 0)) <= size:
        rows += max(1, rows // 8)
    for k in range(count):
        values.append(frame(rows, rnd.randrange(2**32) + k))
    return values


def root_baskets(size: int, count: int) -> list[bytes]:
    need("uproot")
    import uproot

    os.makedirs(DATA, exist_ok=True)
    files = [os.path.join(DATA, f) for f in ROOT_FILES]
    if not all(os.path.exists(f) for f in files):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", DATA, TESTDATA],
            check=True,
        )
        wheel = next(os.path.join(DATA, f) for f in os.listdir(DATA) if f.endswith(".whl"))
        with zipfile.ZipFile(wheel) as z:
            for name in ROOT_FILES:
                with open(os.path.join(DATA, name), "wb") as out:
                    out.write(z.read(f"skhep_testdata/data/{name}"))
        os.remove(wheel)
    values: list[bytes] = []
    for path in files:
        with uproot.open(path) as f:
            for _, tree in f.items(filter_classname="TTree"):
                for branch in tree.values(recursive=True):
                    joined = b"".join(bytes(branch.basket(i).data) for i in range(branch.num_baskets))
                    values.extend(joined[k : k + size] for k in range(0, len(joined) - size + 1, size))
    # Interleave branches (files hold them one after another) so training and held-out
    # values come from every branch.
    random.Random(7).shuffle(values)
    return values[:count]


def map_statuses(rnd: random.Random, count: int, size: int) -> list[bytes]:
    import struct

    values = []
    for m in range(count):
        host = f"exec-{rnd.randrange(200)}.cluster.local:7337".encode()
        head = struct.pack("<iqH", 3, m, len(host)) + host
        n = max(1, (size - len(head)) // 8)
        blocks = [0 if rnd.random() < 0.05 else int(rnd.lognormvariate(15.9, 0.6)) for _ in range(n)]
        values.append(head + struct.pack(f"<{n}q", *blocks))
    return values


def make_values(kind: str, size: int, count: int) -> list[bytes] | None:
    rnd = random.Random(f"{kind}/{size}")
    if kind == "json_logs":
        per = max(1, size // 180 + 1)
        return pack(json_logs(rnd, count * per + per), size)[:count]
    if kind == "pickled_dicts":
        return pickled_dicts(rnd, count, size)
    if kind == "dataframes":
        return dataframes(rnd, count, size)
    if kind == "root_baskets":
        return root_baskets(size, count)
    if kind == "map_statuses":
        return map_statuses(rnd, count, size)
    raise ValueError(kind)


KINDS = ["json_logs", "pickled_dicts", "dataframes", "root_baskets", "map_statuses"]


# -------------------------------------------------------------------------------------------
# Measurement
# -------------------------------------------------------------------------------------------


def per_value(fn, values, repeats: int) -> float:
    """Best-of-repeats seconds per value of fn(value) over all values."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for v in values:
            fn(v)
        best = min(best, (time.perf_counter() - t0) / len(values))
    return best


def measure(kind: str, size: int, quick: bool, repeats: int, log) -> dict | None:
    import zstandard

    import kompakt

    train_n = max(200, min(4000, TRAIN_BYTES // size))
    test_n = (300 if size >= 32000 else 1000) // (4 if quick else 1)
    if quick:
        train_n = max(100, train_n // 4)
    values = make_values(kind, size, train_n + test_n)
    if values is None:
        log(f"{kind} {size} B: no values this small")
        return None
    if len(values) < train_n + test_n:
        train_n = len(values) * 4 // 5
    train, test = values[:train_n], values[train_n : train_n + test_n]
    train_bytes = sum(map(len, train))
    dict_size = max(1024, min(110 * 1024, train_bytes // 100))
    t0 = time.perf_counter()
    try:
        d = kompakt.train_dictionary(train, size=dict_size)
    except kompakt.OptionError as e:
        log(f"{kind} {size} B: training failed: {e}")
        return {"kind": kind, "size": size, "error": str(e)}
    train_s = time.perf_counter() - t0
    zd = zstandard.ZstdCompressionDict(bytes(d))
    codec = f"zstd:{LEVEL}"
    files = {
        "plain": [kompakt.compress(v, codec=codec, threads=1) for v in test],
        "dict": [kompakt.compress(v, dictionary=d, threads=1) for v in test],
    }
    for kompakt_file, v in zip(files["dict"], test):
        assert kompakt.decompress(kompakt_file, dictionary=d, threads=1) == v
    payload = {k: sum(kompakt.info(f)["streams"][0]["stored_size"] for f in fs) for k, fs in files.items()}
    zc_plain = zstandard.ZstdCompressor(level=LEVEL, write_checksum=False)
    zc_dict = zstandard.ZstdCompressor(level=LEVEL, dict_data=zd, write_checksum=False, write_dict_id=False)
    zd_plain = zstandard.ZstdDecompressor()
    zd_dict = zstandard.ZstdDecompressor(dict_data=zd)
    frames = {"plain": [zc_plain.compress(v) for v in test], "dict": [zc_dict.compress(v) for v in test]}
    raw = sum(map(len, test))
    row = {
        "kind": kind,
        "size": size,
        "mean_value_size": raw / len(test),
        "train_values": train_n,
        "train_bytes": train_bytes,
        "dictionary_size": len(d),
        "train_s": train_s,
        "test_values": len(test),
        "raw_bytes": raw,
        "kompakt_file_bytes": {k: sum(map(len, fs)) for k, fs in files.items()},
        "kompakt_payload_bytes": payload,
        "zstandard_bytes": {k: sum(map(len, fs)) for k, fs in frames.items()},
        "seconds_per_value": {
            "kompakt_compress": per_value(lambda v: kompakt.compress(v, codec=codec, threads=1), test, repeats),
            "kompakt_compress_dict": per_value(lambda v: kompakt.compress(v, dictionary=d, threads=1), test, repeats),
            "kompakt_decompress": per_value(lambda f: kompakt.decompress(f, threads=1), files["plain"], repeats),
            "kompakt_decompress_dict": per_value(
                lambda f: kompakt.decompress(f, dictionary=d, threads=1), files["dict"], repeats
            ),
            "zstandard_compress": per_value(zc_plain.compress, test, repeats),
            "zstandard_compress_dict": per_value(zc_dict.compress, test, repeats),
            "zstandard_decompress": per_value(zd_plain.decompress, frames["plain"], repeats),
            "zstandard_decompress_dict": per_value(zd_dict.decompress, frames["dict"], repeats),
        },
    }
    f = row["kompakt_file_bytes"]
    log(
        f"{kind} {size} B: files {raw / f['plain']:.2f}x -> {raw / f['dict']:.2f}x with a "
        f"{len(d)} B dictionary (trained in {train_s:.1f} s on {train_n} values)"
    )
    return row


# -------------------------------------------------------------------------------------------
# Report
# -------------------------------------------------------------------------------------------


def summarize(doc) -> dict:
    out = {}
    for r in doc["rows"]:
        if "error" in r:
            continue
        f, p = r["kompakt_file_bytes"], r["kompakt_payload_bytes"]
        out[f"{r['kind']}/{r['size']}"] = {
            "file_smaller_pct": round(100 * (1 - f["dict"] / f["plain"]), 1),
            "payload_smaller_pct": round(100 * (1 - p["dict"] / p["plain"]), 1),
        }
    return out


def us(s: float) -> str:
    return f"{s * 1e6:.1f}"


def render(doc) -> str:
    m = doc["machine"]
    lines = [
        "# zstd dictionaries on small values",
        "",
        f"Commit {doc['git']['commit']}, {doc['date']}; {m['cpu']}, {m['cores']} cores; "
        f"zstd level {LEVEL}, one thread, best of {doc['repeats']} "
        f"({'quick run' if doc['quick'] else 'full run'}; bench/dictionaries.py).",
        "",
        "Ratio = raw bytes / stored bytes over the held-out values. *file*: whole kompakt files "
        "(what `kompakt.compress` returns and a store keeps); *payload*: their compressed blocks "
        "alone; *zstandard*: python-zstandard frames. Times in microseconds per value.",
        "",
        "| kind | size | dict | file ratio | file, dict | payload ratio | payload, dict | zstandard | zstandard, dict "
        "| compress | compress, dict | decompress | decompress, dict | zstandard c / d, dict |",
        "|--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in doc["rows"]:
        if "error" in r:
            lines.append(f"| {r['kind']} | {r['size']} | training failed: {r['error']} |")
            continue
        raw = r["raw_bytes"]
        f, p, z, t = r["kompakt_file_bytes"], r["kompakt_payload_bytes"], r["zstandard_bytes"], r["seconds_per_value"]
        lines.append(
            f"| {r['kind']} | {r['mean_value_size']:.0f} B | {r['dictionary_size'] / 1024:.0f} KiB "
            f"| {raw / f['plain']:.2f} | **{raw / f['dict']:.2f}** "
            f"| {raw / p['plain']:.2f} | **{raw / p['dict']:.2f}** "
            f"| {raw / z['plain']:.2f} | {raw / z['dict']:.2f} "
            f"| {us(t['kompakt_compress'])} | {us(t['kompakt_compress_dict'])} "
            f"| {us(t['kompakt_decompress'])} | {us(t['kompakt_decompress_dict'])} "
            f"| {us(t['zstandard_compress_dict'])} / {us(t['zstandard_decompress_dict'])} |"
        )
    return "\n".join(lines) + "\n"


def run_kinds_by_size(name: str, doc: str, measure, summarize, render, modules: tuple[str, ...]) -> None:
    """The command line of a bench over KINDS and SIZES: ``measure(kind, size, quick, repeats,
    log)`` gives a row (or None), written to bench/results/NAME.json and .md
    (NAME_quick.* with --quick); --report-only renders the markdown again from the JSON."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    suffix = "_quick" if args.quick else ""
    out = os.path.join(HERE, "results")
    json_path, md_path = os.path.join(out, f"{name}{suffix}.json"), os.path.join(out, f"{name}{suffix}.md")
    if args.report_only:
        rerender_report(json_path, md_path, summarize, render)
        return
    need(*modules)
    os.makedirs(out, exist_ok=True)
    t_start = time.time()
    log = logger(name, t_start)
    repeats = 1 if args.quick else args.repeats
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "git": git_state(),
        "machine": machine_info(),
        "quick": args.quick,
        "repeats": repeats,
        "rows": [],
    }
    for kind in args.kinds.split(","):
        for size in SIZES:
            row = measure(kind, size, args.quick, repeats, log)
            if row is not None:
                report["rows"].append(row)
    save_report(report, t_start, summarize, render, json_path, md_path)
    print(md_path)


def main() -> None:
    run_kinds_by_size("dictionaries", __doc__, measure, summarize, render, ("zstandard", "pandas"))


if __name__ == "__main__":
    main()
