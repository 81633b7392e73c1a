"""kompakt: fast, compressed, multi-threaded storage for data-science data.

Save and load any Python object; large buffers (numpy arrays, pandas columns, Arrow buffers)
go from their memory straight into the compressor and back, on all cores::

    >>> import kompakt, numpy
    >>> x = numpy.arange(1_000_000)
    >>> blob = kompakt.dumps({"x": x, "note": "sorted"})
    >>> len(blob) < x.nbytes // 10
    True
    >>> bool((kompakt.loads(blob)["x"] == x).all())
    True

Files: ``kompakt.save(obj, path)`` / ``kompakt.load(path)``; bytes: ``kompakt.compress`` /
``kompakt.decompress``; streaming: ``kompakt.open(path, "wb")``; ``kompakt.info(path)``
describes a file as ``kompakt inspect`` does; ``kompakt.Store(path)`` is a content-addressed
cache of objects with ``memoize``; ``kompakt.write_table(df, path)`` /
``kompakt.read_table(path, columns, rows)`` store data frames column by column, with random
access to columns and row ranges (``kompakt.TableFile``). The file format is specified in docs/FORMAT.md;
files are readable by the ``kompakt`` command line and the reverse.

Loading runs pickle: only load files you trust, or pass ``trusted=False``.
"""

from kompakt._core import DEFAULT_BLOCK_SIZE, DEFAULT_LEVEL, FORMAT_VERSION, Dictionary, __version__
from kompakt._data import compress, decompress, info, train_dictionary, verify
from kompakt._errors import (
    CorruptError,
    DictionaryError,
    KompaktError,
    LimitError,
    OptionError,
    StoreError,
    UsageError,
)
from kompakt._file import KompaktFile, open
from kompakt._lab import bench
from kompakt._objects import dump, dumps, load, loads, save
from kompakt._plan import read_batches
from kompakt._store import Store, hash_value, memoize
from kompakt._table import TableFile, append_table, read_table, write_table

__all__ = [
    "CorruptError",
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_LEVEL",
    "Dictionary",
    "DictionaryError",
    "FORMAT_VERSION",
    "KompaktError",
    "LimitError",
    "KompaktFile",
    "OptionError",
    "Store",
    "StoreError",
    "TableFile",
    "UsageError",
    "__version__",
    "append_table",
    "bench",
    "compress",
    "decompress",
    "dump",
    "dumps",
    "hash_value",
    "info",
    "load",
    "loads",
    "memoize",
    "open",
    "read_batches",
    "read_table",
    "save",
    "train_dictionary",
    "verify",
    "write_table",
]
