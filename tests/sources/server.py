"""A loopback HTTP server for fetch tests: scripted answers, bounded, stopped by the test.

`Loopback(answers)` serves on 127.0.0.1 (a free port) in a daemon thread; request k gets
answers[k] (the last answer repeats). It records each request's headers. Leaving the `with`
block shuts the server down and releases any answer still hanging, so no test leaves a thread
or a socket behind.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

HANG_LIMIT_S = 10.0
"""An answer that hangs never hangs longer than this, even if the test forgets to stop it."""


@dataclass(frozen=True)
class Answer:
    """One scripted response."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False
    """Accept the request, then send nothing until the server stops."""
    cut_to: int | None = None
    """Send only this many bytes of the body, with the full Content-Length, then close."""
    gzip: bool = False
    """Send the body gzip-encoded (Content-Encoding: gzip)."""
    trickle_s: float | None = None
    """Send the whole answer (status line, headers, body) one byte every this many seconds,
    until it is sent, the client goes, or the server stops."""


class Loopback:
    """The server, used as a context manager; `url` is where it listens."""

    def __init__(self, answers: Sequence[Answer]) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, str]] = []
        self.stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append(dict(self.headers.items()))
                index = min(len(owner.requests), len(owner.answers)) - 1
                owner.serve(self, owner.answers[index])

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """http://127.0.0.1:<port>/data.csv"""
        return f"http://127.0.0.1:{self.server.server_address[1]}/data.csv"

    def serve(self, handler: BaseHTTPRequestHandler, answer: Answer) -> None:
        """Write one scripted answer."""
        if answer.hang:
            self.stop.wait(HANG_LIMIT_S)
            return
        body = gzip.compress(answer.body) if answer.gzip else answer.body
        if answer.trickle_s is not None:
            self.trickle(handler, answer, body, answer.trickle_s)
            return
        handler.send_response(answer.status)
        for key, value in answer.headers.items():
            handler.send_header(key, value)
        if answer.gzip:
            handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body if answer.cut_to is None else body[: answer.cut_to])
        handler.wfile.flush()
        if answer.cut_to is not None:
            handler.close_connection = True

    def trickle(
        self, handler: BaseHTTPRequestHandler, answer: Answer, body: bytes, every_s: float
    ) -> None:
        """Write the answer a byte at a time, `every_s` apart."""
        head = f"HTTP/1.1 {answer.status} OK\r\nContent-Length: {len(body)}\r\n\r\n"
        whole = head.encode() + body
        for k in range(len(whole)):
            if self.stop.wait(every_s):
                return
            try:
                handler.wfile.write(whole[k : k + 1])
                handler.wfile.flush()
            except OSError:  # the client gave up
                return
        handler.close_connection = True

    def __enter__(self) -> Loopback:
        self.thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=HANG_LIMIT_S)
