"""kompakt.Store: keys, values, content addressing, concurrency, crashes, memoize."""

from __future__ import annotations

import collections
import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kompakt
from helpers import incompressible

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def store(tmp_path: Path) -> kompakt.Store:
    return kompakt.Store(tmp_path / "store")


def object_files(store: kompakt.Store) -> list[Path]:
    return sorted(Path(store.path, "objects").glob("*/*.kpk"))


# -- basics ----------------------------------------------------------------------------------


def test_set_get_and_mapping(store: kompakt.Store) -> None:
    assert store.get("missing") is None
    assert store.get("missing", 7) == 7
    digest = store.set("a", {"x": 1})
    assert len(digest) == 32 and store.hash("a") == digest
    store["b"] = [1, 2, 3]
    assert store["a"] == {"x": 1} and store.get("b") == [1, 2, 3]
    assert "a" in store and "zz" not in store and 3 not in store  # type: ignore[operator]
    assert sorted(store) == ["a", "b"] == store.list() and len(store) == 2
    del store["a"]
    with pytest.raises(KeyError):
        store["a"]
    with pytest.raises(KeyError):
        del store["a"]
    assert store.delete("b") and not store.delete("b")
    store["none"] = None
    assert store.exists("none") and store.get("none", "default") is None


def test_namespaces_are_separate(store: kompakt.Store) -> None:
    store.set("k", 1)
    store.set("k", 2, namespace="other")
    assert store.get("k") == 1 and store.get("k", namespace="other") == 2
    assert store.namespaces() == {"objects": 1, "other": 1}
    store.clear(namespace="other")
    assert store.namespaces() == {"objects": 1}
    view = kompakt.Store(store.path, namespace="other")
    view["x"] = "y"
    assert store.list("other") == ["x"] and list(view) == ["x"]
    store.clear(namespace=None)
    assert store.namespaces() == {}


def test_mset_mget(store: kompakt.Store) -> None:
    store.mset({"a": 1, "b": np.arange(100_000), "c": "three"})
    a, b, c = store.mget(["a", "b", "c"])
    assert a == 1 and c == "three" and (b == np.arange(100_000)).all()
    store.mset([("d", 4)], namespace="n")
    assert store.mget(["d", "nope"], default=0, namespace="n") == [4, 0]
    with pytest.raises(KeyError):
        store.mget(["nope"])


def test_large_values_round_trip_as_files(store: kompakt.Store) -> None:
    x = np.random.default_rng(0).standard_normal(2_000_000)
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"i": rng.integers(0, 1 << 40, 300_000), "s": pd.Categorical(["a", "b", "c"] * 100_000)})
    store["x"], store["frame"] = x, frame
    got = store["x"]
    assert got.flags.writeable and np.array_equal(got, x)
    pd.testing.assert_frame_equal(store["frame"], frame)
    info = store.info()
    assert info["file_objects"] == 2 and info["keys"] == 2
    assert len(object_files(store)) == 2
    big = b"z" * (5 << 20)
    store["bytes"] = big
    assert store["bytes"] == big


def test_equal_values_are_stored_once_whatever_the_codec(tmp_path: Path) -> None:

    x = np.arange(3_000_000, dtype=np.int64)
    medium = incompressible(4000, seed=0)  # incompressible: in the index's object table
    small = {"a": list(range(50))}  # 1 KiB or less stored: kept beside each key
    hashes = set()
    for codec in ["zstd:1", "lz4", "none", "zstd:9"]:
        s = kompakt.Store(tmp_path / "s", codec="zstd:1") if codec == "zstd:1" else kompakt.Store(tmp_path / "s")
        hashes.add(s.set(f"x-{codec}", x, codec=codec))
        hashes.add(s.set(f"medium-{codec}", medium, codec=codec))
        hashes.add(s.set(f"small-{codec}", small, codec=codec))
    assert len(hashes) == 3
    info = kompakt.Store(tmp_path / "s").info()
    assert info["keys"] == 12
    assert info["objects"] == 2 + 4  # x and medium once; small once per key
    assert kompakt.Store(tmp_path / "s").verify()["problems"] == []


