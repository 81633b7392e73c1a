"""Writing table files: ``write_table`` and ``append_table``, and turning what they take
(pandas and polars frames, pyarrow tables, record batches and readers, anything with
``__arrow_c_stream__``) into the one Arrow stream the Rust core writes. Reading is
``kompakt._table``'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Literal

from kompakt import _core
from kompakt._errors import OptionError
from kompakt._optional import require

__all__ = ["SortKeys", "append_table", "write_table"]


def _pyarrow_for(data: Any, caller: str):
    """pyarrow, which writing ``data`` needs; a missing one names the extra for ``data``'s kind."""
    module = type(data).__module__
    extra = "pandas" if module.startswith("pandas") else "polars" if module.startswith("polars") else "arrow"
    return require("pyarrow", extra, f"kompakt.{caller}")


def _arrow_input(data: Any, preserve_index: bool | None, caller: str = "write_table"):
    """``data`` as something with ``__arrow_c_stream__`` (a pyarrow Table or reader)."""
    pa = _pyarrow_for(data, caller)

    if isinstance(data, pa.Table) and data.num_rows == 0:
        # One empty batch rather than none: it carries the dictionaries (a Table's stream skips
        # empty chunks, a reader of batches does not).
        batch = pa.RecordBatch.from_arrays(
            [c.combine_chunks() if c.num_chunks else pa.array([], c.type) for c in data.columns], schema=data.schema
        )
        table = pa.RecordBatchReader.from_batches(data.schema, [batch])
    elif isinstance(data, (pa.Table, pa.RecordBatchReader)):
        table = data
    elif isinstance(data, pa.RecordBatch):
        table = pa.RecordBatchReader.from_batches(data.schema, [data])
    elif type(data).__module__.startswith("pandas") and type(data).__name__ == "DataFrame":
        try:
            if len(data):
                table = pa.Table.from_pandas(data, preserve_index=preserve_index)
            else:
                # One empty batch rather than none: it carries the categories of categoricals.
                # (a Table's stream skips empty chunks, a reader of batches does not).
                batch = pa.RecordBatch.from_pandas(data, preserve_index=preserve_index)
                table = pa.RecordBatchReader.from_batches(batch.schema, [batch])
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError, pa.ArrowInvalid) as e:
            raise OptionError(f"{caller}: {_unsupported_column(data, e)}") from None
    elif type(data).__module__.startswith("polars") and type(data).__name__ == "DataFrame":
        table = data.to_arrow()
    elif hasattr(data, "__arrow_c_stream__"):
        return data
    else:
        raise TypeError(
            f"{caller} takes a pandas or polars DataFrame, a pyarrow Table, RecordBatch or "
            f"RecordBatchReader, or an object with __arrow_c_stream__; got {type(data).__name__}"
            + (" (the data comes first, then the path)" if isinstance(data, (str, os.PathLike)) else "")
        )
    return _without_views(table)


def _unsupported_column(frame, error: Exception) -> str:
    """Why a pandas frame has no Arrow form: the column and its type, and what to do."""
    for name, dtype in frame.dtypes.items():
        if getattr(dtype, "kind", None) == "c":
            return (
                f"column {name!r} has type {dtype}, which tables cannot store (Arrow has no complex "
                "numbers): store its .real and .imag as two columns, or save the frame with kompakt.save"
            )
    return f"a column has no table type ({error}); kompakt.save stores any object"


def _without_views(table):
    """Arrow's string and binary *views* (polars' default) stored as large strings/binaries."""
    import pyarrow as pa

    def plain(t):
        if t == pa.string_view():
            return pa.large_string()
        if t == pa.binary_view():
            return pa.large_binary()
        return t

    schema = table.schema
    if all(plain(f.type) == f.type for f in schema):
        return table
    target = pa.schema([f.with_type(plain(f.type)) for f in schema], metadata=schema.metadata)
    if isinstance(table, pa.RecordBatchReader):
        return pa.RecordBatchReader.from_batches(target, (b.cast(target) for b in table))
    return table.cast(target)


def _check_metadata(metadata) -> None:
    if metadata is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise TypeError("metadata must map str to str")


SortKeys = str | Sequence[str | tuple[str, str] | tuple[str, str, str]]
_SORT_ORDERS = {"ascending": False, "descending": True}
_NULL_PLACES = {"last": False, "first": True}


def _sort_keys(sorted_by: SortKeys | None) -> list[tuple[str, bool, bool]] | None:
    """``sorted_by`` as the core takes it: (column, descending, nulls_first) per key."""
    if sorted_by is None:
        return None
    # One key given alone, as a name or as a ("name", order[, nulls]) tuple, or a list of keys.
    one_tuple = isinstance(sorted_by, tuple) and len(sorted_by) in (2, 3) and sorted_by[1] in _SORT_ORDERS
    items = [sorted_by] if isinstance(sorted_by, str) or one_tuple else list(sorted_by)
    keys = []
    for item in items:
        spec = (item,) if isinstance(item, str) else item
        if not (isinstance(spec, tuple) and 1 <= len(spec) <= 3 and all(isinstance(s, str) for s in spec)):
            raise TypeError(
                "sorted_by items are column names or tuples (column, 'ascending'|'descending'[, 'last'|'first']), "
                f"got {item!r}"
            )
        name = spec[0]
        order = spec[1] if len(spec) > 1 else "ascending"
        nulls = spec[2] if len(spec) > 2 else "last"
        if order not in _SORT_ORDERS:
            raise OptionError(f"sort order of {name!r} must be 'ascending' or 'descending', got {order!r}")
        if nulls not in _NULL_PLACES:
            raise OptionError(f"nulls of sort key {name!r} must go 'last' or 'first', got {nulls!r}")
        keys.append((name, _SORT_ORDERS[order], _NULL_PLACES[nulls]))
    return keys


