"""Helpers shared by the benchmarks in this folder (standard library only; Linux /proc).

- worker processes: their environment, and the cores other processes used while one ran;
- machine state: CPU ticks, busy cores, waiting for quiet, what machine and commit this is;
- memory: the kernel's peak-RSS counter (reset and read), a sampling fallback, heap trimming;
- files: fsync of a file and of its folder;
- reports: the kompakt snapshot the workers import, writing and re-rendering a run's JSON and
  markdown, a timestamped log, and number formats used by several reports.
"""

from __future__ import annotations

import ctypes
import datetime
import gc
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MB = 1e6  # sizes are reported in 10^6 bytes
HZ = os.sysconf("SC_CLK_TCK")  # clock ticks per second, the unit of /proc's CPU times

# -------------------------------------------------------------------------------------------
# Worker processes and machine state
# -------------------------------------------------------------------------------------------


def worker_env():
    """The environment of worker processes. numpy's OpenBLAS starts a thread per core at import
    that spins for about 50 ms of CPU before it sleeps; a worker timing its first operation
    right after import (a small array's set, say) would lose one of two cores to it, which
    costs a multi-threaded writer far more than a single-threaded raw write. No benchmark here
    calls BLAS, so workers run with one OpenBLAS thread unless the caller chose otherwise.
    (Not OMP_NUM_THREADS: pyarrow sizes its thread pool from it.)"""
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def cpu_ticks():
    """The machine's busy and total CPU ticks since boot (/proc/stat)."""
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)  # idle + iowait
    total = sum(vals[:8])  # user nice system idle iowait irq softirq steal
    return total - idle, total


def busy_cores(window=1.0):
    """Cores in use, over the next `window` seconds."""
    b0, t0 = cpu_ticks()
    time.sleep(window)
    b1, t1 = cpu_ticks()
    return (b1 - b0) / max(1, t1 - t0) * (os.cpu_count() or 1)


def wait_idle(max_seconds, limit=0.25):
    """Waits until fewer than `limit` cores are busy, at most `max_seconds`; returns the busy
    cores seen last (None when max_seconds <= 0)."""
    if max_seconds <= 0:
        return None
    start = time.time()
    busy = busy_cores(0.5)
    while busy > limit and time.time() - start < max_seconds:
        time.sleep(1)
        busy = busy_cores(0.5)
    return round(busy, 2)


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpu_mark():
    """A starting point for other_cores(): the machine's CPU ticks, the CPU time of this
    process's waited-for children, and the time."""
    busy, total = cpu_ticks()
    return busy, total, children_cpu(), time.time()


def other_cores(mark):
    """(cores, wall): the average cores that processes other than this one's waited-for
    children used since `mark` (from cpu_mark()), and the seconds since it."""
    b0, t0, c0, w0 = mark
    wall = time.time() - w0
    b1, t1 = cpu_ticks()
    own = children_cpu() - c0
    machine = (b1 - b0) / max(1, t1 - t0) * (os.cpu_count() or 1)
    return max(0.0, machine - own / max(wall, 1e-9)), wall


def git_state():
    def run(*args):
        try:
            return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            return ""

    return {
        "commit": run("rev-parse", "--short", "HEAD").strip(),
        "commit_date": run("log", "-1", "--format=%ci").strip(),
        "dirty_paths": [
            line[3:]
            for line in run("status", "--porcelain").splitlines()
            if line[3:] and not line[3:].startswith("bench/")
        ],
    }


def machine_info():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = next(int(line.split()[1]) for line in f if line.startswith("MemTotal")) * 1024
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "mem_gib": round(mem / 2**30, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "loadavg_start": open("/proc/loadavg").read().split()[:3],
    }


# -------------------------------------------------------------------------------------------
# Memory measurement (Linux /proc)
# -------------------------------------------------------------------------------------------


def proc_status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0]) * 1024
    return out


def reset_peak():
    """Resets VmHWM (and ru_maxrss) to the current RSS; False if the kernel refuses."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    s = proc_status()
    return s["VmHWM"] <= s["VmRSS"] + 64 * 1024


class Sampler(threading.Thread):
    """Fallback when clear_refs is unavailable: max RSS sampled every 5 ms."""

    def __init__(self):
        super().__init__(daemon=True)
        import psutil

        self.proc = psutil.Process()
        self.peak = self.proc.memory_info().rss
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(0.005)


def trim_heap():
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


# -------------------------------------------------------------------------------------------
# Files
# -------------------------------------------------------------------------------------------


def fsync_dir(path):
    """fsync of the folder holding `path`."""
    fd = os.open(os.path.dirname(os.path.abspath(path)) or ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_file(path):
    """fsync of the file `path`, then of its folder."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(path)


# -------------------------------------------------------------------------------------------
# Runs and reports
# -------------------------------------------------------------------------------------------


def snapshot_kompakt(dest, log, env=None):
    """Copies the kompakt package (with its compiled core) so a rebuild during the run changes
    nothing; returns the directory to put first on PYTHONPATH and a description. With `env`
    (a worker environment), puts the directory first on its PYTHONPATH too."""
    import kompakt

    src = os.path.dirname(kompakt.__file__)
    target = os.path.join(dest, "kompakt")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    shutil.copytree(src, target, ignore=shutil.ignore_patterns("__pycache__"))
    so = [f for f in os.listdir(target) if f.startswith("_core")]
    h = hashlib.sha256()
    for f in sorted(so):
        with open(os.path.join(target, f), "rb") as fh:
            h.update(fh.read())
    built = max(os.path.getmtime(os.path.join(src, f)) for f in so)
    built = datetime.datetime.fromtimestamp(built).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
    log(f"kompakt: benchmarking a copy of {src} (core built {built}) in {target}")
    if env is not None:
        env["PYTHONPATH"] = dest + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return dest, {"source": src, "snapshot": target, "core_sha256": h.hexdigest()[:16], "core_built": built}


def logger(name: str, t_start: float) -> Callable[[str], None]:
    """A log function: each message to stderr as `[name  SECONDSs] message`, the seconds
    counted from t_start."""

    def log(msg: str) -> None:
        print(f"[{name} {time.time() - t_start:6.0f}s] {msg}", file=sys.stderr, flush=True)

    return log


def save_report(doc, t_start, summarize, render, json_path, md_path):
    """Adds the elapsed time and summary to ``doc``, then writes the JSON (atomically) and the
    markdown rendered from it."""
    doc["elapsed_s"] = time.time() - t_start
    doc["summary"] = summarize(doc)
    with open(json_path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(json_path + ".tmp", json_path)
    with open(md_path, "w") as f:
        f.write(render(doc))


def rerender_report(json_path, md_path, summarize, render) -> dict[str, Any]:
    """--report-only: the summary and the markdown made again from a run's JSON (prints the
    markdown's path); returns the run's document."""
    with open(json_path) as f:
        doc = json.load(f)
    doc["summary"] = summarize(doc)
    with open(md_path, "w") as f:
        f.write(render(doc))
    print(md_path)
    return doc


def fmt_t(s: float | None, decimals: int = 1) -> str:
    """A time as "12.3 us", "4.56 ms" or "1.23 s" ("-" for None): `decimals` digits after the
    point for microseconds, one more for milliseconds, two for seconds."""
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.{decimals}f} us"
    if s < 1:
        return f"{s * 1e3:.{decimals + 1}f} ms"
    return f"{s:.2f} s"


def fmt_x(x: float | None) -> str:
    """A ratio as "1.23x" ("-" for None)."""
    return "-" if x is None else f"{x:.2f}x"
