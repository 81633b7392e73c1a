"""kompakt tables as a Ray Dataset: ``read_table`` (many files, local or behind URLs, read in
parallel by Ray's workers), through a ``ray.data.Datasource`` fed by the same plan as Dask,
Polars and ``read_batches``.

    >>> import kompakt, kompakt.ray, pandas as pd, tempfile, os, ray
    >>> folder = tempfile.mkdtemp()
    >>> for i in range(3):
    ...     df = pd.DataFrame({"t": range(i * 100, i * 100 + 100), "x": [i] * 100})
    ...     _ = kompakt.write_table(df, os.path.join(folder, f"part-{i}.kpk"), sorted_by="t")
    >>> ds = kompakt.ray.read_table(folder, ["x"], filters=[("t", ">=", 150)])
    >>> ds.sum("x")
    250

Requires ``ray[data]``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from typing import Any

from kompakt._optional import require
from kompakt._plan import check_filters, expand_paths, plan, read_tables
from kompakt._table import TableFile

__all__ = ["datasource", "read_table"]


@functools.cache
def _datasource_class() -> type:
    # Defined once ray is imported: kompakt does not need ray to import.
    require("ray.data", "ray", "kompakt.ray.datasource")
    from ray.data import Datasource, ReadTask
    from ray.data.block import BlockMetadata

    class _KompaktDatasource(Datasource):
        """Table files as a Ray datasource: read tasks from kompakt's plan (files, then the row
        groups left once filters skipped those that cannot match), each reading its parts on a
        worker, by path or URL."""

        def __init__(
            self,
            paths: str | os.PathLike | Iterable[str | os.PathLike],
            columns: Sequence[str] | None = None,
            filters: Sequence[tuple[str, str, Any]] | None = None,
            rows_per_part: int | None = None,
        ) -> None:
            self._filters = check_filters(filters)
            self._columns = list(columns) if columns is not None else None
            files = expand_paths(paths)
            self._parts = plan(files, self._columns, self._filters, rows_per_part=rows_per_part)
            first = self._parts[0].path if self._parts else files[0]
            self._schema = TableFile(first).read(self._columns, slice(0, 0), to="arrow").schema

        def get_name(self) -> str:
            return "kompakt"

        def estimate_inmemory_data_size(self) -> int | None:
            return sum(p.bytes for p in self._parts)

        def get_read_tasks(self, parallelism: int, **_: Any) -> list[Any]:
            # Parts in order, dealt into at most `parallelism` tasks of neighbouring parts.
            parts, n = self._parts, max(1, min(parallelism, len(self._parts)))
            tasks = []
            for i in range(n):
                group = parts[i * len(parts) // n : (i + 1) * len(parts) // n]
                if not group:
                    continue
                rows = None if self._filters else sum(b - a for p in group for a, b in p.row_ranges())
                metadata = BlockMetadata(
                    num_rows=rows,
                    size_bytes=sum(p.bytes for p in group),
                    exec_stats=None,
                    input_files=tuple(dict.fromkeys(p.path for p in group)),
                )
                read = functools.partial(read_tables, group, self._columns, self._filters)
                tasks.append(ReadTask(read, metadata, schema=self._schema))
            return tasks

    return _KompaktDatasource


def read_table(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    columns: Sequence[str] | None = None,
    filters: Sequence[tuple[str, str, Any]] | None = None,
    *,
    rows_per_part: int | None = None,
    **read_args: Any,
) -> Any:
    """A Ray Dataset over table files (``paths``, ``columns``, ``filters`` and
    ``rows_per_part`` as for ``kompakt.dask.read_table``): only ``columns`` are read, filters
    skip the row groups that cannot match (by a file's first sort key and by the row-group
    statistics) and are then applied to the rows read. ``read_args`` go to
    ``ray.data.read_datasource`` (``override_num_blocks=``, ``ray_remote_args=``, ...). Files
    are opened by Ray's workers, by path or URL, so every machine of the cluster must reach
    them (and for ``s3://``, have the AWS settings)."""
    data = require("ray.data", "ray", "kompakt.ray.read_table")
    return data.read_datasource(datasource(paths, columns, filters, rows_per_part=rows_per_part), **read_args)


def datasource(
    paths: str | os.PathLike | Iterable[str | os.PathLike],
    columns: Sequence[str] | None = None,
    filters: Sequence[tuple[str, str, Any]] | None = None,
    *,
    rows_per_part: int | None = None,
) -> Any:
    """The ``ray.data.Datasource`` behind :func:`read_table`."""
    return _datasource_class()(paths, columns, filters, rows_per_part)
