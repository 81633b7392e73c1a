"""save / load / dumps / loads of Python objects."""

import datetime
import io
import json
import os
import pathlib
import pickle

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kompakt
from helpers import damaged_copies, incompressible, random_bytes, run_in_threads
from kompakt import _objects

ALL_DTYPES = (
    hnp.boolean_dtypes()
    | hnp.integer_dtypes(endianness="=")
    | hnp.unsigned_integer_dtypes(endianness="=")
    | hnp.floating_dtypes(endianness="=")
    | hnp.complex_number_dtypes(endianness="=")
    | hnp.datetime64_dtypes(endianness="=")
    | hnp.timedelta64_dtypes(endianness="=")
    | hnp.byte_string_dtypes(endianness="=")
    | hnp.unicode_string_dtypes(endianness="=")
    | hnp.integer_dtypes(endianness=">")
    | hnp.floating_dtypes(endianness=">")
)


def assert_same_array(a, b):
    assert type(a) is type(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@settings(max_examples=80, deadline=None)
@given(arr=hnp.arrays(ALL_DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=40)))
def test_small_arrays_of_every_dtype(arr):
    assert_same_array(kompakt.loads(kompakt.dumps(arr)), arr)


@pytest.mark.parametrize(
    "dtype",
    [
        "bool",
        "int8",
        "uint16",
        ">i4",
        "int64",
        "float16",
        "float32",
        ">f8",
        "complex128",
        "M8[ns]",
        "m8[s]",
        "S7",
        "U3",
    ],
)
def test_large_arrays_go_out_of_band_and_load_writeable(dtype):
    rng = np.random.default_rng(0)
    arr = rng.integers(0, 100, 300_000).astype(dtype)
    blob = kompakt.dumps(arr)
    meta = kompakt.info(blob)["object"]
    assert len(meta["buffers"]) == 1 and meta["buffers"][0]["itemsize"] == arr.dtype.itemsize
    back = kompakt.loads(blob)
    assert_same_array(back, arr)
    assert back.flags.writeable
    back[0] = back[1]  # really writable


def test_non_contiguous_fortran_zero_size_and_readonly_arrays():
    base = np.arange(600_000, dtype=np.float64).reshape(1000, 600)
    ro = base.copy()
    ro.flags.writeable = False
    times = np.asfortranarray(base.astype("M8[s]"))
    cases = [
        base[::3, ::2],
        np.asfortranarray(base),
        np.empty((0, 5)),
        np.zeros((3, 0, 2), "f4"),
        base.T,
        ro,
        times,
        times[::2],
        base.astype("m8[ms]"),
    ]
    for arr in cases:
        back = kompakt.loads(kompakt.dumps(arr))
        assert_same_array(back, arr)
        assert back.flags.f_contiguous == arr.flags.f_contiguous or arr.size == 0
    assert not kompakt.loads(kompakt.dumps(ro)).flags.writeable  # pickle keeps read-only read-only


def test_structured_and_object_arrays():
    rec = np.zeros(100_000, dtype=[("a", "<i4"), ("b", "<f8"), ("c", "S3")])
    rec["a"] = np.arange(100_000)
    assert_same_array(kompakt.loads(kompakt.dumps(rec)), rec)
    objs = np.array([{"x": 1}, "s", 2.5, None], dtype=object)
    back = kompakt.loads(kompakt.dumps(objs))
    assert list(back) == list(objs)


