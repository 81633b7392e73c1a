"""kompakt for Spark, from Python: the jar of kompakt's JVM library, which holds a data source
for kompakt tables (``format("kompakt")``), and the Spark settings that make kompakt Spark's
compression codec (shuffle, spills, broadcasts, RDD blocks; MapStatuses on request).

    >>> import kompakt.spark
    >>> settings = kompakt.spark.conf(codec="lz4")
    >>> settings["spark.io.compression.codec"]
    'dev.kompakt.spark.KompaktCompressionCodec'

With PySpark (``pip install 'kompakt[spark]'``)::

    from pyspark.sql import SparkSession
    spark = SparkSession.builder.master("local[2]").config(map=kompakt.spark.conf()).getOrCreate()

Tables (the jar alone is enough: :func:`jar_conf`)::

    spark = SparkSession.builder.config(map=kompakt.spark.jar_conf()).getOrCreate()
    df = spark.read.format("kompakt").load("data/")       # a folder, a glob, a file, s3://...
    df.where("year >= 2020").write.format("kompakt").option("sortedBy", "year").save("out/")

and with ``spark-submit``: ``--jars "$(python -c 'import kompakt.spark as s; print(s.jar_path())')"``
plus the same settings as ``--conf`` options. The jar is built by ``bash scripts/build_jar.sh``
(Java 17 and Maven), which also puts it into the Python package; ``KOMPAKT_JAR`` names another.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CODEC_CLASS", "SOURCE", "conf", "jar_conf", "jar_path"]

#: The class Spark instantiates for ``spark.io.compression.codec`` and the other codec settings.
CODEC_CLASS = "dev.kompakt.spark.KompaktCompressionCodec"

#: The data source's short name: ``spark.read.format(kompakt.spark.SOURCE).load(folder)``.
SOURCE = "kompakt"


def jar_path() -> str:
    """The path of kompakt's jar: ``KOMPAKT_JAR`` if set, else the jar installed with this package.

    Raises:
        FileNotFoundError: no jar there (this installation was built without Java), naming how
            to build one.
    """
    named = os.environ.get("KOMPAKT_JAR")
    if named:
        if not Path(named).is_file():
            raise FileNotFoundError(f"KOMPAKT_JAR names {named!r}, which is not a file")
        return named
    jars = sorted((Path(__file__).parent / "jars").glob("kompakt-*.jar"))
    if not jars:
        raise FileNotFoundError(
            "kompakt's jar is not part of this installation: build it with `bash scripts/build_jar.sh` "
            "(Java 17 and Maven) in kompakt's source tree and reinstall the package, or set KOMPAKT_JAR "
            "to the jar's path"
        )
    return str(jars[-1])


def jar_conf() -> dict[str, str]:
    """Spark settings that put kompakt's jar on the class paths, and nothing else: enough to read
    and write kompakt tables (``spark.read.format("kompakt")``, ``df.write.format("kompakt")``,
    ``CREATE TABLE ... USING kompakt``) with Spark's own codecs.

        >>> sorted(jar_conf())
        ['spark.driver.extraClassPath', 'spark.executor.extraClassPath', 'spark.jars']
    """
    jar = jar_path()
    return {"spark.jars": jar, "spark.driver.extraClassPath": jar, "spark.executor.extraClassPath": jar}


def conf(
    *,
    codec: str | None = None,
    level: int | None = None,
    block_size: int | str | None = None,
    dictionary: str | os.PathLike[str] | None = None,
    map_status: bool = False,
) -> dict[str, str]:
    """Spark settings that put kompakt's jar on the classpath and make it the compression codec.

    Args:
        codec: ``spark.kompakt.codec``, a codec spec or unified level (``"lz4"``, ``"zstd:1"``,
            ``"40"``); None keeps the codec's default.
        level: ``spark.kompakt.level``, a unified level 0-100 (or with a bare codec name, that
            codec's level).
        block_size: ``spark.kompakt.blockSize``, bytes or a Spark size (``"128k"``).
        dictionary: ``spark.kompakt.dictionary``, the path of a zstd dictionary (``.kpkd``).
        map_status: also compress MapStatuses with kompakt
            (``spark.shuffle.mapStatus.compression.codec``); worth it with a zstd codec only
            (with lz4 they come out 1.8 times the size of Spark's default, zstd).

    Returns:
        Settings for ``SparkSession.builder.config(map=...)`` or ``--conf`` options. The jar goes
        on the driver's and executors' class paths (a codec is created before ``spark.jars``
        are loaded) and on ``spark.jars`` (to ship it to executors on a cluster).
    """
    settings = jar_conf()
    settings["spark.io.compression.codec"] = CODEC_CLASS
    if map_status:
        settings["spark.shuffle.mapStatus.compression.codec"] = CODEC_CLASS
    options = {"codec": codec, "level": level, "blockSize": block_size, "dictionary": dictionary}
    for key, value in options.items():
        if value is not None:
            settings[f"spark.kompakt.{key}"] = os.fspath(value) if key == "dictionary" else str(value)
    return settings
