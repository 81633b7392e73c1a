"""Bytes in, bytes out; and descriptions of files."""

from __future__ import annotations

import json
import os
from typing import IO, Any, Union

from kompakt import _core
from kompakt._errors import CorruptError

Buffer = Any  # bytes, bytearray, memoryview, numpy array: anything with the buffer protocol
Source = Union[str, "os.PathLike[str]", IO[bytes]]


def compress(
    data: Buffer,
    codec: str | None = None,
    level: int | None = None,
    threads: int | None = None,
    typesize: int | None = None,
    *,
    filter: str | None = None,
    block_size: int | None = None,
) -> bytes:
    """Compresses a bytes-like object into a complete kompakt file, returned as bytes.

    ``codec`` is ``"none"``, ``"lz4"``, ``"lz4hc"``, ``"zstd"``, ``"gzip"``, ``"zlib"`` or
    ``"auto"``, optionally with its own level (``"zstd:9"``, ``"lz4hc:12"``). Without a codec,
    ``level`` is the unified level 0-100 (0 stores raw, 1-10 LZ4, 11-20 LZ4-HC, 21-100 ZSTD;
    default 21, i.e. zstd:1); with a bare codec name it is that codec's own level.
    ``typesize`` (default: the buffer's item size, 8 for float64) enables the byte shuffle
    that makes typed numbers compress; ``filter`` is ``"shuffle"`` (default), ``"delta"`` or
    ``"none"``. ``threads`` defaults to all cores; the output is the same for any count.
    The GIL is released while compressing.

    >>> import kompakt
    >>> packed = kompakt.compress(b"abc" * 100_000, codec="zstd", level=9)
    >>> len(packed) < 1000
    True
    >>> kompakt.decompress(packed) == b"abc" * 100_000
    True
    """
    return _core.compress(
        data, codec=codec, level=level, threads=threads, typesize=typesize, filter=filter, block_size=block_size
    )


def decompress(data: Buffer, threads: int | None = None) -> bytes:
    """Decompresses a kompakt file held in memory (as written by ``compress`` or by
    ``kompakt compress``) and returns its bytes.

    Raises ``kompakt.CorruptError`` (a ``ValueError``) if the data is damaged or truncated.

    >>> import kompakt
    >>> kompakt.decompress(kompakt.compress(b"hello"))
    b'hello'
    """
    return _core.decompress(data, threads=threads)


def _object_metadata(raw: bytes) -> dict[str, Any] | None:
    """The object description in a file's metadata, or None for plain data files."""
    if not raw.startswith(b"{"):
        return None
    try:
        meta = json.loads(raw)
    except ValueError:
        return None
    except RecursionError:
        raise CorruptError("the file's metadata is JSON nested too deeply to describe an object") from None
    if isinstance(meta, dict) and meta.get("kompakt") == "python-pickle":
        return meta
    return None


def info(file: Source | Buffer) -> dict[str, Any]:
    """Describes a kompakt file as ``kompakt inspect --json`` does: format version, file and
    raw sizes, ratio, and for every stream its sizes, blocks, codecs and filters. Files
    written by ``save``/``dumps`` also get ``"object"``: the saved object's layout.

    Only the index is read, so this is fast for any file size.

    >>> import kompakt
    >>> d = kompakt.info(kompakt.compress(bytes(10_000), codec="lz4"))
    >>> d["raw_size"], d["streams"][0]["codecs"]
    (10000, {'lz4': 1})
    """
    reader = _core.FileReader(file)
    try:
        out = reader.info()
        if isinstance(file, (str, os.PathLike)):
            out = {"file": os.fspath(file), **out}
        meta = _object_metadata(reader.metadata())
        if meta is not None:
            out["object"] = meta
        return out
    finally:
        reader.close()


def verify(file: Source | Buffer, threads: int | None = None) -> dict[str, int]:
    """Decodes every block of a file and checks every checksum, like ``kompakt verify``.

    Returns the counts of blocks and bytes checked; raises ``kompakt.CorruptError`` at the
    first damaged block.

    >>> import kompakt
    >>> kompakt.verify(kompakt.compress(bytes(10_000)))["raw_size"]
    10000
    """
    reader = _core.FileReader(file, threads=threads)
    try:
        return reader.verify()
    finally:
        reader.close()
