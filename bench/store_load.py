#!/usr/bin/env python3
"""The store under load: several processes setting 1 KB values into one store at once, for a
fixed time; the latency of every set, and whether anything was lost.

    .venv/bin/python bench/store_load.py [--seconds 30] [--writers 8] [--quick]
    .venv/bin/python bench/store_load.py --report-only     re-render the markdown from the JSON

One run measures three cases, one after the other, each for ``--seconds`` (default 30; 5 with
``--quick``) of ``--writers`` processes (default 8) setting values as fast as they can:

1. ``diskcache``: one ``diskcache.Cache`` folder (default settings), a handle per process;
2. ``kompakt local``: one ``kompakt.Store`` folder (default settings), a handle per process;
   and the same with ``dictionaries=False`` (each writer process samples its small values
   and tries a zstd dictionary inside its 2000th and 8000th set; this case shows the store
   without those trials);
3. ``kompakt S3``: ``kompakt.Store("s3://bucket/prefix", cache_dir=...)`` on moto's S3 server
   on loopback (python/tests/s3server.py), the writers in ``--machines`` groups (default 4)
   of equal size, each group sharing one ``cache_dir`` (a machine is its own cache folder).

Every writer sets distinct keys ``w{writer}-{n}`` to distinct 1024-byte values (a JSON record
with the writer, a counter and 33 pseudo-random measurements, padded with spaces: alike
enough to compress, never equal, so content addressing stores every one), generated before
the clock starts. Each set is timed with ``time.perf_counter`` around the call alone, in the
writer; writers report their times (a binary file each), how many keys they set, failed sets,
and their peak RSS (``getrusage``). The writers start together: each opens its store, says it
is ready, and waits for the word to go.

Afterwards a fresh process (on S3: with its own, empty cache folder, another machine) reads
every key each writer set and compares it with the value the writer set, counts keys that
should not be there, and for kompakt runs ``store.verify()`` (every object's checksums and
content hash). "lost" = keys missing, "wrong" = a different value.

Reported per case: sets, sets/s (all writers), p50, p99, p99.9 and max set latency, the
share of sets per latency band (to see whether the times are bimodal), the longest time in
which no writer finished a set (a stall), failed sets, lost and wrong keys, verify's
problems, the largest writer's peak RSS, and the cores other processes used meanwhile (the
machine may be shared; moto's own CPU is not counted as "other").

diskcache's own benchmark (its docs, "Cache Benchmarks", 8 processes mixing get, set and
delete) reports p99 36 ms and max 6.25 s for a set; here the load is sets only.

Times on S3 include moto's cost per request (it is Python: milliseconds per request, and
every request of every writer goes through the one server process, which competes with the
writers for this machine's cores), not a network's. A set is 3 requests (the object's HEAD,
its PUT, the key record's PUT), so the server, not the store, is likely what limits sets/s.

Workers import a private copy of the kompakt package (bench/results/store_load/
kompakt_snapshot), so a rebuild during the run changes nothing; ``--no-snapshot`` uses the
installed one. Outputs: bench/results/store_load.md and .json (store_load_quick.* with
--quick); the stores are written under --tmp (default bench/data/store_load) and removed.
"""

from __future__ import annotations

import argparse
import array
import datetime
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from typing import Any

from common import (
    MB,
    cpu_mark,
    fmt_t,
    git_state,
    logger,
    machine_info,
    other_cores,
    proc_status,
    rerender_report,
    save_report,
    snapshot_kompakt,
    worker_env,
)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))

SEED = 20240652
VALUE_BYTES = 1024
BUCKET = "kompakt-bench-load"
CASES = ["diskcache", "kompakt local", "kompakt local (dictionaries=False)", "kompakt S3"]
TOOLS = {CASES[0]: "diskcache", CASES[1]: "kompakt", CASES[2]: "kompakt-nodict", CASES[3]: "kompakt"}
PUBLISHED = {"p99": 0.036, "max": 6.25}  # diskcache's docs, 8 processes, set
# Latency bands of the distribution table (upper bounds, seconds).
BANDS = [1e-4, 1e-3, 1e-2, 1e-1, 1.0, math.inf]
BAND_NAMES = ["<0.1 ms", "0.1-1 ms", "1-10 ms", "10-100 ms", "0.1-1 s", ">1 s"]


