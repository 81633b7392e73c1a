#!/usr/bin/env python3
"""Loading one large object from S3: ``kompakt.load(url)`` against numpy's ``.npy`` and a pickle
fetched with s3fs and with boto3, from the same server, in one run.

    .venv/bin/python bench/remote_load.py                 two 80 MB arrays, best of 3
    .venv/bin/python bench/remote_load.py --mb 20 --rounds 1

The server is moto's (python/tests/s3server.py) on the loopback address, behind the counting
proxy every client goes through, so requests and bytes received are counted the same way for
all. Arrays: float64 uniform noise (incompressible: the file is the array) and an int64 random
walk (kompakt's default codec makes it about 6x smaller). Each is uploaded as ``kompakt.dumps``
(defaults), as ``np.save`` and as a pickle (protocol 5). Methods, each in this process:

- ``kompakt.load``: ``kompakt.load("s3://...")``, range reads of the blocks, prefetched;
- ``s3fs np.load``: ``np.load(fs.open(path))`` (s3fs's default read-ahead cache);
- ``s3fs cat + pickle``: ``pickle.loads(fs.cat(path))``;
- ``boto3 get + np.load``: one GET of the whole object, then ``np.load`` on the bytes.

Times on loopback show what the requests cost on this machine: moto copies the whole object
for each range request it answers (about 45 ms for 80 MB here), which weighs on every method
that reads by ranges. Requests and bytes carry over to a real network.
"""

from __future__ import annotations

import argparse
import io
import os
import pickle
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "tests"))

from s3server import Proxy, S3Server, use_server_environment  # noqa: E402

BUCKET = "kompakt-bench-load"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=80)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()

    import numpy as np
    import s3fs

    import kompakt

    n = a.mb * 1_000_000 // 8
    rng = np.random.default_rng(7)
    arrays = {
        "float64 noise": rng.random(n),
        "int64 random walk": np.cumsum(rng.integers(-100, 100, n)),
    }
    with S3Server() as server:
        client = server.client()
        client.create_bucket(Bucket=BUCKET)
        use_server_environment(server)
        proxy = Proxy(server)
        os.environ["AWS_ENDPOINT_URL"] = proxy.endpoint
        fs = s3fs.S3FileSystem(endpoint_url=proxy.endpoint)
        import boto3

        boto = boto3.client("s3", endpoint_url=proxy.endpoint)
        print("| array | method | object MB | requests | MB received | load ms (best) |")
        print("|--|--|--:|--:|--:|--:|")
        for name, array in arrays.items():
            slug = name.replace(" ", "-")
            npy = io.BytesIO()
            np.save(npy, array)
            bodies = {
                "kpk": kompakt.dumps(array),
                "npy": npy.getvalue(),
                "pickle": pickle.dumps(array, protocol=5),
            }
            for ext, body in bodies.items():
                client.put_object(Bucket=BUCKET, Key=f"{slug}.{ext}", Body=body)
            methods = {
                "kompakt.load": ("kpk", lambda: kompakt.load(f"s3://{BUCKET}/{slug}.kpk")),
                "s3fs np.load": ("npy", lambda: np.load(fs.open(f"{BUCKET}/{slug}.npy"))),
                "s3fs cat + pickle": ("pickle", lambda: pickle.loads(fs.cat(f"{BUCKET}/{slug}.pickle"))),
                "boto3 get + np.load": (
                    "npy",
                    lambda: np.load(io.BytesIO(boto.get_object(Bucket=BUCKET, Key=f"{slug}.npy")["Body"].read())),
                ),
            }
            for method, (ext, load) in methods.items():
                times = []
                for _ in range(a.rounds):
                    fs.invalidate_cache()
                    proxy.take()
                    t = time.perf_counter()
                    got = load()
                    times.append(time.perf_counter() - t)
                    requests, received = proxy.take()
                    assert np.array_equal(got, array), method
                    del got
                size = len(bodies[ext]) / 1e6
                print(
                    f"| {name} | {method} | {size:.1f} | {requests} | {received / 1e6:.1f} | {1000 * min(times):.0f} |",
                    flush=True,
                )
        proxy.close()


if __name__ == "__main__":
    main()
