"""A restricted unpickler for files from untrusted sources (``load(..., trusted=False)``).

pickle can call any importable function while loading, so a crafted file can run code. This
unpickler resolves only the classes and functions that pickles of plain data need: builtin
containers and scalars, datetime and decimal types, numpy arrays, pandas objects and pyarrow
tables. Anything else raises ``pickle.UnpicklingError`` before it is called.

Rules, each closing a way out that a looser rule left open:
- a global's name is one identifier, never a dotted path (``pandas`` + ``io.common.os.system``
  would otherwise walk from an allowed module to any other);
- the object found must itself live in an allowed module (``obj.__module__``), so a re-export
  cannot smuggle in a function from elsewhere;
- functions are allowed by exact name; classes by what they are (numpy array and dtype types,
  pandas frames, indexes, arrays, dtypes and scalars, Arrow data types), never by where they
  say they come from alone;
- ``getattr``, which pickles of classmethods use, is allowed for exact (class, name) pairs only,
  so that methods such as ``ndarray.tofile`` or ``DataFrame.to_csv`` stay out of reach.

It narrows what a hostile file can reach; it is not a sandbox. Loading a file you do not
trust still costs the memory and time its data asks for.
"""

from __future__ import annotations

import importlib
import pickle
from typing import Any

from kompakt._optional import missing_package

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
    "pathlib": frozenset(["Path", "PosixPath", "WindowsPath", "PurePath", "PurePosixPath", "PureWindowsPath"]),
    "zoneinfo": frozenset(["ZoneInfo"]),
    "pytz": frozenset(["_p", "_UTC"]),
    "dateutil.tz.tz": frozenset(["tzutc", "tzoffset"]),
    "kompakt.rebuild": frozenset(["datetime_array", "ndarray_subclass"]),
    "kompakt._objects": frozenset(["_time_array", "_subclass_array"]),  # the old names
    "numpy": frozenset(["ndarray", "dtype"]),
    "numpy.core.multiarray": frozenset(["_reconstruct", "scalar"]),
    "numpy._core.multiarray": frozenset(["_reconstruct", "scalar"]),
    "numpy.core.numeric": frozenset(["_frombuffer"]),
    "numpy._core.numeric": frozenset(["_frombuffer"]),
    "numpy.ma.core": frozenset(["_mareconstruct"]),
    "pandas": frozenset(["NA", "NaT"]),
    "pandas._libs.missing": frozenset(["NA"]),
    "pandas._libs.internals": frozenset(["_unpickle_block"]),
    "pandas._libs.tslibs.timestamps": frozenset(["_unpickle_timestamp"]),
    "pandas._libs.tslibs.timedeltas": frozenset(["_timedelta_unpickle"]),
    "pandas.core.indexes.base": frozenset(["_new_Index"]),
    "pandas.core.indexes.datetimes": frozenset(["_new_DatetimeIndex"]),
    "pandas.core.indexes.period": frozenset(["_new_PeriodIndex"]),
    "pandas.core.indexes.timedeltas": frozenset(["_new_TimedeltaIndex"]),
    "pandas.core.indexes.interval": frozenset(["_new_IntervalIndex"]),
    "pyarrow": frozenset("NA py_buffer schema field table chunked_array array record_batch".split()),
    "pyarrow.lib": frozenset(
        "py_buffer type_for_alias schema field table chunked_array array record_batch "
        "_restore_array _reconstruct_record_batch _reconstruct_table "
        "null bool_ int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 "
        "string utf8 large_string large_utf8 binary large_binary string_view binary_view "
        "list_ large_list list_view large_list_view struct dictionary map_ run_end_encoded "
        "union dense_union sparse_union timestamp time32 time64 duration "
        "month_day_nano_interval date32 date64 decimal32 decimal64 decimal128 decimal256".split()
    ),
}

# (module, class, attribute) reachable through getattr.
_GETATTR = frozenset([("zoneinfo._zoneinfo", "ZoneInfo", "_unpickle"), ("zoneinfo", "ZoneInfo", "_unpickle")])