# -------------------------------------------------------------------------------------------
# Values
# -------------------------------------------------------------------------------------------


def make_value(writer: int, n: int) -> bytes:
    """Writer `writer`'s `n`-th value: 1024 bytes of JSON, distinct for every (writer, n)."""
    rng = random.Random(SEED * 1_000_003 + writer * 100_000_007 + n)
    rec = {
        "writer": writer,
        "seq": n,
        "id": f"{rng.getrandbits(64):016x}",
        "station": f"station-{rng.randrange(500):03d}",
        "status": rng.choice(["ok", "ok", "ok", "warn", "error"]),
        "measurements": {f"measurement_{j:02d}": round(rng.gauss(100, 15), 3) for j in range(33)},
        "note": "",
    }
    s = json.dumps(rec, separators=(",", ":"))
    if len(s) > VALUE_BYTES:
        raise ValueError("record longer than a value")
    return s.encode().ljust(VALUE_BYTES, b" ")


def key_of(writer: int, n: int) -> str:
    return f"w{writer}-{n:08d}"


# -------------------------------------------------------------------------------------------
# Workers (separate processes)
# -------------------------------------------------------------------------------------------


def open_store(tool: str, target: str, cache_dir: str | None) -> Any:
    if tool == "diskcache":
        import diskcache

        return diskcache.Cache(target)
    import kompakt

    if target.startswith("s3://"):
        return kompakt.Store(target, cache_dir=cache_dir)
    return kompakt.Store(target, dictionaries=tool != "kompakt-nodict")


def import_retrying(tool: str) -> None:
    """Someone may be rebuilding the installed kompakt (the snapshot avoids this)."""
    if tool == "diskcache":
        return
    for _ in range(30):
        try:
            import kompakt  # noqa: F401

            return
        except ImportError as e:
            print(f"import kompakt failed ({e}); retrying in 10 s", file=sys.stderr, flush=True)
            time.sleep(10)
    sys.exit("kompakt cannot be imported")


def worker_set(a: argparse.Namespace) -> None:
    """One writer: opens the store, says 'ready', waits for 'go' on stdin, then sets values for
    a.seconds; writes latencies and end times (float64 files) and a JSON summary."""
    import_retrying(a.tool)
    store = open_store(a.tool, a.target, a.cache_dir)
    w = a.writer
    # Values for more sets than can happen, made before the clock starts (about 10 us each).
    batch = 2000
    values = [make_value(w, n) for n in range(batch)]
    keys = [key_of(w, n) for n in range(batch)]
    lat = array.array("d")
    ends = array.array("d")
    errors: list[str] = []
    failed = 0
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        sys.exit("no go")
    perf = time.perf_counter
    go = perf()
    t_end = go + a.seconds
    n = 0
    while True:
        if n >= len(values):  # refill outside the timed region; it happens once in ~2000 sets
            values += [make_value(w, i) for i in range(len(values), len(values) + batch)]
            keys += [key_of(w, i) for i in range(len(keys), len(keys) + batch)]
        v, k = values[n], keys[n]
        t0 = perf()
        if t0 >= t_end:
            break
        try:
            store.set(k, v)
        except Exception as e:  # a failed set is a finding, not the end of the run
            failed += 1
            if len(errors) < 5:
                errors.append(f"{type(e).__name__}: {e}")
            t1 = perf()
            lat.append(-(t1 - t0))  # negative: failed (the key does not count as set)
            ends.append(t1 - go)
            n += 1
            continue
        t1 = perf()
        lat.append(t1 - t0)
        ends.append(t1 - go)
        n += 1
    elapsed = perf() - go
    store.close()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    # VmHWM, not ru_maxrss: the latter keeps the forking parent's peak across exec.
    peak = proc_status().get("VmHWM", ru.ru_maxrss * 1024)
    slowest = max(range(len(lat)), key=lambda i: abs(lat[i])) if lat else None
    with open(a.out + ".lat", "wb") as f:
        lat.tofile(f)
    with open(a.out + ".ends", "wb") as f:
        ends.tofile(f)
    with open(a.out, "w") as f:
        json.dump(
            {
                "writer": w,
                "attempted": n,
                "failed": failed,
                "errors": errors,
                "elapsed": elapsed,
                "maxrss": peak,
                "slowest": None
                if slowest is None
                else {"index": slowest, "ends_at_s": ends[slowest], "s": abs(lat[slowest])},
                "cpu": ru.ru_utime + ru.ru_stime,
            },
            f,
        )