def frame():
    n = 200_000
    rng = np.random.default_rng(5)
    df = pd.DataFrame(
        {
            "flag": pd.array(np.where(rng.random(n) < 0.1, None, rng.random(n) < 0.5), dtype="boolean"),
            "i": rng.integers(1, 101, n),
            "nullable": pd.array(np.where(rng.random(n) < 0.2, None, rng.integers(0, 9, n)), dtype="Int64"),
            "price": rng.choice(np.round(rng.random(20) * 100, 2), n),
            "city": pd.Categorical(rng.choice([f"city{i}" for i in range(70)], n)),
            "name": rng.choice(["ann", "bob", None, "zoë"], n),
            "text": pd.array(rng.choice(["x", "yy", None], n), dtype="string"),
            "when": pd.date_range("2024-03-30", periods=n, freq="min", tz="Europe/Berlin"),
            "delta": pd.to_timedelta(rng.integers(0, 10_000, n), unit="s"),
        }
    )
    df.index = pd.MultiIndex.from_arrays([np.arange(n) // 7, rng.choice(["a", "b"], n)], names=["k", "side"])
    return df


def test_pandas_frame_with_every_column_kind():
    df = frame()
    back = kompakt.loads(kompakt.dumps(df))
    pd.testing.assert_frame_equal(back, df)
    back_safe = kompakt.loads(kompakt.dumps(df), trusted=False)
    pd.testing.assert_frame_equal(back_safe, df)
    assert len(kompakt.info(kompakt.dumps(df))["object"]["buffers"]) >= 4


def test_pyarrow_tables():
    n = 300_000
    table = pa.table(
        {
            "a": pa.array(np.arange(n)),
            "s": pa.array([f"s{i % 1000}" for i in range(n)]),
            "l": pa.array([[i, i + 1] for i in range(n)]),
            "d": pa.array(["x", "y", "z"] * (n // 3)).dictionary_encode(),
        }
    )
    for trusted in (True, False):
        assert kompakt.loads(kompakt.dumps(table), trusted=trusted).equals(table)
    pdf = pd.DataFrame({"x": pd.array(np.arange(n), dtype="int64[pyarrow]")})
    pd.testing.assert_frame_equal(kompakt.loads(kompakt.dumps(pdf), trusted=False), pdf)


def test_nested_containers_and_scalars():
    obj = {
        "list": [1, 2.5, "three", None, True, b"bytes", bytearray(b"ba"), 10**40, 1 + 2j],
        "tuple": (frozenset({1, 2}), {3, 4}, range(5), slice(1, 2)),
        "when": datetime.datetime(2026, 11, 22, tzinfo=datetime.UTC),
        "arrays": [np.arange(i * 10_000) for i in range(5)],
        "nested": {"deeper": {"frame": pd.DataFrame({"a": [1, 2]})}},
    }
    back = kompakt.loads(kompakt.dumps(obj))
    assert back["list"] == obj["list"] and back["tuple"] == obj["tuple"] and back["when"] == obj["when"]
    for a, b in zip(back["arrays"], obj["arrays"]):
        assert_same_array(a, b)
    pd.testing.assert_frame_equal(back["nested"]["deeper"]["frame"], obj["nested"]["deeper"]["frame"])


def test_large_bytes_stream_through_the_pickle():
    big = incompressible(1 << 20) * 12  # above WHOLE_PICKLE_MAX: read back through a file object
    assert len(big) > _objects.WHOLE_PICKLE_MAX
    obj = [big, b"small", bytearray(big[:100_000])]
    assert kompakt.loads(kompakt.dumps(obj)) == obj


def test_many_small_and_a_few_huge_buffers():
    rng = np.random.default_rng(9)
    obj = {f"s{i}": rng.random(rng.integers(0, 50)) for i in range(3000)}
    obj["huge1"] = rng.random(4_000_000)
    obj["huge2"] = np.arange(3_000_000, dtype=np.int32)
    blob = kompakt.dumps(obj, codec="lz4")
    back = kompakt.loads(blob)
    assert back.keys() == obj.keys()
    for k in obj:
        assert_same_array(back[k], obj[k])
    assert len(kompakt.info(blob)["object"]["buffers"]) == 2


def test_large_ndarray_subclasses_go_out_of_band_and_keep_their_type(tmp_path):
    arr = np.random.default_rng(4).random(200_000)
    np.save(tmp_path / "a.npy", arr)
    mapped = np.load(tmp_path / "a.npy", mmap_mode="r")
    rec = np.rec.fromarrays([arr, arr.astype(np.int64)], names="x,n")
    for obj, cls in [(mapped, np.memmap), (mapped[1000:], np.memmap), (rec, np.recarray)]:
        blob = kompakt.dumps(obj)
        meta = kompakt.info(blob)["object"]
        assert len(meta["buffers"]) == 1, "the data travels out of band"
        assert kompakt.info(blob)["streams"][meta["pickle"]["stream"]]["raw_size"] < 4096
        back = kompakt.loads(blob)
        assert type(back) is type(pickle.loads(pickle.dumps(obj, protocol=5))) is cls
        np.testing.assert_array_equal(back, obj)
        assert back.dtype == obj.dtype
    # A subclass with pickling of its own keeps it (a masked array keeps its mask).
    masked = np.ma.masked_array(arr, mask=arr < 0.5)
    back = kompakt.loads(kompakt.dumps(masked))
    assert type(back) is np.ma.MaskedArray
    np.testing.assert_array_equal(back.mask, masked.mask)
    # Untrusted loads refuse the class as they would in a plain pickle.
    with pytest.raises(pickle.UnpicklingError, match="refuses"):
        kompakt.loads(kompakt.dumps(mapped), trusted=False)
    from kompakt.rebuild import ndarray_subclass

    with pytest.raises(pickle.UnpicklingError, match="not an ndarray subclass"):
        ndarray_subclass(arr, dict)


def test_files_naming_the_old_rebuild_functions_still_load(monkeypatch):
    """Files written before kompakt.rebuild name kompakt._objects._time_array and
    _subclass_array; writing with a pickler that uses the old names makes such a file."""
    from kompakt import _objects

    times = np.arange(100_000, dtype=np.int64).astype("datetime64[s]")
    rec = np.zeros(20_000, dtype=[("a", "f8"), ("b", "i8")]).view(np.recarray)

    class OldPickler(_objects._Pickler):
        def reducer_override(self, obj):
            reduced = super().reducer_override(obj)
            if reduced is NotImplemented:
                return reduced
            old = {
                _objects.datetime_array: _objects._time_array,
                _objects.ndarray_subclass: _objects._subclass_array,
            }
            return old[reduced[0]], reduced[1]

    monkeypatch.setattr(_objects, "_Pickler", OldPickler)
    blob = kompakt.dumps({"t": times, "r": rec})
    monkeypatch.undo()
    assert b"_time_array" in _pickle_stream(blob)
    for trusted in (True, False):
        back = kompakt.loads(blob, trusted=trusted)
        np.testing.assert_array_equal(back["t"], times)
        assert type(back["r"]) is np.recarray
    new = _pickle_stream(kompakt.dumps({"t": times}))
    assert b"datetime_array" in new and b"_time_array" not in new


def _pickle_stream(blob: bytes) -> bytes:
    """The pickle of an object file: the stream its metadata names."""
    reader = kompakt._core.FileReader(blob)
    stream = json.loads(reader.metadata())["pickle"]["stream"]
    return reader.read(stream, 0, reader.stream_lengths()[stream])


@settings(max_examples=40, deadline=None)
@given(
    obj=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
        lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=5), kids, max_size=5),
        max_leaves=30,
    ),
    codec=st.sampled_from(["lz4", "zstd", "none", "auto"]),
)
def test_any_plain_object_round_trips(obj, codec):
    assert kompakt.loads(kompakt.dumps(obj, codec=codec)) == obj
    assert kompakt.loads(kompakt.dumps(obj, codec=codec), trusted=False) == obj


def test_save_and_load_with_paths_and_file_objects(tmp_path):
    obj = {"x": np.arange(500_000), "y": "z"}
    for target in (str(tmp_path / "a.kpk"), tmp_path / "b.kpk"):
        kompakt.save(obj, target)
        assert_same_array(kompakt.load(target)["x"], obj["x"])
    buf = io.BytesIO()
    kompakt.save(obj, buf)
    buf.seek(0)
    assert_same_array(kompakt.load(buf)["x"], obj["x"])
    with open(tmp_path / "c.kpk", "wb") as f:
        kompakt.dump(obj, f)
    with open(tmp_path / "c.kpk", "rb") as f:
        assert kompakt.load(f)["y"] == "z"
    assert kompakt.load((tmp_path / "c.kpk").read_bytes())["y"] == "z"


@pytest.mark.parametrize("sync", ["always", "none", None])
def test_sync_settings_write_the_same_file_atomically(tmp_path, sync):
    obj = {"x": np.arange(100_000), "s": "small"}
    kompakt.save(obj, tmp_path / "a.kpk", sync=sync)
    kompakt.save(obj, tmp_path / "b.kpk", sync="always")
    assert (tmp_path / "a.kpk").read_bytes() == (tmp_path / "b.kpk").read_bytes()
    kompakt.write_table(pa.table({"n": [1, 2]}), tmp_path / "t.kpk", sync=sync)
    assert kompakt.read_table(tmp_path / "t.kpk")["n"].tolist() == [1, 2]
    assert sorted(os.listdir(tmp_path)) == ["a.kpk", "b.kpk", "t.kpk"]


def test_bad_sync_values_name_the_valid_ones(tmp_path, monkeypatch):
    for call in (
        lambda: kompakt.save(1, tmp_path / "x.kpk", sync="batched"),
        lambda: kompakt.write_table(pa.table({"n": [1]}), tmp_path / "t.kpk", sync="sometimes"),
    ):
        with pytest.raises(kompakt.OptionError, match='"always" \\(fsync each file\\) or "none"'):
            call()
    monkeypatch.setenv("KOMPAKT_SYNC", "nope")
    with pytest.raises(kompakt.OptionError, match="KOMPAKT_SYNC"):
        kompakt.save(1, tmp_path / "x.kpk")
    monkeypatch.setenv("KOMPAKT_SYNC", "always")
    kompakt.save(1, tmp_path / "x.kpk")
    assert kompakt.load(tmp_path / "x.kpk") == 1
    assert os.listdir(tmp_path) == ["x.kpk"]


KILLED_WRITER = """
import sys, numpy as np, kompakt
path, sync = sys.argv[1], sys.argv[2]
x = np.arange(3_000_000, dtype=np.float64)
print("ready", flush=True)
while True:
    kompakt.save({"x": x}, path, sync=sync)
"""


def kill_while_saving(script: str, *args: str) -> None:
    """Runs `script` in a fresh Python with `args`, and kills it (SIGKILL: no clean-up of any
    kind runs) half a second after it says "ready": inside some save, several saves in."""
    import signal
    import subprocess
    import sys
    import time

    child = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        time.sleep(0.5)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)


