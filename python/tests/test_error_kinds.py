"""One front door (issue 53): bad input raises the same kind of error from every entry point.

Each row is a call with a bad option, a bad file or a call the object does not allow now, and
the ``kompakt.KompaktError`` subclass it must raise (each also a ``ValueError``): OptionError for
a bad option or argument value, UsageError for a call the object does not allow (a closed file,
a sound file of another kind), CorruptError for damaged data or data that is not kompakt's,
StoreError for a folder that is not a store, DictionaryError for a missing dictionary. Wrong
types stay ``TypeError``, failures of the system ``OSError``: neither is here.
The bad options of every front end's table (crates/kompakt-api/tests/bad_options.tsv) are checked
here too, with the same message as the CLI, the C API and R give.
"""

from __future__ import annotations

import io
import json
import types

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import kompakt
import kompakt.dask
import kompakt.polars
from kompakt import CorruptError, DictionaryError, LimitError, OptionError, StoreError, UsageError

DATA = b"kompakt " * 1000
ROWS = [json.dumps({"user": i, "plan": "team", "active": True}).encode() for i in range(2000)]


def _file_with_metadata(metadata: bytes, payload: bytes = b"payload") -> bytes:
    w = kompakt._core.FileWriter()
    w.write(w.add_stream(), payload)
    w.set_metadata(metadata)
    return w.close()


def _object_metadata(version: int = 1, protocol: int = 5) -> bytes:
    layout = {"kompakt": "python-pickle", "version": version, "pickle": {"stream": 0, "protocol": protocol}}
    return json.dumps({**layout, "buffers": []}, separators=(",", ":")).encode()


@pytest.fixture(scope="module")
def f(tmp_path_factory):
    """The files the rows use."""
    d = tmp_path_factory.mktemp("kinds")
    ns = types.SimpleNamespace(dir=d)
    ns.table = str(d / "table.kpk")
    kompakt.write_table(pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}), ns.table)
    ns.object = str(d / "object.kpk")
    kompakt.save({"a": 1}, ns.object)
    ns.blob = kompakt.compress(DATA)
    ns.junk = str(d / "junk.kpk")
    (d / "junk.kpk").write_bytes(b"hello, this is not kompakt " * 20)
    ns.truncated = str(d / "truncated.kpk")
    (d / "truncated.kpk").write_bytes(kompakt.dumps(list(range(1000)))[:-10])
    ns.dictionary = kompakt.train_dictionary(ROWS, size=2048)
    ns.with_dictionary = kompakt.compress(b"\n".join(ROWS[:50]), dictionary=ns.dictionary)
    ns.multi_stream = kompakt.dumps(np.zeros(100_000))
    ns.r_object = _file_with_metadata(b'{"kompakt":"r-serialize","version":1}')
    ns.newer_layout = _file_with_metadata(_object_metadata(version=99), b"\x80\x05N.")
    ns.newer_protocol = _file_with_metadata(_object_metadata(protocol=99), b"\x80\x05N.")
    # Memo slot 5 filled by the first opcode after the protocol: no pickler writes that.
    ns.forged_memo = _file_with_metadata(_object_metadata(), b"\x80\x05Nq\x05.")
    ns.no_stop = _file_with_metadata(_object_metadata(), b"\x80\x05N")
    ns.not_a_store = d / "not-a-store"
    ns.not_a_store.mkdir()
    (ns.not_a_store / "data.csv").write_text("1,2\n")
    ns.count = 0
    return ns


def _new(f, name: str) -> str:
    """A path in the fixture's folder that no row used before."""
    f.count += 1
    return str(f.dir / f"{name}-{f.count}")


def _store(f, **options) -> kompakt.Store:
    return kompakt.Store(_new(f, "store"), **options)


def _closed(f, mode: str):
    file = kompakt.open(f.blob) if mode == "rb" else kompakt.open(_new(f, "w.kpk"), "wb")
    file.close()
    return file


def _closed_store(f) -> kompakt.Store:
    store = _store(f)
    store.close()
    return store


def _plain_data_key(f):
    store = _store(f)
    store.set_bytes("k", b"raw bytes")
    return store.get("k")


def _forged_small_value(f):
    # A value small enough to live in the index, read with trusted=False: damage, as in a file.
    store = _store(f, trusted=False)
    store._core.put(store.namespace, "k", [b"\x80\x05K\x01)R."], _object_metadata())  # calls 1()
    return store.get("k")


