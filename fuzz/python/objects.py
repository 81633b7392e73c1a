"""Fuzz target for the Python object decoder: kompakt.loads(..., trusted=False) and KompaktFile.

Run with atheris (pip install atheris):
    python3 fuzz/python/objects.py -max_total_time=20
Any exception a hostile file can cause is fine; a crash of the interpreter, a hang or a
runaway allocation is a finding (libFuzzer reports them and saves the input).

Inputs are read four ways: as a whole file; as the parts of a valid file whose pickle stream,
metadata and buffer streams come from the fuzzer (reaching the unpickler past the checksums);
as a file forged block by block, each declaring a size of the fuzzer's choosing (up to 64 MiB)
with the checksums and index made consistent; and through kompakt.open with random seeks and
reads.

Memory: the address space is limited to what the interpreter uses plus 1 GiB, so an allocation
sized by what a file only claims (even one never touched, which RSS would not show) fails, and
a MemoryError is a finding, not an acceptable answer.
"""

import io
import os
import resource
import sys

import atheris

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python", "tests"))
from helpers import forge_file  # noqa: E402

with atheris.instrument_imports():
    import kompakt
    from kompakt import _core


def object_file(fdp: atheris.FuzzedDataProvider) -> bytes:
    w = _core.FileWriter(None, block_size=65536)
    w.write(w.add_stream(), fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4096)))
    extra = fdp.ConsumeIntInRange(0, 3)
    for _ in range(extra):
        w.write(w.add_stream(typesize=fdp.ConsumeIntInRange(1, 9)), fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 512)))
    layout = fdp.ConsumeIntInRange(0, 3)
    if layout == 0:  # arbitrary metadata
        w.set_metadata(fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 512)))
    else:  # mostly valid layouts, so that the unpickler is reached
        version, pickle_stream = 1, 0
        buffers = list(range(1, extra + 1))
        if layout == 3:
            version = fdp.ConsumeIntInRange(-1, 2)
            pickle_stream = fdp.ConsumeIntInRange(-1, 4)
            buffers = [fdp.ConsumeIntInRange(-1, 4) for _ in range(fdp.ConsumeIntInRange(0, 4))]
        # JSON templates: %-formatting keeps their braces as they are.
        template = '{"kompakt":"python-pickle","version":%d,"pickle":{"stream":%d,"protocol":5},"buffers":[%s]}'
        streams = ",".join('{"stream":%d}' % b for b in buffers)  # noqa: UP031
        w.set_metadata((template % (version, pickle_stream, streams)).encode())
    return w.close()


def forged_file(fdp: atheris.FuzzedDataProvider) -> bytes:
    """Blocks whose declared sizes and codecs the fuzzer picks, under a real object's metadata."""
    blocks = [(0, 0, 3, b"\x80\x05N")]  # stream 0: a pickle of None, stored raw
    for _ in range(fdp.ConsumeIntInRange(0, 40)):
        payload = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 64))
        blocks.append((1, fdp.ConsumeIntInRange(0, 4), fdp.ConsumeIntInRange(1, 64 << 20), payload))
    meta = b'{"kompakt":"python-pickle","version":1,"pickle":{"stream":0,"protocol":5},"buffers":[{"stream":1}]}'
    return forge_file(blocks, meta, streams=2)


def TestOneInput(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 3)
    try:
        if mode == 0:
            kompakt.loads(fdp.ConsumeBytes(len(data)), trusted=False)
        elif mode == 1:
            kompakt.loads(object_file(fdp), trusted=False)
        elif mode == 2:
            kompakt.loads(forged_file(fdp), trusted=False)
        else:
            blob = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, len(data)))
            with kompakt.open(io.BytesIO(blob)) as f:
                for _ in range(fdp.ConsumeIntInRange(0, 8)):
                    f.seek(fdp.ConsumeIntInRange(0, 1 << 20))
                    f.read(fdp.ConsumeIntInRange(-1, 1 << 16))
                    f.readline()
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - any clean exception is an acceptable answer
        pass


def limit_address_space(extra: int = 1 << 30) -> None:
    used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (used + extra, used + extra))


if __name__ == "__main__":
    limit_address_space()
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
