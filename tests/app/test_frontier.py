"""The moving frontier's pass: each base series' projected years as one task."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest

from pipeline.app import frontier
from pipeline.execute.runner import chunked
from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.execute.settings import ExecutionSettings
from pipeline.schema import Scenario, compose_config, load_scenario

SMALL = "scaling.grid.max_d_model=16384"
"""Three model sizes: each series evaluates in well under a second."""


def test_run_frontiers_gives_each_base_its_own_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the run's chunk size at 1, the frontier's tasks are still whole bases: every task
    holds one base's projected years, all of them."""
    tasks: list[list[str]] = []

    def recording(
        scenarios: Iterable[Scenario], settings: ExecutionSettings, whole_grid: bool
    ) -> Iterator[SeriesOutcome]:
        for chunk in chunked(scenarios, settings.chunk_size):
            tasks.append([s.hardware_name for s in chunk])
            yield from (evaluate_series(s, whole_grid) for s in chunk)

    monkeypatch.setattr(frontier, "run_series", recording)
    bases = [
        (f"base-{law}", load_scenario(compose_config([f"batch={law}", SMALL])))
        for law in ("constant", "critical")
    ]
    years = [2025.0, 2030.0, 2035.0]
    moving = frontier.run_frontiers(bases, years, ExecutionSettings(n_jobs=1, chunk_size=1))
    assert sorted(moving) == ["base-constant", "base-critical"]
    names = [f"projected_h100_sxm_{int(y)}" for y in years]
    assert tasks == [names, names]  # one task per base, each with every year
