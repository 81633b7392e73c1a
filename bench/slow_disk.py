#!/usr/bin/env python3
"""Store sets on a slow disk: does `Store(adapt=True)` compress when the disk is the bottleneck?

`bench/store.py` measures the machine's own disk, which on the development VM is about as fast
as 2 cores can feed it raw bytes, so an adaptive store stores nearly everything raw there. This
script builds a slow disk to check the other side: a loop device with an ext4 file system whose
writes are throttled by the cgroup-v1 blkio controller (`blkio.throttle.write_bps_device` on
the root group, which the kernel's write-back threads belong to). Needs root, `losetup`,
`mkfs.ext4` and cgroup v1's blkio; it says so and exits otherwise.

Each method runs in a fresh process that sets COUNT different random-walk float64 arrays of N
values (bench/store.py's "walk" data: N(0, 1) steps, rounded to 2 decimals) one after another
into one store, so later sets can use what the first one measured.
Printed: milliseconds per set and the set's compression ratio, for each disk speed.

    sudo python3 bench/slow_disk.py                    # 20 and 100 MB/s, 8 and 80 MB arrays
    sudo python3 bench/slow_disk.py --rates 50 --sizes 10000000 --count 4

The throttle lets a short burst through at full speed (about a tenth of a second of its rate),
much like a drive's write cache or a cloud volume's burst allowance.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

WORKER = r"""
import json, os, sys, time
import numpy as np, kompakt
n, count, method, folder = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
rng = np.random.default_rng(20261126)
arrays = [np.round(np.cumsum(rng.standard_normal(n)), 2) for _ in range(count)]
codec, _, adapt = method.partition("+")
store = kompakt.Store(folder, codec=codec, adapt=bool(adapt))
rows = []
for i, a in enumerate(arrays):
    before = store.info()["stored_bytes"]
    t = time.perf_counter()
    store.set(f"a{i}", a)
    t = time.perf_counter() - t
    rows.append((t, a.nbytes / max(1, store.info()["stored_bytes"] - before)))
store.close()
print(json.dumps(rows))
"""


def run(cmd: list[str], **kw: Any) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}... failed ({done.returncode}):\n{done.stderr.strip()}")
    return done.stdout.strip()


class SlowDisk:
    """A throttled loop device mounted at a temporary folder under `where`; everything it set
    up is undone on exit, step by step, even when a step fails (and on SIGTERM or SIGHUP)."""

    THROTTLE = "/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device"

    def __init__(self, size_mb: int, where: str):
        self.size_mb = size_mb
        self.where = where
        self.undo: list[tuple[str, Callable[[], None]]] = []
        self.majmin = ""

    def __enter__(self) -> SlowDisk:
        problems = []
        if os.geteuid() != 0:
            problems.append("must run as root")
        if not os.path.exists(self.THROTTLE):
            problems.append(f"no cgroup-v1 blkio throttle at {self.THROTTLE}")
        for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
            if shutil.which(tool) is None:
                problems.append(f"{tool} not found")
        if problems:
            sys.exit("slow_disk.py: " + "; ".join(problems))
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: sys.exit("slow_disk.py: stopped by signal; cleaning up"))
        try:
            self._set_up()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _set_up(self) -> None:
        # On the machine's own disk, not /tmp, which may be a RAM disk.
        fd, image = tempfile.mkstemp(prefix="kompakt-slowdisk-", suffix=".img", dir=self.where)
        self.undo.append((f"rm {image}", lambda: os.unlink(image)))
        os.ftruncate(fd, self.size_mb << 20)
        os.close(fd)
        device = run(["losetup", "-f", "--show", image])
        self.undo.append((f"losetup -d {device}", lambda: run(["losetup", "-d", device])))
        # Initialised now, so that no lazy initialisation writes during the measurements.
        run(["mkfs.ext4", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", device])
        self.mount = tempfile.mkdtemp(prefix="kompakt-slowdisk-mnt-", dir=self.where)
        mount = self.mount
        self.undo.append((f"rmdir {mount}", lambda: os.rmdir(mount)))
        run(["mount", device, mount])
        self.undo.append((f"umount {mount}", lambda: umount(mount)))
        st = os.stat(device)
        self.majmin = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        # Undone first: a loop device keeps its number after losetup -d, and whatever uses
        # it next would stay throttled.
        self.undo.append((f"echo '{self.majmin} 0' > {self.THROTTLE}", lambda: self.throttle(0)))

    def throttle(self, bytes_per_s: int) -> None:
        with open(self.THROTTLE, "w") as f:
            f.write(f"{self.majmin} {bytes_per_s}\n")  # 0 removes the limit

    def __exit__(self, *exc: object) -> None:
        failed = []
        while self.undo:
            what, step = self.undo.pop()
            try:
                step()
            except BaseException as e:  # noqa: BLE001 - every step gets its chance
                failed.append(f"{what}  # {e}")
        if failed:
            print("slow_disk.py: could not undo, do it by hand:\n  " + "\n  ".join(failed), file=sys.stderr)


def umount(path: str) -> None:
    for attempt in range(5):
        if subprocess.run(["umount", path], capture_output=True).returncode == 0:
            return
        time.sleep(0.5 * (attempt + 1))
    run(["umount", "-l", path])  # lazy: detached now, freed when no longer busy


def measure(n: int, count: int, method: str, where: str) -> list[tuple[float, float]]:
    folder = tempfile.mkdtemp(prefix="store-", dir=where)
    try:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        out = run([sys.executable, "-c", WORKER, str(n), str(count), method, folder], env=env)
        return [tuple(r) for r in json.loads(out.splitlines()[-1])]
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rates", default="20,100", help="disk speeds in MB/s (MiB), comma-separated")
    p.add_argument("--sizes", default="1000000,10000000", help="array lengths (float64 values)")
    p.add_argument("--count", type=int, default=5, help="sets per process (default 5)")
    p.add_argument("--methods", default="none,zstd:1,zstd:1+adapt", help="codecs; +adapt for adapt=True")
    p.add_argument(
        "--fast",
        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "store", "out"),
        help="a folder on the machine's own disk, measured for comparison",
    )
    a = p.parse_args()
    rates = [int(r) for r in a.rates.split(",")]
    sizes = [int(s) for s in a.sizes.split(",")]
    methods = a.methods.split(",")
    need_mb = 2 * a.count * max(sizes) * 8 // 10**6 + 256
    os.makedirs(a.fast, exist_ok=True)
    print("ms per set / ratio, sets in order (the first one knows nothing of the disk)")
    with SlowDisk(need_mb, a.fast) as disk:
        for rate in rates + [None]:
            if rate is not None:
                disk.throttle(rate << 20)
            where = disk.mount if rate is not None else a.fast
            label = f"{rate} MiB/s" if rate is not None else "own disk"
            for n in sizes:
                print(f"\n{label}, {n * 8 / 1e6:g} MB arrays")
                for m in methods:
                    rows = measure(n, a.count, m, where)
                    cells = " ".join(f"{t * 1000:6.0f}/{r:4.2f}" for t, r in rows)
                    print(f"  {m:<14} {cells}")


if __name__ == "__main__":
    main()
