"""Bytes in, bytes out; and descriptions of files."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import IO, Any, Union

from kompakt import _core
from kompakt._core import Dictionary
from kompakt._errors import CorruptError

Buffer = Any  # bytes, bytearray, memoryview, numpy array: anything with the buffer protocol
Source = Union[str, "os.PathLike[str]", IO[bytes]]
#: A ``kompakt.Dictionary``, its bytes, or the path of a ``.kpkd`` file.
DictionaryLike = Union[Dictionary, Buffer, str, "os.PathLike[str]"]

#: zstd's default dictionary size (110 KiB): what ``train_dictionary`` aims for.
DEFAULT_DICTIONARY_SIZE = 110 * 1024


def _dictionary(value: DictionaryLike) -> Dictionary:
    if isinstance(value, Dictionary):
        return value
    if isinstance(value, (str, os.PathLike)):
        return Dictionary.load(value)
    return Dictionary(value)


def _dictionaries(value: DictionaryLike | Iterable[DictionaryLike] | None) -> list[Dictionary]:
    """A reader's ``dictionary=``: none, one, or a list or tuple of them."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [_dictionary(d) for d in value]
    return [_dictionary(value)]


def train_dictionary(samples: Iterable[Buffer], size: int = DEFAULT_DICTIONARY_SIZE) -> Dictionary:
    """Trains a zstd dictionary on ``samples`` (bytes-like objects: records, small pickles,
    JSON lines) for compressing many small values that look alike.

    ``size`` is the largest dictionary size in bytes. zstd wants about 100 times that much
    sample data, in at least a few dozen samples; with too little it raises
    ``kompakt.OptionError`` saying how much it got. Save it with ``d.save(path)`` (a ``.kpkd``
    file, which ``zstd -D`` also reads) and read it back with ``kompakt.Dictionary.load(path)``.

    >>> import json, kompakt
    >>> rows = [json.dumps({"user": i, "plan": "team", "active": True}).encode() for i in range(2000)]
    >>> d = kompakt.train_dictionary(rows, size=2048)
    >>> packed = kompakt.compress(rows[7], dictionary=d)
    >>> kompakt.decompress(packed, dictionary=d) == rows[7]
    True
    """
    return _core.train_dictionary(list(samples), size=size)


def compress(
    data: Buffer,
    codec: str | None = None,
    level: int | None = None,
    threads: int | None = None,
    typesize: int | None = None,
    *,
    filter: str | None = None,
    block_size: int | None = None,
    dictionary: DictionaryLike | None = None,
) -> bytes:
    """Compresses a bytes-like object into a complete kompakt file, returned as bytes.

    ``codec`` is ``"none"``, ``"lz4"``, ``"lz4hc"``, ``"zstd"``, ``"gzip"``, ``"zlib"`` or
    ``"auto"``, optionally with its own level (``"zstd:9"``, ``"lz4hc:12"``). Without a codec,
    ``level`` is the unified level 0-100 (0 stores raw, 1-10 LZ4, 11-20 LZ4-HC, 21-100 ZSTD;
    default 21, i.e. zstd:1); with a bare codec name it is that codec's own level.
    ``typesize`` (default: the buffer's item size, 8 for float64) enables the byte shuffle
    that makes typed numbers compress; ``filter`` is ``"shuffle"`` (default), ``"delta"`` or
    ``"none"``. ``threads`` defaults to all cores; the output is the same for any count.
    ``dictionary`` (a ``kompakt.Dictionary``, its bytes or a ``.kpkd`` path) compresses with
    that zstd dictionary (codec zstd, default ``zstd:3``); ``decompress`` then needs it too.
    The GIL is released while compressing.

    >>> import kompakt
    >>> packed = kompakt.compress(b"abc" * 100_000, codec="zstd", level=9)
    >>> len(packed) < 1000
    True
    >>> kompakt.decompress(packed) == b"abc" * 100_000
    True
    """
    return _core.compress(
        data,
        codec=codec,
        level=level,
        threads=threads,
        typesize=typesize,
        filter=filter,
        block_size=block_size,
        dictionary=None if dictionary is None else _dictionary(dictionary),
    )


def decompress(
    data: Buffer,
    threads: int | None = None,
    *,
    dictionary: DictionaryLike | Iterable[DictionaryLike] | None = None,
) -> bytes:
    """Decompresses a kompakt file held in memory (as written by ``compress`` or by
    ``kompakt compress``) and returns its bytes.

    ``dictionary``: the dictionary the data was compressed with, or a list or tuple of
    candidates (each block names its own by id). Without the one it needs, raises
    ``kompakt.DictionaryError`` naming it (``.dictionary_id``). Raises
    ``kompakt.CorruptError`` (a ``ValueError``) if the data is damaged or truncated.

    >>> import kompakt
    >>> kompakt.decompress(kompakt.compress(b"hello"))
    b'hello'
    """
    return _core.decompress(data, threads=threads, dictionaries=_dictionaries(dictionary))


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

    Only the index is read (and, in a file written with a dictionary, the 8-byte dictionary
    id of each block, up to 16 distinct: ``"dictionaries"``), so this is fast for any size.

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


def verify(
    file: Source | Buffer,
    threads: int | None = None,
    *,
    dictionary: DictionaryLike | Iterable[DictionaryLike] | None = None,
) -> dict[str, int]:
    """Decodes every block of a file and checks every checksum, like ``kompakt verify``.

    Returns the counts of blocks and bytes checked; raises ``kompakt.CorruptError`` at the
    first damaged block, and ``kompakt.DictionaryError`` when a block needs a dictionary not
    given as ``dictionary=`` (as for ``decompress``).

    >>> import kompakt
    >>> kompakt.verify(kompakt.compress(bytes(10_000)))["raw_size"]
    10000
    """
    reader = _core.FileReader(file, threads=threads, dictionaries=_dictionaries(dictionary))
    try:
        return reader.verify()
    finally:
        reader.close()
