"""Observed data checked like a config: hostile rows, servers, files and stores, each refused in
one line or kept from moving the answer (docs/sources.md, "Plausibility bounds")."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import threading
import time
import tracemalloc
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TypeVar

import pytest

from pipeline.forecast.inputs import observe_frontier
from pipeline.forecast.observed import FrontierSettings, fit_frontier
from pipeline.forecast.settings import ForecastSettings
from pipeline.schema.projected import shipped_catalog
from pipeline.sources.acquire import SourceError
from pipeline.sources.epoch import MAX_ROWS
from pipeline.sources.hardware import merge_accelerators
from pipeline.sources.http import FetchError, http_get
from pipeline.sources.observe import Observations, observe
from pipeline.sources.settings import FetchSettings, SourceSpec, SourcesSettings
from pipeline.sources.store import SnapshotStore
from tests.sources.server import Answer, Loopback

T = TypeVar("T")
NOW = dt.datetime(2026, 1, 2, 3, 0, tzinfo=dt.UTC)
FAST = FetchSettings(timeout_s=0.5, retries=0, backoff_s=0.0, max_bytes=64_000_000)
DATA = resources.files("pipeline.sources.data")
RUNS = DATA.joinpath("notable_ai_models.csv").read_bytes()
HARDWARE = DATA.joinpath("ml_hardware.csv").read_bytes()
WITHIN_S = 5.0
"""A refusal takes less than this; a test waits no longer for one (a hang fails, not hangs)."""


def _within(seconds: float, work: Callable[[], T]) -> T:
    """`work()` in a daemon thread; fails the test if it has not ended within `seconds`."""
    outcome: list[T | BaseException] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as err:  # handed to the test thread
            outcome.append(err.with_traceback(None))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds} s"
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


def _settings(runs: str | None, hardware: str | None = None) -> SourcesSettings:
    return SourcesSettings(
        None if runs is None else SourceSpec("frontier_runs", runs),
        None if hardware is None else SourceSpec("accelerators", hardware),
        FAST,
        None,
    )


def _observe_file(tmp_path: Path, runs: bytes) -> Observations:
    path = tmp_path / "runs.csv"
    path.write_bytes(runs)
    return observe(_settings(str(path)), None, NOW, warn=False)


def _run_row(name: str, date: str, flop: str) -> bytes:
    """A row of the shipped runs file's 13 columns, at the frontier."""
    return f"{name},Org,{date},Language,,{flop},Likely,,,,,,True\n".encode()


@pytest.mark.parametrize("flop", ["1e60", "4e29"])
def test_observe_one_huge_run_does_not_drag_the_fitted_growth(tmp_path: Path, flop: str) -> None:
    """One added frontier run of 1e60 FLOP, or of 4e29 a month after the largest (862x it), is
    refused with its reason; the fitted growth stays put."""
    settings = FrontierSettings()
    before, _ = fit_frontier(_observe_file(tmp_path, RUNS).runs, settings)
    hostile = _observe_file(tmp_path, RUNS + _run_row("Hostile", "2025-03-01", flop))
    after, _ = fit_frontier(hostile.runs, settings)
    assert after.growth_per_year == pytest.approx(before.growth_per_year, rel=1e-9)
    (read,) = hostile.reads
    (reject,) = [r for r in read.rejects if r.name == "Hostile"]
    assert "above the bound" in reject.reason


def test_observe_a_run_far_above_every_earlier_run_is_named_and_refused(tmp_path: Path) -> None:
    """A plausible-looking 1e29 FLOP run of 2019 is 1e5 x the largest run before it: refused,
    its reason naming that run."""
    hostile = _observe_file(tmp_path, RUNS + _run_row("Early", "2019-06-01", "1e29"))
    (reject,) = [r for r in hostile.reads[0].rejects if r.name == "Early"]
    assert "x the largest run before it" in reject.reason
    assert all(r.model != "Early" for r in hostile.runs)


def test_observe_a_run_dated_2100_does_not_make_the_data_as_of_2100(tmp_path: Path) -> None:
    """A run dated after the copy was made is refused; the data's date is the newest real run."""
    hostile = _observe_file(tmp_path, RUNS + _run_row("Future", "2100-01-01", "1e26"))
    (read,) = hostile.reads
    assert read.newest_date == dt.date(2025, 4, 10)
    (reject,) = [r for r in read.rejects if r.name == "Future"]
    assert "after the copy's date" in reject.reason
    fit, _ = fit_frontier(hostile.runs, FrontierSettings())
    assert fit.data_as_of == dt.date(2025, 4, 10)


def test_observe_an_accelerator_of_1e25_flop_per_s_never_joins_the_catalog(
    tmp_path: Path,
) -> None:
    """An accelerator row of 1e25 FLOP/s is refused against the catalog's span and stays out
    of the merged catalog."""
    path = tmp_path / "hardware.csv"
    path.write_bytes(HARDWARE + b"Hostile X1,Hostile,GPU,2025-01-01,1e25,,,,,,700.0\n")
    observations = observe(_settings(None, str(path)), None, NOW, warn=False)
    (read,) = observations.reads
    (reject,) = [r for r in read.rejects if r.name == "Hostile X1"]
    assert "outside the plausible" in reject.reason
    merged = merge_accelerators(shipped_catalog(), observations.accelerators, "0" * 64)
    assert "Hostile X1" not in merged.added
    assert all(a.name != "Hostile X1" for a in observations.accelerators)