def _train_twice(f):
    store = _store(f)
    values = [{"user": i, "path": f"/orders/{i}", "status": "ok"} for i in range(1000)]
    store.train_dictionary(values, namespace="r", max_slowdown=None)
    store.train_dictionary(values, namespace="r", max_slowdown=None)


def _seek(f, *args):
    with kompakt.open(f.blob) as file:
        file.seek(*args)


def _write(f, data=None, **options):
    data = pa.table({"a": [1, 2, 3]}) if data is None else data
    return kompakt.write_table(data, _new(f, "t.kpk"), **options)


CASES = [
    # -- compress, decompress, info, verify, dictionaries --------------------------------------
    pytest.param(lambda f: kompakt.compress(DATA, threads=-1), OptionError, id="compress-threads=-1"),
    pytest.param(lambda f: kompakt.compress(DATA, threads=10**6), OptionError, id="compress-threads=1e6"),
    pytest.param(lambda f: kompakt.compress(DATA, codec="nope"), OptionError, id="compress-codec=nope"),
    pytest.param(lambda f: kompakt.compress(DATA, level=101), OptionError, id="compress-level=101"),
    pytest.param(lambda f: kompakt.compress(DATA, codec="zstd:3", level=9), OptionError, id="compress-zstd:3-level"),
    pytest.param(lambda f: kompakt.compress(DATA, block_size=1), OptionError, id="compress-block_size=1"),
    pytest.param(
        lambda f: kompakt.compress(DATA, block_size=-1),
        OptionError,
        id="compress-block_size=-1",
    ),
    pytest.param(lambda f: kompakt.compress(DATA, typesize=0), OptionError, id="compress-typesize=0"),
    pytest.param(lambda f: kompakt.compress(DATA, typesize=256), OptionError, id="compress-typesize=256"),
    pytest.param(lambda f: kompakt.compress(DATA, filter="x"), OptionError, id="compress-filter=x"),
    pytest.param(lambda f: kompakt.compress(DATA, dictionary=b""), OptionError, id="compress-empty-dictionary"),
    pytest.param(
        lambda f: kompakt.compress(DATA, dictionary=b"\x37\xa4\x30\xec" + b"garbage" * 10),
        OptionError,
        id="compress-damaged-dictionary",
    ),
    pytest.param(
        lambda f: kompakt.compress(DATA, codec="lz4", dictionary=f.dictionary),
        OptionError,
        id="compress-lz4-dictionary",
    ),
    pytest.param(lambda f: kompakt.Dictionary(b"\x37\xa4\x30\xec" + b"x" * 40), OptionError, id="Dictionary-damaged"),
    pytest.param(lambda f: kompakt.train_dictionary([b"a"]), OptionError, id="train_dictionary-too-little"),
    pytest.param(lambda f: kompakt.train_dictionary(ROWS, size=0), OptionError, id="train_dictionary-size=0"),
    pytest.param(lambda f: kompakt.decompress(b"hello, not kompakt" * 10), CorruptError, id="decompress-not-kompakt"),
    pytest.param(lambda f: kompakt.decompress(f.blob[:-5]), CorruptError, id="decompress-truncated"),
    pytest.param(lambda f: kompakt.decompress(f.blob, threads=-1), OptionError, id="decompress-threads"),
    pytest.param(lambda f: kompakt.decompress(f.with_dictionary), DictionaryError, id="decompress-no-dictionary"),
    pytest.param(
        lambda f: kompakt.decompress(
            f.with_dictionary, dictionary=kompakt.train_dictionary([r + b"!" for r in ROWS], size=2048)
        ),
        DictionaryError,
        id="decompress-other-dictionary",
    ),
    pytest.param(
        lambda f: kompakt.decompress(f.multi_stream),
        UsageError,
        id="decompress-saved-object",
    ),
    pytest.param(lambda f: kompakt.info(f.junk), CorruptError, id="info-not-kompakt"),
    pytest.param(lambda f: kompakt.info(f.truncated), CorruptError, id="info-truncated"),
    pytest.param(lambda f: kompakt.verify(f.junk), CorruptError, id="verify-not-kompakt"),
    pytest.param(lambda f: kompakt.verify(f.truncated), CorruptError, id="verify-truncated"),
    pytest.param(lambda f: kompakt.verify(f.blob, threads=-1), OptionError, id="verify-threads"),
    # -- kompakt.open and its file objects -----------------------------------------------------
    pytest.param(lambda f: kompakt.open(_new(f, "x.kpk"), "xb"), OptionError, id="open-mode=xb"),
    pytest.param(lambda f: kompakt.KompaktFile(_new(f, "x.kpk"), "ab"), OptionError, id="KompaktFile-mode=ab"),
    pytest.param(lambda f: kompakt.open(_new(f, "x.kpk"), "wb", codec="nope"), OptionError, id="open-codec=nope"),
    pytest.param(lambda f: kompakt.open(f.blob, level=3), OptionError, id="open-read-with-level"),
    pytest.param(lambda f: kompakt.open(f.blob, encoding="utf-8"), OptionError, id="open-binary-with-encoding"),
    pytest.param(
        lambda f: kompakt.open(_new(f, "x.kpk"), "wb", dictionary=[f.dictionary]),
        OptionError,
        id="open-write-two-dicts",
    ),
    pytest.param(lambda f: kompakt.KompaktFile(f.blob, stream=5), OptionError, id="KompaktFile-stream=5"),
    pytest.param(lambda f: kompakt.open(f.junk), CorruptError, id="open-not-kompakt"),
    pytest.param(lambda f: kompakt.open(f.truncated), CorruptError, id="open-truncated"),
    pytest.param(lambda f: kompakt.open(f.blob, threads=-1), OptionError, id="open-threads"),
    pytest.param(lambda f: _seek(f, 0, 5), OptionError, id="seek-whence=5"),
    pytest.param(lambda f: _seek(f, -1), OptionError, id="seek-negative"),
    pytest.param(lambda f: _closed(f, "rb").read(), UsageError, id="closed-file-read"),
    pytest.param(lambda f: _closed(f, "rb").seek(0), UsageError, id="closed-file-seek"),
    pytest.param(lambda f: _closed(f, "wb").write(b"x"), UsageError, id="closed-file-write"),
    pytest.param(
        lambda f: kompakt.open("gs://bucket/x.kpk"),
        OptionError,
        id="open-unsupported-scheme",
    ),
    # -- save, load, dumps, loads --------------------------------------------------------------
    pytest.param(lambda f: kompakt.save(1, _new(f, "o.kpk"), codec="nope"), OptionError, id="save-codec=nope"),
    pytest.param(lambda f: kompakt.save(1, _new(f, "o.kpk"), level=101), OptionError, id="save-level=101"),
    pytest.param(lambda f: kompakt.save(1, _new(f, "o.kpk"), threads=-1), OptionError, id="save-threads"),
    pytest.param(
        lambda f: kompakt.save(1, io.BytesIO(), adapt=True),
        OptionError,
        id="save-adapt-to-file-object",
    ),
    pytest.param(
        lambda f: kompakt.save(1, "s3://bucket/x.kpk"),
        UsageError,
        id="save-to-url",
    ),
    pytest.param(lambda f: kompakt.dumps(1, codec="nope"), OptionError, id="dumps-codec=nope"),
    pytest.param(lambda f: kompakt.dumps(1, threads=10**6), OptionError, id="dumps-threads=1e6"),
    pytest.param(lambda f: kompakt.load(f.junk), CorruptError, id="load-not-kompakt"),
    pytest.param(lambda f: kompakt.load(f.truncated), CorruptError, id="load-truncated"),
    pytest.param(lambda f: kompakt.load(f.table), UsageError, id="load-a-table"),
    pytest.param(lambda f: kompakt.loads(f.blob), UsageError, id="loads-plain-data"),
    pytest.param(lambda f: kompakt.loads(f.r_object), UsageError, id="loads-an-R-object"),
    pytest.param(lambda f: kompakt.loads(f.newer_layout), CorruptError, id="loads-newer-layout"),
    pytest.param(lambda f: kompakt.loads(f.newer_protocol), CorruptError, id="loads-newer-pickle-protocol"),
    pytest.param(lambda f: kompakt.loads(f.forged_memo, trusted=False), CorruptError, id="loads-forged-memo"),
    pytest.param(lambda f: kompakt.loads(f.no_stop, trusted=False), CorruptError, id="loads-pickle-without-stop"),
    pytest.param(lambda f: kompakt.load(f.object, max_size=-1), OptionError, id="load-max_size=-1"),
    pytest.param(lambda f: kompakt.load(f.object, max_size=1), LimitError, id="load-over-max_size"),
    pytest.param(lambda f: kompakt.loads(b"junk" * 10), CorruptError, id="loads-not-kompakt"),
    pytest.param(lambda f: kompakt.loads(kompakt.dumps(1), threads=-1), OptionError, id="loads-threads"),
    # -- Store and memoize ---------------------------------------------------------------------
    pytest.param(lambda f: kompakt.Store(f.not_a_store), StoreError, id="Store-not-a-store"),
    pytest.param(lambda f: _store(f, codec="nope"), OptionError, id="Store-codec=nope"),
    pytest.param(lambda f: _store(f, level=101), OptionError, id="Store-level=101"),
    pytest.param(lambda f: _store(f, threads=-1), OptionError, id="Store-threads"),
    pytest.param(lambda f: _store(f, cache_bytes=-1), OptionError, id="Store-cache_bytes=-1"),
    pytest.param(lambda f: _store(f, dictionary_max_slowdown=-1), OptionError, id="Store-max_slowdown=-1"),
    pytest.param(
        lambda f: _store(f, cache_dir=str(f.dir)),
        OptionError,
        id="Store-local-with-cache_dir",
    ),
    pytest.param(
        lambda f: kompakt.Store("s3://bucket/p", grace=-1),
        OptionError,
        id="Store-grace=-1",
    ),
    pytest.param(
        lambda f: kompakt.Store("s3://bucket/p", cache_dir_limit=-1),
        OptionError,
        id="Store-cache_dir_limit=-1",
    ),
    pytest.param(lambda f: _closed_store(f).get("k"), UsageError, id="closed-store-get"),
    pytest.param(lambda f: _closed_store(f).set("k", 1), UsageError, id="closed-store-set"),
    pytest.param(lambda f: _store(f).reduce_size(-1), OptionError, id="Store-reduce_size=-1"),
    pytest.param(lambda f: _store(f).set("\ud800", 1), OptionError, id="Store-key-lone-surrogate"),
    pytest.param(lambda f: _store(f).set("k", 1, codec="nope"), OptionError, id="Store-set-codec=nope"),
    pytest.param(_plain_data_key, UsageError, id="Store-get-plain-data"),
    pytest.param(_forged_small_value, CorruptError, id="Store-get-forged-small-value"),
    pytest.param(_train_twice, StoreError, id="Store-train-dictionary-twice"),
    pytest.param(lambda f: kompakt.memoize(_store(f), lambda x: x, ignore=["y"]), OptionError, id="memoize-ignore"),
    # -- tables --------------------------------------------------------------------------------
    pytest.param(lambda f: _write(f, codec="nope"), OptionError, id="write_table-codec=nope"),
    pytest.param(lambda f: _write(f, level=101), OptionError, id="write_table-level=101"),
    pytest.param(lambda f: _write(f, threads=-1), OptionError, id="write_table-threads"),
    pytest.param(lambda f: _write(f, rows_per_group=0), OptionError, id="write_table-rows_per_group=0"),
    pytest.param(lambda f: _write(f, sorted_by=[("a", "up")]), OptionError, id="write_table-sort-order=up"),
    pytest.param(lambda f: _write(f, sorted_by=[("a", "ascending", "middle")]), OptionError, id="write_table-nulls"),
    pytest.param(
        lambda f: _write(f, sorted_by="zz"),
        OptionError,
        id="write_table-sort-key-not-a-column",
    ),
    pytest.param(lambda f: _write(f, pa.table({"a": [2, 1]}), sorted_by="a"), UsageError, id="write_table-unsorted"),
    pytest.param(lambda f: _write(f, pd.DataFrame({"c": [1j]})), OptionError, id="write_table-complex-column"),
    pytest.param(
        lambda f: kompakt.write_table(pa.table({"a": [1]}), "s3://bucket/t.kpk"),
        UsageError,
        id="write_table-to-url",
    ),
    pytest.param(lambda f: kompakt.append_table(pa.table({"a": [1]}), f.junk), CorruptError, id="append-not-kompakt"),
    pytest.param(lambda f: kompakt.append_table(pa.table({"a": [1]}), f.object), UsageError, id="append-to-object"),
    pytest.param(lambda f: kompakt.read_table(f.table, to="nope"), OptionError, id="read_table-to=nope"),
    pytest.param(lambda f: kompakt.read_table(f.junk), CorruptError, id="read_table-not-kompakt"),
    pytest.param(lambda f: kompakt.read_table(f.truncated), CorruptError, id="read_table-truncated"),
    pytest.param(lambda f: kompakt.read_table(f.object), UsageError, id="read_table-object-file"),
    pytest.param(lambda f: kompakt.read_table(f.table, ["zz"]), OptionError, id="read_table-no-such-column"),
    pytest.param(lambda f: kompakt.read_table(f.table, rows=slice(0, 3, 2)), OptionError, id="read_table-rows-step"),
    pytest.param(lambda f: kompakt.read_table(f.table, rows=(0, 10)), OptionError, id="read_table-rows-outside"),
    pytest.param(lambda f: kompakt.read_table(f.table, max_size=-1), OptionError, id="read_table-max_size=-1"),
    pytest.param(lambda f: kompakt.read_table(f.table, max_size=1), LimitError, id="read_table-over-max_size"),
    pytest.param(lambda f: kompakt.read_table(f.table, threads=-1), OptionError, id="read_table-threads"),
    pytest.param(
        lambda f: kompakt.read_table("s3://"),
        OptionError,
        id="read_table-url-without-bucket",
    ),
    pytest.param(lambda f: kompakt.TableFile(f.table).take([0], to="nope"), OptionError, id="take-to=nope"),
    pytest.param(lambda f: kompakt.TableFile(f.table).iter_batches(0), OptionError, id="iter_batches-rows=0"),
    pytest.param(lambda f: kompakt.TableFile(f.table).statistics("zz"), OptionError, id="statistics-no-such-column"),
    pytest.param(lambda f: kompakt.TableFile(f.junk), CorruptError, id="TableFile-not-kompakt"),
    pytest.param(lambda f: kompakt.read_batches(f.table, filters=[("a", "~", 1)]), OptionError, id="read_batches-op"),
    pytest.param(lambda f: kompakt.read_batches(f.table, ["zz"]), OptionError, id="read_batches-no-such-column"),
    pytest.param(
        lambda f: kompakt.read_batches("https://example.invalid/data/"),
        OptionError,
        id="read_batches-list-https-folder",
    ),
    pytest.param(lambda f: kompakt.dask.read_table(f.table, filters=[("a", "~", 1)]), OptionError, id="dask-filter-op"),
    pytest.param(lambda f: kompakt.polars.scan_table(f.table, filters=["a > 1"]), OptionError, id="polars-filter"),
    # -- the codec lab -------------------------------------------------------------------------
    pytest.param(lambda f: kompakt.bench(DATA, "nope", seconds=0), OptionError, id="bench-codec=nope"),
    pytest.param(lambda f: kompakt.bench(DATA, "lz4", block_sizes=1, seconds=0), OptionError, id="bench-block=1"),
    pytest.param(lambda f: kompakt.bench(DATA, "lz4", filters="x", seconds=0), OptionError, id="bench-filter=x"),
    pytest.param(lambda f: kompakt.bench(DATA, "lz4", sink_speed="fast", seconds=0), OptionError, id="bench-sink"),
    pytest.param(
        lambda f: kompakt.bench(DATA, "lz4", threads=-1, seconds=0),
        OptionError,
        id="bench-threads=-1",
    ),
]


