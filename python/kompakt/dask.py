"""kompakt tables as Dask DataFrames: ``read_table`` (many files, local or behind URLs, read
in parallel on a Dask cluster) and ``to_kompakt`` (one file per partition).

    >>> import kompakt, kompakt.dask, pandas as pd, tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> for i in range(3):
    ...     df = pd.DataFrame({"t": range(i * 100, i * 100 + 100), "x": [i] * 100})
    ...     _ = kompakt.write_table(df, os.path.join(folder, f"part-{i}.kpk"), sorted_by="t")
    >>> ddf = kompakt.dask.read_table(folder, filters=[("t", ">=", 150)], index="t")
    >>> ddf.npartitions, ddf.divisions
    (2, (150, 200, 299))
    >>> int(ddf.x.sum().compute())
    250

Requires ``dask[dataframe]`` (and ``distributed`` for a cluster).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from kompakt._optional import require
from kompakt._plan import Part, apply_filters, check_filters, expand_paths, plan, with_needed
from kompakt._table import TableFile, write_table

__all__ = ["read_table", "to_kompakt"]


def _read_part(part: Part, columns: list[str] | None, filters: list, index: str | None) -> Any:
    # Filtered and index columns are read too, then dropped.
    names = with_needed(columns, [*(f[0] for f in filters), *([index] if index else [])])
    t = TableFile(part.path)
    frames = [t.read(names, slice(a, b)) for a, b in part.row_ranges()]
    if len(frames) > 1:
        pd = require("pandas", "dask", "kompakt.dask.read_table")
        frame = pd.concat(frames)
    else:
        frame = frames[0]
    frame = apply_filters(frame, filters)
    if index is not None:
        frame = frame.set_index(index)
    if columns is not None:
        frame = frame[[c for c in columns if c != index]]
    return frame


def read_table(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    columns: Sequence[str] | None = None,
    filters: Sequence[tuple[str, str, Any]] | None = None,
    *,
    index: str | None = None,
    rows_per_part: int | None = None,
) -> Any:
    """A Dask DataFrame over table files: ``paths`` is a glob (``"data/*.kpk"``), a folder (its
    ``*.kpk`` files), a path or ``s3://``/``https://`` URL, or a list of those.

    One partition per file, or per ``rows_per_part`` rows (whole row groups). ``columns``:
    only those are read. ``filters``: ``(column, op, value)`` tuples that must all hold (op:
    ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in``); a filter on a file's
    first sort key (``write_table(..., sorted_by=...)``, ascending) skips the row groups that
    cannot match before anything is read, by binary search, and a filter on any column skips
    the row groups its row-group statistics rule out (``TableFile.statistics``); every filter
    is then applied to the rows read. ``index``: a column to make the index; when every file is sorted by it, the
    partitions get ``divisions`` (so Dask can align, join and select by index without a
    shuffle). Files are opened on the workers, by path or URL, so the cluster's machines must
    reach them.
    """
    dd = require("dask.dataframe", "dask", "kompakt.dask.read_table")
    filters = check_filters(filters)
    parts = plan(paths, columns, filters, rows_per_part=rows_per_part, sort_key=index)
    names = list(columns) if columns is not None else None
    # The columns and types, from no rows of the first file.
    first = parts[0].path if parts else expand_paths(paths)[0]
    meta = _read_part(Part(first, 0, 0, 0), names, [], index)
    if not parts:
        return dd.from_pandas(meta, npartitions=1)
    divisions = None
    if index is not None and all(p.bounds is not None for p in parts):
        lows = [p.bounds[0] for p in parts]
        highs = [p.bounds[1] for p in parts]
        # Known only if each part ends before the next begins (files in order, no overlap).
        if all(h < lo for h, lo in zip(highs, lows[1:])):
            divisions = (*lows, highs[-1])
    return dd.from_map(
        _read_part,
        parts,
        columns=names,
        filters=filters,
        index=index,
        meta=meta,
        divisions=divisions,
        label="kompakt-read-table",
        enforce_metadata=False,
    )


def to_kompakt(ddf: Any, folder: str | os.PathLike, **options: Any) -> list[str]:
    """Writes each partition of a Dask DataFrame to ``folder/part-NNNNN.kpk`` (in parallel, on
    the cluster), with ``write_table``'s ``options``; returns the paths in partition order.
    A pandas index that is not a plain range is kept, as ``write_table`` keeps it."""
    dask = require("dask", "dask", "kompakt.dask.to_kompakt")
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, f"part-{i:05d}.kpk") for i in range(ddf.npartitions)]
    writes = [dask.delayed(write_table)(part, path, **options) for part, path in zip(ddf.to_delayed(), paths)]
    dask.compute(*writes)
    return paths
