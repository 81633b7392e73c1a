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

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from kompakt._plan import BATCH_ROWS, check_filters, combine, expand_paths, plan, with_needed
from kompakt._table import TableFile

__all__ = ["scan_table"]


def _as_expr(filters: list[tuple[str, str, Any]]) -> Any:
    import polars as pl

    return combine(filters, pl.col, lambda x, v: x.is_in(v))


def scan_table(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    *,
    filters: Sequence[tuple[str, str, Any]] | None = None,
) -> Any:
    """A Polars LazyFrame over table files (``paths`` as for ``kompakt.dask.read_table``).

    Polars pushes down the columns a query uses (only those are read), its filters (applied
    to each batch as it is read) and its row limit (reading stops once enough rows passed).
    ``filters``: ``(column, op, value)`` tuples that must all hold; they skip the row groups
    that cannot match before anything is read (by binary search on a file's first sort key,
    and by the row-group statistics on any column). Polars' own predicates are applied to the
    rows read, but do not skip row groups.
    """
    import polars as pl
    from polars.io.plugins import register_io_source

    filters = check_filters(filters)
    files = expand_paths(paths)
    schema = pl.from_arrow(TableFile(files[0]).read(None, slice(0, 0), to="arrow")).schema
    own = _as_expr(filters)

    def source(
        with_columns: list[str] | None, predicate: Any, n_rows: int | None, batch_size: int | None
    ) -> Iterator[Any]:
        filtered = [c for e in (predicate, own) if e is not None for c in e.meta.root_names()]
        names = with_needed(with_columns, filtered)
        left = n_rows
        for part in plan(files, names, filters):
            t = TableFile(part.path)
            # Whole row groups, about a million rows a read (fewer under a small limit).
            want = min(batch_size or BATCH_ROWS, BATCH_ROWS if left is None else max(left, 1))
            step = t.rows_per_group * max(1, want // t.rows_per_group)
            for start, stop in ((s, min(b, s + step)) for a, b in part.row_ranges() for s in range(a, b, step)):
                frame = t.read(names, slice(start, stop), to="polars")
                if own is not None:
                    frame = frame.filter(own)
                if predicate is not None:
                    frame = frame.filter(predicate)
                if with_columns is not None:
                    frame = frame.select(with_columns)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                yield frame
                if left == 0:
                    return

    return register_io_source(source, schema=schema, explain_name="kompakt", explain_detail=f"{len(files)} files")