@pytest.mark.parametrize("sync", ["none", "always"])
def test_a_writer_killed_mid_save_never_leaves_a_torn_file(tmp_path, sync):
    path = tmp_path / "x.kpk"
    kompakt.save("old", path)
    kill_while_saving(KILLED_WRITER, str(path), sync)
    back = kompakt.load(path)
    assert back == "old" or np.array_equal(back["x"], np.arange(3_000_000, dtype=np.float64))
    # What the killed writer left is its temporary file, never a torn target.
    left = [p for p in os.listdir(tmp_path) if p != "x.kpk"]
    assert all(p.startswith(".x.kpk.") and p.endswith(".tmp") for p in left), left


KILLED_CREATOR = """
import os, sys, numpy as np, kompakt
folder, sync = sys.argv[1], sys.argv[2]
x = np.arange(3_000_000, dtype=np.float64)
print("ready", flush=True)
for i in range(1_000_000):
    kompakt.save({"x": x}, os.path.join(folder, f"{i:07d}.kpk"), sync=sync)
"""


@pytest.mark.parametrize("sync", ["none", "always"])
def test_a_writer_killed_while_creating_files_leaves_only_whole_ones(tmp_path, sync):
    kill_while_saving(KILLED_CREATOR, str(tmp_path), sync)
    names = sorted(os.listdir(tmp_path))
    assert names, "the writer saved some files before it was killed"
    # New files are written unnamed and linked in whole (Linux): no temporary file is left.
    assert all(n.endswith(".kpk") and not n.startswith(".") for n in names), names
    for name in names:
        assert np.array_equal(kompakt.load(tmp_path / name)["x"], np.arange(3_000_000, dtype=np.float64))


