"""A child made by fork works after its parent did multi-threaded work of every kind.

multiprocessing's fork pools, PyTorch's data loaders and pre-forking web servers fork a parent
that has already read and written with kompakt; the child inherits the parent's thread pools
without their threads. Each test does one kind of work on several threads in this process,
then has forked children read (more than one row group, several blocks) and compares. A child
that hangs fails the test at its timeout instead of hanging the suite.
"""

from __future__ import annotations

import multiprocessing
import os

import numpy as np
import pandas as pd
import pytest

import kompakt
from s3server import s3_bucket

CHILD_TIMEOUT = 120  # seconds: a hang, not a slow machine
BUCKET = "kompakt-fork-tests"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is a POSIX call")


def frame(rows: int = 300_000) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "id": np.arange(rows, dtype=np.int64),
            "price": rng.random(rows).round(2),
            "city": rng.choice(["Oslo", "Lima", "Pune", "Kyiv"], rows),
        }
    )


def in_forked_children(fn, args: list) -> list:
    """fn(arg) for each arg, in a pool of two forked children."""
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map_async(fn, args).get(timeout=CHILD_TIMEOUT)


def _read_table_sum(args) -> int:
    path, threads = args
    return int(kompakt.read_table(path, threads=threads)["id"].sum())


def _load_sum(args) -> float:
    path, threads = args
    return float(kompakt.load(path, threads=threads).sum())


def _store_get_sum(args) -> float:
    folder, key = args
    return float(kompakt.Store(folder)[key].sum())


_PARENT_STORE: kompakt.Store | None = None


def _parent_store_get_sum(key: str) -> float:
    # The handle the parent opened, inherited: it reopens itself in the child.
    assert _PARENT_STORE is not None
    return float(_PARENT_STORE[key].sum())


def _remote_read_sum(args) -> int:
    url, key, cache = args
    if key is None:
        return int(kompakt.read_table(url)["id"].sum())
    # A cache of the child's own: the object comes over the network in the child too.
    return int(kompakt.Store(url, cache_dir=f"{cache}-{os.getpid()}")[key]["id"].sum())


@pytest.mark.parametrize("threads", [None, 2])
def test_children_read_tables_after_the_parent_read_and_wrote_them(tmp_path, threads):
    df = frame()
    path = tmp_path / "t.kpk"
    kompakt.write_table(df, path, rows_per_group=20_000, threads=2)
    assert kompakt.read_table(path, threads=2).equals(df)  # the parent's pools now have threads
    want = int(df["id"].sum())
    assert in_forked_children(_read_table_sum, [(str(path), threads)] * 4) == [want] * 4


def test_children_load_objects_after_the_parent_saved_and_loaded(tmp_path):
    data = np.random.default_rng(1).random(4_000_000)
    path = tmp_path / "a.kpk"
    kompakt.save(data, path, threads=2)
    assert np.array_equal(kompakt.load(path, threads=2), data)
    assert in_forked_children(_load_sum, [(str(path), None), (str(path), 2)]) == [float(data.sum())] * 2


def test_children_read_a_store_after_the_parent_used_it(tmp_path):
    folder = tmp_path / "store"
    store = kompakt.Store(folder)
    data = np.arange(3_000_000, dtype=np.float64)
    store["big"] = data
    store["df"] = frame(50_000)
    assert np.array_equal(store["big"], data)
    assert in_forked_children(_store_get_sum, [(str(folder), "big")] * 2) == [float(data.sum())] * 2
    global _PARENT_STORE
    _PARENT_STORE = store
    try:
        assert in_forked_children(_parent_store_get_sum, ["big", "big"]) == [float(data.sum())] * 2
    finally:
        _PARENT_STORE = None
    # The parent's handle keeps working afterwards.
    store["after"] = data[:10]
    assert np.array_equal(store["after"], data[:10])


def test_children_read_from_object_storage_after_the_parent_did(tmp_path):
    df = frame(200_000)
    local = tmp_path / "t.kpk"
    kompakt.write_table(df, local, rows_per_group=20_000)
    with s3_bucket(BUCKET) as (_, client):
        client.upload_file(str(local), BUCKET, "t.kpk")
        url = f"s3://{BUCKET}/t.kpk"
        store_url = f"s3://{BUCKET}/store"
        store = kompakt.Store(store_url, cache_dir=tmp_path / "cache")
        store["df"] = df
        assert kompakt.read_table(url).equals(df)
        assert store["df"].equals(df)
        want = int(df["id"].sum())
        cache = str(tmp_path / "child-cache")
        jobs = [(url, None, None), (store_url, "df", cache)] * 2
        assert in_forked_children(_remote_read_sum, jobs) == [want] * 4
