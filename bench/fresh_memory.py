"""Why a first whole read in a fresh process is sometimes 3-10x its usual time (issue 57).

    python3 bench/fresh_memory.py [--runs 8] [--gaps 0,5] [--rows 10000000]

The fst-blog table of bench/table.py (10 M rows: bool, int32, float64, dictionary; 133 MB in
Arrow) is written once as kompakt, Parquet-zstd and Vortex files. Then, round robin, fresh
processes each do one thing twice and time both:

- ``touch`` / ``touch-4k``: ``numpy.ones`` of the table's Arrow size, on huge pages (numpy's
  default) / on 4 KiB pages (no file, no decoder: the cost of writing to memory the process
  has not used before);
- ``kompakt``: ``kompakt.read_table(path, to="arrow")`` with the allocator's default;
  ``kompakt-huge`` / ``kompakt-small``: the same with ``KOMPAKT_HUGE_PAGES=on`` / ``off``;
- ``parquet``: ``pyarrow.parquet.read_table(path)``;
- ``vortex``: ``vortex.open(path).to_arrow().read_all()`` (if the package is installed);
- ``load-numpy``, ``load-kompakt`` (``-huge``: ``KOMPAKT_HUGE_PAGES=on``), ``load-blosc2``:
  python_objects.py's sorted int64 array (800 MB) by ``np.load``, ``kompakt.load`` (saved
  with ``codec="lz4"``) and ``blosc2.load_array`` (lz4, level 5), as the README's row "load
  800 MB of sorted int64" (--no-array leaves them out).

Each gap of --gaps is a round: every process starts after that many seconds of idle (0:
back to back, as benchmarks run; 5: as a user starts a program, once freed memory has gone
back to the host). For each call it records the wall time, the process's system and user CPU
time and its minor page faults (``getrusage``), and the kernel's huge-page faults
(``/proc/vmstat`` ``thp_fault_alloc``, machine-wide, so only a rough figure). The report
splits each kind's first calls into a fast mode (within 1.5x of the fastest) and a slow one,
and gives the machine's memory settings that decide it: transparent huge pages, and whether
the VM's balloon device reports free pages to the host (``VIRTIO_BALLOON_F_REPORTING``,
feature bit 5). With reporting on, memory the guest leaves free for a few seconds goes back
to the host in 2 MiB blocks (``page_reporting_order`` 9), and a process that faults such a
block in as a huge page waits for the host to supply it again: a cost in system time that
every program pays, whatever it reads, and that 4 KiB pages do not show.

Outputs bench/results/fresh_memory.md and .json. A full run takes about 12 minutes.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from common import HERE, git_state, logger, machine_info, save_report, worker_env

KINDS = ("touch", "touch-4k", "kompakt", "kompakt-huge", "kompakt-small", "parquet", "vortex")
LOADS = ("load-numpy", "load-kompakt", "load-kompakt-huge", "load-blosc2")
ARRAY_ELEMENTS = 100_000_000  # python_objects.py's int64_sorted: 800 MB
SLOW = 1.5  # a first call this many times the kind's fastest is in the slow mode

WORKER = r"""
import json, resource, sys, time
kind, path, nbytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
import numpy as np
if kind == "touch-4k":
    np.core.multiarray._set_madvise_hugepage(False)
import pyarrow as pa
import pyarrow.parquet as pq
import kompakt
if kind == "vortex":
    import vortex
if kind == "load-blosc2":
    import blosc2

def thp():
    with open("/proc/vmstat") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("thp_fault_alloc "))