class Unpicklable:
    def __reduce__(self):
        raise RuntimeError("cannot pickle this")


def test_adaptive_saves_keep_the_value_and_need_a_path(tmp_path):
    # 32 MB that compresses: enough for the write-back to start and steer the compressor.
    x = np.repeat(np.arange(4_000_000 // 16, dtype=np.float64), 16)
    path = tmp_path / "adapt.kpk"
    kompakt.save({"x": x}, path, adapt=True)
    np.testing.assert_array_equal(kompakt.load(path)["x"], x)
    assert not [p for p in os.listdir(tmp_path) if p != "adapt.kpk"], "no temporary file left"
    adaptive = kompakt._core.FileWriter(tmp_path / "w.kpk", adapt=True)
    plain = kompakt._core.FileWriter(tmp_path / "v.kpk")
    assert adaptive.adapts and not plain.adapts
    adaptive.abort()
    plain.abort()
    with pytest.raises(ValueError, match="needs a path"):
        kompakt.save(x, io.BytesIO(), adapt=True)
    with pytest.raises(ValueError, match="needs a path"):
        kompakt._core.FileWriter(None, adapt=True)


def test_failed_save_keeps_the_previous_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "result.kpk"
    kompakt.save({"good": np.arange(300_000)}, path)
    before = path.read_bytes()
    with pytest.raises(RuntimeError, match="cannot pickle"):
        kompakt.save({"big": np.arange(300_000), "bad": Unpicklable()}, path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.kpk"]
    with pytest.raises(RuntimeError):
        kompakt.save(Unpicklable(), tmp_path / "new.kpk")
    assert not (tmp_path / "new.kpk").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.kpk"]


def test_corrupt_and_truncated_files_raise_corrupt_error(tmp_path):
    blob = kompakt.dumps({"a": np.arange(200_000), "b": "text" * 1000})
    for n in list(range(0, 200)) + list(range(200, len(blob), max(1, len(blob) // 200))):
        with pytest.raises(kompakt.CorruptError):
            kompakt.loads(blob[:n])
    for damaged in damaged_copies(blob, 200, seed=4, mask=0x10):
        with pytest.raises(kompakt.CorruptError):
            kompakt.loads(damaged)
    path = tmp_path / "t.kpk"
    path.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(kompakt.CorruptError):
        kompakt.load(path)


def test_forged_metadata_is_refused():
    data = kompakt.dumps([1, 2])
    reader_meta = kompakt.info(data)["object"]
    assert reader_meta["pickle"] == {"stream": 0, "protocol": 5}
    from kompakt import _core

    for meta in (
        b'{"kompakt":"python-pickle","version":1,"pickle":{"stream":5,"protocol":5},"buffers":[]}',
        b'{"kompakt":"python-pickle","version":1,"pickle":{"stream":0,"protocol":5},"buffers":[{"stream":0}]}',
        b'{"kompakt":"python-pickle","version":1}',
    ):
        w = _core.FileWriter(None)
        w.write(w.add_stream(), pickle.dumps([1, 2], protocol=5))
        w.set_metadata(meta)
        with pytest.raises(kompakt.CorruptError, match="object description"):
            kompakt.loads(w.close())
    w = _core.FileWriter(None)
    w.add_stream()
    w.set_metadata(b'{"kompakt":"python-pickle","version":99,"pickle":{"stream":0,"protocol":5},"buffers":[]}')
    with pytest.raises(ValueError, match="upgrade kompakt"):
        kompakt.loads(w.close())
    with pytest.raises(ValueError, match="plain data"):
        kompakt.loads(kompakt.compress(b"raw bytes"))


class Evil:
    def __reduce__(self):
        return (os.system, ("echo owned > /dev/null",))


def test_untrusted_load_refuses_code():
    blob = kompakt.dumps({"payload": Evil()})
    with pytest.raises(pickle.UnpicklingError, match="refuses"):
        kompakt.loads(blob, trusted=False)
    # getattr escapes through an allowed class are refused too
    escape = pickle.dumps(getattr, protocol=5)
    assert b"getattr" in escape
    w_blob = kompakt.dumps(type)  # builtins.type is not data
    with pytest.raises(pickle.UnpicklingError):
        kompakt.loads(w_blob, trusted=False)


def test_untrusted_getattr_on_allowed_class_refuses_dunders():
    from kompakt._safe import RestrictedUnpickler

    class Reducer:
        def __reduce__(self):
            return (getattr, (datetime.datetime, "__subclasses__"))

    data = pickle.dumps(Reducer(), protocol=5)
    with pytest.raises(pickle.UnpicklingError, match="getattr"):
        RestrictedUnpickler(io.BytesIO(data)).load()


def test_many_threads_saving_and_loading_at_once(tmp_path):
    def work(i):
        obj = {"i": i, "a": np.arange(200_000) * i}
        path = tmp_path / f"{i % 4}-{i}.kpk"
        for _ in range(3):
            kompakt.save(obj, path, threads=2)
            back = kompakt.load(path, threads=2)
            assert back["i"] == i and (back["a"] == obj["a"]).all()
            assert kompakt.loads(kompakt.dumps(obj))["i"] == i

    run_in_threads(work, range(12))


def test_shared_file_objects_across_threads(tmp_path):
    path = tmp_path / "shared.kpk"
    data = random_bytes(2_000_000, 9, seed=1)
    with kompakt.open(path, "wb", block_size=65536) as f:
        f.write(data)
    reader = kompakt._core.FileReader(path)

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            pos = int(rng.integers(0, len(data)))
            n = int(rng.integers(0, 300_000))
            assert reader.read(0, pos, n) == data[pos : pos + n]

    run_in_threads(work, range(6))


def test_pathlib_and_pickle_compat():
    assert isinstance(pathlib.Path("x"), os.PathLike)
    assert kompakt.loads(kompakt.dumps(pathlib.Path("/tmp/x"))) == pathlib.Path("/tmp/x")


@settings(max_examples=150, deadline=None)
@given(
    pickle_bytes=st.binary(max_size=200) | st.builds(lambda o: pickle.dumps(o, protocol=5), st.lists(st.integers())),
    meta=st.one_of(
        st.binary(max_size=100),
        st.builds(
            lambda ver, ps, bufs, proto: json.dumps(
                {
                    "kompakt": "python-pickle",
                    "version": ver,
                    "pickle": {"stream": ps, "protocol": proto},
                    "buffers": [{"stream": b} for b in bufs],
                }
            ).encode(),
            st.integers(-2, 3),
            st.integers(-1, 3) | st.text(max_size=2),
            st.lists(st.integers(-1, 4), max_size=4),
            st.integers(-1, 6),
        ),
    ),
    extra_streams=st.lists(st.binary(max_size=50), max_size=3),
)
def test_hostile_object_files_raise_ordinary_exceptions(pickle_bytes, meta, extra_streams):
    from kompakt import _core

    w = _core.FileWriter(None)
    w.write(w.add_stream(), pickle_bytes)
    for data in extra_streams:
        w.write(w.add_stream(), data)
    w.set_metadata(meta)
    blob = w.close()
    try:
        kompakt.loads(blob, trusted=False)
    except Exception:  # noqa: BLE001 - any clean exception is fine; a crash or hang is not
        pass


def _stack_global(module, name):
    def text(s):
        b = s.encode()
        return b"\x8c" + bytes([len(b)]) + b  # SHORT_BINUNICODE

    return text(module) + text(name) + b"\x93"  # STACK_GLOBAL


def _object_file(pickle_bytes):
    from kompakt import _core

    w = _core.FileWriter(None)
    w.write(w.add_stream(), pickle_bytes)
    w.set_metadata(
        json.dumps(
            {"kompakt": "python-pickle", "version": 1, "pickle": {"stream": 0, "protocol": 5}, "buffers": []}
        ).encode()
    )
    return w.close()


@pytest.mark.parametrize(
    "module, name",
    [
        ("pandas", "io.common.os.system"),  # a dotted path out of an allowed module
        ("pandas.io.common", "os"),
        ("pandas", "read_csv"),
        ("pandas", "HDFStore"),
        ("pandas", "read_pickle"),
        ("pandas.core.computation.eval", "eval"),
        ("numpy", "memmap"),
        ("numpy", "load"),
        ("numpy.testing", "assert_equal"),
        ("pyarrow", "memory_map"),
        ("pyarrow.lib", "OSFile"),
        ("os", "system"),
        ("builtins", "eval"),
        ("builtins", "__import__"),
        ("subprocess", "Popen"),
    ],
)
def test_untrusted_load_refuses_reaching_code(module, name):
    blob = _object_file(b"\x80\x05" + _stack_global(module, name) + b".")
    with pytest.raises(pickle.UnpicklingError, match="refuses"):
        kompakt.loads(blob, trusted=False)


def test_untrusted_getattr_cannot_reach_methods(tmp_path):
    target = tmp_path / "written"
    for cls_module, cls_name, attr in [
        ("numpy", "ndarray", "tofile"),
        ("pandas", "DataFrame", "to_csv"),
        ("datetime", "datetime", "__subclasses__"),
    ]:
        body = (
            _stack_global("builtins", "getattr")
            + _stack_global(cls_module, cls_name)
            + b"\x8c"
            + bytes([len(attr)])
            + attr.encode()
            + b"\x86R."
        )  # TUPLE2 REDUCE
        with pytest.raises(pickle.UnpicklingError, match="getattr"):
            kompakt.loads(_object_file(b"\x80\x05" + body), trusted=False)
    assert not target.exists()


def test_missing_files_name_the_path(tmp_path):
    missing = tmp_path / "nope.kpk"
    with pytest.raises(FileNotFoundError) as info:
        kompakt.load(missing)
    assert info.value.filename == str(missing)
    with pytest.raises(FileNotFoundError) as info:
        kompakt.save(1, tmp_path / "no-such-dir" / "x.kpk")
    assert "no-such-dir" in str(info.value.filename)
    kompakt.save(1, tmp_path / "x.kpk")
    with pytest.raises(TypeError, match="pathlib"):
        kompakt.load(str(tmp_path / "x.kpk").encode())


def test_saving_over_a_file_keeps_its_mode_and_follows_links(tmp_path):
    real = tmp_path / "real.kpk"
    kompakt.save("old", real)
    real.chmod(0o600)
    link = tmp_path / "link.kpk"
    link.symlink_to("real.kpk")
    kompakt.save("new", link)
    assert link.is_symlink() and kompakt.load(real) == "new"
    assert real.stat().st_mode & 0o777 == 0o600


def test_reentrant_calls_from_file_objects_raise_instead_of_hanging():
    from kompakt import _core

    class Spy(io.BytesIO):
        writer = None

        def write(self, b):
            if self.writer is not None:
                self.writer.bytes_in  # noqa: B018 - calls back into the FileWriter that is writing
            return super().write(b)

    spy = Spy()
    w = _core.FileWriter(spy)
    spy.writer = w
    with pytest.raises(RuntimeError, match="re-entrant"):
        w.write(w.add_stream(), incompressible(20 << 20))  # big enough to reach the file during write
    w.abort()


def test_output_buffer_may_not_be_the_input():
    from kompakt import _core

    blob = bytearray(kompakt.compress(b"abc" * 1000, codec="none"))
    reader = _core.FileReader(blob)
    with pytest.raises(ValueError, match="separate buffer"):
        reader.read_into(0, 0, blob)
    out = bytearray(10)
    assert reader.read_into(0, 0, out) == 10 and bytes(out) == b"abcabcabca"


def test_saving_to_a_fifo_writes_into_it(tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    obj = {"x": np.arange(100_000), "note": "through a pipe"}
    kompakt.save(obj, fifo)
    reader.join()
    back = kompakt.loads(got[0])
    np.testing.assert_array_equal(back["x"], obj["x"])
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]
