"""kompakt.Store on object storage (s3://bucket/prefix), against a real S3-compatible server
(moto's, in a process of its own): the local store's behaviour, shared by several "machines"
(stores with their own cache folders), with gc safe while others write."""

from __future__ import annotations

import json
import multiprocessing
import os
import pathlib
import subprocess
import tempfile
import time
import uuid

import numpy as np
import pyarrow as pa
import pytest

import kompakt
from helpers import request_record as _request
from s3server import Proxy, restore_environment, s3_bucket, use_server_environment

BUCKET = "kompakt-store-tests"


@pytest.fixture(scope="module")
def s3():
    with s3_bucket(BUCKET) as server_and_client:
        yield server_and_client


@pytest.fixture
def url(s3) -> str:
    return f"s3://{BUCKET}/{uuid.uuid4().hex}"


def objects_in(s3, url: str) -> list[str]:
    _, client = s3
    prefix = url.removeprefix(f"s3://{BUCKET}/") + "/objects/"
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return [o["Key"] for o in listed.get("Contents", [])]


def test_a_store_on_s3_behaves_like_a_local_one(url, tmp_path):
    store = kompakt.Store(url, cache_dir=tmp_path / "cache")
    assert store.path == url
    big = np.arange(2_000_000, dtype=np.float64)
    store["weights"] = big
    store.set("answer", {"x": 42}, namespace="results")
    np.testing.assert_array_equal(store["weights"], big)
    assert store.get("answer", namespace="results") == {"x": 42}
    assert store.get("missing", "default") == "default"
    assert "weights" in store and "missing" not in store
    assert sorted(store.namespaces()) == ["objects", "results"]
    assert list(store.keys()) == ["weights"]
    store.mset({"a": 1, "b": [2, 3]})
    assert store.mget(["a", "b"]) == [1, [2, 3]]
    assert len(store) == 3
    del store["a"]
    assert "a" not in store and len(store) == 2
    info = store.info()
    assert info["keys"] == 3 and info["objects"] >= 3 and info["path"] == url, info
    # No dictionary yet: the store keeps the layout older kompakt reads.
    assert info["version"] == 1 and info["dictionaries"] == 0, info
    assert store.verify()["problems"] == []

    calls = []

    @store.memoize
    def square(x):
        calls.append(x)
        return x * x

    assert square(7) == 49 and square(7) == 49 and calls == [7]
    store.clear(None)
    assert store.namespaces() == {} and len(store) == 0


def test_another_machine_sees_the_values_and_keeps_what_it_read(s3, url, tmp_path):
    _, client = s3
    writer = kompakt.Store(url, cache_dir=tmp_path / "a")
    value = np.arange(500_000)
    writer["v"] = value
    reader = kompakt.Store(url, cache_dir=tmp_path / "b")
    np.testing.assert_array_equal(reader["v"], value)
    # The object is now in b's cache: with it gone from the server, b still reads it (the key
    # record says it did not change), so repeated gets do not download it again.
    for key in objects_in(s3, url):
        client.delete_object(Bucket=BUCKET, Key=key)
    np.testing.assert_array_equal(reader["v"], value)
    # A new value from another machine is seen at once.
    writer["v"] = "changed"
    assert reader["v"] == "changed"


def test_the_cache_folder_keeps_within_its_limit_dropping_the_least_recently_used(s3, url, tmp_path):
    rng = np.random.default_rng(0)
    values = {k: rng.random(250_000) for k in "abcdef"}  # 2 MB each, incompressible
    writer = kompakt.Store(url, cache_dir=tmp_path / "writer", cache_dir_limit=float("inf"))
    writer.update(values)
    reader = kompakt.Store(url, cache_dir=tmp_path / "reader", cache_dir_limit=7_000_000)
    for key in "abc":
        np.testing.assert_array_equal(reader[key], values[key])
        time.sleep(0.02)
    # a is read again (most recently used), then d comes in: 8 MB > 7 MB, so the cache drops
    # the least recently used (b, then c) until it holds at most 5.25 MB.
    time.sleep(0.05)
    np.testing.assert_array_equal(reader["a"], values["a"])
    time.sleep(0.05)
    np.testing.assert_array_equal(reader["d"], values["d"])
    cached = reader.info()
    assert cached["cache_dir"] == str(tmp_path / "reader")
    local = kompakt.Store(tmp_path / "reader")
    assert sorted(local.keys()) == ["a", "d"]
    assert local.info()["file_bytes"] <= 5_250_000
    local.close()
    # Dropped from the cache only: every value still reads, fetched again.
    for key in "abcdef":
        np.testing.assert_array_equal(reader[key], values[key])
    assert reader.verify()["problems"] == []
    # The writer's cache has no limit; reduce_size trims it on demand.
    assert kompakt.Store(tmp_path / "writer").info()["file_bytes"] > 12_000_000
    report = writer.reduce_size(4_500_000)
    assert report["keys"] == 4 and report["file_bytes"] <= 4_500_000
    with pytest.raises(kompakt.OptionError, match="cache limit"):
        kompakt.Store(url, cache_dir=tmp_path / "x", cache_dir_limit=-1)
    with pytest.raises(ValueError, match="object storage"):
        kompakt.Store(tmp_path / "local", cache_dir_limit=10)


