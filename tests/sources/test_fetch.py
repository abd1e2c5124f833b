"""Fetching a source over HTTP from a loopback server: every fault the real world sends."""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.sources.acquire import Snapshot, SourceError, acquire, record_good
from pipeline.sources.epoch import RUN_COLUMNS, check_columns
from pipeline.sources.http import FetchError, Response, http_get
from pipeline.sources.settings import FetchSettings, SourceSpec
from pipeline.sources.store import SnapshotStore, content_hash
from tests.sources.server import Answer, Loopback

CSV = (
    b"Model,Publication date,Training compute (FLOP),Frontier model\n"
    b"A,2024-01-01,1e25,True\n"
    b"B,2025-01-01,4e25,True\n"
)
NEWER = CSV + b"C,2025-06-01,9e25,True\n"
HTML = b"<!DOCTYPE html><html><body>Service unavailable</body></html>\n"
NOW = dt.datetime(2026, 1, 2, 3, 0, tzinfo=dt.UTC)
FAST = FetchSettings(timeout_s=0.5, retries=2, backoff_s=0.01, max_bytes=1_000_000)


def _get(waits: list[float]) -> Callable[..., Response]:
    """http_get with a sleep that records the waits instead of sleeping."""
    return functools.partial(http_get, sleep=waits.append)


def _check(body: bytes, as_of: dt.date) -> None:
    check_columns(body, RUN_COLUMNS, "frontier_runs")


def _acquire(url: str, store: SnapshotStore | None, waits: list[float] | None = None) -> Snapshot:
    """acquire, then the copy recorded as the last good one, as `observe` does."""
    snapshot = acquire(
        SourceSpec("frontier_runs", url),
        store=store,
        fetch=FAST,
        now=NOW,
        check=_check,
        get=_get([] if waits is None else waits),
    )
    record_good(snapshot, store)
    return snapshot


@pytest.mark.parametrize("status", [404, 500])
def test_http_get_retries_an_error_status_then_succeeds(status: int) -> None:
    """A 404 or 500 is retried with backoff, and the next good answer is used."""
    waits: list[float] = []
    with Loopback([Answer(status, b"no"), Answer(200, CSV)]) as server:
        response = http_get(server.url, FAST, sleep=waits.append)
    assert response.body == CSV
    assert response.attempts == 2
    assert waits == [FAST.backoff_s]


def test_http_get_gives_up_after_the_retries() -> None:
    """A server that always fails costs exactly 1 + retries requests, backing off each time."""
    waits: list[float] = []
    with Loopback([Answer(500, b"down")]) as server, pytest.raises(FetchError) as err:
        http_get(server.url, FAST, sleep=waits.append)
    assert len(server.requests) == FAST.retries + 1
    assert waits == [FAST.backoff_s, 2 * FAST.backoff_s]
    assert "HTTP 500" in str(err.value)
    assert "\n" not in str(err.value)


def test_http_get_times_out_on_a_hanging_server() -> None:
    """A server that accepts and never answers fails within the timeout, per attempt."""
    settings = FetchSettings(timeout_s=0.2, retries=0, backoff_s=0.0)
    with Loopback([Answer(hang=True)]) as server, pytest.raises(FetchError) as err:
        http_get(server.url, settings)
    assert "0.2 s" in str(err.value) or "timed out" in str(err.value)


def test_http_get_refuses_a_body_cut_short() -> None:
    """A body shorter than its Content-Length is a failure, never a smaller CSV."""
    answer = Answer(200, NEWER, cut_to=len(NEWER) - 10)
    with Loopback([answer]) as server, pytest.raises(FetchError) as err:
        http_get(server.url, FetchSettings(timeout_s=1.0, retries=0))
    assert "cut short" in str(err.value)


def test_http_get_decodes_gzip() -> None:
    """A gzip Content-Encoding is decoded, and the request asked for it."""
    with Loopback([Answer(200, CSV, gzip=True)]) as server:
        response = http_get(server.url, FAST)
    assert response.body == CSV
    assert "gzip" in server.requests[0]["Accept-Encoding"]


def test_http_get_refuses_a_body_over_the_size_limit() -> None:
    """A body larger than max_bytes is refused (after gzip decoding too)."""
    settings = FetchSettings(timeout_s=1.0, retries=0, max_bytes=50)
    with Loopback([Answer(200, CSV, gzip=True)]) as server, pytest.raises(FetchError) as err:
        http_get(server.url, settings)
    assert "limit" in str(err.value)


def test_acquire_stores_a_fetched_copy_by_hash(tmp_path: Path) -> None:
    """A good fetch is stored once under its SHA-256 and recorded with its ETag."""
    store = SnapshotStore(tmp_path)
    with Loopback([Answer(200, CSV, {"ETag": '"v1"'})]) as server:
        snapshot = _acquire(server.url, store)
    assert snapshot.content_hash == content_hash(CSV)
    assert store.read(snapshot.content_hash) == CSV
    latest = store.latest("frontier_runs")
    assert latest is not None
    assert latest.etag == '"v1"'
    assert not snapshot.stale


