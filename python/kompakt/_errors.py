"""The exceptions kompakt raises.

Every error kompakt raises for a reason of its own is a ``KompaktError``; each kind is also the
built-in exception Python users already catch for it (``ValueError``), so ``except ValueError``
keeps working. Failures of the operating system stay ``OSError`` (``FileNotFoundError``,
``PermissionError``, ...), and an exception raised by a Python file object passes through.
"""

from __future__ import annotations


class KompaktError(Exception):
    """Base class of the errors kompakt raises for reasons of its own."""


class CorruptError(KompaktError, ValueError):
    """The data is not a valid kompakt file: damaged (a checksum failed, it was truncated,
    a field holds an impossible value) or never one.

    Attributes (``None`` where unknown): ``path``, the file; ``what``, the structure that is
    damaged (``"block"``, ``"footer"``, ...); ``offset``, its byte offset in the file.
    """

    def __init__(
        self,
        message: str,
        path: str | None = None,
        what: str | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.what = what
        self.offset = offset

    def __reduce__(self):
        return (type(self), (str(self), self.path, self.what, self.offset))


class OptionError(KompaktError, ValueError):
    """An option or a request is not valid: the message names the valid choices (an unknown
    codec, a level out of range, a byte range outside the stream)."""


class StoreError(KompaktError, ValueError):
    """A store folder is missing, is not a kompakt store, or contradicts what was asked for;
    or its index reported an error."""


class LimitError(KompaktError, ValueError):
    """The data would decode to more than a read allows: an untrusted object larger than
    ``max_size``. The message names the sizes and the parameter that raises the limit."""


class DictionaryError(KompaktError, ValueError):
    """The data was compressed with a zstd dictionary that was not given (or another one was).

    ``dictionary_id`` is the id (16 hex digits) of the dictionary the data needs: pass that
    ``kompakt.Dictionary`` as ``dictionary=``.
    """

    def __init__(self, message: str, dictionary_id: str | None = None) -> None:
        super().__init__(message)
        self.dictionary_id = dictionary_id

    def __reduce__(self):
        return (type(self), (str(self), self.dictionary_id))


class UsageError(KompaktError, ValueError):
    """An object was used in a way it does not allow (writing to a finished stream, ...)."""


__all__ = [
    "CorruptError",
    "DictionaryError",
    "KompaktError",
    "LimitError",
    "OptionError",
    "StoreError",
    "UsageError",
]
