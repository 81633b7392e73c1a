"""The exception hierarchy: one base class, each kind also the built-in users catch."""

from __future__ import annotations

import pickle

import pytest

import kompakt
from kompakt import CorruptError, KompaktError, OptionError, StoreError, UsageError


def test_every_kind_is_a_kompakt_error_and_a_value_error():
    for cls in (CorruptError, OptionError, StoreError, UsageError):
        assert issubclass(cls, KompaktError) and issubclass(cls, ValueError)
    assert kompakt._core.CorruptError is CorruptError


def test_a_damaged_file_names_the_file_the_structure_and_the_offset(tmp_path):
    path = tmp_path / "x.kpk"
    packed = bytearray(kompakt.compress(b"kompakt " * 100_000, codec="zstd"))
    packed[40] ^= 0xFF  # the first byte after the header (16) and the first block header (24)
    path.write_bytes(bytes(packed))
    with pytest.raises(CorruptError) as caught:
        kompakt.decompress(path.read_bytes())
    err = caught.value
    assert (err.path, err.what, err.offset) == (None, "block", 16), str(err)
    with pytest.raises(CorruptError) as caught:
        kompakt.verify(path)
    assert (caught.value.path, caught.value.what, caught.value.offset) == (str(path), "block", 16)
    garbage = tmp_path / "garbage.kpk"
    garbage.write_bytes(b"hello, this is not kompakt" * 10)
    with pytest.raises(CorruptError) as caught:
        kompakt.info(garbage)
    assert caught.value.path == str(garbage)
    assert caught.value.what is not None
    # Exceptions cross process boundaries (multiprocessing, joblib) with their attributes.
    back = pickle.loads(pickle.dumps(err))
    assert (type(back), str(back), back.what, back.offset) == (CorruptError, str(err), err.what, err.offset)


def test_bad_options_are_option_errors_naming_the_choices():
    with pytest.raises(OptionError, match="lz4hc"):
        kompakt.compress(b"x", codec="brotli")
    with pytest.raises(OptionError, match="already sets a level"):
        kompakt.compress(b"x", codec="zstd:3", level=9)
    packed = kompakt.compress(b"0123456789")
    with kompakt.open(packed) as f, pytest.raises(ValueError):
        f.seek(-1)


def test_a_folder_that_is_not_a_store_is_a_store_error(tmp_path):
    (tmp_path / "data.csv").write_text("1,2")
    with pytest.raises(StoreError, match="not a kompakt store"):
        kompakt.Store(tmp_path)


def _file_with_metadata(metadata: bytes) -> bytes:
    w = kompakt._core.FileWriter()
    w.write(w.add_stream(), b"payload")
    w.set_metadata(metadata)
    return w.close()


def test_deeply_nested_metadata_is_damage_not_a_recursion_error():
    blob = _file_with_metadata(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    for call in (kompakt.loads, lambda b: kompakt.loads(b, trusted=False), kompakt.info):
        with pytest.raises(CorruptError, match="nested too deeply"):
            call(blob)


def test_garbage_pandas_metadata_in_a_table_is_damage(tmp_path):
    import pyarrow as pa

    table = pa.table({"a": [1, 2, 3]}).replace_schema_metadata({b"pandas": b"{not json"})
    kompakt.write_table(table, tmp_path / "t.kpk")
    assert kompakt.read_table(tmp_path / "t.kpk", to="arrow").num_rows == 3
    with pytest.raises(CorruptError, match="pandas metadata"):
        kompakt.read_table(tmp_path / "t.kpk")
    table = table.replace_schema_metadata({b"pandas": b"[1, 2]"})
    kompakt.write_table(table, tmp_path / "u.kpk")
    with pytest.raises(CorruptError, match="not a JSON object"):
        kompakt.read_table(tmp_path / "u.kpk")
    assert kompakt.read_table(tmp_path / "t.kpk", to="polars").shape == (3, 1)
