"""compress / decompress / info / verify on in-memory data."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kompakt
from helpers import damaged_copies, random_bytes

CODECS = ["none", "lz4", "lz4:8", "lz4hc", "lz4hc:3", "zstd", "zstd:-5", "zstd:9", "gzip", "zlib:1", "auto"]


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=300_000)
    | st.builds(lambda n, b: b * n, st.integers(0, 50_000), st.binary(min_size=1, max_size=7)),
    codec=st.sampled_from(CODECS),
    typesize=st.sampled_from([None, 1, 2, 4, 8, 3]),
    threads=st.sampled_from([None, 1, 2, 3]),
    block_size=st.sampled_from([None, 65536, 100_000]),
)
def test_round_trip_any_bytes(data, codec, typesize, threads, block_size):
    packed = kompakt.compress(data, codec=codec, typesize=typesize, threads=threads, block_size=block_size)
    assert kompakt.decompress(packed) == data
    assert kompakt.info(packed)["raw_size"] == len(data)


def test_output_does_not_depend_on_thread_count():
    data = random_bytes(3_000_000, 1000, seed=1, dtype=np.int64)
    one = kompakt.compress(data, threads=1, block_size=65536)
    assert kompakt.compress(data, threads=2, block_size=65536) == one
    assert kompakt.compress(data, threads=7, block_size=65536) == one


def test_buffers_of_every_kind():
    a = np.arange(100_000, dtype=np.float64)
    for buf in (a, memoryview(a), bytearray(a.tobytes()), a.tobytes(), a.view(np.uint8)):
        assert kompakt.decompress(kompakt.compress(buf)) == a.tobytes()


def test_item_size_is_the_default_typesize():
    a = np.arange(200_000, dtype=np.int64) * 1000
    streams = kompakt.info(kompakt.compress(a, codec="lz4"))["streams"]
    assert set(streams[0]["filters"]) == {"shuffle/8"}
    streams = kompakt.info(kompakt.compress(a, codec="lz4", filter="none"))["streams"]
    assert set(streams[0]["filters"]) == {"none"}


def test_levels():
    data = b"kompakt " * 100_000
    sizes = {lvl: len(kompakt.compress(data, level=lvl)) for lvl in (0, 1, 15, 21, 60, 100)}
    assert sizes[0] > len(data)  # stored raw
    assert all(sizes[lvl] < len(data) / 50 for lvl in (1, 15, 21, 60, 100))
    assert kompakt.compress(data, codec="zstd", level=9) == kompakt.compress(data, codec="zstd:9")


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"codec": "brotli"}, "zstd"),
        ({"codec": "zstd:99"}, "zstd"),
        ({"level": 101}, "0-100"),
        ({"level": -1}, "0-100"),
        ({"codec": "zstd:3", "level": 4}, "already sets a level"),
        ({"codec": "auto", "level": 4}, "takes no level"),
        ({"threads": -1}, "threads"),
        ({"threads": 10_000}, "threads"),
        ({"typesize": 0}, "1-255"),
        ({"typesize": 256}, "1-255"),
        ({"filter": "bitshuffle"}, "shuffle"),
        ({"block_size": 1000}, "64"),
    ],
)
def test_bad_options_name_the_valid_ones(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        kompakt.compress(b"data", **kwargs)


def test_non_buffers_and_non_contiguous_are_refused():
    with pytest.raises(TypeError, match="bytes-like"):
        kompakt.compress("text")  # type: ignore[arg-type]
    with pytest.raises(BufferError, match="contiguous"):
        kompakt.compress(np.arange(100)[::2])


def test_damaged_data_raises_corrupt_error():
    data = np.random.default_rng(2).integers(0, 50, 200_000).astype(np.int32)
    packed = bytearray(kompakt.compress(data, block_size=65536))
    assert issubclass(kompakt.CorruptError, ValueError)
    with pytest.raises(kompakt.CorruptError):
        kompakt.decompress(b"not a kompakt file at all, just some text")
    for n in range(0, len(packed), max(1, len(packed) // 300)):
        with pytest.raises(kompakt.CorruptError):
            kompakt.decompress(packed[:n])
    for flipped in damaged_copies(packed, 300, seed=3):
        with pytest.raises(kompakt.CorruptError):
            kompakt.decompress(flipped)
    with pytest.raises(kompakt.CorruptError):
        kompakt.verify(packed[:-1])


def test_decompress_refuses_object_files():
    with pytest.raises(ValueError, match="loads"):
        kompakt.decompress(kompakt.dumps(np.zeros(100_000)))


def test_verify_and_info():
    data = np.zeros(1_000_000)
    packed = kompakt.compress(data, block_size=65536)
    report = kompakt.verify(packed)
    assert report["raw_size"] == data.nbytes and report["blocks"] == data.nbytes // 65536 + 1
    d = kompakt.info(packed)
    assert d["format_version"] == kompakt.FORMAT_VERSION
    assert d["file_size"] == len(packed) and d["ratio"] > 100
    assert "object" not in d


def test_the_gil_is_released_while_compressing():
    # If compress held the GIL, this thread could not wake from sleep until it returned.
    import threading
    import time

    data = random_bytes(16_000_000, 4, seed=7)
    started = threading.Event()
    result = []

    def work():
        started.set()
        result.append(kompakt.compress(data, codec="zstd:9", threads=1))

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    time.sleep(0.2)
    assert t.is_alive(), "compress finished too fast for this check; use more data"
    t.join()
    assert kompakt.decompress(result[0]) == data
