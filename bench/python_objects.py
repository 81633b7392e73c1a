#!/usr/bin/env python3
"""Python object save/load benchmark: kompakt against pickle, numpy, zstandard, lz4, joblib
and blosc2, side by side in one run (see bench/README.md, "Python objects").

    python3 bench/python_objects.py                 full run: 3 repeats, about 15 minutes on a quiet
                                                    2-core machine, up to --noise-budget (15 min) more
                                                    when other processes keep it busy
    python3 bench/python_objects.py --quick         small data, 1 repeat: a smoke test (~2 minutes)
    python3 bench/python_objects.py --report-only   re-render the markdown from the JSON

Every (dataset, method, operation, repeat) runs in a fresh worker process
(`python_objects.py --worker save|load ...`) so that its peak RSS is its own: the worker
builds its input first (save: reads the dataset from its cache in bench/data/python/; load:
nothing), resets the kernel's peak-RSS counter (`/proc/self/clear_refs` 5), takes the RSS as
the baseline, runs the timed operation, then reads the peak (`VmHWM`). Without clear_refs it
falls back to sampling the RSS with psutil every 5 ms. Loads are checked against a digest of
the dataset, outside the timed region.

Outputs: bench/results/python_objects.md and .json (python_objects_quick.* with --quick).
Knobs: --repeats (env BENCH_REPEATS), --idle-wait (BENCH_IDLE_WAIT), --retries (BENCH_RETRIES),
--busy-max (BENCH_BUSY_MAX), --noise-budget (BENCH_NOISE_BUDGET), --datasets, --methods,
--data-dir (BENCH_PY_DATA), --results (BENCH_RESULTS), --tmp (BENCH_TMP), --no-snapshot.
The workers import a private copy of the kompakt package made at the start of the run, so a
rebuild or reinstall during the run changes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import hashlib
import json
import os
import pickle
import statistics
import subprocess
import sys
import time
import zlib

from common import (
    MB,
    ROOT,
    Sampler,
    cpu_mark,
    cpu_seconds,
    fsync_dir,
    fsync_file,
    git_state,
    logger,
    machine_info,
    other_cores,
    proc_status,
    rerender_report,
    reset_peak,
    save_report,
    snapshot_kompakt,
    trim_heap,
    wait_idle,
    worker_env,
)

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20240501
LAYOUT_VERSION = 1

SIZES = {
    "full": {"n": 100_000_000, "rows": 10_000_000},
    "quick": {"n": 4_000_000, "rows": 400_000},
}

# The 70 city names of the core benchmark's table (bench/gen_data.py, beside this file).
from gen_data import CITIES  # noqa: E402

DATASETS = {
    "float64_random": {
        "kind": "array",
        "file": "float64_random.npy",
        "describe": "float64, uniform random in [0, 1) (runif), {n:,} elements",
    },
    "int64_sorted": {
        "kind": "array",
        "file": "int64_sorted.npy",
        "describe": "int64, sorted: 1,000,000 + cumulative sum of random steps 0..63, {n:,} elements",
    },
    "dataframe": {
        "kind": "frame",
        "file": "dataframe.pkl",
        "describe": "pandas DataFrame, {rows:,} rows: flag (nullable 'boolean', ~10 % NA), "
        "qty (int64 1..100), price (float64, one of 20 prices), "
        "city (category of 70 city names, Zipf-like frequencies)",
    },
}

# -------------------------------------------------------------------------------------------
# Methods. save(obj, path) must leave the file durable (fsync) before it returns: kompakt.save
# fsyncs the file and its folder itself, so every other method gets the same (fsync of the
# file, then of the folder), inside the timed region.
# -------------------------------------------------------------------------------------------


def _write_bytes(path, data):
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(path)


def _read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def kompakt_save(codec, adapt=False):
    def save(obj, path):
        import kompakt

        kompakt.save(obj, path, codec=codec, adapt=adapt)

    return save


def kompakt_load(path):
    import kompakt

    return kompakt.load(path)


def pickle_save(obj, path):
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=5)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(path)


def pickle_load(path):
    with open(path, "rb") as f:
        return pickle.load(f)


def numpy_save(obj, path):
    import numpy

    with open(path, "wb") as f:
        numpy.save(f, obj)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(path)


def numpy_load(path):
    import numpy

    return numpy.load(path)


def pickle_zstd_save(obj, path):
    import zstandard

    data = pickle.dumps(obj, protocol=5)
    packed = zstandard.ZstdCompressor(level=3).compress(data)  # threads=0: single-threaded
    del data
    _write_bytes(path, packed)


def pickle_zstd_load(path):
    import zstandard

    data = zstandard.ZstdDecompressor().decompress(_read_bytes(path))
    return pickle.loads(data)


def pickle_lz4_save(obj, path):
    import lz4.frame

    data = pickle.dumps(obj, protocol=5)
    packed = lz4.frame.compress(data)  # library defaults: level 0 (fast), 64 KB blocks
    del data
    _write_bytes(path, packed)


def pickle_lz4_load(path):
    import lz4.frame

    data = lz4.frame.decompress(_read_bytes(path))
    return pickle.loads(data)


def joblib_save(compress):
    def save(obj, path):
        import joblib

        joblib.dump(obj, path, compress=compress)
        fsync_file(path)

    return save


def joblib_load(path):
    import joblib

    return joblib.load(path)


def blosc2_save(obj, path):
    import blosc2
    import numpy

    if isinstance(obj, numpy.ndarray):
        blosc2.save_array(obj, path, mode="w")  # library defaults (see the report)
    else:
        # blosc2 has no DataFrame container and blosc2.pack needs .itemsize: the pickle of the
        # object goes into a super-chunk frame file with the library's default parameters.
        data = pickle.dumps(obj, protocol=5)
        schunk = blosc2.SChunk(data=data, urlpath=path, mode="w")
        del schunk, data
    fsync_file(path)


def blosc2_load(path):
    import blosc2

    schunk = blosc2.open(path, mode="r")
    if "__pack_tensor__" in schunk.vlmeta:
        del schunk
        return blosc2.load_array(path)
    data = schunk[:]
    del schunk
    return pickle.loads(data)


def blosc2_array_save(codec, clevel):
    """An array with one of blosc2's codecs and levels, shuffle as by default (what issue 33
    compares loads with: blosc2 lz4, and zstd level 1)."""

    def save(obj, path):
        import blosc2

        blosc2.save_array(obj, path, mode="w", cparams={"codec": getattr(blosc2.Codec, codec), "clevel": clevel})
        fsync_file(path)

    return save


# name -> (applies to, save, load, extension, compressed, threads, description)
METHODS = {
    "kompakt": (
        "all",
        kompakt_save(None),
        kompakt_load,
        "kpk",
        True,
        "all cores",
        "kompakt.save(obj, path) / kompakt.load(path), default settings",
    ),
    "kompakt adapt": (
        "all",
        kompakt_save(None, adapt=True),
        kompakt_load,
        "kpk",
        True,
        "all cores",
        "kompakt.save(obj, path, adapt=True): blocks stored raw while the disk waits",
    ),
    "kompakt lz4": (
        "all",
        kompakt_save("lz4"),
        kompakt_load,
        "kpk",
        True,
        "all cores",
        'kompakt.save(obj, path, codec="lz4")',
    ),
    "kompakt zstd:3": (
        "all",
        kompakt_save("zstd:3"),
        kompakt_load,
        "kpk",
        True,
        "all cores",
        'kompakt.save(obj, path, codec="zstd:3")',
    ),
    "pickle": (
        "all",
        pickle_save,
        pickle_load,
        "pkl",
        False,
        "1",
        "pickle.dump(obj, f, protocol=5) to an open file / pickle.load(f)",
    ),
    "numpy": (
        "array",
        numpy_save,
        numpy_load,
        "npy",
        False,
        "1",
        "numpy.save(f, arr) to an open file / numpy.load(path)",
    ),
    "pickle+zstd:3": (
        "all",
        pickle_zstd_save,
        pickle_zstd_load,
        "pkl.zst",
        True,
        "1",
        "pickle.dumps(protocol=5), zstandard.ZstdCompressor(level=3).compress "
        "(library default: single-threaded), write / read, decompress, pickle.loads",
    ),
    "pickle+lz4": (
        "all",
        pickle_lz4_save,
        pickle_lz4_load,
        "pkl.lz4",
        True,
        "1",
        "pickle.dumps(protocol=5), lz4.frame.compress (defaults: level 0), write / "
        "read, lz4.frame.decompress, pickle.loads",
    ),
    "joblib lz4:3": (
        "all",
        joblib_save(("lz4", 3)),
        joblib_load,
        "joblib",
        True,
        "1",
        'joblib.dump(obj, path, compress=("lz4", 3)) / joblib.load(path)',
    ),
    "joblib zlib:3": (
        "all",
        joblib_save(("zlib", 3)),
        joblib_load,
        "joblib",
        True,
        "1",
        'joblib.dump(obj, path, compress=("zlib", 3)) / joblib.load(path)',
    ),
    "blosc2": (
        "all",
        blosc2_save,
        blosc2_load,
        "bl2",
        True,
        "blosc2 default (all cores)",
        "arrays: blosc2.save_array(arr, path, mode='w') / blosc2.load_array(path), "
        "library defaults; DataFrame: pickle.dumps(protocol=5) into "
        "blosc2.SChunk(data=..., urlpath=path), defaults / blosc2.open(path)[:], "
        "pickle.loads",
    ),
    "blosc2 lz4": (
        "array",
        blosc2_array_save("LZ4", 5),
        blosc2_load,
        "bl2",
        True,
        "blosc2 default (all cores)",
        "blosc2.save_array(arr, path, mode='w', cparams={'codec': LZ4, 'clevel': 5}) (shuffle, as "
        "by default) / blosc2.load_array(path)",
    ),
    "blosc2 zstd:1": (
        "array",
        blosc2_array_save("ZSTD", 1),
        blosc2_load,
        "bl2",
        True,
        "blosc2 default (all cores)",
        "blosc2.save_array(arr, path, mode='w', cparams={'codec': ZSTD, 'clevel': 1}) (shuffle, as "
        "by default) / blosc2.load_array(path)",
    ),
}
COMPRESSED_ALTERNATIVES = [m for m, spec in METHODS.items() if spec[4] and not m.startswith("kompakt")]
KOMPAKT_METHODS = [m for m in METHODS if m.startswith("kompakt")]


def applies(method, dataset):
    scope = METHODS[method][0]
    return scope == "all" or scope == DATASETS[dataset]["kind"]


# -------------------------------------------------------------------------------------------
# Memory measurement (Linux /proc)
# -------------------------------------------------------------------------------------------


# -------------------------------------------------------------------------------------------
# Datasets
# -------------------------------------------------------------------------------------------


def make_dataset(name, size):
    import numpy as np

    if name == "float64_random":
        return np.random.default_rng(SEED + 1).random(size["n"], dtype=np.float64)
    if name == "int64_sorted":
        rng = np.random.default_rng(SEED + 2)
        steps = rng.integers(0, 64, size=size["n"], dtype=np.int64)
        out = np.cumsum(steps, dtype=np.int64)
        del steps
        out += 1_000_000
        return out
    if name == "dataframe":
        import pandas as pd

        rows = size["rows"]
        rng = np.random.default_rng(SEED + 3)
        flag = pd.arrays.BooleanArray(rng.integers(0, 2, size=rows).astype(bool), rng.random(rows) < 0.10)
        qty = rng.integers(1, 101, size=rows, dtype=np.int64)
        prices = np.round(rng.uniform(0.5, 500.0, size=20), 2)
        price = prices[rng.integers(0, 20, size=rows)]
        weights = 1.0 / np.arange(1, len(CITIES) + 1)
        codes = rng.choice(len(CITIES), size=rows, p=weights / weights.sum()).astype(np.int8)
        city = pd.Categorical.from_codes(codes, categories=CITIES)
        df = pd.DataFrame({"flag": flag, "qty": qty, "price": price, "city": city})
        assert str(df["flag"].dtype) == "boolean" and str(df["city"].dtype) == "category"
        return df
    raise KeyError(name)


def object_size(obj):
    import numpy as np

    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    return int(obj.memory_usage(index=True, deep=True).sum())


def digest(obj):
    """A cheap but complete fingerprint: type, dtypes, shape and a CRC of every value."""
    import numpy as np

    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        return f"ndarray {a.dtype.str} {a.shape} crc32={zlib.crc32(memoryview(a).cast('B')):08x}"
    import pandas as pd

    if isinstance(obj, pd.DataFrame):
        hashes = pd.util.hash_pandas_object(obj, index=True).to_numpy()
        parts = [
            type(obj.index).__name__,
            str(len(obj)),
            ",".join(f"{c}:{obj[c].dtype}:{int(obj[c].isna().sum())}" for c in obj.columns),
            f"crc32={zlib.crc32(memoryview(np.ascontiguousarray(hashes)).cast('B')):08x}",
        ]
        if "city" in obj.columns and hasattr(obj["city"], "cat"):
            parts.append(
                "categories="
                + hashlib.sha1("\x00".join(map(str, obj["city"].cat.categories)).encode()).hexdigest()[:12]
            )
        return "DataFrame " + " ".join(parts)
    return f"{type(obj).__name__} (no digest)"


def load_cached(path):
    import numpy as np

    if path.endswith(".npy"):
        return np.load(path)
    with open(path, "rb") as f:
        return pickle.load(f)


def ensure_data(data_dir, size, names, log):
    """Generates the datasets (fixed seed) unless the cache matches; returns the manifest."""
    import numpy as np
    import pandas as pd

    os.makedirs(data_dir, exist_ok=True)
    manifest_path = os.path.join(data_dir, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        manifest = {}
    for name in names:
        spec = {
            "layout": LAYOUT_VERSION,
            "seed": SEED,
            "n": size["n"],
            "rows": size["rows"],
            "numpy": np.__version__.split(".")[0],
            "pandas": pd.__version__.split(".")[0],
        }
        path = os.path.join(data_dir, DATASETS[name]["file"])
        have = manifest.get(name)
        if (
            have
            and all(have.get(k) == v for k, v in spec.items())
            and os.path.exists(path)
            and os.path.getsize(path) == have.get("file_bytes")
        ):
            log(f"data: {name} is up to date ({path})")
            continue
        t = time.time()
        obj = make_dataset(name, size)
        tmp = path + ".tmp"
        if DATASETS[name]["kind"] == "array":
            np.save(tmp + ".npy", obj)
            os.replace(tmp + ".npy", path)
        else:
            with open(tmp, "wb") as f:
                pickle.dump(obj, f, protocol=5)
            os.replace(tmp, path)
        spec.update(file_bytes=os.path.getsize(path), N=object_size(obj), digest=digest(obj))
        if DATASETS[name]["kind"] == "array":
            spec.update(dtype=obj.dtype.str, shape=list(obj.shape))
        else:
            spec.update(
                dtypes={c: str(obj[c].dtype) for c in obj.columns},
                na={c: int(obj[c].isna().sum()) for c in obj.columns},
            )
        del obj
        gc.collect()
        manifest[name] = spec
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=2, sort_keys=True)
        log(f"data: wrote {path} ({spec['file_bytes'] / MB:.0f} MB) in {time.time() - t:.1f} s")
    return manifest


# -------------------------------------------------------------------------------------------
# Worker: one operation in a fresh process
# -------------------------------------------------------------------------------------------


def import_everything():
    """Every library any method uses, imported before the baseline so that no method pays
    for its imports inside the measured region (and all workers start alike)."""
    import blosc2  # noqa: F401
    import joblib  # noqa: F401
    import lz4.frame  # noqa: F401
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import psutil  # noqa: F401
    import pyarrow  # noqa: F401
    import zstandard  # noqa: F401

    import kompakt  # noqa: F401


def worker(a):
    import_everything()
    import kompakt

    _, save, load, _, _, _, _ = METHODS[a.method]
    out = {"op": a.worker, "method": a.method, "dataset": a.dataset, "kompakt_file": kompakt.__file__}
    obj = None
    if a.worker == "save":
        obj = load_cached(os.path.join(a.data_dir, DATASETS[a.dataset]["file"]))
        if os.path.exists(a.file):
            os.remove(a.file)
    trim_heap()
    exact = reset_peak()
    sampler = None
    if not exact:
        sampler = Sampler()
        sampler.start()
    base = proc_status()["VmRSS"]
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    if a.worker == "save":
        save(obj, a.file)
    else:
        obj = load(a.file)
    t1 = time.perf_counter()
    cpu1 = cpu_seconds()
    status = proc_status()
    if sampler is not None:
        sampler.stop.set()
        sampler.join()
        peak = max(sampler.peak, status["VmRSS"])
    else:
        peak = status["VmHWM"]
    out.update(
        seconds=t1 - t0,
        cpu_seconds=cpu1 - cpu0,
        rss_base=base,
        rss_peak=peak,
        rss_after=status["VmRSS"],
        extra=peak - base,
        peak_method="VmHWM after clear_refs" if exact else "psutil sampling every 5 ms",
    )
    # Outside the timed region.
    if a.worker == "save":
        out["file_bytes"] = os.path.getsize(a.file)
        if a.method.startswith("kompakt"):
            info = kompakt.info(a.file)
            out["kompakt_streams"] = [
                {"raw": s["raw_size"], "stored": s["stored_size"], "codecs": s["codecs"], "filters": s["filters"]}
                for s in info["streams"]
            ]
    else:
        out["digest"] = digest(obj)
        out["type"] = type(obj).__name__
    print("RESULT " + json.dumps(out), flush=True)


# -------------------------------------------------------------------------------------------
# Driver
# -------------------------------------------------------------------------------------------


def run_worker(a, op, method, dataset, path, env):
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        op,
        "--method",
        method,
        "--dataset",
        dataset,
        "--file",
        path,
        "--data-dir",
        a.data_dir,
    ]
    mark = cpu_mark()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=a.timeout)
        rc, stdout, stderr = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, stdout, stderr = "timeout", e.stdout or "", f"timed out after {a.timeout} s"
        if isinstance(stdout, bytes):
            stdout = stdout.decode(errors="replace")
    other, wall = other_cores(mark)
    result = None
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT ") :])
    if result is None or rc != 0:
        tail = "\n".join((stderr or "").strip().splitlines()[-6:])
        return {
            "op": op,
            "method": method,
            "dataset": dataset,
            "error": f"exit {rc}: {tail}",
            "worker_wall": wall,
            "other_cores": round(other, 2),
        }
    result["worker_wall"] = wall
    result["other_cores"] = round(other, 2)
    return result


def noise(run):
    """The CPU other processes used during a pair's save and load (max of the two)."""
    return max(x.get("other_cores", 0.0) for x in (run["save"], run["load"]) if x)


