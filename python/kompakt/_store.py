"""``Store``: a content-addressed key-value cache of Python objects in a folder.

Values are saved as ``kompakt.save`` saves them (pickle 5, large buffers compressed straight
from memory) and addressed by the hash of their content, so equal values are stored once
(values of up to 1 KiB stored are kept beside their key: once per key). Small values live
inside the store's index (SQLite): setting or getting one costs microseconds, not a file per
value. The index, hashing and files are handled by the Rust core; this module serializes
values and adds the Python conveniences (mapping interface, an in-memory LRU cache,
``memoize``). The on-disk layout is in docs/FORMAT.md.
"""

from __future__ import annotations

import collections
import functools
import inspect
import io
import marshal
import os
import pickle
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Any, TypeVar, Union

from kompakt import _core
from kompakt._data import _object_metadata
from kompakt._errors import OptionError, UsageError
from kompakt._objects import (
    PICKLE_ONLY_METADATA,
    _check_layout,
    _ObjectEncoder,
    _read_object,
    _unpickle,
)
from kompakt._optional import check_data_package

__all__ = ["DEFAULT_NAMESPACE", "Store", "memoize"]

DEFAULT_NAMESPACE = "objects"
# A pickle up to this size (and with no buffer of 64 KiB or more) is built in memory and
# handed to the core in one call; larger values are streamed into the store.
SMALL_PICKLE_MAX = 1 << 20

_MISSING: Any = object()


def _plain_pickle(value: Any) -> bytes | None:
    """The pickle of ``value`` when it is a small plain value (builtin scalars, alone or in a
    small dict, list or tuple: see ``_core.is_plain``), else None. Such values pickle the same
    through pickle.dumps as through the object encoder, and skip the encoder's setup."""
    return pickle.dumps(value, protocol=5) if _core.is_plain(value) else None


def _small_pickle(value: Any, open_writer: Callable[[], Any]) -> tuple[bytes | None, _ObjectEncoder | None]:
    """Pickles ``value``: (the pickle, None) when it is small and buffer-free, else (None, an
    encoder whose writer holds the object)."""
    plain = _plain_pickle(value)
    if plain is not None:
        return plain, None
    encoder = _ObjectEncoder(open_writer, SMALL_PICKLE_MAX)
    small = encoder.encode(value)
    return small, (None if small is not None else encoder)


F = TypeVar("F", bound=Callable[..., Any])
PathLike = Union[str, "os.PathLike[str]"]