def worker_init(a: argparse.Namespace) -> None:
    """Creates the store (so that the writers only open it)."""
    import_retrying(a.tool)
    store = open_store(a.tool, a.target, a.cache_dir)
    store.close()


def worker_verify(a: argparse.Namespace) -> None:
    """Reads back every key every writer set, from a fresh handle (and cache folder), and
    compares; counts unexpected keys; runs verify() for kompakt."""
    import_retrying(a.tool)
    with open(a.counts) as f:
        counts = {int(k): (v[0], set(v[1])) for k, v in json.load(f).items()}  # writer -> attempted, failed
    t = time.perf_counter()
    store = open_store(a.tool, a.target, a.cache_dir)
    jobs = [(w, n) for w, (attempted, failed) in counts.items() for n in range(attempted) if n not in failed]
    failed_keys = {key_of(w, n) for w, (_att, failed) in counts.items() for n in failed}
    missing: list[str] = []
    wrong: list[str] = []

    def check(job: tuple[int, int]) -> tuple[str, str | None]:
        w, n = job
        k = key_of(w, n)
        got = store.get(k)
        if got is None:
            return k, "missing"
        if bytes(got) != make_value(w, n):
            return k, "wrong"
        return k, None

    if a.threads > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(a.threads) as ex:
            results = list(ex.map(check, jobs, chunksize=64))
    else:
        results = [check(j) for j in jobs]
    for k, what in results:
        if what == "missing":
            missing.append(k)
        elif what == "wrong":
            wrong.append(k)
    read_s = time.perf_counter() - t
    expected = {key_of(w, n) for w, n in jobs}
    present = set(store.iterkeys()) if a.tool == "diskcache" else set(store.list())
    extra = sorted(present - expected - failed_keys)
    out: dict[str, Any] = {
        "checked": len(jobs),
        "missing": len(missing),
        "wrong": len(wrong),
        "missing_examples": missing[:5],
        "wrong_examples": wrong[:5],
        "keys_in_store": len(present),
        "unexpected_keys": len(extra),
        "failed_sets_present": len(present & failed_keys),
        "read_back_s": read_s,
    }
    if a.tool == "diskcache":
        out["volume"] = store.volume()
        out["size_limit"] = store.size_limit
    else:
        t = time.perf_counter()
        v = store.verify()
        out["verify_s"] = time.perf_counter() - t
        out["verify"] = {k: (val if k != "problems" else list(val)[:10]) for k, val in v.items()}
        out["verify_problems"] = len(v.get("problems", []))
        out["info"] = store.info()
    store.close()
    with open(a.out, "w") as f:
        json.dump(out, f, default=str)


