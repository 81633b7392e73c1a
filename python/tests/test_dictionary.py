"""zstd dictionaries: training, compress/decompress with one, the errors, and the CLI."""

from __future__ import annotations

import functools
import json
import pickle
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kompakt
from helpers import request_record as _request


def records(n: int, seed: int = 1) -> list[bytes]:
    rnd = random.Random(seed)
    return [
        json.dumps(
            {
                "ts": f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
                "level": rnd.choice(["info", "warn", "error"]),
                "service": rnd.choice(["checkout", "search", "auth"]),
                "user_id": rnd.randrange(100_000),
                "latency_ms": round(rnd.expovariate(0.02), 1),
                "path": f"/api/v2/orders/{rnd.randrange(10_000)}/items",
            }
        ).encode()
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def dictionary() -> kompakt.Dictionary:
    return kompakt.train_dictionary(records(3000), size=8192)


def test_small_records_shrink_and_read_back(dictionary):
    held_out = records(300, seed=2)
    plain = sum(len(kompakt.compress(r, codec="zstd:3")) for r in held_out)
    packed = [kompakt.compress(r, dictionary=dictionary) for r in held_out]
    assert sum(map(len, packed)) < plain - 40 * len(held_out)
    assert [kompakt.decompress(p, dictionary=dictionary) for p in packed] == held_out
    # Small files are compact (format 3.0), with a dictionary or without one.
    assert kompakt.info(packed[0])["format_version"] == "3.0"
    assert kompakt.info(packed[0])["dictionaries"] == [dictionary.id]
    assert kompakt.info(kompakt.compress(held_out[0]))["dictionaries"] == []
    assert kompakt.info(kompakt.compress(held_out[0]))["format_version"] == "3.0"
    large = b"".join(held_out) * (70_000 // len(b"".join(held_out)) + 1)
    assert kompakt.info(kompakt.compress(large, dictionary=dictionary))["format_version"] == "2.0"
    assert kompakt.info(kompakt.compress(large))["format_version"] == "1.0"


def test_a_missing_dictionary_is_named(dictionary):
    packed = kompakt.compress(b"".join(records(50)), dictionary=dictionary)
    with pytest.raises(kompakt.DictionaryError) as err:
        kompakt.decompress(packed)
    assert err.value.dictionary_id == dictionary.id
    assert dictionary.id in str(err.value)
    assert isinstance(err.value, ValueError)
    other = kompakt.Dictionary(b"another dictionary entirely")
    with pytest.raises(kompakt.DictionaryError, match=other.id):
        kompakt.decompress(packed, dictionary=other)
    # Several candidates: each block names its own.
    assert kompakt.decompress(packed, dictionary=[other, dictionary]) == b"".join(records(50))
    # The error survives pickling (multiprocessing, Dask workers).
    again = pickle.loads(pickle.dumps(err.value))
    assert again.dictionary_id == dictionary.id


def test_dictionaries_are_values(dictionary, tmp_path):
    assert len(dictionary.id) == 16 and len(dictionary) <= 8192
    assert pickle.loads(pickle.dumps(dictionary)) == dictionary
    assert kompakt.Dictionary(bytes(dictionary)) == dictionary
    assert hash(kompakt.Dictionary(bytes(dictionary))) == hash(dictionary)
    path = tmp_path / "logs.kpkd"
    dictionary.save(path)
    assert kompakt.Dictionary.load(path) == dictionary
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left
    data = b"".join(records(20))
    # A path or the bytes work wherever a dictionary does.
    assert kompakt.decompress(kompakt.compress(data, dictionary=path), dictionary=bytes(dictionary)) == data
    with pytest.raises(TypeError, match="load"):
        kompakt.Dictionary(str(path))
    with pytest.raises(FileNotFoundError):
        kompakt.Dictionary.load(tmp_path / "missing.kpkd")
    (tmp_path / "cut.kpkd").write_bytes(bytes(dictionary)[:40])
    with pytest.raises(kompakt.OptionError, match="cut.kpkd"):
        kompakt.Dictionary.load(tmp_path / "cut.kpkd")
    # Any buffer is one dictionary (a numpy array is not a list of them).
    import numpy as np

    packed = kompakt.compress(data, dictionary=dictionary)
    assert kompakt.decompress(packed, dictionary=np.frombuffer(bytes(dictionary), np.uint8)) == data


def test_files_and_verify_take_dictionaries(dictionary, tmp_path):
    path = tmp_path / "logs.kpk"
    rows = records(500)
    with kompakt.open(path, "wt", dictionary=dictionary) as f:
        for r in rows:
            f.write(r.decode() + "\n")
    assert kompakt.info(path)["dictionaries"] == [dictionary.id]
    with pytest.raises(kompakt.DictionaryError):
        kompakt.verify(path)
    assert kompakt.verify(path, dictionary=dictionary)["raw_size"] == sum(len(r) + 1 for r in rows)
    with kompakt.open(path, "rt", dictionary=[dictionary]) as f:
        assert [line.rstrip("\n").encode() for line in f] == rows
    with kompakt.open(path, "rb", dictionary=dictionary) as f:
        f.seek(len(rows[0]) + 1)
        assert f.read(len(rows[1])) == rows[1]
    with kompakt.open(path, "rb") as f, pytest.raises(kompakt.DictionaryError):
        f.read()
    with pytest.raises(ValueError, match="one dictionary"):
        kompakt.open(tmp_path / "x.kpk", "wb", dictionary=[dictionary])


def test_bad_requests_say_what_is_valid(dictionary):
    with pytest.raises(kompakt.OptionError, match="zstd"):
        kompakt.compress(b"x" * 1000, codec="lz4", dictionary=dictionary)
    with pytest.raises(kompakt.OptionError, match="samples"):
        kompakt.train_dictionary([b"abc"] * 3, size=4096)
    with pytest.raises(kompakt.OptionError, match="dictionary size"):
        kompakt.train_dictionary(records(100), size=10)
    with pytest.raises(kompakt.OptionError):
        kompakt.Dictionary(b"")
    # A zstd level of the user's choosing, through codec or level.
    data = b"".join(records(100))
    for kw in ({"codec": "zstd:9"}, {"codec": "zstd", "level": 1}, {"level": 60}):
        assert kompakt.decompress(kompakt.compress(data, dictionary=dictionary, **kw), dictionary=dictionary) == data


@settings(max_examples=60, deadline=None)
@given(
    dictionary=st.binary(min_size=1, max_size=2048),
    data=st.binary(max_size=20_000)
    | st.lists(st.sampled_from([b"ab", b"cde", b"\0" * 9]), max_size=3000).map(b"".join),
    level=st.integers(-5, 12),
)
def test_anything_round_trips(dictionary, data, level):
    d = kompakt.Dictionary(dictionary)
    packed = kompakt.compress(data, codec=f"zstd:{level}", dictionary=d)
    assert kompakt.decompress(packed, dictionary=d) == data


def test_the_cli_trains_and_uses_dictionaries(cli, tmp_path, dictionary):
    lines = tmp_path / "logs.jsonl"
    lines.write_bytes(b"\n".join(records(3000)) + b"\n")
    one = tmp_path / "one.json"
    one.write_bytes(records(1, seed=9)[0])
    run = lambda *a: subprocess.run([str(cli), *map(str, a)], capture_output=True, text=True)  # noqa: E731
    made = run("train-dict", lines, "--lines", "--size", "8K", "-o", tmp_path / "logs.kpkd")
    assert made.returncode == 0, made.stderr
    cli_dict = kompakt.Dictionary.load(tmp_path / "logs.kpkd")
    assert cli_dict.id in made.stderr
    assert run("compress", one, "-D", tmp_path / "logs.kpkd").returncode == 0
    packed = (tmp_path / "one.json.kpk").read_bytes()
    # Python reads what the CLI wrote with the CLI's dictionary ...
    assert kompakt.decompress(packed, dictionary=cli_dict) == one.read_bytes()
    # ... and the CLI without it names the dictionary it needs.
    missing = run("decompress", tmp_path / "one.json.kpk", "-o", tmp_path / "out", "-f")
    assert missing.returncode != 0 and cli_dict.id in missing.stderr
    assert not (tmp_path / "out").exists()
    # inspect names it; verify without it is "unreadable" (2), with it OK.
    assert cli_dict.id in run("inspect", tmp_path / "one.json.kpk").stdout
    assert run("verify", tmp_path / "one.json.kpk").returncode == 2
    assert run("verify", tmp_path / "one.json.kpk", "-D", tmp_path / "logs.kpkd").returncode == 0
    cat = run("cat", tmp_path / "one.json.kpk", "-D", tmp_path / "logs.kpkd")
    assert cat.stdout.encode() == one.read_bytes()
    # The CLI reads what Python wrote.
    (tmp_path / "py.kpk").write_bytes(kompakt.compress(one.read_bytes(), dictionary=dictionary))
    dictionary.save(tmp_path / "py.kpkd")
    got = run("decompress", tmp_path / "py.kpk", "-D", tmp_path / "py.kpkd", "-o", tmp_path / "back")
    assert got.returncode == 0, got.stderr
    assert (tmp_path / "back").read_bytes() == one.read_bytes()
    # Too few samples: a clear error that suggests --lines.
    bad = run("train-dict", one, "-o", tmp_path / "x.kpkd")
    assert bad.returncode != 0 and "--lines" in bad.stderr
    assert not (tmp_path / "x.kpkd").exists()


# -- the store's dictionaries per namespace -----------------------------------------------


def test_store_adopts_a_dictionary_for_a_namespace_of_small_values(tmp_path, cli):
    # Adopted on size alone: a test does not depend on timings.
    store = kompakt.Store(tmp_path / "cache", dictionary_max_slowdown=None)
    assert store.dictionary("requests") is None
    for i in range(2100):
        store.set(f"r{i}", _request(i), namespace="requests")
    dictionary = store.dictionary("requests")
    assert isinstance(dictionary, kompakt.Dictionary)
    info = store.info()
    assert info["dictionaries"] == 1 and info["dictionary_bytes"] == len(bytes(dictionary))
    # The same value, before and after the adoption.
    store.set("again", _request(5), namespace="requests")
    store.mset({f"m{i}": _request(i) for i in range(3)}, namespace="requests")
    sizes = stored_sizes(cli, store, "requests")
    assert sizes["again"] < 0.9 * sizes["r5"], sizes
    assert sizes["m1"] < 0.9 * sizes["r1"], sizes
    for reader in (store, kompakt.Store(tmp_path / "cache", dictionaries=False)):
        assert reader.get("r7", namespace="requests") == _request(7)
        assert reader.get("again", namespace="requests") == _request(5)
        assert reader.get("m2", namespace="requests") == _request(2)
    report = store.verify()
    assert report["problems"] == [] and report["dictionaries"] == 1
    # From the command line: the dictionary, and a value's file read with it.
    run = functools.partial(subprocess.run, capture_output=True, cwd=tmp_path)
    out = run([cli, "store", "dictionary", "cache", "-n", "requests", "-o", "requests.kpkd"])
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "requests.kpkd").read_bytes() == bytes(dictionary)
    assert run([cli, "store", "get", "cache", "again", "-n", "requests", "-o", "again.kpk"]).returncode == 0
    assert run([cli, "store", "get", "cache", "again", "-n", "requests", "-d", "-o", "want.bin"]).returncode == 0
    out = run([cli, "decompress", "again.kpk", "-D", "requests.kpkd", "-o", "got.bin"])
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "got.bin").read_bytes() == (tmp_path / "want.bin").read_bytes()
    assert pickle.loads((tmp_path / "got.bin").read_bytes()) == _request(5)
    out = run([cli, "store", "dictionary", "cache", "-n", "nothing", "-o", "none.kpkd"])
    assert out.returncode != 0 and b"has no dictionary" in out.stderr
    out = run([cli, "store", "info", "cache"])
    assert b"dictionaries: 1" in out.stdout
    assert store.gc()["dictionaries"] == 0
    # Another process reads them.
    code = "import kompakt, sys; s = kompakt.Store(sys.argv[1]);print(s.get('again', namespace='requests')['path'])"
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "cache")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == _request(5)["path"]
    store.clear("requests")
    assert store.gc()["dictionaries"] == 1
    assert store.info()["dictionaries"] == 0