def test_hash_does_not_depend_on_threads(tmp_path: Path) -> None:
    x = np.random.default_rng(1).integers(0, 100, 5_000_000)
    one = kompakt.Store(tmp_path / "a", threads=1).set("x", x)
    many = kompakt.Store(tmp_path / "b", threads=4).set("x", x)
    assert one == many


def test_by_default_only_a_store_with_the_default_codec_adapts(tmp_path: Path) -> None:
    assert kompakt.Store(tmp_path / "default").adapts
    assert not kompakt.Store(tmp_path / "default", adapt=False).adapts
    assert not kompakt.Store(tmp_path / "zstd9", codec="zstd:9").adapts
    assert not kompakt.Store(tmp_path / "zstd9").adapts, "the recorded codec counts"
    assert kompakt.Store(tmp_path / "zstd9", adapt=True).adapts
    assert kompakt.Store(tmp_path / "default")._options["adapt"] is None
    # A value set with adapt=False compresses every block (here 32 of them).
    x = np.random.default_rng(3).integers(0, 100, 4_000_000)
    fixed = kompakt.Store(tmp_path / "fixed", adapt=False)
    fixed.set("x", x)
    assert fixed.info()["stored_bytes"] < x.nbytes / 2


def test_adaptive_stores_keep_values_and_hashes(tmp_path: Path) -> None:
    x = np.random.default_rng(2).integers(0, 100, 4_000_000)  # 32 MB: the write-back starts
    plain = kompakt.Store(tmp_path / "s", adapt=False).set("x", x)
    adaptive = kompakt.Store(tmp_path / "s", adapt=True)
    assert adaptive.set("y", x) == plain
    np.testing.assert_array_equal(adaptive["y"], x)
    np.testing.assert_array_equal(kompakt.Store(tmp_path / "s")["y"], x)
    assert adaptive.info()["objects"] == 1
    # The option travels with the store to other processes.
    again = pickle.loads(pickle.dumps(adaptive))
    assert again._options["adapt"] is True
    assert again.set("z", x[:10]) == kompakt.Store(tmp_path / "t").set("z", x[:10])


def test_plain_bytes_and_cli_interop(store: kompakt.Store, cli: Path) -> None:
    def run(*args: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(cli), *map(str, args)], check=True, capture_output=True, text=True)

    store.set_bytes("raw", b"plain data")
    assert store.get_bytes("raw") == b"plain data"
    with pytest.raises(ValueError, match="plain data"):
        store.get("raw")
    store.set("obj", {"from": "python"})
    out = run("store", "ls", store.path, "--long").stdout
    assert "obj" in out and "raw" in out
    obj_file = Path(store.path).parent / "obj.kpk"
    run("store", "get", store.path, "obj", "-o", str(obj_file))
    assert kompakt.load(obj_file) == {"from": "python"}
    assert run("store", "get", store.path, "raw", "--decompress").stdout == "plain data"
    assert run("store", "get", store.path, "raw", "--decompress", "-o", "-").stdout == "plain data"
    assert not (Path(store.path).parent / "-").exists()
    # A value of several streams (a pickle and its out-of-band buffers) is refused, not cut to
    # its first stream, and leaves no output.
    store.set("array", np.arange(100_000))
    out_file = Path(store.path).parent / "array.bin"
    refused = subprocess.run(
        [str(cli), "store", "get", store.path, "array", "--decompress", "-o", str(out_file)],
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "streams" in refused.stderr and not out_file.exists()
    src = Path(store.path).parent / "input.bin"
    src.write_bytes(incompressible(1000) * 300)
    run("store", "put", store.path, "from-cli", str(src), "-n", "cli")
    assert store.get_bytes("from-cli", namespace="cli") == src.read_bytes()
    assert "OK" in run("store", "verify", store.path).stdout
    info = json.loads(run("store", "info", store.path, "--json").stdout)
    assert info["keys"] == 4 and info["namespaces"] == {"objects": 3, "cli": 1}


# -- keys and values from hypothesis ---------------------------------------------------------

keys = st.text(max_size=300) | st.text(alphabet="/\\.:\x00 ", max_size=10) | st.just("k" * 5000)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5),
    max_leaves=20,
)