def test_observe_the_shipped_snapshots_pass_every_bound() -> None:
    """No row of the shipped snapshots is refused by a plausibility bound (only rows without a
    compute estimate, a date or a metric are)."""
    shipped = _settings("package:notable_ai_models.csv", "package:ml_hardware.csv")
    observations = observe(shipped, None, NOW, warn=False)
    reasons = {r.reason for read in observations.reads for r in read.rejects}
    assert reasons <= {
        "no Training compute (FLOP)",
        "no Release date",
        "no metric the catalog uses",
    }


def test_http_get_a_trickling_server_is_cut_off_at_the_deadline() -> None:
    """A server sending its answer a byte every 50 ms (headers too) fails within about the
    deadline of 0.5 s, not when its last byte arrives (7 s later)."""
    body = b"Model,Publication date,Training compute (FLOP)\n" + b"A,2024-01-01,1e25\n" * 4
    with Loopback([Answer(body=body, trickle_s=0.05)]) as server:
        start = time.monotonic()
        with pytest.raises(FetchError) as err:
            http_get(server.url, FAST)
        elapsed = time.monotonic() - start
    assert elapsed < 2 * FAST.timeout_s
    assert "\n" not in str(err.value)


def test_observe_a_source_of_300k_rows_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """A 10 MB CSV of 300,000 rows is refused in one line, naming the row bound, without
    holding its rows (peak Python memory under 120 MB)."""
    rows = b"".join(b"M%d,2024-01-%02d,1e24,True\n" % (i, 1 + i % 28) for i in range(300_000))
    body = b"Model,Publication date,Training compute (FLOP),Frontier model\n" + rows
    tracemalloc.start()
    try:
        with pytest.raises(SourceError) as err:
            _observe_file(tmp_path, body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert f"more than {MAX_ROWS:,} rows" in str(err.value)
    assert peak < 120e6


@pytest.mark.parametrize("kind", ["directory", "named pipe", "device"])
def test_observe_a_location_that_is_not_a_file_is_refused_in_one_line(
    tmp_path: Path, kind: str
) -> None:
    """A directory, a named pipe or /dev/zero as a source's location is one line, at once."""
    if kind == "device":
        location = "/dev/zero"
    else:
        target = tmp_path / "source.csv"
        target.mkdir() if kind == "directory" else os.mkfifo(target)
        location = str(target)
    with pytest.raises(SourceError) as err:
        _within(WITHIN_S, lambda: observe(_settings(location), None, NOW, warn=False))
    assert f"is a {kind}" in str(err.value)
    assert "\n" not in str(err.value)


def test_observe_a_store_that_is_a_file_is_refused_in_one_line(tmp_path: Path) -> None:
    """A snapshot store that is a file (or lies under one) is one line naming it."""
    blocker = tmp_path / "store"
    blocker.write_text("not a folder")
    for store in (blocker, blocker / "snapshots"):
        with pytest.raises(SourceError) as err:
            observe(_settings("package:notable_ai_models.csv"), SnapshotStore(store), NOW)
        assert "is not a directory" in str(err.value)


GOOD = (
    b"Model,Publication date,Training compute (FLOP),Frontier model\n"
    b"A,2023-01-01,1e24,True\nB,2024-01-01,4e24,True\nC,2025-01-01,2e25,True\n"
)
FORECAST = ForecastSettings(1e25, 2025.0, (4.0,), fitted=FrontierSettings())


def _night(url: str, store: Path, day: int) -> ForecastSettings:
    sources = SourcesSettings(SourceSpec("frontier_runs", url), None, FAST, store)
    now = dt.datetime(2026, 1, day, 3, 0, tzinfo=dt.UTC)
    return observe_frontier(FORECAST, sources, store, now.date(), now)


@pytest.mark.parametrize(
    "refused",
    [
        GOOD.replace(b"True", b""),  # columns and rows fine, no frontier run: the fit refuses
        GOOD.replace(b"202", b"210"),  # every row dated after its copy
    ],
    ids=["fit-refuses", "no-usable-row"],
)
def test_observe_only_a_copy_that_passed_every_check_becomes_the_last_good_one(
    tmp_path: Path, refused: bytes
) -> None:
    """A copy refused on the second night (by its rows or by the fit) never becomes the last
    good copy: on the third night, with the server down, the first night's copy is used."""
    store = tmp_path / "snapshots"
    with Loopback([Answer(body=GOOD), Answer(body=refused), Answer(500, b"down")]) as server:
        first = _night(server.url, store, 1)
        with contextlib.suppress(SourceError):  # refused in one line or stale: either way
            _night(server.url, store, 2)
        third = _night(server.url, store, 3)
    assert first.observed is not None
    assert third.observed is not None
    (read,) = third.observed.observations.reads
    assert read.snapshot.stale
    assert read.snapshot.content_hash == first.observed.observations.reads[0].snapshot.content_hash
    assert third.observed.fit is not None
