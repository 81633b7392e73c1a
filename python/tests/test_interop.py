"""Files cross between the CLI and Python; golden files read the same from Python."""

import datetime
import math
import subprocess

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import xxhash

import kompakt
from helpers import random_bytes
from kompakt import _core

GOLDEN_OBJECT = "python-object.kpk"


def golden_object():
    """The object stored in tests/golden/v1/python-object.kpk (written once, never rewritten)."""
    return {
        "floats": np.linspace(0.0, 1.0, 100_000),
        "ints": np.arange(50_000, dtype=np.int32),
        "times": np.arange(10_000).astype("M8[s]"),
        "text": "kompakt golden",
        "nested": [1, (2, 3.5), {"k": b"bytes"}],
    }


def run(cli, *args, **kw):
    return subprocess.run([str(cli), *map(str, args)], check=True, capture_output=True, **kw)


def test_cli_files_read_in_python(cli, tmp_path):
    data = random_bytes(2_000_000, 1000, seed=0, dtype=np.int64)
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    for codec in ("lz4", "zstd:3", "gzip", "none"):
        out = tmp_path / f"in.{codec.replace(':', '')}.kpk"
        run(cli, "compress", "-q", "-c", codec, "-t", "8", "-b", "256K", src, "-o", out)
        assert kompakt.decompress(out.read_bytes()) == data
        with kompakt.open(out) as f:
            f.seek(123_456)
            assert f.read(1000) == data[123_456:124_456]
        assert kompakt.info(out)["raw_size"] == len(data)


def test_python_files_read_by_the_cli(cli, tmp_path):
    data = np.arange(3_000_000, dtype=np.float64)
    path = tmp_path / "py.kpk"
    path.write_bytes(kompakt.compress(data, codec="lz4hc:4"))
    out = tmp_path / "py.bin"
    run(cli, "decompress", "-q", path, "-o", out)
    assert out.read_bytes() == data.tobytes()
    with kompakt.open(tmp_path / "stream.kpk", "wb") as f:
        f.write(data)
    assert run(cli, "cat", tmp_path / "stream.kpk").stdout == data.tobytes()
    # An object file is a valid kompakt file: the CLI verifies it and extracts its streams.
    obj = {"a": data, "b": "text"}
    kompakt.save(obj, tmp_path / "obj.kpk")
    assert b"OK" in run(cli, "verify", tmp_path / "obj.kpk").stdout
    run(cli, "decompress", "-q", "-s", "1", tmp_path / "obj.kpk", "-o", tmp_path / "buffer.bin")
    assert (tmp_path / "buffer.bin").read_bytes() == data.tobytes()
    inspect = run(cli, "inspect", "--json", tmp_path / "obj.kpk", text=True).stdout
    import json

    cli_info = json.loads(inspect)
    py_info = kompakt.info(tmp_path / "obj.kpk")
    for key in ("format_version", "file_size", "raw_size", "metadata_size"):
        assert cli_info[key] == py_info[key]
    assert cli_info["streams"] == py_info["streams"]


