"""Which zstd levels the unified levels 21-100 may use: ratios of zstd 1-22 on five slices of the
benchmark's table data, at 1 MiB blocks, and a check of the mapping in
`crates/kompakt/src/codec/spec.rs` (docs/DESIGN.md, "Unified levels").

    python3 bench/zstd_levels.py [--kompakt target/release/kompakt] [--data bench/data]

Needs `bench/data/mixed.bin` (run `bash bench/core.sh` once, or `python3 bench/gen_data.py --out
bench/data --only mixed`). Writes the slices next to it and prints a Markdown table; about three
minutes on 2 cores (zstd 19-22 dominate). The unified levels must compress every slice at least
as small as the level below them: the script says whether the mapping does, and which native
levels could join it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

# The mapping under test, decade by decade (21-29, 30-39, ..., 90-99, 100): keep in step with
# ZSTD_BY_DECADE in crates/kompakt/src/codec/spec.rs.
MAPPING = [1, 3, 4, 4, 13, 14, 15, 18, 22]
ROW_BYTES = [1, 4, 8, 2, 8, 8]  # mixed.bin's columns, one after the other (bench/gen_data.py)


def make_slices(data: str) -> list[str]:
    src = os.path.join(data, "mixed.bin")
    if not os.path.exists(src):
        sys.exit(f"{src} is missing: run bash bench/core.sh (or bench/gen_data.py --only mixed) first")
    size = os.path.getsize(src)
    slices = {
        "head10": [(0, 10_000_000)],
        "head50": [(0, 50_000_000)],
        "mid50": [(size // 2 - 25_000_000, 50_000_000)],
        "tail20": [(size - 20_000_000, 20_000_000)],
    }
    # The first 50 MB worth of rows of every column (as bench/core.sh's mixed_rows50.bin).
    rows, take, off, parts = size // sum(ROW_BYTES), 50_000_000 // sum(ROW_BYTES), 0, []
    for w in ROW_BYTES:
        parts.append((off, take * w))
        off += rows * w
    slices["rows50"] = parts
    paths = []
    with open(src, "rb") as f:
        for name, pieces in slices.items():
            path = os.path.join(data, f"levels_{name}.bin")
            if not (os.path.exists(path) and os.path.getmtime(path) >= os.path.getmtime(src)):
                with open(path + ".tmp", "wb") as out:
                    for start, n in pieces:
                        f.seek(start)
                        out.write(f.read(n))
                os.replace(path + ".tmp", path)
            paths.append(path)
    return paths


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kompakt", default=os.path.join(here, "..", "target", "release", "kompakt"))
    p.add_argument("--data", default=os.path.join(here, "data"))
    a = p.parse_args()
    paths = make_slices(a.data)
    codecs = ",".join(f"zstd:{level}" for level in range(1, 23))
    cmd = [
        a.kompakt,
        "bench",
        *paths,
        "--codecs",
        codecs,
        "--threads",
        "1",
        "--block-size",
        "1M",
        "--seconds",
        "0",
        "--json",
        "-q",
    ]
    rows = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    names = [os.path.basename(p)[len("levels_") : -len(".bin")] for p in paths]
    ratio: dict[int, dict[str, float]] = {}
    for r in rows:
        if r["codec"].startswith("zstd:"):
            name = os.path.basename(r["file"])[len("levels_") : -len(".bin")]
            ratio.setdefault(int(r["codec"][5:]), {})[name] = r["ratio"]

    print("| zstd level | " + " | ".join(names) + " |")
    print("|--:|" + "--:|" * len(names))
    for level in sorted(ratio):
        print(f"| {level} | " + " | ".join(f"{ratio[level][n]:.3f}" for n in names) + " |")

    def at_least(hi: int, lo: int) -> bool:
        return all(ratio[hi][n] >= ratio[lo][n] for n in names)

    print()
    bad = [(lo, hi) for lo, hi in zip(MAPPING, MAPPING[1:]) if not at_least(hi, lo)]
    decades = ", ".join(f"{21 if i == 0 else 10 * (i + 2)}: zstd {lv}" for i, lv in enumerate(MAPPING))
    print(
        f"Mapping ({decades}): "
        + (
            "monotone on every slice."
            if not bad
            else "FALLS: "
            + "; ".join(
                f"zstd {hi} below zstd {lo} on " + ", ".join(n for n in names if ratio[hi][n] < ratio[lo][n])
                for lo, hi in bad
            )
        )
    )
    for lo, hi in zip(MAPPING, MAPPING[1:]):
        between = [lv for lv in range(lo + 1, hi) if at_least(lv, lo) and at_least(hi, lv)]
        if hi > lo + 1:
            print(
                f"- between zstd {lo} and {hi}: "
                + (
                    ", ".join(map(str, between)) + " would also keep it monotone"
                    if between
                    else "no level compresses every slice at least as small as the one below "
                    "and no smaller than the one above"
                )
            )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