class Store(MutableMapping[str, Any]):
    """A folder of saved Python objects, looked up by key.

    ``path``: the store's folder, created if missing (it must then be empty or absent).
    ``codec``/``level``: the default codec of new objects, as for ``kompakt.save``; recorded
    when the store is created, and checked on later opens (omit them to use the store's).
    ``namespace``: the namespace used by calls that do not name one, and by the mapping
    interface. ``cache_bytes``: keep up to this many bytes of recently read objects in memory
    (0: no cache; cached objects are shared between ``get`` calls, as with
    ``functools.lru_cache``). ``durable``: fsync every commit of the index (default: commits
    are atomic and survive a crash of the process; a power failure may lose the last ones).
    ``trusted=False`` loads values with the restricted unpickler (see ``kompakt.load``).
    ``adapt``: whether large objects compress only as much as the disk leaves time for, so a
    ``set`` is about as fast as writing the raw bytes (blocks the compressor cannot keep up
    with are stored raw; how many depends on disk and cores, so files of equal values may
    differ in size; Linux only, elsewhere every block is compressed). ``None`` (the default):
    objects written with kompakt's default codec (zstd:1, a speed-first choice, whether named
    or not) adapt, objects written with any other codec get every block compressed with it;
    ``store.adapts`` says which applies to the store's codec.
    ``adapt=False`` gives files that do not depend on timing. Values stay readable by every
    store, and the content hash is the same either way.
    ``dictionaries`` (default True): small values (up to 64 KiB pickled, zstd codecs) of each
    namespace are sampled; after 2000 of them (or 4 MiB) the store trains a zstd dictionary on
    them and adopts it if it makes values held out of training at least 10 % smaller and
    writing and reading them at most ``dictionary_max_slowdown`` slower (default 0.05, 5 %;
    None: adopt on size alone; on object storage the set's requests count in the time, so
    there 1-4 KB values get one too); later small values of the namespace are compressed with it.
    ``dictionary()`` shows it, ``train_dictionary()`` decides from values at hand. Values
    written with a dictionary are read by any kompakt that knows store index version 3;
    ``dictionaries=False`` only stops this process from sampling and using them.

    Keys are any strings. Several threads and processes may use one store at once; the last
    writer of a key wins.

    ``path`` may also be an ``s3://bucket/prefix`` URL: the same store on object storage,
    shared by every machine that reaches the bucket (credentials, region and endpoint from
    the AWS environment variables, as for reads of URLs). Objects are immutable and uploaded
    with create-only puts; each key is a small record replaced by compare-and-swap on its
    ETag, so writers on several machines never tear a value (the last writer wins, as
    locally). Objects are built and kept in a local cache folder, ``cache_dir`` (default: one
    per URL under ``$XDG_CACHE_HOME/kompakt/remote``), so a repeated ``get`` asks the server
    only whether the key changed. The cache's objects are kept within ``cache_dir_limit`` bytes
    (default 10 GiB; ``float("inf")``: no limit): past it, the least recently used are dropped
    until a quarter is free, to be fetched again when asked for. ``gc()`` removes objects no
    key points at that are older than ``grace`` seconds (default 3600), so an object another
    machine is committing is never taken. Several keys set at once (``mset``) each change
    atomically, not all together. Values of ``multipart_threshold`` bytes or more (default
    128 MiB) are uploaded in parts, as boto3's transfers are. A namespace's dictionary is
    shared on the server: the first machine to adopt one publishes it, the others compress with
    it and fetch it once to read; ``gc()`` keeps it while a key needs it (such a store has
    layout version 2, which a kompakt that knows only layout 1 refuses to open).

    >>> import kompakt, numpy, tempfile, os
    >>> store = kompakt.Store(os.path.join(tempfile.mkdtemp(), "cache"))
    >>> store["weights"] = numpy.zeros(1000)
    >>> store.get("weights").shape
    (1000,)
    >>> store.set("answer", 42, namespace="results")
    '...'
    >>> store.get("answer", namespace="results"), store.get("missing", "default")
    (42, 'default')
    >>> sorted(store.namespaces())
    ['objects', 'results']
    """

    def __init__(
        self,
        path: PathLike,
        codec: str | None = None,
        level: int | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        cache_bytes: int = 0,
        durable: bool = False,
        threads: int | None = None,
        trusted: bool = True,
        adapt: bool | None = None,
        dictionaries: bool = True,
        dictionary_max_slowdown: float | None = 0.05,
        cache_dir: PathLike | None = None,
        grace: float | None = None,
        cache_dir_limit: float | None = None,
        multipart_threshold: int | None = None,
    ) -> None:
        if not isinstance(cache_bytes, int) or cache_bytes < 0:
            raise OptionError(f"cache_bytes must be 0 (no cache) or a positive number of bytes, got {cache_bytes!r}")
        adapt = None if adapt is None else bool(adapt)
        self._core: Any = _core.Store(
            os.fspath(path),
            codec=codec,
            level=level,
            durable=durable,
            threads=threads,
            adapt=adapt,
            dictionaries=bool(dictionaries),
            dictionary_max_slowdown=dictionary_max_slowdown,
            cache_dir=None if cache_dir is None else os.fspath(cache_dir),
            grace=grace,
            cache_dir_limit=cache_dir_limit,
            multipart_threshold=multipart_threshold,
        )
        self._path = os.fspath(self._core.path)
        _OPEN_STORES[id(self)] = self
        self._options = dict(
            namespace=namespace,
            cache_bytes=cache_bytes,
            durable=durable,
            threads=threads,
            trusted=trusted,
            adapt=adapt,
            dictionaries=bool(dictionaries),
            dictionary_max_slowdown=dictionary_max_slowdown,
        )
        remote = dict(
            cache_dir=cache_dir, grace=grace, cache_dir_limit=cache_dir_limit, multipart_threshold=multipart_threshold
        )
        self._options.update({k: v for k, v in remote.items() if v is not None})
        self.namespace = _check_namespace(namespace)
        self._trusted = trusted
        self._cache = _LruCache(cache_bytes) if cache_bytes > 0 else None

    # -- values --------------------------------------------------------------------------

    def set(
        self, key: str, value: Any, *, namespace: str | None = None, codec: str | None = None, level: int | None = None
    ) -> str:
        """Saves ``value`` under ``key`` (replacing what it held); returns the content hash."""
        ns = self._ns(namespace)
        key = _check_key(key)
        small, encoder = _small_pickle(value, lambda: self._core.writer(codec=codec, level=level))
        if encoder is None:
            return str(self._core.put(ns, key, [small], PICKLE_ONLY_METADATA, codec=codec, level=level))
        pending = self._core.finish(encoder.writer)
        self._core.commit(ns, [(key, pending)])
        return str(pending.hash)

    def get(self, key: str, default: Any = None, *, namespace: str | None = None) -> Any:
        """The value under ``key``, or ``default`` if there is none.

        Raises ``kompakt.CorruptError`` if the stored object is damaged.
        """
        ns = self._ns(namespace)
        key = _check_key(key)
        if self._cache is not None:
            digest = self._core.hash(ns, key)
            if digest is None:
                return default
            hit = self._cache.get(digest)  # content addressed: the hash names the value
            if hit is not _MISSING:
                return hit
        found = self._core.fetch(ns, key)
        if found is None:
            return default
        value, size = self._decode(found, key)
        if self._cache is not None:
            # Under the hash of what was read (the key may have changed since the lookup).
            self._cache.put(found[0], value, size)
        return value

    def mset(self, items: Mapping[str, Any] | Iterable[tuple[str, Any]], *, namespace: str | None = None) -> None:
        """Saves several values in one transaction: all of them become visible at once (on
        object storage, each key changes atomically on its own)."""
        ns = self._ns(namespace)
        pairs = items.items() if isinstance(items, Mapping) else items
        pending = []
        for key, value in pairs:
            small, encoder = _small_pickle(value, self._core.writer)
            if encoder is None:
                obj = self._core.prepare([small], PICKLE_ONLY_METADATA, namespace=ns)
            else:
                obj = self._core.finish(encoder.writer)
            pending.append((_check_key(key), obj))
        self._core.commit(ns, pending)

    def mget(self, keys: Iterable[str], default: Any = _MISSING, *, namespace: str | None = None) -> list[Any]:
        """The values under ``keys``, in order; a missing key raises ``KeyError`` unless a
        ``default`` is given."""
        out = []
        for key in keys:
            value = self.get(key, _MISSING, namespace=namespace)
            if value is _MISSING:
                if default is _MISSING:
                    raise KeyError(key)
                value = default
            out.append(value)
        return out

    def set_bytes(self, key: str, data: Any, *, namespace: str | None = None) -> str:
        """Stores raw bytes (any bytes-like object) as a plain-data object, the kind
        ``kompakt store put`` makes; returns the content hash."""
        return str(self._core.put(self._ns(namespace), _check_key(key), [data], b""))

    def get_bytes(self, key: str, default: Any = None, *, namespace: str | None = None) -> Any:
        """The data of a plain-data object as ``bytes`` (stream 0 of any object)."""
        found = self._core.fetch(self._ns(namespace), _check_key(key))
        if found is None:
            return default
        if len(found) == 3:
            return found[2]
        reader = found[1]
        try:
            return reader.read_stream(0) if reader.stream_lengths() else b""
        finally:
            reader.close()

    # -- keys ----------------------------------------------------------------------------

    def exists(self, key: str, *, namespace: str | None = None) -> bool:
        """True if ``key`` holds a value."""
        return bool(self._core.exists(self._ns(namespace), _check_key(key)))

    def hash(self, key: str, *, namespace: str | None = None) -> str | None:
        """The content hash ``key`` points at (equal values have equal hashes), or None."""
        return self._core.hash(self._ns(namespace), _check_key(key))  # type: ignore[no-any-return]

    def delete(self, key: str, *, namespace: str | None = None) -> bool:
        """Removes ``key``; returns False if it did not exist. The object's space is freed by
        ``gc()`` once no key points at it."""
        return bool(self._core.delete(self._ns(namespace), _check_key(key)))

    def list(self, namespace: str | None = None) -> list[str]:
        """The keys of a namespace, sorted."""
        return list(self._core.keys(self._ns(namespace)))

    def namespaces(self) -> dict[str, int]:
        """Namespaces that hold keys, with their key counts."""
        return dict(self._core.namespaces())

    def clear(self, namespace: Any = _MISSING) -> None:
        """Removes every key of ``namespace`` (by default the store's; ``None``: every
        namespace). Objects are freed by ``gc()``."""
        if namespace is None:
            self._core.clear(None)
        else:
            self._core.clear(self.namespace if namespace is _MISSING else _check_namespace(namespace))

    # -- maintenance ---------------------------------------------------------------------

    def gc(self) -> dict[str, int]:
        """Removes objects no key points at (and files of writers that died); returns
        counts. Safe while other threads and processes use the store. What it passed over
        (a damaged key record on object storage) is counted as ``damaged_records`` and named in
        a ``RuntimeWarning``; deleting such a key removes its record."""
        report = dict(self._core.gc())
        problems = report.pop("problems")
        report["damaged_records"] = len(problems)
        if problems:
            warnings.warn(f"kompakt.Store.gc passed over: {'; '.join(problems)}", RuntimeWarning, stacklevel=2)
        return report

    def reduce_size(self, max_bytes: int) -> dict[str, int]:
        """Drops the least recently used values (by when they were last written or read)
        until the object files hold at most ``max_bytes``; small values kept in the index stay.
        Of a store on object storage, this reduces its cache folder (the values stay on the
        server, and are fetched again when asked for). Returns the keys and objects removed,
        the bytes freed and the object files' bytes left (``file_bytes``)."""
        if not isinstance(max_bytes, int) or max_bytes < 0:
            raise OptionError(f"max_bytes must be a number of bytes >= 0, got {max_bytes!r}")
        return dict(self._core.reduce_size(max_bytes))

    def info(self) -> dict[str, Any]:
        """The store's configuration, key and object counts, and sizes in bytes."""
        return dict(self._core.info())

    def verify(self) -> dict[str, Any]:
        """Reads every object back (checksums and content hashes); ``problems`` lists what
        is wrong, empty for a sound store."""
        return dict(self._core.verify())

    def dictionary(self, namespace: str | None = None) -> Any:
        """The ``kompakt.Dictionary`` the namespace's small values are compressed with, or None
        while it has none (see ``dictionaries`` in ``Store``)."""
        return self._core.dictionary(self._ns(namespace))

    def train_dictionary(
        self, values: Iterable[Any], *, namespace: str | None = None, max_slowdown: float | None = 0.05
    ) -> dict[str, Any]:
        """Trains a zstd dictionary for the namespace on ``values`` (Python objects like those
        it holds, pickled as ``set`` pickles them; one in five is held out of training) and
        adopts it if it makes the held-out values at least 10 % smaller, and writing and
        reading them at most ``max_slowdown`` slower (a fraction; None: size alone decides,
        for when the disk rather than the CPU is short). Returns the trial: ``adopted``,
        ``reason`` when not, sizes (``stored_without``, ``stored_with``) and times in seconds.
        A namespace that has a dictionary keeps it (``kompakt.StoreError``). The store does this by
        itself as values come (``dictionaries=True``).

        >>> import kompakt, tempfile, os
        >>> store = kompakt.Store(os.path.join(tempfile.mkdtemp(), "cache"))
        >>> rows = [{"user": i, "path": f"/orders/{i}", "status": "ok", "ms": i % 50} for i in range(1000)]
        >>> trial = store.train_dictionary(rows, namespace="requests", max_slowdown=None)
        >>> trial["adopted"], trial["stored_with"] < trial["stored_without"]
        (True, True)
        >>> store.dictionary("requests") is not None
        True
        """
        samples = [pickle.dumps(v, protocol=5) for v in values]
        return dict(self._core.train_dictionary(self._ns(namespace), samples, max_slowdown=max_slowdown))

    def set_default_codec(self, codec: str | None = None, level: int | None = None) -> None:
        """Changes the default codec recorded in the store (stored objects keep theirs)."""
        self._core.set_default_codec(codec, level)

    @property
    def path(self) -> str:
        """The store's folder."""
        return self._path

    def close(self) -> None:
        """Closes the index (its write-ahead log is folded in and removed when the last
        connection to it closes). Later calls raise ``kompakt.UsageError``. Also done on ``with``
        exit and garbage collection."""
        self._core = _CLOSED
        if self._cache is not None:
            self._cache = _LruCache(self._cache.max_bytes)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def codec(self) -> str:
        """The default codec of new objects."""
        return str(self._core.codec)

    @property
    def adapts(self) -> bool:
        """Whether new objects written with the store's codec adapt their compression to the
        disk (see ``adapt`` in ``Store``)."""
        return bool(self._core.adapts)

    def memoize(self, func: F | None = None, *, namespace: str | None = None, ignore: Iterable[str] = ()) -> Any:
        """Decorator caching a function's results in this store; see ``kompakt.memoize``."""
        if func is None:
            return functools.partial(self.memoize, namespace=namespace, ignore=ignore)
        return _Memoized(self, func, namespace, tuple(ignore))

    # -- mapping interface (the store's namespace) ---------------------------------------

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self.set(key, value)

    def __delitem__(self, key: str) -> None:
        if not self.delete(key):
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.list())

    def __len__(self) -> int:
        return int(self._core.len(self.namespace))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.exists(key)

    def __repr__(self) -> str:
        return f"kompakt.Store({self.path!r}, namespace={self.namespace!r})"

    def __reduce__(self) -> Any:
        # Lets a store be passed to worker processes (each opens its own index connection).
        return (_reopen, (self.path, self._options))

    # -- internals -----------------------------------------------------------------------

    def _ns(self, namespace: str | None) -> str:
        return self.namespace if namespace is None else _check_namespace(namespace)

    def _decode(self, found: Any, key: str) -> tuple[Any, int]:
        if len(found) == 3:
            _, meta, data = found
            if meta != PICKLE_ONLY_METADATA:
                layout = _object_metadata(meta)
                if layout is None:
                    raise _not_an_object(key, meta)
                _check_layout(layout, [len(data)])
            if self._trusted:
                try:
                    return pickle.loads(data), len(data)
                except ModuleNotFoundError as e:
                    check_data_package(e, "loading this object")
                    raise
            return _unpickle(lambda: io.BytesIO(data), False), len(data)
        reader = found[1]
        try:
            meta = reader.metadata()
            if _object_metadata(meta) is None:
                raise _not_an_object(key, meta)
            return _read_object(reader, self._trusted), sum(reader.stream_lengths())
        finally:
            reader.close()