_DENIED = (
    "numpy.f2py",
    "numpy.distutils",
    "numpy.testing",
    "numpy.ctypeslib",
    "numpy.lib.format",
    "pandas.io",
    "pandas.plotting",
    "pandas.testing",
    "pandas.util",
    "pandas.core.computation",
    "pandas.api",
    "pandas._testing",
    "pandas.tests",
    "pandas._config",
    "pyarrow.fs",
    "pyarrow._fs",
    "pyarrow.io",
    "pyarrow.parquet",
    "pyarrow.dataset",
    "pyarrow.csv",
    "pyarrow.json",
    "pyarrow.orc",
    "pyarrow.feather",
    "pyarrow.ipc",
    "pyarrow.flight",
    "pyarrow.cuda",
)
_FAMILIES = ("numpy", "pandas", "pyarrow")


def _family(module: str) -> str | None:
    root = module.split(".", 1)[0]
    if root not in _FAMILIES:
        return None
    if any(module == d or module.startswith(d + ".") for d in _DENIED):
        return None
    return root


def _data_class(obj: Any, family: str) -> bool:
    """A class that only holds data, from an allowed module of ``family``."""
    if not isinstance(obj, type) or _family(getattr(obj, "__module__", "") or "") != family:
        return False
    if family == "numpy":
        import numpy

        return issubclass(obj, (numpy.ndarray, numpy.dtype, numpy.generic)) and not issubclass(obj, numpy.memmap)
    if family == "pyarrow":
        import pyarrow

        return issubclass(
            obj,
            (
                pyarrow.DataType,
                pyarrow.Array,
                pyarrow.ChunkedArray,
                pyarrow.Table,
                pyarrow.RecordBatch,
                pyarrow.Schema,
                pyarrow.Field,
                pyarrow.Scalar,
                pyarrow.Buffer,
            ),
        )
    # pandas sets __module__ = "pandas" on its public classes (HDFStore too): decide by base.
    import pandas
    from pandas.api.extensions import ExtensionArray, ExtensionDtype
    from pandas.core.internals.managers import BaseBlockManager

    bases = (
        pandas.DataFrame,
        pandas.Series,
        pandas.Index,
        ExtensionArray,
        ExtensionDtype,
        BaseBlockManager,
        pandas.Timestamp,
        pandas.Timedelta,
        pandas.Period,
        pandas.Interval,
        pandas.offsets.BaseOffset,
    )
    return issubclass(obj, bases)


def _allowed(module: str, name: str) -> bool:
    if not name.isidentifier():
        return False  # dotted paths walk out of the module
    if name in _EXACT.get(module, ()):
        return True
    family = _family(module)
    if family is None:
        return False
    try:
        obj = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as e:
        if missing_package(e) is not None:
            raise  # numpy (say) is not installed: not a refusal (the loader names the extra)
        return False
    except (ImportError, AttributeError):
        return False
    if family == "pandas" and name.startswith("__pyx_unpickle_") and callable(obj):
        # Cython's generated unpicklers of pandas extension types: they restore state only.
        return _family(getattr(obj, "__module__", "") or module) == "pandas"
    return _data_class(obj, family)


class Refused(pickle.UnpicklingError):
    """What an untrusted load refuses (a type that is not data): the one error of an untrusted
    load that is not ``CorruptError``."""


class RestrictedUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` that refuses every global outside a fixed set of data types."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("builtins", "getattr"):
            return _restricted_getattr
        if not _allowed(module, name):
            raise Refused(
                f"kompakt.load(trusted=False) refuses {module}.{name}: only builtin data, datetime, "
                "numpy, pandas and pyarrow types may be loaded from an untrusted file "
                "(use trusted=True only for files you trust)"
            )
        return super().find_class(module, name)


def _restricted_getattr(obj: Any, name: Any, *default: Any) -> Any:
    key = (getattr(obj, "__module__", None), getattr(obj, "__qualname__", None), name)
    if not isinstance(obj, type) or key not in _GETATTR:
        raise Refused(f"kompakt.load(trusted=False) refuses getattr({obj!r}, {name!r})")
    return getattr(obj, name)
