"""Row-group statistics (TableFile.statistics) and the row groups they let filtered reads skip:
whatever is skipped, a filtered read returns exactly the rows pyarrow's own filter keeps."""

from __future__ import annotations

import math
import os

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import kompakt
from kompakt._plan import arrow_condition, plan

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden", "v1", "table")


def test_statistics_per_row_group(tmp_path):
    path = str(tmp_path / "t.kpk")
    t = pa.table(
        {
            "n": pa.array([5, None, 2, 9, None, None], pa.int64()),
            "x": [1.5, float("nan"), -0.0, 0.0, 3.0, float("nan")],
            "s": ["b", "a", "z" * 100, "c", None, "d"],
            "ts": pa.array([3, 1, 2, 8, 9, 7], pa.timestamp("ms", tz="UTC")),
            "tag": pa.array(["p", "q", "p", None, "q", "p"]).dictionary_encode(),
            "l": [[1], None, [], [2, 3], None, None],
        }
    )
    kompakt.write_table(t, path, rows_per_group=2)
    f = kompakt.TableFile(path)
    assert f.num_row_groups == 3
    n = f.statistics("n").to_pydict()
    assert n == {"null_count": [1, 0, 2], "min": [5, 2, None], "max": [5, 9, None]}
    x = f.statistics(1).to_pydict()
    assert x["nan_count"] == [1, 0, 1] and x["null_count"] == [0, 0, 0]
    assert x["min"][:2] == [1.5, 0.0] and math.copysign(1, x["min"][1]) == -1
    assert x["max"] == [1.5, 0.0, 3.0]
    s = f.statistics("s").to_pydict()
    # A long string is bounded by a short one: a prefix below, the prefix raised by one above.
    assert s["min"] == ["a", "c", "d"] and s["max"][1] == "z" * 63 + "{"
    assert f.statistics("ts").column("min").type == pa.timestamp("ms", tz="UTC")
    # Dictionary and nested columns: null counts only.
    assert f.statistics("tag").column_names == ["null_count"]
    assert f.statistics("l").to_pydict() == {"null_count": [1, 0, 2]}
    with pytest.raises(ValueError, match="no_such"):
        f.statistics("no_such")
    assert f.verify() == 6


def test_files_without_statistics_read_and_plan_as_before(tmp_path):
    path = str(tmp_path / "t.kpk")
    kompakt.write_table(pa.table({"a": range(100)}), path, rows_per_group=10, statistics=False)
    assert kompakt.TableFile(path).statistics("a") is None
    assert [(p.start, p.stop) for p in plan(path, None, [("a", ">", 1000)])] == [(0, 100)]
    f = kompakt.TableFile(os.path.join(GOLDEN, "fst.kpk"))
    assert f.statistics("id") is None
    parts = plan(f.path, ["id"], [("id", ">", 10_000)])
    assert [(p.start, p.stop) for p in parts] == [(0, 100)]
    with_stats = kompakt.TableFile(os.path.join(GOLDEN, "statistics.kpk"))
    assert plan(with_stats.path, ["id"], [("id", ">", 10_000)]) == []
    assert [(p.start, p.stop) for p in plan(with_stats.path, ["id"], [("id", ">", 70)])] == [(64, 100)]


def test_unsorted_clustered_columns_skip_row_groups(tmp_path):
    rng = np.random.default_rng(3)
    n = 64_000
    blocks = np.repeat(rng.permutation(64), 1000)
    t = pa.table({"x": blocks + rng.random(n), "city": [f"c{b:02d}" for b in blocks], "v": np.arange(n)})
    path = str(tmp_path / "t.kpk")
    kompakt.write_table(t, path, rows_per_group=1000)
    for filters in ([("x", ">=", 10), ("x", "<", 11)], [("city", "==", "c10")], [("city", "in", ["c10", "c11"])]):
        parts = plan(path, ["v"], filters)
        # One part for the file, reading only the row groups left (not a task per range).
        assert len(parts) == 1
        rows = sum(b - a for a, b in parts[0].row_ranges())
        want = t.filter(arrow_condition(filters))
        assert rows == 1000 * len(set(want.column("city").to_pylist())), filters
        got = kompakt.read_batches(path, ["v"], filters).read_all()
        assert got.column("v").to_pylist() == want.column("v").to_pylist()