@SETTINGS
@given(pairs=st.dictionaries(keys, values, max_size=8))
def test_any_keys_and_values(tmp_path_factory: pytest.TempPathFactory, pairs: dict[str, Any]) -> None:
    store = kompakt.Store(tmp_path_factory.mktemp("h") / "s")
    for k, v in pairs.items():
        store.set(k, v)
    assert sorted(store.list()) == sorted(pairs)
    for k, v in pairs.items():
        assert store.get(k, "MISSING") == v
    assert store.verify()["problems"] == []


plain_items = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.complex_numbers()
    | st.text()
    | st.binary()
    | st.text(min_size=4097, max_size=4100)
)


@SETTINGS
@given(
    value=plain_items
    | st.lists(plain_items, max_size=6)
    | st.tuples(plain_items, plain_items)
    | st.dictionaries(plain_items, plain_items, max_size=6)
    | st.lists(st.integers(), min_size=1025, max_size=1026)
    | values
)
def test_plain_values_pickle_as_the_encoder_does(value: Any) -> None:
    # Small plain values skip the object encoder; the bytes (so the content hash) must be the
    # encoder's, or one value would be stored twice under two hashes.
    from kompakt._objects import _ObjectEncoder
    from kompakt._store import SMALL_PICKLE_MAX, _plain_pickle

    fast = _plain_pickle(value)
    if fast is not None:
        assert fast == _ObjectEncoder(None, SMALL_PICKLE_MAX).encode(value)


class IntSub(int):
    pass


def test_plain_and_encoded_values_share_objects(store: kompakt.Store) -> None:
    from kompakt._store import _plain_pickle

    plain = {"a": 1.5, "b": [1, 2]}  # a nested list: not plain, takes the encoder
    flat = {"a": 1.5, "b": "x" * 10}
    assert _plain_pickle(plain) is None and _plain_pickle(flat) is not None
    assert _plain_pickle("x" * 5000) is None and _plain_pickle(list(range(2000))) is None
    # Exact builtin types only; text length in characters, as len() counts.
    assert _plain_pickle([True, None, 1j, b"b", -(2**70)]) is not None
    assert _plain_pickle("\U0001f600" * 4096) is not None and _plain_pickle("\U0001f600" * 4097) is None
    assert _plain_pickle(collections.OrderedDict(a=1)) is None and _plain_pickle([IntSub(1)]) is None
    assert _plain_pickle({IntSub(1): 2}) is None and _plain_pickle((1, [2])) is None
    h1 = store.set("flat", flat)
    h2 = store.set("again", dict(flat))
    store.mset({"m": flat, "n": plain})
    assert h1 == h2 == store.hash("m")
    assert store.get("n") == plain and store.get("m") == flat