def test_equal_values_are_stored_once(s3, url, tmp_path):
    store = kompakt.Store(url, cache_dir=tmp_path / "c")
    for key in ["x", "y", "z"]:
        store[key] = np.zeros(300_000)
    assert len(objects_in(s3, url)) == 1


def test_gc_frees_unreferenced_objects_after_the_grace_period(s3, url, tmp_path):
    store = kompakt.Store(url, cache_dir=tmp_path / "g")
    store["k"] = np.ones(100_000)
    store["k"] = np.zeros(100_000)
    assert len(objects_in(s3, url)) == 2
    # Within the grace period (default an hour) the old object stays: another machine could
    # be committing a key to it.
    assert store.gc()["objects"] == 0
    assert len(objects_in(s3, url)) == 2
    eager = kompakt.Store(url, cache_dir=tmp_path / "g2", grace=0)
    assert eager.gc()["objects"] == 1
    assert len(objects_in(s3, url)) == 1
    np.testing.assert_array_equal(store["k"], np.zeros(100_000))
    assert eager.verify()["problems"] == []


def test_the_cli_takes_the_options_of_stores_on_object_storage(s3, url, tmp_path, cli):
    server, _ = s3
    store = kompakt.Store(url, cache_dir=tmp_path / "py")
    store["k"] = np.ones(100_000)
    store["k"] = np.zeros(100_000)
    env = {**os.environ, **server.env, "XDG_CACHE_HOME": str(tmp_path / "xdg")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(cli), "store", *args], capture_output=True, env=env, text=True)

    out = run("gc", url)
    assert out.returncode == 0 and "removed 0 unreferenced" in out.stdout, out
    out = run("--grace", "0", "--cache-dir", str(tmp_path / "cli"), "gc", url)
    assert out.returncode == 0 and "removed 1 unreferenced" in out.stdout, out
    out = run("info", url, "--json", "--cache-dir", str(tmp_path / "cli"), "--cache-limit", "none")
    info = json.loads(out.stdout)
    assert info["cache_dir"] == str(tmp_path / "cli") and info["objects"] == 1, info
    # The same checks and messages as Python's.
    out = run("ls", str(tmp_path / "py"), "--grace", "1")
    assert out.returncode == 2 and "options of stores on object storage" in out.stderr, out
    with pytest.raises(kompakt.OptionError, match="options of stores on object storage"):
        kompakt.Store(tmp_path / "py", grace=1)
    out = run("ls", url, "--grace=-1")
    assert out.returncode == 2 and 'invalid grace "-1"' in out.stderr, out
    with pytest.raises(kompakt.OptionError, match='invalid grace "-1"'):
        kompakt.Store(url, grace=-1)
    out = run("ls", url, "--cache-limit", "lots")
    assert out.returncode == 2 and "--cache-limit" in out.stderr, out


def test_damage_and_missing_objects_are_reported_by_verify(s3, url, tmp_path):
    _, client = s3
    store = kompakt.Store(url, cache_dir=tmp_path / "d")
    store["a"] = np.arange(100_000)
    store["b"] = np.arange(100_001)
    keys = objects_in(s3, url)
    client.delete_object(Bucket=BUCKET, Key=keys[0])
    fresh = kompakt.Store(url, cache_dir=tmp_path / "d2")
    problems = fresh.verify()["problems"]
    assert len(problems) == 1 and "missing" in problems[0], problems


# -- a namespace's dictionary, shared on the server -------------------------------------


