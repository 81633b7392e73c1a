"""Files that claim more than their bytes hold (issue 29, holes 1 and 2): aliased table pages,
blocks that declare more than their codec can decode to, and valid objects that decode to far
more than their file's size. Each must give a clear error before the memory is allocated."""

from __future__ import annotations

import datetime
import json
import pickle
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kompakt
from helpers import footer_metadata, forge_file, with_footer_metadata
from kompakt import _core, _objects

ZSTD, ZSTD_MAGIC = 2, b"\x28\xb5\x2f\xfd"


def table_footer(meta: bytes) -> tuple[int, int, int, int]:
    """(num_rows, rows_per_group, columns, schema length) of a table footer."""
    num_rows, rows_per_group, columns, schema_len = struct.unpack_from("<QIII", meta, 8)
    return num_rows, rows_per_group, columns, schema_len


def aliased_table(path: Path, groups: int, rows_per_group: int) -> bytes:
    """A one-column table whose every row group's page index entry points at the first page:
    ``groups`` row groups of stored bytes for one."""
    kompakt.write_table(
        pd.DataFrame({"x": np.zeros(rows_per_group, dtype=np.int64)}), path, rows_per_group=rows_per_group
    )
    file = path.read_bytes()
    meta = footer_metadata(file)
    num_rows, rpg, columns, schema_len = table_footer(meta)
    assert (num_rows, rpg, columns) == (rows_per_group, rows_per_group, 1)
    ranges = 32 + schema_len
    first_page, first_summary = meta[ranges : ranges + 16], meta[ranges + 16 : ranges + 17]
    forged = (
        meta[:8]
        + struct.pack("<Q", groups * rows_per_group)
        + meta[16:ranges]
        + first_page * groups
        + first_summary * groups
    )
    return with_footer_metadata(file, forged)


def test_aliased_table_pages_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "aliased.kpk"
    forged = aliased_table(path, groups=4, rows_per_group=1000)
    path.write_bytes(forged)
    for read in (
        lambda: kompakt.read_table(path),
        lambda: kompakt.TableFile(path).verify(),
        lambda: kompakt.read_table(path, rows=slice(3000, 3010)),
    ):
        with pytest.raises(kompakt.CorruptError, match="overlaps or precedes"):
            read()


def forged_object(declared_blocks: int) -> bytes:
    """An object file whose buffer stream is ``declared_blocks`` zstd blocks of 8 bytes, each
    declaring 64 MiB: far more than 8 bytes of zstd can decode to."""
    real = kompakt.dumps(np.zeros(1 << 20, dtype=np.uint8))
    reader = _core.FileReader(real)
    pickled = reader.read_stream(0)
    reader.close()
    blocks = [(0, 0, len(pickled), pickled)]
    blocks += [(1, ZSTD, 64 << 20, ZSTD_MAGIC + bytes(4))] * declared_blocks
    return forge_file(blocks, footer_metadata(real))


def test_blocks_cannot_declare_more_than_their_codec_decodes_to() -> None:
    forged = forged_object(16)
    for trusted in (True, False):
        with pytest.raises(kompakt.CorruptError, match="cannot decode to"):
            kompakt.loads(forged, trusted=trusted)
    with pytest.raises(kompakt.CorruptError, match="cannot decode to"):
        kompakt.decompress(forged)


def test_untrusted_loads_are_limited_to_what_the_file_size_allows() -> None:
    blob = kompakt.dumps(np.zeros(300 << 20, dtype=np.uint8))  # a valid file of a few KiB
    assert len(blob) < 1 << 20
    with pytest.raises(kompakt.LimitError, match="max_size") as e:
        kompakt.loads(blob, trusted=False)
    assert isinstance(e.value, ValueError)
    assert kompakt.loads(blob, trusted=False, max_size=301 << 20).nbytes == 300 << 20
    # Trusted loads have no limit unless one is given.
    assert kompakt.loads(blob).nbytes == 300 << 20
    with pytest.raises(kompakt.LimitError):
        kompakt.loads(blob, max_size=1 << 20)
    assert _objects.untrusted_limit(10) == 256 << 20
    assert _objects.untrusted_limit(2 << 20) == 512 << 20
    for bad in (-1, 1.5, "1G", True):
        with pytest.raises(kompakt.OptionError, match="max_size"):
            kompakt.loads(blob, max_size=bad)


class NotAllowed:
    pass


