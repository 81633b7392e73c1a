"""``save``/``load``/``dumps``/``loads``: any Python object, large buffers without copies.

An object file holds the pickle (protocol 5) of the object in stream 0 and every large
out-of-band buffer (numpy arrays, pandas columns, Arrow buffers, ``pickle.PickleBuffer``) in
a stream of its own, compressed straight from the object's memory with the buffer's item
size as the shuffle element size. Loading allocates each buffer once, at its final size,
decodes into it in parallel, and hands the buffers to the unpickler. The footer's metadata
(JSON, ``{"kompakt": "python-pickle", ...}``) lists the streams; docs/FORMAT.md specifies it.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any, Literal, Union

from kompakt import _core
from kompakt._data import _object_metadata
from kompakt._errors import CorruptError, KompaktError, LimitError, OptionError, UsageError
from kompakt._file import KompaktFile
from kompakt._optional import check_data_package
from kompakt._safe import Refused, RestrictedUnpickler
from kompakt.rebuild import datetime_array, ndarray_subclass

Target = Union[str, "os.PathLike[str]", IO[bytes]]

OBJECT_FORMAT = "python-pickle"
OBJECT_VERSION = 1
# Buffers smaller than this stay inside the pickle: a stream of its own costs an index entry
# and compresses worse alone.
OUT_OF_BAND_MIN = 64 * 1024
# A pickle stream up to this size is decoded in one piece; larger ones are streamed to the
# unpickler so that no second copy of it exists.
WHOLE_PICKLE_MAX = 8 << 20
# trusted=False: an object may decode to at most this many times its file's size, and always
# to this much (see untrusted_limit).
UNTRUSTED_RATIO = 256
UNTRUSTED_MIN_LIMIT = 256 << 20


def _metadata(pickle_stream: int, buffers: list[dict[str, Any]]) -> bytes:
    meta = {
        "kompakt": OBJECT_FORMAT,
        "version": OBJECT_VERSION,
        "pickle": {"stream": pickle_stream, "protocol": 5},
        "buffers": buffers,
    }
    return json.dumps(meta, separators=(",", ":")).encode()


# The metadata of an object that is a pickle alone (no out-of-band buffer): the common case
# of small objects, recognised by comparing bytes.
PICKLE_ONLY_METADATA = _metadata(0, [])


class _ObjectEncoder:
    """Pickles an object into the streams of a kompakt file.

    With ``small_max`` > 0 the writer is opened only when needed: a pickle of at most
    ``small_max`` bytes with no large buffer stays in memory (``encode`` returns it), which
    is how the store writes a small value in one call.
    """

    def __init__(self, open_writer: Any, small_max: int = 0) -> None:
        self._open_writer = open_writer
        self._small_max = small_max
        self._chunks: list[bytes] = []
        self._size = 0
        self._buffers: list[dict[str, Any]] = []
        self.writer: Any = None
        self._stream = 0
        if small_max <= 0:
            self._open()

    def _open(self) -> None:
        self.writer = self._open_writer()
        self._stream = self.writer.add_stream(typesize=1, filter="none")
        for chunk in self._chunks:
            self.writer.write(self._stream, chunk)
        self._chunks = []

    def write(self, data: Any) -> int:
        if self.writer is None:
            n = memoryview(data).nbytes
            if self._size + n <= self._small_max:
                self._chunks.append(bytes(data))
                self._size += n
                return n
            self._open()
        return int(self.writer.write(self._stream, data))

    def _out_of_band(self, buffer: pickle.PickleBuffer) -> bool:
        view = memoryview(buffer)
        if view.nbytes < OUT_OF_BAND_MIN:
            return True  # in-band
        try:
            raw = buffer.raw()
        except BufferError:
            return True  # not contiguous: pickle copies it in-band
        if self.writer is None:
            self._open()
        itemsize = view.itemsize if 1 <= view.itemsize <= 255 else 1
        stream = self.writer.add_stream(typesize=itemsize, filter="auto")
        self.writer.write(stream, raw)
        self.writer.finish_stream(stream)
        self._buffers.append({"stream": stream, "itemsize": itemsize, "readonly": view.readonly})
        return False

    def encode(self, obj: Any) -> bytes | None:
        """Pickles ``obj``. Returns the pickle if it stayed in memory, else None (then
        ``writer`` holds the streams and metadata, ready to close)."""
        try:
            _Pickler(self, protocol=5, buffer_callback=self._out_of_band).dump(obj)
            if self.writer is None:
                return b"".join(self._chunks)
            self.writer.finish_stream(self._stream)
            self.writer.set_metadata(_metadata(self._stream, self._buffers))
            return None
        except BaseException:
            if self.writer is not None:
                self.writer.abort()
            raise


def _write_object(writer: _core.FileWriter, obj: Any) -> None:
    _ObjectEncoder(lambda: writer).encode(obj)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        # numpy pickles datetime64/timedelta64 arrays in-band, through a full copy (tobytes):
        # send their int64 view out of band instead.
        np = sys.modules.get("numpy")
        if (
            np is not None
            and type(obj) is np.ndarray
            and obj.dtype.kind in "mM"
            and obj.nbytes >= OUT_OF_BAND_MIN
            and (obj.flags.c_contiguous or obj.flags.f_contiguous)
        ):
            order = "C" if obj.flags.c_contiguous else "F"
            ints = obj.view(np.int64)
            return datetime_array, (pickle.PickleBuffer(ints), obj.dtype, obj.shape, order)
        # numpy also pickles ndarray subclasses in-band (np.memmap, say that of np.load's
        # mmap_mode, np.recarray): a full copy through the pickle. One that keeps ndarray's own
        # pickling loses nothing as a plain view of its data, sent out of band, and a view as
        # the subclass on load, which is what unpickling it would rebuild.
        if (
            np is not None
            and isinstance(obj, np.ndarray)
            and type(obj) is not np.ndarray
            and obj.nbytes >= OUT_OF_BAND_MIN
            and _pickles_as_ndarray(type(obj), np)
        ):
            return ndarray_subclass, (obj.view(np.ndarray), type(obj))
        return NotImplemented


def _pickles_as_ndarray(cls: type, np: Any) -> bool:
    return (
        cls.__reduce_ex__ is np.ndarray.__reduce_ex__
        and cls.__reduce__ is np.ndarray.__reduce__
        and cls.__setstate__ is np.ndarray.__setstate__
    )


# The names files written before kompakt.rebuild existed use: kept, so those files load.
def _subclass_array(array: Any, cls: type) -> Any:
    """Old name of :func:`kompakt.rebuild.ndarray_subclass`, named in older files."""
    return ndarray_subclass(array, cls)


def _time_array(buffer: Any, dtype: Any, shape: tuple[int, ...], order: str) -> Any:
    """Old name of :func:`kompakt.rebuild.datetime_array`, named in older files."""
    return datetime_array(buffer, dtype, shape, order)


def save(
    obj: Any,
    file: Target,
    *,
    codec: str | None = None,
    level: int | None = None,
    threads: int | None = None,
    adapt: bool = False,
    sync: Literal["always", "none"] | None = None,
) -> None:
    """Saves any picklable object to a kompakt file.

    ``file`` is a path (``str`` or ``os.PathLike``; written atomically: a temporary file
    renamed into place, so a failure, or a crash of the process, keeps what the path held
    before) or a binary file object.
    Large buffers (numpy arrays, pandas columns, Arrow buffers) are compressed straight from
    the object's memory, on ``threads`` threads (default: all cores), with the GIL released:
    memory use stays near the size of the object itself. ``codec``/``level`` are those of
    ``kompakt.compress``. ``adapt=True`` (a path only) compresses only as far as the disk
    leaves time for, as ``Store(adapt=True)`` does: the save takes about as long as writing
    the raw bytes, and the file's size depends on the disk's speed (Linux only).

    ``sync`` says what a crash of the *machine* (a power loss) may do to the file (a path
    only): ``"none"`` (the default, unless the environment variable ``KOMPAKT_SYNC`` says
    otherwise) renames it into place and lets the kernel write it back when it chooses, as
    ``pickle.dump`` and ``joblib.dump`` do: a machine crash soon after may leave the old file,
    none, or a damaged one (which ``load`` reports as damaged, never as another object).
    ``"always"`` fsyncs the file and its folder before returning: it then survives a power
    loss, for about a millisecond more per file.

    An object whose pickle is at most 64 KiB (no large buffer) is written as a compact file
    (format 3.0): 28 bytes more than its compressed pickle, where ``pickle.dump``'s file is
    the pickle itself.

    >>> import kompakt, numpy, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "result.kpk")
    >>> kompakt.save({"weights": numpy.ones((1000, 100)), "epoch": 7}, path)
    >>> kompakt.load(path)["weights"].shape
    (1000, 100)
    """
    writer = _core.FileWriter(file, codec=codec, level=level, threads=threads, adapt=bool(adapt), sync=sync)
    try:
        _write_object(writer, obj)
    except BaseException:
        writer.abort()
        raise
    writer.close()


def dumps(obj: Any, *, codec: str | None = None, level: int | None = None, threads: int | None = None) -> bytes:
    """Like ``save``, into bytes.

    >>> import kompakt
    >>> kompakt.loads(kompakt.dumps([1, "two", 3.0]))
    [1, 'two', 3.0]
    """
    writer = _core.FileWriter(None, codec=codec, level=level, threads=threads)
    try:
        _write_object(writer, obj)
    except BaseException:
        writer.abort()
        raise
    data = writer.close()
    assert data is not None
    return data


def dump(obj: Any, file: Target, **options: Any) -> None:
    """Alias of ``save`` with pickle's argument order (``dump(obj, file)``)."""
    save(obj, file, **options)


