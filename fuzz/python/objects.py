"""Fuzz target for the Python object decoder: kompakt.loads(..., trusted=False) and KompaktFile.

Run with atheris (pip install atheris):
    python3 fuzz/python/objects.py -max_total_time=20
Any exception a hostile file can cause is fine; a crash of the interpreter, a hang or a
runaway allocation is a finding (libFuzzer reports them and saves the input).

Inputs are read three ways: as a whole file; as the parts of a valid file whose pickle stream,
metadata and buffer streams come from the fuzzer (reaching the unpickler past the checksums);
and through kompakt.open with random seeks and reads.
"""

import io
import sys

import atheris

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


def TestOneInput(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 2)
    try:
        if mode == 0:
            kompakt.loads(fdp.ConsumeBytes(len(data)), trusted=False)
        elif mode == 1:
            kompakt.loads(object_file(fdp), trusted=False)
        else:
            blob = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, len(data)))
            with kompakt.open(io.BytesIO(blob)) as f:
                for _ in range(fdp.ConsumeIntInRange(0, 8)):
                    f.seek(fdp.ConsumeIntInRange(0, 1 << 20))
                    f.read(fdp.ConsumeIntInRange(-1, 1 << 16))
                    f.readline()
    except Exception:  # noqa: BLE001 - any clean exception is an acceptable answer
        pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()
