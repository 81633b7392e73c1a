"""``threads=`` has one meaning: None or 0 for all available cores, else that many (at most 256)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import kompakt


def test_threads_mean_the_same_everywhere():
    assert kompakt._core.resolve_threads(3) == 3
    assert kompakt._core.resolve_threads(None) == kompakt._core.resolve_threads(0) == len(os.sched_getaffinity(0))
    assert kompakt._core.resolve_threads(256) == 256
    for bad in (-1, 257):
        with pytest.raises(ValueError, match=r"invalid threads .*: 0 \(all cores\) to 256"):
            kompakt._core.resolve_threads(bad)


def test_a_table_read_honours_threads(tmp_path, monkeypatch):
    from kompakt import _table

    seen = []
    monkeypatch.setattr(_table, "_COPY_PIECE", 1 << 10)
    real = _table._writable_copies

    def spy(data, threads=None):
        seen.append(threads)
        real(data, threads)

    monkeypatch.setattr(_table, "_writable_copies", spy)
    df = {"a": np.arange(100_000), "b": np.arange(100_000) * 0.5}
    import pandas as pd

    kompakt.write_table(pd.DataFrame(df), tmp_path / "t.kpk")
    for threads in (1, 2, None):
        back = kompakt.read_table(tmp_path / "t.kpk", threads=threads)
        assert (back["a"].to_numpy() == df["a"]).all()
    assert seen == [1, 2, None]
