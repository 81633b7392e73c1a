"""Planning filtered reads through the Rust planner (``kompakt_table::plan``, reached as
``_core.Table.plan_rows``): the binding and its errors, and the values ``kompakt._plan`` hands it
in each column's Arrow type, rewritten where the type cannot hold them so that no row a filter
keeps is ever skipped."""

from __future__ import annotations

import datetime
import math

import numpy as np
import pyarrow as pa
import pytest

import kompakt
from kompakt._plan import OPS, arrow_condition, plan


def _ranges(path, filters) -> list[tuple[int, int]]:
    return [r for p in plan(path, None, filters) for r in p.row_ranges()]


def test_the_binding_plans_row_ranges_and_refuses_bad_filters(tmp_path):
    path = str(tmp_path / "t.kpk")
    kompakt.write_table(pa.table({"t": range(1000), "s": ["a"] * 1000}), path, rows_per_group=100, sorted_by="t")
    core = kompakt.TableFile(path)._core
    both = [("t", ">=", pa.array([250])), ("t", "<", pa.array([420]))]
    assert core.plan_rows(both) == [(250, 420)]
    assert core.plan_rows(both, 300, 1000) == [(300, 420)]
    assert core.plan_rows(both, start=500) == []
    assert core.plan_rows([]) == [(0, 1000)]
    assert core.plan_rows([("t", "in", pa.array([], pa.int64()))]) == []
    assert core.plan_rows([("t", "=", pa.array([7]))]) == [(7, 8)]
    assert OPS == kompakt._core.FILTER_OPS == ("==", "=", "!=", "<", "<=", ">", ">=", "in", "not in")
    cases = [
        ([("t", "~", pa.array([1]))], "==, =, !=, <, <=, >, >=, in, not in"),
        ([("nope", "==", pa.array([1]))], r"one of \[\"t\", \"s\"\]"),
        ([("t", "==", pa.array(["1"]))], "values of type Int64"),
        ([("s", ">", pa.array([1]))], "values of type Utf8"),
        ([("t", "==", pa.array([1, 2]))], "one value for =="),
    ]
    for filters, message in cases:
        with pytest.raises(kompakt.OptionError, match=message) as caught:
            core.plan_rows(filters)
        assert isinstance(caught.value, kompakt.KompaktError)
    with pytest.raises(kompakt.OptionError, match="rows 0..1001"):
        core.plan_rows([], 0, 1001)
    # Through plan(): a filter on a column the file lacks is the planner's error.
    with pytest.raises(kompakt.OptionError, match="nope"):
        plan(path, None, [("nope", "==", 1)])


def test_numbers_a_column_cannot_hold_plan_the_rows_they_select(tmp_path):
    path = str(tmp_path / "t.kpk")
    t = pa.table({"i": pa.array(range(100), pa.int32()), "u": pa.array(range(100), pa.uint8())})
    kompakt.write_table(t, path, rows_per_group=10, sorted_by="i")
    # A number between two of the type's values plans as a bound that the type holds, kept on
    # the side that keeps rows (an engine may round the number to either before comparing).
    cases = [
        (("i", ">", 45.5), [(46, 100)]),
        (("i", ">=", 45.5), [(45, 100)]),
        (("i", "<", 45.5), [(0, 46)]),
        (("i", "<=", 45.5), [(0, 47)]),
        (("i", "==", 45.5), [(45, 47)]),
        (("i", "==", 45.0), [(45, 46)]),
        (("i", "!=", 45.5), [(0, 100)]),
        (("i", ">", 10**10), []),
        (("i", ">=", math.inf), []),
        (("i", "<", 10**10), [(0, 100)]),
        (("i", ">", -(10**10)), [(0, 100)]),
        (("i", "<=", -math.inf), []),
        (("i", "in", [3.5, 17, 10**12]), [(0, 20)]),
        (("i", "in", [33.5]), [(30, 40)]),
        (("i", "not in", [3.5]), [(0, 100)]),
        # Unsorted, by the statistics: whole row groups.
        (("u", ">", 45.5), [(40, 100)]),
        (("u", "<", -1), []),
        (("u", "<=", 300), [(0, 100)]),
        (("u", ">", 255), []),
        (("u", "==", np.int64(42)), [(40, 50)]),
    ]
    for f, want in cases:
        assert _ranges(path, [f]) == want, f
        kept = {r for a, b in want for r in range(a, b)}
        rows = t.append_column("row", pa.array(range(100))).filter(arrow_condition([f])).column("row").to_pylist()
        assert set(rows) <= kept, f