def test_bad_keys_and_namespaces(store: kompakt.Store) -> None:
    with pytest.raises(TypeError, match="str"):
        store.set(b"bytes", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str"):
        store.get("k", namespace=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="lone surrogate"):
        store.set("\ud800", 1)


# -- configuration ---------------------------------------------------------------------------


def test_configuration_is_checked_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "s"
    kompakt.Store(path, codec="lz4").set("a", 1)
    assert kompakt.Store(path).codec == "lz4"
    assert kompakt.Store(str(path), codec="lz4").get("a") == 1
    with pytest.raises(ValueError, match="created with default codec lz4"):
        kompakt.Store(path, codec="zstd")
    kompakt.Store(path).set_default_codec("zstd", level=5)
    assert kompakt.Store(path, codec="zstd:5").get("a") == 1
    config = json.loads((path / "kompakt-store.json").read_text())
    assert config == {
        "format": "kompakt-store",
        "version": 1,
        "hash": "xxh3-128/content-1",
        "key_encoding": "utf-8",
        "codec": "zstd:5",
    }
    config["version"] = 99
    (path / "kompakt-store.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="upgrade kompakt"):
        kompakt.Store(path)


def test_refuses_a_folder_that_is_not_a_store(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("1,2")
    with pytest.raises(ValueError, match="not empty and not a kompakt store"):
        kompakt.Store(tmp_path)
    with pytest.raises(ValueError, match="codec"):
        kompakt.Store(tmp_path / "new", codec="brotli")


# -- damage ----------------------------------------------------------------------------------


def test_damage_is_reported(store: kompakt.Store) -> None:
    store["big"] = np.random.default_rng(2).integers(0, 1 << 40, 1_000_000)
    store["small"] = "fine"
    (path,) = object_files(store)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    with pytest.raises(kompakt.CorruptError):
        store["big"]
    assert store["small"] == "fine"
    problems = store.verify()["problems"]
    assert len(problems) == 1 and path.stem in problems[0]
    path.unlink()
    with pytest.raises(kompakt.CorruptError, match="missing"):
        store["big"]


def test_untrusted_store_refuses_code(tmp_path: Path) -> None:
    kompakt.Store(tmp_path / "s")["evil"] = subprocess.Popen  # a class pickled by reference
    safe = kompakt.Store(tmp_path / "s", trusted=False)
    with pytest.raises(pickle.UnpicklingError):
        safe["evil"]
    safe["ok"] = {"a": np.arange(3)}
    assert (safe["ok"]["a"] == np.arange(3)).all()


# -- gc --------------------------------------------------------------------------------------


def test_gc_frees_unreferenced_objects_only(store: kompakt.Store) -> None:
    rng = np.random.default_rng(3)
    keep = rng.integers(0, 1 << 40, 500_000)
    store["keep"] = keep
    store["drop"] = rng.integers(0, 1 << 40, 500_000)
    store["tiny"] = 1
    store["drop2"] = rng.bytes(4000)  # an object row in the index
    store["drop3"] = 2  # kept beside its key: deleted with it
    del store["drop"], store["drop2"], store["drop3"]
    store["keep2"] = keep.copy()  # same content as "keep"
    report = store.gc()
    assert report["objects"] == 2 and report["bytes"] > 0
    assert len(object_files(store)) == 1
    assert (store["keep"] == store["keep2"]).all() and store["tiny"] == 1
    assert store.gc()["objects"] == 0


def test_lru_cache(tmp_path: Path) -> None:
    path = tmp_path / "s"
    cached = kompakt.Store(path, cache_bytes=10 << 20)
    cached["x"] = np.arange(1000)
    first = cached["x"]
    assert cached["x"] is first  # served from memory
    kompakt.Store(path)["x"] = np.arange(5)  # another writer changes the key
    assert len(cached["x"]) == 5
    cached["big"] = np.zeros(2 << 20)  # 16 MB: larger than the cache, never kept
    assert cached["big"] is not cached["big"]


# -- processes -------------------------------------------------------------------------------

STRESS_WORKER = textwrap.dedent(
    """
    import sys, time, numpy as np, kompakt
    path, writer, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    store = kompakt.Store(path)
    rng = np.random.default_rng(writer)
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        key = f"k{rng.integers(0, 12)}"
        op = rng.integers(0, 20)
        if op < 9:
            size = int(rng.choice([1, 10, 200_000]))
            value = {"writer": writer, "i": i, "data": np.full(size, writer * 1_000_000 + i)}
            store.set(key, value)
        elif op < 17:
            value = store.get(key)
            if value is not None:
                assert (value["data"] == value["writer"] * 1_000_000 + value["i"]).all(), key
        elif op < 19:
            store.delete(key)
        else:
            store.gc()
        i += 1
    print(i)
    """
)


def test_processes_share_a_store(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    kompakt.Store(path)
    script = tmp_path / "worker.py"
    script.write_text(STRESS_WORKER)
    procs = [
        subprocess.Popen([sys.executable, str(script), path, str(w), "4"], stdout=subprocess.PIPE, text=True)
        for w in range(4)
    ]
    ops = [int(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs) and min(ops) > 20
    store = kompakt.Store(path)
    for key in store.list():
        value = store[key]
        assert value["writer"] in range(4)
        assert (value["data"] == value["writer"] * 1_000_000 + value["i"]).all()
    store.gc()
    result = store.verify()
    assert result["problems"] == [] and result["keys"] == len(store)
    assert list(Path(path, "tmp").iterdir()) == []


KILLED_WRITER = textwrap.dedent(
    """
    import sys, numpy as np, kompakt
    store = kompakt.Store(sys.argv[1])
    # Compressible data at zstd 19 runs at a few MB/s: the writer is still busy when it is
    # killed, however fast the machine writes (random data, stored raw, took under 0.3 s).
    walk = np.cumsum(np.random.default_rng(0).standard_normal(20_000_000)).round(2)
    print("ready", flush=True)
    store.set("victim", walk, codec="zstd:19")
    """
)


def test_sigkill_mid_write_leaves_the_store_consistent(tmp_path: Path) -> None:
    path = tmp_path / "s"
    store = kompakt.Store(path)
    store["victim"] = "old value"
    store["other"] = np.arange(10)
    script = tmp_path / "writer.py"
    script.write_text(KILLED_WRITER)
    proc = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    deadline = time.monotonic() + 60
    while not any(Path(path, "tmp").iterdir()) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    leftovers = list(Path(path, "tmp").iterdir())
    assert len(leftovers) == 1  # the dead writer's temporary file
    assert store["victim"] == "old value" and (store["other"] == np.arange(10)).all()
    assert store.verify()["problems"] == []
    assert store.gc()["temp_files"] == 0  # too young: its writer might still be starting
    old = time.time() - 3600
    os.utime(leftovers[0], (old, old))
    assert store.gc()["temp_files"] == 1
    assert list(Path(path, "tmp").iterdir()) == []


def _worker_reads(store: kompakt.Store) -> Any:
    return store["shared"]


def test_store_can_be_sent_to_worker_processes(store: kompakt.Store) -> None:
    store["shared"] = {"v": 42}
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_worker_reads, (store,)) == {"v": 42}


def test_threads_share_one_store(store: kompakt.Store) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def work(t: int) -> None:
        for i in range(100):
            store.set(f"k{i % 10}", (t, i, np.full(50_000 if i % 25 == 0 else 1, i)))
            v = store.get(f"k{i % 10}")
            assert v is not None and (v[2] == v[1]).all()

    with ThreadPoolExecutor(6) as ex:
        list(ex.map(work, range(6)))
    assert store.verify()["problems"] == []


# -- memoize ---------------------------------------------------------------------------------


def test_memoize_caches_by_arguments(store: kompakt.Store) -> None:
    calls: list[Any] = []

    @store.memoize
    def f(a: Any, b: int = 2, *args: Any, **kw: Any) -> Any:
        calls.append((a, b, args, kw))
        return {"sum": np.asarray(a).sum() + b}

    assert f(1)["sum"] == 3
    assert f(1, 2)["sum"] == 3 and f(a=1, b=2)["sum"] == 3
    assert len(calls) == 1
    f(1, 3)
    f(1, 2, 9, x=1, y=2)
    f(1, 2, 9, y=2, x=1)
    assert len(calls) == 3
    x = np.arange(1_000_000)
    f(x)
    f(x.copy())
    assert len(calls) == 4
    y = x.copy()
    y[-1] = 0
    f(y)
    df = pd.DataFrame({"a": np.arange(100_000)})
    f(df["a"].to_numpy(), 0)
    f(df["a"].copy().to_numpy(), 0)
    assert len(calls) == 6
    f.cache_clear()
    f(1)
    assert len(calls) == 7


def test_memoize_ignore_and_methods(store: kompakt.Store) -> None:
    calls = []

    @kompakt.memoize(store, ignore=["verbose"])
    def g(x: int, verbose: bool = False) -> int:
        calls.append(x)
        return x * 2

    assert g(2) == g(2, verbose=True) == 4 and calls == [2]
    with pytest.raises(ValueError, match="not a parameter"):
        store.memoize(ignore=["nope"])(lambda x: x)

    class Model:
        def __init__(self, k: int) -> None:
            self.k = k

        def predict(self, x: int) -> int:
            calls.append(("predict", x))
            return self.k * x

    Model.predict = store.memoize(Model.predict)  # type: ignore[method-assign]
    with pytest.raises(TypeError, match="argument 'self'.*ignore="):
        Model(3).predict(2)
    Model.predict = store.memoize(Model.__dict__["predict"].func, ignore=["self"])  # type: ignore[method-assign]
    assert Model(3).predict(2) == 6 and Model(4).predict(2) == 6  # self is not part of the key
    assert calls.count(("predict", 2)) == 1


def test_memoize_forgets_results_when_the_code_changes(store: kompakt.Store, tmp_path: Path) -> None:
    def define(body: str) -> Any:
        namespace: dict[str, Any] = {}
        source = f"def compute(x):\n    return {body}\n"
        file = tmp_path / f"mod_{abs(hash(body))}.py"
        file.write_text(source)
        exec(compile(source, str(file), "exec"), namespace)
        return store.memoize(namespace["compute"])

    v1 = define("x + 1")
    assert v1(1) == 2
    ns = v1.namespace
    assert len(store.list(ns)) == 1
    v2 = define("x + 100")
    assert v2(1) == 101  # not the cached 2
    assert len(store.list(ns)) == 1  # the old version's entry was deleted


def test_hash_value_is_stable_across_processes() -> None:
    code = "import kompakt, numpy; print(kompakt.hash_value([{'b', 'a', 'c'}, frozenset({1, 2}), numpy.arange(10)]))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ["1", "2", "3"]
    }
    assert len(outs) == 1


def test_close_and_context_manager(tmp_path: Path) -> None:
    with kompakt.Store(tmp_path / "s") as store:
        store["a"] = 1
        assert isinstance(store.info()["path"], str)
    with pytest.raises(ValueError, match="closed"):
        store["a"]
    assert not (tmp_path / "s" / "index.sqlite-wal").exists()
    assert kompakt.Store(tmp_path / "s")["a"] == 1


def test_hash_value_has_no_buffer_boundary_collisions() -> None:
    pb = pickle.PickleBuffer
    assert kompakt.hash_value([pb(b"ab"), pb(b"c")]) != kompakt.hash_value([pb(b"a"), pb(b"bc")])
    a = [1, 2]
    assert kompakt.hash_value([a, a]) == kompakt.hash_value([a, [1, 2]])
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    assert len(kompakt.hash_value(cyclic)) == 32


def test_memoize_closures_partials_and_shared_namespaces(store: kompakt.Store) -> None:
    import functools

    def make(n: int) -> Any:
        def add(x: int) -> int:
            return x + n

        return store.memoize(add)

    assert make(1)(5) == 6 and make(2)(5) == 7  # the closed-over n is part of the key
    store.set("user data", 1)

    @store.memoize(namespace="objects")
    def h(x: int) -> int:
        return -x

    @store.memoize(namespace="objects")
    def k(x: int) -> int:
        return x * 10

    assert h(1) == -1 and k(1) == 10 and h(1) == -1
    assert store.get("user data") == 1 and len(store.list()) == 3
    p = store.memoize(functools.partial(pow, 2))
    assert p(3) == 8 and "0x" not in p.namespace


def test_clear_names_the_namespace_it_clears(tmp_path: Path) -> None:
    results = kompakt.Store(tmp_path / "s", namespace="results")
    results["r"] = 1
    results.set("o", 2, namespace="objects")
    results.clear("objects")
    assert results.list("objects") == [] and results.list() == ["r"]
    with pytest.raises(ValueError, match="lone surrogate"):
        results["\ud800"] = 1
    with pytest.raises(ValueError, match="cache_bytes"):
        kompakt.Store(tmp_path / "s", cache_bytes=-1)


_FORKED_STORE: kompakt.Store | None = None


def _forked_work(i: int) -> int:
    assert _FORKED_STORE is not None
    for j in range(50):
        _FORKED_STORE.set(f"k{i}-{j}", np.full(10 if j % 10 else 100_000, i))
    return int(_FORKED_STORE.get(f"k{i}-0")[0])


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_forked_children_reopen_the_index(tmp_path: Path) -> None:
    global _FORKED_STORE
    _FORKED_STORE = kompakt.Store(tmp_path / "s")
    _FORKED_STORE["parent"] = 1
    with multiprocessing.get_context("fork").Pool(3) as pool:
        assert pool.map(_forked_work, range(6)) == list(range(6))
    assert len(_FORKED_STORE) == 301 and _FORKED_STORE["parent"] == 1
    assert _FORKED_STORE.verify()["problems"] == []
