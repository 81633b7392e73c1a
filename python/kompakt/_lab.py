"""The codec lab: which codec, level, filter and block size suit this data on this machine."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kompakt import _core
from kompakt._optional import require

if TYPE_CHECKING:
    import pandas

DEFAULT_CODECS = "none,lz4,lz4hc:9,zstd:-3,zstd:1,zstd:3,zstd:9,gzip:6,auto"


def _items(value: str | Iterable[str]) -> list[str]:
    parts = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    return [p.strip() for p in parts if p.strip()]


def _speed(value: str | float | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return f"{float(value)}MB/s"


def bench(
    data: Any,
    codecs: str | Iterable[str] = DEFAULT_CODECS,
    *,
    filters: str | Iterable[str] = "shuffle",
    block_sizes: int | Iterable[int] = 1 << 20,
    threads: int | Iterable[int] = (1, 0),
    typesize: int | None = None,
    seconds: float = 1.0,
    unverified: bool = False,
    sink_speed: str | float | None = None,
    disk: str | os.PathLike[str] | None = None,
    disk_bytes: int = 256 << 20,
    recommend: bool = False,
    min_speed: str | float = "100MB/s",
    plot: str | os.PathLike[str] | None = None,
) -> pandas.DataFrame:
    """Measures codecs on ``data`` (a bytes-like object, or the path of a file to read) in
    memory, as ``kompakt bench`` does, and returns one row per configuration as a pandas
    DataFrame.

    ``codecs`` is a list or a comma-separated string of codec specs, unified levels and ranges
    of either: ``"zstd:1-9,lz4hc:1-12:3,lz4,auto"``, ``"0-100:10"``. Every codec is measured
    with every filter, block size (bytes) and thread count (0: all cores). Each figure is the
    best of the runs made in ``seconds`` (at least two); decompression checks every checksum,
    and ``unverified=True`` adds a figure without the checks.

    The columns are kompakt's (``codec`` is the spec to pass as ``codec=``, ``ratio``,
    ``compress_mb_s``, ``decompress_mb_s``) and the squash benchmark's (``dataset``,
    ``codec_name``, ``level``, ``compress_cpu``, ``compress_wall``, ``decompress_cpu``,
    ``decompress_wall`` in seconds), so results from several machines combine. The first row,
    ``memcpy``, is the yardstick.

    ``sink_speed`` (``"200MB/s"``, or a number of MB/s) is the speed of the disk or network the
    data goes to: ``write_mb_s`` and ``read_mb_s`` are then the throughput through it (the
    slower of the codec and the sink, which carries the compressed bytes). ``disk`` (a folder,
    or a file in one) measures the disk holding it instead: ``disk_bytes`` are written there
    (fsync included), dropped from the page cache, read back and removed; writes then go
    through at its write speed, reads at its read speed (``sink_write_mb_s``,
    ``sink_read_mb_s``), and ``df.attrs["disk"]`` has the figures. With
    ``recommend=True``, ``df.attrs["recommendations"]`` lists the configuration for each goal:
    the fastest write, the smallest file written at ``min_speed`` or faster, the fastest read.
    ``plot`` (a ``.png`` or ``.svg`` path) draws ratio against compression and decompression
    speed, one line per codec through its levels (``kompakt bench --plot``).

    >>> import kompakt
    >>> df = kompakt.bench(b"kompakt " * 100_000, ["lz4", "zstd:1-3"], threads=1, seconds=0)
    >>> list(df["codec"])
    ['memcpy', 'lz4', 'zstd:1', 'zstd:2', 'zstd:3']
    >>> bool((df["ratio"] > 100).iloc[1:].all())
    True
    """
    pandas = require("pandas", "pandas", "kompakt.bench")
    if isinstance(data, (str, os.PathLike)):
        name = os.fspath(data)
        with open(name, "rb") as f:
            data = f.read()
    else:
        name = "<data>"
    sizes = [block_sizes] if isinstance(block_sizes, int) else [int(b) for b in block_sizes]
    counts = [threads] if isinstance(threads, int) else [int(t) for t in threads]
    if typesize is None:
        typesize = memoryview(data).itemsize  # 8 for float64 arrays, as compress() does
    out = json.loads(
        _core.bench(
            data,
            name=name,
            codecs=",".join(_items(codecs)),
            filters=_items(filters),
            block_sizes=sizes,
            threads=counts,
            typesize=max(1, min(255, int(typesize))),
            seconds=float(seconds),
            unverified=unverified,
            sink_speed=_speed(sink_speed),
            disk=disk,
            disk_bytes=int(disk_bytes),
            recommend=recommend,
            min_speed=_speed(min_speed) or "100MB/s",
            plot=plot,
        )
    )
    df = pandas.DataFrame(out["rows"])
    if recommend:
        df.attrs["recommendations"] = out["recommendations"]
    if disk is not None:
        df.attrs["disk"] = out["disk"]
    return df