def measure_pair(a, m, d, path, env, manifest, idle_wait):
    if os.path.exists(path):
        os.remove(path)
    t = time.time()
    idle = wait_idle(idle_wait, a.busy_max)
    waited = time.time() - t
    s = run_worker(a, "save", m, d, path, env)
    run = {"dataset": d, "method": m, "idle_before": idle, "idle_waited": round(waited, 1), "save": s, "load": None}
    if "error" not in s:
        ld = run_worker(a, "load", m, d, path, env)
        if "error" not in ld:
            ld["correct"] = ld["digest"] == manifest[d]["digest"]
            if not ld["correct"]:
                ld["expected_digest"] = manifest[d]["digest"]
        run["load"] = ld
    else:
        run["load"] = {"op": "load", "method": m, "dataset": d, "error": "not run: the save failed"}
    if os.path.exists(path):
        os.remove(path)
    return run


def versions(env):
    code = (
        "import json, numpy, pandas, pyarrow, zstandard, lz4, joblib, blosc2, psutil, kompakt\n"
        "print(json.dumps({m.__name__: m.__version__ for m in "
        "(kompakt, numpy, pandas, pyarrow, zstandard, lz4, joblib, blosc2, psutil)} | "
        "{'kompakt_file': kompakt.__file__, 'blosc2_cparams': str(blosc2.CParams()), "
        "'kompakt_block_size': kompakt.DEFAULT_BLOCK_SIZE, 'kompakt_default_level': kompakt.DEFAULT_LEVEL}))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(p.stdout)


def summarize(doc):
    """Medians of the times, maxima of the extra RSS, per (dataset, method)."""
    rows = []
    manifest = doc["manifest"]
    for ds in doc["config"]["datasets"]:
        N = manifest[ds]["N"]
        for m in METHODS:
            if m not in doc["config"]["methods"]:
                continue
            row = {"dataset": ds, "method": m, "N": N}
            if not applies(m, ds):
                row["na"] = "arrays only" if METHODS[m][0] == "array" else "not applicable"
                rows.append(row)
                continue
            runs = [r for r in doc["runs"] if r["dataset"] == ds and r["method"] == m]
            saves = [r["save"] for r in runs if "error" not in r["save"]]
            loads = [r["load"] for r in runs if r.get("load") and "error" not in r["load"]]
            errors = [r[k]["error"] for r in runs for k in ("save", "load") if r.get(k) and "error" in r[k]]
            bad = [r for r in loads if not r.get("correct")]
            row.update(repeats=len(runs), save_ok=len(saves), load_ok=len(loads), errors=errors, wrong=len(bad))
            if saves:
                st = [r["seconds"] for r in saves]
                row.update(
                    save_s=statistics.median(st),
                    save_min=min(st),
                    save_max=max(st),
                    save_cpu=statistics.median(r["cpu_seconds"] for r in saves),
                    size=statistics.median(r["file_bytes"] for r in saves),
                    save_extra=max(r["extra"] for r in saves),
                    save_extra_median=statistics.median(r["extra"] for r in saves),
                    save_other=max(r["other_cores"] for r in saves),
                )
                row["ratio"] = N / row["size"]
                if "kompakt_streams" in saves[-1]:
                    row["kompakt_streams"] = saves[-1]["kompakt_streams"]
            if loads:
                lt = [r["seconds"] for r in loads]
                row.update(
                    load_s=statistics.median(lt),
                    load_min=min(lt),
                    load_max=max(lt),
                    load_cpu=statistics.median(r["cpu_seconds"] for r in loads),
                    load_extra=max(r["extra"] for r in loads),
                    load_extra_median=statistics.median(r["extra"] for r in loads),
                    load_retained=statistics.median(r["rss_after"] - r["rss_base"] for r in loads),
                    load_other=max(r["other_cores"] for r in loads),
                )
            rows.append(row)
    by = {(r["dataset"], r["method"]): r for r in rows}
    for r in rows:
        if DATASETS[r["dataset"]]["kind"] == "array":
            ref = by.get((r["dataset"], "numpy"), {})
            if r.get("save_s") and ref.get("save_s"):
                r["save_vs_numpy"] = r["save_s"] / ref["save_s"]
            if r.get("load_s") and ref.get("load_s"):
                r["load_vs_numpy"] = r["load_s"] / ref["load_s"]
    return rows


# -------------------------------------------------------------------------------------------
# Report
# -------------------------------------------------------------------------------------------


def fmt_s(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def fmt_mb(x):
    if x is None:
        return "-"
    return f"{x / MB:.1f}" if abs(x) < 100 * MB else f"{x / MB:.0f}"


def fmt_extra(x, N):
    if x is None:
        return "-"
    return f"{x / MB:.0f} ({x / N:.2f}x)" if abs(x) >= 10 * MB else f"{x / MB:.1f} ({x / N:.3f}x)"


def dominance(rows, ds, tol=0.005):
    """For each compressed alternative A on dataset ds: the kompakt variants whose file is at
    most A's (within tol) and whether they save and load faster than A."""
    by = {r["method"]: r for r in rows if r["dataset"] == ds and r.get("save_s") and r.get("load_s")}
    out = []
    for alt in COMPRESSED_ALTERNATIVES:
        A = by.get(alt)
        if not A:
            continue
        entry = {"alternative": alt, "variants": []}
        for k in KOMPAKT_METHODS:
            K = by.get(k)
            if not K:
                continue
            entry["variants"].append(
                {
                    "kompakt": k,
                    "size_ratio": K["size"] / A["size"],
                    "save_ratio": K["save_s"] / A["save_s"],
                    "load_ratio": K["load_s"] / A["load_s"],
                    "smaller_or_equal": K["size"] <= A["size"] * (1 + tol),
                    "faster_save": K["save_s"] < A["save_s"],
                    "faster_load": K["load_s"] < A["load_s"],
                }
            )
        for v in entry["variants"]:
            v["dominates"] = v["smaller_or_equal"] and v["faster_save"] and v["faster_load"]
        out.append(entry)
    return out


def render(doc):
    rows = doc["summary"]
    cfg = doc["config"]
    mach = doc["machine"]
    ver = doc["versions"]
    L = []
    w = L.append
    title = "Python objects: save/load benchmark" + (" (quick smoke run, small data)" if cfg["quick"] else "")
    w(f"# {title}\n")
    w(f"Generated by `{cfg['command']}` on {doc['date']} (run took {doc.get('elapsed_s', 0) / 60:.1f} min).\n")
    w(
        f"- Machine: {mach['cpu']}, {mach['cores']} cores, {mach['mem_gib']} GiB RAM, Linux {mach['kernel']}, "
        f"Python {mach['python']}, load average at start {' '.join(mach['loadavg_start'])}."
    )
    ks = doc["kompakt"]
    g = doc["git"]
    w(
        f"- kompakt {ver['kompakt']}: a copy of `{ks.get('source', os.path.dirname(ver['kompakt_file']))}` "
        f"(compiled core built {ks.get('core_built', '?')}, sha256 {ks.get('core_sha256', '?')}) made when the run "
        f"started; the repository was then at {g['commit']} ({g.get('commit_date', '')}"
        + (
            f", uncommitted changes in {', '.join(g['dirty_paths'][:5])}"
            if g["dirty_paths"]
            else ", clean tree outside bench/"
        )
        + ")"
        + (
            f" and at {doc['git_end']['commit']} when it ended"
            if doc.get("git_end", g)["commit"] != g["commit"]
            else ""
        )
        + f". Default block size {ver['kompakt_block_size'] // 1024} KiB, default level {ver['kompakt_default_level']}."
    )
    w(
        "- "
        + ", ".join(
            f"{m} {ver[m]}" for m in ("numpy", "pandas", "pyarrow", "zstandard", "lz4", "joblib", "blosc2", "psutil")
        )
        + "."
    )
    w(
        f"- {cfg['repeats']} repeat(s) of every (dataset, method); times are medians, extra RSS the maximum over "
        f"the repeats. Every save and every load runs in a fresh process; peak RSS: {doc.get('peak_method', '?')}."
    )
    w(
        "- MB = 10^6 bytes. N = the object's size in memory (array nbytes; DataFrame "
        "`memory_usage(deep=True).sum()`). ratio = N / file size.\n"
    )

    w("## Datasets\n")
    w("| dataset | content | N (MB) | cache file |")
    w("|---|---|---:|---|")
    size = SIZES["quick" if cfg["quick"] else "full"]
    for ds in cfg["datasets"]:
        m = doc["manifest"][ds]
        w(
            f"| {ds} | {DATASETS[ds]['describe'].format(**size)} | {fmt_mb(m['N'])} | "
            f"`{os.path.relpath(os.path.join(cfg['data_dir'], DATASETS[ds]['file']), ROOT)}` |"
        )
    w("")

    w("## Results\n")
    w(
        "save and load times include opening, (de)serializing, compressing and, for save, fsync "
        "of the file and its folder (every method; `kompakt.save` does this itself). Loads read "
        'the file just written, from the page cache. "extra RSS" is the peak RSS during the '
        "operation minus the RSS just before it: for save the object already exists, so the ideal "
        "is ~0; for load the result itself is N, so the ideal is ~1.00x N. x np = time / "
        "numpy's time on the same array.\n"
    )
    w(
        "| dataset | method | save s | load s | size MB | ratio | save extra RSS MB (xN) | load extra RSS MB (xN) "
        "| save x np | load x np |"
    )
    w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        N = r["N"]
        if r.get("na"):
            w(f"| {r['dataset']} | {r['method']} | n/a ({r['na']}) | | | | | | | |")
            continue
        flag = ""
        if r.get("errors"):
            flag += f" FAILED {len(r['errors'])}x"
        if r.get("wrong"):
            flag += f" WRONG DATA {r['wrong']}x"
        size_cells = f"{fmt_mb(r['size'])} | {r['ratio']:.2f}" if r.get("size") else "- | -"
        sv = f"{r['save_vs_numpy']:.2f}" if r.get("save_vs_numpy") else ""
        lv = f"{r['load_vs_numpy']:.2f}" if r.get("load_vs_numpy") else ""
        w(
            f"| {r['dataset']} | {r['method']}{flag} | {fmt_s(r.get('save_s'))} | {fmt_s(r.get('load_s'))} | "
            f"{size_cells} | {fmt_extra(r.get('save_extra'), N)} | {fmt_extra(r.get('load_extra'), N)} | {sv} | {lv} |"
        )
    w("")

    # Targets
    w("## Targets\n")
    by = {(r["dataset"], r["method"]): r for r in rows}
    for ds in ("float64_random", "int64_sorted"):
        if ds not in cfg["datasets"]:
            continue
        label = "target" if ds == "float64_random" else "for information"
        for k in KOMPAKT_METHODS:
            r = by.get((ds, k))
            if not r or not r.get("save_vs_numpy") or not r.get("load_vs_numpy"):
                continue
            sv, lv = r["save_vs_numpy"], r["load_vs_numpy"]
            verdict = lambda x: "met" if x <= 1.10 else f"MISSED by {(x / 1.10 - 1) * 100:.0f} %"  # noqa: E731
            w(
                f"- {ds}, {k} ({label}): save {fmt_s(r['save_s'])} s = {sv:.2f}x numpy.save "
                f"(<= 1.10x: {verdict(sv)}); load {fmt_s(r['load_s'])} s = {lv:.2f}x numpy.load "
                f"(<= 1.10x: {verdict(lv)})."
            )
    w("")
    if "dataframe" in cfg["datasets"]:
        dom = dominance(rows, "dataframe")
        w(
            "DataFrame: is kompakt faster (save and load) than each compressed alternative, with a file "
            "no larger (0.5 % tolerance)? Cells: kompakt / alternative for size, save and load; "
            "**yes** when all three hold.\n"
        )
        head = "| alternative | size MB | save s | load s | " + " | ".join(KOMPAKT_METHODS) + " |"
        w(head)
        w("|---|---:|---:|---:|" + "---|" * len(KOMPAKT_METHODS))
        dby = {r["method"]: r for r in rows if r["dataset"] == "dataframe"}
        for e in dom:
            A = dby[e["alternative"]]
            cells = []
            vmap = {v["kompakt"]: v for v in e["variants"]}
            for k in KOMPAKT_METHODS:
                v = vmap.get(k)
                if not v:
                    cells.append("-")
                    continue
                cells.append(
                    f"{'**yes**' if v['dominates'] else 'no'}: size {v['size_ratio']:.2f}, "
                    f"save {v['save_ratio']:.2f}, load {v['load_ratio']:.2f}"
                )
            w(
                f"| {e['alternative']} | {fmt_mb(A['size'])} | {fmt_s(A['save_s'])} | {fmt_s(A['load_s'])} | "
                + " | ".join(cells)
                + " |"
            )
        w("")
        for k in KOMPAKT_METHODS:
            vs = [v for e in dom for v in e["variants"] if v["kompakt"] == k]
            if vs:
                beaten = [
                    e["alternative"] for e in dom for v in e["variants"] if v["kompakt"] == k and not v["dominates"]
                ]
                w(
                    f"- {k}: faster than every compressed alternative at an equal or smaller file: "
                    + ("**yes**" if not beaten else f"no (not against {', '.join(beaten)})")
                    + "."
                )
        covered = [e["alternative"] for e in dom if any(v["dominates"] for v in e["variants"])]
        w(
            f"- Some kompakt setting dominates: {', '.join(covered) or 'none'}; none does: "
            f"{', '.join(e['alternative'] for e in dom if e['alternative'] not in covered) or 'none'}.\n"
        )

    w(
        "Memory (target: peak extra RSS at most N + O(threads x block size), not 2N; shown "
        "against a generous slack of 64 MB):\n"
    )
    slack = 64 * MB
    for ds in cfg["datasets"]:
        for k in KOMPAKT_METHODS:
            r = by.get((ds, k))
            if not r or r.get("save_extra") is None or r.get("load_extra") is None:
                continue
            N = r["N"]
            sv = (
                "met"
                if r["save_extra"] <= slack
                else ("within N + slack" if r["save_extra"] <= N + slack else "MISSED")
            )
            lv = "met" if r["load_extra"] <= N + slack else "MISSED"
            w(
                f"- {ds}, {k}: save extra {fmt_extra(r['save_extra'], N)} MB ({sv}: <= 64 MB); load extra "
                f"{fmt_extra(r['load_extra'], N)} MB, i.e. N + {fmt_mb(r['load_extra'] - N)} MB ({lv}: <= N + 64 MB)."
            )
    w("")

    w("## Methods\n")
    w("| method | threads | what is timed |")
    w("|---|---|---|")
    for m in cfg["methods"]:
        spec = METHODS[m]
        w(f"| {m} | {spec[5]} | {spec[6]} |")
    w("")
    w(f"blosc2 defaults here: `{ver.get('blosc2_cparams', '?')}`.\n")
    w("Notes:\n")
    w(
        "- fsync: every save ends with fsync of the file and of its folder (kompakt.save writes a "
        "temporary file, fsyncs it, renames it and fsyncs the folder; the others get os.fsync of "
        "the file and the folder), inside the timed region."
    )
    w(
        "- Loads are timed from the page cache (the file was just written; this machine has no "
        "way to drop caches), so they measure decoding, not the disk."
    )
    w(
        "- kompakt and blosc2 use all cores by default; pickle, numpy, zstandard (ZstdCompressor "
        "default threads=0), lz4.frame and joblib use one."
    )
    w(
        "- The blosc2 DataFrame row stores the pickle of the DataFrame (blosc2.pack refuses objects "
        "without .itemsize and blosc2 has no DataFrame container), so blosc2 sees bytes, "
        "typesize 1."
    )
    w(
        "- Every load is checked against a digest of the dataset (CRC-32 of every value, dtypes, "
        "NA counts), outside the timed region; a mismatch shows as WRONG DATA above."
    )
    w(
        f"- Before each dataset/method pair the driver waited up to {cfg['idle_wait']} s for other "
        f"processes to use < {cfg.get('busy_max', 0.25)} core; the CPU other processes used during each worker "
        "is recorded "
        "in the JSON (`other_cores`).\n"
    )

    w("## Spread and noise\n")
    w(
        "| dataset | method | save min-max s | load min-max s | save CPU s | load CPU s | load RSS kept (xN) "
        "| max other cores (save/load) |"
    )
    w("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r.get("na") or not r.get("save_s"):
            continue
        N = r["N"]
        w(
            f"| {r['dataset']} | {r['method']} | {fmt_s(r['save_min'])}-{fmt_s(r['save_max'])} | "
            + (f"{fmt_s(r['load_min'])}-{fmt_s(r['load_max'])} | " if r.get("load_s") else "- | ")
            + f"{fmt_s(r['save_cpu'])} | {fmt_s(r.get('load_cpu'))} | "
            + (f"{r['load_retained'] / N:.2f} | " if r.get("load_s") else "- | ")
            + f"{r.get('save_other', 0):.2f} / {r.get('load_other', 0):.2f} |"
        )
    busy_max = cfg.get("busy_max", 0.3)
    noisy = [run for run in doc["runs"] if noise(run) > busy_max]
    retried = sum(run.get("attempts", 1) - 1 for run in doc["runs"])
    w("")
    w(
        f"CPU s = user + system time of the operation, over all its threads. A pair (save + load) "
        f"during which other processes used more than {busy_max} cores was measured again (up to "
        f"{cfg.get('retries', 0)} more times; the quietest attempt counts): {retried} extra attempt(s); "
        f"{len(noisy)} of {len(doc['runs'])} counted pairs still saw more than {busy_max} cores of other load. "
        f"Waiting and measuring again took {doc.get('noise_spent_s', 0):.0f} s of a budget of "
        f"{cfg.get('noise_budget', 0):.0f} s.\n"
    )
    errs = [(r["dataset"], r["method"], e) for r in rows for e in r.get("errors", [])]
    if errs:
        w("## Failures\n")
        for ds, m, e in errs:
            w(f"- {ds} / {m}: `{e.splitlines()[-1] if e else e}`")
        w("")
    ks_rows = [r for r in rows if r.get("kompakt_streams")]
    if ks_rows:
        w("## kompakt files\n")
        w("| dataset | method | streams (raw MB -> stored MB, codecs, filters) |")
        w("|---|---|---|")
        for r in ks_rows:
            parts = []
            for s in r["kompakt_streams"]:
                parts.append(f"{fmt_mb(s['raw'])} -> {fmt_mb(s['stored'])} {s['codecs']} {s['filters']}")
            w(f"| {r['dataset']} | {r['method']} | " + "; ".join(parts) + " |")
        w("")
    return "\n".join(L) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--quick", action="store_true", help="small data (4M elements, 400k rows), 1 repeat unless --repeats"
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="runs per (dataset, method), median counts (default 3; env BENCH_REPEATS)",
    )
    p.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated subset")
    p.add_argument("--methods", default=",".join(METHODS), help="comma-separated subset")
    p.add_argument("--data-dir", default=os.environ.get("BENCH_PY_DATA"), help="default bench/data/python[/quick]")
    p.add_argument("--results", default=os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results")))
    p.add_argument("--tmp", default=os.environ.get("BENCH_TMP"), help="where saved files go (default: <data-dir>/out)")
    p.add_argument(
        "--idle-wait",
        type=float,
        default=float(os.environ.get("BENCH_IDLE_WAIT", 15)),
        help="seconds to wait before each pair for other processes to go quiet (default 15)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=int(os.environ.get("BENCH_RETRIES", 2)),
        help="extra attempts of a pair when other processes used more than --busy-max cores "
        "during it; the quietest attempt counts (default 2)",
    )
    p.add_argument(
        "--busy-max",
        type=float,
        default=float(os.environ.get("BENCH_BUSY_MAX", 0.3)),
        help="cores other processes may use before a pair counts as noisy (default 0.3)",
    )
    p.add_argument(
        "--noise-budget",
        type=float,
        default=float(os.environ.get("BENCH_NOISE_BUDGET", 900)),
        help="total seconds the run may spend waiting for quiet and measuring noisy pairs "
        "again; afterwards it neither waits nor retries (default 900)",
    )
    p.add_argument("--timeout", type=float, default=1800, help="per worker process, seconds")
    p.add_argument("--no-snapshot", action="store_true", help="benchmark the installed kompakt, not a private copy")
    p.add_argument("--report-only", action="store_true", help="re-render the markdown from the JSON")
    p.add_argument("--worker", choices=["save", "load"], help=argparse.SUPPRESS)
    p.add_argument("--method", help=argparse.SUPPRESS)
    p.add_argument("--dataset", help=argparse.SUPPRESS)
    p.add_argument("--file", help=argparse.SUPPRESS)
    a = p.parse_args()

    if a.worker:
        worker(a)
        return

    mode = "quick" if a.quick else "full"
    stem = "python_objects_quick" if a.quick else "python_objects"
    os.makedirs(a.results, exist_ok=True)
    json_path = os.path.join(a.results, stem + ".json")
    md_path = os.path.join(a.results, stem + ".md")
    if a.report_only:
        rerender_report(json_path, md_path, summarize, render)
        return

    t_start = time.time()
    log = logger("python_objects", t_start)

    if a.repeats is None:
        a.repeats = int(os.environ.get("BENCH_REPEATS", 1 if a.quick else 3))
    if a.data_dir is None:
        a.data_dir = os.path.join(HERE, "data", "python", *(["quick"] if a.quick else []))
    a.data_dir = os.path.abspath(a.data_dir)
    tmp = os.path.abspath(a.tmp or os.path.join(a.data_dir, "out"))
    os.makedirs(tmp, exist_ok=True)
    datasets = [d.strip() for d in a.datasets.split(",") if d.strip()]
    methods = [m.strip() for m in a.methods.split(",") if m.strip()]
    for d in datasets:
        if d not in DATASETS:
            sys.exit(f"unknown dataset {d!r}; known: {', '.join(DATASETS)}")
    for m in methods:
        if m not in METHODS:
            sys.exit(f"unknown method {m!r}; known: {', '.join(METHODS)}")

    env = worker_env()
    ksnap = {}
    if not a.no_snapshot:
        snap_dir, ksnap = snapshot_kompakt(os.path.join(a.results, stem, "kompakt_snapshot"), log, env)
    ver = versions(env)
    if not a.no_snapshot and not ver["kompakt_file"].startswith(snap_dir):
        sys.exit(f"the snapshot is not what workers import: {ver['kompakt_file']}")

    size = SIZES[mode]
    manifest = ensure_data(a.data_dir, size, datasets, log)
    gc.collect()

    cmd = "python3 bench/python_objects.py" + " ".join([""] + [x for x in sys.argv[1:]])
    doc = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "config": {
            "quick": a.quick,
            "repeats": a.repeats,
            "datasets": datasets,
            "methods": methods,
            "data_dir": a.data_dir,
            "tmp": tmp,
            "idle_wait": a.idle_wait,
            "retries": a.retries,
            "busy_max": a.busy_max,
            "noise_budget": a.noise_budget,
            "command": cmd.strip(),
            "sizes": size,
        },
        "machine": machine_info(),
        "versions": ver,
        "kompakt": ksnap,
        "git": git_state(),
        "manifest": {d: manifest[d] for d in datasets},
        "runs": [],
    }

    def write_outputs():
        save_report(doc, t_start, summarize, render, json_path, md_path)

    plan = [(d, m) for d in datasets for m in methods if applies(m, d)]
    skipped = [(d, m) for d in datasets for m in methods if not applies(m, d)]
    for d, m in skipped:
        log(f"not applicable: {m} on {d} ({METHODS[m][0]} only); shown as n/a in the report")
    log(f"{len(plan)} dataset/method pairs x {a.repeats} repeats, outputs in {tmp}")
    noise_spent = [0.0]  # seconds spent waiting for quiet and measuring noisy pairs again
    for rep in range(a.repeats):
        order = plan if rep % 2 == 0 else plan[::-1]  # alternate the order: drift hits both ends
        for d, m in order:
            path = os.path.join(tmp, f"{d}.{m.replace(' ', '_').replace(':', '')}.{METHODS[m][3]}")
            attempts = []
            for attempt in range(1 + max(0, a.retries)):
                t_pair = time.time()
                patient = noise_spent[0] < a.noise_budget
                run = measure_pair(a, m, d, path, env, manifest, a.idle_wait if patient else 0)
                noise_spent[0] += run["idle_waited"] + (time.time() - t_pair if attempt else 0)
                attempts.append(run)
                if noise(run) <= a.busy_max:
                    break
                more = attempt < a.retries and noise_spent[0] < a.noise_budget
                log(
                    f"rep {rep + 1}/{a.repeats} {d} / {m}: other processes used {noise(run):.2f} cores"
                    + (", measuring again" if more else ", keeping the quietest attempt")
                    + (f" (noise budget of {a.noise_budget:.0f} s used up)" if noise_spent[0] >= a.noise_budget else "")
                )
                if not more:
                    break
            best = min(attempts, key=noise)  # the quietest attempt counts; the others are kept too
            run = dict(best, rep=rep, attempts=len(attempts), other_attempts=[x for x in attempts if x is not best])
            doc["runs"].append(run)
            N = manifest[d]["N"]
            s, ld = run["save"], run["load"]

            def brief(r):
                if "error" in r:
                    return "ERROR " + r["error"].splitlines()[0][:120]
                return f"{r['seconds']:.3f} s, extra {r['extra'] / MB:.0f} MB ({r['extra'] / N:.2f}x N)" + (
                    f", other {r['other_cores']:.2f} cores" if r["other_cores"] > 0.3 else ""
                )

            log(
                f"rep {rep + 1}/{a.repeats} {d} / {m}: save {brief(s)}"
                + (f", {s['file_bytes'] / MB:.0f} MB" if "file_bytes" in s else "")
                + f" | load {brief(ld)}"
                + ("" if "error" in ld or ld.get("correct") else " WRONG DATA")
            )
            write_outputs()
    doc["noise_spent_s"] = round(noise_spent[0], 1)
    doc["git_end"] = git_state()
    doc["peak_method"] = next(
        (x["peak_method"] for run in doc["runs"] for x in (run["save"], run["load"]) if x and "peak_method" in x), "?"
    )
    write_outputs()
    log(f"wrote {md_path} and {json_path}")


if __name__ == "__main__":
    main()
