"""kompakt.open: standard file objects."""

import io
import pickle
import shutil

import numpy as np
import pandas as pd
import pytest

import kompakt
from helpers import random_bytes


def test_copyfileobj_both_ways(tmp_path):
    data = random_bytes(3_000_000, 20, seed=0)
    src = tmp_path / "src.bin"
    src.write_bytes(data)
    with open(src, "rb") as fin, kompakt.open(tmp_path / "c.kpk", "wb", codec="lz4") as fout:
        shutil.copyfileobj(fin, fout, length=100_000)
    out = io.BytesIO()
    with kompakt.open(tmp_path / "c.kpk") as f:
        shutil.copyfileobj(f, out)
    assert out.getvalue() == data
    assert kompakt.decompress((tmp_path / "c.kpk").read_bytes()) == data


def test_pickle_numpy_and_pandas_through_open(tmp_path):
    obj = {"a": list(range(1000))}
    with kompakt.open(tmp_path / "p.kpk", "wb") as f:
        pickle.dump(obj, f)
    with kompakt.open(tmp_path / "p.kpk") as f:
        assert pickle.load(f) == obj
    arr = np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000)
    with kompakt.open(tmp_path / "a.kpk", "wb") as f:
        np.save(f, arr)
    with kompakt.open(tmp_path / "a.kpk") as f:
        np.testing.assert_array_equal(np.load(f), arr)
    df = pd.DataFrame({"x": np.arange(50_000), "y": np.random.default_rng(1).random(50_000)})
    with kompakt.open(tmp_path / "d.csv.kpk", "wb") as f:
        df.to_csv(f, index=False)
    with kompakt.open(tmp_path / "d.csv.kpk") as f:
        pd.testing.assert_frame_equal(pd.read_csv(f), df)
    with kompakt.open(tmp_path / "t.csv.kpk", "wt") as f:
        df.to_csv(f, index=False)
    with kompakt.open(tmp_path / "t.csv.kpk", "rt") as f:
        pd.testing.assert_frame_equal(pd.read_csv(f), df)


def test_seek_tell_read_and_readline(tmp_path):
    lines = [f"line {i} {'x' * (i % 97)}\n".encode() for i in range(40_000)]
    data = b"".join(lines)
    path = tmp_path / "lines.kpk"
    with kompakt.open(path, "wb", block_size=65536) as f:
        for line in lines:
            f.write(line)
        assert f.tell() == len(data)
    with kompakt.open(path) as f:
        assert f.readable() and f.seekable() and not f.writable()
        assert len(f) == len(data)
        assert f.readline() == lines[0]
        assert list(f) == lines[1:]
        assert f.read() == b"" and f.read(10) == b""
        rng = np.random.default_rng(2)
        for _ in range(300):
            pos, n = int(rng.integers(0, len(data) + 10)), int(rng.integers(0, 200_000))
            assert f.seek(pos) == pos
            assert f.read(n) == data[pos : pos + n]
            assert f.tell() == min(pos + n, max(pos, len(data))) or pos > len(data)
        f.seek(-5, io.SEEK_END)
        assert f.read() == data[-5:]
        f.seek(100)
        f.seek(10, io.SEEK_CUR)
        buf = bytearray(1000)
        assert f.readinto(buf) == 1000 and bytes(buf) == data[110:1110]
        assert f.peek(10)[:10] == data[1110:1120]
        with pytest.raises(ValueError):
            f.seek(-1)
        with pytest.raises(io.UnsupportedOperation):
            f.write(b"x")
    with pytest.raises(ValueError, match="closed"):
        f.read()


def test_text_mode(tmp_path):
    path = tmp_path / "t.kpk"
    with kompakt.open(path, "wt", encoding="utf-8") as f:
        f.write("héllo\nwörld\n")
    with kompakt.open(path, "rt", encoding="utf-8") as f:
        assert f.read() == "héllo\nwörld\n"


def test_exception_in_with_discards_the_file(tmp_path):
    path = tmp_path / "keep.kpk"
    with kompakt.open(path, "wb") as f:
        f.write(b"old content")
    for mode in ("wb", "wt"):
        with pytest.raises(KeyError):
            with kompakt.open(path, mode) as f:
                f.write(b"new" if mode == "wb" else "new")
                raise KeyError("boom")
        assert kompakt.decompress(path.read_bytes()) == b"old content"
    f = kompakt.open(tmp_path / "abandoned.kpk", "wb")
    f.write(b"never closed")
    del f
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.kpk"]


def test_writing_to_a_file_object(tmp_path):
    buf = io.BytesIO()
    with kompakt.open(buf, "wb") as f:
        f.write(b"abc" * 100_000)
    assert not buf.closed  # the caller's file object stays open
    assert kompakt.decompress(buf.getvalue()) == b"abc" * 100_000
    buf.seek(0)
    with kompakt.open(buf) as f:
        assert f.read(3) == b"abc"


def test_bad_modes_and_options(tmp_path):
    with pytest.raises(ValueError, match="'rb'"):
        kompakt.open(tmp_path / "x", "ab")
    with pytest.raises(ValueError, match="writing"):
        kompakt.open(tmp_path / "x", "rb", codec="lz4")
    with pytest.raises(FileNotFoundError):
        kompakt.open(tmp_path / "missing.kpk")
    with pytest.raises(ValueError, match="text modes"):
        kompakt.open(tmp_path / "x", "wb", encoding="utf-8")
    with pytest.raises(TypeError):
        kompakt.open(tmp_path / "y.kpk", "wb").write("str is not bytes")


def test_unseekable_file_objects_are_refused_for_reading():
    class Pipe(io.RawIOBase):
        def readable(self):
            return True

        def seekable(self):
            return False

    with pytest.raises(TypeError, match="seekable"):
        kompakt.load(Pipe())


def test_exceptions_from_file_objects_propagate():
    class Failing(io.RawIOBase):
        def writable(self):
            return True

        def write(self, b):
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        kompakt.save(np.arange(1_000_000), Failing())


def test_user_exception_survives_a_closed_text_file(tmp_path):
    with pytest.raises(KeyError, match="orig"):
        with kompakt.open(tmp_path / "t.kpk", "wt") as f:
            f.close()
            raise KeyError("orig")


def test_abandoned_writer_warns(tmp_path):
    f = kompakt.open(tmp_path / "a.kpk", "wb")
    f.write(b"data")
    with pytest.warns(ResourceWarning, match="never closed"):
        f.__del__()
    assert not (tmp_path / "a.kpk").exists()


def test_huge_sizes_and_positions(tmp_path):
    path = tmp_path / "s.kpk"
    with kompakt.open(path, "wb") as f:
        f.write(b"0123456789")
        with pytest.raises(io.UnsupportedOperation, match="not seekable"):
            f.seek(0)
    with kompakt.open(path) as f:
        assert f.read(2**64) == b"0123456789"
        f.seek(2**64)
        assert f.read() == b"" and f.read(5) == b"" and f.readinto(bytearray(3)) == 0 and f.readline() == b""


def test_file_objects_returning_nonsense_from_write():
    class Liar(io.RawIOBase):
        def writable(self):
            return True

        def write(self, b):
            return -1

    with pytest.raises(OSError, match="returned -1"):
        kompakt.save(b"x" * 100, Liar())
