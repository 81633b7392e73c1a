"""Optional packages: ``pip install kompakt`` brings no numpy, pandas, pyarrow, polars, dask or
ray. A call that needs a missing one raises ``ModuleNotFoundError`` (``name`` set) naming the
call and the extra of pyproject.toml that installs it. Each test hides packages by setting
their ``sys.modules`` entries to None, which makes importing them fail as if they were absent.
"""

from __future__ import annotations

import pickle
import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import kompakt
import kompakt.dask
import kompakt.polars
import kompakt.ray
from kompakt._optional import require

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def hide(monkeypatch, *packages: str) -> None:
    """Makes ``packages`` (and every module of theirs) unimportable until the test ends."""
    for package in packages:
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.setitem(sys.modules, package, None)


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("optional") / "t.kpk")
    kompakt.write_table(pa.table({"a": [1, 2, 3]}), path, sorted_by="a")
    return path


def missing(monkeypatch, packages: tuple[str, ...], call, message: str, name: str):
    hide(monkeypatch, *packages)
    with pytest.raises(ModuleNotFoundError) as caught:
        call()
    monkeypatch.undo()
    assert str(caught.value) == message
    assert caught.value.name.partition(".")[0] == name
    assert not isinstance(caught.value, kompakt.KompaktError)


# (packages hidden, call, the message, the package it names)
CASES = [
    pytest.param(
        ("pandas",),
        lambda t: kompakt.read_table(t),
        "kompakt.read_table(to='pandas') needs pandas: pip install 'kompakt[pandas]'",
        "pandas",
        id="read_table-pandas",
    ),
    pytest.param(
        ("pyarrow",),
        lambda t: kompakt.read_table(t),
        "kompakt.read_table(to='pandas') needs pyarrow: pip install 'kompakt[pandas]'",
        "pyarrow",
        id="read_table-pandas-without-pyarrow",
    ),
    pytest.param(
        ("pyarrow",),
        lambda t: kompakt.read_table(t, to="arrow"),
        "kompakt.read_table(to='arrow') needs pyarrow: pip install 'kompakt[arrow]'",
        "pyarrow",
        id="read_table-arrow",
    ),
    pytest.param(
        ("polars",),
        lambda t: kompakt.read_table(t, to="polars"),
        "kompakt.read_table(to='polars') needs polars: pip install 'kompakt[polars]'",
        "polars",
        id="read_table-polars",
    ),
    pytest.param(
        ("numpy",),
        lambda t: kompakt.TableFile(t).take([0], to="arrow"),
        "kompakt.TableFile.take(to='arrow') needs numpy: pip install 'kompakt[arrow]'",
        "numpy",
        id="take-numpy",
    ),
    pytest.param(
        ("pyarrow",),
        lambda t: kompakt.TableFile(t).schema,
        "kompakt.TableFile.schema needs pyarrow: pip install 'kompakt[arrow]'",
        "pyarrow",
        id="TableFile.schema",
    ),
    pytest.param(
        ("pyarrow",),
        lambda t: kompakt.TableFile(t).columns,
        "kompakt.TableFile.columns needs pyarrow: pip install 'kompakt[arrow]'",
        "pyarrow",
        id="TableFile.columns",
    ),
    pytest.param(
        ("pyarrow",),
        lambda t: kompakt.TableFile(t).iter_batches(),
        "kompakt.TableFile.iter_batches needs pyarrow: pip install 'kompakt[arrow]'",
        "pyarrow",
        id="iter_batches",
    ),
    pytest.param(
        ("pyarrow",),
        lambda t: kompakt.read_batches(t),
        "kompakt.read_batches needs pyarrow: pip install 'kompakt[arrow]'",
        "pyarrow",
        id="read_batches",
    ),
    pytest.param(
        ("pandas",),
        lambda t: kompakt.bench(b"x" * 1000, "lz4", seconds=0),
        "kompakt.bench needs pandas: pip install 'kompakt[pandas]'",
        "pandas",
        id="bench",
    ),
    pytest.param(
        ("polars",),
        lambda t: kompakt.polars.scan_table(t),
        "kompakt.polars.scan_table needs polars: pip install 'kompakt[polars]'",
        "polars",
        id="polars.scan_table",
    ),
    pytest.param(
        ("dask",),
        lambda t: kompakt.dask.read_table(t),
        "kompakt.dask.read_table needs dask: pip install 'kompakt[dask]'",
        "dask",
        id="dask.read_table",
    ),
    pytest.param(
        ("ray",),
        lambda t: kompakt.ray.read_table(t),
        "kompakt.ray.read_table needs ray: pip install 'kompakt[ray]'",
        "ray",
        id="ray.read_table",
    ),
]


@pytest.mark.parametrize(("packages", "call", "message", "name"), CASES)
def test_a_missing_package_names_the_call_and_the_extra(monkeypatch, table, packages, call, message, name):
    missing(monkeypatch, packages, lambda: call(table), message, name)


