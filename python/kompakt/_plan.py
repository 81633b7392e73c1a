"""Planning reads of many table files: files -> row ranges, with what filters on a sort key
allow to skip, and size estimates. One plan feeds every engine (Dask, Polars), local or remote.

A filter on a table's first sort key narrows each file to the rows that can match, found by
binary search over its row groups (a few single-row reads of that column). Then the row-group
statistics (null counts and bounds, when the file has them) drop the row groups no filter can
match. Both are the Rust planner's (``kompakt_table::plan``, through ``_core.Table.plan_rows``),
which every front end shares; this module gives it each filter's value in its column's Arrow
type. Every filter is still applied to the rows read, by each engine as it compares
(``apply_filters`` for pandas, ``arrow_condition`` for pyarrow, Polars' own expressions):
skipping is only ever an optimization.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kompakt import _core
from kompakt._errors import OptionError
from kompakt._optional import require
from kompakt._table import TableFile

OPS: tuple[str, ...] = _core.FILTER_OPS  # "==", "=", "!=", "<", "<=", ">", ">=", "in", "not in"
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


def expand_paths(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """A glob (``data/*.kpk``), a folder (its ``*.kpk`` files), a path or URL, or a list of
    those, as a list of paths and URLs, each item's sorted. ``s3://`` URLs ending in ``/`` and
    ``s3://`` globs are listed on the server; other URLs are taken as they are. Names starting
    with ``_`` or ``.`` (temporary and hidden files, as Spark leaves them) are skipped unless a
    glob's file name asks for them. The rules are the front door's, shared with every front end
    (``kompakt_api::location::table_files``)."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    out: list[str] = []
    for item in items:
        out.extend(_core.table_files(os.fspath(item)))
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


def _planner_filters(t: TableFile, filters: list[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
    """``filters`` as the Rust planner takes them for the file ``t``: each value as a pyarrow
    array of its column's type (a dictionary's value type). A number the type cannot hold
    exactly becomes a bound the type holds (on integers, ``x > 1.5`` plans as ``x > 1``, and
    ``x >= 1.5`` as ``x >= 1``: an engine may round 1.5 to 1 first); another value the type cannot hold
    leaves its filter out (it then skips nothing; the engines still apply it to the rows read).
    A filter on a column the file lacks goes as it is, for the planner's error."""
    import pyarrow as pa

    schema = t.schema
    out = []
    for column, op, value in filters:
        if column not in schema.names:
            out.append((column, op, pa.nulls(0 if op in ("in", "not in") else 1)))
            continue
        typ = schema.field(column).type
        if pa.types.is_dictionary(typ):
            typ = typ.value_type
        out.extend(_typed(column, op, value, typ))
    return out


def _typed(column: str, op: str, value: Any, typ: Any) -> list[tuple[str, str, Any]]:
    """One filter with its values as an array of type ``typ`` (see ``_planner_filters``): no
    filters, or some that every row of that type passes that passes the given one."""
    import pyarrow as pa

    listed = op in ("in", "not in")
    values = list(value) if listed else [value]
    if (pa.types.is_integer(typ) or pa.types.is_floating(typ)) and all(map(_is_number, values)):
        kept = []
        for v in values:
            lo, hi = _neighbours(v, typ)
            if (lo is not None and lo == hi) or (v != v and pa.types.is_floating(typ)):
                kept.append(lo)
            elif not listed:
                return [(column, o, pa.array([x], typ)) for o, x in _between(op, lo, hi)]
            elif op == "in":
                kept += [x for x in (lo, hi) if x is not None]
        return [(column, op, pa.array(kept, typ))]
    try:
        array = pa.array(values, typ)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return []
    exact = [_same(a, v) for a, v in zip(array.to_pylist(), values)]
    if all(exact):
        return [(column, op, array)]
    if op == "not in":
        return [(column, op, array.filter(pa.array(exact)))]
    return []


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _same(a: Any, v: Any) -> bool:
    """Whether ``a`` (a value converted to Arrow and back) is ``v``, the value given."""
    try:
        return a is v or bool(a == v)
    except (TypeError, ValueError):
        return False


def _neighbours(v: Any, typ: Any) -> tuple[Any, Any]:
    """The greatest value of the numeric Arrow type ``typ`` at most the number ``v``, and the
    least at least ``v``: None where there is none (past the type's range, or NaN)."""
    import pyarrow as pa

    if v != v:
        return (math.nan, math.nan) if pa.types.is_floating(typ) else (None, None)
    if pa.types.is_integer(typ):
        least, most = _int_range(typ)
        if v > most:
            return most, None
        if v < least:
            return None, least
        return math.floor(v), math.ceil(v)
    fmt = _FLOATS[typ.bit_width][0]
    try:
        c = struct.unpack(fmt, struct.pack(fmt, float(v)))[0]  # the nearest
    except OverflowError:
        c = math.inf if v > 0 else -math.inf
    if c == v:
        return c, c
    return (c, _next_float(c, typ, up=True)) if c < v else (_next_float(c, typ, up=False), c)


_FLOATS = {16: ("<e", "<H"), 32: ("<f", "<I"), 64: ("<d", "<Q")}  # struct formats: float, its bits


def _int_range(typ: Any) -> tuple[int, int]:
    import pyarrow as pa

    bits = typ.bit_width
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if pa.types.is_signed_integer(typ) else (0, (1 << bits) - 1)


def _next_float(x: float, typ: Any, up: bool) -> float:
    """The float of type ``typ`` next to ``x`` upwards or downwards (``x`` not NaN, nor an
    infinity in that direction)."""
    fmt, bits_fmt = _FLOATS[typ.bit_width]
    if x == 0:
        smallest = struct.unpack(fmt, struct.pack(bits_fmt, 1))[0]
        return smallest if up else -smallest
    bits = struct.unpack(bits_fmt, struct.pack(fmt, x))[0]
    bits += 1 if (x > 0) == up else -1
    return struct.unpack(fmt, struct.pack(bits_fmt, bits))[0]


def _between(op: str, lo: Any, hi: Any) -> list[tuple[str, Any]]:
    """``x op v`` for a number ``v`` that a numeric type does not hold, between its values
    ``lo`` and ``hi`` (None past either end, or both for NaN), as comparisons with values of the
    type that every row passing it passes, whether an engine compares ``v`` as it is or first
    casts it to the column's type (Polars does; to ``lo`` or ``hi``, whichever it rounds to)."""
    if lo is None and hi is None or op == "!=":
        return []
    if op in ("==", "="):
        return [(o, x) for o, x in ((">=", lo), ("<=", hi)) if x is not None]
    if op in (">", ">="):
        return [] if lo is None else [(op, lo)]
    return [] if hi is None else [(op, hi)]


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
        # The rows that can pass every filter (by binary search on the first sort key, then by
        # the row-group statistics), found by the Rust planner (kompakt_table::plan).
        if filters:
            ranges = t._core.plan_rows(_planner_filters(t, filters))
        else:
            ranges = [(0, t.num_rows)] if t.num_rows else []
        if not ranges:
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
        for a, b in ranges:
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
    filters = check_filters(filters)
    files = expand_paths(paths)
    names = list(columns) if columns is not None else None
    schema = TableFile(files[0]).read(names, slice(0, 0), to="arrow").schema
    tables = read_tables(plan(files, names, filters), names, filters)
    return pa.RecordBatchReader.from_batches(schema, (b for t in tables for b in t.to_batches()))