def write_table(
    data: Any,
    path: str | os.PathLike,
    *,
    codec: str | None = None,
    level: int | None = None,
    threads: int | None = None,
    metadata: dict[str, str] | None = None,
    rows_per_group: int | None = None,
    preserve_index: bool | None = None,
    sorted_by: SortKeys | None = None,
    statistics: bool = True,
    sync: Literal["always", "none"] | None = None,
) -> int:
    """Writes a table to ``path`` (atomically: a failed write leaves any old file intact).

    ``data`` is a pandas or polars DataFrame, a pyarrow Table, RecordBatch or
    RecordBatchReader (streamed: a table larger than memory is fine), or any object with
    ``__arrow_c_stream__``. ``codec``/``level`` choose the codec applied after each page's own
    encoding, for every page. By default, numbers and dictionary codes use ``"zstd:2"``,
    lists and structs holding strings ``"zstd:3"``, and the pages of string and binary columns
    that are not dictionary-encoded ``"zstd:3"`` where it stores them in under 0.8x LZ4's
    bytes (text: source lines, URLs, logs), else ``"lz4"``, which decodes them up to 1.8x
    faster; pass ``codec="lz4"`` for the fastest reads, or ``codec="zstd:2"`` for that codec
    everywhere. ``rows_per_group`` is the unit of random access (default 16384; a table of
    up to 32768 rows and 8 MiB is then one group); ``metadata`` is stored with the table
    (``TableFile.metadata``). pandas indexes are kept as pandas does with Arrow
    (``preserve_index``). Returns the number of rows written.

    ``sorted_by`` records the columns the rows are sorted by (``TableFile.sorted_by``): a
    name, or a list of names and ``(name, "ascending"|"descending"[, "last"|"first"])``
    tuples; nulls go last unless said otherwise. Every row is checked as it is written, and
    appends must keep the order: rows out of order raise ``kompakt.UsageError`` naming them.

    ``statistics`` (default True) keeps each row group's null counts and value bounds
    (``TableFile.statistics``), which let filtered reads skip row groups.

    ``sync`` is ``"none"`` (the default, unless the environment variable ``KOMPAKT_SYNC``
    says otherwise: renamed into place, flushed to the disk when the kernel chooses) or
    ``"always"`` (fsynced before this returns); see ``kompakt.save``.

    >>> import pandas as pd, kompakt, tempfile, os
    >>> df = pd.DataFrame({"city": pd.Categorical(["Oslo", "Lima", "Oslo"]), "n": [1, 2, 3]})
    >>> path = os.path.join(tempfile.mkdtemp(), "t.kpk")
    >>> kompakt.write_table(df, path)
    3
    >>> kompakt.read_table(path, rows=slice(1, 3))["n"].tolist()
    [2, 3]
    """
    _check_metadata(metadata)
    stream = _arrow_input(data, preserve_index)
    return _core.write_table(
        stream,
        os.fspath(path),
        codec=codec,
        level=level,
        threads=threads,
        rows_per_group=rows_per_group,
        metadata=metadata,
        sorted_by=_sort_keys(sorted_by),
        statistics=bool(statistics),
        sync=sync,
    )


def append_table(
    data: Any,
    path: str | os.PathLike,
    *,
    codec: str | None = None,
    level: int | None = None,
    threads: int | None = None,
    metadata: dict[str, str] | None = None,
    preserve_index: bool | None = None,
) -> int:
    """Appends rows to the table file at ``path`` without rewriting it; returns the rows added.

    ``data`` is anything ``write_table`` takes, with the table's column types. A crash or an
    error during the append leaves the table as it was before: the next open undoes an
    interrupted append. Readers that opened the file before keep reading the old rows; opening
    it while an append runs raises an error (try again). ``metadata`` is merged into the
    table's. ``codec``/``level`` work as in ``write_table``; the table does not remember the
    codecs it was written with, so without them the new rows (and the rewritten rows of a
    partial last row group) use the defaults.

    >>> import pyarrow as pa, kompakt, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "log.kpk")
    >>> kompakt.write_table(pa.table({"n": [1, 2]}), path)
    2
    >>> kompakt.append_table(pa.table({"n": [3]}), path)
    1
    >>> kompakt.read_table(path, to="arrow")["n"].to_pylist()
    [1, 2, 3]
    """
    _check_metadata(metadata)
    _pyarrow_for(data, "append_table")
    if preserve_index is None and type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pandas"):
        # Match the stored columns: keep the index only if the table stored one as a column.
        stored = _core.Table(os.fspath(path)).schema.names
        preserve_index = any(isinstance(n, str) and n.startswith("__index_level_") for n in stored) or None
    stream = _arrow_input(data, preserve_index, "append_table")
    return _core.append_table(stream, os.fspath(path), codec=codec, level=level, threads=threads, metadata=metadata)
