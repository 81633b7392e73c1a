"""A real S3-compatible server for tests and benchmarks: moto's, in a process of its own on the
loopback address (`python -m moto.server`), started and stopped by its user."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request

# The AWS settings every client (kompakt, boto3, s3fs) reads from the environment. moto does
# not check signatures, but clients need credentials to sign with.
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "kompakt-test",
    "AWS_SECRET_ACCESS_KEY": "kompakt-test-secret",
    "AWS_REGION": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class S3Server:
    """moto's server on 127.0.0.1:`port`; `env` is what a client needs to reach it."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.env = {**CREDENTIALS, "AWS_ENDPOINT_URL": self.endpoint}
        self._process: subprocess.Popen | None = None

    def start(self, timeout: float = 30.0) -> S3Server:
        command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=1).close()
                return self
            except OSError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"moto's S3 server did not start on {self.endpoint}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None

    def client(self):
        """A boto3 S3 client of this server (to create buckets and put objects)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            region_name=CREDENTIALS["AWS_REGION"],
        )

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def use_server_environment(server: S3Server) -> dict[str, str | None]:
    """Points this process's AWS settings at `server`; returns what they were before."""
    before = {k: os.environ.get(k) for k in server.env}
    os.environ.update(server.env)
    return before


def restore_environment(before: dict[str, str | None]) -> None:
    for k, v in before.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@contextlib.contextmanager
def s3_bucket(bucket: str):
    """A fresh server with one bucket, this process's AWS settings pointed at it meanwhile:
    yields (server, boto3 client)."""
    with S3Server() as server:
        before = use_server_environment(server)
        client = server.client()
        client.create_bucket(Bucket=bucket)
        try:
            yield server, client
        finally:
            restore_environment(before)
