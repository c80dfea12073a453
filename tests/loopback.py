"""Tiny HTTP servers the tests stand up on 127.0.0.1: a broken OBS, a chunking one, an IAM."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[str]:
    """Serve ``server`` from a daemon thread until the block ends; yields its endpoint."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def serving_handler(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` on a fresh port of 127.0.0.1; yields its endpoint."""
    with serving(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as endpoint:
        yield endpoint
