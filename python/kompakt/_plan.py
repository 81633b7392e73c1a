"""Planning reads of many table files: files -> row ranges, with what filters on a sort key
allow to skip, and size estimates. One plan feeds every engine (Dask, Polars), local or remote.

A filter on a table's first sort key narrows each file to the rows that can match, found by
binary search over its row groups (a few single-row reads of that column). Then the row-group
statistics (null counts and bounds, when the file has them) drop the row groups no filter can
match. Every filter is still applied to the rows read: skipping is only ever an optimization.
"""

from __future__ import annotations

import bisect
import fnmatch
import glob
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kompakt._errors import OptionError
from kompakt._optional import require
from kompakt._table import TableFile

OPS = ("==", "=", "!=", "<", "<=", ">", ">=", "in", "not in")
BATCH_ROWS = 1 << 20  # rows a streaming read decodes at once


def is_url(path: str) -> bool:
    """Whether ``path`` starts like a URL (``scheme://``)."""
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", path) is not None


@dataclass(frozen=True)
class Part:
    """Rows ``start:stop`` of the table at ``path``, or of them only the ``ranges`` (row ranges,
    in order) when row groups between were skipped; ``bytes``: an estimate of the stored bytes
    read for ``columns`` (pages are read whole); ``bounds``: the first and last value of
    ``sort_key`` in these rows, when the file is sorted by it (ascending) and they were read."""

    path: str
    start: int
    stop: int
    bytes: int
    bounds: tuple[Any, Any] | None = None
    ranges: tuple[tuple[int, int], ...] | None = None

    def row_ranges(self) -> tuple[tuple[int, int], ...]:
        """The row ranges to read, in order."""
        return self.ranges if self.ranges is not None else ((self.start, self.stop),)


def _expand_url(url: str) -> list[str]:
    """An ``s3://`` URL ending in ``/`` (its ``*.kpk`` objects, as a folder), a glob of such
    URLs (``s3://b/data/*/part-*.kpk``: each segment matched as a local glob matches it), or
    one object's URL, as a sorted list of URLs."""
    from kompakt import _core

    at = url.index("://") + 3
    if url.endswith("/"):
        return [u for u, _ in _core.list_objects(url) if u.endswith(".kpk") and "/" not in u[len(url) :]]
    segments = url[at:].split("/")
    magic = [i for i, s in enumerate(segments) if glob.has_magic(s)]
    if not magic:
        return [url]
    if magic[0] == 0:
        raise OptionError(f"{url}: the bucket of a URL cannot be a pattern")
    if any("**" in s for s in segments):
        raise OptionError(f"{url}: '**' is not supported in URLs; use one '*' per folder level")
    prefix = url[:at] + "/".join(segments[: magic[0]]) + "/"
    found = []
    for u, _ in _core.list_objects(prefix):
        parts = u[at:].split("/")
        if len(parts) == len(segments) and all(fnmatch.fnmatchcase(p, s) for p, s in zip(parts, segments)):
            found.append(u)
    return found


