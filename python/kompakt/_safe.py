"""A restricted unpickler for files from untrusted sources (``load(..., trusted=False)``).

pickle can call any importable function while loading, so a crafted file can run code. This
unpickler resolves only the classes and functions that pickles of plain data need: builtin
containers and scalars, datetime and decimal types, numpy arrays, pandas objects and pyarrow
tables. Anything else raises ``pickle.UnpicklingError`` before it is called.

It narrows what a hostile file can reach; it is not a sandbox. Loading a file you do not
trust still costs the memory and time its data asks for.
"""

from __future__ import annotations

import importlib
import pickle
from typing import Any

_EXACT: dict[str, frozenset[str]] = {
    "builtins": frozenset(
        "bool bytearray bytes complex dict float frozenset int list range set slice str tuple".split()
    ),
    "collections": frozenset("OrderedDict defaultdict deque Counter".split()),
    "datetime": frozenset("date datetime time timedelta timezone".split()),
    "decimal": frozenset(["Decimal"]),
    "fractions": frozenset(["Fraction"]),
    "uuid": frozenset(["UUID"]),
    "copyreg": frozenset(["_reconstructor"]),
    "zoneinfo": frozenset(["ZoneInfo", "ZoneInfo._unpickle"]),
    "zoneinfo._zoneinfo": frozenset(["ZoneInfo", "ZoneInfo._unpickle"]),
    "pytz": frozenset(["_p", "_UTC"]),
    "dateutil.tz.tz": frozenset(["tzutc", "tzoffset", "tzlocal"]),
    "numpy": frozenset(["ndarray", "dtype"]),
    "kompakt._objects": frozenset(["_time_array"]),
    "numpy.core.multiarray": frozenset(["_reconstruct", "scalar"]),
    "numpy._core.multiarray": frozenset(["_reconstruct", "scalar"]),
    "numpy.core.numeric": frozenset(["_frombuffer"]),
    "numpy._core.numeric": frozenset(["_frombuffer"]),
    "numpy.ma.core": frozenset(["_mareconstruct", "MaskedArray"]),
    "pyarrow.lib": frozenset(
        "py_buffer type_for_alias schema field table chunked_array array record_batch "
        "_restore_array _reconstruct_record_batch _reconstruct_table "
        "null bool_ int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 "
        "string utf8 large_string large_utf8 binary large_binary string_view binary_view "
        "list_ large_list list_view large_list_view struct dictionary map_ run_end_encoded "
        "union dense_union sparse_union timestamp time32 time64 date32 date64 duration "
        "month_day_nano_interval decimal32 decimal64 decimal128 decimal256".split()
    ),
    "pandas": frozenset(["NA", "NaT"]),
    "pandas._libs.missing": frozenset(["NA"]),
    "pyarrow": frozenset("NA py_buffer schema field table chunked_array array record_batch".split()),
}

# Modules of pandas that do I/O, evaluate expressions or exist for tests: never reachable.
_PANDAS_DENIED = ("pandas.io", "pandas.plotting", "pandas.testing", "pandas.util", "pandas.core.computation",
                  "pandas.api", "pandas._testing", "pandas.tests")


def _is_dunder(part: str) -> bool:
    return part.startswith("__") and part.endswith("__")


def _resolve(module: str, name: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _allowed(module: str, name: str) -> bool:
    if any(_is_dunder(part) or not part for part in name.split(".")):
        return False
    if name in _EXACT.get(module, ()):
        return True
    if module.startswith(("numpy.", "numpy")) and module.split(".")[0] == "numpy":
        # Array and scalar types (numpy.dtypes.Float64DType, numpy.float64, ...), never memmap.
        if name == "memmap":
            return False
        import numpy

        try:
            obj = _resolve(module, name)
        except (ImportError, AttributeError):
            return False
        return isinstance(obj, type) and issubclass(obj, (numpy.dtype, numpy.generic, numpy.ndarray))
    if module.split(".")[0] == "pyarrow":
        # Arrow data classes (types, arrays, tables, scalars), never files or streams.
        import pyarrow

        try:
            obj = _resolve(module, name)
        except (ImportError, AttributeError):
            return False
        data = (pyarrow.DataType, pyarrow.Array, pyarrow.ChunkedArray, pyarrow.Table, pyarrow.RecordBatch,
                pyarrow.Schema, pyarrow.Field, pyarrow.Scalar, pyarrow.Buffer)
        return isinstance(obj, type) and issubclass(obj, data)
    if (module == "pandas" or module.startswith("pandas.")) and not module.startswith(_PANDAS_DENIED):
        # pandas pickles reference its private reconstructors (_unpickle_block, _new_Index,
        # __pyx_unpickle_...) and its data classes (DataFrame, Index, dtypes, arrays).
        try:
            obj = _resolve(module, name)
        except (ImportError, AttributeError):
            return False
        leaf = name.rsplit(".", 1)[-1]
        return isinstance(obj, type) or leaf.startswith("_")
    return False


class RestrictedUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` that refuses every global outside a fixed set of data types."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("builtins", "getattr"):
            # Pickles of classmethods (ZoneInfo._unpickle) use getattr; only on classes this
            # unpickler itself let in, and never for dunder or private-chain escapes.
            return self._getattr
        if not _allowed(module, name):
            raise pickle.UnpicklingError(
                f"kompakt.load(trusted=False) refuses {module}.{name}: only builtin data, datetime, "
                "numpy, pandas and pyarrow types may be loaded from an untrusted file "
                "(use trusted=True only for files you trust)"
            )
        found = super().find_class(module, name)
        if isinstance(found, type):
            self._classes = getattr(self, "_classes", set()) | {found}
        return found

    def _getattr(self, obj: Any, name: str, *default: Any) -> Any:
        if obj not in getattr(self, "_classes", ()) or not isinstance(name, str) or name.startswith("__"):
            raise pickle.UnpicklingError(
                f"kompakt.load(trusted=False) refuses getattr({obj!r}, {name!r}) in an untrusted file"
            )
        return getattr(obj, name, *default)
