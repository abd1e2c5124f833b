"""Fetching one URL: a deadline, bounded retries with backoff, conditional GET, a size limit.

The client is the standard library's `urllib.request`, chosen on purpose (docs/sources.md): a
nightly job fetches two CSV files once a day, which needs no connection pool, HTTP/2 or async;
what it needs (a timeout, an `If-None-Match` header, reading the body in chunks against a size
limit and a deadline, gzip) is a few lines on top of urllib, and every extra dependency is one
more thing to pin, audit and install offline. Retries are written out here rather than taken
from urllib3's `Retry`, so the whole policy is on one screen and a test can inject the clock.

What is retried: every failure (a refused or reset connection, a timeout, any HTTP error status
including 404 and 500, a body cut short or failing `check`); at most `retries` times, the k-th retry
after waiting `backoff_s · 2^(k − 1)`. The last failure is raised as `FetchError`,
one line naming the URL and what went wrong.
"""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.sources.settings import FetchSettings

if TYPE_CHECKING:
    import http.client

CHUNK_BYTES = 1 << 16
USER_AGENT = "dmlimits (+https://epoch.ai/data reader; nightly forecast)"


class FetchError(Exception):
    """A URL could not be fetched; `str()` is one line."""


@dataclass(frozen=True, slots=True)
class Response:
    """A successful GET: a new body (200) or confirmation that the stored copy is current (304)."""

    status: int
    body: bytes
    """The body after content decoding; b"" for a 304."""
    etag: str | None
    attempts: int
    """Requests made, the successful one included."""

    @property
    def not_modified(self) -> bool:
        """True for a 304 against the ETag sent."""
        return self.status == 304


def _read_limited(resp: http.client.HTTPResponse, limit: int, deadline: float) -> bytes:
    """The raw body, refused past `limit` bytes or the deadline; checks Content-Length.

    `read1` returns what one receive brings, so the deadline is checked after every receive
    (a server trickling a byte at a time meets it too, not only between 64 KiB chunks).
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise FetchError("timed out while reading the body")
        chunk = resp.read1(CHUNK_BYTES)
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            raise FetchError(f"body larger than the {limit:,}-byte limit")
        chunks.append(chunk)
    declared = resp.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) != size:
        raise FetchError(f"body cut short: {size:,} of {int(declared):,} bytes")
    return b"".join(chunks)


def _decode(raw: bytes, encoding: str | None, limit: int) -> bytes:
    """The body after Content-Encoding gzip (or none); the decoded size is limited too."""
    if encoding in (None, "", "identity"):
        return raw
    if encoding not in ("gzip", "x-gzip"):
        raise FetchError(f"unsupported Content-Encoding {encoding!r}")
    decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        body = decoder.decompress(raw, limit + 1)
        if len(body) > limit:
            raise FetchError(f"decoded body larger than the {limit:,}-byte limit")
        if not decoder.eof:
            raise FetchError("gzip body cut short")
    except (zlib.error, gzip.BadGzipFile) as err:
        raise FetchError(f"bad gzip body: {err}") from None
    return body


def _request(
    url: str,
    etag: str | None,
    settings: FetchSettings,
    check: Callable[[bytes, str], None],
    deadline: float,
) -> Response:
    """One GET; raises FetchError for anything but a good 200 or a 304."""
    # imported here: every command imports this module, few fetch (sources=live)
    import http.client
    import urllib.error
    import urllib.request

    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip", "Accept": "text/csv, */*"}
    if etag is not None:
        headers["If-None-Match"] = etag
    request = urllib.request.Request(url, headers=headers, method="GET")
    try:
        with urllib.request.urlopen(request, timeout=settings.timeout_s) as resp:
            raw = _read_limited(resp, settings.max_bytes, deadline)
            encoding = resp.headers.get("Content-Encoding")
            content_type = resp.headers.get("Content-Type") or ""
            new_etag = resp.headers.get("ETag")
            status = resp.status
    except urllib.error.HTTPError as err:
        err.close()  # an error status still holds the connection's response
        if err.code == 304 and etag is not None:
            return Response(304, b"", err.headers.get("ETag") or etag, 1)
        raise FetchError(f"HTTP {err.code} {err.reason}") from None
    except urllib.error.URLError as err:
        raise FetchError(f"cannot connect: {err.reason}") from None
    except TimeoutError:
        raise FetchError(f"no answer within {settings.timeout_s:g} s") from None
    except http.client.IncompleteRead as err:
        raise FetchError(f"body cut short after {len(err.partial):,} bytes") from None
    except (http.client.HTTPException, ConnectionError, OSError) as err:
        raise FetchError(f"{type(err).__name__}: {err}") from None
    if status != 200:
        raise FetchError(f"HTTP {status}: expected 200")
    body = _decode(raw, encoding, settings.max_bytes)
    check(body, content_type)
    return Response(200, body, new_etag, 1)


def _attempt(
    url: str, etag: str | None, settings: FetchSettings, check: Callable[[bytes, str], None]
) -> Response:
    """One GET (`_request`) within one deadline of `timeout_s` for all of it: connecting, the
    headers and the body. The request runs in a daemon thread the caller stops waiting for at
    the deadline, so no server (one trickling its headers or body a byte at a time) holds the
    caller longer; the abandoned thread ends at its next receive (the deadline is checked after
    each, and each waits at most `timeout_s`)."""
    deadline = time.monotonic() + settings.timeout_s
    outcome: list[Response | FetchError] = []
    done = threading.Event()

    def run() -> None:
        try:
            outcome.append(_request(url, etag, settings, check, deadline))
        except FetchError as err:
            outcome.append(err.with_traceback(None))  # no cycle through this frame
        except Exception as err:  # any failure inside the thread is this fetch's failure
            outcome.append(FetchError(f"{type(err).__name__}: {err}"))
        finally:
            done.set()

    threading.Thread(target=run, name="dmlimits-fetch", daemon=True).start()
    if not done.wait(settings.timeout_s):
        raise FetchError(f"no whole answer within {settings.timeout_s:g} s")
    result = outcome[0]
    if isinstance(result, FetchError):
        raise result
    return result


def http_get(
    url: str,
    settings: FetchSettings,
    *,
    etag: str | None = None,
    check: Callable[[bytes, str], None] = lambda body, content_type: None,
    sleep: Callable[[float], None] = time.sleep,
) -> Response:
    """GET `url` with retries; `check(body, content_type)` raises FetchError for a bad body.

    With `etag` the request is conditional (If-None-Match): a 304 means the stored copy with
    that ETag is current. Raises FetchError (one line: the URL, the attempts, the last failure).
    """
    last = ""
    for attempt in range(settings.retries + 1):
        if attempt:
            sleep(settings.backoff_s * 2 ** (attempt - 1))
        try:
            response = _attempt(url, etag, settings, check)
        except FetchError as err:
            last = str(err)
            continue
        return Response(response.status, response.body, response.etag, attempt + 1)
    tries = settings.retries + 1
    raise FetchError(f"{url}: {last} ({tries} attempt{'s' if tries > 1 else ''})")