values = st.one_of(st.none(), st.integers(-5, 5))
floats = st.one_of(st.none(), st.sampled_from([float("nan"), -0.0, 0.0, 1.5, -2.0, float("inf")]))
strings = st.one_of(st.none(), st.sampled_from(["", "a", "b", "ab", "é" * 40, "\U0010ffff" * 20, "z" * 70]))
ops = st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in"])


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(values, floats, strings), min_size=0, max_size=60),
    rows_per_group=st.integers(1, 9),
    column=st.sampled_from(["i", "f", "s"]),
    op=ops,
    pick=st.integers(0, 1000),
)
# -0.0 "not in" [0.0, -2.0]: pyarrow keeps the row (its hashing tells the zeros apart).
@example(rows=[(None, -0.0, None)], rows_per_group=1, column="f", op="not in", pick=193)
def test_skipping_never_loses_a_row(tmp_path_factory, rows, rows_per_group, column, op, pick):
    path = str(tmp_path_factory.mktemp("prop") / "t.kpk")
    t = pa.table(
        {
            "i": pa.array([r[0] for r in rows], pa.int64()),
            "f": pa.array([r[1] for r in rows], pa.float64()),
            "s": pa.array([r[2] for r in rows], pa.string()),
            "row": pa.array(range(len(rows)), pa.int64()),
        }
    )
    kompakt.write_table(t, path, rows_per_group=rows_per_group)
    pool = {
        "i": list(range(-6, 7)),
        "f": [-0.0, 0.0, 1.5, -2.0, 9.0, float("inf")],
        "s": ["", "a", "ab", "b", "é" * 40, "z" * 70, "zz"],
    }[column]
    value = pool[pick % len(pool)]
    if op in ("in", "not in"):
        value = [value, pool[(pick // 7) % len(pool)]]
    filters = [(column, op, value)]
    got = kompakt.read_batches(path, ["row"], filters).read_all().column("row").to_pylist()
    want = t.filter(arrow_condition(filters)).column("row").to_pylist()
    assert got == want
    # And the plan alone keeps every row group pyarrow finds a match in.
    kept = set()
    for p in plan(path, None, filters):
        for a, b in p.row_ranges():
            kept.update(range(a, b))
    assert set(want) <= kept


def _rows_planned(monkeypatch) -> list[int]:
    """Counts the rows that kompakt.polars' scans plan to read (after skipping)."""
    import kompakt.polars

    planned: list[int] = []
    real_plan = kompakt.polars.plan

    def counting_plan(*args, **kwargs):
        parts = real_plan(*args, **kwargs)
        planned.append(sum(b - a for p in parts for a, b in p.row_ranges()))
        return parts

    monkeypatch.setattr(kompakt.polars, "plan", counting_plan)
    return planned


def test_polars_predicates_skip_row_groups(tmp_path, monkeypatch):
    import polars as pl

    import kompakt.polars

    rng = np.random.default_rng(4)
    n = 64_000
    blocks = np.repeat(rng.permutation(64), 1000)
    t = pa.table({"ts": np.arange(n), "x": blocks + rng.random(n), "city": [f"c{b:02d}" for b in blocks]})
    path = str(tmp_path / "t.kpk")
    kompakt.write_table(t, path, rows_per_group=1000, sorted_by="ts")
    planned = _rows_planned(monkeypatch)
    whole = pl.from_arrow(t)
    cases = [
        (pl.col("city") == "c10", 1000),
        (pl.col("city").is_in(["c10", "c11"]) & (pl.col("ts") >= 0), 2000),
        (pl.col("x").is_between(10, 11, closed="left"), 1000),
        ((pl.lit(63_500) <= pl.col("ts")) & (pl.col("x") > -1), 500),
        # Nothing to skip by: an `or`, and a column against a column.
        ((pl.col("city") == "c10") | (pl.col("ts") < 5), n),
        (pl.col("x") > pl.col("ts"), n),
    ]
    for predicate, rows in cases:
        got = kompakt.polars.scan_table(path).filter(predicate).collect()
        assert got.equals(whole.filter(predicate)), predicate
        assert planned[-1] == rows, (predicate, planned[-1])


def test_polars_predicates_read_as_filters_either_way_round():
    import datetime

    import polars as pl

    from kompakt.polars import predicate_filters

    day = datetime.date(2020, 1, 2)
    predicate = (pl.lit(3) <= pl.col("d")) & (pl.lit(day) > pl.col("t")) & pl.col("s").is_in(["x", "y"])
    assert sorted(predicate_filters(predicate)) == [("d", ">=", 3), ("s", "in", ["x", "y"]), ("t", "<", day)]
    bounds = {"both": (">=", "<="), "left": (">=", "<"), "right": (">", "<="), "none": (">", "<")}
    for closed, (low, high) in bounds.items():
        assert predicate_filters(pl.col("x").is_between(1, 4, closed=closed)) == [("x", low, 1), ("x", high, 4)]
    # Not filters: an `or`, a negation, a column against a column, NaN and null constants.
    for other in [
        (pl.col("a") > 1) | (pl.col("b") < 2),
        ~(pl.col("a") > 1),
        pl.col("a") > pl.col("b"),
        pl.col("a") == float("nan"),
        pl.col("a").is_in([1, None]),
        pl.col("a").cast(pl.Int8) > 3,
    ]:
        assert predicate_filters(other) == [], other


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(values, floats, strings), min_size=0, max_size=60),
    rows_per_group=st.integers(1, 9),
    terms=st.lists(st.tuples(st.sampled_from(["i", "f", "s"]), ops, st.integers(0, 1000)), min_size=1, max_size=3),
    join=st.sampled_from(["&", "|"]),
    flip=st.booleans(),
    closed=st.sampled_from(["both", "left", "right", "none"]),
)
def test_polars_predicates_never_lose_a_row(tmp_path_factory, rows, rows_per_group, terms, join, flip, closed):
    import polars as pl

    import kompakt.polars

    path = str(tmp_path_factory.mktemp("pprop") / "t.kpk")
    t = pa.table(
        {
            "i": pa.array([r[0] for r in rows], pa.int64()),
            "f": pa.array([r[1] for r in rows], pa.float64()),
            "s": pa.array([r[2] for r in rows], pa.string()),
            "row": pa.array(range(len(rows)), pa.int64()),
        }
    )
    kompakt.write_table(t, path, rows_per_group=rows_per_group, sorted_by=None)
    pools = {
        "i": list(range(-6, 7)),
        "f": [-0.0, 0.0, 1.5, -2.0, 9.0, float("inf"), float("nan")],
        "s": ["", "a", "ab", "b", "é" * 40, "z" * 70, "zz"],
    }
    predicate = None
    for column, op, pick in terms:
        pool = pools[column]
        # As literals: Polars reads a bare string in a comparison as a column's name.
        raw, other = pool[pick % len(pool)], pool[(pick // 7) % len(pool)]
        value = pl.lit(raw)
        x = pl.col(column)
        if op in ("in", "not in"):
            term = x.is_in([raw, other])
            term = term if op == "in" else ~term
        elif op == "==":
            term = (value == x) if flip else (x == value)
        elif op == "!=":
            term = x != value
        elif op in ("<", "<="):
            term = (value > x if op == "<" else value >= x) if flip else (x < value if op == "<" else x <= value)
        else:
            compared = x > value if op == ">" else x >= value
            term = x.is_between(value, pl.lit(other), closed=closed) if flip else compared
        predicate = term if predicate is None else (predicate & term if join == "&" else predicate | term)
    got = kompakt.polars.scan_table(path).filter(predicate).select("row").collect()["row"].to_list()
    want = pl.from_arrow(t).filter(predicate)["row"].to_list()
    assert got == want, predicate


def test_polars_constants_the_column_cannot_hold_skip_nothing(tmp_path):
    import polars as pl

    import kompakt.polars

    # Polars compares 0.1 with a float32 column as float32's 0.1 (0.10000000149...), which is
    # what the statistics hold: a filter of the exact 0.1 would rule its groups out.
    t = pa.table({"x": pa.array([0.1, 0.2, 0.1, 16777216.0] * 50, pa.float32()), "row": np.arange(200)})
    path = str(tmp_path / "f32.kpk")
    kompakt.write_table(t, path, rows_per_group=8)
    whole = pl.from_arrow(t)
    for predicate in [pl.col("x") == 0.1, pl.col("x") >= 0.1, pl.col("x").is_in([0.1]), pl.col("x") == 16777217]:
        got = kompakt.polars.scan_table(path).filter(predicate).collect()
        assert got.equals(whole.filter(predicate)), predicate
    assert kompakt.polars.scan_table(path).filter(pl.col("x") == 0.1).collect().height == 100


def test_a_float_sort_key_with_nan_keeps_the_nan_rows_polars_keeps(tmp_path):
    import polars as pl

    import kompakt.polars

    # NaN sorts after every number, and Polars counts it greater than every number.
    x = [1.0, 2.0, 7.0] + [float("nan")] * 4
    t = pa.table({"x": pa.array(x), "row": np.arange(7)})
    path = str(tmp_path / "nan.kpk")
    kompakt.write_table(t, path, rows_per_group=2, sorted_by="x")
    for predicate in [pl.col("x") > 5, pl.col("x") >= 7, pl.col("x") < 5, pl.col("x") == 7]:
        got = kompakt.polars.scan_table(path).filter(predicate).collect()
        assert got["row"].to_list() == pl.from_arrow(t).filter(predicate)["row"].to_list(), predicate
