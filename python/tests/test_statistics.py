"""Row-group statistics (TableFile.statistics) and the row groups they let filtered reads skip:
whatever is skipped, a filtered read returns exactly the rows pyarrow's own filter keeps."""

from __future__ import annotations

import math
import os

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
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