def test_acquire_sends_the_etag_and_uses_the_stored_copy_on_304(tmp_path: Path) -> None:
    """A second fetch is conditional (If-None-Match); a 304 serves the stored copy, not stale."""
    store = SnapshotStore(tmp_path)
    with Loopback([Answer(200, CSV, {"ETag": '"v1"'}), Answer(304)]) as server:
        _acquire(server.url, store)
        again = _acquire(server.url, store)
    assert server.requests[1]["If-None-Match"] == '"v1"'
    assert again.body == CSV
    assert not again.stale


@pytest.mark.parametrize(
    "answer",
    [
        Answer(200, HTML, {"Content-Type": "text/html"}),
        Answer(200, HTML),
        Answer(200, NEWER, cut_to=len(NEWER) - 10),
        Answer(500, b"down"),
        Answer(hang=True),
        Answer(200, b""),
    ],
    ids=["html-content-type", "html-body", "cut-short", "500", "hang", "empty"],
)
def test_acquire_falls_back_to_the_last_good_copy_marked_stale(
    tmp_path: Path, answer: Answer
) -> None:
    """Any failed fetch after a good one serves the good copy, stale, with its age and reason."""
    store = SnapshotStore(tmp_path)
    later = NOW + dt.timedelta(days=3)
    with Loopback([Answer(200, CSV), answer]) as server:
        _acquire(server.url, store)
        snapshot = acquire(
            SourceSpec("frontier_runs", server.url),
            store=store,
            fetch=FetchSettings(timeout_s=0.3, retries=1, backoff_s=0.0),
            now=later,
            check=_check,
        )
    assert snapshot.stale
    assert snapshot.body == CSV
    assert snapshot.age_days == pytest.approx(3.0)
    assert snapshot.stale_reason is not None
    assert "\n" not in snapshot.stale_reason


def test_acquire_without_an_earlier_copy_is_a_one_line_error(tmp_path: Path) -> None:
    """A first fetch that fails has nothing to fall back on: one line naming the source."""
    with Loopback([Answer(200, HTML)]) as server, pytest.raises(SourceError) as err:
        _acquire(server.url, SnapshotStore(tmp_path))
    assert str(err.value).startswith("source frontier_runs:")
    assert "HTML" in str(err.value)
    assert "\n" not in str(err.value)


def test_acquire_keeps_the_good_copy_when_a_column_is_renamed(tmp_path: Path) -> None:
    """A fresh body whose required column was renamed never replaces the last good copy."""
    renamed = CSV.replace(b"Training compute (FLOP)", b"Training compute (FLOPs)")
    store = SnapshotStore(tmp_path)
    with Loopback([Answer(200, CSV), Answer(200, renamed)]) as server:
        _acquire(server.url, store)
        snapshot = _acquire(server.url, store)
    assert snapshot.stale
    assert snapshot.body == CSV
    assert "'Training compute (FLOP)' is missing" in (snapshot.stale_reason or "")
    assert store.read(content_hash(renamed)) is None


def test_acquire_reports_a_path_that_does_not_exist(tmp_path: Path) -> None:
    """A local source that is not there is a one-line error naming it."""
    missing = tmp_path / "nowhere.csv"
    with pytest.raises(SourceError) as err:
        acquire(SourceSpec("frontier_runs", str(missing)), store=None, fetch=FAST, now=NOW)
    assert str(err.value) == f"source frontier_runs: {missing} does not exist"


def test_acquire_refuses_an_empty_local_csv(tmp_path: Path) -> None:
    """A CSV with a header and no rows is refused with one line, not fitted on nothing."""
    path = tmp_path / "empty.csv"
    path.write_bytes(CSV.split(b"\n")[0] + b"\n")
    with pytest.raises(SourceError) as err:
        acquire(SourceSpec("frontier_runs", str(path)), store=None, fetch=FAST, now=NOW)
    assert "no rows" in str(err.value)


def test_acquire_reads_the_shipped_snapshot_with_its_date_and_licence() -> None:
    """The default source is package data, dated by shipped.csv and licensed CC BY 4.0."""
    snapshot = acquire(
        SourceSpec("frontier_runs", "package:notable_ai_models.csv"),
        store=None,
        fetch=FAST,
        now=NOW,
        check=_check,
    )
    assert snapshot.snapshot_date == dt.date(2025, 5, 20)
    assert snapshot.licence == "CC BY 4.0"
    assert snapshot.fetched_at is None
    assert not snapshot.stale


def test_acquire_reads_how_trained_columns_of_a_live_csv_as_the_shipped_one() -> None:
    """A live CSV with more columns, in another order, parses to the same how-trained fields."""
    from pipeline.sources.epoch import parse_runs

    live = (
        b"Notes,Training hardware,Hardware quantity,Model,Training time (hours),"
        b"Publication date,Training compute (FLOP),Batch size,Frontier model\n"
        b'"x, y",NVIDIA H100 SXM5 80GB,16384.0,Llama,2142.0,2024-07-23,3.8e+25,16000000.0,True\n'
    )
    with Loopback([Answer(body=live, headers={"ETag": '"v1"'})]) as server:
        snapshot = _acquire(server.url, None)
    (run,), _ = parse_runs(snapshot.body, "frontier_runs")
    assert run.training_hardware == ("NVIDIA H100 SXM5 80GB",)
    assert (run.hardware_quantity, run.batch_size) == (16384, 16e6)
    assert run.training_time_s == 2142.0 * 3600.0
