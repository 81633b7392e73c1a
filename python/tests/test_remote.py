"""Reading kompakt files behind URLs (s3://, http://) from a real S3-compatible server (moto's,
in a process of its own): values equal the local file's, reads fetch only what they need, and
every failure is a clear error naming the URL."""

from __future__ import annotations

import os
import subprocess
import uuid

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kompakt
from s3server import s3_bucket

BUCKET = "kompakt-remote-tests"


@pytest.fixture(scope="module")
def s3():
    with s3_bucket(BUCKET) as server_and_client:
        yield server_and_client


def upload(s3, path, key: str | None = None, public: bool = False) -> str:
    """Puts the file at `path` into the test bucket; returns its s3:// URL."""
    _, client = s3
    key = key or f"{uuid.uuid4().hex}/{os.path.basename(path)}"
    extra = {"ACL": "public-read"} if public else {}
    with open(path, "rb") as f:
        client.put_object(Bucket=BUCKET, Key=key, Body=f.read(), **extra)
    return f"s3://{BUCKET}/{key}"


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    """A 200,000-row table of 4 columns in row groups of 10,000 (20 pages per column)."""
    rng = np.random.default_rng(7)
    n = 200_000
    table = pa.table(
        {
            "id": np.arange(n),
            "x": rng.normal(size=n),
            "city": pa.array(rng.choice(["Oslo", "Lima", "Pune", "Kyiv"], n)).dictionary_encode(),
            "note": [f"row {i}" for i in range(n)],
        }
    )
    path = tmp_path_factory.mktemp("remote") / "t.kpk"
    kompakt.write_table(table, str(path), rows_per_group=10_000)
    return path, table


def test_a_table_reads_the_same_from_s3_as_from_disk(s3, table_file):
    path, table = table_file
    url = upload(s3, path)
    assert kompakt.read_table(url, to="arrow").equals(kompakt.read_table(str(path), to="arrow"))
    t = kompakt.TableFile(url)
    assert (t.num_rows, t.columns, t.path) == (table.num_rows, table.column_names, url)
    part = t.read(["x", "city"], slice(123_456, 124_456), to="arrow")
    assert part.equals(table.select(["x", "city"]).slice(123_456, 1000))
    rows = [199_999, 5, 100_000, 5]
    assert t.take(rows, ["id", "note"], to="arrow").to_pydict() == table.select(["id", "note"]).take(rows).to_pydict()
    frame = kompakt.read_table(url, ["id", "note"], rows=(10, 20))
    pd.testing.assert_frame_equal(frame, kompakt.read_table(str(path), ["id", "note"], rows=(10, 20)))


def test_a_small_read_fetches_only_its_pages_in_few_requests(s3, table_file):
    path, _ = table_file
    url = upload(s3, path)
    t = kompakt.TableFile(url)
    requests, received = t._core.traffic()
    # Opening: the tail (footer) and the head, in one round trip.
    assert requests == 2
    t.read(["x", "id"], slice(100_000, 101_000), to="arrow")
    requests_after, received_after = t._core.traffic()
    size = os.path.getsize(path)
    # Two pages of one row group, merged into one request; far from the whole file.
    assert requests_after - requests == 1, t._core.traffic()
    assert received_after < size / 4, (received_after, size)
    # A whole read: what was not fetched at open, in few merged requests.
    t.read(to="arrow")
    assert t._core.traffic()[0] - requests_after <= 4, t._core.traffic()


def test_objects_and_streams_load_from_s3(s3, tmp_path):
    value = {"a": np.arange(3_000_000, dtype=np.int64), "b": "text", "c": [1.5, None]}
    path = tmp_path / "v.kpk"
    kompakt.save(value, str(path))
    url = upload(s3, path)
    got = kompakt.load(url)
    assert got["b"] == "text" and got["c"] == [1.5, None]
    np.testing.assert_array_equal(got["a"], value["a"])
    with kompakt.open(url) as f:
        assert f.read() == kompakt.open(str(path)).read()


def test_http_urls_read_public_objects(s3, table_file):
    server, _ = s3
    path, table = table_file
    url = upload(s3, path, public=True)
    http = url.replace(f"s3://{BUCKET}", f"{server.endpoint}/{BUCKET}")
    assert kompakt.read_table(http, ["id"], rows=slice(0, 5), to="arrow").column("id").to_pylist() == [0, 1, 2, 3, 4]


