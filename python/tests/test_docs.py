"""The examples in the docstrings run and give what they show."""

import doctest

import pytest

import kompakt
import kompakt.dask
import kompakt.polars
from kompakt import _data, _file, _lab, _objects, _plan, _store, _table

PUBLIC = [
    "compress",
    "decompress",
    "save",
    "load",
    "dump",
    "dumps",
    "loads",
    "open",
    "info",
    "verify",
    "Store",
    "memoize",
    "hash_value",
    "write_table",
    "read_table",
    "append_table",
    "TableFile",
    "read_batches",
]


@pytest.mark.parametrize(
    "module", [kompakt, _data, _objects, _file, _store, _table, _plan, _lab, kompakt.dask, kompakt.polars]
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_function_has_an_example(name):
    doc = getattr(kompakt, name).__doc__ or ""
    assert ">>>" in doc or name == "dump", name
