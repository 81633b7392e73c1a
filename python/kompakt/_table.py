"""Columnar table files: ``read_table`` and ``TableFile`` (``write_table`` and
``append_table`` are ``kompakt._table_write``'s, and importable from here too).

A table file stores a data frame column by column in row groups; reading a few columns or a
row range touches only the pages that cover them. Data crosses from the Rust core as Arrow;
this module only converts it to pandas and polars frames.
"""

from __future__ import annotations

import collections
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from kompakt import _core
from kompakt._errors import CorruptError, LimitError, OptionError
from kompakt._optional import require
from kompakt._table_write import append_table, write_table

__all__ = ["TableFile", "append_table", "read_table", "write_table"]
# The examples of the writers, run with this module's (tests/test_docs.py).
__test__ = {"write_table": write_table, "append_table": append_table}

_TARGETS = ("pandas", "arrow", "polars")
# The packages each ``to=`` needs (the extra of the same name installs them).
_TARGET_MODULES = {"pandas": ("pandas", "pyarrow"), "arrow": ("pyarrow",), "polars": ("polars", "pyarrow")}


def _check_target(to: Any, caller: str, numpy: bool = False) -> None:
    """Checks ``to=`` of ``caller`` (``"kompakt.read_table"``), and that the packages it needs
    (and numpy, for row numbers) are installed."""
    if not isinstance(to, str) or to not in _TARGETS:
        raise OptionError(f"to must be one of {', '.join(map(repr, _TARGETS))}, got {to!r}")
    for module in _TARGET_MODULES[to] + (("numpy",) if numpy else ()):
        if sys.modules.get(module) is None:  # (the message is built only when needed)
            require(module, to, f"{caller}(to={to!r})")


def read_table(
    path: str | os.PathLike,
    columns: Sequence[str | int] | str | None = None,
    rows: slice | tuple[int, int] | Sequence[int] | Any | None = None,
    *,
    to: str = "pandas",
    threads: int | None = None,
    max_size: int | None = None,
):
    """Reads a table file, or some of its columns and rows, reading only the pages needed.

    ``columns``: names or positions (default all). ``rows``: a slice, clamped to the table as
    in Python, or ``(start, stop)``, which must lie within it (``kompakt.OptionError``
    otherwise); negative values count from the end. The result equals slicing the whole table.
    ``rows`` may also be row numbers (a list, ``range`` or numpy array of ints): those rows, in
    that order, as ``TableFile.take`` reads them.
    ``to``: ``"pandas"`` (default), ``"arrow"`` (a pyarrow Table) or ``"polars"``.
    ``max_size``: the most memory the columns read may take, in bytes (estimated from their
    types before anything is read): by default 256 times the file's size, at least 1 GiB;
    more raises ``kompakt.LimitError``.
    The limit holds while decoding too: every buffer the read makes (values, string data,
    offsets, list children at every level, validity) is counted against it before it is
    allocated, so a small hostile file raises ``LimitError`` instead of taking the memory.

    >>> import pyarrow as pa, kompakt, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.kpk")
    >>> kompakt.write_table(pa.table({"a": range(100_000), "b": ["x"] * 100_000}), path)
    100000
    >>> kompakt.read_table(path, ["a"], rows=(50_000, 50_002), to="arrow").to_pydict()
    {'a': [50000, 50001]}
    """
    _check_target(to, "kompakt.read_table", numpy=_are_row_numbers(rows))
    return TableFile(path, max_size=max_size).read(columns, rows, to=to, threads=threads)


# A table read may take this many times its file's size in memory, and always this much,
# unless the caller says otherwise (max_size).
TABLE_RATIO = 256
TABLE_MIN_LIMIT = 1 << 30


