"""Helpers shared by the Python tests (pytest puts this folder on sys.path: `import helpers`)."""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np


def random_bytes(n: int, high: int, seed: int, dtype: Any = np.uint8) -> bytes:
    """n random integers in [0, high) from numpy's default_rng(seed), stored as `dtype`: data
    that compresses the better the smaller `high` is."""
    return np.random.default_rng(seed).integers(0, high, n).astype(dtype).tobytes()


def incompressible(n: int, seed: int | None = None) -> bytes:
    """n random bytes, which no codec shrinks: from os.urandom, or reproducible from
    random.Random(seed)."""
    return os.urandom(n) if seed is None else random.Random(seed).randbytes(n)


def damaged_copies(data: bytes, count: int, seed: int, mask: int | None = None) -> Iterator[bytearray]:
    """`count` copies of `data`, each with one byte at a random position XORed with `mask`
    (with one random bit when mask is None); positions and bits from default_rng(seed)."""
    rng = np.random.default_rng(seed)
    for pos in rng.integers(0, len(data), count):
        copy = bytearray(data)
        copy[pos] ^= mask if mask is not None else 1 << int(rng.integers(0, 8))
        yield copy


def run_in_threads(work: Callable[[Any], None], args: Iterable[Any]) -> None:
    """Runs work(arg) for every arg, each in its own thread, all at once, and fails with every
    exception the threads raised."""
    errors: list[BaseException] = []

    def guarded(arg: Any) -> None:
        try:
            work(arg)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(arg,)) for arg in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


# -- forging files (docs/FORMAT.md), for tests of hostile input ------------------------------

MAGIC = b"KMPK"


def _check32(data: bytes) -> int:
    import xxhash

    return xxhash.xxh3_64_intdigest(data) & 0xFFFFFFFF


def _footer_and_trailer(footer_offset: int, body: bytes) -> bytes:
    import struct

    import xxhash

    footer = bytes([0xF0]) + bytes(7) + struct.pack("<Q", len(body)) + body
    trailer = struct.pack("<QQQ", footer_offset, len(footer), xxhash.xxh3_64_intdigest(footer))
    return footer + trailer + struct.pack("<I", _check32(trailer)) + MAGIC


def forge_file(blocks: list[tuple[int, int, int, bytes]], metadata: bytes, streams: int | None = None) -> bytes:
    """A kompakt file of the given blocks, each ``(stream, codec id, raw_len, payload)``, with
    correct checksums, index and trailer, whatever the blocks claim."""
    import struct

    import xxhash

    head = MAGIC + struct.pack("<HHI", 1, 0, 0)
    out = bytearray(head + struct.pack("<I", _check32(head)))
    n_streams = streams if streams is not None else max((b[0] for b in blocks), default=-1) + 1
    raw = [0] * n_streams
    counts = [0] * n_streams
    entries = bytearray()
    for stream, codec, raw_len, payload in blocks:
        fields = struct.pack("<BBBBIII", 0xB1, codec, 0, 1, stream, raw_len, len(payload))
        entries += struct.pack("<QQIIIBBBB", len(out), raw[stream], stream, raw_len, len(payload), codec, 0, 1, 0)
        out += fields + struct.pack("<Q", xxhash.xxh3_64_intdigest(fields + payload)) + payload
        raw[stream] += raw_len
        counts[stream] += 1
    body = struct.pack("<IIQ", n_streams, 0, len(blocks))
    body += b"".join(struct.pack("<QQ", r, c) for r, c in zip(raw, counts))
    body += bytes(entries) + struct.pack("<Q", len(metadata)) + metadata
    return bytes(out) + _footer_and_trailer(len(out), body)


def footer_metadata(file: bytes) -> bytes:
    """The metadata a kompakt file's footer holds (a table's footer, an object's description)."""
    import struct

    footer_offset, footer_len = struct.unpack_from("<QQ", file, len(file) - 32)
    body = file[footer_offset + 16 : footer_offset + footer_len]
    stream_count, _, block_count = struct.unpack_from("<IIQ", body, 0)
    at = 16 + 16 * stream_count + 32 * block_count
    (meta_len,) = struct.unpack_from("<Q", body, at)
    return body[at + 8 : at + 8 + meta_len]


def with_footer_metadata(file: bytes, metadata: bytes) -> bytes:
    """``file`` with its footer's metadata replaced, and the footer's lengths and checksums
    made to match."""
    import struct

    footer_offset, footer_len = struct.unpack_from("<QQ", file, len(file) - 32)
    body = file[footer_offset + 16 : footer_offset + footer_len]
    stream_count, _, block_count = struct.unpack_from("<IIQ", body, 0)
    at = 16 + 16 * stream_count + 32 * block_count
    body = body[:at] + struct.pack("<Q", len(metadata)) + metadata
    return file[:footer_offset] + _footer_and_trailer(footer_offset, body)


def request_record(i: int) -> dict:
    """A small dict like a web request's log record: values of one namespace that look alike,
    for the stores' dictionaries."""
    return {
        "user": 10_000 + i * 17,
        "path": f"/api/v2/orders/{i * 31}/items",
        "status": ["ok", "not found", "error"][i % 3],
        "latency_ms": (i * 13) % 250,
        "agent": "Mozilla/5.0 (X11; Linux x86_64)",
    }
