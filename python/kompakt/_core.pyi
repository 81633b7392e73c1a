"""Type stubs of the native module kompakt._core (crates/kompakt-python)."""

import os
from pathlib import Path
from typing import IO, Any, Literal, Self, final

from kompakt._errors import CorruptError as CorruptError

_Path = str | os.PathLike[str]
_Buffer = Any  # any object with the buffer protocol

__all__ = [
    "CorruptError",
    "bench",
    "__version__",
    "FORMAT_VERSION",
    "DEFAULT_LEVEL",
    "DEFAULT_BLOCK_SIZE",
    "FILTER_OPS",
    "FileWriter",
    "FileReader",
    "Store",
    "Pending",
    "Hasher",
    "Table",
    "is_plain",
    "write_table",
    "append_table",
    "list_objects",
    "table_files",
    "compress",
    "decompress",
    "Dictionary",
    "train_dictionary",
    "resolve_threads",
    "file_kind",
    "run_cli",
]

__version__: str
FORMAT_VERSION: str
DEFAULT_LEVEL: int
# Whether the allocator put large buffers on huge pages (None: MIMALLOC_ALLOW_THP decided).
_huge_pages: bool | None
DEFAULT_BLOCK_SIZE: int
FILTER_OPS: tuple[str, ...]

def compress(
    data: _Buffer,
    *,
    codec: str | None = None,
    level: int | None = None,
    threads: int | None = None,
    typesize: int | None = None,
    filter: str | None = None,
    block_size: int | None = None,
    dictionary: Dictionary | None = None,
) -> bytes: ...
def decompress(data: _Buffer, *, threads: int | None = None, dictionaries: list[Dictionary] = ...) -> bytes: ...

@final
class Dictionary:
    """A zstd dictionary, named by the hash of its bytes."""

    def __new__(cls, data: _Buffer) -> Dictionary: ...
    @property
    def id(self) -> str: ...
    @staticmethod
    def load(path: _Path) -> Dictionary: ...
    def save(self, path: _Path) -> None: ...
    def __bytes__(self) -> bytes: ...
    def __len__(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[Dictionary], tuple[bytes]]: ...

def train_dictionary(samples: list[_Buffer], *, size: int) -> Dictionary: ...
def bench(
    data: _Buffer,
    *,
    name: str,
    codecs: str,
    filters: list[str],
    block_sizes: list[int],
    threads: list[int],
    typesize: int,
    seconds: float,
    unverified: bool,
    sink_speed: str | None = None,
    disk: str | os.PathLike[str] | None = None,
    disk_bytes: int | None = None,
    recommend: bool = False,
    min_speed: str = "100MB/s",
    plot: str | os.PathLike[str] | None = None,
) -> str:
    """The codec lab's rows (and recommendations) as JSON; see ``kompakt.bench``."""

