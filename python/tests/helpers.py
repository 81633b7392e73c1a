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
