#!/usr/bin/env python3
"""Writes the demo's generated inputs (standard library only, deterministic).

    python3 scripts/gen_demo_data.py OUT_DIR [--rows N]

- table.bin   : the raw column bytes of a mixed table (what a columnar store compresses):
                bool with missing (int8), int32 1..100, float64 from 20 prices,
                int16 city codes (~70 cities), sorted int64 timestamps
- floats.f64  : uniform random float64 (nearly incompressible)
- ids.i64     : sorted int64 ids (delta-friendly)
- log.txt     : text lines
"""

import argparse
import array
import os
import random
import sys


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--rows", type=int, default=2_000_000)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(42)
    n = a.rows
    if sys.byteorder != "little":
        raise SystemExit("the demo data generator assumes a little-endian machine")

    prices = [round(rng.uniform(1, 200), 2) for _ in range(20)]
    cols = [
        array.array("b", (-1 if rng.random() < 0.1 else rng.getrandbits(1) for _ in range(n))),
        array.array("i", (rng.randint(1, 100) for _ in range(n))),
        array.array("d", (prices[rng.randrange(20)] for _ in range(n))),
        array.array("h", (min(69, int(rng.expovariate(0.08))) for _ in range(n))),
    ]
    t, ts = 1_700_000_000_000, array.array("q")
    for _ in range(n):
        t += rng.randint(0, 2000)
        ts.append(t)
    cols.append(ts)
    with open(os.path.join(a.out, "table.bin"), "wb") as f:
        for c in cols:
            c.tofile(f)

    with open(os.path.join(a.out, "floats.f64"), "wb") as f:
        array.array("d", (rng.random() for _ in range(n))).tofile(f)

    i, ids = 10_000, array.array("q")
    for _ in range(n):
        i += rng.randint(1, 20)
        ids.append(i)
    with open(os.path.join(a.out, "ids.i64"), "wb") as f:
        ids.tofile(f)

    levels = ["INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"]
    words = "request served user cache miss hit backend timeout retry queue flushed".split()
    with open(os.path.join(a.out, "log.txt"), "w") as f:
        for k in range(n // 4):
            f.write(
                f"2026-11-21T{k // 3600 % 24:02d}:{k // 60 % 60:02d}:{k % 60:02d} {rng.choice(levels)} "
                f"{' '.join(rng.choices(words, k=5))} id={rng.randint(1, 99999)} ms={rng.randint(1, 900)}\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