def test_missing_objects_and_buckets_are_file_not_found_naming_the_url(s3):
    missing = [(f"s3://{BUCKET}/no/such.kpk", "no such object"), ("s3://no-such-bucket-kpk/x.kpk", "no such bucket")]
    for url, what in missing:
        for read in (kompakt.load, kompakt.TableFile, kompakt.read_table):
            with pytest.raises(FileNotFoundError, match=what) as e:
                read(url)
            assert url in str(e.value)


def test_unsupported_schemes_and_writes_to_urls_are_value_errors(s3, tmp_path):
    with pytest.raises(
        ValueError, match=r"invalid URL \"gs://b/x.kpk\": the scheme gs:// is not supported; kompakt reads s3://"
    ):
        kompakt.load("gs://b/x.kpk")
    with pytest.raises(ValueError, match="not supported"):
        kompakt.TableFile("hdfs://namenode/t.kpk")
    for write in (
        lambda: kompakt.save([1, 2], f"s3://{BUCKET}/x.kpk"),
        lambda: kompakt.write_table(pa.table({"a": [1]}), f"s3://{BUCKET}/t.kpk"),
    ):
        with pytest.raises(ValueError, match="writes only files on this machine"):
            write()
    # Never a local folder named after the scheme.
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(ValueError, match="not supported"):
            kompakt.Store("gs://bucket/store")
        assert os.listdir(tmp_path) == []
    finally:
        os.chdir(cwd)


def test_an_object_replaced_while_open_fails_the_read_saying_so(s3, table_file, tmp_path):
    path, table = table_file
    url = upload(s3, path)
    t = kompakt.TableFile(url)
    other = tmp_path / "other.kpk"
    kompakt.write_table(table.slice(0, 150_000), str(other), rows_per_group=10_000)
    upload(s3, other, key=url.removeprefix(f"s3://{BUCKET}/"))
    with pytest.raises(OSError, match="changed while it was read"):
        t.read(["note"], slice(0, 50_000), to="arrow")
    # Opened again, it is the new table.
    assert kompakt.TableFile(url).num_rows == 150_000


def test_damage_in_a_remote_file_is_a_corrupt_error(s3, table_file, tmp_path):
    path, _ = table_file
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x10
    bad = tmp_path / "bad.kpk"
    bad.write_bytes(bytes(data))
    url = upload(s3, bad)
    with pytest.raises(kompakt.CorruptError):
        kompakt.read_table(url, to="arrow")


@pytest.mark.parametrize("body", [b"", b"KPK"], ids=["empty", "three-bytes"])
def test_an_empty_or_tiny_object_is_a_corrupt_file(s3, tmp_path, body):
    empty = tmp_path / "e.kpk"
    empty.write_bytes(body)
    url = upload(s3, empty)
    for read in (kompakt.load, kompakt.read_table, kompakt.TableFile, kompakt.verify):
        with pytest.raises(kompakt.CorruptError, match="truncated"):
            read(url)


def test_cli_reads_urls(s3, table_file, cli):
    server, _ = s3
    path, _ = table_file
    url = upload(s3, path)
    env = {**os.environ, **server.env}

    def run(*args):
        return subprocess.run([str(cli), *args], capture_output=True, text=True, env=env)

    verified = run("verify", url)
    assert verified.returncode == 0 and "OK" in verified.stdout and "200000 rows" in verified.stdout, verified
    head = run("head", "-n", "3", "--columns", "id,city", url)
    assert head.returncode == 0 and head.stdout.splitlines()[1].split()[0] == "0", head
    inspect = run("inspect", url)
    assert inspect.returncode == 0 and url in inspect.stdout, inspect
    cat = subprocess.run([str(cli), "cat", url], capture_output=True, env=env)
    local = subprocess.run([str(cli), "cat", str(path)], capture_output=True)
    assert cat.returncode == 0 and cat.stdout == local.stdout
    missing = run("verify", f"s3://{BUCKET}/missing.kpk")
    assert missing.returncode != 0 and "no such object" in missing.stdout + missing.stderr, missing
    unsupported = run("head", "gs://b/t.kpk")
    assert unsupported.returncode != 0 and "not supported" in unsupported.stderr, unsupported


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n=st.integers(0, 300_000),
    dtype=st.sampled_from(["int64", "float32", "uint8"]),
    codec=st.sampled_from(["none", "lz4", "zstd"]),
)
def test_arrays_round_trip_through_s3(s3, tmp_path, n, dtype, codec):
    a = (np.arange(n) % 1000).astype(dtype)
    path = tmp_path / f"a-{uuid.uuid4().hex}.kpk"
    kompakt.save(a, str(path), codec=codec)
    np.testing.assert_array_equal(kompakt.load(upload(s3, path)), a)
