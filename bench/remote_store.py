#!/usr/bin/env python3
"""The store on object storage: set and get of tiny values and of an 80 MB array with
``kompakt.Store("s3://...")``, against pickles written and read through fsspec/s3fs on the same
server and against a local ``kompakt.Store``, in one run; time and requests per operation.

    .venv/bin/python bench/remote_store.py [--tiny 50] [--rounds 3] [--mb 80]

The server is moto's S3 server on loopback behind python/tests/s3server.py's counting proxy (which
counts every request and the bytes of every response). Everything runs in this process, one
operation after another:

- tiny: ``set`` of ``--tiny`` small dicts under distinct keys, then ``get`` of each, twice (the
  second pass is a repeated get);
- large: a float64 array of ``--mb`` MB (random, so it stays about that size; new content each
  round): ``set``, then
  ``get`` from a store with an empty cache folder ("another machine"), then a repeated ``get``.

kompakt on S3 keeps what it reads in its cache folder, so a repeated get asks only whether the
key changed; s3fs downloads the pickle each time. Times on loopback include moto's own cost per
request (several ms, it is Python), not a network's; requests carry over. Medians.
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import statistics
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "tests"))

from s3server import Proxy, S3Server, use_server_environment  # noqa: E402

BUCKET = "kompakt-bench-store"


def measure(counter: Proxy, fn) -> tuple[float, int, int]:
    counter.take()
    t = time.perf_counter()
    fn()
    seconds = time.perf_counter() - t
    requests, received = counter.take()
    return seconds, requests, received


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiny", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mb", type=int, default=80)
    a = ap.parse_args()

    import numpy as np
    import s3fs

    import kompakt

    work = tempfile.mkdtemp(prefix="kompakt-remote-store-")
    rows = []
    with S3Server() as server:
        counter = Proxy(server)
        endpoint = counter.endpoint
        server.client().create_bucket(Bucket=BUCKET)
        use_server_environment(server)
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        fs = s3fs.S3FileSystem(endpoint_url=endpoint)
        fs.invalidate_cache()

        def methods(run: str):
            url = f"s3://{BUCKET}/{run}"
            caches = iter(range(1000))
            return {
                "kompakt S3": (
                    lambda: kompakt.Store(url, cache_dir=os.path.join(work, f"{run}-c{next(caches)}")),
                    lambda store, key, value: store.set(key, value),
                    lambda store, key: store.get(key),
                ),
                "s3fs pickle": (
                    lambda: fs,
                    lambda fs_, key, value: fs_.pipe(f"{BUCKET}/{run}-pickles/{key}", pickle.dumps(value, protocol=5)),
                    lambda fs_, key: pickle.loads(fs_.cat(f"{BUCKET}/{run}-pickles/{key}")),
                ),
                "kompakt local": (
                    lambda: kompakt.Store(os.path.join(work, f"{run}-local")),
                    lambda store, key, value: store.set(key, value),
                    lambda store, key: store.get(key),
                ),
            }

        for name in ["kompakt S3", "s3fs pickle", "kompakt local"]:
            run = uuid.uuid4().hex[:8]
            opener, setter, getter = methods(run)[name]
            store = opener()
            tiny = [{"id": i, "name": f"row {i}", "ok": True} for i in range(a.tiny)]
            for op, fn in [
                ("tiny set", lambda i: setter(store, f"t{i}", tiny[i])),
                ("tiny get", lambda i: getter(store, f"t{i}")),
                ("tiny get again", lambda i: getter(store, f"t{i}")),
            ]:
                results = [measure(counter, lambda i=i: fn(i)) for i in range(a.tiny)]
                rows.append((name, op, results))
            big = np.random.default_rng(1).random(a.mb * 1_000_000 // 8)
            sets, gets, again = [], [], []
            for r in range(a.rounds):
                # New content each round: a set of equal content would upload nothing.
                value = big + r
                sets.append(measure(counter, lambda r=r, value=value: setter(store, f"big{r}", value)))
                other = opener()  # another machine: an empty cache folder
                gets.append(measure(counter, lambda r=r, other=other: getter(other, f"big{r}")))
                again.append(measure(counter, lambda r=r, other=other: getter(other, f"big{r}")))
            assert np.array_equal(getter(opener(), "big0"), big)
            rows += [(name, f"{a.mb} MB set", sets), (name, f"{a.mb} MB get", gets)]
            rows.append((name, f"{a.mb} MB get again", again))
        counter.close()
    shutil.rmtree(work, ignore_errors=True)

    print("| operation | method | ms | requests | MB received |\n|--|--|--:|--:|--:|")
    order = ["tiny set", "tiny get", "tiny get again", f"{a.mb} MB set", f"{a.mb} MB get", f"{a.mb} MB get again"]
    for op in order:
        for name, o, results in rows:
            if o != op:
                continue
            ms = statistics.median(r[0] for r in results) * 1e3
            req = statistics.median(r[1] for r in results)
            mb = statistics.median(r[2] for r in results) / 1e6
            print(f"| {op} | {name} | {ms:.2f} | {req:g} | {mb:.3f} |")


if __name__ == "__main__":
    main()
