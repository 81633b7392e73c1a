"""Table files: pandas, pyarrow (and polars when installed) in and out; column subsets and row
ranges equal slicing the whole table; damage is a CorruptError."""

from __future__ import annotations

import datetime as dt
import os
import pathlib
import random
import string
import subprocess

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kompakt
from helpers import damaged_copies


def frame(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cities = [f"city{i}" for i in range(70)]
    return pd.DataFrame(
        {
            "Logical": pd.array(np.where(rng.random(n) < 0.05, None, rng.random(n) < 0.5), dtype="boolean"),
            "Integer": rng.integers(1, 101, n).astype("int32"),
            "Real": rng.choice(np.round(rng.uniform(0, 100, 20), 2), n),
            "Factor": pd.Categorical.from_codes(rng.integers(0, 70, n), cities),
            "Ordered": pd.Categorical.from_codes(rng.integers(0, 3, n), ["lo", "mid", "hi"], ordered=True),
            "NullableInt": pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(-5, 5, n)), dtype="Int64"),
            "When": pd.date_range("2024-01-01", periods=n, freq="s", tz="Europe/Oslo"),
            "Word": [f"w{x}" for x in rng.integers(0, 1000, n)],
        }
    )


def test_pandas_round_trip_is_exact(tmp_path):
    df = frame(50_000)
    df.index = pd.RangeIndex(100, 100 + 2 * len(df), 2, name="row")
    path = tmp_path / "t.kpk"
    assert kompakt.write_table(df, path) == len(df)
    back = kompakt.read_table(path)
    pd.testing.assert_frame_equal(back, df)
    assert back["Ordered"].cat.ordered
    # Rows and columns: the same as slicing the whole frame, index included.
    part = kompakt.read_table(path, ["Real", "Factor"], rows=slice(16_000, 33_000))
    pd.testing.assert_frame_equal(part, df.iloc[16_000:33_000][["Real", "Factor"]])
    part = kompakt.read_table(str(path), ["Word"], rows=(-5, None))
    pd.testing.assert_frame_equal(part, df.iloc[-5:][["Word"]])


def test_multiindex_and_arrow_output(tmp_path):
    df = pd.DataFrame({"a": [1, 2, 3, 4], "b": ["x", "y", "z", "w"]})
    df.index = pd.MultiIndex.from_tuples([("k", 1), ("k", 2), ("j", 1), ("j", 2)], names=["s", "n"])
    path = tmp_path / "m.kpk"
    kompakt.write_table(df, path)
    pd.testing.assert_frame_equal(kompakt.read_table(path), df)
    pd.testing.assert_frame_equal(kompakt.read_table(path, ["b"], rows=(1, 3)), df.iloc[1:3][["b"]])
    t = kompakt.read_table(path, to="arrow")
    assert isinstance(t, pa.Table) and t.num_rows == 4


def test_pyarrow_types_and_metadata(tmp_path):
    n = 1000
    t = pa.table(
        {
            "i8": pa.array(np.arange(n) % 100 - 50, pa.int8()),
            "u64": pa.array(np.arange(n, dtype=np.uint64) * 2**40),
            "f16": pa.array(np.linspace(0, 1, n).astype(np.float16)),
            "dec": pa.array([None if i % 9 == 0 else i * 1000 for i in range(n)], pa.decimal128(20, 3)),
            "d": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=i % 50) for i in range(n)]),
            "t": pa.array([dt.time(i % 24, 0) for i in range(n)], pa.time64("us")),
            "dur": pa.array(np.arange(n), pa.duration("ms")),
            "bin": pa.array([bytes([i % 256]) * (i % 5) for i in range(n)], pa.large_binary()),
            "fsb": pa.array([i.to_bytes(4, "little") for i in range(n)], pa.binary(4)),
            "null": pa.nulls(n),
            "dict": pa.array(["a", "b", None, "c"] * (n // 4)).dictionary_encode(),
            "list": pa.array([None if i % 13 == 0 else list(range(i % 4)) for i in range(n)]),
            "nested": pa.array(
                [None if i % 17 == 0 else {"x": i, "tags": ["t"] * (i % 3), "p": {"q": i / 2}} for i in range(n)]
            ),
            "map": pa.array(
                [None if i % 11 == 0 else [(f"k{j}", None if j == 1 else i) for j in range(i % 3)] for i in range(n)],
                pa.map_(pa.string(), pa.int64()),
            ),
        }
    )
    path = tmp_path / "a.kpk"
    kompakt.write_table(t, path, metadata={"source": "test"}, rows_per_group=128, codec="lz4")
    f = kompakt.TableFile(path)
    assert f.metadata == {"source": "test"}
    assert f.rows_per_group == 128 and len(f) == n
    assert f.read_arrow().equals(t)
    some = ["dec", "dict", "nested", "map"]
    assert f[100:300, some].equals(t.select(some).slice(100, 200))
    assert f["u64"].equals(t.select(["u64"]))
    batches = list(f.iter_batches(rows_per_batch=300, columns=["i8"]))
    assert pa.Table.from_batches(batches).equals(t.select(["i8"]))
    summary = {c["name"]: c for c in f.summary()}
    # Durations take the integer encodings: 0..127 in each 128-row page, 7 bits, packed.
    assert summary["dur"]["encodings"] == {"bitpack": 8}
    assert summary["dict"]["pages_with_nulls"] == 8