def _requests(n: int, start: int = 0) -> list[dict]:
    return [_request(i) for i in range(start, start + n)]


def server_file(s3, url: str, rest: str) -> bytes | None:
    """The bytes of `rest` under the store's prefix, or None if the server has none."""
    _, client = s3
    key = url.removeprefix(f"s3://{BUCKET}/") + "/" + rest
    try:
        return client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    except client.exceptions.NoSuchKey:
        return None


def listed(s3, url: str, folder: str) -> list[str]:
    _, client = s3
    prefix = url.removeprefix(f"s3://{BUCKET}/") + f"/{folder}/"
    found = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return [o["Key"].removeprefix(prefix) for o in found.get("Contents", [])]


def test_a_namespace_dictionary_is_shared_by_every_machine(s3, url, tmp_path, cli):
    server, _ = s3
    a = kompakt.Store(url, cache_dir=tmp_path / "a")
    # Adopted on size alone: a test does not depend on timings.
    trial = a.train_dictionary(_requests(1000), namespace="requests", max_slowdown=None)
    assert trial["adopted"], trial
    dictionary = a.dictionary("requests")
    d = trial["dictionary_id"]
    assert dictionary.id == d
    a.mset({f"r{i}": _request(i) for i in range(20)}, namespace="requests")
    # On the server: the layout raised to 2, the dictionary by its id, the namespace's record
    # naming it, and each key's record naming the dictionary its object needs.
    assert json.loads(server_file(s3, url, "kompakt-store.json"))["version"] == 2
    assert server_file(s3, url, f"dictionaries/{d}.kpkd") == bytes(dictionary)
    assert json.loads(server_file(s3, url, "namespaces/nrequests.json")) == {"dictionary": d}
    assert json.loads(server_file(s3, url, "keys/nrequests/kr0"))["dictionary"] == d
    assert all(name.endswith(f".{d}.kpk") for name in objects_in(s3, url))
    info = a.info()
    assert info["version"] == 2 and info["dictionaries"] == 1 and info["dictionary_bytes"] == len(dictionary)

    # Another machine reads the values (fetching the dictionary once) and compresses its own
    # small values of the namespace with the same dictionary, without a trial of its own.
    b = kompakt.Store(url, cache_dir=tmp_path / "b")
    assert b.get("r3", namespace="requests") == _request(3)
    assert b.dictionary("requests") == dictionary
    b.set("from-b", _request(77), namespace="requests")
    assert json.loads(server_file(s3, url, "keys/nrequests/kfrom-b"))["dictionary"] == d
    assert a.get("from-b", namespace="requests") == _request(77)
    # Equal content written without a dictionary is another object, and its record says so:
    # a reader never gets an object compressed with a dictionary its record does not name.
    plain = kompakt.Store(url, cache_dir=tmp_path / "plain", dictionaries=False)
    plain.set("plain", _request(3), namespace="requests")
    assert "dictionary" not in json.loads(server_file(s3, url, "keys/nrequests/kplain"))
    assert b.get("plain", namespace="requests") == _request(3)
    assert kompakt.Store(url, cache_dir=tmp_path / "c").get("r3", namespace="requests") == _request(3)

    report = b.verify()
    assert report["problems"] == [] and report["dictionaries"] == 1 and report["keys"] == 22, report
    env = {**os.environ, **server.env, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    out = subprocess.run(
        [str(cli), "store", "dictionary", url, "-n", "requests", "-o", str(tmp_path / "r.kpkd")],
        capture_output=True,
        env=env,
    )
    assert out.returncode == 0, out
    assert (tmp_path / "r.kpkd").read_bytes() == bytes(dictionary)
    out = subprocess.run([str(cli), "store", "info", url], capture_output=True, env=env)
    assert b"dictionaries: 1" in out.stdout and b"version 2" in out.stdout, out

    # gc keeps the dictionary while a key needs it, then removes it and the namespace's record.
    eager = kompakt.Store(url, cache_dir=tmp_path / "gc", grace=0)
    assert eager.gc()["dictionaries"] == 0
    a.delete("plain", namespace="requests")
    assert eager.gc()["dictionaries"] == 0
    a.clear("requests")
    assert eager.gc()["dictionaries"] == 1
    assert listed(s3, url, "dictionaries") == [] and listed(s3, url, "namespaces") == []
    assert objects_in(s3, url) == []


def test_small_values_on_s3_adopt_a_dictionary_by_themselves(s3, url, tmp_path):
    # Values of about 1 KB, the store's own rule (at most 5 % slower): locally zstd's
    # dictionary work can refuse them for speed; on object storage a set's requests take
    # milliseconds, beside which the codec's microseconds are no slowdown.
    batches = {f"r{i}": _requests(6, start=6 * i) for i in range(2100)}
    store = kompakt.Store(url, cache_dir=tmp_path / "a")
    store.mset(batches, namespace="requests")
    dictionary = store.dictionary("requests")
    assert dictionary is not None
    assert json.loads(server_file(s3, url, "namespaces/nrequests.json")) == {"dictionary": dictionary.id}
    # The values after the trial were compressed with it; another machine reads them all.
    assert json.loads(server_file(s3, url, "keys/nrequests/kr2099"))["dictionary"] == dictionary.id
    other = kompakt.Store(url, cache_dir=tmp_path / "b")
    keys = [f"r{i}" for i in range(0, 2100, 7)]
    assert other.mget(keys, namespace="requests") == [batches[k] for k in keys]


def test_machines_adopting_at_once_converge_on_the_dictionary_published_first(s3, url, tmp_path):
    a = kompakt.Store(url, cache_dir=tmp_path / "a")
    b = kompakt.Store(url, cache_dir=tmp_path / "b")
    assert b.dictionary("logs") is None  # b has looked: none yet
    first = a.train_dictionary(_requests(1000), namespace="logs", max_slowdown=None)
    second = b.train_dictionary(_requests(1000, start=5000), namespace="logs", max_slowdown=None)
    assert first["adopted"] and not second["adopted"], second
    assert second["dictionary_id"] != first["dictionary_id"]
    assert first["dictionary_id"] in second["reason"], second
    assert b.dictionary("logs").id == first["dictionary_id"]
    b.set("x", _request(1), namespace="logs")
    assert json.loads(server_file(s3, url, "keys/nlogs/kx"))["dictionary"] == first["dictionary_id"]
    # b's dictionary went up before it lost; no key needs it, so gc takes it.
    assert sorted(listed(s3, url, "dictionaries")) == sorted(f"{t['dictionary_id']}.kpkd" for t in (first, second))
    assert kompakt.Store(url, cache_dir=tmp_path / "gc", grace=0).gc()["dictionaries"] == 1
    assert listed(s3, url, "dictionaries") == [f"{first['dictionary_id']}.kpkd"]
    with pytest.raises(ValueError, match="already has dictionary"):
        a.train_dictionary(_requests(1000), namespace="logs", max_slowdown=None)


def test_a_damaged_or_missing_dictionary_is_a_clear_error(s3, url, tmp_path):
    _, client = s3
    a = kompakt.Store(url, cache_dir=tmp_path / "a")
    d = a.train_dictionary(_requests(1000), namespace="requests", max_slowdown=None)["dictionary_id"]
    a.mset({f"r{i}": _request(i) for i in range(5)}, namespace="requests")
    key = url.removeprefix(f"s3://{BUCKET}/") + f"/dictionaries/{d}.kpkd"
    client.put_object(Bucket=BUCKET, Key=key, Body=b"not the dictionary")
    fresh = kompakt.Store(url, cache_dir=tmp_path / "fresh")
    with pytest.raises(kompakt.CorruptError, match=d):
        fresh.get("r1", namespace="requests")
    problems = fresh.verify()["problems"]
    assert len(problems) == 7, problems  # the dictionary, the namespace's record, 5 keys
    assert any(f"dictionary {d}" in p and "hash to" in p for p in problems), problems
    # Writing goes on without the dictionary, read back by anyone.
    fresh.set("new", _request(9), namespace="requests")
    assert "dictionary" not in json.loads(server_file(s3, url, "keys/nrequests/knew"))
    assert kompakt.Store(url, cache_dir=tmp_path / "other").get("new", namespace="requests") == _request(9)
    # The writer's cache still reads what it wrote; a machine without it cannot, and says why.
    assert a.get("r2", namespace="requests") == _request(2)
    client.delete_object(Bucket=BUCKET, Key=key)
    with pytest.raises(kompakt.CorruptError, match=f'dictionary {d} of key "r2" is missing'):
        kompakt.Store(url, cache_dir=tmp_path / "third").get("r2", namespace="requests")
    # A namespace record that is not one (here far larger than any) costs only the sharing:
    # it is not read into memory, sets go on, verify reports it and gc is not stopped by it.
    record = url.removeprefix(f"s3://{BUCKET}/") + "/namespaces/nrequests.json"
    client.put_object(Bucket=BUCKET, Key=record, Body=b"{" + b" " * 100_000 + b"}")
    late = kompakt.Store(url, cache_dir=tmp_path / "late")
    late.set("late", _request(4), namespace="requests")
    assert late.get("late", namespace="requests") == _request(4)
    assert any('namespace "requests"' in p and "not one" in p for p in late.verify()["problems"])
    assert late.gc()["objects"] == 0


# -- golden stores: layouts written by released versions stay readable --------------------

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "tests" / "golden" / "v1"


def golden_remote_values(layout: int) -> list[tuple[str, str, bytes]]:
    """(namespace, key, value) of tests/golden/v1/remote-store-layout{1,2}/ (written once by
    running this file as a script, never rewritten): small and empty values, noise, two keys
    sharing a value, odd names; layout 2 adds a namespace of small JSON values compressed with
    its dictionary, and one of them also stored without it (key "plain")."""
    rng = np.random.default_rng(7)
    values = [
        ("objects", "small", b"hello golden store"),
        ("objects", "empty", b""),
        ("objects", "same-a", b"equal content" * 100),
        ("objects", "same-b", b"equal content" * 100),
        ("results", "noise", rng.bytes(40_000)),
        ("naïve namespace/..", "key with spaces & %", b"odd names"),
    ]
    if layout == 2:
        values += [("requests", f"r{i}", json.dumps(_request(i)).encode()) for i in range(30)]
        values.append(("requests", "plain", json.dumps(_request(3)).encode()))
    return values


def write_golden_remote_store(layout: int, folder: pathlib.Path) -> None:
    """Writes a store of `layout` on a local moto server and downloads it into `folder`."""
    with s3_bucket(BUCKET) as (_, client), tempfile.TemporaryDirectory() as tmp:
        url = f"s3://{BUCKET}/golden"
        store = kompakt.Store(url, cache_dir=f"{tmp}/w", dictionaries=layout == 2)
        if layout == 2:
            samples = [json.dumps(r).encode() for r in _requests(1000, start=100)]
            assert store._core.train_dictionary("requests", samples, max_slowdown=None)["adopted"]
        plain = kompakt.Store(url, cache_dir=f"{tmp}/p", dictionaries=False)
        for namespace, key, value in golden_remote_values(layout):
            (plain if key == "plain" else store).set_bytes(key, value, namespace=namespace)
        assert store.info()["version"] == layout
        for item in client.list_objects_v2(Bucket=BUCKET, Prefix="golden/")["Contents"]:
            target = folder / item["Key"].removeprefix("golden/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read())


@pytest.mark.parametrize("layout", [1, 2])
def test_golden_stores_on_object_storage_stay_readable(s3, url, tmp_path, layout):
    _, client = s3
    folder = GOLDEN / f"remote-store-layout{layout}"
    prefix = url.removeprefix(f"s3://{BUCKET}/")
    files = [p for p in sorted(folder.rglob("*")) if p.is_file()]
    assert files, f"{folder} is missing"
    for path in files:
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/{path.relative_to(folder)}", Body=path.read_bytes())
    store = kompakt.Store(url, cache_dir=tmp_path / "c")
    expected = golden_remote_values(layout)
    for namespace, key, value in expected:
        assert store.get_bytes(key, namespace=namespace) == value, (namespace, key)
    info = store.info()
    assert info["version"] == layout and info["keys"] == len(expected), info
    assert info["dictionaries"] == (layout == 2), info
    report = store.verify()
    assert report["problems"] == [] and report["dictionaries"] == (layout == 2), report
    # Nothing a key needs is garbage; another machine still reads every value after a gc.
    assert kompakt.Store(url, cache_dir=tmp_path / "gc", grace=0).gc()["dictionaries"] == 0
    other = kompakt.Store(url, cache_dir=tmp_path / "other")
    for namespace, key, value in expected:
        assert other.get_bytes(key, namespace=namespace) == value, (namespace, key)


def test_an_object_replaced_on_the_server_is_damage_not_a_value(s3, url, tmp_path):
    _, client = s3
    writer = kompakt.Store(url, cache_dir=tmp_path / "w")
    big = np.random.default_rng(5).integers(0, 1 << 40, 200_000)
    writer["a"] = big
    writer["b"] = {"small": "value"}
    [path_a] = [o for o in objects_in(s3, url) if o.endswith(".kpk") and server_file_size(client, o) > 10_000]
    # Another sound kompakt file (of another value) under a's object name.
    other = tmp_path / "other.kpk"
    kompakt.save(big * 2, other)
    client.put_object(Bucket=BUCKET, Key=path_a, Body=other.read_bytes())
    for trusted in (True, False):
        reader = kompakt.Store(url, cache_dir=tmp_path / f"r{trusted}", trusted=trusted)
        with pytest.raises(kompakt.CorruptError, match="hashes to"):
            reader["a"]
        assert reader["b"] == {"small": "value"}
    problems = kompakt.Store(url, cache_dir=tmp_path / "v").verify()["problems"]
    assert len(problems) == 1 and '"a"' in problems[0] and "hashes to" in problems[0], problems
    # verify reads the server's copy, not the cache's: the writer's cache still holds the good one.
    np.testing.assert_array_equal(writer["a"], big)
    assert len(writer.verify()["problems"]) == 1
    # A truncated object, and an empty one, are damage too (not an OSError).
    for body in (b"", other.read_bytes()[:-1]):
        client.put_object(Bucket=BUCKET, Key=path_a, Body=body)
        with pytest.raises(kompakt.CorruptError):
            kompakt.Store(url, cache_dir=tmp_path / f"t{len(body)}")["a"]


def server_file_size(client, key: str) -> int:
    return client.head_object(Bucket=BUCKET, Key=key)["ContentLength"]


def test_a_damaged_key_record_stops_neither_gc_nor_its_delete(s3, url, tmp_path):
    _, client = s3
    store = kompakt.Store(url, cache_dir=tmp_path / "c", grace=0)
    store["good"] = np.arange(100_000)
    store["bad"] = np.arange(200_000)
    prefix = url.removeprefix(f"s3://{BUCKET}/")
    client.put_object(Bucket=BUCKET, Key=f"{prefix}/keys/nobjects/kbad", Body=b"{not json")
    fresh = kompakt.Store(url, cache_dir=tmp_path / "f", grace=0)
    with pytest.raises(kompakt.CorruptError):
        fresh["bad"]
    with pytest.warns(RuntimeWarning, match='key "bad"'):
        report = fresh.gc()
    assert report["damaged_records"] == 1
    assert report["objects"] == 1  # bad's object: no sound record names it
    np.testing.assert_array_equal(fresh["good"], np.arange(100_000))
    del fresh["bad"]
    assert "bad" not in fresh and server_file(s3, url, "keys/nobjects/kbad") is None
    assert fresh.gc()["damaged_records"] == 0


@pytest.mark.parametrize(
    "record",
    [
        {"format": "something else", "version": 1, "hash": "xxh3-128"},
        {"format": "kompakt store on object storage", "version": 1, "hash": "sha256"},
        {"version": 1},
    ],
    ids=["format", "hash", "neither"],
)
def test_a_layout_record_of_another_format_or_hash_is_refused(s3, url, tmp_path, record):
    _, client = s3
    key = url.removeprefix(f"s3://{BUCKET}/") + "/kompakt-store.json"
    client.put_object(Bucket=BUCKET, Key=key, Body=json.dumps(record).encode())
    with pytest.raises(kompakt.StoreError, match="not a kompakt store this version reads"):
        kompakt.Store(url, cache_dir=tmp_path / "c")


def test_a_store_of_a_newer_layout_is_refused(s3, url, tmp_path):
    _, client = s3
    key = url.removeprefix(f"s3://{BUCKET}/") + "/kompakt-store.json"
    record = {"format": "kompakt store on object storage", "version": 3, "hash": "xxh3-128"}
    client.put_object(Bucket=BUCKET, Key=key, Body=json.dumps(record).encode())
    with pytest.raises(ValueError, match="layout version 3; this kompakt reads versions 1 to 2"):
        kompakt.Store(url, cache_dir=tmp_path / "c")


def test_bad_urls_and_options_are_clear_errors(s3, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such bucket"):
        kompakt.Store("s3://no-such-bucket-kpk/st", cache_dir=tmp_path / "x")
    with pytest.raises(ValueError, match="not supported"):
        kompakt.Store("gs://bucket/st")
    with pytest.raises(ValueError, match="object storage"):
        kompakt.Store(tmp_path / "local", grace=10)
    _, client = s3
    client.put_object(Bucket=BUCKET, Key="future/kompakt-store.json", Body=b'{"version": 99}')
    with pytest.raises(kompakt.StoreError, match="version"):
        kompakt.Store(f"s3://{BUCKET}/future", cache_dir=tmp_path / "f")


# The grace period of the four machines' gc: a writer must get from looking for an object to
# writing its key's record in half of it (with 1 s, a loaded 2-core machine missed that in
# about 1 run of 5), or, when slower, find the object gone and put it back.
GRACE = 2.0


def _machine(url: str, cache: str, seed: int, rounds: int, env: dict, out) -> None:
    """One of several "machines": sets and gets overlapping keys, checking every value read
    is one some machine wrote; the last runs gc between its writes."""
    os.environ.update(env)
    store = kompakt.Store(url, cache_dir=cache, grace=GRACE)
    rng = np.random.default_rng(seed)
    try:
        for i in range(rounds):
            key = f"k{rng.integers(0, 6)}"
            if rng.random() < 0.5:
                # Small values (inline) and large ones (files), repeated across machines so
                # that uploads find objects already there.
                n = int(rng.choice([3, 200_000]))
                store[key] = (int(rng.integers(0, 3)), np.full(n, rng.integers(0, 3)))
            else:
                value = store.get(key)
                if value is not None:
                    tag, arr = value
                    assert tag in (0, 1, 2) and len(arr) in (3, 200_000) and (arr == arr[0]).all()
            if seed == 3 and i % 5 == 0:
                store.gc()
        out.put(None)
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        out.put(f"machine {seed}: {e!r}")


def test_four_machines_set_and_get_while_one_collects_garbage(s3, url, tmp_path):
    server, _ = s3
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_machine, args=(url, str(tmp_path / f"m{i}"), i, 40, server.env, out)) for i in range(4)
    ]
    for p in procs:
        p.start()
    errors = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert errors == [None] * 4, errors
    check = kompakt.Store(url, cache_dir=tmp_path / "check", grace=GRACE)
    assert check.verify()["problems"] == []
    before = {key: check[key] for key in check.keys()}
    for tag, arr in before.values():
        assert tag in (0, 1, 2) and len(arr) in (3, 200_000)
    # Once everything is older than the grace period, gc frees what no key names, and only that.
    time.sleep(GRACE + 0.2)
    check.gc()
    fresh = kompakt.Store(url, cache_dir=tmp_path / "check2", grace=GRACE)
    assert fresh.verify()["problems"] == []
    live = {str(fresh._core.hash(fresh.namespace, key)) for key in fresh.keys()}
    assert len(objects_in(s3, url)) == len(live)
    for key, (tag, arr) in before.items():
        got_tag, got = fresh[key]
        assert got_tag == tag and np.array_equal(got, arr)


def test_cli_store_commands_on_s3(s3, url, tmp_path, cli):
    server, _ = s3
    env = {**os.environ, **server.env, "XDG_CACHE_HOME": str(tmp_path / "xdg")}

    def run(*args):
        return subprocess.run([str(cli), "store", *args], capture_output=True, env=env)

    data = os.urandom(100_000) * 3
    (tmp_path / "in.bin").write_bytes(data)
    assert run("put", url, "blob", str(tmp_path / "in.bin"), "-q").returncode == 0
    listed = run("ls", "--long", url)
    assert listed.returncode == 0 and listed.stdout.decode().startswith("blob\t"), listed
    got = run("get", url, "blob", "--decompress")
    assert got.returncode == 0 and got.stdout == data
    # The Python store sees what the CLI put, and the other way round.
    store = kompakt.Store(url, cache_dir=tmp_path / "py")
    assert list(store) == ["blob"]
    store.set("py", [1, 2, 3])
    assert b"py" in run("ls", url).stdout
    info = run("info", "--json", url)
    assert info.returncode == 0 and b'"keys": 2' in info.stdout, info
    verified = run("verify", url)
    assert verified.returncode == 0 and b"OK" in verified.stdout, verified
    assert run("gc", url).returncode == 0
    missing = run("ls", f"s3://{BUCKET}/no-store-here")
    assert missing.returncode != 0 and b"no store here" in missing.stderr, missing


@pytest.fixture
def proxy(s3):
    """A proxy in front of the server that fails the requests a test asks it to, this
    process's AWS settings pointed at it meanwhile."""
    server, _ = s3
    faulty = Proxy(server)
    before = use_server_environment(faulty)
    try:
        yield faulty
    finally:
        restore_environment(before)
        os.environ.update(server.env)
        faulty.close()


def test_transient_failures_are_retried(s3, proxy, url, tmp_path):
    store = kompakt.Store(url, cache_dir=tmp_path / "writer")
    value = np.arange(100_000)
    # Uploads answered "slow down", a key record's write lost on the way: retried.
    proxy.fail("PUT", "/objects/", "503", 2)
    proxy.fail("PUT", "/keys/", "drop", 1)
    store["k"] = value
    # Reads of the key record and of the object: a lost connection, a 503.
    proxy.fail("GET", "/keys/", "drop", 1)
    proxy.fail("GET", "/objects/", "503", 1)
    np.testing.assert_array_equal(kompakt.Store(url, cache_dir=tmp_path / "reader")["k"], value)
    # Range reads of a table, likewise.
    _, client = s3
    table = tmp_path / "t.kpk"
    kompakt.write_table(pa.table({"x": np.arange(50_000)}), table, rows_per_group=4096)
    key = url.removeprefix(f"s3://{BUCKET}/") + "/t.kpk"
    client.put_object(Bucket=BUCKET, Key=key, Body=table.read_bytes())
    proxy.fail("GET", "/t.kpk", "drop", 1)
    proxy.fail("GET", "/t.kpk", "503", 1)
    got = kompakt.read_table(f"s3://{BUCKET}/{key}", rows=slice(20_000, 30_000), to="arrow")
    assert got.column("x").to_pylist() == list(range(20_000, 30_000))
    assert proxy.faults == 7
    assert store.verify()["problems"] == []


def test_an_upload_cut_off_leaves_no_object_and_the_key_as_it_was(s3, proxy, url, tmp_path):
    store = kompakt.Store(url, cache_dir=tmp_path / "u")
    store["k"] = "old"
    before = objects_in(s3, url)
    # Every attempt at the upload loses its connection halfway through the body.
    proxy.fail("PUT", "/objects/", "cut", None)
    with pytest.raises(OSError, match=url):
        store["k"] = np.arange(1_000_000)
    # (Retried or not: object_store does not retry every broken upload; failing is what counts.)
    assert proxy.faults >= 1
    proxy.heal()
    assert objects_in(s3, url) == before
    assert store["k"] == "old"
    assert kompakt.Store(url, cache_dir=tmp_path / "elsewhere")["k"] == "old"
    assert store.verify()["problems"] == []
    store["k"] = np.arange(10)
    np.testing.assert_array_equal(kompakt.Store(url, cache_dir=tmp_path / "after")["k"], np.arange(10))


def test_a_large_value_goes_up_in_parts_and_a_failed_part_leaves_nothing(s3, proxy, url, tmp_path):
    _, client = s3
    big = np.random.default_rng(1).random(9_000_000)  # 72 MB that do not compress: in 5 parts
    store = kompakt.Store(url, cache_dir=tmp_path / "w", multipart_threshold=64 << 20)
    store["k"] = "old"
    before = objects_in(s3, url)
    proxy.fail("PUT", "partNumber=2", "cut", None)
    with pytest.raises(OSError, match=url):
        store["k"] = big
    proxy.heal()
    assert objects_in(s3, url) == before
    prefix = url.removeprefix(f"s3://{BUCKET}/")
    assert client.list_multipart_uploads(Bucket=BUCKET, Prefix=prefix).get("Uploads", []) == []
    assert store["k"] == "old"
    proxy.take()
    store["k"] = big
    requests, _ = proxy.take()
    # A look for the object, the upload's start, 5 parts, its completion, the key's record.
    assert requests == 9, requests
    np.testing.assert_array_equal(kompakt.Store(url, cache_dir=tmp_path / "r")["k"], big)
    assert store.verify()["problems"] == []


if __name__ == "__main__":
    # Writes the golden stores that are missing: python3 python/tests/test_remote_store.py
    for golden_layout in (1, 2):
        golden_folder = GOLDEN / f"remote-store-layout{golden_layout}"
        if golden_folder.exists():
            print(f"{golden_folder} exists: golden files are never rewritten")
            continue
        write_golden_remote_store(golden_layout, golden_folder)