def test_untrusted_load_checks_types_before_decoding_buffers(monkeypatch: pytest.MonkeyPatch) -> None:
    blob = kompakt.dumps([NotAllowed(), np.ones(100_000)])
    allocated: list[int] = []
    real_empty = _objects._empty
    monkeypatch.setattr(_objects, "_empty", lambda n: allocated.append(n) or real_empty(n))
    with pytest.raises(pickle.UnpicklingError):
        kompakt.loads(blob, trusted=False)
    assert allocated == []
    assert isinstance(kompakt.loads(blob)[0], NotAllowed)
    assert allocated == [800_000]


def test_forged_files_under_a_memory_limit_give_errors_not_memory_errors(tmp_path: Path) -> None:
    """Under an address-space limit of 1 GiB more than the interpreter uses, every hostile file
    is refused with kompakt's own error: nothing is allocated for what a file only claims."""
    (tmp_path / "object.kpk").write_bytes(forged_object(32))  # claims 2 GiB
    (tmp_path / "table.kpk").write_bytes(aliased_table(tmp_path / "table.kpk", 16, 1 << 24))  # 2 GiB
    # Valid, a few KiB, decoding to 1.5 GiB of zeros: too much for trusted=False by default.
    (tmp_path / "zeros.kpk").write_bytes(kompakt.dumps(np.zeros(3 << 29, dtype=np.uint8)))
    script = textwrap.dedent(
        """
        import json, resource, sys
        import kompakt
        from pathlib import Path
        folder = Path(sys.argv[1])
        size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), size + (1 << 30)))
        results = {}
        cases = {
            "load": lambda: kompakt.load(folder / "object.kpk"),
            "load untrusted": lambda: kompakt.load(folder / "object.kpk", trusted=False),
            "read_table": lambda: kompakt.read_table(folder / "table.kpk"),
            "TableFile.verify": lambda: kompakt.TableFile(folder / "table.kpk").verify(),
            "load zeros untrusted": lambda: kompakt.load(folder / "zeros.kpk", trusted=False),
        }
        for name, case in cases.items():
            try:
                case()
                results[name] = "no error"
            except Exception as e:
                results[name] = type(e).__name__
        print(json.dumps(results))
        """
    )
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert results == {
        "load": "CorruptError",
        "load untrusted": "CorruptError",
        "read_table": "CorruptError",
        "TableFile.verify": "CorruptError",
        "load zeros untrusted": "LimitError",
    }


def test_messages_quote_at_most_a_few_items_of_a_forged_list() -> None:
    buffers = ",".join(f'{{"stream":{i}}}' for i in range(1, 1_000_001))
    meta = (
        b'{"kompakt":"python-pickle","version":1,"pickle":{"stream":0,"protocol":5},"buffers":['
        + buffers.encode()
        + b"]}"
    )
    w = _core.FileWriter(None)
    w.write(w.add_stream(), pickle.dumps([1, 2], protocol=5))
    w.set_metadata(meta)
    with pytest.raises(kompakt.CorruptError, match=r"1000001 in all") as e:
        kompakt.loads(w.close())
    assert len(str(e.value)) < 300


def test_ordinary_mistakes_get_answers_that_name_the_way_out(tmp_path: Path) -> None:
    table = tmp_path / "t.kpk"
    kompakt.write_table(pd.DataFrame({"a": [1, 2]}), table)
    with pytest.raises(ValueError, match=r"holds a table.*kompakt\.read_table"):
        kompakt.load(table)
    # A directory is named, whichever function meets it.
    for call in (kompakt.load, kompakt.info, kompakt.open, kompakt.read_table, kompakt.TableFile):
        with pytest.raises(IsADirectoryError) as e:
            call(tmp_path)
        assert e.value.filename == str(tmp_path), call


def test_a_column_tables_cannot_hold_is_a_value_error_naming_it(tmp_path: Path) -> None:
    frame = pd.DataFrame({"ok": [1.0, 2.0], "z": np.array([1 + 2j, 3 - 1j])})
    with pytest.raises(ValueError, match=r"column 'z' has type complex128"):
        kompakt.write_table(frame, tmp_path / "c.kpk")
    with pytest.raises(ValueError, match="kompakt.save stores any object"):
        kompakt.write_table(pd.DataFrame({"o": [object()]}), tmp_path / "o.kpk")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    "pickled",
    [
        b"\x80\x05\x96" + struct.pack("<Q", 1 << 40) + b"x.",  # BYTEARRAY8 of 1 TiB, 1 byte there
        b"\x80\x05}r" + struct.pack("<I", 2_533_359_662) + b".",  # LONG_BINPUT into memo slot 2.5e9
    ],
    ids=["bytearray8", "long_binput"],
)
def test_untrusted_pickles_cannot_size_the_unpicklers_allocations(pickled: bytes) -> None:
    # Found by the atheris target (fuzz/python/objects.py) under its address-space limit.
    w = _core.FileWriter(None)
    w.write(w.add_stream(), pickled)
    w.set_metadata(b'{"kompakt":"python-pickle","version":1,"pickle":{"stream":0,"protocol":5},"buffers":[]}')
    with pytest.raises(kompakt.CorruptError, match="pickle in this object file is damaged"):
        kompakt.loads(w.close(), trusted=False)


