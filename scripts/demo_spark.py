"""kompakt from PySpark, as scripts/demo.sh runs it: Spark's compression codec, then its tables.

The same shuffle-heavy job (a join and a groupBy over generated rows, local[2]) runs with
Spark's default codec (lz4) and with kompakt, after a warm-up job; prints each run's time (one
run: a demo, not a benchmark; bench/spark_codec.sh measures) and the bytes of shuffle files it
left on disk, and checks that every codec gives the same answer.

Then the rows are written as a kompakt table folder (``format("kompakt")``, sorted by ``key``)
and as Parquet (zstd), read back with a filter on the key that selects 1 % of the rows, and the
kompakt files are read by Python, value by value against Spark's rows
(bench/spark_tables.py measures).

usage: python scripts/demo_spark.py OUT_DIR [ROWS]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import kompakt.spark


def run(codec: str | None, rows: int, work: Path) -> tuple[float, int, list]:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    local_dir = Path(tempfile.mkdtemp(prefix="spark-", dir=work))
    # The jar on the class path in both runs, so the JVM is the same; the codec differs.
    settings = kompakt.spark.conf(codec=codec)
    if not codec:
        settings["spark.io.compression.codec"] = "lz4"
    builder = SparkSession.builder.master("local[2]").appName("kompakt-demo").config(map=settings)
    builder = builder.config("spark.local.dir", str(local_dir)).config("spark.ui.enabled", "false")
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    spark = builder.config("spark.sql.shuffle.partitions", "8").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    start = time.perf_counter()
    facts = spark.range(rows).select(
        (F.col("id") * 7919 % 100_000).alias("key"),
        (F.col("id") % 1000).alias("value"),
        F.concat(F.lit("item-"), (F.col("id") % 5000).cast("string")).alias("item"),
    )
    names = spark.range(100_000).select(
        F.col("id").alias("key"), F.concat(F.lit("n"), F.col("id").cast("string")).alias("name")
    )
    answer = (
        facts.join(names.hint("shuffle_merge"), "key")
        .groupBy("item")
        .agg(F.sum("value").alias("total"), F.countDistinct("name").alias("names"))
        .orderBy("item")
        .limit(3)
        .collect()
    )
    took = time.perf_counter() - start
    shuffled = sum(p.stat().st_size for p in local_dir.rglob("shuffle_*.data"))
    spark.stop()
    return took, shuffled, [tuple(r) for r in answer]


def tables(rows: int, work: Path) -> None:
    import pyarrow as pa
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    builder = SparkSession.builder.master("local[2]").appName("kompakt-demo-tables")
    builder = builder.config(map=kompakt.spark.jar_conf())
    builder = builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
    builder = builder.config("spark.sql.parquet.compression.codec", "zstd")
    spark = builder.config("spark.local.dir", str(work / "spark-local")).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    facts = spark.range(rows, numPartitions=2).select(
        (F.col("id") * 7919 % 100_000).alias("key"),
        (F.col("id") % 1000).alias("value"),
        F.concat(F.lit("item-"), (F.col("id") % 5000).cast("string")).alias("item"),
    )
    facts = facts.cache()
    facts.count()
    folders = {"kompakt": work / "facts-kompakt", "parquet": work / "facts-parquet"}
    for fmt, folder in folders.items():
        writer = facts.sortWithinPartitions("key").write.format(fmt).mode("overwrite")
        if fmt == "kompakt":
            writer = writer.option("sortedBy", "key")
        start = time.perf_counter()
        writer.save(str(folder))
        took = time.perf_counter() - start
        size = sum(p.stat().st_size for p in folder.glob(f"*.{'kpk' if fmt == 'kompakt' else 'parquet'}"))
        start = time.perf_counter()
        picked = spark.read.format(fmt).load(str(folder)).where("key < 1000").agg(F.count("*"), F.sum("value")).first()
        print(
            f"{fmt:>8}: wrote {size / 1e6:5.1f} MB in {took:4.1f} s; 1 % of keys read back in "
            f"{time.perf_counter() - start:4.2f} s: {tuple(picked)}"
        )
    # Spark's files are kompakt tables like any other: Python reads them.
    spark_rows = sorted(tuple(r) for r in facts.where("key < 50").collect())
    spark.stop()
    files = sorted(folders["kompakt"].glob("*.kpk"))
    table = pa.concat_tables(kompakt.TableFile(p).read_arrow() for p in files)
    mine = sorted(tuple(r.values()) for r in table.filter(pa.compute.less(table["key"], 50)).to_pylist())
    assert mine == spark_rows, "Python read other rows than Spark wrote"
    print(f"Python read Spark's {len(files)} kompakt files: {table.num_rows:,} rows, the same values")


def main() -> None:
    out = Path(sys.argv[1])
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 2_000_000
    out.mkdir(parents=True, exist_ok=True)
    print(f"kompakt's jar: {kompakt.spark.jar_path()}")
    results = {}
    # A first job warms the JVM (class loading, JIT), which would otherwise count against
    # whichever codec runs first.
    run(None, rows // 10, out)
    for label, codec in [("Spark's lz4", None), ("kompakt lz4", "lz4"), ("kompakt zstd:1", "zstd:1")]:
        took, shuffled, answer = run(codec, rows, out)
        results[label] = answer
        print(f"{label:>15}: {took:5.1f} s, shuffle files {shuffled / 1e6:6.1f} MB, first rows {answer[:1]}")
    assert len({tuple(a) for a in results.values()}) == 1, "the codecs gave different answers"
    print("same answer with every codec")
    print()
    print("tables: format('kompakt') against Spark's Parquet (zstd), the same rows")
    tables(rows, out)


if __name__ == "__main__":
    main()
