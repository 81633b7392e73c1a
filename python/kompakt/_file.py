"""``kompakt.open``: compressed files as standard binary (or text) file objects."""

from __future__ import annotations

import io
import os
import warnings
from typing import IO, Any, Union

from kompakt import _core
from kompakt._data import DictionaryLike, _dictionaries, _dictionary
from kompakt._errors import OptionError, UsageError

Target = Union[str, "os.PathLike[str]", IO[bytes]]

_MODES = ("rb", "wb", "r", "w", "rt", "wt")
_LINE_CHUNK = 8192


class KompaktFile(io.BufferedIOBase):
    """A binary file object over one stream of a kompakt file; made by ``kompakt.open``.

    In ``"wb"`` mode bytes are compressed as they are written (in parallel, in blocks); the
    file is complete only after ``close()``. Leaving a ``with`` block through an exception
    discards it, and a path keeps what it held before. In ``"rb"`` mode the file is seekable:
    a seek costs nothing and a read decodes only the blocks it covers.
    """

    def __init__(
        self,
        file: Target,
        mode: str = "rb",
        *,
        codec: str | None = None,
        level: int | None = None,
        threads: int | None = None,
        typesize: int | None = None,
        filter: str | None = None,
        block_size: int | None = None,
        stream: int = 0,
        dictionary: DictionaryLike | list[DictionaryLike] | None = None,
    ) -> None:
        super().__init__()
        if mode not in ("rb", "wb"):
            raise OptionError(f"invalid mode {mode!r}: KompaktFile takes 'rb' or 'wb' (kompakt.open also 'rt', 'wt')")
        self.mode = mode
        self.name = os.fspath(file) if isinstance(file, (str, os.PathLike)) else getattr(file, "name", None)
        self._pos = 0
        self._stream = stream
        self._writer: _core.FileWriter | None = None
        self._reader: _core.FileReader | None = None
        if mode == "wb":
            if isinstance(dictionary, (list, tuple)):
                raise OptionError("writing takes one dictionary (a list of them is for reading)")
            self._writer = _core.FileWriter(
                file,
                codec=codec,
                level=level,
                threads=threads,
                typesize=typesize,
                filter=filter,
                block_size=block_size,
                dictionary=None if dictionary is None else _dictionary(dictionary),
            )
            self._writer.add_stream()
        else:
            given = [
                k
                for k, v in (
                    ("codec", codec),
                    ("level", level),
                    ("typesize", typesize),
                    ("filter", filter),
                    ("block_size", block_size),
                )
                if v is not None
            ]
            if given:
                raise OptionError(f"{', '.join(given)} only apply when writing (mode 'wb')")
            self._reader = _core.FileReader(file, threads=threads, dictionaries=_dictionaries(dictionary))
            lengths = self._reader.stream_lengths()
            if not 0 <= stream < max(len(lengths), 1):
                raise OptionError(f"stream {stream} does not exist; the file has {len(lengths)} stream(s)")
            self._length = lengths[stream] if lengths else 0

    @classmethod
    def _over_reader(cls, reader: _core.FileReader, stream: int, length: int) -> KompaktFile:
        """A read-only view of one stream of an already open reader (used by ``load``)."""
        self = cls.__new__(cls)
        io.BufferedIOBase.__init__(self)
        self.mode, self.name = "rb", None
        self._pos, self._stream, self._length = 0, stream, length
        self._writer, self._reader = None, reader
        self._shared_reader = True
        return self

    # -- state ---------------------------------------------------------------------------

    def readable(self) -> bool:
        self._check_open()
        return self._reader is not None

    def writable(self) -> bool:
        self._check_open()
        return self._writer is not None

    def seekable(self) -> bool:
        self._check_open()
        return self._reader is not None

    def _check_open(self) -> None:
        if self.closed:
            # (io's message; a UsageError is a ValueError, as io's own error for this is.)
            raise UsageError("I/O operation on closed file")

    def _need_reader(self) -> _core.FileReader:
        self._check_open()
        if self._reader is None:
            raise io.UnsupportedOperation("not readable: the file was opened for writing")
        return self._reader

    def _need_writer(self) -> _core.FileWriter:
        self._check_open()
        if self._writer is None:
            raise io.UnsupportedOperation("not writable: the file was opened for reading")
        return self._writer

    def close(self) -> None:
        """Completes the file (write mode: index written, renamed into place; fsynced when KOMPAKT_SYNC=always)."""
        if self.closed:
            return
        try:
            if self._writer is not None:
                self._writer.close()
            elif self._reader is not None and not getattr(self, "_shared_reader", False):
                self._reader.close()
        finally:
            super().close()

    def abort(self) -> None:
        """Write mode: discards everything written; a path keeps its previous content."""
        if self._writer is not None and not self.closed:
            self._writer.abort()
        super().close()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None and self._writer is not None:
            self.abort()
        else:
            self.close()

    def __del__(self) -> None:
        # An unclosed writer was abandoned: never complete a file nobody closed.
        writer = getattr(self, "_writer", None)
        if writer is not None and not writer.closed:
            warnings.warn(
                f"kompakt file {self.name!r} was never closed: discarded (close it, or use a with block)",
                ResourceWarning,
                stacklevel=2,
            )
            writer.abort()
        reader = getattr(self, "_reader", None)
        if reader is not None and not reader.closed and not getattr(self, "_shared_reader", False):
            reader.close()

    # -- writing ---------------------------------------------------------------------------

    def write(self, data: Any) -> int:
        """Compresses ``data`` (any bytes-like object); returns its length in bytes."""
        n = self._need_writer().write(0, data)
        self._pos += n
        return n

    def flush(self) -> None:
        # Blocks are written when full; a partial block waits for more data or close().
        self._check_open()

    # -- reading ---------------------------------------------------------------------------

    def readinto(self, buffer: Any) -> int:
        reader = self._need_reader()
        if self._pos >= self._length:
            return 0
        n = reader.read_into(self._stream, self._pos, buffer)
        self._pos += n
        return n

    readinto1 = readinto

    def read(self, size: int | None = -1) -> bytes:
        reader = self._need_reader()
        left = self._length - self._pos
        if left <= 0:
            return b""
        size = left if size is None or size < 0 else min(size, left)
        data = reader.read(self._stream, self._pos, size)
        self._pos += len(data)
        return data

    def read1(self, size: int = -1) -> bytes:
        return self.read(size)

    def readline(self, size: int | None = -1) -> bytes:
        reader = self._need_reader()
        limit = self._length - self._pos if size is None or size < 0 else min(size, self._length - self._pos)
        parts = []
        got = 0
        while got < limit:
            chunk = reader.read(self._stream, self._pos + got, min(_LINE_CHUNK, limit - got))
            if not chunk:
                break
            end = chunk.find(b"\n")
            if end >= 0:
                chunk = chunk[: end + 1]
            parts.append(chunk)
            got += len(chunk)
            if end >= 0:
                break
        self._pos += got
        return b"".join(parts)

    def peek(self, size: int = 0) -> bytes:
        reader = self._need_reader()
        left = self._length - self._pos
        if left <= 0:
            return b""
        return reader.read(self._stream, self._pos, min(size if size > 0 else _LINE_CHUNK, left))

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._check_open()
        if self._reader is None:
            raise io.UnsupportedOperation("not seekable: a kompakt file is written front to back")
        if whence == io.SEEK_SET:
            target = offset
        elif whence == io.SEEK_CUR:
            target = self._pos + offset
        elif whence == io.SEEK_END:
            target = self._length + offset
        else:
            raise OptionError(f"invalid whence {whence!r}: use 0 (SEEK_SET), 1 (SEEK_CUR) or 2 (SEEK_END)")
        if target < 0:
            raise OptionError(f"negative seek position {target}")
        self._pos = target
        return target

    def tell(self) -> int:
        self._check_open()
        return self._pos

    def __len__(self) -> int:
        """Decoded length of the stream (read mode) or bytes written so far (write mode)."""
        return self._length if self._reader is not None else self._pos


