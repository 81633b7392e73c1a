"""kompakt.bench: the codec lab from Python (the measurements themselves are tested in Rust,
crates/kompakt-lab, and through the CLI)."""

import numpy as np
import pytest

import kompakt


def walk(n: int = 200_000) -> np.ndarray:
    return np.cumsum(np.random.default_rng(1).normal(size=n))


def test_rows_cover_every_configuration_with_squash_columns():
    df = kompakt.bench(
        walk(), "zstd:1-2,lz4", filters="shuffle,none", block_sizes=[65536, 1 << 20], threads=1, seconds=0
    )
    assert df["codec"].iloc[0] == "memcpy"
    body = df.iloc[1:]
    assert len(body) == 3 * 2 * 2
    assert set(zip(body["codec"], body["filter"], body["block_size"])) == {
        (c, f, b) for c in ["zstd:1", "zstd:2", "lz4"] for f in ["shuffle", "none"] for b in [65536, 1 << 20]
    }
    for column in [
        "dataset",
        "codec_name",
        "level",
        "compress_cpu",
        "compress_wall",
        "decompress_cpu",
        "decompress_wall",
    ]:
        assert column in df.columns
    assert (body["compress_wall"] > 0).all() and (body["uncompressed_size"] == walk().nbytes).all()
    # A float64 array is shuffled by 8 by default: its bytes compress better than unshuffled.
    shuffled = body[(body["codec"] == "zstd:1") & (body["filter"] == "shuffle") & (body["block_size"] == 1 << 20)]
    plain = body[(body["codec"] == "zstd:1") & (body["filter"] == "none") & (body["block_size"] == 1 << 20)]
    assert shuffled["ratio"].iloc[0] > plain["ratio"].iloc[0]


def test_a_path_is_read_and_recommendations_follow_the_sink(tmp_path):
    path = tmp_path / "walk.bin"
    path.write_bytes(walk().tobytes())
    df = kompakt.bench(path, ["none", "zstd:1"], threads=[1], seconds=0, sink_speed=10, recommend=True, typesize=8)
    assert (df["dataset"] == "walk.bin").all()
    assert (df["sink_mb_s"] == 10).all()
    assert (df["write_mb_s"] <= 10 * df["ratio"] * (1 + 1e-9)).all()
    picks = df.attrs["recommendations"]
    assert [p["goal"] for p in picks][::2] == ["fastest write", "fastest read"]
    # Through 10 MB/s the compressed file is written and read faster than the raw one.
    assert picks[0]["codec"] == "zstd:1" and picks[2]["codec"] == "zstd:1"


def test_a_measured_disk_is_the_sink_and_leaves_nothing_behind(tmp_path):
    target = tmp_path / "disk"
    target.mkdir()
    df = kompakt.bench(walk(), "lz4,zstd:1", threads=1, seconds=0, disk=target, disk_bytes=4 << 20, recommend=True)
    disk = df.attrs["disk"]
    assert disk["path"] == str(target) and disk["bytes"] == 4 << 20
    assert disk["write_bytes_per_sec"] > 0 and disk["read_bytes_per_sec"] > 0
    assert (df["sink_write_mb_s"] == disk["write_bytes_per_sec"] / 1e6).all()
    assert (df["read_mb_s"] <= df["sink_read_mb_s"] * df["ratio"] * (1 + 1e-9)).all()
    assert list(target.iterdir()) == []
    with pytest.raises(kompakt.OptionError, match="sink_speed and disk"):
        kompakt.bench(b"x" * 1000, seconds=0, disk=target, sink_speed=100)
    with pytest.raises(OSError, match="no-such-folder"):
        kompakt.bench(b"x" * 1000, seconds=0, disk=target / "no-such-folder", disk_bytes=4 << 20)


def test_a_chart_is_drawn_where_asked(tmp_path):
    png, svg = tmp_path / "lab.png", tmp_path / "lab.svg"
    kompakt.bench(walk(), "lz4,zstd:1-3", threads=1, seconds=0, plot=png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    kompakt.bench(walk(), ["zstd:1-2"], threads=1, seconds=0, plot=str(svg))
    assert "decompression MB/s" in svg.read_text()
    with pytest.raises(kompakt.OptionError, match="png or .svg"):
        kompakt.bench(walk(), "lz4", threads=1, seconds=0, plot=tmp_path / "lab.gif")


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"codecs": "zstd:9-1"}, "9 is above 1"),
        ({"codecs": "brotli"}, "brotli"),
        ({"filters": "xor"}, "xor"),
        ({"sink_speed": "fast"}, "200MB/s"),
        ({"disk": ".", "disk_bytes": 1000}, "at least 1 MiB"),
        ({"seconds": float("nan")}, "0 to 3600"),
        ({"threads": []}, "at least one"),
    ],
)
def test_bad_options_are_option_errors_naming_them(kwargs, needle):
    with pytest.raises(kompakt.OptionError, match=needle):
        kompakt.bench(b"x" * 1000, **{"seconds": 0, **kwargs})
