"""zstd dictionaries: training, compress/decompress with one, the errors, and the CLI."""

from __future__ import annotations

import json
import pickle
import random
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kompakt


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
    assert kompakt.info(packed[0])["format_version"] == "2.0"
    assert kompakt.info(packed[0])["dictionaries"] == [dictionary.id]
    assert kompakt.info(kompakt.compress(held_out[0]))["dictionaries"] == []
    assert kompakt.info(kompakt.compress(held_out[0]))["format_version"] == "1.0"


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