@pytest.mark.parametrize(
    ("frame", "extra"),
    [
        (pd.DataFrame({"a": [1, 2]}), "pandas"),
        (pl.DataFrame({"a": [1, 2]}), "polars"),
        (pa.table({"a": [1, 2]}), "arrow"),
    ],
    ids=["pandas", "polars", "arrow"],
)
def test_writing_a_frame_without_pyarrow_names_the_extra_of_its_kind(monkeypatch, tmp_path, frame, extra):
    for call in ("write_table", "append_table"):
        missing(
            monkeypatch,
            ("pyarrow",),
            lambda call=call: getattr(kompakt, call)(frame, tmp_path / "t.kpk"),
            f"kompakt.{call} needs pyarrow: pip install 'kompakt[{extra}]'",
            "pyarrow",
        )


@pytest.mark.parametrize(
    ("make", "package", "extra"),
    [
        (lambda: np.arange(100_000), "numpy", "numpy"),  # its buffer out of band
        (lambda: np.arange(10), "numpy", "numpy"),  # in the pickle
        (lambda: pd.DataFrame({"a": [1, 2]}), "pandas", "pandas"),
        (lambda: pa.table({"a": [1, 2]}), "pyarrow", "arrow"),
        (lambda: pl.DataFrame({"a": [1, 2]}), "polars", "polars"),
    ],
    ids=["numpy-large", "numpy-small", "pandas", "pyarrow", "polars"],
)
def test_loading_an_object_whose_package_is_missing_names_the_extra(monkeypatch, tmp_path, make, package, extra):
    blob = kompakt.dumps(make())
    store = kompakt.Store(tmp_path / "store")
    store["k"] = make()
    message = f"loading this object needs {package}: pip install 'kompakt[{extra}]'"
    calls = [lambda: kompakt.loads(blob), lambda: store.get("k")]
    if package != "polars":  # (the restricted unpickler refuses polars objects whatever is installed)
        calls += [
            lambda: kompakt.loads(blob, trusted=False),
            lambda: kompakt.Store(tmp_path / "store", trusted=False).get("k"),
        ]
    for call in calls:
        missing(monkeypatch, (package,), call, message, package)


def _pickle_file(data: bytes) -> bytes:
    w = kompakt._core.FileWriter()
    w.write(w.add_stream(), data)
    w.set_metadata(b'{"kompakt":"python-pickle","version":1,"pickle":{"stream":0,"protocol":5},"buffers":[]}')
    return w.close()


def test_a_missing_module_of_an_installed_package_is_no_missing_package():
    # A (forged) pickle naming a module numpy does not have: refused when untrusted, pickle's
    # own error when trusted; no advice to install what is installed.
    blob = _pickle_file(b"cnumpy.no_such_module\nx\n.")
    with pytest.raises(pickle.UnpicklingError, match="refuses numpy.no_such_module.x"):
        kompakt.loads(blob, trusted=False)
    with pytest.raises(ModuleNotFoundError) as caught:
        kompakt.loads(blob)
    assert caught.value.name == "numpy.no_such_module"
    assert "kompakt[" not in str(caught.value)


def test_require(monkeypatch, tmp_path):
    assert require("pyarrow.compute", "arrow", "f") is sys.modules["pyarrow.compute"]
    monkeypatch.setitem(sys.modules, "kompakt_no_such_package", None)
    with pytest.raises(ModuleNotFoundError, match=r"^f\(\) needs kompakt_no_such_package: pip install 'kompakt\[x\]'$"):
        require("kompakt_no_such_package", "x", "f()")
    # A package that is there but lacks a package it imports: that one is named too.
    (tmp_path / "kompakt_fake_package").mkdir()
    (tmp_path / "kompakt_fake_package" / "__init__.py").write_text("import kompakt_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as caught:
        require("kompakt_fake_package", "x", "f")
    assert str(caught.value) == (
        "f needs kompakt_fake_package (importing it found no module 'kompakt_no_such_dependency'): "
        "pip install 'kompakt[x]'"
    )
    assert caught.value.name == "kompakt_no_such_dependency"


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=~!;]", r, maxsplit=1)[0].strip() for r in requirements}


def test_the_extras_of_pyproject():
    if not PYPROJECT.exists():
        pytest.skip("not run from a source tree")
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    features = ("numpy", "arrow", "pandas", "polars", "dask", "ray")
    # Every extra the messages name exists, and `all` holds every package of every one of them
    # (with the same minimum versions), and no test tool.
    for name in features:
        assert name in extras, name
        assert set(extras[name]) <= set(extras["all"]), name
    assert set(extras["all"]) == set().union(*(extras[name] for name in features))
    assert not _names(extras["all"]) & {"pytest", "hypothesis", "moto[s3]", "ruff", "mypy"}
    # The versions the tests run with (python/constraints.txt, through the test extra) are
    # within them.
    assert _names(extras["all"]) - {"dask[dataframe]", "ray[data]"} <= _names(extras["test"])