def _not_an_object(key: str, meta: bytes) -> UsageError:
    if _core.file_kind(meta) == "r-object":
        return UsageError(f"key {key!r} holds an R object set by kompakt for R: get it in R (kpk_store()$get)")
    return UsageError(f"key {key!r} holds plain data, not a saved object: read it with get_bytes()")


class _Closed:
    def __getattr__(self, name: str) -> Any:
        raise UsageError("operation on a closed kompakt.Store")


_CLOSED = _Closed()


# A child process must not use the SQLite connections it inherits through fork (SQLite forbids
# it), nor close them (closing could remove the parent's write-ahead log): each store reopens
# its index in the child, and the inherited handles are kept, unused, until the child exits.
_OPEN_STORES: weakref.WeakValueDictionary[int, Store] = weakref.WeakValueDictionary()
_INHERITED: list[Any] = []


def _reopen_after_fork() -> None:
    for store in list(_OPEN_STORES.values()):
        if store._core is _CLOSED:
            continue
        _INHERITED.append(store._core)
        try:
            store._core = _core.Store(
                store._path,
                durable=store._options["durable"],
                threads=store._options["threads"],
                adapt=store._options["adapt"],
                dictionaries=store._options["dictionaries"],
                dictionary_max_slowdown=store._options["dictionary_max_slowdown"],
                cache_dir=store._options.get("cache_dir"),
                grace=store._options.get("grace"),
                cache_dir_limit=store._options.get("cache_dir_limit"),
                multipart_threshold=store._options.get("multipart_threshold"),
            )
        except Exception as e:  # noqa: BLE001 - reported on first use instead
            store._core = _Unusable(f"reopening the store at {store._path} after fork failed: {e}")