def open(
    file: Target,
    mode: str = "rb",
    *,
    codec: str | None = None,
    level: int | None = None,
    threads: int | None = None,
    typesize: int | None = None,
    filter: str | None = None,
    block_size: int | None = None,
    dictionary: DictionaryLike | list[DictionaryLike] | None = None,
    encoding: str | None = None,
    errors: str | None = None,
    newline: str | None = None,
) -> Any:
    """Opens a kompakt file as a file object that compresses while writing and reads with
    random access. Works wherever a binary file does: ``shutil.copyfileobj``,
    ``pickle.dump``, ``numpy.save``, ``pandas.DataFrame.to_csv``.

    ``file`` is a path (``str`` or ``os.PathLike``) or a binary file object (seekable for
    reading). ``mode`` is ``"rb"`` (default), ``"wb"``, or ``"rt"``/``"wt"`` for text (an
    ``io.TextIOWrapper``, with ``encoding``, ``errors`` and ``newline``). Writing to a path is
    atomic: the file appears, complete, at ``close()``; an exception inside a ``with`` block
    discards it. Write options are those of ``kompakt.compress``. ``dictionary`` (a
    ``kompakt.Dictionary``, its bytes or a ``.kpkd`` path; for reading also a list) compresses
    with a zstd dictionary, or gives the one(s) a file needs to be read.

    >>> import kompakt, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "log.kpk")
    >>> with kompakt.open(path, "wt") as f:
    ...     _ = f.write("first line\\nsecond line\\n")
    >>> with kompakt.open(path, "rt") as f:
    ...     f.readlines()
    ['first line\\n', 'second line\\n']
    >>> with kompakt.open(path) as f:
    ...     _ = f.seek(6)
    ...     f.read(4)
    b'line'
    """
    if mode not in _MODES:
        raise OptionError(f"invalid mode {mode!r}: use one of {', '.join(repr(m) for m in _MODES)}")
    binary_mode = "wb" if mode.startswith("w") else "rb"
    text = "b" not in mode
    if not text and (encoding is not None or errors is not None or newline is not None):
        raise OptionError("encoding, errors and newline apply to text modes ('rt', 'wt') only")
    raw = KompaktFile(
        file,
        binary_mode,
        codec=codec,
        level=level,
        threads=threads,
        typesize=typesize,
        filter=filter,
        block_size=block_size,
        dictionary=dictionary,
    )
    if not text:
        return raw
    return _TextFile(raw, encoding=encoding or "utf-8", errors=errors, newline=newline)


class _TextFile(io.TextIOWrapper):
    """Text over a KompaktFile that, like it, discards an abandoned or failed write."""

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        raw = self.buffer
        if exc_type is not None and not raw.closed and getattr(raw, "_writer", None) is not None:
            raw.abort()  # type: ignore[attr-defined]
        else:
            self.close()

    def __del__(self) -> None:
        buffer = getattr(self, "buffer", None)
        if buffer is not None and not buffer.closed:
            buffer.__del__()
