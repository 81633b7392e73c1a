import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    """The `kompakt` binary: $KOMPAKT_BIN, else the release build (scripts/test.sh builds it)."""
    path = pathlib.Path(os.environ.get("KOMPAKT_BIN", REPO / "target" / "release" / "kompakt"))
    if not path.exists():
        pytest.fail(f"kompakt CLI not found at {path}: run `cargo build --release` or set KOMPAKT_BIN")
    return path