def stored_sizes(cli, store, namespace):
    """Stored bytes of each key, from the CLI's listing."""
    out = subprocess.run(
        [cli, "store", "ls", "--long", "--namespace", namespace, store.path],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split("\t") for line in out.splitlines() if line]
    units = {"B": 1, "KB": 1e3, "KiB": 1024, "MB": 1e6, "MiB": 1 << 20}
    return {r[0]: float(r[3].split()[0]) * units[r[3].split()[1]] for r in rows}


def test_store_without_dictionaries_or_with_noise_trains_none(tmp_path):
    off = kompakt.Store(tmp_path / "off", dictionaries=False)
    for i in range(2100):
        off.set(f"r{i}", _request(i))
    assert off.dictionary() is None
    noise = kompakt.Store(tmp_path / "noise")
    rng = random.Random(3)
    for i in range(2100):
        noise.set(f"n{i}", rng.randbytes(300))
    assert noise.dictionary() is None
    trial = noise.train_dictionary([rng.randbytes(300) for _ in range(500)])
    assert trial["adopted"] is False and trial["reason"]
    assert noise.info()["dictionaries"] == 0


def test_train_dictionary_adopts_once(tmp_path):
    store = kompakt.Store(tmp_path / "cache")
    trial = store.train_dictionary([_request(i) for i in range(1000)], namespace="requests", max_slowdown=None)
    assert trial["adopted"], trial
    assert trial["held_out_samples"] == 200
    assert trial["stored_with"] <= 0.9 * trial["stored_without"]
    with pytest.raises(ValueError, match="already has dictionary"):
        store.train_dictionary([_request(i) for i in range(1000)], namespace="requests", max_slowdown=None)
    with pytest.raises(ValueError, match="max_slowdown"):
        store.train_dictionary([_request(i) for i in range(1000)], namespace="other", max_slowdown=-1.0)
    with pytest.raises(ValueError, match="max_slowdown"):
        kompakt.Store(tmp_path / "bad", dictionary_max_slowdown=float("nan"))
    lz4 = kompakt.Store(tmp_path / "lz4", codec="lz4")
    with pytest.raises(ValueError, match="zstd"):
        lz4.train_dictionary([_request(i) for i in range(1000)])


_store_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=40)
    | st.binary(max_size=40),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(_store_values, min_size=1, max_size=8))
def test_values_round_trip_through_a_namespace_with_a_dictionary(tmp_path_factory, values):
    path = tmp_path_factory.mktemp("dictstore") / "cache"
    store = kompakt.Store(path)
    assert store.train_dictionary([_request(i) for i in range(1000)], max_slowdown=None)["adopted"]
    store.mset({f"k{i}": v for i, v in enumerate(values)})
    for i, v in enumerate(values):
        store.set(f"s{i}", v)
        assert store.get(f"k{i}") == v
        assert store.get(f"s{i}") == v
    assert store.verify()["problems"] == []