def test_record_batch_reader_streams(tmp_path):
    schema = pa.schema([("x", pa.int64()), ("s", pa.string())])

    def batches():
        for i in range(20):
            yield pa.record_batch([pa.array(range(i * 777, (i + 1) * 777)), pa.array([str(i)] * 777)], schema=schema)

    path = tmp_path / "s.kpk"
    n = kompakt.write_table(pa.RecordBatchReader.from_batches(schema, batches()), path, rows_per_group=1000)
    assert n == 20 * 777
    t = kompakt.read_table(path, to="arrow")
    assert t.column("x").to_pylist() == list(range(n))


def test_polars_in_and_out(tmp_path):
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"a": [1, 2, None], "s": ["x", None, "z"]})
    path = tmp_path / "p.kpk"
    kompakt.write_table(df, path)
    back = kompakt.read_table(path, to="polars")
    assert back.equals(df)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(0, 600),
    rows_per_group=st.sampled_from([1, 7, 64, 100, 1024]),
    start=st.integers(-700, 700),
    stop=st.integers(-700, 700),
    cols=st.lists(
        st.sampled_from(["Logical", "Integer", "Real", "Factor", "NullableInt", "When", "Word"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
)
def test_any_slice_equals_slicing_the_frame(tmp_path_factory, n, rows_per_group, start, stop, cols):
    df = frame(n, seed=n)
    path = tmp_path_factory.mktemp("h") / "t.kpk"
    kompakt.write_table(df, path, rows_per_group=rows_per_group)
    got = kompakt.read_table(path, cols, rows=slice(start, stop))
    pd.testing.assert_frame_equal(got, df.iloc[start:stop][cols])


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 600),
    rows_per_group=st.sampled_from([1, 7, 64, 1024]),
    picks=st.lists(st.integers(-10_000, 10_000), max_size=80),
    cols=st.lists(
        st.sampled_from(["Logical", "Integer", "Real", "Factor", "NullableInt", "When", "Word"]),
        max_size=3,
        unique=True,
    ),
)
def test_take_equals_taking_rows_of_the_frame(tmp_path_factory, n, rows_per_group, picks, cols):
    df = frame(n, seed=n)
    path = tmp_path_factory.mktemp("k") / "t.kpk"
    kompakt.write_table(df, path, rows_per_group=rows_per_group)
    rows = [p % n - (n if p < 0 else 0) for p in picks]  # in range, some counted from the end
    got = kompakt.read_table(path, cols, rows=rows)
    pd.testing.assert_frame_equal(got, df.iloc[rows][cols])
    arrow = kompakt.TableFile(path).take(np.array(rows), cols, to="arrow")
    whole = kompakt.read_table(path, cols or None, to="arrow")
    assert (arrow.num_rows, arrow.schema.names) == (len(rows), cols)
    for c in cols:
        assert (
            arrow[c]
            .combine_chunks()
            .equals(whole[c].take(pa.array([r % n for r in rows], pa.int64())).combine_chunks())
        )


def test_take_checks_its_rows(tmp_path):
    path = tmp_path / "t.kpk"
    kompakt.write_table(pa.table({"a": range(10), "s": [str(i) for i in range(10)]}), path)
    t = kompakt.TableFile(path)
    assert t.take(range(9, -1, -3), to="arrow")["a"].to_pylist() == [9, 6, 3, 0]
    assert t[[2, 2, -1]]["s"].to_pylist() == ["2", "2", "9"]
    assert t.take([], ["a"], to="arrow").num_rows == 0
    assert t.take(np.array([3], dtype=np.uint8), to="polars")["s"].to_list() == ["3"]
    with pytest.raises(IndexError, match="row 10 out of range for a table of 10 rows"):
        t.take([1, 10])
    with pytest.raises(IndexError, match="row -11 out of range"):
        t.take([-11])
    with pytest.raises(TypeError, match="ints"):
        t.take([1.5])
    with pytest.raises(TypeError, match="ints"):
        t.take(np.array([True, False]))


@settings(max_examples=20, deadline=None)
@given(
    rows_per_group=st.sampled_from([1, 7, 100, 1024]),
    start=st.integers(0, 700),
    length=st.integers(0, 700),
    cols=st.permutations(["Word", "Integer", "Ordered", "Logical", "When", "Real"]).map(lambda c: c[:4]),
)
def test_arrow_reads_of_mixed_chunkings_equal_the_table(tmp_path_factory, rows_per_group, start, length, cols):
    # Fixed-width and dictionary columns come back in one chunk, strings in one per row group:
    # the two kinds cross as separate streams and must be put back in the order asked for.
    t = pa.Table.from_pandas(frame(600, seed=rows_per_group), preserve_index=False)
    path = tmp_path_factory.mktemp("g") / "t.kpk"
    kompakt.write_table(t, path, rows_per_group=rows_per_group)
    got = kompakt.read_table(path, cols, rows=slice(start, start + length), to="arrow")
    want = t.select(cols).slice(start, length)
    assert got.schema.names == cols
    assert got.schema.field("Ordered").type.ordered if "Ordered" in cols else True
    assert got.equals(want)
    assert got.schema.metadata == kompakt.TableFile(path).schema.metadata
    for name in set(cols) - {"Word"}:
        assert got.column(name).num_chunks <= 1


