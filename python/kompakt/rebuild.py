"""Functions that object files name in their pickles, to rebuild what kompakt saved its own way.

They are part of the object file layout (docs/FORMAT.md, "Python object files"): a file names
them by module and name, so they stay here, under these names, in every future version.
``load(..., trusted=False)`` allows them.
"""

from __future__ import annotations

import pickle
from typing import Any

__all__ = ["datetime_array", "ndarray_subclass"]


def datetime_array(buffer: Any, dtype: Any, shape: tuple[int, ...], order: str) -> Any:
    """A ``datetime64``/``timedelta64`` array of ``dtype`` and ``shape`` (``order`` "C" or "F")
    over ``buffer``, its int64 view: how kompakt saves them out of band (numpy would pickle
    them in-band, through a copy).

    >>> import numpy as np
    >>> days = np.arange(3).astype("datetime64[D]")
    >>> datetime_array(days.view(np.int64), days.dtype, days.shape, "C")
    array(['1970-01-01', '1970-01-02', '1970-01-03'], dtype='datetime64[D]')
    """
    import numpy

    flat = numpy.frombuffer(buffer, dtype=numpy.int64).view(dtype)
    return flat.reshape(shape, order=order)  # type: ignore[call-overload]


def ndarray_subclass(array: Any, cls: type) -> Any:
    """``array`` viewed as ``cls``, an ndarray subclass that keeps ndarray's pickling
    (``np.memmap``, ``np.recarray``): how kompakt saves such arrays, their data out of band
    as a plain array.

    >>> import numpy as np
    >>> type(ndarray_subclass(np.zeros(2), np.recarray)).__name__
    'recarray'
    """
    import numpy

    if not (isinstance(cls, type) and issubclass(cls, numpy.ndarray)):
        raise pickle.UnpicklingError(f"not an ndarray subclass: {cls!r}")
    return array.view(cls)
