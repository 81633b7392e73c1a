"""The packages some features need and kompakt does not install by itself.

``pip install kompakt`` brings no numpy, pandas, pyarrow, polars, dask or ray: each feature
that uses one imports it through :func:`require`, so that a missing one is a
``ModuleNotFoundError`` that says which call needed it and which extra installs it; loading an
object that holds one's data says the same (:func:`check_data_package`).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType


def require(module: str, extra: str, what: str) -> ModuleType:
    """Imports ``module`` (``"pandas"``, ``"pyarrow.compute"``, ``"dask.dataframe"``) for the
    call ``what`` (``"kompakt.read_table(to='pandas')"``), which the extra ``extra`` of
    kompakt provides.

    A module that cannot be found (not installed, or one it imports is not) raises
    ``ModuleNotFoundError`` naming ``what`` and the install command, with ``name`` the module
    that was missing; other import errors (a broken installation) pass through as they are.
    """
    found = sys.modules.get(module)
    if found is not None:
        return found
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        package = module.partition(".")[0]
        missing = e.name or package
        detail = "" if missing.partition(".")[0] == package else f" (importing it found no module {missing!r})"
        raise ModuleNotFoundError(
            f"{what} needs {package}{detail}: pip install 'kompakt[{extra}]'", name=missing
        ) from e


#: The packages whose objects a saved object may hold, and the extras that install them.
DATA_EXTRAS = {"numpy": "numpy", "pandas": "pandas", "pyarrow": "arrow", "polars": "polars"}


def missing_package(error: ModuleNotFoundError) -> str | None:
    """The package of ``DATA_EXTRAS`` whose absence ``error`` reports (an import of it or of one
    of its modules), or None: another module, or a module missing from a package that is there."""
    root = (error.name or "").partition(".")[0]
    if root not in DATA_EXTRAS or sys.modules.get(root) is not None:
        return None
    try:
        if importlib.util.find_spec(root) is not None:
            return None
    except (ImportError, ValueError):
        pass
    return root


def check_data_package(error: ModuleNotFoundError, what: str) -> None:
    """Called with the ``ModuleNotFoundError`` unpickling raised: when an object needs numpy,
    pandas, pyarrow or polars where it is not installed, raises one naming ``what`` (``"loading
    this object"``) and the extra to install instead of pickle's bare one. Returns otherwise
    (the caller re-raises ``error``)."""
    root = missing_package(error)
    if root is not None:
        raise ModuleNotFoundError(
            f"{what} needs {root}: pip install 'kompakt[{DATA_EXTRAS[root]}]'", name=root
        ) from error
