#!/usr/bin/env python3
"""The store's dictionaries per namespace: set and get of small values with and without.

    .venv/bin/python bench/store_dictionaries.py            full run (a few minutes, 2 cores)
    .venv/bin/python bench/store_dictionaries.py --quick    fewer values, 1 repeat
    .venv/bin/python bench/store_dictionaries.py --report-only

The values are those of bench/dictionaries.py (JSON log lines, pickled dicts, small pickled
DataFrames, ROOT baskets read with uproot from scikit-hep-testdata files, Spark-like map
statuses), at about 100 B, 1 KB, 4 KB and 32 KB each, set as plain bytes
(``Store.set_bytes``) into one namespace of a fresh store in the same run:

- *without*: ``kompakt.Store(path, dictionaries=False)``;
- *auto*: ``kompakt.Store(path)`` (the default): the store samples the first values it is
  given and, once it has enough (2000, or 4 MiB), trains a dictionary, judges it on the fifth
  of the samples held out of training, and adopts it only if they come out at least 10 %
  smaller and at most 5 % slower to write and read;
- *forced*: ``kompakt.Store(path, dictionary_max_slowdown=None)``, the same trial judged on
  size alone: what the dictionary does to set and get where *auto* refused it for speed.

Each store first gets the same warm-up values (enough for the trial; timed, the trial
included), then the measured values (1,000, or 300 at 32 KB): stored bytes are the growth of
the store's ``stored_bytes`` over them; set and get are microseconds per value, best of the
repeats (a repeat sets the same keys again). What the trial found (sizes of the held-out values
both ways, times, why a dictionary was refused) comes from the same trial run on the warm-up
values by a fourth store (``train_dictionary`` on the raw bytes, 5 % allowed).

Outputs bench/results/store_dictionaries.md and .json (store_dictionaries_quick.* with --quick).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dictionaries import make_values, per_value, run_kinds_by_size  # noqa: E402

NAMESPACE = "values"
# The store's trial comes after 2000 values or 4 MiB of them (crates/kompakt-store).
TRIAL_VALUES = 2000
TRIAL_BYTES = 4 << 20


def warm_up_count(size: int) -> int:
    """Values to ask for, for the warm-up: enough for the trial at this nominal size."""
    return min(TRIAL_VALUES, TRIAL_BYTES // (size // 2) + 1) + 20


def trial_point(values: list[bytes]) -> int:
    """How many of ``values`` the store takes before its trial: 2000, or once the sample of
    them leaves no room for one more value of 64 KiB in 4 MiB."""
    total = 0
    for n, v in enumerate(values, 1):
        total += len(v)
        if n >= TRIAL_VALUES or total + (64 << 10) > TRIAL_BYTES:
            return n
    return len(values) + 1


def run_store(path: str, mode: str, warm: list[bytes], test: list[bytes], repeats: int) -> dict:
    import kompakt

    options = {
        "without": {"dictionaries": False},
        "auto": {},
        "forced": {"dictionary_max_slowdown": None},
    }[mode]
    store = kompakt.Store(path, **options)
    t0 = time.perf_counter()
    for i, v in enumerate(warm):
        store.set_bytes(f"w{i}", v, namespace=NAMESPACE)
    warm_s = time.perf_counter() - t0
    adopted = store.dictionary(NAMESPACE)
    before = store.info()["stored_bytes"]
    keys = [(f"t{i}", v) for i, v in enumerate(test)]
    for k, v in keys:
        store.set_bytes(k, v, namespace=NAMESPACE)
    stored = store.info()["stored_bytes"] - before
    set_s = per_value(lambda kv: store.set_bytes(kv[0], kv[1], namespace=NAMESPACE), keys, repeats)
    get_s = per_value(lambda kv: store.get_bytes(kv[0], namespace=NAMESPACE), keys, repeats)
    for k, v in keys[:: max(1, len(keys) // 50)]:
        assert store.get_bytes(k, namespace=NAMESPACE) == v
    problems = store.verify()["problems"]
    assert not problems, problems
    store.close()
    return {
        "warm_up_s": warm_s,
        "adopted": adopted is not None,
        "dictionary_size": len(bytes(adopted)) if adopted is not None else 0,
        "stored_bytes": stored,
        "set_s": set_s,
        "get_s": get_s,
    }


def measure(kind: str, size: int, quick: bool, repeats: int, log) -> dict | None:
    import kompakt

    warm_n = warm_up_count(size)
    test_n = (300 if size >= 32000 else 1000) // (4 if quick else 1)
    # Packing whole records into values yields fewer values than asked for: ask for more.
    values = make_values(kind, size, (warm_n + test_n) * 2)
    if values is None:
        log(f"{kind} {size} B: no values this small")
        return None
    warm_n = trial_point(values) + 10
    if len(values) < warm_n + test_n:
        log(f"{kind} {size} B: only {len(values)} values, {warm_n + test_n} needed")
        return {"kind": kind, "size": size, "error": f"only {len(values)} values of this kind and size"}
    warm, test = values[:warm_n], values[warm_n : warm_n + test_n]
    root = tempfile.mkdtemp(prefix="kompakt-store-dict-")
    try:
        without = run_store(os.path.join(root, "without"), "without", warm, test, repeats)
        with_ = run_store(os.path.join(root, "auto"), "auto", warm, test, repeats)
        forced = run_store(os.path.join(root, "forced"), "forced", warm, test, repeats)
        judge = kompakt.Store(os.path.join(root, "trial"))
        # The store's own trial samples each value once, at most 4 MiB of them: the same here.
        samples, total = [], 0
        for v in warm:
            if total + len(v) > TRIAL_BYTES or len(samples) >= TRIAL_VALUES:
                break
            samples.append(v)
            total += len(v)
        trial = dict(judge._core.train_dictionary(NAMESPACE, samples))
        judge.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    raw = sum(map(len, test))
    row = {
        "kind": kind,
        "size": size,
        "mean_value_size": raw / len(test),
        "warm_up_values": warm_n,
        "test_values": len(test),
        "raw_bytes": raw,
        "without": without,
        "with": with_,
        "forced": forced,
        "trial": trial,
    }
    log(
        f"{kind} {size} B: adopted={with_['adopted']} ratio {raw / without['stored_bytes']:.2f} -> "
        f"{raw / with_['stored_bytes']:.2f} (forced {raw / forced['stored_bytes']:.2f}); set "
        f"{without['set_s'] * 1e6:.1f} -> {with_['set_s'] * 1e6:.1f} (forced {forced['set_s'] * 1e6:.1f}) us, "
        f"get {without['get_s'] * 1e6:.1f} -> {with_['get_s'] * 1e6:.1f} (forced {forced['get_s'] * 1e6:.1f}) us"
        + ("" if with_["adopted"] else f" ({trial['reason']})")
    )
    return row


def summarize(doc) -> dict:
    out = {}
    for r in doc["rows"]:
        if "error" in r:
            continue
        w, d, f = r["without"], r["with"], r["forced"]
        out[f"{r['kind']}/{r['size']}"] = {
            "adopted": d["adopted"],
            "smaller_pct": round(100 * (1 - d["stored_bytes"] / w["stored_bytes"]), 1),
            "forced_smaller_pct": round(100 * (1 - f["stored_bytes"] / w["stored_bytes"]), 1),
            "set_us": [round(x["set_s"] * 1e6, 1) for x in (w, d, f)],
            "get_us": [round(x["get_s"] * 1e6, 1) for x in (w, d, f)],
        }
    return out


def micros(*runs_and_field) -> str:
    *runs, field = runs_and_field
    return " / ".join(f"{run[field] * 1e6:.1f}" for run in runs)


def render(doc) -> str:
    m = doc["machine"]
    lines = [
        "# The store's dictionaries per namespace: set and get with and without",
        "",
        f"Commit {doc['git']['commit']}, {doc['date']}; {m['cpu']}, {m['cores']} cores; the store's "
        f"default codec (zstd:1), best of {doc['repeats']} ({'quick run' if doc['quick'] else 'full run'}; "
        "bench/store_dictionaries.py).",
        "",
        "Ratio = raw bytes / stored bytes of the measured values (whole kompakt files as the store "
        "keeps them). Set and get: microseconds per value, from Python (`Store.set_bytes`, "
        "`Store.get_bytes`), as *without / auto / forced* (see the script: *auto* is the default "
        "store, *forced* adopts on size alone). *warm-up*: seconds to set the warm-up values "
        "without / auto, the trial included. *trial*: held-out values' stored bytes without -> "
        "with the trained dictionary, and why the default rule refused it.",
        "",
        "| kind | size | adopted | dict | ratio | ratio, auto | ratio, forced | set us | get us | warm-up s | trial |",
        "|--|--:|--|--:|--:|--:|--:|--:|--:|--:|--|",
    ]
    for r in doc["rows"]:
        if "error" in r:
            lines.append(f"| {r['kind']} | {r['size']} | {r['error']} |")
            continue
        raw, w, d, f, t = r["raw_bytes"], r["without"], r["with"], r["forced"], r["trial"]
        verdict = f"{t['stored_without']} -> {t['stored_with']} B" if t.get("stored_without") else ""
        if t.get("reason"):
            verdict += f"; {t['reason']}"
        lines.append(
            f"| {r['kind']} | {r['mean_value_size']:.0f} B | {'yes' if d['adopted'] else 'no'} "
            f"| {f['dictionary_size'] / 1024:.0f} KiB "
            f"| {raw / w['stored_bytes']:.2f} | **{raw / d['stored_bytes']:.2f}** | {raw / f['stored_bytes']:.2f} "
            f"| {micros(w, d, f, 'set_s')} | {micros(w, d, f, 'get_s')} "
            f"| {w['warm_up_s']:.2f} / {d['warm_up_s']:.2f} | {verdict} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    run_kinds_by_size("store_dictionaries", __doc__, measure, summarize, render, ("pandas",))


if __name__ == "__main__":
    main()
