"""Is a body the CSV asked for? Not an HTML page, not empty, not cut short, UTF-8 text.

Applied to every copy before it is stored or parsed, whether fetched, read from a path or
shipped. A body cut short is recognised three ways: fewer bytes than its Content-Length
(`pipeline.sources.http`), no line break at the end (Epoch's exports end with one), or a last
record with fewer fields than the header or an unterminated quote.
"""

from __future__ import annotations

import csv
import io

HTML_STARTS = ("<!doctype", "<html", "<head", "<body", "<?xml", "<")


def text_of(body: bytes) -> str:
    """The body as text (UTF-8, a byte-order mark dropped); ValueError when it is not UTF-8."""
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 text (byte {err.start})") from None


def body_problem(body: bytes, content_type: str = "") -> str | None:
    """Why `body` is not a whole CSV file (one line), or None when it is one."""
    if not body.strip():
        return "empty body"
    if "html" in content_type.lower():
        return f"an HTML page (Content-Type {content_type}), not CSV"
    try:
        text = text_of(body)
    except ValueError as err:
        return str(err)
    if text.lstrip().lower().startswith(HTML_STARTS):
        return "an HTML page, not CSV"
    if not text.endswith(("\n", "\r")):
        return "no line break at the end: the body is cut short"
    header: list[str] | None = None
    last: list[str] | None = None
    try:  # record by record: only the header and the last record are kept
        for record in csv.reader(io.StringIO(text, newline=""), strict=True):
            if not record:
                continue
            if header is None:
                header = record
            else:
                last = record
    except csv.Error as err:
        return f"not well-formed CSV ({err}): the body is cut short or damaged"
    if header is None or last is None:
        return "a header and no rows"
    if len(last) < len(header):
        return f"the last record has {len(last)} of {len(header)} fields: the body is cut short"
    return None
