"""The observed batch law: fitted to large language runs, robust to a few odd rows, shipped."""

from __future__ import annotations

import datetime as dt
import math
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import yaml

from pipeline.io.rows import Provenance
from pipeline.sources.batches import batch_runs, fit_batch_law
from pipeline.sources.epoch import ObservedRun, parse_runs
from pipeline.sources.observe import observe
from pipeline.sources.rows import source_dicts
from pipeline.sources.settings import FetchSettings, SourceSpec, SourcesSettings

CONF = Path(__file__).resolve().parents[2] / "conf" / "batch" / "observed.yaml"
COEFFICIENT, EXPONENT = 1e-4, 0.45


def _run(flop: float, batch: float, domain: str = "Language", line: int = 0) -> ObservedRun:
    return ObservedRun(
        f"m{line}", None, dt.date(2024, 1, 1), flop, None, True, line, domain=domain,
        batch_size=batch,
    )  # fmt: skip


def _law_runs(n: int = 30, scatter: float = 0.3) -> list[ObservedRun]:
    """Runs on B = c · C^e with seeded log-normal scatter, 1e23 to 1e26 FLOP."""
    rng = np.random.default_rng(7)
    flops = np.logspace(23, 26, n)
    noise = np.exp(rng.normal(0.0, scatter, n))
    return [
        _run(float(c), COEFFICIENT * float(c) ** EXPONENT * float(z), line=i)
        for i, (c, z) in enumerate(zip(flops, noise, strict=True))
    ]


def test_fit_batch_law_recovers_a_known_power_law() -> None:
    """Runs scattered about B = 1e-4 · C^0.45 (2.2M tokens at 1e23 FLOP) give that exponent within its interval."""
    fit = fit_batch_law(_law_runs())
    assert fit is not None
    assert fit.exponent_low <= EXPONENT <= fit.exponent_high
    assert fit.exponent == pytest.approx(EXPONENT, abs=0.05)
    at = 1e25
    assert fit.coefficient * at**fit.exponent == pytest.approx(COEFFICIENT * at**EXPONENT, rel=0.2)


def test_fit_batch_law_is_not_dragged_by_batches_recorded_in_sequences() -> None:
    """Four runs whose batch is in sequences (1e4-1e5 beside millions) move the exponent less
    than 0.05, where least squares on the logs moves it by more than 0.1."""
    runs = _law_runs()
    odd = [_run(c, 8e4, line=100 + i) for i, c in enumerate((1.1e23, 1.2e23, 3.5e23, 4.3e23))]
    fit = fit_batch_law(runs + odd)
    assert fit is not None
    assert fit.exponent == pytest.approx(EXPONENT, abs=0.05)
    x = np.log([r.training_flop for r in runs + odd])
    y = np.log([r.batch_size or 1.0 for r in runs + odd])
    assert abs(float(np.polyfit(x, y, 1)[0]) - EXPONENT) > 0.1


def test_batch_runs_are_large_language_runs_with_a_batch() -> None:
    """Runs below 1e23 FLOP, of another or a mixed domain, or without a batch are left out."""
    kept = _run(1e24, 4e6, line=1)
    runs = [
        kept,
        _run(1e22, 4e6, line=2),
        _run(1e24, 256.0, domain="Multimodal,Language", line=3),
        _run(1e24, 2048.0, domain="Robotics,Vision,Language", line=4),
        ObservedRun("nobatch", None, dt.date(2024, 1, 1), 1e24, None, True, 5, domain="Language"),
    ]
    assert batch_runs(runs) == [kept]
    assert fit_batch_law(runs) is None


def test_observed_batch_conf_holds_the_fit_on_the_shipped_snapshot() -> None:
    """conf/batch/observed.yaml's coefficient and exponent are the shipped snapshot's fit (to
    the digits written there), so the file cannot drift from the data."""
    body = resources.files("pipeline.sources.data").joinpath("notable_ai_models.csv").read_bytes()
    fit = fit_batch_law(parse_runs(body, "frontier_runs")[0])
    conf = yaml.safe_load(CONF.read_text(encoding="utf-8"))
    assert fit is not None
    assert conf["kind"] == "observed"
    assert conf["exponent"] == pytest.approx(fit.exponent, abs=5e-5)
    assert conf["coefficient"] == pytest.approx(fit.coefficient, rel=1e-3)


def test_sources_table_records_the_batch_law_fit_of_the_runs_read() -> None:
    """The frontier runs' `sources` row carries the fit and its interval; the accelerators'
    row none."""
    shipped = SourcesSettings(
        SourceSpec("frontier_runs", "package:notable_ai_models.csv"),
        SourceSpec("accelerators", "package:ml_hardware.csv"),
        FetchSettings(),
        None,
    )
    observations = observe(shipped, None, warn=False)
    runs, hardware = source_dicts(observations, Provenance("run-1"))
    fit = fit_batch_law(observations.runs)
    assert fit is not None
    assert runs["batch_law_exponent"] == fit.exponent
    assert runs["batch_law_exponent_low"] < fit.exponent < runs["batch_law_exponent_high"]
    assert runs["batch_law_runs"] == 32
    assert math.isfinite(runs["batch_law_coefficient"])
    assert hardware["batch_law_exponent"] is None


def test_observed_runs_table_says_how_each_run_was_trained() -> None:
    """The `observed_runs` rows carry the how-trained fields of the shipped snapshot, the
    hardware names joined as Epoch writes them, and match the table's schema."""
    from pipeline.io.columns import OBSERVED_RUNS_SCHEMA
    from pipeline.io.rows import table_from_rows
    from pipeline.sources.rows import observed_run_dicts

    shipped = SourcesSettings(
        SourceSpec("frontier_runs", "package:notable_ai_models.csv"), None, FetchSettings(), None
    )
    observations = observe(shipped, None, warn=False)
    flags = [False] * len(observations.runs)
    rows = observed_run_dicts(observations, flags, "0123456789abcdef", Provenance("run-1"))
    llama = next(r for r in rows if r["model"] == "Llama 3.1-405B")
    assert llama["training_hardware"] == "NVIDIA H100 SXM5 80GB"
    assert (llama["hardware_quantity"], llama["batch_size"]) == (16384, 16e6)
    assert llama["training_time_s"] == pytest.approx(2142.0 * 3600.0)
    table = table_from_rows(rows, OBSERVED_RUNS_SCHEMA)
    assert table.column("hardware_quantity").null_count < table.num_rows