def call():
    if kind.startswith("touch"):
        return np.ones(nbytes // 8)
    if kind == "load-numpy":
        return np.load(path)
    if kind.startswith("load-kompakt"):
        return kompakt.load(path)
    if kind == "load-blosc2":
        return blosc2.load_array(path)
    if kind.startswith("kompakt"):
        return kompakt.read_table(path, to="arrow")
    if kind == "parquet":
        return pq.read_table(path)
    return vortex.open(path).to_arrow().read_all()

out = []
for _ in range(2):
    r0, h0 = resource.getrusage(resource.RUSAGE_SELF), thp()
    t0 = time.perf_counter()
    result = call()
    wall = time.perf_counter() - t0
    r1, h1 = resource.getrusage(resource.RUSAGE_SELF), thp()
    del result
    out.append({"wall_s": wall, "sys_s": r1.ru_stime - r0.ru_stime, "user_s": r1.ru_utime - r0.ru_utime,
                "minor_faults": r1.ru_minflt - r0.ru_minflt, "thp_faults": h1 - h0})
print("RESULT " + json.dumps(out), flush=True)
"""


def read_text(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def memory_settings() -> dict[str, Any]:
    """The kernel's huge-page settings and the balloon's free-page reporting."""
    balloon = None
    for dev in glob.glob("/sys/bus/virtio/devices/*"):
        if read_text(os.path.join(dev, "device")) == "0x0005":
            bits = read_text(os.path.join(dev, "features")) or ""
            balloon = {"features": bits, "free_page_reporting": len(bits) > 5 and bits[5] == "1"}
    return {
        "thp_enabled": read_text("/sys/kernel/mm/transparent_hugepage/enabled"),
        "thp_defrag": read_text("/sys/kernel/mm/transparent_hugepage/defrag"),
        "page_reporting_order": read_text("/sys/module/page_reporting/parameters/page_reporting_order"),
        "virtio_balloon": balloon,
        "kompakt_huge_pages": huge_pages_choice(),
    }


def huge_pages_choice() -> bool | None:
    """What kompakt's allocator chose in a fresh process (None: ``MIMALLOC_ALLOW_THP`` did)."""
    code = "import kompakt._core as c; print(c._huge_pages)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=worker_env())
    return {"True": True, "False": False}.get(out.stdout.strip())


def prepare_array(tmp: str, log: Any) -> tuple[dict[str, str], int]:
    """python_objects.py's sorted int64 (800 MB) as np.save, kompakt lz4 and blosc2 lz4 files."""
    import numpy as np

    import kompakt

    rng = np.random.default_rng(20240701)
    array = 1_000_000 + np.cumsum(rng.integers(0, 64, ARRAY_ELEMENTS, dtype=np.int64))
    paths = {"load-numpy": os.path.join(tmp, "a.npy"), "load-kompakt": os.path.join(tmp, "a.kpk")}
    paths["load-kompakt-huge"] = paths["load-kompakt"]
    np.save(paths["load-numpy"], array)
    kompakt.save(array, paths["load-kompakt"], codec="lz4")
    try:
        import blosc2

        paths["load-blosc2"] = os.path.join(tmp, "a.b2nd")
        blosc2.save_array(array, paths["load-blosc2"], mode="w", cparams={"codec": blosc2.Codec.LZ4, "clevel": 5})
    except ImportError:
        log("blosc2 is not installed: its loads are left out")
    return paths, int(array.nbytes)


def prepare(rows: int, tmp: str, log: Any) -> tuple[dict[str, str], int]:
    import pyarrow.parquet as pq

    import kompakt
    import table  # bench/table.py: the cached fst-blog table

    table_path = table.ensure_dataset(os.path.join(HERE, "data", "table"), "fst", rows, log)
    data = table.load_dataset(table_path)
    paths = {"touch": "-", "touch-4k": "-", "kompakt": os.path.join(tmp, "fst.kpk")}
    paths["kompakt-huge"] = paths["kompakt-small"] = paths["kompakt"]
    paths["parquet"] = os.path.join(tmp, "fst.parquet")
    kompakt.write_table(data, paths["kompakt"])
    pq.write_table(data, paths["parquet"], compression="zstd")
    try:
        import vortex

        paths["vortex"] = os.path.join(tmp, "fst.vortex")
        vortex.io.write(data, paths["vortex"])
    except ImportError:
        log("vortex is not installed: its reads are left out")
    return paths, int(data.nbytes)


def run_worker(kind: str, path: str, nbytes: int) -> list[dict[str, float]]:
    env = worker_env()
    if kind.endswith(("kompakt-huge", "kompakt-small")):
        env["KOMPAKT_HUGE_PAGES"] = "on" if kind.endswith("huge") else "off"
    p = subprocess.run(
        [sys.executable, "-c", WORKER, kind, path, str(nbytes)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    line = next(line for line in p.stdout.splitlines() if line.startswith("RESULT "))
    return list(json.loads(line[len("RESULT ") :]))


def modes(times: list[float]) -> dict[str, Any]:
    fast_limit = min(times) * SLOW
    fast = [t for t in times if t <= fast_limit]
    slow = [t for t in times if t > fast_limit]
    return {
        "fast_n": len(fast),
        "fast_median_s": statistics.median(fast),
        "slow_n": len(slow),
        "slow_median_s": statistics.median(slow) if slow else None,
        "slow_max_s": max(slow) if slow else None,
    }


def summarize_calls(calls: dict[str, list[list[dict[str, float]]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind, runs in calls.items():
        first = [c[0] for c in runs]
        second = [c[1] for c in runs]
        fast_limit = min(c["wall_s"] for c in first) * SLOW
        slow_first = [c for c in first if c["wall_s"] > fast_limit]
        fast_first = [c for c in first if c["wall_s"] <= fast_limit]
        out[kind] = {
            "first": modes([c["wall_s"] for c in first]),
            "second": modes([c["wall_s"] for c in second]),
            "first_sys_fast_s": statistics.median(c["sys_s"] for c in fast_first),
            "first_sys_slow_s": statistics.median(c["sys_s"] for c in slow_first) if slow_first else None,
            "first_minor_faults": statistics.median(c["minor_faults"] for c in first),
            "second_minor_faults": statistics.median(c["minor_faults"] for c in second),
        }
    return out


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    return {gap: summarize_calls(calls) for gap, calls in doc["calls_by_gap"].items()}


def ms(s: float | None) -> str:
    return "-" if s is None else f"{s * 1e3:.1f}"


def render(doc: dict[str, Any]) -> str:
    m = doc["memory"]
    lines = [
        "# A first read in a fresh process: fast and slow modes",
        "",
        f"Commit {doc['git']['commit']}, {doc['date']}, {doc['machine']['cpu']}, {doc['machine']['cores']} cores, "
        f"kernel {doc['machine']['kernel']}. Table: fst-blog, {doc['rows']:,} rows, {doc['nbytes'] / 1e6:.0f} MB "
        f"in Arrow; `load-*`: a sorted int64 array of {doc['array_nbytes'] / 1e6:.0f} MB (np.save, kompakt lz4, "
        f"blosc2 lz4). {doc['runs']} fresh processes per kind and gap, each calling twice.",
        "",
        f"Memory: transparent huge pages `{m['thp_enabled']}`, defrag `{m['thp_defrag']}`; balloon free-page "
        f"reporting {'on' if (m['virtio_balloon'] or {}).get('free_page_reporting') else 'off or absent'}, "
        f"order {m['page_reporting_order']}; kompakt's large buffers on huge pages by default: "
        f"{m['kompakt_huge_pages']} (`kompakt-huge`: `KOMPAKT_HUGE_PAGES=on`, `kompakt-small`: `off`).",
    ]
    for gap, s in doc["summary"].items():
        lines += [
            "",
            f"## {gap} s idle before each process",
            "",
            "| kind | first call: fast mode, ms (n) | slow mode, ms (n, max) | system CPU fast / slow, ms "
            "| minor faults first / second | second call, ms (n slow) |",
            "|--|--|--|--|--|--|",
        ]
        for kind, k in s.items():
            f, sec = k["first"], k["second"]
            slow = "-" if not f["slow_n"] else f"{ms(f['slow_median_s'])} ({f['slow_n']}, {ms(f['slow_max_s'])})"
            lines.append(
                f"| {kind} | {ms(f['fast_median_s'])} ({f['fast_n']}) | {slow} | {ms(k['first_sys_fast_s'])} / "
                f"{ms(k['first_sys_slow_s'])} | {k['first_minor_faults']:.0f} / {k['second_minor_faults']:.0f} "
                f"| {ms(sec['fast_median_s'])} ({sec['slow_n']}) |"
            )
    lines += [
        "",
        "A slow mode in `touch` (numpy writing fresh memory on huge pages, no file read) with the same",
        "faults and more system time is the machine's, not a reader's: see the module docstring.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=8, help="fresh processes per kind and gap (default 8)")
    p.add_argument("--rows", type=int, default=10_000_000, help="rows of the fst-blog table (default 10 M)")
    p.add_argument("--gaps", default="0,5", help="seconds of idle before each process, one table each (default 0,5)")
    p.add_argument("--no-array", dest="array", action="store_false", help="leave out the 800 MB array loads")
    p.add_argument("--results", default=os.path.join(HERE, "results"), help="folder of the report")
    a = p.parse_args()
    t_start = time.time()
    log = logger("fresh_memory", t_start)
    os.makedirs(a.results, exist_ok=True)
    calls_by_gap: dict[str, dict[str, list[list[dict[str, float]]]]] = {}
    with tempfile.TemporaryDirectory(prefix="kompakt-fresh-") as tmp:
        paths, nbytes = prepare(a.rows, tmp, log)
        array_paths, array_nbytes = prepare_array(tmp, log) if a.array else ({}, 0)
        kinds = [(k, paths[k], nbytes) for k in KINDS if k in paths]
        kinds += [(k, array_paths[k], array_nbytes) for k in LOADS if k in array_paths]
        for gap in (float(g) for g in a.gaps.split(",")):
            calls: dict[str, list[list[dict[str, float]]]] = {k: [] for k, _, _ in kinds}
            for run in range(a.runs):
                for kind, path, size in kinds:
                    time.sleep(gap)
                    calls[kind].append(run_worker(kind, path, size))
                firsts = ", ".join(f"{k} {c[-1][0]['wall_s'] * 1e3:.0f} ms" for k, c in calls.items())
                log(f"gap {gap:g} s, run {run + 1}/{a.runs}: first calls {firsts}")
            calls_by_gap[f"{gap:g}"] = calls
    doc = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "git": git_state(),
        "machine": machine_info(),
        "memory": memory_settings(),
        "rows": a.rows,
        "nbytes": nbytes,
        "array_nbytes": array_nbytes,
        "runs": a.runs,
        "calls_by_gap": calls_by_gap,
    }
    base = os.path.join(a.results, "fresh_memory")
    save_report(doc, t_start, summarize, render, base + ".json", base + ".md")
    print(render(doc))


if __name__ == "__main__":
    main()