# -------------------------------------------------------------------------------------------
# Driver
# -------------------------------------------------------------------------------------------


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process `pid` so far, from /proc (0 if gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def run_worker(a, env, args: list[str], timeout: float, log_path: str) -> None:
    with open(log_path, "a") as err:
        p = subprocess.run(
            [sys.executable, os.path.abspath(__file__), *args], env=env, stderr=err, stdout=err, timeout=timeout
        )
    if p.returncode != 0:
        with open(log_path) as f:
            tail = f.read()[-2000:]
        raise RuntimeError(f"worker {args[:2]} failed ({p.returncode}):\n{tail}")


def run_case(a, env, case: str, target: str, caches: list[str | None], log, server_pid: int | None) -> dict[str, Any]:
    """One case: init, writers (together), read back. `caches[w]`: writer w's cache_dir."""
    tool = TOOLS[case]
    slug = slugify(case)
    work = os.path.join(a.tmp, slug + "_run")
    if os.path.exists(work):
        shutil.rmtree(work)
    os.makedirs(work)
    log_path = os.path.join(work, "workers.log")
    cache0 = caches[0]
    run_worker(
        a,
        env,
        ["--worker", "init", "--tool", tool, "--target", target] + (["--cache-dir", cache0] if cache0 else []),
        300,
        log_path,
    )

    procs = []
    err = open(log_path, "a")
    for w in range(a.writers):
        args = ["--worker", "set", "--tool", tool, "--target", target, "--writer", str(w)]
        args += ["--seconds", str(a.seconds), "--out", os.path.join(work, f"writer{w}.json")]
        if caches[w]:
            args += ["--cache-dir", caches[w]]
        procs.append(
            subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), *args],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
            )
        )
    for p in procs:
        line = p.stdout.readline().strip() if p.stdout else ""
        if line != "ready":
            for q in procs:
                q.kill()
            err.close()
            with open(log_path) as f:
                raise RuntimeError(f"a writer did not get ready ({line!r}):\n{f.read()[-2000:]}")
    mark = cpu_mark()
    server_cpu0 = proc_cpu(server_pid) if server_pid else 0.0
    load0 = open("/proc/loadavg").read().split()[0]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        p.wait(timeout=a.seconds + 600)
    server_cpu = (proc_cpu(server_pid) - server_cpu0) if server_pid else 0.0
    cores, wall = other_cores(mark)
    if server_pid:
        cores = max(0.0, cores - server_cpu / max(wall, 1e-9))
    err.close()
    if any(p.returncode for p in procs):
        with open(log_path) as f:
            raise RuntimeError(f"a writer failed:\n{f.read()[-2000:]}")

    writers = []
    lats: list[float] = []
    ends: list[float] = []
    failed_idx: dict[int, list[int]] = {}
    for w in range(a.writers):
        path = os.path.join(work, f"writer{w}.json")
        with open(path) as f:
            r = json.load(f)
        lat = array.array("d")
        with open(path + ".lat", "rb") as f:
            lat.frombytes(f.read())
        end = array.array("d")
        with open(path + ".ends", "rb") as f:
            end.frombytes(f.read())
        failed_idx[w] = [i for i, x in enumerate(lat) if x < 0]
        ok = [x for x in lat if x >= 0]
        r["set"] = len(ok)
        r["stats"] = stats(ok)
        r["group"] = list(dict.fromkeys(caches)).index(caches[w]) + 1 if caches[w] else None
        writers.append(r)
        lats += ok
        ends += list(end)
    counts_path = os.path.join(work, "counts.json")
    with open(counts_path, "w") as f:
        json.dump({w: [writers[w]["attempted"], failed_idx[w]] for w in range(a.writers)}, f)

    verify_cache = os.path.join(work, "verify_cache") if caches[0] else None
    t = time.time()
    vout = os.path.join(work, "verify.json")
    args = ["--worker", "verify", "--tool", tool, "--target", target, "--counts", counts_path, "--out", vout]
    args += ["--threads", str(a.verify_threads if target.startswith("s3://") else 1)]
    if verify_cache:
        args += ["--cache-dir", verify_cache]
    run_worker(a, env, args, 7200, log_path)
    with open(vout) as f:
        ver = json.load(f)
    ver["wall_s"] = time.time() - t

    ends.sort()
    gaps = [b - a_ for a_, b in zip([0.0, *ends], ends)]
    longest = max(gaps) if gaps else None
    at = ends[gaps.index(longest)] if gaps else None
    per_second = [0] * (int(a.seconds) + 2)
    for e in ends:
        per_second[min(int(e), len(per_second) - 1)] += 1
    per_second = per_second[: int(a.seconds)]
    groups = None
    if caches[0]:
        groups = {}
        for g, c in enumerate(dict.fromkeys(caches)):
            ws = [w for w in range(a.writers) if caches[w] == c]
            gl: list[float] = []
            for w in ws:
                lat = array.array("d")
                with open(os.path.join(work, f"writer{w}.json.lat"), "rb") as f:
                    lat.frombytes(f.read())
                gl += [x for x in lat if x >= 0]
            groups[f"machine {g + 1}"] = {"writers": ws, "stats": stats(gl)}
    total_set = sum(r["set"] for r in writers)
    res = {
        "case": case,
        "target": target if target.startswith("s3://") else os.path.relpath(target, a.tmp),
        "writers": writers,
        "groups": groups,
        "sets": total_set,
        "failed": sum(r["failed"] for r in writers),
        "errors": [e for r in writers for e in r["errors"]][:10],
        "sets_per_s": total_set / max(r["elapsed"] for r in writers),
        "stats": stats(lats),
        "bands": bands(lats),
        "longest_stall_s": longest,
        "longest_stall_ends_at_s": at,
        "per_second": per_second,
        "max_rss": max(r["maxrss"] for r in writers),
        "other_cores": round(cores, 2),
        "server_cores": round(server_cpu / max(wall, 1e-9), 2) if server_pid else None,
        "loadavg_start": load0,
        "verify": ver,
        "lost": ver["missing"],
        "wrong": ver["wrong"],
    }
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return res