def _object_file(pickled: bytes) -> bytes:
    w = _core.FileWriter(None)
    w.write(w.add_stream(), pickled)
    w.set_metadata(b'{"kompakt":"python-pickle","version":1,"pickle":{"stream":0,"protocol":5},"buffers":[]}')
    return w.close()


class _Forged:
    """Pickles as an allowed type called with arguments it does not take."""

    def __init__(self, *args: object) -> None:
        self.args = args

    def __reduce__(self):
        return (datetime.date, self.args)


@pytest.mark.parametrize("args", [("x",), (2020, 13, 1), ()], ids=["str", "month13", "none"])
def test_untrusted_forged_pickles_are_corrupt_files(args) -> None:
    # Opcodes that are well formed, arguments the allowed type refuses (TypeError, ValueError).
    with pytest.raises(kompakt.CorruptError, match="pickle in this object file is damaged"):
        kompakt.loads(_object_file(pickle.dumps(_Forged(*args), protocol=5)), trusted=False)


_PLAIN = pickle.dumps(
    {"d": datetime.date(2020, 1, 2), "a": [1, "xyz", b"y", 2.5, None], "t": (1, (2, 3)), "s": {"k"}}, protocol=5
)


@settings(max_examples=300, deadline=None)
@given(at=st.integers(0, len(_PLAIN) - 1), byte=st.integers(0, 255), cut=st.booleans())
def test_untrusted_loads_of_damaged_pickles_raise_only_kompakt_errors(at: int, byte: int, cut: bool) -> None:
    from kompakt._safe import Refused

    forged = _PLAIN[:at] if cut else _PLAIN[:at] + bytes([byte]) + _PLAIN[at + 1 :]
    try:
        kompakt.loads(_object_file(forged), trusted=False)
    except (kompakt.CorruptError, kompakt.LimitError, Refused):
        pass


def test_table_reads_are_limited_to_what_the_file_size_allows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kompakt import _table

    # A few KiB that decode to 8 MB (a constant column): legitimate, and the shape of a bomb.
    path = tmp_path / "zeros.kpk"
    kompakt.write_table(pd.DataFrame({"z": np.zeros(1_000_000, dtype=np.int64), "s": ["x"] * 1_000_000}), path)
    assert path.stat().st_size < 64 << 10
    assert len(kompakt.read_table(path)) == 1_000_000  # within the default floor of 1 GiB
    monkeypatch.setattr(_table, "TABLE_MIN_LIMIT", 1 << 20)
    with pytest.raises(kompakt.LimitError, match=r"rows 0\.\.1000000.*max_size"):
        kompakt.read_table(path)
    with pytest.raises(kompakt.LimitError):
        kompakt.TableFile(path)[:, "z"]
    assert len(kompakt.read_table(path, max_size=100 << 20)) == 1_000_000
    assert len(kompakt.read_table(path, rows=slice(0, 1000))) == 1000  # a part fits
    # An explicit limit: 8 bytes a row for int64, 4 of offsets for a string column.
    assert kompakt.read_table(path, ["z"], rows=(0, 100), max_size=800, to="arrow").num_rows == 100
    with pytest.raises(kompakt.LimitError):
        kompakt.read_table(path, ["z", "s"], rows=(0, 100), max_size=800)
    with pytest.raises(kompakt.OptionError, match="max_size"):
        kompakt.TableFile(path, max_size=-5)


def test_untrusted_store_values_are_walked_before_unpickling(tmp_path: Path) -> None:
    from kompakt._objects import PICKLE_ONLY_METADATA

    store = kompakt.Store(tmp_path / "st", trusted=False)
    bomb = b"\x80\x05\x96" + struct.pack("<Q", 1 << 40) + b"x."  # a small value, kept in the index
    store._core.put("objects", "bomb", [bomb], PICKLE_ONLY_METADATA)
    with pytest.raises(kompakt.CorruptError, match="pickle in this object file is damaged"):
        store.get("bomb")
    store.close()


