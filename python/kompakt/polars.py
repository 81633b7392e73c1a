"""kompakt tables as a Polars LazyFrame: ``scan_table`` (many files, local or behind URLs),
through Polars' IO-plugin interface, with projection, predicate and limit pushdown.

    >>> import kompakt, kompakt.polars, polars as pl, tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> for i in range(3):
    ...     df = pl.DataFrame({"t": range(i * 100, i * 100 + 100), "x": [i] * 100})
    ...     _ = kompakt.write_table(df, os.path.join(folder, f"part-{i}.kpk"), sorted_by="t")
    >>> lf = kompakt.polars.scan_table(folder, filters=[("t", ">=", 250)])
    >>> lf.filter(pl.col("x") == 2).select("t").head(3).collect()["t"].to_list()
    [250, 251, 252]

Requires ``polars``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from kompakt._optional import require
from kompakt._plan import BATCH_ROWS, batch_ranges, check_filters, combine, expand_paths, plan, with_needed
from kompakt._table import TableFile

__all__ = ["scan_table"]


def _as_expr(filters: list[tuple[str, str, Any]]) -> Any:
    import polars as pl

    return combine(filters, pl.col, lambda x, v: x.is_in(v))


# ``column op value`` read the other way round: ``value op column``.
_MIRRORED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

# ``is_between(lo, hi, closed=...)`` as the ops of its two bounds.
_BETWEEN = {"both": (">=", "<="), "left": (">=", "<"), "right": (">", "<="), "none": (">", "<")}


def _constant(expr: Any) -> tuple[bool, Any]:
    """``(True, values)`` when ``expr`` uses no column (a literal, maybe cast by Polars), with
    its values as a Python list; ``(False, None)`` otherwise."""
    import polars as pl

    if expr.meta.root_names():
        return False, None
    try:
        values = pl.select(expr.alias("value")).to_series()
    except Exception:  # noqa: BLE001 (anything Polars cannot evaluate alone is no constant)
        return False, None
    if isinstance(values.dtype, (pl.List, pl.Array)) and len(values) == 1:
        values = values[0]
    return True, values.to_list()


def _column(expr: Any) -> str | None:
    return expr.meta.output_name() if expr.meta.is_column() else None


def _comparison(expr: Any, left: Any, right: Any) -> tuple[str, str, Any] | None:
    """``expr`` as a filter when it compares a column with a constant (either way round)."""
    tests = {
        "==": left.__eq__,
        "!=": left.__ne__,
        "<": left.__lt__,
        "<=": left.__le__,
        ">": left.__gt__,
        ">=": left.__ge__,
    }
    for op, build in tests.items():
        if not expr.meta.eq(build(right)):
            continue
        for column, other, as_op in ((_column(left), right, op), (_column(right), left, _MIRRORED[op])):
            ok, values = _constant(other) if column is not None else (False, None)
            if ok and len(values) == 1 and _comparable(values[0]):
                return (column, as_op, values[0])
        return None
    return None


def _comparable(value: Any) -> bool:
    # A null compares to nothing and Polars orders NaN above every number: neither reads as a
    # bound the statistics can be checked against.
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _exact_in(values: list[Any], dtype: Any) -> bool:
    """Whether every value is one the column's type holds exactly. Polars casts a constant to
    its column's type before comparing (0.1 against a float32 column is float32's 0.1), so a
    constant the type cannot hold would not bound the same rows as the statistics do."""
    import polars as pl

    try:
        cast = pl.Series(values).cast(dtype, strict=True).to_list()
    except Exception:  # noqa: BLE001 (no exact cast: no filter)
        return False
    return all(isinstance(a, bool) == isinstance(b, bool) and a == b for a, b in zip(values, cast))


def predicate_filters(predicate: Any, schema: Any = None) -> list[tuple[str, str, Any]]:
    """The parts of a Polars predicate that read as ``(column, op, value)`` filters: the
    comparisons of a column with a constant, ``is_in`` and ``is_between`` joined by ``&``.
    Each holds for every row the predicate keeps, so the row groups they rule out can be
    skipped; the rest (``|``, functions, columns compared with columns) is left to Polars, which
    applies the whole predicate to the rows read. With ``schema`` (the scan's Polars schema), a
    constant the column's type cannot hold exactly gives no filter; without it, none is
    checked."""
    filters: list[tuple[str, str, Any]] = []
    pending = [] if predicate is None else [predicate]
    while pending:
        expr = pending.pop()
        # meta.pop gives a node's inputs last first; a node is recognised by rebuilding it.
        inputs = expr.meta.pop()[::-1]
        if len(inputs) == 2:
            left, right = inputs
            if expr.meta.eq(left & right):
                pending += [left, right]
            elif expr.meta.eq(left.is_in(right)):
                column, (ok, values) = _column(left), _constant(right)
                if column is not None and ok and all(_comparable(v) for v in values):
                    filters.append((column, "in", values))
            elif (found := _comparison(expr, left, right)) is not None:
                filters.append(found)
        elif len(inputs) == 3:
            x, lo, hi = inputs
            column = _column(x)
            for closed, ops in _BETWEEN.items():
                if column is None or not expr.meta.eq(x.is_between(lo, hi, closed=closed)):  # type: ignore[arg-type]
                    continue
                for bound, op in ((lo, ops[0]), (hi, ops[1])):
                    ok, values = _constant(bound)
                    if ok and len(values) == 1 and _comparable(values[0]):
                        filters.append((column, op, values[0]))
                break
    if schema is None:
        return filters
    return [f for f in filters if f[0] in schema and _exact_in(list(f[2]) if f[1] == "in" else [f[2]], schema[f[0]])]


def scan_table(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    filters: Sequence[tuple[str, str, Any]] | None = None,
) -> Any:
    """A Polars LazyFrame over table files (``paths`` as for ``kompakt.dask.read_table``).

    Polars pushes down the columns a query uses (only those are read), its filters (applied
    to each batch as it is read) and its row limit (reading stops once enough rows passed).
    ``filters``: ``(column, op, value)`` tuples that must all hold. They, and the parts of
    Polars' own predicates that compare a column with a constant (``==``, ``<``, ...,
    ``is_in``, ``is_between``, joined by ``&``), skip the row groups that cannot match before
    anything is read: by binary search on a file's first sort key, and by the row-group
    statistics on any column. The whole predicate is then applied to the rows read.
    """
    pl = require("polars", "polars", "kompakt.polars.scan_table")
    require("pyarrow", "polars", "kompakt.polars.scan_table")  # (tables are read as Arrow, then handed over)
    from polars.io.plugins import register_io_source

    filters = check_filters(filters)
    files = expand_paths(paths)
    schema = pl.from_arrow(TableFile(files[0]).read(None, slice(0, 0), to="arrow")).schema
    own = _as_expr(filters)

    def source(
        with_columns: list[str] | None, predicate: Any, n_rows: int | None, batch_size: int | None
    ) -> Iterator[Any]:
        conditions = [e for e in (own, predicate) if e is not None]
        condition = None if not conditions else conditions[0] if len(conditions) == 1 else conditions[0] & conditions[1]
        filtered = [] if condition is None else list(dict.fromkeys(condition.meta.root_names()))
        names = with_needed(with_columns, filtered)
        left = n_rows
        for part in plan(files, names, filters + predicate_filters(predicate, schema)):
            t = TableFile(part.path)
            # Whole row groups, about a million rows a read (fewer under a small limit): Polars'
            # batch size hint (about 100 000 rows) would make a read cost more than it decodes;
            # what is read is handed over in batches of that size.
            want = BATCH_ROWS if left is None else min(BATCH_ROWS, max(left, 1))
            for start, stop in batch_ranges(part, t.rows_per_group, want):
                # Reading the filtered columns first, then the others (whole, or with a take of
                # the passing rows) measured no faster on fst's Integer == 42 (1 % of rows):
                # the same pages decode, in two reads a batch instead of one.
                frame = t.read(names, slice(start, stop), to="polars")
                if condition is not None:
                    frame = frame.filter(condition)
                if with_columns is not None:
                    frame = frame.select(with_columns)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                if batch_size and frame.height > batch_size:
                    yield from frame.iter_slices(batch_size)
                else:
                    yield frame
                if left == 0:
                    return

    return register_io_source(source, schema=schema, explain_name="kompakt", explain_detail=f"{len(files)} files")