def slugify(case: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in case)


def pct(sorted_vals: list[float], p: float) -> float | None:
    """Nearest-rank percentile of sorted values."""
    if not sorted_vals:
        return None
    return sorted_vals[max(0, math.ceil(p / 100 * len(sorted_vals)) - 1)]


def stats(vals: list[float]) -> dict[str, Any]:
    s = sorted(vals)
    return {
        "n": len(s),
        "mean": sum(s) / len(s) if s else None,
        **{f"p{p:g}": pct(s, p) for p in (10, 25, 50, 75, 90, 99, 99.9)},
        "max": s[-1] if s else None,
    }


def bands(vals: list[float]) -> list[int]:
    out = [0] * len(BANDS)
    for x in vals:
        for i, b in enumerate(BANDS):
            if x < b:
                out[i] += 1
                break
    return out


# -------------------------------------------------------------------------------------------
# Report
# -------------------------------------------------------------------------------------------


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in doc["cases"]:
        s = r["stats"]
        out[r["case"]] = {
            "sets_per_s": round(r["sets_per_s"], 1),
            "p50_ms": s["p50"] and s["p50"] * 1e3,
            "p99_ms": s["p99"] and s["p99"] * 1e3,
            "p99.9_ms": s["p99.9"] and s["p99.9"] * 1e3,
            "max_ms": s["max"] and s["max"] * 1e3,
            "lost": r["lost"],
            "wrong": r["wrong"],
            "failed": r["failed"],
        }
    return out


def render(doc: dict[str, Any]) -> str:
    c = doc["config"]
    lines = [
        "# The store under load",
        "",
        f"`{c['command']}` on {doc['git']['commit']}, {doc['date']}; {doc['machine']['cores']} cores "
        f"({doc['machine']['cpu']}), load average at the start {' '.join(doc['machine']['loadavg_start'])}. "
        f"{c['writers']} writers x {c['seconds']:g} s per case; 1024-byte values, distinct keys. "
        f"kompakt {doc['versions'].get('kompakt', '?')}, diskcache {doc['versions'].get('diskcache', '?')}, "
        f"moto {doc['versions'].get('moto', '?')}.",
        "",
        table(doc),
        "",
        "Share of sets per latency band:",
        "",
        "| case | " + " | ".join(BAND_NAMES) + " |",
        "|--|" + "--:|" * len(BAND_NAMES),
    ]
    for r in doc["cases"]:
        n = max(1, sum(r["bands"]))
        lines.append(f"| {r['case']} | " + " | ".join(f"{100 * b / n:.2f} %" for b in r["bands"]) + " |")
    lines += ["", "Percentiles (all writers) and throughput per second:", ""]
    lines += [
        "| case | p10 | p25 | p50 | p75 | p90 | p99 | sets/s per second: min / median / max |",
        "|--|--:|--:|--:|--:|--:|--:|--|",
    ]
    for r in doc["cases"]:
        s = r["stats"]
        ps = sorted(r["per_second"]) or [0]
        lines.append(
            f"| {r['case']} | "
            + " | ".join(fmt_t(s[k]) for k in ("p10", "p25", "p50", "p75", "p90", "p99"))
            + f" | {ps[0]} / {ps[len(ps) // 2]} / {ps[-1]} |"
        )
    for r in doc["cases"]:
        if r.get("groups"):
            lines += ["", f"{r['case']} per machine (writers sharing a cache folder):", ""]
            lines += ["| machine | writers | sets | p50 | p99 | p99.9 | max |", "|--|--|--:|--:|--:|--:|--:|"]
            for g, v in r["groups"].items():
                s = v["stats"]
                lines.append(
                    f"| {g} | {', '.join(map(str, v['writers']))} | {s['n']} | {fmt_t(s['p50'])} | "
                    f"{fmt_t(s['p99'])} | {fmt_t(s['p99.9'])} | {fmt_t(s['max'])} |"
                )
    lines += ["", "Read back:", ""]
    for r in doc["cases"]:
        v = r["verify"]
        extra = (
            (
                f"verify(): {v.get('verify_problems', '-')} problems in {v.get('verify_s', 0):.1f} s; "
                f"{v.get('info', {}).get('dictionaries', 0)} dictionaries in the store"
            )
            if "verify_s" in v
            else (
                f"diskcache volume {v.get('volume', 0) / MB:.0f} MB of size_limit {v.get('size_limit', 0) / MB:.0f} MB"
            )
        )
        lines.append(
            f"- {r['case']}: {v['checked']} keys read back in {v['read_back_s']:.1f} s, {v['missing']} missing, "
            f"{v['wrong']} wrong, {v['keys_in_store']} keys in the store ({v['unexpected_keys']} unexpected); {extra}."
            + (f" Failed sets: {r['failed']} ({'; '.join(r['errors'][:3])})." if r["failed"] else "")
        )
    lines += [
        "",
        f"diskcache's published figure (8 processes, get/set/delete mix): p99 {PUBLISHED['p99'] * 1e3:g} ms, "
        f"max {PUBLISHED['max']:g} s per set.",
        "",
    ]
    return "\n".join(lines)