def _row_bytes(t) -> float:
    """Bytes a row of an Arrow type takes at least once read: its fixed width, or the offsets
    of a variable-size type (its values come on top)."""
    import pyarrow as pa

    if pa.types.is_boolean(t):
        return 1 / 8
    if pa.types.is_dictionary(t):
        return _row_bytes(t.index_type)
    if pa.types.is_struct(t):
        return sum(_row_bytes(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_fixed_size_list(t):
        return t.list_size * _row_bytes(t.value_type)
    if pa.types.is_null(t):
        return 0
    try:
        return t.bit_width / 8
    except ValueError:
        pass
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t) or pa.types.is_large_list(t)
    return 8 if large else 4


class TableFile:
    """A table file opened for reading: schema and size at once, data on demand.

    >>> import pyarrow as pa, kompakt, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.kpk")
    >>> _ = kompakt.write_table(pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}), path)
    >>> t = kompakt.TableFile(path)
    >>> t.num_rows, t.columns
    (3, ['a', 'b'])
    >>> t[1:, "b"].to_pydict()
    {'b': ['y', 'z']}
    """

    def __init__(self, path: str | os.PathLike, *, max_size: int | None = None):
        if max_size is not None and (not isinstance(max_size, int) or isinstance(max_size, bool) or max_size < 0):
            raise OptionError(f"max_size must be a number of bytes (an int >= 0), got {max_size!r}")
        self._max_size = max_size
        self._path = os.fspath(path)
        before = _identity(self._path)
        self._core = _core.Table(self._path)
        self._set_limit()
        self._meta: Any = _UNSET
        self._column_names: list | None = None
        # pandas objects built from the file (a dictionary column's CategoricalDtype, column
        # labels), shared with other handles on the same file unless it changed while opening.
        after = _identity(self._path)
        self._pandas_cache = _pandas_cache_of(after) if before == after and after else {}

    @property
    def path(self) -> str:
        return self._path

    @property
    def schema(self):
        """The Arrow schema (``pyarrow.Schema``), with pandas metadata if pandas wrote it."""
        require("pyarrow", "arrow", "kompakt.TableFile.schema")
        return self._core.schema

    @property
    def num_rows(self) -> int:
        return self._core.num_rows

    @property
    def columns(self) -> list[str]:
        return list(self._names())

    def _names(self) -> list[str]:
        # Built once: the schema crosses from Rust on every `schema` access.
        if self._column_names is None:
            require("pyarrow", "arrow", "kompakt.TableFile.columns")
            self._column_names = list(self._core.schema.names)
        return self._column_names

    @property
    def rows_per_group(self) -> int:
        return self._core.rows_per_group

    @property
    def metadata(self) -> dict[str, str]:
        """The ``metadata`` given to ``write_table``."""
        return self._core.metadata

    @property
    def sorted_by(self) -> list[tuple[str, str, str]]:
        """The sort keys given to ``write_table``, as ``(column, order, nulls)`` tuples
        (``[]`` when none were given)."""
        return [
            (name, "descending" if desc else "ascending", "first" if first else "last")
            for name, desc, first in self._core.sorted_by
        ]

    @property
    def file_size(self) -> int:
        return self._core.file_size

    def __len__(self) -> int:
        return self.num_rows

    def __repr__(self) -> str:
        return f"<kompakt.TableFile {self._path!r}: {self.num_rows} rows x {len(self.columns)} columns>"

    def __enter__(self) -> TableFile:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def summary(self) -> list[dict]:
        """Per column: type, page encodings, encoded and stored bytes, codecs."""
        return self._core.summary()

    @property
    def num_row_groups(self) -> int:
        """Row groups: ``rows_per_group`` rows each, the last one perhaps fewer."""
        return -(-self.num_rows // self.rows_per_group)

    def statistics(self, column: str | int):
        """The row-group statistics of a column, as a ``pyarrow.Table`` of one row per row
        group: ``null_count``, and for the types that have them ``nan_count`` (floats), ``min``
        and ``max``. The bounds hold for every value of the group (NaN aside) but need not be
        attained: strings longer than 64 bytes are cut. A bound is null for a group with no
        value. None when the file has none (written without them, or by an older kompakt);
        dictionary and nested columns have null counts only.
        Filters of ``kompakt.dask.read_table``, ``kompakt.polars.scan_table`` and
        ``kompakt.read_batches`` skip the row groups these rule out.

        >>> import pyarrow as pa, kompakt, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "t.kpk")
        >>> _ = kompakt.write_table(pa.table({"a": [5, None, 2, 9]}), path, rows_per_group=2)
        >>> kompakt.TableFile(path).statistics("a").to_pydict()
        {'null_count': [1, 0], 'min': [5, 2], 'max': [5, 9]}
        """
        require("pyarrow", "arrow", "kompakt.TableFile.statistics")
        [position] = self._positions([column])
        reader = self._core.statistics(position)
        return None if reader is None else reader.read_all()

    def verify(self, threads: int | None = None) -> int:
        """Checks the whole table, as ``kompakt verify`` does: every checksum, then every
        page decoded and validated (a few row groups at a time), and the rows' order
        against ``sorted_by``. Returns the number of rows; raises ``kompakt.CorruptError``.

        >>> import pyarrow as pa, kompakt, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "t.kpk")
        >>> _ = kompakt.write_table(pa.table({"a": [1, 2, 3]}), path, sorted_by="a")
        >>> kompakt.TableFile(path).verify()
        3
        """
        from kompakt._data import verify

        verify(self._path, threads=threads)
        # One limit for all the table's pages: what verifying decodes, and so its work.
        self._set_limit()
        return int(self._core.verify_rows(threads=threads))

    def _positions(self, columns) -> list[int] | None:
        if columns is None:
            return None
        if isinstance(columns, (str, int)):
            columns = [columns]
        n = len(self.columns)
        out = []
        for c in columns:
            if isinstance(c, bool) or not isinstance(c, (str, int)):
                raise TypeError(f"columns are names or positions, got {c!r}")
            if isinstance(c, int):
                if not -n <= c < n:
                    raise IndexError(f"column {c} out of range for a table of {n} columns")
                out.append(c % n)
            else:
                out.extend(self._core.column_indices([c]))
        return out

    def _range(self, rows) -> tuple[int, int]:
        n = self.num_rows
        if rows is None:
            return 0, n
        if isinstance(rows, int) and not isinstance(rows, bool):
            i = rows + n if rows < 0 else rows
            if not 0 <= i < n:
                raise IndexError(f"row {rows} out of range for a table of {n} rows")
            return i, i + 1
        if isinstance(rows, tuple) and len(rows) == 2:
            return self._exact_range(*rows)
        if not isinstance(rows, slice):
            raise TypeError(f"rows must be a slice, (start, stop) or an int, got {rows!r}")
        start, stop, step = rows.indices(n)
        if step != 1:
            raise OptionError(f"rows must be a contiguous range (step 1), got step {step}")
        return start, max(start, stop)

    def _exact_range(self, first, last) -> tuple[int, int]:
        """A ``(start, stop)`` request: like ``kompakt cat --range``, it must lie within the
        table (negative values count from the end); a slice is clamped, as in Python."""
        n = self.num_rows
        if not all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in (first, last)):
            raise TypeError(f"rows (start, stop) must be ints or None, got {(first, last)!r}")
        start = 0 if first is None else first + n if first < 0 else first
        stop = n if last is None else last + n if last < 0 else last
        if stop < start:
            raise OptionError(f"rows {(first, last)}: the range ends before it starts")
        if start < 0 or stop > n:
            raise OptionError(
                f"rows {(first, last)} are outside the table's {n} rows: (start, stop) must lie within 0 to {n} "
                "(a slice is clamped to the table instead, as in Python)"
            )
        return start, stop

    def _read_numpy(self, positions: list, meta, start: int, stop: int, threads) -> tuple[dict, list]:
        """The columns among ``positions`` that pandas keeps as numpy numbers (by the pandas
        metadata) and that have no nulls, decoded into new numpy arrays: ``({position: array},
        [(block, positions), ...])``.

        The columns of one dtype are the rows of one 2D ``(columns, rows)`` block, the layout of
        the frames ``to_pandas`` builds: one pandas block instead of one per column, and one
        allocation, which the allocator reuses on the next read (60 separate arrays of 40 KB
        went back to the kernel each time, and faulting them in again tripled a read's time)."""
        if not meta or stop <= start:
            return {}, []
        import numpy as np

        stored = {c.get("field_name"): c for c in meta.get("columns") or [] if isinstance(c, dict)}
        schema = self._core.schema
        by_dtype: dict = {}
        for i in positions:
            field = schema.field(i)
            m = stored.get(field.name)
            if m is None or m.get("name") != field.name:
                continue
            kind, t = m.get("pandas_type"), field.type
            if kind in _NUMERIC and m.get("numpy_type") == kind and _is_number(t):
                if np.dtype(t.to_pandas_dtype()) != np.dtype(kind) or self._core.may_have_nulls(i, start, stop):
                    continue
                by_dtype.setdefault(np.dtype(kind), []).append(i)
        out, blocks = {}, []
        for dtype, members in by_dtype.items():
            block = np.empty((len(members), stop - start), dtype)
            # (A page may say it has nulls where the index could not: that column goes through
            # Arrow instead, and its unused row costs only memory.)
            kept = [j for j, i in enumerate(members) if self._core.read_into(i, start, stop, block[j], threads)]
            out.update((members[j], block[j]) for j in kept)
            if len(kept) == len(members):
                blocks.append((block, members))
        return out, blocks

    def read_arrow(self, columns=None, rows=None, *, threads: int | None = None):
        """Like :meth:`read` with ``to="arrow"``: a ``pyarrow.Table``."""
        require("pyarrow", "arrow", "kompakt.TableFile.read_arrow")
        if _are_row_numbers(rows):
            return self.take(rows, columns, to="arrow", threads=threads)
        start, stop = self._range(rows)
        positions = self._positions(columns)
        self._check_size(positions, start, stop)
        return self._read_arrow(positions, start, stop, threads)

    def _limit(self) -> int:
        """The most bytes one read may take: ``max_size``, or the default for this file."""
        return self._max_size if self._max_size is not None else max(TABLE_MIN_LIMIT, TABLE_RATIO * self.file_size)

    def _set_limit(self) -> int:
        """Hands the limit to the decoder, which counts every buffer a read makes against it
        before allocating it (``LimitError`` when it does not fit); returns it."""
        limit = self._limit()
        self._core.set_max_size(limit)
        return limit

    def _check_size(self, positions, start: int, stop: int) -> None:
        """Refuses a read whose columns take more memory than the table's limit (``max_size``,
        by default 256 times the file's size and at least 1 GiB): a small file can declare
        millions of rows per page of a constant, so its size alone does not bound a read."""
        schema = self.schema
        fields = range(len(schema)) if positions is None else positions
        need = int((stop - start) * sum(_row_bytes(schema.field(i).type) for i in fields))
        limit = self._set_limit()
        if need > limit:
            how = "max_size" if self._max_size is not None else f"the default limit ({limit >> 20} MiB for this file)"
            raise LimitError(
                f"{self._path}: reading rows {start}..{stop} of these columns takes at least {need >> 20} MiB, "
                f"more than {how}: pass a larger max_size= (to read_table or TableFile), or read fewer rows"
            )

    def _read_arrow(self, positions, start: int, stop: int, threads, strings: str = "stored"):
        """``strings``: utf8 and binary columns as stored, as ``"large"`` types or as ``"view"`` s."""
        import pyarrow as pa

        if positions == [] or not self._names():
            # No columns, but the rows still count: the batch reader carries the row count.
            return self._core.read(positions, start, stop, threads).read_all()
        schema, groups = self._core.read_groups(positions, start, stop, threads, strings)
        if len(groups) == 1:
            # Every column cut at the same rows: the stream is the table, in order.
            return groups[0][1].read_all()
        arrays: list = [None] * len(schema)
        for places, reader in groups:
            part = reader.read_all()
            for j, k in enumerate(places):
                arrays[k] = part.column(j)
        return pa.Table.from_arrays(arrays, schema=schema)

    def read(self, columns=None, rows=None, *, to: str = "pandas", threads: int | None = None):
        """Columns and rows as pandas (default), ``"arrow"`` or ``"polars"``; see read_table."""
        _check_target(to, "kompakt.TableFile.read", numpy=_are_row_numbers(rows))
        if _are_row_numbers(rows):
            return self.take(rows, columns, to=to, threads=threads)
        start, stop = self._range(rows)
        positions = self._positions(columns)
        self._check_size(positions, start, stop)
        pandas_meta = None
        if to == "pandas":
            pandas_meta = self._pandas_metadata()
            self._with_index_columns(positions, pandas_meta)
        if to == "arrow":
            return self._read_arrow(positions, start, stop, threads)
        if to == "polars":
            import polars

            # Strings as views, polars' own layout: it takes them without copying each one.
            return polars.from_arrow(self._read_arrow(positions, start, stop, threads, strings="view"))
        all_names = self._names()
        wanted = list(range(len(all_names))) if positions is None else positions
        names = [all_names[i] for i in wanted]
        # Numeric columns without nulls decode straight into numpy arrays the frame then owns
        # (writable, with no copy out of Arrow's read-only buffers); the rest go through Arrow.
        direct, blocks = {}, []
        if len(set(names)) == len(names):
            direct, blocks = self._read_numpy(wanted, pandas_meta, start, stop, threads)
        rest = [i for i in wanted if i not in direct]
        # Strings with 64-bit offsets: pandas' Arrow-backed str columns hold them, and
        # to_pandas would otherwise widen every offset in a pass of its own (about 8 ms per
        # 10 M strings); a frame of Python str objects comes out the same either way.
        table = self._read_arrow(rest if direct else positions, start, stop, threads, strings="large")
        columns = dict(zip(table.column_names, table.columns))
        columns.update((all_names[i], a) for i, a in direct.items())
        blocks = [(block, [all_names[i] for i in members]) for block, members in blocks]
        df = _simple_frame(
            names, columns, stop - start, pandas_meta, start, self.num_rows, self._pandas_cache, blocks, threads
        )
        if df is not None:
            return df
        if direct:
            import pyarrow as pa

            schema = self._core.schema
            # (A column read through Arrow has the type it was read as: large strings.)
            fields = [table.schema.field(all_names[i]) if i in rest else schema.field(i) for i in wanted]
            arrays = [
                columns[f.name] if i in rest else pa.array(direct[i], type=f.type) for i, f in zip(wanted, fields)
            ]
            table = pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=schema.metadata))
        df = table.to_pandas()
        if pandas_meta:
            _shift_range_index(df, pandas_meta, start, self.num_rows)
        return df

    def _with_index_columns(self, positions: list[int] | None, pandas_meta: dict | None) -> None:
        """A frame's index is stored as columns: read them too, as pyarrow does for Parquet."""
        if positions is None or not pandas_meta:
            return
        for name in pandas_meta.get("index_columns", []):
            if isinstance(name, str) and name in self._names():
                i = self._names().index(name)
                if i not in positions:
                    positions.append(i)

    def take(self, indices, columns=None, *, to: str = "pandas", threads: int | None = None):
        """The rows at ``indices`` (a list, ``range`` or numpy array of ints; negative values
        count from the end), in that order and repeats included, of ``columns`` (default all),
        as pandas (default), ``"arrow"`` or ``"polars"``. Each row group that holds any of
        them is read once and only the part of its pages from the first of those rows to the
        last is decoded, however many rows it holds. Equals taking the rows of the whole table
        (a stored RangeIndex gives the taken rows' labels).

        >>> import pyarrow as pa, kompakt, tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "t.kpk")
        >>> kompakt.write_table(pa.table({"a": range(100_000)}), path)
        100000
        >>> kompakt.TableFile(path).take([99_999, 5, 5], to="arrow")["a"].to_pylist()
        [99999, 5, 5]
        """
        _check_target(to, "kompakt.TableFile.take", numpy=True)
        rows = self._row_numbers(indices)
        positions = self._positions(columns)
        self._check_size(positions, 0, len(rows))
        pandas_meta = self._pandas_metadata() if to == "pandas" else None
        self._with_index_columns(positions, pandas_meta)
        table = self._core.take(rows.astype("<u8").tobytes(), positions, threads).read_all()
        if to == "arrow":
            return table
        if to == "polars":
            import polars

            return polars.from_arrow(table)
        df = table.to_pandas()
        index = _taken_index(pandas_meta, rows, self.num_rows) if pandas_meta else None
        if index is not None:
            df.index = index
        return df

    def _row_numbers(self, indices):
        """``indices`` as an int64 numpy array of rows within the table."""
        import numpy as np

        n = self.num_rows
        rows = np.asarray(indices)
        if rows.ndim != 1 or not (rows.dtype.kind in "iu" or rows.size == 0) or rows.dtype == np.bool_:
            raise TypeError(f"row numbers must be a 1-dimensional sequence of ints, got {type(indices).__name__}")
        if rows.dtype.kind == "u" and rows.size and rows.max() >= n:
            raise IndexError(f"row {int(rows.max())} out of range for a table of {n} rows")
        rows = rows.astype(np.int64)
        rows = np.where(rows < 0, rows + n, rows)
        bad = (rows < 0) | (rows >= n)
        if bad.any():
            first = int(np.asarray(indices)[np.argmax(bad)])
            raise IndexError(f"row {first} out of range for a table of {n} rows")
        return rows

    def __getitem__(self, key):
        """``t[rows]``, ``t[rows, columns]`` or ``t["column"]``, as a pyarrow Table."""
        if isinstance(key, str):
            return self.read_arrow([key])
        if isinstance(key, tuple) and len(key) == 2 and not all(isinstance(k, int) for k in key):
            return self.read_arrow(key[1], key[0])
        return self.read_arrow(None, key)

    def iter_batches(self, rows_per_batch: int | None = None, columns=None, *, threads: int | None = None) -> Iterator:
        """Yields the table as ``pyarrow.RecordBatch`` es, about ``rows_per_batch`` rows each
        (default: 64 row groups), holding only one batch's worth of pages at a time.

        Each batch is a read of its own under the table's limit (``max_size``, by default 256
        times the file's size and at least 1 GiB): decoding one batch allocates at most that
        much, or raises ``kompakt.LimitError`` before allocating more. The iteration as a whole
        is not limited (that is what it is for: tables larger than memory)."""
        # Checked here, at the call, not at the first batch.
        if rows_per_batch is not None:
            if isinstance(rows_per_batch, bool) or not hasattr(rows_per_batch, "__index__"):
                raise TypeError(f"rows_per_batch must be an int or None, got {type(rows_per_batch).__name__}")
            rows_per_batch = rows_per_batch.__index__()
            if rows_per_batch < 1:
                raise OptionError(f"rows_per_batch must be at least 1 (or None: 64 row groups), got {rows_per_batch}")
        require("pyarrow", "arrow", "kompakt.TableFile.iter_batches")
        step = rows_per_batch or 64 * self.rows_per_group
        return self._batches(step, self._positions(columns), threads)

    def _batches(self, step: int, positions: list[int] | None, threads: int | None) -> Iterator:
        self._set_limit()
        for start in range(0, self.num_rows, step):
            reader = self._core.read(positions, start, min(start + step, self.num_rows), threads)
            yield from reader

    def _pandas_metadata(self) -> dict | None:
        if self._meta is _UNSET:
            raw = (self.schema.metadata or {}).get(b"pandas")
            try:
                meta = json.loads(raw) if raw else None
            except (ValueError, RecursionError) as e:
                raise CorruptError(f"{self._path}: the table's pandas metadata is not valid JSON ({e})") from None
            if meta is not None and not isinstance(meta, dict):
                raise CorruptError(f"{self._path}: the table's pandas metadata is not a JSON object")
            self._meta = meta
        return self._meta


