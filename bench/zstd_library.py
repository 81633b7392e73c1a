"""kompakt's zstd against the zstd library of the same version, block for block.

    python3 bench/zstd_library.py [--kompakt target/release/kompakt] [--levels 1,3,9]
                                  [--rounds 3] [FILE ...]

`bench/core.sh` compares `kompakt bench` with Debian's `zstd -b` (zstd 1.5.4), while kompakt
links the zstd 1.5.7 that the `zstd-sys` crate bundles. The two versions do not make the same
trade at every level (on mixed.bin, 1.5.7's level 3 compresses 7 % smaller and runs slower than
1.5.4's), so a `k/C` ratio mixes kompakt's own cost with the version change. This script takes
the version out: python-zstandard (installed with pip if missing) is a thin binding over the
zstd library it bundles, and the script refuses to run unless that is kompakt's version. Both
sides compress the same file in independent 1 MiB blocks on one thread, alternating in rounds;
the best round of each counts. kompakt's figures include its checksum, its raw fallback (which
can make its ratio lower and its speed higher) and writing its file to memory.

Default file: bench/data/mixed.bin (run `bash bench/core.sh` once, or `python3 bench/gen_data.py
--out bench/data --only mixed`). About a minute per file and level on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BLOCK = 1 << 20


def import_zstandard():
    try:
        import zstandard
    except ImportError:
        print("zstd_library: installing python-zstandard with pip", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "zstandard"], check=True)
        import zstandard
    return zstandard


def bundled_zstd_version() -> tuple[int, int, int]:
    """The zstd version the zstd-sys crate in Cargo.lock bundles."""
    lock = open(os.path.join(ROOT, "Cargo.lock")).read()
    m = re.search(r'name = "zstd-sys"\nversion = "([^"]+)"', lock)
    if not m:
        sys.exit("zstd_library: zstd-sys is not in Cargo.lock")
    # zstd-sys versions read 2.0.<patch>+zstd.<x.y.z>.
    z = re.search(r"zstd\.(\d+)\.(\d+)\.(\d+)", m.group(1))
    if not z:
        sys.exit(f"zstd_library: cannot read the zstd version from zstd-sys {m.group(1)}")
    return tuple(int(x) for x in z.groups())  # type: ignore[return-value]


def library_round(zstandard, blocks: list[bytes], level: int) -> tuple[float, float, int]:
    c = zstandard.ZstdCompressor(level=level, write_content_size=True, write_checksum=False)
    t = time.perf_counter()
    out = [c.compress(b) for b in blocks]
    comp = time.perf_counter() - t
    d = zstandard.ZstdDecompressor()
    t = time.perf_counter()
    for o in out:
        d.decompress(o)
    dec = time.perf_counter() - t
    return comp, dec, sum(map(len, out))


def kompakt_round(kompakt: str, path: str, level: int) -> dict:
    out = subprocess.run(
        [
            kompakt,
            "bench",
            path,
            "--codecs",
            f"zstd:{level}",
            "--threads",
            "1",
            "--block-size",
            "1M",
            "--seconds",
            "3",
            "--json",
            "-q",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return next(r for r in json.loads(out) if r["codec"] == f"zstd:{level}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", default=[os.path.join(HERE, "data", "mixed.bin")])
    ap.add_argument("--kompakt", default=os.path.join(ROOT, "target", "release", "kompakt"))
    ap.add_argument("--levels", default="1,3,9")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    zstandard = import_zstandard()
    want = bundled_zstd_version()
    have = tuple(int(x) for x in zstandard.ZSTD_VERSION)
    if have != want:
        sys.exit(
            f"zstd_library: python-zstandard bundles zstd {have}, kompakt links {want}: "
            "install a python-zstandard release that bundles the same version"
        )
    if not os.access(a.kompakt, os.X_OK):
        sys.exit(f"zstd_library: {a.kompakt} not found: run cargo build --release first")
    levels = [int(x) for x in a.levels.split(",")]
    print(
        f"zstd {'.'.join(map(str, want))} on both sides; 1 MiB blocks, 1 thread, best of "
        f"{a.rounds} rounds; MB = 10^6 bytes\n"
    )
    print(
        "| file | level | library ratio | kompakt ratio | library comp MB/s | kompakt comp MB/s | k/lib "
        "| library dec MB/s | kompakt dec MB/s | k/lib |"
    )
    print("|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for path in a.files:
        data = open(path, "rb").read()
        blocks = [data[i : i + BLOCK] for i in range(0, len(data), BLOCK)]
        mb = len(data) / 1e6
        for level in levels:
            lib_c = lib_d = float("inf")
            lib_size = 0
            k_c = k_d = 0.0
            k_ratio = 0.0
            for _ in range(a.rounds):
                k = kompakt_round(a.kompakt, path, level)
                k_c, k_d, k_ratio = max(k_c, k["compress_mb_s"]), max(k_d, k["decompress_mb_s"]), k["ratio"]
                c, d, lib_size = library_round(zstandard, blocks, level)
                lib_c, lib_d = min(lib_c, c), min(lib_d, d)
            lc, ld = mb / lib_c, mb / lib_d
            print(
                f"| {os.path.basename(path)} | {level} | {len(data) / lib_size:.3f} | {k_ratio:.3f} | {lc:,.1f} | "
                f"{k_c:,.1f} | {k_c / lc:.2f} | {ld:,.1f} | {k_d:,.1f} | {k_d / ld:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