def test_bad_arguments(tmp_path):
    path = tmp_path / "t.kpk"
    kompakt.write_table(pd.DataFrame({"a": [1, 2, 3]}), path)
    with pytest.raises(ValueError, match="one of"):
        kompakt.read_table(path, ["nope"])
    with pytest.raises(ValueError, match="to must be"):
        kompakt.read_table(path, to="numpy")
    with pytest.raises(ValueError, match="step"):
        kompakt.read_table(path, rows=slice(0, 3, 2))
    with pytest.raises(TypeError, match="DataFrame"):
        kompakt.write_table([1, 2, 3], path)
    with pytest.raises(TypeError, match=r"append_table takes .* \(the data comes first, then the path\)"):
        kompakt.append_table(path, pa.table({"a": [1]}))  # arguments swapped
    with pytest.raises(ValueError, match="codec"):
        kompakt.write_table(pd.DataFrame({"a": [1]}), path, codec="brotli")
    with pytest.raises(ValueError, match="supported"):
        kompakt.write_table(pa.table({"m": pa.array([(1, 2, 3)], pa.month_day_nano_interval())}), path)
    with pytest.raises(FileNotFoundError):
        kompakt.read_table(tmp_path / "missing.kpk")
    # A failed write left the good file alone.
    assert kompakt.read_table(path)["a"].tolist() == [1, 2, 3]
    obj = tmp_path / "obj.kpk"
    kompakt.save({"not": "a table"}, obj)
    with pytest.raises(ValueError, match="not a table"):
        kompakt.TableFile(obj)