# Issue 52, item 2: the table read budget counts every byte a read allocates (string data, list
# children, validity), before allocating it, in every read path (iter_batches and verify too).


def _runs(width: int, value: int, n: int) -> bytes:
    """A nested page of ``n`` ``width``-byte values, all ``value``: one run (run-length
    encoding 5), the way a hostile page claims many rows or a huge length in a few bytes."""
    bits = (n - 1).bit_length()
    run = value.to_bytes(width, "little") + bytes([bits]) + (n - 1).to_bytes(-(-bits // 8), "little")
    return b"\x05" + struct.pack("<I", 1) + run


def _forged_table(path: Path, template, rows_per_group: int, num_rows: int, pages: list[bytes]) -> Path:
    """A one-column table of ``template``'s schema whose row groups' pages are ``pages``
    (stored raw, one after the other in the column's stream), written to ``path``."""
    import pyarrow as pa

    kompakt.write_table(pa.table(template), path, statistics=False)
    meta = footer_metadata(path.read_bytes())
    _, _, columns, schema_len = table_footer(meta)
    assert columns == 1
    header = meta[:8] + struct.pack("<QIII", num_rows, rows_per_group, 1, schema_len) + b"\0" * 4
    entries, at = b"", 0
    for p in pages:
        entries += struct.pack("<QQ", at, at + len(p))
        at += len(p)
    summaries = bytes(p[1] if p[0] == 0 else 0 for p in pages)
    forged = header + meta[32 : 32 + schema_len] + entries + summaries
    path.write_bytes(forge_file([(0, 0, at, b"".join(pages))], forged))
    return path


def _strings_file(path: Path) -> Path:
    """A page dictionary of one 64 KiB string and 32767 one-byte codes: 2.1 GB of large strings
    from a file of about 100 KB."""
    import pyarrow as pa

    value = b"x" * (64 << 10)
    n = 32_767
    page = (
        b"\x00\x02"  # every row valid; a page dictionary
        + struct.pack("<I", 1)
        + b"\x00"
        + struct.pack("<Q", len(value))  # its one length, plain
        + struct.pack("<Q", len(value))
        + value
        + b"\x01"
        + bytes(n)  # one-byte codes, all 0
    )
    return _forged_table(path, {"s": pa.array(["a"], pa.large_string())}, n, n, [page])


def _list_file(path: Path) -> Path:
    """One row: a list of 2^28 int64 zeros (2 GiB), lengths and values each one run."""
    import pyarrow as pa

    page = b"\x00" + _runs(4, 1 << 28, 1) + b"\x00" + _runs(8, 0, 1 << 28)
    return _forged_table(path, {"l": pa.array([[1]], pa.list_(pa.int64()))}, 1, 1, [page])


def _runs_file(path: Path, groups: int = 64) -> Path:
    """``groups`` row groups of 2^24 int64 rows, each one run: 128 MiB a group from 20 bytes."""
    import pyarrow as pa

    pages = [b"\x00" + _runs(8, g, 1 << 24) for g in range(groups)]
    return _forged_table(path, {"x": pa.array([1], pa.int64())}, 1 << 24, groups << 24, pages)


def test_small_files_cannot_make_a_table_read_allocate_gigabytes(tmp_path: Path) -> None:
    import time

    strings, lists = _strings_file(tmp_path / "s.kpk"), _list_file(tmp_path / "l.kpk")
    assert strings.stat().st_size < 100_000 and lists.stat().st_size < 1000
    for path in (strings, lists):
        t = time.perf_counter()
        for read in (
            lambda path=path: kompakt.read_table(path),
            lambda path=path: kompakt.read_table(path, to="arrow"),
            lambda path=path: kompakt.read_table(path, to="polars"),
            lambda path=path: kompakt.TableFile(path).take([0]),
            lambda path=path: list(kompakt.TableFile(path).iter_batches()),
        ):
            with pytest.raises(kompakt.LimitError, match=r"limit of 1073741824 bytes \(max_size\).*needs \d+ bytes"):
                read()
        assert time.perf_counter() - t < 5
        # A larger max_size is honoured, and a smaller one too.
        with pytest.raises(kompakt.LimitError, match="limit of 1000000 bytes"):
            kompakt.read_table(path, max_size=1_000_000)
    with pytest.raises(kompakt.LimitError):
        kompakt.TableFile(strings).verify()


def test_string_data_counts_against_max_size(tmp_path: Path) -> None:
    # 2 MB strings, repeated or not (plain pages, which the codec shrinks): the offsets
    # are 4 bytes a row, the data 2 MB a row; max_size bounds both.
    big = "y" * 2_000_000
    for name, values in {"repeated": [big] * 16, "distinct": [f"{i:02d}{big[2:]}" for i in range(16)]}.items():
        path = tmp_path / f"{name}.kpk"
        kompakt.write_table(pd.DataFrame({"s": values}), path, rows_per_group=2)
        assert path.stat().st_size < 1 << 20, name
        f = kompakt.TableFile(path, max_size=8 << 20)
        for read in (
            lambda f=f: f.read(),
            lambda f=f: f.read(to="arrow"),
            lambda f=f: f.take([0, 5, 10, 15]),
            lambda f=f: f[0:16],
            lambda f=f: list(f.iter_batches(rows_per_batch=16)),
        ):
            with pytest.raises(kompakt.LimitError, match="max_size"):
                read()
        # Batches of a row group (2 rows, 4 MB) each fit: the limit is per batch.
        assert sum(b.num_rows for b in f.iter_batches(rows_per_batch=2)) == 16
        assert kompakt.read_table(path, max_size=64 << 20, to="arrow")["s"][15].as_py()[2:] == big[2:]


def test_verify_of_a_run_length_bomb_stops_at_the_limit(tmp_path: Path) -> None:
    import time

    path = _runs_file(tmp_path / "runs.kpk")  # 8 GiB of rows in a 2 KB file
    assert path.stat().st_size < 4096
    t = time.perf_counter()
    with pytest.raises(kompakt.LimitError, match="max_size"):
        kompakt.TableFile(path).verify()
    with pytest.raises(kompakt.LimitError):
        next(iter(kompakt.TableFile(path).iter_batches()))
    with pytest.raises(kompakt.LimitError):
        kompakt.read_table(path)
    assert time.perf_counter() - t < 20
    # Within a limit that holds it, a part reads: the runs are real rows.
    assert kompakt.read_table(path, rows=(5 << 24, (5 << 24) + 3), to="arrow")["x"].to_pylist() == [5, 5, 5]


def test_cli_reports_over_limit_table_reads_with_its_usual_exit_codes(tmp_path: Path) -> None:
    import os
    import time

    runs, lists = _runs_file(tmp_path / "runs.kpk"), _list_file(tmp_path / "l.kpk")
    binary = os.environ.get("KOMPAKT_BIN")
    in_python = "import sys, kompakt._core as c; sys.exit(c.run_cli(['kompakt'] + sys.argv[1:]))"
    command = [binary] if binary else [sys.executable, "-c", in_python]
    for args in (["verify", str(runs)], ["verify", str(lists)], ["head", str(lists)]):
        t = time.perf_counter()
        out = subprocess.run(command + args, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, (args, out.returncode, out.stderr)
        said = out.stdout + out.stderr
        assert "limit" in said and "abort" not in said.lower(), said
        assert time.perf_counter() - t < 30


def test_hostile_tables_under_a_memory_limit_give_limit_errors(tmp_path: Path) -> None:
    """Under an address-space limit of 1.5 GiB more than the interpreter uses, tables that
    claim 2 GiB of strings or list children (and 8 GiB of runs) are refused with ``LimitError``
    in every read path: nothing is allocated beyond the default limit of 1 GiB (the headroom
    above it is for the threads' stacks), and nothing aborts."""
    _strings_file(tmp_path / "strings.kpk")
    _list_file(tmp_path / "list.kpk")
    _runs_file(tmp_path / "runs.kpk")
    script = textwrap.dedent(
        """
        import json, resource, sys
        import kompakt
        from pathlib import Path
        folder = Path(sys.argv[1])
        size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (size + (3 << 29), size + (3 << 29)))
        results = {}
        for name in ("strings", "list", "runs"):
            path = folder / f"{name}.kpk"
            cases = {
                "read_table": lambda: kompakt.read_table(path),
                "arrow": lambda: kompakt.read_table(path, to="arrow"),
                "iter_batches": lambda: list(kompakt.TableFile(path).iter_batches()),
                "verify": lambda: kompakt.TableFile(path).verify(),
            }
            for case, read in cases.items():
                try:
                    read()
                    results[f"{name} {case}"] = "no error"
                except Exception as e:
                    results[f"{name} {case}"] = type(e).__name__
        print(json.dumps(results))
        """
    )
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)
    assert results == {k: "LimitError" for k in results} and len(results) == 12, results