@pytest.mark.parametrize(("call", "kind"), CASES)
def test_bad_input_raises_its_kind(f, call, kind):
    with pytest.raises(kind) as caught:
        call(f)
    assert isinstance(caught.value, kompakt.KompaktError)
    assert isinstance(caught.value, ValueError)  # `except ValueError` keeps working
    assert str(caught.value)


def test_every_kind_is_covered():
    kinds = {c.values[1] for c in CASES}
    assert kinds == {CorruptError, DictionaryError, LimitError, OptionError, StoreError, UsageError}


def _bad_options() -> list:
    """The rows of the table every front end checks (crates/kompakt-api/tests/bad_options.tsv)."""
    from pathlib import Path

    table = Path(__file__).resolve().parents[2] / "crates" / "kompakt-api" / "tests" / "bad_options.tsv"
    rows = []
    for line in table.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        case, options, kind, message = line.split("\t")
        pairs = dict(kv.split("=", 1) for kv in options.split(";"))
        rows.append(pytest.param(pairs, kind, message, id=case))
    return rows


_KIND_CLASSES = {"option": OptionError, "usage": UsageError, "corrupt": CorruptError, "limit": LimitError}


@pytest.mark.parametrize(("options", "kind", "message"), _bad_options())
def test_the_table_of_every_front_end(options, kind, message):
    """The same bad option gives the same kind and message as the CLI, the C API and R."""
    numeric = {"level", "threads", "typesize", "block_size"}
    kwargs = {k: int(v) if k in numeric else v for k, v in options.items()}
    with pytest.raises(_KIND_CLASSES[kind]) as raised:
        kompakt.compress(DATA, **kwargs)
    assert message in str(raised.value)