class _Unusable:
    def __init__(self, why: str) -> None:
        self._why = why

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(self._why)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reopen_after_fork)


def _reopen(path: str, options: dict[str, Any]) -> Store:
    return Store(path, **options)


def _check_key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"store keys are str, got {type(key).__name__}")
    if not key.isascii():
        try:
            key.encode("utf-8")
        except UnicodeEncodeError:
            raise OptionError(f"store keys are Unicode text; {key!r} holds a lone surrogate") from None
    return key


def _check_namespace(namespace: Any) -> str:
    if not isinstance(namespace, str):
        raise TypeError(f"namespaces are str, got {type(namespace).__name__}")
    return namespace


class _LruCache:
    """Objects by content hash, least recently used evicted first, bounded in bytes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = self._max = max_bytes
        self._size = 0
        self._items: collections.OrderedDict[str, tuple[Any, int]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, digest: str) -> Any:
        with self._lock:
            item = self._items.get(digest)
            if item is None:
                return _MISSING
            self._items.move_to_end(digest)
            return item[0]

    def put(self, digest: str, value: Any, size: int) -> None:
        if size > self._max:
            return
        with self._lock:
            old = self._items.pop(digest, None)
            if old is not None:
                self._size -= old[1]
            self._items[digest] = (value, size)
            self._size += size
            while self._size > self._max:
                _, (_, n) = self._items.popitem(last=False)
                self._size -= n


# -- memoize ---------------------------------------------------------------------------------


def memoize(store: Store, func: F | None = None, *, namespace: str | None = None, ignore: Iterable[str] = ()) -> Any:
    """Decorator: caches ``func``'s results in ``store``.

    A call is looked up by a hash of the function's qualified name, its source code, the
    values it closes over, and its arguments (bound to the signature, so ``f(1, b=2)`` and
    ``f(1, 2)`` are the same call; names in ``ignore`` are left out). numpy, pandas and Arrow
    arguments are hashed from their buffers, without pickling them whole (see
    ``hash_value``). Results live in the namespace ``"memoize:<module>.<qualname>"`` (or
    ``namespace``); when the function's source changes, its old entries are deleted on the
    first call. Globals the function reads are not part of the key: change the function (or
    call ``f.cache_clear()``) when they change.

    >>> import kompakt, tempfile, os
    >>> store = kompakt.Store(os.path.join(tempfile.mkdtemp(), "cache"))
    >>> calls = []
    >>> @kompakt.memoize(store)
    ... def slow_square(x):
    ...     calls.append(x)
    ...     return x * x
    >>> slow_square(4), slow_square(4), calls
    (16, 16, [4])
    """
    if func is None:
        return functools.partial(memoize, store, namespace=namespace, ignore=ignore)
    return _Memoized(store, func, namespace, tuple(ignore))


class _Memoized:
    def __init__(self, store: Store, func: Callable[..., Any], namespace: str | None, ignore: tuple[str, ...]) -> None:
        functools.update_wrapper(self, func)
        self.store = store
        self.func = func
        name, code = _describe(func)
        self.namespace = namespace if namespace is not None else f"memoize:{name}"
        self._signature = inspect.signature(func)
        self._ignore = ignore
        for arg in ignore:
            if arg not in self._signature.parameters:
                raise OptionError(f"ignore names {arg!r}, which is not a parameter of {name}")
        # Keys are "<function id>-<code version>:<arguments>": a namespace shared with other
        # functions or plain keys only loses this function's outdated entries.
        self._prefix = hash_value(name)[:12] + "-"
        self._version = f"{self._prefix}{hash_value(code)[:16]}:"
        self._checked = False
        self._lock = threading.Lock()

    def _invalidate_old_versions(self) -> None:
        with self._lock:
            if self._checked:
                return
            for key in self.store.list(self.namespace):
                if key.startswith(self._prefix) and not key.startswith(self._version):
                    self.store.delete(key, namespace=self.namespace)
            self._checked = True

    def key(self, *args: Any, **kwargs: Any) -> str:
        """The store key of a call with these arguments."""
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        parts = []
        for name, value in bound.arguments.items():
            if name in self._ignore:
                continue
            if self._signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
                value = sorted(value.items())
            try:
                parts.append((name, hash_value(value)))
            except (pickle.PicklingError, AttributeError, TypeError) as e:
                raise TypeError(
                    f"memoize cannot hash argument {name!r} of {self.__qualname__} ({type(value).__name__}): {e}; "
                    f"pass ignore=[{name!r}] to leave it out of the key"
                ) from e
        return self._version + hash_value(parts)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self._checked:
            self._invalidate_old_versions()
        key = self.key(*args, **kwargs)
        result = self.store.get(key, _MISSING, namespace=self.namespace)
        if result is _MISSING:
            result = self.func(*args, **kwargs)
            self.store.set(key, result, namespace=self.namespace)
        return result

    def cache_clear(self) -> None:
        """Forgets every cached result of this function (in every version)."""
        for key in self.store.list(self.namespace):
            if key.startswith(self._prefix):
                self.store.delete(key, namespace=self.namespace)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # Decorating a method: bind like a function would.
        if obj is None:
            return self
        bound = functools.partial(self, obj)
        bound.cache_clear = self.cache_clear  # type: ignore[attr-defined]
        return bound


def _describe(func: Callable[..., Any]) -> tuple[str, Any]:
    """A stable name for ``func`` and what its results depend on besides the arguments:
    source (or bytecode), closed-over values, and for a ``functools.partial`` its bound
    arguments."""
    if isinstance(func, functools.partial):
        name, code = _describe(func.func)
        return f"partial({name})", (code, func.args, sorted(func.keywords.items()))
    target = func if inspect.isfunction(func) or inspect.ismethod(func) else type(func)
    name = f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', type(func).__qualname__)}"
    try:
        source: Any = inspect.getsource(target)
    except (OSError, TypeError):
        code = getattr(func, "__code__", None)
        source = marshal.dumps(code) if code is not None else name
    closure = getattr(func, "__closure__", None) or ()
    try:
        cells = tuple(cell.cell_contents for cell in closure)
    except ValueError:  # an empty cell (a recursive closure before its definition)
        cells = ()
    if not inspect.isfunction(func) and not inspect.ismethod(func):
        cells = (func.__dict__,) if hasattr(func, "__dict__") else ()  # a callable object's state
    return name, (source, cells)


def hash_value(value: Any) -> str:
    """A stable hash of a picklable value: 32 hex digits, equal for equal values across
    processes and runs. Large buffers (numpy, pandas, Arrow) are hashed in place, not pickled
    whole; sets and frozensets are hashed in sorted order; a repeated object hashes like equal
    copies. Dicts hash in insertion order (``{"a": 1, "b": 2}`` and ``{"b": 2, "a": 1}``
    differ).

    >>> import kompakt, numpy
    >>> kompakt.hash_value({1, 2, 3}) == kompakt.hash_value({3, 2, 1})
    True
    >>> kompakt.hash_value(numpy.arange(5)) == kompakt.hash_value(numpy.arange(5))
    True
    """
    main = _core.Hasher()
    buffers: list[str] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        try:
            raw = buffer.raw()
        except BufferError:
            return True
        h = _core.Hasher()
        h.write(raw)
        buffers.append(f"{raw.nbytes}:{h.hexdigest()}")  # each buffer bounded: no run-on
        return False

    pickler = _HashPickler(main, protocol=5, buffer_callback=out_of_band)
    pickler.fast = True  # no memo: a repeated object pickles like its copies
    try:
        pickler.dump(value)
    except (RecursionError, ValueError):  # a self-referencing value needs the memo
        main, buffers[:] = _core.Hasher(), []
        pickler = _HashPickler(main, protocol=5, buffer_callback=out_of_band)
        pickler.dump(value)
    total = _core.Hasher()
    total.write(f"kompakt hash_value 1\n{main.hexdigest()}\n{';'.join(buffers)}".encode())
    return str(total.hexdigest())


class _HashPickler(pickle.Pickler):
    # persistent_id sees every object, sets included (reducer_override does not): a set is
    # replaced by the sorted hashes of its elements, the same in every process.
    def persistent_id(self, obj: Any) -> Any:
        if type(obj) in (set, frozenset):
            return (type(obj).__name__, tuple(sorted(hash_value(item) for item in obj)))
        return None
