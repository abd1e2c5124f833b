"""A run is evaluated as given by default; `parallelism=search` chosen explicitly or
`run.layout_search=true` searches its layout (docs/configuration.md, "One concrete run")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from pipeline.app.api import run
from pipeline.app.plan import compose_run_config, plan_run
from pipeline.schema import Scenario

RUN = "run=gpt_1p7b"


def planned(overrides: Sequence[str]) -> Scenario:
    """The one scenario the planning layer makes of `overrides`."""
    (scenario,) = plan_run(
        compose_run_config(overrides), overrides=overrides, write=False
    ).scenarios
    return scenario


def searched(overrides: Sequence[str]) -> bool:
    """Whether the planned run's layout is searched."""
    run = planned(overrides).run
    assert run is not None
    return run.layout_search


def test_run_layout_is_given_by_default() -> None:
    """Without a parallelism choice the run keeps its own layout."""
    assert not searched([RUN])


@pytest.mark.parametrize(
    "extra", [["parallelism=search"], ["run.layout_search=true"]], ids=["choice", "run_key"]
)
def test_run_layout_is_searched_when_asked(extra: list[str]) -> None:
    """`parallelism=search` in the overrides and `run.layout_search=true` both search."""
    assert searched([RUN, *extra])


def test_run_layout_is_given_under_parallelism_fixed() -> None:
    """parallelism=fixed does not search a run's layout."""
    assert not searched([RUN, "parallelism=fixed"])


def test_run_layout_is_searched_by_an_experiment_file_choice(tmp_path: Path) -> None:
    """An experiment file's `override /parallelism: search` counts as an explicit choice."""
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "plan.yaml").write_text(
        "# @package _global_\ndefaults:\n  - override /parallelism: search\n"
    )
    base = [f"hydra.searchpath=[file://{tmp_path}]", RUN, "+experiment=plan"]
    assert searched(base)


def test_run_layout_default_grid_is_unchanged() -> None:
    """The default parallelism option composes the grid's search exactly as parallelism=search."""
    default = plan_run(compose_run_config([]), overrides=[], write=False).series
    search = plan_run(
        compose_run_config(["parallelism=search"]), overrides=["parallelism=search"], write=False
    ).series
    assert [s.series_id for s in default] == [s.series_id for s in search]


def test_run_layout_search_is_never_slower_than_the_given_layout() -> None:
    """The searched layout's step is at most the given one's (the given layout is a candidate)."""
    base = [RUN, "hardware=a100_sxm_80gb", "physics=realistic"]
    given = run(base).points.row(0, named=True)
    best = run([*base, "parallelism=search"]).points.row(0, named=True)
    assert best["mfu"] >= given["mfu"] * (1 - 1e-12)
    assert best["run_name"] == given["run_name"] == "gpt_1p7b"


def test_run_layout_is_searched_for_runs_of_a_sweep_choice() -> None:
    """Runs chosen by a sweep follow an explicit `parallelism=search` on the command line."""
    overrides = ["parallelism=search", "+sweep.choices.run=[gpt_1p7b,gpt_3p6b]"]
    series = plan_run(compose_run_config(overrides), overrides=overrides, write=False).series
    runs = [s.scenario.run for s in series]
    assert [r.name for r in runs if r is not None] == ["gpt_1p7b", "gpt_3p6b"]
    assert all(r is not None and r.layout_search for r in runs)