def test_damage_is_corrupt_error(tmp_path):
    path = tmp_path / "t.kpk"
    kompakt.write_table(frame(3000), path, rows_per_group=500)
    good = path.read_bytes()
    bad = tmp_path / "bad.kpk"
    expected = kompakt.read_table(path, to="arrow")
    for data in damaged_copies(good, 40, seed=1, mask=0x04):
        bad.write_bytes(bytes(data))
        try:
            got = kompakt.read_table(bad, to="arrow")
        except kompakt.CorruptError:
            continue
        # A read need not look at every stream (the row groups' statistics): then it returns
        # the data as written, and verify() finds the damage.
        assert got.equals(expected)
        with pytest.raises(kompakt.CorruptError):
            kompakt.TableFile(bad).verify()
    bad.write_bytes(good[: len(good) // 2])
    with pytest.raises(kompakt.CorruptError):
        kompakt.TableFile(bad)


def test_pathlib_and_cli_inspect(tmp_path, cli):
    import subprocess

    path = pathlib.Path(tmp_path) / "t.kpk"
    kompakt.write_table(frame(1000), path)
    out = subprocess.run([cli, "inspect", os.fspath(path)], capture_output=True, text=True, check=True).stdout
    assert "table: 1000 rows x 8 columns" in out
    assert "Factor" in out and "bitpack " in out and "dict " in out
    out = subprocess.run(
        [cli, "head", "-n", "3", "--columns", "Integer,Word", os.fspath(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.count("\n") >= 4 and "Word" in out
    # Rows by number, in the order given; a row past the end names the table's size.
    df = frame(1000)
    out = subprocess.run(
        [cli, "head", "--take", "999,0,500,0", "--columns", "Integer", os.fspath(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = out.splitlines()
    assert [int(x) for x in lines[1:5]] == [int(df["Integer"].iloc[i]) for i in (999, 0, 500, 0)]
    assert lines[5] == "[4 rows by number, of 1000 rows]"
    bad = subprocess.run([cli, "head", "--take", "1000", os.fspath(path)], capture_output=True, text=True)
    assert bad.returncode != 0 and "1000 rows" in bad.stderr


def test_append_pandas_with_new_categories(tmp_path):
    path = tmp_path / "log.kpk"
    a = pd.DataFrame({"city": pd.Categorical(["Oslo", "Lima"] * 600), "n": np.arange(1200, dtype="int64")})
    b = pd.DataFrame({"city": pd.Categorical(["Quito", "Oslo"] * 50), "n": np.arange(1200, 1300, dtype="int64")})
    kompakt.write_table(a, path, rows_per_group=500)
    assert kompakt.append_table(b, path) == 100
    assert (
        kompakt.append_table(
            pa.table(
                {
                    "city": pa.array(["Accra"]).dictionary_encode().cast(pa.dictionary(pa.int8(), pa.large_string())),
                    "n": pa.array([1300]),
                }
            ),
            path,
        )
        == 1
    )
    back = kompakt.read_table(path)
    assert back["n"].tolist() == list(range(1301))
    assert back["city"].tolist() == ["Oslo", "Lima"] * 600 + ["Quito", "Oslo"] * 50 + ["Accra"]
    assert set(back["city"].cat.categories) == {"Oslo", "Lima", "Quito", "Accra"}
    assert kompakt.TableFile(path).rows_per_group == 500
    assert not os.path.exists(str(path) + ".kompakt-journal")
    with pytest.raises(ValueError, match="in the table"):
        kompakt.append_table(pa.table({"city": pa.array(["x"]), "n": pa.array([1], pa.int32())}), path)
    # A failed append changed nothing.
    assert kompakt.TableFile(path).num_rows == 1301


def _generic(path, columns=None, rows=None) -> pd.DataFrame:
    """What pyarrow's own conversion gives for the same read (the reference for the fast path)."""
    t = kompakt.TableFile(path)
    start, stop = t._range(rows)
    df = t.read(columns, rows, to="arrow").to_pandas()
    meta = t._pandas_metadata()
    if meta:
        kompakt._table._shift_range_index(df, meta, start, t.num_rows)
    return df


def _same(fast: pd.DataFrame, ref: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(fast, ref, check_exact=True, check_index_type=True, check_column_type=True)
    assert list(fast.dtypes) == list(ref.dtypes)
    assert fast.columns.dtype == ref.columns.dtype and type(fast.index) is type(ref.index)
    assert fast.index.name == ref.index.name
    for c in fast.columns:
        if isinstance(fast[c].dtype, pd.CategoricalDtype):
            assert fast[c].cat.codes.dtype == ref[c].cat.codes.dtype
            assert fast[c].cat.categories.dtype == ref[c].cat.categories.dtype


@settings(max_examples=int(os.environ.get("KOMPAKT_EXAMPLES", "40")), deadline=None)
@given(
    n=st.integers(0, 3000),
    seed=st.integers(0, 2**32 - 1),
    index=st.sampled_from(["default", "shifted", "none", "named"]),
    nulls=st.booleans(),
    window=st.tuples(st.integers(0, 3000), st.integers(0, 3000)),
)
def test_simple_frames_equal_pyarrows_conversion(tmp_path_factory, n, seed, index, nulls, window):
    """Frames of numeric, bool, nullable bool and categorical columns take kompakt's own path
    to pandas: it must give exactly what pyarrow's to_pandas gives, for every slice."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "i8": rng.integers(-100, 100, n).astype("int8"),
            "u32": rng.integers(0, 2**32, n, dtype=np.uint64).astype("uint32"),
            "f32": rng.random(n).astype("float32"),
            "f64": rng.random(n),
            "flag": rng.random(n) < 0.3,
            "maybe": pd.array(
                np.where(rng.random(n) < (0.2 if nulls else 0), None, rng.random(n) < 0.5), dtype="boolean"
            ),
            "city": pd.Categorical.from_codes(
                np.where(rng.random(n) < (0.1 if nulls else 0), -1, rng.integers(0, 300, n)),
                [f"c{i}" for i in range(300)],
            ),
            "size": pd.Categorical.from_codes(rng.integers(0, 3, n), ["S", "M", "L"], ordered=True),
        }
    )
    if index == "shifted":
        df.index = pd.RangeIndex(7, 7 + 3 * n, 3)
    elif index == "named":
        df.index = pd.RangeIndex(n, name="row")
    path = tmp_path_factory.mktemp("simple") / "t.kpk"
    if index == "none":
        kompakt.write_table(pa.Table.from_pandas(df, preserve_index=False), path)
    else:
        kompakt.write_table(df, path, rows_per_group=512)
    t = kompakt.TableFile(path)
    a, b = sorted(x % (n + 1) for x in window)
    for columns, rows in [
        (None, None),
        (None, slice(a, b)),
        (["city", "maybe"], (a, b)),
        (["size", "f32"], slice(b, None)),
    ]:
        fast = t.read(columns, rows)
        taken = _simple(t, columns, rows)
        assert taken is not None or n == 0, "these frames take the fast path (empty dictionaries do not)"
        _same(fast, _generic(path, columns, rows))
        expected = df.iloc[t._range(rows)[0] : t._range(rows)[1]]
        if columns is not None:
            expected = expected[columns]
        if index == "none":
            expected = expected.reset_index(drop=True)
        pd.testing.assert_frame_equal(fast, expected)


def _simple(t, columns, rows):
    """kompakt's own frame of a read through Arrow alone (None outside the simple case)."""
    table = t.read_arrow(columns, rows)
    start, stop = t._range(rows)
    return kompakt._table._simple_frame(
        table.column_names,
        dict(zip(table.column_names, table.columns)),
        stop - start,
        t._pandas_metadata(),
        start,
        t.num_rows,
        {},
    )


def test_frames_outside_the_simple_case_use_pyarrows_conversion(tmp_path):
    df = frame(2000)
    path = tmp_path / "t.kpk"
    kompakt.write_table(df, path)
    t = kompakt.TableFile(path)
    meta = t._pandas_metadata()
    # Nullable integers, time zones and strings: not the simple case.
    assert meta
    assert _simple(t, None, None) is None
    assert _simple(t, ["Logical", "Factor", "Real"], None) is not None
    _same(
        t.read(["Logical", "Factor", "Real"], slice(100, 1300)),
        _generic(path, ["Logical", "Factor", "Real"], slice(100, 1300)),
    )
    # Numeric columns decoded into numpy, the others through Arrow, put together for pyarrow.
    _same(t.read(), _generic(path))
    _same(t.read(rows=slice(100, 1300)), _generic(path, rows=slice(100, 1300)))


def test_numeric_columns_decode_into_numpy_unless_they_have_nulls(tmp_path):
    n = 5000
    df = pd.DataFrame(
        {
            "i": np.arange(n, dtype="int64") * 7919 % 100_003,
            "f": np.where(np.arange(n) % 1000 == 3, np.nan, np.arange(n) / 8),
            "u": np.arange(n, dtype="uint16"),
        }
    )
    path = tmp_path / "n.kpk"
    kompakt.write_table(df, path, rows_per_group=1024)
    t = kompakt.TableFile(path)
    direct, blocks = t._read_numpy([0, 1, 2], t._pandas_metadata(), 10, 4000, None)
    assert sorted(direct) == [0, 2]  # "f" has nulls (pandas' NaN is Arrow's null)
    assert direct[0].flags.writeable and direct[0].base.flags.owndata
    assert [(b.shape, m) for b, m in blocks] == [((1, 3990), [0]), ((1, 3990), [2])]
    np.testing.assert_array_equal(direct[0], df["i"].to_numpy()[10:4000])
    got = t.read(rows=slice(10, 4000))
    pd.testing.assert_frame_equal(got, df.iloc[10:4000])
    got.loc[got.index[0], "i"] = -1  # a frame of its own, writable
    assert t.read(rows=slice(10, 11))["i"].iloc[0] == df["i"].iloc[10]
    # Nulls only in pages outside the rows read do not keep a column from numpy.
    # (Row groups of 1024: the NaNs at 3, 1003, ..., 4003 leave only the last, 4096..5000.)
    assert sorted(t._read_numpy([0, 1, 2], t._pandas_metadata(), 4096, 5000, None)[0]) == [0, 1, 2]
    _same(t.read(rows=slice(4096, 5000)), _generic(path, rows=slice(4096, 5000)))


def test_numeric_columns_of_one_dtype_share_a_block_as_in_to_pandas(tmp_path):
    rng = np.random.default_rng(5)
    n = 3000
    df = pd.DataFrame({f"c{i}": rng.integers(0, 10**6, n).astype("int32") for i in range(6)})
    df.insert(2, "x", rng.random(n))
    df.insert(4, "cat", pd.Categorical.from_codes(rng.integers(0, 3, n), ["a", "b", "c"]))
    df["y"] = rng.random(n)
    path = tmp_path / "b.kpk"
    kompakt.write_table(df, path, rows_per_group=1000)
    t = kompakt.TableFile(path)
    direct, blocks = t._read_numpy(list(range(len(df.columns))), t._pandas_metadata(), 0, n, None)
    assert sorted((b.dtype.name, b.shape, m) for b, m in blocks) == [
        ("float64", (2, n), [2, 8]),
        ("int32", (6, n), [0, 1, 3, 5, 6, 7]),
    ]
    for rows, cols in [(slice(None), None), (slice(500, 2500), ["y", "c5", "cat", "c0", "x"])]:
        got = t.read(cols, rows)
        want = df.iloc[rows] if cols is None else df.iloc[rows][cols]
        pd.testing.assert_frame_equal(got, want)
        _same(got, _generic(path, cols, rows))
        if hasattr(getattr(pd.api, "internals", None), "create_dataframe_from_blocks"):
            # One block per numpy dtype and one for the categorical, as pyarrow builds it.
            assert got._mgr.nblocks == pa.Table.from_pandas(want).to_pandas()._mgr.nblocks
        got.iloc[0, 0] = got.iloc[1, 0]  # writable, and not shared with the next read
    assert t.read().equals(df)


def test_a_numeric_column_numpy_cannot_take_goes_through_arrow(tmp_path):
    # read_into says a page holds nulls the index did not announce: that column is read through
    # Arrow, the others of its dtype keep their rows of the block, and the frame is the same.
    rng = np.random.default_rng(9)
    n = 2000
    df = pd.DataFrame({f"c{i}": rng.integers(0, 1000, n).astype("int32") for i in range(3)})
    df["x"] = rng.random(n)
    path = tmp_path / "r.kpk"
    kompakt.write_table(df, path, rows_per_group=500)
    t = kompakt.TableFile(path)
    core = t._core

    class Refusing:
        def __getattr__(self, name):
            return getattr(core, name)

        def read_into(self, column, start, stop, out, threads=None):
            return core.read_into(column, start, stop, out, threads) and column != 1

    t._core = Refusing()
    direct, blocks = t._read_numpy([0, 1, 2, 3], t._pandas_metadata(), 0, n, None)
    assert sorted(direct) == [0, 2, 3]
    assert [m for _, m in blocks] == [[3]]  # the int32 block is not used as a block
    for cols in (None, ["c2", "c1", "x"]):
        got = t.read(cols)
        pd.testing.assert_frame_equal(got, df if cols is None else df[cols])
        _same(got, _generic(path, cols))


def test_a_table_without_columns_keeps_its_rows(tmp_path):
    path = tmp_path / "z.kpk"
    kompakt.write_table(pa.table({"a": [1, 2, 3]}).drop_columns(["a"]), path)
    assert kompakt.TableFile(path).num_rows == 3
    for columns in (None, []):
        assert kompakt.read_table(path, columns, to="arrow").num_rows == 3
        assert kompakt.read_table(path, columns, rows=(1, 3), to="arrow").num_rows == 2


def test_pandas_metadata_that_does_not_fit_the_arrow_type_is_not_trusted(tmp_path):
    # pandas says int64, Arrow holds time64 (a cast that kept the old metadata): pyarrow's
    # conversion decides, with a materialized index (not the simple case) and without.
    n = 100
    for index in [None, pd.Index(np.arange(n)[::-1], name="k")]:
        src = pa.Table.from_pandas(pd.DataFrame({"a": np.arange(n), "b": np.arange(n)}, index=index))
        fields = [pa.field("a", pa.time64("us")), pa.field("b", pa.int64())] + [pa.field("k", pa.int64())] * (
            index is not None
        )
        table = src.cast(pa.schema(fields, metadata=src.schema.metadata))
        path = tmp_path / f"t{index is None}.kpk"
        kompakt.write_table(table, path)
        _same(kompakt.read_table(path), _generic(path))


def test_frames_are_writable_and_share_nothing_mutable(tmp_path):
    df = pd.DataFrame({"a": np.arange(10), "c": pd.Categorical(["x", "y"] * 5)})
    path = tmp_path / "w.kpk"
    kompakt.write_table(df, path)
    first = kompakt.read_table(path)
    first.loc[1, "a"] = 42  # the Arrow buffers are read-only; the frame must not be
    assert first["a"][1] == 42
    first.columns.name = "renamed"
    first["c"].cat.categories.name = "renamed"
    second = kompakt.read_table(path)
    assert second.columns.name is None and second["c"].cat.categories.name is None
    pd.testing.assert_frame_equal(second, df)


def test_appended_range_index_and_unsigned_keys_match_pyarrow(tmp_path):
    path = tmp_path / "a.kpk"
    df = pd.DataFrame({"x": np.arange(3, dtype="int64")}, index=pd.RangeIndex(10, 13))
    kompakt.write_table(df, path)
    kompakt.append_table(pd.DataFrame({"x": np.arange(2, dtype="int64")}, index=pd.RangeIndex(13, 15)), path)
    # The stored range no longer has the table's length: pyarrow numbers the rows from 0.
    for rows in (None, slice(1, 4)):
        _same(kompakt.read_table(path, rows=rows), _generic(path, None, rows))
    # Unsigned dictionary keys with nulls take pyarrow's conversion.
    cat = pd.DataFrame({"c": pd.Categorical(["a", None, "b"])})
    t = pa.Table.from_pandas(cat, preserve_index=False)
    t = t.cast(pa.schema([pa.field("c", pa.dictionary(pa.uint8(), pa.string()))], metadata=t.schema.metadata))
    kompakt.write_table(t, tmp_path / "u.kpk")
    _same(kompakt.read_table(tmp_path / "u.kpk"), _generic(tmp_path / "u.kpk"))


def test_sort_keys_are_checked_recorded_and_kept(tmp_path, cli):
    path = tmp_path / "sorted.kpk"
    df = pd.DataFrame(
        {
            "day": [1, 1, 2, 2, 3],
            "price": [9.0, 3.0, 5.0, None, 1.0],
            "city": pd.Categorical(["Lima", "Oslo", "Oslo", "Rome", "Bern"]),
        }
    )
    kompakt.write_table(df, path, sorted_by=["day", ("price", "descending"), ("city", "ascending", "last")])
    t = kompakt.TableFile(path)
    assert t.sorted_by == [("day", "ascending", "last"), ("price", "descending", "last"), ("city", "ascending", "last")]
    out = subprocess.run([str(cli), "inspect", str(path)], capture_output=True, text=True, check=True).stdout
    assert 'sorted by: "day" ascending, nulls last; "price" descending' in out
    out = subprocess.run([str(cli), "verify", str(path)], capture_output=True, text=True, check=True).stdout
    assert "table of 5 rows, every page decodes, rows in sort-key order, statistics hold" in out
    assert t.verify() == 5
    damaged = bytearray(path.read_bytes())
    damaged[200] ^= 1
    (tmp_path / "damaged.kpk").write_bytes(bytes(damaged))
    with pytest.raises(kompakt.CorruptError):
        kompakt.TableFile(tmp_path / "damaged.kpk").verify()

    kompakt.append_table(df.iloc[4:].assign(day=[4]), path)
    with pytest.raises(ValueError, match=r"row 6 sorts before row 5 by column \"day\""):
        kompakt.append_table(df.iloc[:1], path)
    assert kompakt.TableFile(path).num_rows == 6
    assert kompakt.read_table(path)["day"].tolist() == [1, 1, 2, 2, 3, 4]

    with pytest.raises(ValueError, match=r"row 1 sorts before row 0 by column \"price\""):
        kompakt.write_table(df, tmp_path / "bad.kpk", sorted_by="price")
    assert not (tmp_path / "bad.kpk").exists()
    assert kompakt.TableFile(path).sorted_by != []
    kompakt.write_table(df, tmp_path / "none.kpk")
    assert kompakt.TableFile(tmp_path / "none.kpk").sorted_by == []
    with pytest.raises(ValueError, match="a column of the table: day, price, city"):
        kompakt.write_table(df, tmp_path / "bad.kpk", sorted_by="nope")
    with pytest.raises(ValueError, match="'ascending' or 'descending'"):
        kompakt.write_table(df, tmp_path / "bad.kpk", sorted_by=[("day", "up")])
    with pytest.raises(ValueError, match="'last' or 'first'"):
        kompakt.write_table(df, tmp_path / "bad.kpk", sorted_by=[("day", "ascending", "middle")])
    kompakt.write_table(df.iloc[::-1], tmp_path / "desc.kpk", sorted_by=("day", "descending"))
    assert kompakt.TableFile(tmp_path / "desc.kpk").sorted_by == [("day", "descending", "last")]
    with pytest.raises(TypeError, match="column names or tuples"):
        kompakt.write_table(df, tmp_path / "bad.kpk", sorted_by=[1])


def test_golden_layout2_table_reads_in_python(repo):
    # tests/golden/v1/table/layout2.kpk (table layout 2), as crates/kompakt-table/tests/golden.rs
    # describes it: runs, and a dictionary with 2-byte codes ("reading").
    path = repo / "tests" / "golden" / "v1" / "table" / "layout2.kpk"
    rows = range(5000)
    t = kompakt.read_table(path, to="arrow")
    assert t.column("day").to_pylist() == [dt.date(1970, 1, 1) + dt.timedelta(days=19_000 + i // 100) for i in rows]
    assert t.column("store").to_pylist() == [None if i % 10 == 7 else 4_000_000 + (i // 80) * 3 for i in rows]
    prices = np.array([[2.5, -0.0, 0.0, np.nan][i // 30 % 4] for i in rows])
    assert t.column("price").to_numpy().tobytes() == prices.tobytes()
    assert t.column("code").to_pylist() == [f"SKU-{i * 7919 % 100_000:05}" for i in rows]
    levels = ["low", "mid", "high"]
    assert t.column("level").to_pylist() == [None if i == 50 else levels[i // 90 % 3] for i in rows]
    assert t.column("reading").to_pylist() == [50.0 + (i * 7919 % 300) * 0.25 for i in rows]
    part = kompakt.read_table(path, ["store", "reading"], rows=(2000, 2100), to="arrow")
    assert part.column(0).to_pylist() == t.column("store").to_pylist()[2000:2100]
    assert part.column(1).to_pylist() == t.column("reading").to_pylist()[2000:2100]


def test_runs_round_trip_and_show_in_inspect(tmp_path, cli):
    n = 50_000
    i = np.arange(n)
    df = pd.DataFrame(
        {
            "day": pd.to_datetime("2024-01-01") + pd.to_timedelta(i // 5000, unit="D"),
            "sensor": (i // 80 % 100).astype("int16"),
            "status": pd.Categorical.from_codes(i // 700 % 3, ["ok", "warn", "fail"]),
            "level": pd.array(np.where(i % 9 == 4, None, i // 300), dtype="Int64"),
        }
    )
    path = tmp_path / "runs.kpk"
    kompakt.write_table(df, path, rows_per_group=4096)
    pd.testing.assert_frame_equal(kompakt.read_table(path), df)
    pd.testing.assert_frame_equal(
        kompakt.read_table(path, ["sensor", "level"], rows=(4000, 4200)),
        df[["sensor", "level"]].iloc[4000:4200].reset_index(drop=True).set_axis(pd.RangeIndex(4000, 4200)),
    )
    out = subprocess.run([cli, "inspect", str(path)], capture_output=True, text=True, check=True).stdout
    assert "table layout 2" in out
    for name in ("day", "sensor", "status", "level"):
        line = next(x for x in out.splitlines() if x.startswith(name + " "))
        assert "runs 13" in line, line


def test_plain_strings_take_zstd_where_it_pays_unless_a_codec_is_named(tmp_path):
    n = 40_000
    rng = random.Random(7)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10))) for _ in range(1000)]
    t = pa.table(
        {
            "url": [f"https://example.com/{rng.choice(words)}/{rng.randrange(10**6)}" for i in range(n)],
            "city": [("Oslo", "Lima", "Pune")[i % 3] for i in range(n)],
            "time": [
                f"2013-{1 + i // 40_320:02}-{1 + i // 1440 % 28:02} {i // 60 % 24:02}:{i % 60:02}:00" for i in range(n)
            ],
            # Random printable characters: LZ4 finds nothing, zstd saves under a fifth.
            "noise": ["".join(chr(32 + rng.randrange(95)) for _ in range(24)) for _ in range(n)],
        }
    )
    codecs = {}
    for name, kwargs in [
        ("default", {}),
        ("zstd", {"codec": "zstd:2"}),
        ("level", {"level": 25}),
        ("lz4", {"codec": "lz4"}),
    ]:
        path = tmp_path / f"{name}.kpk"
        kompakt.write_table(t, path, **kwargs)
        assert kompakt.read_table(path, to="arrow").equals(t)
        codecs[name] = {c["name"]: set(c["codecs"]) for c in kompakt.TableFile(path).summary()}
    # By default zstd where it stores a page in under 0.8x LZ4's bytes (text), else LZ4,
    # which leaves the noise as it is.
    assert codecs["default"]["url"] == {"zstd"}
    assert codecs["default"]["time"] == {"zstd"}
    assert codecs["default"]["noise"] == {"none"}
    assert codecs["zstd"]["url"] == {"zstd"}
    assert codecs["level"]["url"] == {"zstd"}
    assert codecs["lz4"]["url"] == {"lz4"}
    # Dictionary-encoded strings keep the table's codec.
    assert "lz4" not in codecs["default"]["city"]


@pytest.mark.parametrize("infer_string", [True, False])
@pytest.mark.filterwarnings("ignore:.*infer_string")
def test_strings_read_into_pandas_as_pyarrow_converts_them(tmp_path, infer_string):
    # Into pandas, utf8 and binary columns are decoded with 64-bit offsets (what pandas'
    # Arrow-backed str columns hold); the frame must be what to_pandas makes of the stored
    # types, with pandas' Arrow-backed strings and with Python str objects alike.
    n = 3000
    words = [None if i % 11 == 0 else ("é" if i % 5 == 0 else "w") * (i % 7) + str(i) for i in range(n)]
    table = pa.table(
        {
            "word": pa.array(words, pa.string()),
            "city": pa.array([["Oslo", "Lima", "Łódź"][i % 3] for i in range(n)], pa.string()),
            "blob": pa.array([None if i % 13 == 0 else bytes([i % 256]) * (i % 4) for i in range(n)], pa.binary()),
            "large": pa.array(words, pa.large_string()),
            "x": pa.array(range(n), pa.int64()),
        }
    )
    for name, data in (("arrow", table), ("pandas", table.to_pandas())):
        path = tmp_path / f"{name}.kpk"
        kompakt.write_table(data, path, rows_per_group=1000)
        stored = kompakt.read_table(path, to="arrow")
        if name == "arrow":
            assert stored.schema.field("word").type == pa.string()
        # (pandas 3 deprecates turning Arrow-backed strings off, and warns; it still can.)
        with pd.option_context("future.infer_string", infer_string):
            for rows in (None, slice(900, 2100), slice(5, 5)):
                want = (
                    stored.to_pandas() if rows is None else stored.slice(rows.start, rows.stop - rows.start).to_pandas()
                )
                if rows is not None and name == "pandas":
                    want.index = pd.RangeIndex(rows.start, rows.stop)
                got = kompakt.read_table(path, rows=rows)
                pd.testing.assert_frame_equal(got, want)
            got = kompakt.read_table(path, ["blob", "word"])
            pd.testing.assert_frame_equal(got, stored.select(["blob", "word"]).to_pandas())


def test_strings_read_into_polars_as_views_equal_the_stored_strings(tmp_path):
    # Into polars, utf8 and binary columns are decoded as views (short values inline, long
    # ones pointing into their page, dictionary pages into their dictionary).
    pl = pytest.importorskip("polars")
    n = 5000
    long = [None if i % 9 == 0 else f"https://example.com/{'ü' * (i % 3)}{i}" for i in range(n)]
    table = pa.table(
        {
            "short": pa.array([None if i % 7 == 0 else "ab"[: i % 3] + str(i % 10) for i in range(n)], pa.string()),
            "long": pa.array(long, pa.string()),
            "few": pa.array([["Oslo", "a city with a long name", "Łódź"][i % 3] for i in range(n)], pa.string()),
            "blob": pa.array([None if i % 13 == 0 else bytes([i % 256]) * (i % 20) for i in range(n)], pa.binary()),
            "x": pa.array(range(n), pa.int64()),
        }
    )
    path = tmp_path / "s.kpk"
    kompakt.write_table(table, path, rows_per_group=1000)
    summary = {c["name"]: c["encodings"] for c in kompakt.TableFile(path).summary()}
    assert "column dict" in summary["few"] and "plain" in summary["long"]
    for rows in (None, slice(900, 2100), slice(4999, 5000), slice(7, 7)):
        got = kompakt.read_table(path, rows=rows, to="polars")
        want = pl.from_arrow(kompakt.read_table(path, rows=rows, to="arrow"))
        assert got.schema == want.schema
        assert got.equals(want)
    assert kompakt.read_table(path, ["blob", "few"], to="polars").equals(pl.from_arrow(table.select(["blob", "few"])))


def test_a_start_stop_range_must_lie_within_the_table(tmp_path):
    # One rule with `kompakt cat --range`: an explicit (start, stop) past the end or backwards
    # is an error naming the valid range; a slice is clamped, as in Python.
    path = tmp_path / "ten.kpk"
    kompakt.write_table(pd.DataFrame({"a": range(10)}), path)
    with pytest.raises(
        kompakt.OptionError, match=r"outside the table's 10 rows: \(start, stop\) must lie within 0 to 10"
    ):
        kompakt.read_table(path, rows=(100, 200))
    with pytest.raises(kompakt.OptionError, match="ends before it starts"):
        kompakt.read_table(path, rows=(5, 2))
    assert len(kompakt.read_table(path, rows=slice(100, 200))) == 0
    assert kompakt.read_table(path, rows=(-3, None))["a"].tolist() == [7, 8, 9]
    assert kompakt.read_table(path, rows=(0, 10))["a"].tolist() == list(range(10))


def test_cli_head_shows_times_in_their_columns_time_zone(tmp_path, cli):
    import subprocess

    path = tmp_path / "tz.kpk"
    when = pd.Timestamp("2026-07-01 12:00:00", tz="UTC")
    kompakt.write_table(
        pd.DataFrame(
            {
                "berlin": pd.Series([when]).dt.tz_convert("Europe/Berlin"),
                "offset": pd.Series([when]).dt.tz_convert("-05:00"),
                "naive": [when.tz_localize(None)],
            }
        ),
        path,
    )
    out = subprocess.run([cli, "head", os.fspath(path)], capture_output=True, text=True, check=True).stdout
    row = out.splitlines()[1]
    assert "2026-07-01 14:00:00 CEST" in row or "2026-07-01 14:00:00 +02:00" in row, out
    assert "2026-07-01 07:00:00 -05:00" in row, out
    assert row.rstrip().endswith("2026-07-01 12:00:00"), out
