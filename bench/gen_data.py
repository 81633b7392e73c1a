#!/usr/bin/env python3
"""Deterministic benchmark inputs for kompakt (see bench/README.md).

Writes, into --out (default bench/data/):

  mixed.bin           raw column bytes of a mixed table, columns one after the other:
                        flag   int8    0/1, -1 = missing (~10 % missing)
                        qty    int32   uniform in 1..100
                        price  float64 one of 20 distinct prices
                        city   int16   codes of 70 city names (Zipf-like frequencies)
                        ts     int64   sorted timestamps (ns), irregular steps
                        value  float64 normal noise rounded to 2 decimals
                      31 bytes per row; 10 million rows at the default size (310 MB)
  float64_random.bin  uniform random float64 in [0, 1) (R's runif), --size-mb MB
  int64_sorted.bin    sorted int64: cumulative sum of small random steps, --size-mb MB
  bytes_random.bin    uniformly random bytes (truly incompressible), --size-mb MB
  big.bin             (only with --big-gb) mixed tables generated chunk by chunk with
                      successive seeds until the file reaches --big-gb GB; for the peak-RSS test
  manifest.json       what was generated, with which parameters (used to skip regeneration)

Sizes are in 10^6 bytes. Everything is derived from --seed, so two runs with the same
arguments (and the same numpy major version) write identical files.
"""

import argparse
import json
import os
import subprocess
import sys
import time

MIXED_ROW_BYTES = 1 + 4 + 8 + 2 + 8 + 8  # = 31
DEFAULT_SIZE_MB = 256  # typed files; mixed.bin has 10M rows at this size
DEFAULT_ROWS = 10_000_000
MANIFEST_VERSION = 1


def import_numpy():
    try:
        import numpy as np  # noqa: F401
    except ImportError:
        print("gen_data: numpy not found, installing it with pip", file=sys.stderr)
        cmd = [sys.executable, "-m", "pip", "install", "--quiet", "numpy"]
        r = subprocess.run(cmd)
        if r.returncode != 0:
            # Externally managed Pythons (PEP 668) refuse plain installs.
            r = subprocess.run(cmd + ["--break-system-packages"])
        if r.returncode != 0:
            sys.exit("gen_data: could not install numpy")
        import importlib

        importlib.invalidate_caches()
    import numpy as np

    return np


np = import_numpy()

CITIES = [
    "Tokyo",
    "Delhi",
    "Shanghai",
    "Sao Paulo",
    "Mexico City",
    "Cairo",
    "Mumbai",
    "Beijing",
    "Dhaka",
    "Osaka",
    "New York",
    "Karachi",
    "Buenos Aires",
    "Chongqing",
    "Istanbul",
    "Kolkata",
    "Manila",
    "Lagos",
    "Rio de Janeiro",
    "Tianjin",
    "Kinshasa",
    "Guangzhou",
    "Los Angeles",
    "Moscow",
    "Shenzhen",
    "Lahore",
    "Bangalore",
    "Paris",
    "Bogota",
    "Jakarta",
    "Chennai",
    "Lima",
    "Bangkok",
    "Seoul",
    "Nagoya",
    "Hyderabad",
    "London",
    "Tehran",
    "Chicago",
    "Chengdu",
    "Nanjing",
    "Wuhan",
    "Ho Chi Minh City",
    "Luanda",
    "Ahmedabad",
    "Kuala Lumpur",
    "Xi'an",
    "Hong Kong",
    "Dongguan",
    "Hangzhou",
    "Foshan",
    "Shenyang",
    "Riyadh",
    "Baghdad",
    "Santiago",
    "Surat",
    "Madrid",
    "Suzhou",
    "Pune",
    "Harbin",
    "Houston",
    "Dallas",
    "Toronto",
    "Dar es Salaam",
    "Miami",
    "Belo Horizonte",
    "Singapore",
    "Philadelphia",
    "Atlanta",
    "Fukuoka",
]
assert len(CITIES) == 70


def mixed_columns(rows, seed):
    """The columns of one mixed table of `rows` rows, in file order."""
    rng = np.random.default_rng(seed)
    flag = rng.integers(0, 2, size=rows, dtype=np.int8)
    flag[rng.random(rows) < 0.10] = -1
    qty = rng.integers(1, 101, size=rows, dtype=np.int32)
    prices = np.round(rng.uniform(0.5, 500.0, size=20), 2)
    price = prices[rng.integers(0, 20, size=rows)].astype(np.float64)
    weights = 1.0 / np.arange(1, len(CITIES) + 1)  # a few big cities, a long tail
    city = rng.choice(len(CITIES), size=rows, p=weights / weights.sum()).astype(np.int16)
    # Timestamps in ns from 2024-01-01: steps of 0..2 s, with 1 % long gaps of up to an hour.
    steps = rng.integers(0, 2_000_000_000, size=rows, dtype=np.int64)
    gaps = rng.random(rows) < 0.01
    steps[gaps] += rng.integers(0, 3_600_000_000_000, size=int(gaps.sum()), dtype=np.int64)
    ts = np.cumsum(steps, dtype=np.int64) + np.int64(1_704_067_200_000_000_000)
    value = np.round(rng.normal(20.0, 5.0, size=rows), 2)
    return [flag, qty, price, city, ts, value]