@final
class FileWriter:
    def __new__(
        cls,
        target: _Path | IO[bytes] | None = None,
        *,
        codec: str | None = None,
        level: int | None = None,
        threads: int | None = None,
        typesize: int | None = None,
        filter: str | None = None,
        block_size: int | None = None,
        adapt: bool = False,
        dictionary: Dictionary | None = None,
        sync: Literal["always", "none"] | None = None,
    ) -> Self: ...
    def add_stream(
        self,
        *,
        codec: str | None = None,
        level: int | None = None,
        typesize: int | None = None,
        filter: str | None = None,
    ) -> int: ...
    def write(self, stream: int, data: _Buffer) -> int: ...
    def finish_stream(self, stream: int) -> None: ...
    def set_metadata(self, metadata: bytes) -> None: ...
    @property
    def bytes_in(self) -> int: ...
    @property
    def adapts(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> bytes | None: ...
    def abort(self) -> None: ...

@final
class FileReader:
    def __new__(
        cls,
        source: _Path | IO[bytes] | _Buffer,
        *,
        threads: int | None = None,
        verify_checksums: bool = True,
        dictionaries: list[Dictionary] = ...,
    ) -> Self: ...
    def stream_lengths(self) -> list[int]: ...
    def file_size(self) -> int: ...
    def metadata(self) -> bytes: ...
    def read_stream(self, stream: int) -> bytes: ...
    def read_stream_into(self, stream: int, buffer: _Buffer) -> None: ...
    def read_into(self, stream: int, pos: int, buffer: _Buffer) -> int: ...
    def read(self, stream: int, pos: int, size: int) -> bytes: ...
    def info(self) -> dict[str, Any]: ...
    def verify(self) -> dict[str, int]: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...

@final
class Pending:
    @property
    def hash(self) -> str: ...

@final
class Store:
    def __new__(
        cls,
        path: _Path,
        *,
        codec: str | None = None,
        level: int | None = None,
        create: bool = True,
        durable: bool = False,
        threads: int | None = None,
        adapt: bool | None = None,
        dictionaries: bool = True,
        dictionary_max_slowdown: float | None = ...,
        cache_dir: _Path | None = None,
        grace: float | None = None,
        cache_dir_limit: float | None = None,
        multipart_threshold: int | None = None,
    ) -> Self: ...
    @property
    def path(self) -> Path | str: ...
    @property
    def cache_dir(self) -> Path | None: ...
    @property
    def codec(self) -> str: ...
    @property
    def adapts(self) -> bool: ...
    def set_default_codec(self, codec: str | None = None, level: int | None = None) -> None: ...
    def put(
        self,
        namespace: str,
        key: str,
        streams: list[_Buffer],
        metadata: bytes,
        *,
        codec: str | None = None,
        level: int | None = None,
    ) -> str: ...
    def prepare(
        self,
        streams: list[_Buffer],
        metadata: bytes,
        *,
        namespace: str | None = None,
        codec: str | None = None,
        level: int | None = None,
    ) -> Pending: ...
    def dictionary(self, namespace: str) -> Dictionary | None: ...
    def train_dictionary(
        self, namespace: str, samples: list[_Buffer], *, max_slowdown: float | None = ...
    ) -> dict[str, Any]: ...
    def writer(self, *, codec: str | None = None, level: int | None = None) -> FileWriter: ...
    def finish(self, writer: FileWriter) -> Pending: ...
    def commit(self, namespace: str, items: list[tuple[str, Pending]]) -> None: ...
    def fetch(
        self, namespace: str, key: str, *, threads: int | None = None
    ) -> None | tuple[str, bytes, bytes] | tuple[str, FileReader]: ...
    def hash(self, namespace: str, key: str) -> str | None: ...
    def exists(self, namespace: str, key: str) -> bool: ...
    def delete(self, namespace: str, key: str) -> bool: ...
    def clear(self, namespace: str | None = None) -> int: ...
    def keys(self, namespace: str) -> list[str]: ...
    def len(self, namespace: str) -> int: ...
    def namespaces(self) -> list[tuple[str, int]]: ...
    def info(self) -> dict[str, Any]: ...
    def reduce_size(self, max_bytes: int) -> dict[str, int]: ...
    def gc(self) -> dict[str, Any]: ...
    def verify(self) -> dict[str, Any]: ...

def is_plain(value: Any) -> bool: ...

@final
class Hasher:
    def __new__(cls) -> Self: ...
    def write(self, data: _Buffer) -> int: ...
    def hexdigest(self) -> str: ...

def write_table(
    data: Any,
    path: _Path,
    *,
    codec: str | None = None,
    level: int | None = None,
    threads: int | None = None,
    rows_per_group: int | None = None,
    metadata: dict[str, str] | None = None,
    sorted_by: list[tuple[str, bool, bool]] | None = None,
    statistics: bool = True,
    sync: Literal["always", "none"] | None = None,
) -> int: ...
def list_objects(url: str) -> list[tuple[str, int]]: ...
def table_files(location: str) -> list[str]: ...
def append_table(
    data: Any,
    path: _Path,
    *,
    codec: str | None = None,
    level: int | None = None,
    threads: int | None = None,
    metadata: dict[str, str] | None = None,
) -> int: ...

@final
class Table:
    def __new__(cls, path: _Path) -> Self: ...
    @property
    def schema(self) -> Any: ...
    @property
    def num_rows(self) -> int: ...
    @property
    def rows_per_group(self) -> int: ...
    @property
    def path(self) -> Path: ...
    @property
    def file_size(self) -> int: ...
    @property
    def metadata(self) -> dict[str, str]: ...
    @property
    def sorted_by(self) -> list[tuple[str, bool, bool]]: ...
    def verify_rows(self, threads: int | None = None) -> int: ...
    def set_max_size(self, max_size: int) -> None: ...
    @property
    def max_size(self) -> int: ...
    def traffic(self) -> tuple[int, int] | None: ...
    def statistics(self, column: int) -> Any | None: ...
    def column_indices(self, names: list[str]) -> list[int]: ...
    def read(
        self, columns: list[int] | None = None, start: int = 0, stop: int | None = None, threads: int | None = None
    ) -> Any: ...
    def read_groups(
        self,
        columns: list[int] | None = None,
        start: int = 0,
        stop: int | None = None,
        threads: int | None = None,
        strings: str = "stored",
    ) -> tuple[Any | None, list[tuple[list[int], Any]]]: ...
    def take(self, indices: bytes, columns: list[int] | None = None, threads: int | None = None) -> Any: ...
    def may_have_nulls(self, column: int, start: int, stop: int) -> bool: ...
    def read_into(self, column: int, start: int, stop: int, out: _Buffer, threads: int | None = None) -> bool: ...
    def summary(self) -> list[dict[str, Any]]: ...
    def plan_rows(
        self, filters: list[tuple[str, str, Any]], start: int = 0, stop: int | None = None
    ) -> list[tuple[int, int]]:
        """The row ranges of rows ``start:stop`` that can hold a row passing every filter
        ``(column, op, values)``, the values a ``pyarrow.Array`` of the column's type."""

def run_cli(args: list[str | os.PathLike[str]]) -> int:
    """Runs the ``kompakt`` command line on ``args`` (the program's name first); returns the
    exit code."""

def file_kind(metadata: bytes) -> str:
    """What a file with this footer metadata holds: "plain", "table", "python-object" or
    "r-object" (JSON object descriptions read as JSON, as every front end reads them)."""

def resolve_threads(threads: int | None = None) -> int:
    """The number of threads ``threads=`` means: None or 0 for all available cores, at most 256."""
