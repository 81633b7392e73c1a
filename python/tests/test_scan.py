"""kompakt.polars.scan_table and kompakt.read_batches over a folder of sorted tables: values equal
polars' and pyarrow's own reads of the same data; projection, filters and limits pushed down."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import kompakt
import kompakt.polars


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scan")
    rng = np.random.default_rng(5)
    parts = []
    for i in range(3):
        n = 30_000
        t = pa.table(
            {
                "ts": np.arange(i * n, (i + 1) * n, dtype=np.int64),
                "v": rng.normal(size=n),
                "tag": pa.array(rng.choice(["a", "b", "c"], n)).dictionary_encode(),
            }
        )
        kompakt.write_table(t, str(folder / f"p{i}.kpk"), sorted_by="ts", rows_per_group=2048)
        parts.append(t)
    return folder, pa.concat_tables(parts)


def test_scan_table_pushes_columns_filters_and_limits(tables):
    folder, whole = tables
    lf = kompakt.polars.scan_table(folder, filters=[("ts", ">=", 45_000)])
    got = lf.filter(pl.col("v") > 0).select(["ts", "v"]).collect()
    want = pl.from_arrow(whole).filter((pl.col("ts") >= 45_000) & (pl.col("v") > 0)).select(["ts", "v"])
    assert got.equals(want)
    assert lf.select("ts").head(5).collect()["ts"].to_list() == [45_000, 45_001, 45_002, 45_003, 45_004]
    assert kompakt.polars.scan_table(str(folder / "*.kpk")).select(pl.len()).collect().item() == 90_000
    assert "kompakt" in kompakt.polars.scan_table(folder).explain()


def test_read_batches_streams_what_duckdb_and_pyarrow_read(tables):
    folder, whole = tables
    reader = kompakt.read_batches(folder, ["ts", "tag"], [("ts", "<", 3000), ("tag", "in", ["a", "c"])])
    assert isinstance(reader, pa.RecordBatchReader) and reader.schema.names == ["ts", "tag"]
    got = reader.read_all()
    mask = pc.and_(pc.less(whole["ts"], 3000), pc.is_in(whole["tag"].cast(pa.string()), pa.array(["a", "c"])))
    want = whole.filter(mask).select(["ts", "tag"])
    assert got.column("ts").to_pylist() == want.column("ts").to_pylist()
    assert got.column("tag").cast(pa.string()).to_pylist() == want.column("tag").cast(pa.string()).to_pylist()