def _empty(size: int) -> Any:
    """A writable buffer of ``size`` bytes, not zeroed (it is about to be overwritten)."""
    try:
        import numpy
    except ImportError:
        return bytearray(size)
    return numpy.empty(size, dtype=numpy.uint8)


def _check_layout(meta: dict[str, Any], lengths: list[int]) -> tuple[int, list[int]]:
    def bad(why: str) -> CorruptError:
        return CorruptError(f"the object description in this file is invalid: {why}")

    version = meta.get("version")
    if not isinstance(version, int) or version < 1:
        raise bad(f"version {version!r}")
    if version > OBJECT_VERSION:
        # A CorruptError, as the core's error for a newer format version is: damage as far as
        # this reader can tell, and the message says what else it may be.
        raise CorruptError(
            f"this object file has layout version {version}; this kompakt ({_core.__version__}) "
            f"reads up to {OBJECT_VERSION}: upgrade kompakt"
        )
    try:
        stream = meta["pickle"]["stream"]
        protocol = meta["pickle"]["protocol"]
        buffer_streams = [b["stream"] for b in meta["buffers"]]
    except (KeyError, TypeError) as e:
        raise bad(f"missing {e}") from None
    if not isinstance(protocol, int) or protocol > pickle.HIGHEST_PROTOCOL:
        raise CorruptError(f"the object was pickled with protocol {protocol!r}, which this Python cannot read")
    streams = [stream, *buffer_streams]
    if any(not isinstance(s, int) or not 0 <= s < len(lengths) for s in streams) or len(set(streams)) != len(streams):
        shown = ", ".join(map(repr, streams[:8])) + (f", ... ({len(streams)} in all)" if len(streams) > 8 else "")
        raise bad(f"stream ids [{shown}] for a file with {len(lengths)} streams")
    return stream, buffer_streams