def test_golden_files_read_in_python(repo):
    golden = repo / "tests" / "golden" / "v1"
    expected = {}
    counts = {}
    for line in (golden / "MANIFEST.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, key, *rest = line.split("\t")
        if key == "streams":
            counts[name] = int(rest[0])
        elif key == "meta":
            expected[(name, "meta")] = bytes.fromhex(rest[0])
        else:
            expected[(name, int(key))] = (int(rest[0]), rest[1])
    assert len(counts) >= 16
    for name, n in counts.items():
        reader = _core.FileReader(golden / name)
        lengths = reader.stream_lengths()
        assert len(lengths) == n, name
        for s in range(n):
            raw_len, digest = expected[(name, s)]
            data = reader.read_stream(s)
            assert len(data) == raw_len and xxhash.xxh3_64_hexdigest(data) == digest, (name, s)
        if (name, "meta") in expected:
            assert reader.metadata() == expected[(name, "meta")]
        reader.verify()


def golden_small_object():
    """The object in tests/golden/v3/python-object.kpk: a compact file (format 3.0), written
    once with ``kompakt.save(golden_small_object(), path)``."""
    return {"id": 7, "name": "target_7", "ok": True, "x": (1.5, 2.25)}


def test_golden_compact_object_file_loads(repo, tmp_path):
    path = repo / "tests" / "golden" / "v3" / "python-object.kpk"
    for trusted in (True, False):
        assert kompakt.load(path, trusted=trusted) == golden_small_object()
    assert kompakt.info(path)["format_version"] == "3.0"
    # A save of the same object today is compact and as small.
    kompakt.save(golden_small_object(), tmp_path / "again.kpk")
    again = (tmp_path / "again.kpk").read_bytes()
    assert again[4:6] == b"\x03\x00" and len(again) <= path.stat().st_size
    with pytest.raises(ValueError, match="kpk_read"):
        kompakt.load(repo / "tests" / "golden" / "v3" / "r-object.kpk")


def test_golden_object_file_loads(repo):
    path = repo / "tests" / "golden" / "v1" / GOLDEN_OBJECT
    want = golden_object()
    for trusted in (True, False):
        got = kompakt.load(path, trusted=trusted)
        assert got.keys() == want.keys()
        for k in ("floats", "ints", "times"):
            assert got[k].dtype == want[k].dtype
            np.testing.assert_array_equal(got[k], want[k])
        assert got["text"] == want["text"] and got["nested"] == want["nested"]


if __name__ == "__main__":
    # Writes the golden object file once: python3 python/tests/test_interop.py
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "tests" / "golden" / "v1" / GOLDEN_OBJECT
    if path.exists():
        raise SystemExit(f"{path} exists: golden files are never rewritten")
    kompakt.save(golden_object(), path, codec="zstd:3")


def test_an_r_object_file_is_refused_with_a_message_naming_r(repo):
    path = repo / "tests" / "golden" / "v1" / "r-object.kpk"
    with pytest.raises(ValueError, match=r"R object saved by kompakt for R.*kpk_read"):
        kompakt.load(path)
    # The CLI and the stream API read it as data: R's serialization header comes first.
    assert kompakt.decompress(path.read_bytes()).startswith(b"B\n")


def test_the_golden_r_table_reads_as_natural_pandas_and_arrow_types(repo):
    # Written by kompakt for R (r/kompakt/tests/testthat/test-golden.R, golden_r_table()): 40
    # rows, NA every 7th.
    path = repo / "tests" / "golden" / "v1" / "table" / "r-table.kpk"
    schema = kompakt.TableFile(path).schema
    assert schema.field("fct").type == pa.dictionary(pa.int32(), pa.string())
    assert schema.field("ord").type.ordered
    assert schema.field("day").type == pa.date32()
    assert schema.field("when").type == pa.timestamp("us", tz="Europe/Paris")
    assert schema.field("big").type == pa.int64()
    assert schema.field("bytes").type == pa.uint8()
    df = kompakt.read_table(path)
    rows = range(1, 41)
    valid = [i % 7 != 0 for i in rows]
    assert df["lgl"].isna().tolist() == [not v for v in valid]
    assert df["int"].tolist()[:2] == [-19000, -18000]
    assert df["fct"].dtype == "category" and list(df["fct"].cat.categories) == ["low", "mid", "high"]
    assert df["fct"].tolist()[:3] == ["mid", "high", "low"] and pd.isna(df["fct"][6])
    assert df["ord"].cat.ordered
    assert df["chr"][0] == "1 caf\u00e9 \u65e5\u672c" and df["chr"].isna()[6]
    assert df["day"][0] == datetime.date(2026, 11, 28)
    assert df["when"][1] == pd.Timestamp(1795770000 + 2 * 3600.5, unit="s", tz="Europe/Paris")
    assert [v for v, ok in zip(df["big"].tolist(), valid) if ok][:2] == [2**32 + 1, 2 * (2**32 + 1)]
    assert df["big"].isna().tolist() == [not v for v in valid]
    assert df["bytes"].tolist() == list(rows)
    assert df["secs"][0] == 0.25
    dbl = df["dbl"].tolist()
    assert math.isnan(dbl[0]) and dbl[1:4] == [math.inf, -math.inf, 0.0] and math.copysign(1, dbl[3]) == -1
