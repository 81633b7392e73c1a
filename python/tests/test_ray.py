"""kompakt.ray on a real local Ray cluster (two CPUs, worker processes): a folder of tables on
disk and the same tables on an S3 server (moto), checked value by value against pandas; filters
skip row groups before anything is read."""

from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest

import kompakt
from s3server import s3_bucket

FILES = 3
ROWS = 20_000  # per file; row groups of 2048


@pytest.fixture(scope="module")
def frames():
    rng = np.random.default_rng(12)
    return [
        pd.DataFrame(
            {
                "ts": np.arange(i * ROWS, (i + 1) * ROWS, dtype=np.int64),
                "price": rng.normal(size=ROWS),
                "city": rng.choice(["Oslo", "Lima", "Pune"], ROWS),
            }
        )
        for i in range(FILES)
    ]


@pytest.fixture(scope="module")
def folder(frames, tmp_path_factory):
    d = tmp_path_factory.mktemp("ray-tables")
    for i, df in enumerate(frames):
        kompakt.write_table(df, str(d / f"part-{i}.kpk"), sorted_by="ts", rows_per_group=2048)
    return d


@pytest.fixture(scope="module")
def s3_folder(folder):
    bucket = "kompakt-ray-tests"
    with s3_bucket(bucket) as (server, client):
        prefix = uuid.uuid4().hex
        for path in sorted(folder.iterdir()):
            client.put_object(Bucket=bucket, Key=f"{prefix}/{path.name}", Body=path.read_bytes())
        yield f"s3://{bucket}/{prefix}/", server.env


@pytest.fixture(scope="module")
def ray_cluster(s3_folder):
    import ray

    _, env = s3_folder
    # The workers get the S3 server's settings, as a cluster's machines would from theirs.
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": env})
    import ray.data

    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


def sort(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values("ts").reset_index(drop=True)


def assert_same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    # Ray's pandas frames hold pyarrow-backed columns: values are compared, not dtypes.
    pd.testing.assert_frame_equal(sort(got), want.reset_index(drop=True), check_dtype=False)


def test_a_folder_reads_as_pandas_does_with_columns_and_filters(ray_cluster, folder, frames):
    import kompakt.ray

    whole = pd.concat(frames, ignore_index=True)
    ds = kompakt.ray.read_table(folder)
    assert ds.count() == FILES * ROWS
    assert_same(ds.to_pandas(), whole)
    filters = [("ts", ">=", 25_000), ("ts", "<", 31_000), ("city", "in", ["Oslo", "Pune"])]
    got = kompakt.ray.read_table(folder, ["ts", "price"], filters).to_pandas()
    want = whole[(whole.ts >= 25_000) & (whole.ts < 31_000) & whole.city.isin(["Oslo", "Pune"])][["ts", "price"]]
    assert_same(got, want)


def test_filters_skip_row_groups_and_files_before_reading(ray_cluster, folder):
    import kompakt.ray

    source = kompakt.ray.datasource(folder, ["price"], [("ts", "<", 3000)])
    tasks = source.get_read_tasks(8)
    # Two files are skipped by their sort key; of the first, rows 0-3000 (two row groups).
    assert len(tasks) == 1 and tasks[0].metadata.input_files == (str(folder / "part-0.kpk"),)
    assert source.estimate_inmemory_data_size() < (folder / "part-0.kpk").stat().st_size
    assert kompakt.ray.read_table(folder, ["price"], [("ts", "<", 3000)]).count() == 3000


def test_tables_on_s3_read_on_the_workers(ray_cluster, s3_folder, frames):
    import kompakt.ray

    url, _ = s3_folder
    whole = pd.concat(frames, ignore_index=True)
    got = kompakt.ray.read_table(url, ["ts", "city"], [("city", "==", "Lima")]).to_pandas()
    assert_same(got, whole[whole.city == "Lima"][["ts", "city"]])


def test_the_docstring_example_runs(ray_cluster):
    import doctest

    import kompakt.ray

    assert doctest.testmod(kompakt.ray, optionflags=doctest.ELLIPSIS).failed == 0