def test_floats_of_a_narrower_type_keep_every_row_that_passes(tmp_path):
    # 0.1 as a float32 is 0.10000000149...: above the double 0.1, so `x > 0.1` keeps those rows
    # (pandas and pyarrow compare as doubles; Polars casts 0.1 to float32 first, and `==`
    # then keeps them too); a filter of float32's 0.1 would skip them.
    path = str(tmp_path / "t.kpk")
    x = pa.array([0.1] * 10 + [0.0] * 10 + [0.5] * 10, pa.float32())
    t = pa.table({"x": x, "row": range(30)})
    kompakt.write_table(t, path, rows_per_group=10)
    cases = [
        ((">", 0.1), [(0, 10), (20, 30)]),
        ((">=", 0.1), [(0, 10), (20, 30)]),
        (("<", 0.1), [(10, 20)]),
        (("<=", 0.1), [(0, 20)]),
        (("==", 0.1), [(0, 10)]),
        (("==", 0.5), [(20, 30)]),
        (("!=", 0.1), [(0, 30)]),
        (("in", [0.1, 0.5]), [(0, 10), (20, 30)]),
        (("<", 1e300), [(0, 30)]),
        ((">", 1e300), []),
        ((">", 0), [(0, 10), (20, 30)]),
    ]
    for (op, value), want in cases:
        f = ("x", op, value)
        assert _ranges(path, [f]) == want, f
        got = kompakt.read_batches(path, ["row"], [f]).read_all().column("row").to_pylist()
        assert got == t.filter(arrow_condition([f])).column("row").to_pylist(), f


def test_other_types_plan_by_their_arrow_values(tmp_path):
    path = str(tmp_path / "t.kpk")
    utc = datetime.UTC
    ts = pa.array([datetime.datetime(2020, 1, 1 + i // 4, tzinfo=utc) for i in range(40)], pa.timestamp("ms", "UTC"))
    tag = pa.array(["p"] * 20 + ["q"] * 20).dictionary_encode()
    kompakt.write_table(pa.table({"ts": ts, "tag": tag, "n": range(40)}), path, rows_per_group=4, sorted_by="ts")
    day = datetime.datetime(2020, 1, 5, tzinfo=utc)
    assert _ranges(path, [("ts", ">=", day)]) == [(16, 40)]
    oslo = datetime.timezone(datetime.timedelta(hours=1))
    assert _ranges(path, [("ts", "<", datetime.datetime(2020, 1, 5, 1, tzinfo=oslo))]) == [(0, 16)]
    # A dictionary column is searched by its values; it has no bounds to skip by.
    assert _ranges(path, [("tag", "==", "q")]) == [(0, 40)]
    # A value that is not of the column's kind skips nothing (the engines judge it).
    assert _ranges(path, [("ts", ">", "2020-01-05")]) == [(0, 40)]
    assert _ranges(path, [("n", "in", ["a", 3])]) == [(0, 40)]
    assert _ranges(path, [("n", "not in", ["a", 3])]) == [(0, 40)]
    assert _ranges(path, [("n", "==", None)]) == [(0, 40)]


def test_a_nan_sort_key_is_searched_as_greater_than_infinity(tmp_path):
    import polars as pl

    import kompakt.polars

    # The planner's own order (kompakt_table::plan): NaN after every number, +inf included,
    # where _plan.py took NaN for +inf: `> inf` keeps the NaN rows Polars keeps, and `== inf`
    # skips them.
    x = [1.0, 2.0, 7.0, math.inf] + [math.nan] * 4
    t = pa.table({"x": pa.array(x), "row": np.arange(8)})
    path = str(tmp_path / "nan.kpk")
    kompakt.write_table(t, path, rows_per_group=2, sorted_by="x", statistics=False)
    assert _ranges(path, [("x", ">", math.inf)]) == [(4, 8)]
    assert _ranges(path, [("x", "==", math.inf)]) == [(3, 4)]
    assert _ranges(path, [("x", "<=", math.inf)]) == [(0, 4)]
    for predicate in [pl.col("x") > math.inf, pl.col("x") == math.inf, pl.col("x") <= math.inf]:
        got = kompakt.polars.scan_table(path).filter(predicate).collect()["row"].to_list()
        assert got == pl.from_arrow(t).filter(predicate)["row"].to_list(), predicate
