"""kompakt tables from PySpark (local[2]): ``spark.read.format("kompakt")`` on files Python
wrote, ``df.write.format("kompakt")`` read back by Python, value by value, for every type both
sides hold; filters pushed down to the row groups, and ``CREATE TABLE ... USING kompakt``.

Needs PySpark (the `spark` extra) and the jar (`bash scripts/build_jar.sh`); CI requires both
(KOMPAKT_REQUIRE_SPARK=1), elsewhere the tests are skipped without them.
"""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import pyarrow as pa
import pytest

import kompakt
import kompakt.spark
from test_spark import _require_spark

UTC = dt.UTC
N = 5000


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    _require_spark()
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("kompakt-pyspark-tables")
        .config(map=kompakt.spark.jar_conf())
        .config("spark.local.dir", str(tmp_path_factory.mktemp("spark-local")))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
    )
    session = builder.getOrCreate()
    yield session
    session.stop()


def _python_table(start: int, n: int) -> pa.Table:
    """Every type a table holds that Spark reads, with nulls, rows `start..start+n`."""
    rows = range(start, start + n)

    def maybe(values, every=7):
        return [None if (i % every) == 3 else v for i, v in zip(rows, values)]

    base = dt.datetime(2024, 2, 29, 12, 30, tzinfo=UTC)
    naive = base.replace(tzinfo=None)
    return pa.table(
        {
            "k": pa.array(list(rows), pa.int64()),
            "i8": pa.array(maybe([i % 127 for i in rows]), pa.int8()),
            "i16": pa.array(maybe([i - 2000 for i in rows]), pa.int16()),
            "i32": pa.array(maybe([i * 1000 for i in rows]), pa.int32()),
            "u8": pa.array(maybe([i % 256 for i in rows]), pa.uint8()),
            "u32": pa.array(maybe([4_000_000_000 - i for i in rows]), pa.uint32()),
            "f32": pa.array(maybe([i / 4 for i in rows]), pa.float32()),
            "f64": pa.array(maybe([i / 3 for i in rows]), pa.float64()),
            "b": pa.array(maybe([i % 2 == 0 for i in rows]), pa.bool_()),
            "s": pa.array(maybe([f"é{i}" * (i % 4) for i in rows]), pa.string()),
            "city": pa.array(maybe([["Oslo", "Lima", "Pune"][i % 3] for i in rows]), pa.string()).dictionary_encode(),
            "bin": pa.array(maybe([bytes([i % 256]) * (i % 3) for i in rows]), pa.binary()),
            "d": pa.array(maybe([dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in rows]), pa.date32()),
            "ts": pa.array(maybe([base + dt.timedelta(seconds=i) for i in rows]), pa.timestamp("us", "UTC")),
            "ts_ns": pa.array(maybe([base + dt.timedelta(microseconds=i) for i in rows]), pa.timestamp("ns", "UTC")),
            "ntz": pa.array(maybe([naive + dt.timedelta(minutes=i) for i in rows]), pa.timestamp("us")),
            "dec": pa.array(maybe([decimal.Decimal(i).scaleb(-2) for i in rows]), pa.decimal128(12, 2)),
            "ints": pa.array(maybe([list(range(i % 4)) for i in rows]), pa.list_(pa.int32())),
            "pt": pa.array(
                maybe([{"x": i, "name": f"p{i}"} for i in rows]),
                pa.struct([("x", pa.int64()), ("name", pa.string())]),
            ),
        }
    )


def _spark_value(v):
    """A value as Spark's collect() gives it, in the form pyarrow's to_pylist() gives."""
    if isinstance(v, bytearray):
        return bytes(v)
    if hasattr(v, "asDict"):
        return {k: _spark_value(x) for k, x in v.asDict().items()}
    if isinstance(v, list):
        return [_spark_value(x) for x in v]
    return v


def _expected(table: pa.Table, column: str) -> list:
    """A column as Spark reads it: timestamps with a zone as naive UTC datetimes (the session's
    zone), nanoseconds truncated to microseconds, dictionaries as their values."""
    values = table.column(column).to_pylist()
    t = table.schema.field(column).type
    if pa.types.is_timestamp(t) and t.tz is not None:
        # PySpark returns TimestampType values as naive datetimes in the session's time zone.
        return [None if v is None else v.astimezone(UTC).replace(tzinfo=None) for v in values]
    return values