def _stored_range(meta: dict, total: int):
    """The RangeIndex the table stores, as ``(start, step, name)``; None when it stores none,
    and ``"stale"`` when its length is no longer the table's (rows were appended): pyarrow does
    not use it then either, and rows are numbered from 0."""
    idx = meta.get("index_columns") or []
    if len(idx) != 1 or not isinstance(idx[0], dict) or idx[0].get("kind") != "range":
        return None
    d = idx[0]
    first, step = d.get("start", 0), d.get("step", 1)
    if len(range(first, d.get("stop", first), step)) != total:
        return "stale"
    return first, step, d.get("name")


def _range_index(meta: dict, start: int, n: int, total: int):
    """The index of rows ``start .. start + n`` when the table stores a RangeIndex (None when it
    does not): the stored range shifted, as the same rows have it in the whole table."""
    stored = _stored_range(meta, total)
    if stored is None:
        return None
    import pandas as pd

    if stored == "stale":
        return pd.RangeIndex(start, start + n)
    first, step, name = stored
    first += start * step
    return pd.RangeIndex(first, first + n * step, step, name=name)


def _are_row_numbers(rows) -> bool:
    """Whether ``rows`` names rows one by one (a list, range or array) rather than a range."""
    return isinstance(rows, (list, range)) or hasattr(rows, "__array__")


