"""kompakt.dask on a real Dask cluster (distributed.LocalCluster, two worker processes): a
folder of tables on disk and the same tables on an S3 server (moto), checked value by value
against pandas; filters on the sort key skip row groups before anything is read."""

from __future__ import annotations

import os
import uuid

import numpy as np
import pandas as pd
import pytest

import kompakt
import kompakt.dask
from kompakt._plan import expand_paths, plan
from s3server import S3Server, restore_environment, use_server_environment

FILES = 4
ROWS = 50_000  # per file; row groups of 4096


@pytest.fixture(scope="module")
def frames():
    rng = np.random.default_rng(11)
    out = []
    for i in range(FILES):
        t = np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64) * 10
        out.append(
            pd.DataFrame(
                {
                    "ts": t,
                    "price": rng.normal(size=ROWS),
                    "city": rng.choice(["Oslo", "Lima", "Pune"], ROWS),
                    "qty": rng.integers(0, 100, ROWS),
                }
            )
        )
    return out


@pytest.fixture(scope="module")
def folder(frames, tmp_path_factory):
    d = tmp_path_factory.mktemp("dask-tables")
    for i, df in enumerate(frames):
        kompakt.write_table(df, str(d / f"part-{i}.kpk"), sorted_by="ts", rows_per_group=4096)
    return d


@pytest.fixture(scope="module")
def cluster():
    import distributed

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        with distributed.Client(c) as client:
            yield client


@pytest.fixture(scope="module")
def s3_urls(folder):
    with S3Server() as server:
        before = use_server_environment(server)
        client = server.client()
        bucket = "kompakt-dask-tests"
        client.create_bucket(Bucket=bucket)
        prefix = uuid.uuid4().hex
        urls = []
        for name in sorted(os.listdir(folder)):
            client.put_object(Bucket=bucket, Key=f"{prefix}/{name}", Body=(folder / name).read_bytes())
            urls.append(f"s3://{bucket}/{prefix}/{name}")
        # Objects a folder URL must leave out: not a table, and one level down.
        client.put_object(Bucket=bucket, Key=f"{prefix}/README.txt", Body=b"not a table")
        client.put_object(Bucket=bucket, Key=f"{prefix}/deeper/part-9.kpk", Body=(folder / "part-0.kpk").read_bytes())
        try:
            yield urls, server.env
        finally:
            restore_environment(before)


def expected(frames, columns=None, query=None):
    df = pd.concat(frames, ignore_index=True)
    if query is not None:
        df = df[query(df)]
    return (df if columns is None else df[columns]).reset_index(drop=True)


def test_a_folder_reads_as_the_concatenated_frames(cluster, folder, frames):
    ddf = kompakt.dask.read_table(folder)
    assert ddf.npartitions == FILES
    got = ddf.compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected(frames), check_dtype=False)


def test_columns_filters_and_divisions(cluster, folder, frames):
    lo, hi = 60_000 * 10, 61_000 * 10  # 1000 rows of the second file
    filters = [("ts", ">=", lo), ("ts", "<", hi), ("qty", ">", 20)]
    ddf = kompakt.dask.read_table(str(folder / "*.kpk"), ["price", "qty"], filters, index="ts")
    assert ddf.npartitions == 1 and ddf.known_divisions
    got = ddf.compute()
    want = expected(frames, query=lambda d: (d.ts >= lo) & (d.ts < hi) & (d.qty > 20)).set_index("ts")
    pd.testing.assert_frame_equal(got, want[["price", "qty"]], check_dtype=False)
    # The plan kept one or two row groups of one file: at most 2 % of the rows.
    parts = plan(folder, ["price", "qty"], filters)
    assert len(parts) == 1 and sum(p.stop - p.start for p in parts) <= 2 * 4096


def test_divisions_let_dask_select_by_index(cluster, folder, frames):
    ddf = kompakt.dask.read_table(folder, index="ts", rows_per_part=16_384)
    assert ddf.known_divisions and ddf.npartitions == FILES * 4
    got = ddf.loc[1_000_000:1_000_090].compute()
    assert list(got.index) == list(range(1_000_000, 1_000_091, 10))


def test_tables_on_s3_read_on_the_cluster(cluster, s3_urls, frames):
    urls, env = s3_urls
    # The workers reach the server as any client does: through the AWS environment.
    cluster.run(lambda: os.environ.update(env))
    ddf = kompakt.dask.read_table(urls, ["ts", "city"], [("ts", ">=", 150_000 * 10)])
    got = ddf.compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected(frames, ["ts", "city"], lambda d: d.ts >= 1_500_000), check_dtype=False)


def test_s3_folders_and_globs_are_listed_on_the_server(cluster, s3_urls, frames):
    urls, env = s3_urls
    folder = urls[0].rsplit("/", 1)[0] + "/"
    assert expand_paths(folder) == urls
    assert expand_paths(folder + "*.kpk") == urls
    assert expand_paths(folder + "part-[13].kpk") == [urls[1], urls[3]]
    assert expand_paths(folder + "*/part-*.kpk") == [folder + "deeper/part-9.kpk"]
    with pytest.raises(FileNotFoundError, match="no table files"):
        expand_paths(folder + "nothing-*.kpk")
    cluster.run(lambda: os.environ.update(env))
    got = kompakt.dask.read_table(folder, ["ts"]).compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(got, expected(frames, ["ts"]), check_dtype=False)
    with pytest.raises(FileNotFoundError, match="no-such-bucket"):
        expand_paths("s3://no-such-bucket/data/")
    with pytest.raises(ValueError, match="only s3:// URLs can be listed"):
        expand_paths("https://example.com/data/")
    with pytest.raises(kompakt.OptionError, match="bucket"):
        expand_paths("s3://bucket-*/data.kpk")


def test_to_kompakt_writes_a_file_per_partition(cluster, folder, frames, tmp_path):
    ddf = kompakt.dask.read_table(folder, rows_per_part=20_000)
    paths = kompakt.dask.to_kompakt(ddf, tmp_path / "out")
    assert len(paths) == ddf.npartitions
    back = kompakt.dask.read_table(paths).compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(back, expected(frames), check_dtype=False)


def test_no_match_gives_an_empty_frame_with_the_columns(folder):
    ddf = kompakt.dask.read_table(folder, ["price"], [("ts", ">", 10**12)])
    got = ddf.compute()
    assert len(got) == 0 and list(got.columns) == ["price"]


def test_bad_filters_and_paths_are_clear_errors(folder, tmp_path):
    with pytest.raises(kompakt.OptionError, match="filters"):
        kompakt.dask.read_table(folder, filters=[("ts", "~", 1)])
    with pytest.raises(kompakt.OptionError, match="no column 'nope'"):
        kompakt.dask.read_table(folder, ["nope"])
    with pytest.raises(FileNotFoundError):
        kompakt.dask.read_table(str(tmp_path / "none-*.kpk"))
