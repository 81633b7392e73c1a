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


class Proxy:
    """A forwarding proxy in front of `server` that counts requests and the bytes of response
    bodies (`take`), and fails chosen requests as networks do, to test what clients make of
    it. `fail(method, path_part, how, times)` makes the next `times`
    requests of that method whose path contains `path_part` fail (times=None: all of them):

    - ``"drop"``: the request is read, then the connection closed without an answer;
    - ``"cut"``: half of the request's body is read, then the connection closed (an upload
      cut off);
    - ``"503"``: the answer is 503 SlowDown, S3's way of asking for a retry.

    `faults` counts the failures made; `endpoint` is the proxy's URL and `env` points a client
    at it."""

    def __init__(self, server: S3Server):
        import http.client
        import http.server
        import threading

        self.lock = threading.Lock()
        self.rules: list[list] = []
        self.faults = 0
        self.requests = 0
        self.bytes = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                how = proxy._fault_for(self.command, self.path)
                if how == "cut":
                    self.rfile.read(length // 2)
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                body = self.rfile.read(length) if length else None
                if how == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if how == "503":
                    message = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate</Message></Error>"
                    self.send_response(503)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(message)))
                    self.end_headers()
                    self.wfile.write(message)
                    return
                conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                with proxy.lock:
                    proxy.requests += 1
                    proxy.bytes += len(data)
                self.send_response(resp.status)
                # A HEAD's Content-Length is the object's size, not its (empty) body's.
                dropped = ("transfer-encoding", "connection") + (() if self.command == "HEAD" else ("content-length",))
                for k, v in resp.getheaders():
                    if k.lower() not in dropped:
                        self.send_header(k, v)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = forward

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.env = {**server.env, "AWS_ENDPOINT_URL": self.endpoint}

    def take(self) -> tuple[int, int]:
        """The requests forwarded and response bytes since the last call."""
        with self.lock:
            got = (self.requests, self.bytes)
            self.requests = self.bytes = 0
            return got

    def fail(self, method: str, path_part: str, how: str, times: int | None = 1) -> None:
        with self.lock:
            self.rules.append([method, path_part, how, times])

    def heal(self) -> None:
        with self.lock:
            self.rules.clear()

    def _fault_for(self, method: str, path: str) -> str | None:
        with self.lock:
            for rule in self.rules:
                m, part, how, times = rule
                if m == method and part in path and (times is None or times > 0):
                    if times is not None:
                        rule[3] -= 1
                    self.faults += 1
                    return how
        return None

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