def write_arrays(path, arrays):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        for a in arrays:
            a.tofile(f)
    os.replace(tmp, path)


def gen_mixed(path, rows, seed):
    write_arrays(path, mixed_columns(rows, seed))


def gen_float64_random(path, nbytes, seed):
    rng = np.random.default_rng(seed + 1)
    n = nbytes // 8
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        chunk = 8_000_000
        for start in range(0, n, chunk):
            rng.random(min(chunk, n - start), dtype=np.float64).tofile(f)
    os.replace(tmp, path)


def gen_int64_sorted(path, nbytes, seed):
    rng = np.random.default_rng(seed + 2)
    n = nbytes // 8
    tmp = path + ".tmp"
    last = np.int64(1_000_000)
    with open(tmp, "wb") as f:
        chunk = 8_000_000
        for start in range(0, n, chunk):
            steps = rng.integers(0, 64, size=min(chunk, n - start), dtype=np.int64)
            vals = np.cumsum(steps, dtype=np.int64) + last
            last = vals[-1]
            vals.tofile(f)
    os.replace(tmp, path)


def gen_bytes_random(path, nbytes, seed):
    rng = np.random.default_rng(seed + 3)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        chunk = 64_000_000
        for start in range(0, nbytes, chunk):
            f.write(rng.bytes(min(chunk, nbytes - start)))
    os.replace(tmp, path)


def gen_big(path, nbytes, seed):
    """Mixed tables of 10M rows (310 MB) each, new seed per chunk, until nbytes is reached."""
    tmp = path + ".tmp"
    written = 0
    k = 0
    with open(tmp, "wb") as f:
        while written < nbytes:
            rows = min(DEFAULT_ROWS, -(-(nbytes - written) // MIXED_ROW_BYTES))
            for a in mixed_columns(rows, seed + 1000 + k):
                a.tofile(f)
            written += rows * MIXED_ROW_BYTES
            k += 1
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--out", default=os.path.join(here, "data"), help="output folder (default: bench/data)")
    p.add_argument(
        "--size-mb",
        type=float,
        default=DEFAULT_SIZE_MB,
        help=f"size of float64_random.bin and int64_sorted.bin in MB (10^6 B); mixed.bin "
        f"scales with it ({DEFAULT_ROWS:,} rows at the default {DEFAULT_SIZE_MB})",
    )
    p.add_argument("--rows", type=int, default=None, help="rows of mixed.bin (overrides the scaling)")
    p.add_argument(
        "--big-gb", type=float, default=0.0, help="also write big.bin of this many GB (10^9 B) of mixed tables, e.g. 2"
    )
    p.add_argument("--seed", type=int, default=20240501)
    p.add_argument(
        "--only",
        default="mixed,float64_random,int64_sorted,bytes_random,big",
        help="comma-separated subset to (re)generate",
    )
    p.add_argument("--force", action="store_true", help="regenerate even if the manifest matches")
    a = p.parse_args()

    os.makedirs(a.out, exist_ok=True)
    typed_bytes = int(a.size_mb * 1e6) // 8 * 8
    rows = a.rows if a.rows is not None else max(1, round(DEFAULT_ROWS * a.size_mb / DEFAULT_SIZE_MB))
    wanted = {
        "mixed": {"file": "mixed.bin", "rows": rows, "bytes": rows * MIXED_ROW_BYTES},
        "float64_random": {"file": "float64_random.bin", "bytes": typed_bytes},
        "int64_sorted": {"file": "int64_sorted.bin", "bytes": typed_bytes},
        "bytes_random": {"file": "bytes_random.bin", "bytes": typed_bytes},
    }
    if a.big_gb > 0:
        big_bytes = int(a.big_gb * 1e9)
        big_rows = -(-big_bytes // MIXED_ROW_BYTES)
        wanted["big"] = {"file": "big.bin", "bytes": big_rows * MIXED_ROW_BYTES}
    for spec in wanted.values():
        spec.update(seed=a.seed, version=MANIFEST_VERSION, numpy=np.__version__.split(".")[0])

    manifest_path = os.path.join(a.out, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        manifest = {}

    only = {s.strip() for s in a.only.split(",") if s.strip()}
    makers = {
        "mixed": lambda path, s: gen_mixed(path, s["rows"], a.seed),
        "float64_random": lambda path, s: gen_float64_random(path, s["bytes"], a.seed),
        "int64_sorted": lambda path, s: gen_int64_sorted(path, s["bytes"], a.seed),
        "bytes_random": lambda path, s: gen_bytes_random(path, s["bytes"], a.seed),
        "big": lambda path, s: gen_big(path, s["bytes"], a.seed),
    }
    for name, spec in wanted.items():
        if name not in only:
            continue
        path = os.path.join(a.out, spec["file"])
        current = os.path.exists(path) and os.path.getsize(path) == spec["bytes"]
        if current and manifest.get(name) == spec and not a.force:
            print(f"gen_data: {spec['file']} is up to date ({spec['bytes'] / 1e6:.0f} MB)", file=sys.stderr)
            continue
        t = time.time()
        makers[name](path, spec)
        size = os.path.getsize(path)
        assert size == spec["bytes"], (path, size, spec["bytes"])
        manifest[name] = spec
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=2, sort_keys=True)
        print(f"gen_data: wrote {spec['file']} ({size / 1e6:.0f} MB) in {time.time() - t:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