def _write_files(folder: Path) -> pa.Table:
    folder.mkdir()
    first, second = _python_table(0, N), _python_table(N, N)
    kompakt.write_table(first, folder / "part-0.kpk", rows_per_group=500, sorted_by=["k"])
    kompakt.write_table(second, folder / "part-1.kpk", rows_per_group=500, sorted_by=["k"])
    return pa.concat_tables([first, second])


def test_spark_reads_tables_python_wrote_value_by_value(spark, tmp_path):
    want = _write_files(tmp_path / "data")
    df = spark.read.format(kompakt.spark.SOURCE).load(str(tmp_path / "data"))
    assert df.columns == want.column_names
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    assert types["u8"] == "smallint" and types["u32"] == "bigint", types
    assert types["city"] == "string" and types["ts"] == "timestamp" and types["ntz"] == "timestamp_ntz", types
    assert types["dec"] == "decimal(12,2)" and types["pt"] == "struct<x:bigint,name:string>", types
    rows = sorted(df.collect(), key=lambda r: r["k"])
    assert len(rows) == 2 * N
    for column in want.column_names:
        got = [_spark_value(r[column]) for r in rows]
        assert got == _expected(want, column), column


def test_filters_prune_row_groups_and_rows_are_right(spark, tmp_path):
    want = _write_files(tmp_path / "data")
    df = spark.read.format("kompakt").load(str(tmp_path / "data"))
    picked = df.where("k >= 9900 and k < 9950").select("k", "s")
    plan = picked._jdf.queryExecution().executedPlan().toString()
    assert "k" in plan and ("PushedFilters" in plan or "pushed" in plan.lower()), plan
    got = sorted((r["k"], r["s"]) for r in picked.collect())
    ks = want.column("k").to_pylist()
    ss = want.column("s").to_pylist()
    assert got == [(k, s) for k, s in zip(ks, ss) if 9900 <= k < 9950]
    assert df.where("k < 0").count() == 0
    assert df.limit(7).count() == 7


def test_python_reads_tables_spark_wrote_value_by_value(spark, tmp_path):
    source = _write_files(tmp_path / "data")
    df = spark.read.format("kompakt").load(str(tmp_path / "data"))
    out = tmp_path / "out"
    df.repartition(3).write.format("kompakt").option("sortedBy", "k").save(str(out))
    files = sorted(out.glob("*.kpk"))
    assert len(files) == 3, files
    assert not [p for p in out.iterdir() if p.name.startswith("_") and p.suffix == ".kpk"]
    tables = [kompakt.TableFile(p).read_arrow() for p in files]
    for t in tables:
        ks = t.column("k").to_pylist()
        assert ks == sorted(ks), "each file is sorted by k"
    got = pa.concat_tables(tables).sort_by("k")
    assert got.num_rows == 2 * N
    # Spark's types, back in Python: the portable ones (uint8 as int16, dictionaries decoded,
    # nanoseconds as microseconds).
    assert got.schema.field("u8").type == pa.int16()
    assert got.schema.field("dec").type == pa.decimal128(12, 2)
    assert pa.types.is_timestamp(got.schema.field("ts").type)
    by_spark = sorted(df.collect(), key=lambda r: r["k"])
    for column in source.column_names:
        want = [_spark_value(r[column]) for r in by_spark]
        values = got.column(column).to_pylist()
        t = got.schema.field(column).type
        if pa.types.is_timestamp(t) and t.tz is not None:
            values = [None if v is None else v.astimezone(UTC).replace(tzinfo=None) for v in values]
        assert values == want, column
    # Appending adds files; overwriting replaces them.
    df.limit(10).write.format("kompakt").mode("append").save(str(out))
    assert spark.read.format("kompakt").load(str(out)).count() == 2 * N + 10
    df.limit(10).write.format("kompakt").mode("overwrite").save(str(out))
    assert spark.read.format("kompakt").load(str(out)).count() == 10


def test_sql_create_table_using_kompakt(spark, tmp_path):
    _write_files(tmp_path / "data")
    spark.sql(f"CREATE TABLE kompakt_sql_test USING kompakt LOCATION '{tmp_path / 'data'}'")
    try:
        row = spark.sql("SELECT count(*) AS n, max(k) AS top FROM kompakt_sql_test WHERE city = 'Oslo'").first()
        oslo = [k for k in range(2 * N) if k % 3 == 0 and k % 7 != 3]
        assert (row["n"], row["top"]) == (len(oslo), max(oslo))
    finally:
        spark.sql("DROP TABLE IF EXISTS kompakt_sql_test")