def untrusted_limit(file_size: int) -> int:
    """The most an object file of ``file_size`` bytes may decode to with ``trusted=False``
    when no ``max_size`` is given: 256 times the file's size, and at least 256 MiB."""
    return max(UNTRUSTED_MIN_LIMIT, UNTRUSTED_RATIO * file_size)


def _read_object(reader: _core.FileReader, trusted: bool, max_size: int | None = None) -> Any:
    raw_meta = reader.metadata()
    meta = _object_metadata(raw_meta)
    # A sound file of another kind was given to the wrong call: a UsageError, as an object file
    # given to read_table is.
    kind = _core.file_kind(raw_meta) if meta is None else "python-object"
    if kind == "r-object":
        raise UsageError(
            "this kompakt file holds an R object saved by kompakt for R (kpk_save): "
            "read it in R with kompakt::kpk_read()"
        )
    if kind == "table":
        raise UsageError(
            "this kompakt file holds a table, not a saved object: "
            "read it with kompakt.read_table(...) or kompakt.TableFile(...)"
        )
    if meta is None:
        raise UsageError(
            "this kompakt file holds plain data, not a saved object: "
            "read it with kompakt.open(...) or kompakt.decompress(...)"
        )
    lengths = reader.stream_lengths()
    stream, buffer_streams = _check_layout(meta, lengths)
    if max_size is not None and (not isinstance(max_size, int) or isinstance(max_size, bool) or max_size < 0):
        raise OptionError(f"max_size must be a number of bytes (an int >= 0), got {max_size!r}")
    if max_size is not None or not trusted:
        limit = untrusted_limit(reader.file_size()) if max_size is None else max_size
        total = lengths[stream] + sum(lengths[s] for s in buffer_streams)
        if total > limit:
            how = "max_size" if max_size is not None else f"the limit of trusted=False ({_size(limit)} for this file)"
            raise LimitError(
                f"this object decodes to {_size(total)}, more than {how}: pass a larger max_size= to load it"
            )

    def buffers() -> Iterator[Any]:
        # Each buffer is decoded when the unpickler reaches it: the restricted unpickler has
        # checked every type before it, and a damaged buffer stops the load before the next
        # one is allocated.
        for s in buffer_streams:
            buffer = _empty(lengths[s])
            reader.read_stream_into(s, buffer)
            yield buffer

    def pickle_source() -> Any:
        if lengths[stream] <= WHOLE_PICKLE_MAX:
            return io.BytesIO(reader.read_stream(stream))
        return KompaktFile._over_reader(reader, stream, lengths[stream])

    return _unpickle(pickle_source, trusted, buffers())