def _taken_index(meta: dict, rows, total: int):
    """The index of the taken ``rows`` when the table stores a RangeIndex (see _range_index)."""
    stored = _stored_range(meta, total)
    if stored is None:
        return None
    import pandas as pd

    if stored == "stale":
        return pd.Index(rows)
    first, step, name = stored
    return pd.Index(first + rows * step, name=name)


def _shift_range_index(df, meta: dict, start: int, total: int) -> None:
    """pyarrow rebuilds a stored RangeIndex only when all rows are read; give a row slice the
    index the same rows have in the whole table (see _range_index)."""
    index = _range_index(meta, start, len(df), total)
    if index is not None:
        df.index = index


_UNSET = object()
# pandas objects built from recently read files, by file identity: a CategoricalDtype costs
# more to build than a 1000-row read. An append or a replaced file is a new identity.
_PANDAS_CACHE: collections.OrderedDict[tuple, dict[Any, Any]] = collections.OrderedDict()
_PANDAS_CACHE_FILES = 16


def _identity(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _pandas_cache_of(key: tuple) -> dict[Any, Any]:
    found = _PANDAS_CACHE.pop(key, None)
    _PANDAS_CACHE[key] = found if found is not None else {}
    while len(_PANDAS_CACHE) > _PANDAS_CACHE_FILES:
        _PANDAS_CACHE.popitem(last=False)
    return _PANDAS_CACHE[key]


def _is_number(t) -> bool:
    """Integer or floating Arrow type (``to_pandas_dtype`` raises for some other primitives,
    such as times)."""
    import pyarrow as pa

    return pa.types.is_integer(t) or pa.types.is_floating(t)


_NUMERIC = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"}


def _simple_frame(
    names: list,
    columns: dict,
    n: int,
    meta: dict | None,
    start: int,
    total: int,
    cache: dict,
    blocks: list = (),
    threads: int | None = None,
):
    """The DataFrame that ``table.to_pandas`` (and the index fix-up of a row slice) would give
    for the columns ``names`` of ``n`` rows (``columns``: name -> pyarrow ChunkedArray, or a
    writable numpy array already decoded), built directly for the common simple case, or None
    outside it. ``blocks``: ``(2D array, names)`` for decoded columns that are rows of one
    array, which becomes one pandas block (when pandas can be given blocks).

    The simple case: a stored RangeIndex or none, one unnamed level of string column labels,
    and every column numeric without nulls, a categorical of strings, or bool (numpy or
    nullable). pyarrow's generic conversion costs about a millisecond for a 1000-row read of
    a categorical, and converts booleans bit by bit; here a categorical reuses its dtype and
    codes, and bitmaps are unpacked by numpy. ``test_table.py`` checks the two agree.
    """
    if not meta:
        return None
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    index = meta.get("index_columns") or []
    labels = meta.get("column_indexes") or []
    if len(index) > 1 or (index and not (isinstance(index[0], dict) and index[0].get("kind") == "range")):
        return None
    if len(labels) > 1 or (labels and (labels[0].get("name") is not None or labels[0].get("pandas_type") != "unicode")):
        return None
    if not names or len(set(names)) != len(names):
        return None
    stored = {c.get("field_name"): c for c in meta.get("columns") or [] if isinstance(c, dict)}
    data = {}
    for name in names:
        column = columns[name]
        m = stored.get(name)
        if m is None or m.get("name") != name:
            return None
        if isinstance(column, np.ndarray):
            data[name] = column
            continue
        kind, numpy_type, t = m.get("pandas_type"), m.get("numpy_type"), column.type
        if kind in _NUMERIC and numpy_type == kind and _is_number(t) and column.null_count == 0:
            if np.dtype(t.to_pandas_dtype()) != np.dtype(kind):
                return None
            # Copied (below), so that the frame can be written to as to_pandas' frames can:
            # the Arrow buffer is read-only.
            data[name] = column.to_numpy()
        elif kind == "bool" and pa.types.is_boolean(t) and numpy_type in ("bool", "boolean"):
            values, valid = _unpack_bools(column, n)
            if numpy_type == "bool":
                if valid is not None:
                    return None
                data[name] = values
            else:
                mask = np.zeros(n, bool) if valid is None else ~valid
                data[name] = pd.arrays.BooleanArray(values, mask, copy=False)
        elif (
            kind == "categorical"
            and pa.types.is_dictionary(t)
            and pa.types.is_signed_integer(t.index_type)
            and (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type))
            and column.num_chunks
        ):
            dictionary = column.chunk(0).dictionary
            ordered = bool((m.get("metadata") or {}).get("ordered", False))
            # (pyarrow gives an empty dictionary object categories, not str.)
            if ordered != t.ordered or len(dictionary) == 0:
                return None
            cached = cache.get(name)
            if cached is None or not cached[0].equals(dictionary):
                cached = cache[name] = (dictionary, pd.Index(dictionary.to_pandas()))
            # A dtype of its own per frame (renaming one frame's categories must not rename the
            # next frame's), on the cached categories whose uniqueness is already known.
            dtype = pd.CategoricalDtype(cached[1].copy(deep=False), ordered)
            indices = pa.chunked_array([c.indices for c in column.chunks], t.index_type)
            if indices.null_count:
                indices = indices.fill_null(-1)
            codes = indices.to_numpy()
            data[name] = pd.Categorical.from_codes(codes, dtype=dtype, validate=False)
        else:
            return None
    _writable_copies(data, threads)
    row_index = _range_index(meta, start, n, total) if index else pd.RangeIndex(n)
    key = ("columns", tuple(names))
    labels_index = cache.get(key)
    if labels_index is None:
        labels_index = cache[key] = pd.Index(names)
    # A shallow copy: the data and inferred dtype are shared, a name set on it is not.
    labels = labels_index.copy(deep=False)
    from_blocks = getattr(getattr(pd.api, "internals", None), "create_dataframe_from_blocks", None)
    if from_blocks is not None:
        place = {name: j for j, name in enumerate(names)}
        grouped = set()
        parts = []
        for block, members in blocks:
            parts.append((block, np.array([place[name] for name in members], np.intp)))
            grouped.update(members)
        for name, values in data.items():
            if name not in grouped:
                values = values.reshape(1, n) if isinstance(values, np.ndarray) else values
                parts.append((values, np.array([place[name]], np.intp)))
        return from_blocks(parts, index=row_index, columns=labels)
    # Integer keys, then the labels: pandas infers a dtype for string keys (a pyarrow-backed
    # array per call), while an Index built once per file and selection can be shared.
    frame = pd.DataFrame(dict(enumerate(data.values())), index=row_index, copy=False)
    frame.columns = labels
    return frame