def expand_paths(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """A glob (``data/*.kpk``), a folder (its ``*.kpk`` files), a path or URL, or a list of
    those, as a sorted list of paths and URLs. ``s3://`` URLs ending in ``/`` and ``s3://``
    globs are listed on the server; other URLs are taken as they are."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    out: list[str] = []
    for item in items:
        p = os.fspath(item)
        if is_url(p):
            out.extend(_expand_url(p))
        elif os.path.isdir(p):
            out.extend(sorted(glob.glob(os.path.join(glob.escape(p), "*.kpk"))))
        elif glob.has_magic(p):
            out.extend(sorted(glob.glob(p)))
        else:
            out.append(p)
    if not out:
        raise FileNotFoundError(f"no table files found at {paths!r}")
    return out


def with_needed(columns: Sequence[str] | None, needed: Iterable[str]) -> list[str] | None:
    """``columns`` and then the ``needed`` ones it lacks (filtered, index), each once; None
    (every column) stays None."""
    if columns is None:
        return None
    return [*columns, *dict.fromkeys(c for c in needed if c not in columns)]


def check_filters(filters: Sequence[tuple[str, str, Any]] | None) -> list[tuple[str, str, Any]]:
    """Filters as pyarrow writes them: a list of ``(column, op, value)`` that must all hold."""
    if filters is None:
        return []
    checked = []
    for f in filters:
        if not (isinstance(f, tuple) and len(f) == 3 and isinstance(f[0], str) and f[1] in OPS):
            raise OptionError(
                f"filters must be a list of (column, op, value) tuples, all of which must hold; "
                f"op one of {', '.join(OPS)}; got {f!r}"
            )
        checked.append(f)
    return checked


def _row_range(t: TableFile, column: str, filters: list[tuple[str, str, Any]]) -> tuple[int, int]:
    """The rows of ``t`` (sorted ascending by ``column``, nulls last or first) that the filters
    on ``column`` can select, by binary search over single rows."""
    n = t.num_rows
    nulls_first = any(k == column and nulls == "first" for k, _, nulls in t.sorted_by[:1])
    cache: dict[int, Any] = {}

    def value(i: int) -> Any:
        if i not in cache:
            v = t.take([i], [column], to="arrow").column(0)[0].as_py()
            # NaN sorts after every number; as infinity the probes stay monotone, and a NaN row
            # is kept by ">" (Polars keeps it; pandas drops it after the read).
            cache[i] = math.inf if isinstance(v, float) and math.isnan(v) else v
        return cache[i]

    def first_row(pred: Callable[[Any], bool]) -> int:
        # The first row whose (non-null) value satisfies a predicate monotone in the sort
        # order; nulls sit at one end and never match a comparison.
        class Rows:
            def __len__(self) -> int:
                return n

            def __getitem__(self, i: int) -> bool:
                v = value(i)
                return (not nulls_first) if v is None else pred(v)

        return bisect.bisect_left(Rows(), True)

    lo, hi = 0, n
    for _, op, v in filters:
        if op in (">", ">="):
            lo = max(lo, first_row(lambda x, v=v, op=op: x > v if op == ">" else x >= v))
        elif op in ("<", "<="):
            hi = min(hi, first_row(lambda x, v=v, op=op: x >= v if op == "<" else x > v))
        elif op in ("==", "="):
            lo = max(lo, first_row(lambda x, v=v: x >= v))
            hi = min(hi, first_row(lambda x, v=v: x > v))
    return lo, max(lo, hi)


def _may_match(op: str, value: Any, lo: Any, hi: Any, nulls: int, nans: int, rows: int) -> bool:
    """Whether a row group whose values lie in ``[lo, hi]`` (None: unknown or no value) with
    ``nulls`` null and ``nans`` NaN rows of ``rows`` may hold a row for which ``column op
    value`` holds. When in doubt (incomparable types, NaN), yes."""
    if op in ("!=", "not in"):
        # Null and NaN rows may pass these (pandas keeps them), so only a group of one value,
        # all of it excluded, is ruled out.
        if nulls or nans or lo is None or hi is None:
            return True
        if isinstance(lo, float) and lo == 0:
            # Bounds of zeros are -0.0 and +0.0, and engines disagree on whether -0.0 is "in"
            # a list holding 0.0 (pyarrow's hashing says no).
            return True
        excluded = [value] if op == "!=" else list(value)
        try:
            return not (lo == hi and any(lo == v for v in excluded))
        except TypeError:
            return True
    if nans:
        return True
    if lo is None or hi is None:
        # No bounds: a group of nulls matches no comparison; otherwise nothing is known.
        return nulls < rows
    try:
        if op in ("==", "="):
            return bool(lo <= value <= hi)
        if op == "<":
            return bool(lo < value)
        if op == "<=":
            return bool(lo <= value)
        if op == ">":
            return bool(hi > value)
        if op == ">=":
            return bool(hi >= value)
        return any(lo <= v <= hi for v in value)  # "in"
    except TypeError:
        return True


def _unskipped(t: TableFile, filters: list[tuple[str, str, Any]], lo: int, hi: int) -> list[tuple[int, int]]:
    """The row ranges of ``lo:hi`` (cut to whole row groups) left once the file's row-group
    statistics rule out the groups that no row of can pass every filter."""
    r = t.rows_per_group
    first, last = lo // r, -(-hi // r)
    keep = [True] * (last - first)
    for column in dict.fromkeys(f[0] for f in filters):
        if column not in t.columns:
            continue
        stats = t.statistics(column)
        if stats is None:
            continue
        get = {name: stats.column(name).to_pylist()[first:last] for name in stats.column_names}
        none = [None] * len(keep)
        mins, maxs, nans = get.get("min", none), get.get("max", none), get.get("nan_count", [0] * len(keep))
        for _, op, value in (f for f in filters if f[0] == column):
            for i in range(len(keep)):
                if keep[i]:
                    rows = min(r, t.num_rows - (first + i) * r)
                    keep[i] = _may_match(op, value, mins[i], maxs[i], get["null_count"][i], nans[i], rows)
    ranges: list[tuple[int, int]] = []
    for i, kept in enumerate(keep):
        if not kept:
            continue
        a, b = max(lo, (first + i) * r), min(hi, (first + i + 1) * r)
        if ranges and ranges[-1][1] == a:
            ranges[-1] = (ranges[-1][0], b)
        else:
            ranges.append((a, b))
    return ranges


def batch_ranges(part: Part, rows_per_group: int, rows: int = BATCH_ROWS) -> Iterator[tuple[int, int]]:
    """``part``'s rows as ranges of about ``rows`` rows (whole row groups) for one read each:
    a million rows keeps every core decoding pages at once and filters running on long
    arrays, with memory bounded."""
    step = rows_per_group * max(1, rows // rows_per_group)
    for a, b in part.row_ranges():
        for start in range(a, b, step):
            yield start, min(b, start + step)


def read_tables(parts: Iterable[Part], columns: list[str] | None, filters: list[tuple[str, str, Any]]) -> Iterator[Any]:
    """The rows of ``parts`` that pass ``filters``, ``columns`` of them, as pyarrow tables of
    about a million rows read each (``batch_ranges``)."""
    names = with_needed(columns, [f[0] for f in filters])
    condition = arrow_condition(filters)
    for part in parts:
        t = TableFile(part.path)
        for start, stop in batch_ranges(part, t.rows_per_group):
            table = t.read(names, slice(start, stop), to="arrow")
            if condition is not None:
                table = table.filter(condition)
            yield table if columns is None else table.select(columns)


def plan(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    columns: Sequence[str] | None = None,
    filters: Sequence[tuple[str, str, Any]] | None = None,
    *,
    rows_per_part: int | None = None,
    sort_key: str | None = None,
) -> list[Part]:
    """The parts of a read of many table files: one per file, or per ``rows_per_part`` rows
    (rounded to whole row groups), without the rows a filter on the file's first sort key
    (ascending) excludes or the row groups its statistics rule out (a part then reads several
    row ranges); files with no rows left are dropped. ``sort_key``: also read the
    first and last value of that column in each part (for Dask's divisions), when the file is
    sorted by it."""
    filters = check_filters(filters)
    parts: list[Part] = []
    for path in expand_paths(paths):
        t = TableFile(path)
        keys = t.sorted_by
        first = keys[0] if keys and keys[0][1] == "ascending" else None
        lo, hi = 0, t.num_rows
        if first is not None:
            on_key = [f for f in filters if f[0] == first[0]]
            if on_key:
                lo, hi = _row_range(t, first[0], on_key)
        if lo >= hi:
            continue
        names = list(columns) if columns is not None else t.columns
        missing = [c for c in names if c not in t.columns]
        if missing:
            raise OptionError(f"{path}: no column {missing[0]!r}; the columns are {t.columns}")
        share = len(names) / max(1, len(t.columns))
        per_row = t.file_size * share / max(1, t.num_rows)
        step = t.rows_per_group * max(1, -(-(rows_per_part or t.num_rows) // t.rows_per_group))
        # The rows left, cut where a part must end; boundaries fall on row groups, so no page
        # is read by two parts.
        pieces = []
        for a, b in _unskipped(t, filters, lo, hi) if filters else [(lo, hi)]:
            start = a
            while start < b:
                stop = min(b, (start // t.rows_per_group) * t.rows_per_group + step)
                pieces.append((start, stop))
                start = stop
        # Then as few parts as hold them, up to a part's rows each: skipping splits the rows
        # into many short ranges, and a task per range would cost more than it reads.
        groups: list[list[tuple[int, int]]] = []
        for piece in pieces:
            if groups and sum(b - a for a, b in groups[-1]) + piece[1] - piece[0] <= step:
                groups[-1].append(piece)
            else:
                groups.append([piece])
        for ranges in groups:
            start, stop = ranges[0][0], ranges[-1][1]
            bounds = None
            if sort_key is not None and first is not None and first[0] == sort_key:
                pair = t.take([start, stop - 1], [sort_key], to="arrow").column(0).to_pylist()
                bounds = (pair[0], pair[1])
            rows = sum(b - a for a, b in ranges)
            merged = tuple(ranges) if len(ranges) > 1 else None
            parts.append(Part(path, start, stop, int(per_row * rows), bounds, merged))
    return parts


def combine(filters: list[tuple[str, str, Any]], field: Callable[[str], Any], isin: Callable[[Any, list], Any]) -> Any:
    """The filters joined with ``&`` in any library's expressions: ``field(name)`` gives a column
    (pandas Series, pyarrow field, polars column), ``isin(column, values)`` its membership test.
    None when there are no filters."""
    condition = None
    for column, op, value in filters:
        x = field(column)
        if op in ("==", "="):
            e = x == value
        elif op == "!=":
            e = x != value
        elif op == "<":
            e = x < value
        elif op == "<=":
            e = x <= value
        elif op == ">":
            e = x > value
        elif op == ">=":
            e = x >= value
        elif op == "in":
            e = isin(x, list(value))
        else:
            e = ~isin(x, list(value))
        condition = e if condition is None else condition & e
    return condition


def apply_filters(frame: Any, filters: list[tuple[str, str, Any]]) -> Any:
    """The rows of a pandas DataFrame for which every filter holds."""
    keep = combine(filters, lambda c: frame[c], lambda x, v: x.isin(v))
    return frame if keep is None else frame[keep.to_numpy(dtype=bool, na_value=False)]


def arrow_condition(filters: list[tuple[str, str, Any]]) -> Any:
    """The filters as one pyarrow compute expression (None when there are none)."""
    import pyarrow.compute as pc

    return combine(filters, pc.field, lambda x, v: x.isin(v))


def read_batches(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    columns: Sequence[str] | None = None,
    filters: Sequence[tuple[str, str, Any]] | None = None,
) -> Any:
    """Table files (``paths`` as for ``kompakt.dask.read_table``) as one
    ``pyarrow.RecordBatchReader``, read about a million rows at a time: what DuckDB, DataFusion or
    pyarrow's own tools consume without holding every file in memory::

        reader = kompakt.read_batches("data/*.kpk", ["ts", "price"], [("ts", ">=", t0)])
        duckdb.sql("select avg(price) from reader")

    ``columns``: only those are read. ``filters``: ``(column, op, value)`` tuples that must all
    hold; on a file's first sort key, and on any column through the row-group statistics, they
    skip row groups before anything is read, and every one is applied to the rows read.

    >>> import kompakt, pyarrow as pa, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.kpk")
    >>> _ = kompakt.write_table(pa.table({"t": range(10), "x": range(10)}), path, sorted_by="t")
    >>> kompakt.read_batches(path, ["x"], [("t", ">", 6)]).read_all().column("x").to_pylist()
    [7, 8, 9]
    """
    pa = require("pyarrow", "arrow", "kompakt.read_batches")
    require("numpy", "arrow", "kompakt.read_batches")  # (a filter's binary search reads rows by number)
    filters = check_filters(filters)
    files = expand_paths(paths)
    names = list(columns) if columns is not None else None
    schema = TableFile(files[0]).read(names, slice(0, 0), to="arrow").schema
    tables = read_tables(plan(files, names, filters), names, filters)
    return pa.RecordBatchReader.from_batches(schema, (b for t in tables for b in t.to_batches()))