def _unpickle(source: Callable[[], Any], trusted: bool, buffers: Any = None) -> Any:
    """Unpickles ``source()`` (called again for each pass over the pickle): with pickle's own
    unpickler when trusted, else with the restricted one once the opcodes were checked, a forged
    pickle raising ``CorruptError``. An object that needs numpy, pandas, pyarrow or polars where
    it is not installed says which extra installs it."""
    try:
        if trusted:
            return pickle.Unpickler(source(), buffers=buffers).load()
        _check_pickle_lengths(source())
        try:
            return RestrictedUnpickler(source(), buffers=buffers).load()
        except (Refused, KompaktError, MemoryError, OSError, RecursionError, ModuleNotFoundError):
            raise
        except Exception as e:  # noqa: BLE001 - a forged pickle fails in the unpickler or in the allowed types
            # A pickle whose opcodes are well formed but whose arguments are not what the types
            # it names take (a str where bytes go, an index past a tuple): the file is damaged,
            # whatever the type or the unpickler raised.
            raise CorruptError(f"the pickle in this object file is damaged: {type(e).__name__}: {e}") from None
    except ModuleNotFoundError as e:
        check_data_package(e, "loading this object")
        raise


def _check_pickle_lengths(source: Any) -> None:
    """Walks the opcodes of an untrusted pickle without running them: every length it declares
    (of bytes, a bytearray, a string) must be there, and every memo slot it fills must be the
    next one or an earlier one. The unpickler allocates a declared length before it reads (a
    bytearray8 of 2**40 bytes in a 100-byte pickle) and grows its memo to the largest slot
    named (LONG_BINPUT 2**31), so it must not see what the stream cannot back. Picklers number
    memo slots from 0 upwards, one per put, so valid pickles pass."""
    import pickletools

    try:
        for count, (op, arg, _) in enumerate(pickletools.genops(source)):
            if op.name in ("PUT", "BINPUT", "LONG_BINPUT") and not (isinstance(arg, int) and 0 <= arg <= count):
                raise CorruptError(f"{op.name} {arg} names a memo slot beyond the {count} opcodes before it")
    except Exception as e:  # noqa: BLE001 - genops reports short and unknown data as several types
        raise CorruptError(f"the pickle in this object file is damaged: {e}") from None


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def load(file: Target | Any, *, trusted: bool = True, threads: int | None = None, max_size: int | None = None) -> Any:
    """Loads an object saved by ``save`` or ``dumps``.

    ``file`` is a path, a seekable binary file object, or the bytes of a file. Buffers are
    decoded in parallel straight into their final memory; loaded numpy arrays are writeable.

    Loading runs pickle, which can execute code named in the file: load only files you trust.
    For others pass ``trusted=False``: only builtin data, datetime, numpy, pandas and pyarrow
    types may then appear, anything else raises ``pickle.UnpicklingError`` (a forged or damaged
    pickle raises ``kompakt.CorruptError``, like any damaged file); and the object may
    decode to at most ``max_size`` bytes, by default 256 times the file's size (at least
    256 MiB), or ``kompakt.LimitError`` is raised before anything is decoded. Pass a larger
    ``max_size`` for files that really are that compressible (``max_size`` also limits trusted
    loads when given).

    Raises ``kompakt.CorruptError`` (a ``ValueError``) if the file is damaged or truncated.

    >>> import kompakt, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "small.kpk")
    >>> kompakt.save({"a": 1}, path)
    >>> kompakt.load(path, trusted=False)
    {'a': 1}
    """
    if isinstance(file, bytes) and len(file) < 4096 and not file.startswith(b"KMPK") and os.path.exists(file):
        raise TypeError("kompakt.load reads bytes as a file's contents; pass a path as str or pathlib.Path")
    reader = _core.FileReader(file, threads=threads)
    try:
        return _read_object(reader, trusted, max_size)
    finally:
        reader.close()


def loads(data: Any, *, trusted: bool = True, threads: int | None = None, max_size: int | None = None) -> Any:
    """Loads an object from the bytes made by ``dumps`` (any bytes-like object).

    See ``load`` for ``trusted`` and ``max_size``.

    >>> import kompakt
    >>> kompakt.loads(kompakt.dumps({"x": (1, 2)}))
    {'x': (1, 2)}
    """
    reader = _core.FileReader(memoryview(data), threads=threads)
    try:
        return _read_object(reader, trusted, max_size)
    finally:
        reader.close()
