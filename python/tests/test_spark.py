"""kompakt.spark with a real PySpark session (local[2]): kompakt's jar on the class path and its
codec for shuffles, spills, broadcasts and MapStatuses; results checked against pandas, and the
shuffle files on disk checked to be kompakt files.

Needs PySpark (the `spark` extra) and the jar (`bash scripts/build_jar.sh`); CI requires both
(KOMPAKT_REQUIRE_SPARK=1), elsewhere the test is skipped without them.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pandas as pd
import pytest

import kompakt.spark

REQUIRED = os.environ.get("KOMPAKT_REQUIRE_SPARK") == "1"


def _require_spark():
    try:
        import pyspark  # noqa: F401

        kompakt.spark.jar_path()
    except (ImportError, FileNotFoundError) as e:
        if REQUIRED:
            raise
        pytest.skip(f"PySpark or kompakt's jar missing: {e}")
    if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
        if REQUIRED:
            raise RuntimeError("PySpark needs Java (java on PATH or JAVA_HOME)")
        pytest.skip("no Java")


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    _require_spark()
    from pyspark.sql import SparkSession

    local_dir = tmp_path_factory.mktemp("spark-local")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("kompakt-pyspark-test")
        .config(map=kompakt.spark.conf(codec="lz4", block_size="64k", map_status=True))
        .config("spark.local.dir", str(local_dir))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.autoBroadcastJoinThreshold", "-1")
    )
    session = builder.getOrCreate()
    yield session, local_dir
    session.stop()


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def test_the_settings_name_the_codec_and_the_jar():
    _require_spark()
    settings = kompakt.spark.conf(codec="zstd:1", level=None, block_size=131072, dictionary="d.kpkd", map_status=True)
    assert settings["spark.io.compression.codec"] == kompakt.spark.CODEC_CLASS
    assert settings["spark.shuffle.mapStatus.compression.codec"] == kompakt.spark.CODEC_CLASS
    assert settings["spark.driver.extraClassPath"] == kompakt.spark.jar_path()
    assert settings["spark.kompakt.codec"] == "zstd:1"
    assert settings["spark.kompakt.blockSize"] == "131072"
    assert settings["spark.kompakt.dictionary"] == "d.kpkd"
    assert "spark.kompakt.level" not in settings
    assert "spark.shuffle.mapStatus.compression.codec" not in kompakt.spark.conf()


def test_a_missing_jar_says_how_to_build_one(monkeypatch, tmp_path):
    monkeypatch.setenv("KOMPAKT_JAR", str(tmp_path / "nope.jar"))
    with pytest.raises(FileNotFoundError, match="KOMPAKT_JAR"):
        kompakt.spark.jar_path()


def test_a_shuffle_heavy_job_runs_on_kompakt(spark):
    session, local_dir = spark
    from pyspark.sql import functions as F

    conf = session.sparkContext.getConf()
    assert conf.get("spark.io.compression.codec") == kompakt.spark.CODEC_CLASS
    rng = np.random.default_rng(5)
    n = 200_000
    pdf = pd.DataFrame(
        {
            "key": rng.integers(0, 1000, n),
            "value": rng.integers(0, 1_000_000, n),
            "city": rng.choice(["Oslo", "Lima", "Pune", "Kyiv"], n),
        }
    )
    names = pd.DataFrame({"key": np.arange(1000), "name": [f"k{i}" for i in range(1000)]})
    # Through plain rows, not Arrow: PySpark 4.2 warns about pandas 3 on toPandas().
    df = session.createDataFrame([tuple(map(_plain, r)) for r in pdf.itertuples(index=False)], list(pdf.columns))
    named = session.createDataFrame([tuple(map(_plain, r)) for r in names.itertuples(index=False)], ["key", "name"])
    # A sort-merge join and an aggregation: two shuffles, compressed with kompakt.
    rows = df.join(named, "key").groupBy("name", "city").agg(F.sum("value").alias("total"), F.count("*").alias("rows"))
    got = (
        pd.DataFrame([r.asDict() for r in rows.collect()], columns=["name", "city", "total", "rows"])
        .sort_values(["name", "city"])
        .reset_index(drop=True)
    )
    want = (
        pdf.merge(names, on="key")
        .groupby(["name", "city"], as_index=False)
        .agg(total=("value", "sum"), rows=("value", "size"))
        .sort_values(["name", "city"])
        .reset_index(drop=True)
    )
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    # An RDD cached serialized and compressed (spark.rdd.compress) reads back the same.
    rdd = session.sparkContext.parallelize(range(50_000), 4).map(lambda i: (i % 97, i))
    assert rdd.reduceByKey(lambda a, b: a + b).collectAsMap() == {k: sum(range(k, 50_000, 97)) for k in range(97)}
    # The shuffle files Spark wrote are kompakt files: each partition's segment starts with
    # kompakt's magic.
    data_files = [p for p in local_dir.rglob("shuffle_*.data") if p.stat().st_size > 0]
    assert data_files, "no shuffle files"
    for path in data_files[:8]:
        assert path.read_bytes()[:4] == b"KMPK", path


def test_the_module_example_runs():
    import doctest

    _require_spark()
    assert doctest.testmod(kompakt.spark, optionflags=doctest.ELLIPSIS).failed == 0