_COPY_PIECE = 1 << 22
_COPY_THREADS_MAX = 8
_copy_pools: dict = {}
# A child made by fork inherits the pools without their threads: work given to them would
# wait forever. The child starts its own.
os.register_at_fork(after_in_child=_copy_pools.clear)


def _writable_copies(data: dict, threads: int | None = None) -> None:
    """Replaces the read-only numpy arrays in ``data`` by copies, ``threads`` threads (as
    everywhere: None or 0 for all cores; at most 8) copying 4 MiB pieces when there is much to
    copy (numpy releases the GIL while it copies)."""
    import numpy as np

    arrays = [k for k, v in data.items() if isinstance(v, np.ndarray) and not v.flags.writeable]
    copies = {k: np.empty_like(data[k]) for k in arrays}
    pieces = []
    for k in arrays:
        src, dst = data[k].reshape(-1), copies[k].reshape(-1)
        step = max(1, _COPY_PIECE // max(1, src.itemsize))
        pieces.extend((dst[a : a + step], src[a : a + step]) for a in range(0, len(src), step))
    workers = min(_core.resolve_threads(threads), _COPY_THREADS_MAX)
    if len(pieces) > 1 and workers > 1:
        pool = _copy_pools.get(workers)
        if pool is None:
            import concurrent.futures

            pool = _copy_pools[workers] = concurrent.futures.ThreadPoolExecutor(
                workers, thread_name_prefix="kompakt-copy"
            )
        list(pool.map(lambda p: np.copyto(p[0], p[1]), pieces))
    else:
        for dst, src in pieces:
            np.copyto(dst, src)
    data.update(copies)


def _unpack_bools(column, n: int):
    """A boolean column's values and validity (None: no nulls) as numpy bool arrays."""
    import numpy as np

    values = np.empty(n, bool)
    valid = np.empty(n, bool) if column.null_count else None
    at = 0
    for chunk in column.chunks:
        bitmap, data = chunk.buffers()[:2]
        k, off = len(chunk), chunk.offset
        values[at : at + k] = _bits(data, off, k)
        if valid is not None:
            valid[at : at + k] = True if bitmap is None else _bits(bitmap, off, k)
        at += k
    return values, valid


def _bits(buf, offset: int, count: int):
    import numpy as np

    raw = np.frombuffer(buf, np.uint8, count=(offset + count + 7) // 8)
    return np.unpackbits(raw, bitorder="little", count=offset + count)[offset:].view(bool)