def table(doc: dict[str, Any]) -> str:
    head = (
        "| case | sets | sets/s | p50 | p99 | p99.9 | max | longest stall | failed | lost | wrong | verify | "
        "writer peak RSS | other cores |\n|--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--|--:|--:|"
    )
    rows = [head]
    for r in doc["cases"]:
        s, v = r["stats"], r["verify"]
        ver = f"{v['verify_problems']} problems" if "verify_problems" in v else "-"
        other = f"{r['other_cores']:.2f}"
        if r.get("server_cores") is not None:
            other += f" (moto {r['server_cores']:.2f})"
        rows.append(
            f"| {r['case']} | {r['sets']} | {r['sets_per_s']:.0f} | {fmt_t(s['p50'])} | {fmt_t(s['p99'])} | "
            f"{fmt_t(s['p99.9'])} | {fmt_t(s['max'])} | {fmt_t(r['longest_stall_s'])} | {r['failed']} | "
            f"{r['lost']} | {r['wrong']} | {ver} | {r['max_rss'] / MB:.0f} MB | {other} |"
        )
    return "\n".join(rows)


def versions(env: dict[str, str]) -> dict[str, str]:
    code = (
        "import json, sqlite3, diskcache, moto, kompakt\n"
        "print(json.dumps({m.__name__: m.__version__ for m in (kompakt, diskcache, moto)}"
        " | {'sqlite (python)': sqlite3.sqlite_version, 'kompakt_file': kompakt.__file__}))"
    )
    for _ in range(30):
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        if p.returncode == 0:
            return dict(json.loads(p.stdout))
        time.sleep(10)
    sys.exit(f"cannot import the benchmarked packages:\n{p.stderr}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, help="seconds of setting per case (default 30, quick 5)")
    p.add_argument("--writers", type=int, default=8, help="writer processes (default 8)")
    p.add_argument("--machines", type=int, default=4, help="S3: groups of writers, one cache folder each (default 4)")
    p.add_argument("--quick", action="store_true", help="5 s per case: a smoke test")
    p.add_argument("--cases", default=",".join(CASES), help="comma list of: " + ", ".join(CASES))
    p.add_argument("--verify-threads", type=int, default=16, help="S3 read back: threads (default 16)")
    p.add_argument("--results", default=os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results")))
    p.add_argument("--tmp", default=os.path.join(HERE, "data", "store_load"), help="where the stores are written")
    p.add_argument("--keep", action="store_true", help="keep the stores and the writers' files")
    p.add_argument("--no-snapshot", action="store_true", help="benchmark the installed kompakt, not a private copy")
    p.add_argument("--report-only", action="store_true", help="re-render the markdown from the JSON")
    p.add_argument("--worker", choices=["init", "set", "verify"], help=argparse.SUPPRESS)
    p.add_argument("--tool", help=argparse.SUPPRESS)
    p.add_argument("--target", help=argparse.SUPPRESS)
    p.add_argument("--cache-dir", help=argparse.SUPPRESS)
    p.add_argument("--writer", type=int, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--counts", help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        a.seconds = a.seconds or 0
        {"init": worker_init, "set": worker_set, "verify": worker_verify}[a.worker](a)
        return

    stem = "store_load_quick" if a.quick else "store_load"
    os.makedirs(a.results, exist_ok=True)
    json_path, md_path = os.path.join(a.results, stem + ".json"), os.path.join(a.results, stem + ".md")
    if a.report_only:
        rerender_report(json_path, md_path, summarize, render)
        return
    a.seconds = a.seconds or (5.0 if a.quick else 30.0)
    cases = [c.strip() for c in a.cases.split(",") if c.strip()]
    for c in cases:
        if c not in CASES:
            sys.exit(f"unknown case {c!r}; choose from {', '.join(CASES)}")
    if a.writers % a.machines:
        sys.exit("--writers must be a multiple of --machines")
    t_start = time.time()
    log = logger("store_load", t_start)
    a.tmp = os.path.abspath(a.tmp)
    if os.path.exists(a.tmp):
        shutil.rmtree(a.tmp)
    os.makedirs(a.tmp)

    env = worker_env()
    ksnap: dict[str, Any] = {}
    if not a.no_snapshot:
        for _ in range(30):
            try:
                _snap, ksnap = snapshot_kompakt(os.path.join(a.results, stem, "kompakt_snapshot"), log, env)
                break
            except ImportError as e:
                log(f"import kompakt failed ({e}); retrying in 10 s")
                time.sleep(10)
        else:
            sys.exit("kompakt cannot be imported")
    ver = versions(env)
    doc: dict[str, Any] = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "config": {
            "seconds": a.seconds,
            "writers": a.writers,
            "machines": a.machines,
            "value_bytes": VALUE_BYTES,
            "seed": SEED,
            "cases": cases,
            "command": " ".join([".venv/bin/python bench/store_load.py", *sys.argv[1:]]),
        },
        "machine": machine_info(),
        "versions": ver,
        "kompakt": ksnap,
        "git": git_state(),
        "published_diskcache": PUBLISHED,
        "cases": [],
    }

    def write_outputs() -> None:
        save_report(doc, t_start, summarize, render, json_path, md_path)

    for case in cases:
        log(f"{case}: {a.writers} writers x {a.seconds:g} s")
        if case == "kompakt S3":
            from s3server import S3Server

            with S3Server() as server:
                server.client().create_bucket(Bucket=BUCKET)
                senv = {**env, **server.env}
                per = a.writers // a.machines
                caches: list[str | None] = [
                    os.path.join(a.tmp, f"machine{w // per + 1}_cache") for w in range(a.writers)
                ]
                assert server._process is not None
                r = run_case(a, senv, case, f"s3://{BUCKET}/load", caches, log, server._process.pid)
        else:
            target = os.path.join(a.tmp, slugify(case))
            r = run_case(a, env, case, target, [None] * a.writers, log, None)
        s = r["stats"]
        log(
            f"{case}: {r['sets']} sets ({r['sets_per_s']:.0f}/s), p50 {fmt_t(s['p50'])}, p99 {fmt_t(s['p99'])}, "
            f"p99.9 {fmt_t(s['p99.9'])}, max {fmt_t(s['max'])}; failed {r['failed']}, lost {r['lost']}, "
            f"wrong {r['wrong']}; other cores {r['other_cores']:.2f}"
        )
        doc["cases"].append(r)
        write_outputs()
        shutil.rmtree(os.path.join(a.tmp, slugify(case)), ignore_errors=True)
    doc["git_end"] = git_state()
    write_outputs()
    if not a.keep:
        shutil.rmtree(a.tmp, ignore_errors=True)
    print(table(doc))
    print(f"\n{md_path}\n{json_path}")


if __name__ == "__main__":
    main()
