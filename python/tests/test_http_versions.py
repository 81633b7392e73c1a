"""Files behind plain HTTP servers that do not help: no ETag, a file changed between requests,
conditions ignored, bytes dripped. A read is of one version of the object or fails saying why,
and no server holds a reader for longer than its deadline."""

from __future__ import annotations

import email.utils
import http.server
import threading
import time

import numpy as np
import pandas as pd
import pytest

import kompakt


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _VersionServer

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        s = self.server
        with s.lock:
            s.requests += 1
            body, modified = s.versions[0 if s.requests <= s.swap_after else 1]
        size = len(body)
        start, end = 0, size
        ranged = self.headers.get("Range", "")
        if ranged.startswith("bytes="):
            first, _, last = ranged[6:].partition("-")
            if first == "":
                start = max(0, size - int(last))
            else:
                start, end = int(first), min(size, int(last) + 1 if last else size)
        self.send_response(206 if ranged else 200)
        if ranged:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        self.send_header("Content-Length", str(end - start))
        self.send_header("Accept-Ranges", "bytes")
        if modified is not None:
            self.send_header("Last-Modified", email.utils.formatdate(modified, usegmt=True))
        self.end_headers()
        data = body[start:end]
        if s.drip:
            for i in range(0, len(data), 16):
                try:
                    self.wfile.write(data[i : i + 16])
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(s.drip)
        else:
            self.wfile.write(data)


class _VersionServer(http.server.ThreadingHTTPServer):
    """Serves `versions[0]` for the first `swap_after` requests, then `versions[1]`; each a
    (body, Last-Modified as a Unix time or None). Never an ETag; conditions ignored."""

    daemon_threads = True

    def __init__(self, versions, swap_after: int = 1 << 30, drip: float = 0.0) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.versions, self.swap_after, self.drip = versions, swap_after, drip
        self.requests, self.lock = 0, threading.Lock()

    def __enter__(self):
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/t.kpk"


def _table_bytes(tmp_path, seed: int) -> bytes:
    # Incompressible int64 stored raw: two versions of the same size, every block sound alone.
    ids = np.random.default_rng(seed).integers(-(2**62), 2**62, 400_000)
    df = pd.DataFrame({"id": ids})
    path = tmp_path / f"t{seed}.kpk"
    kompakt.write_table(df, path, codec="none", rows_per_group=50_000, statistics=False)
    return path.read_bytes()


def test_a_file_changed_between_requests_without_an_etag_fails_the_read(tmp_path):
    old, new = _table_bytes(tmp_path, 0), _table_bytes(tmp_path, 1)
    assert len(old) == len(new) > 1 << 20
    # Opened (tail and head: two requests) at the first version, read at the second.
    with _VersionServer([(old, 1_700_000_000), (new, 1_700_000_600)], swap_after=2) as server:
        with pytest.raises(OSError, match="changed while it was read"):
            kompakt.read_table(server.url)
    # Unchanged, the same server reads whole.
    with _VersionServer([(old, 1_700_000_000)]) as server:
        assert len(kompakt.read_table(server.url)) == 400_000


def test_without_etag_or_date_a_read_of_many_requests_is_refused(tmp_path):
    big = _table_bytes(tmp_path, 0)
    with _VersionServer([(big, None)]) as server:
        with pytest.raises(OSError, match="neither an ETag nor a Last-Modified"):
            kompakt.read_table(server.url)
    # A file that one answer holds whole is read: nothing can mix.
    small = tmp_path / "small.kpk"
    kompakt.write_table(pd.DataFrame({"a": [1, 2, 3]}), small)
    with _VersionServer([(small.read_bytes(), None)]) as server:
        assert kompakt.read_table(server.url)["a"].tolist() == [1, 2, 3]


def test_a_server_that_drips_bytes_is_cut_off_at_the_deadline(tmp_path, monkeypatch):
    monkeypatch.setenv("KOMPAKT_REQUEST_TIMEOUT", "2")
    big = _table_bytes(tmp_path, 0)
    with _VersionServer([(big, 1_700_000_000)], drip=0.05) as server:
        began = time.monotonic()
        with pytest.raises(TimeoutError, match="did not arrive within"):
            kompakt.read_table(server.url)
        assert time.monotonic() - began < 20
