"""The `points` layout columns count what their names count: n_gpu = dp · cp · tp_model ·
tp_ff · pp · ep on every row with a layout (docs/schema.md, "Layout")."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import polars as pl
import pytest

import pipeline
from pipeline.schema import compose_config, load_scenario

RUNS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "conf" / "run").glob("*.yaml"))
"""Every shipped run preset (conf/run/)."""

DEGREES = ("dp", "cp", "tp_model", "tp_ff", "pp", "ep")
SERIAL = ["execution.n_jobs=1"]

SPARSE_RUNS = [
    ["run=gpt_1p7b", "run.experts=8", "run.ep=8"],
    ["run=gpt_1p7b", "run.experts=8", "run.ep=4", "run.cp=2", "run.dp=16"],
]
"""Mixtures of experts made of a dense preset: expert parallelism alone, and with context
parallelism (32 GPUs each)."""


@functools.cache
def series_points(*overrides: str) -> pl.DataFrame:
    """The `points` frame of `dmlimits OVERRIDES`, in-process (computed once per list)."""
    return pipeline.run([*overrides, *SERIAL]).points


def laid_out(points: pl.DataFrame) -> pl.DataFrame:
    """The rows that carry a layout (feasible, or over a budget with their layout kept)."""
    return points.filter(pl.col("n_gpu").is_not_null())


def assert_degrees_multiply_to_the_gpus(points: pl.DataFrame) -> None:
    """Each row's degrees multiply to its GPUs, and each degree's per-level factors to it."""
    for row in laid_out(points).iter_rows(named=True):
        assert math.prod(row[d] for d in DEGREES) == row["n_gpu"], row
        for d in DEGREES:
            assert math.prod(int(f) for f in row[f"{d}_levels"].split("x")) == row[d], (d, row)


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
@pytest.mark.parametrize("physics", ["paper", "realistic"])
def test_layout_degrees_multiply_to_the_gpus_on_the_default_series(
    scaling: str, physics: str
) -> None:
    """Every laid-out row of the default dense and sparse series has n_gpu = dp·cp·tp·pp·ep."""
    points = series_points(f"scaling={scaling}", f"physics={physics}")
    assert laid_out(points).height > 0
    assert_degrees_multiply_to_the_gpus(points)
    if physics == "paper":  # the paper's layouts have no context parallelism
        assert (laid_out(points)["cp"] == 1).all()


def test_layout_realistic_dense_series_reports_its_context_parallelism() -> None:
    """The default realistic dense series chooses context parallelism somewhere, in `cp`."""
    points = series_points("scaling=dense", "physics=realistic")
    assert (laid_out(points)["cp"] > 1).any()


@pytest.mark.parametrize("overrides", [[f"run={name}"] for name in RUNS] + SPARSE_RUNS)
def test_layout_run_row_counts_data_context_and_expert_ranks_apart(overrides: list[str]) -> None:
    """A run's row holds its c as `cp`, its e as `ep` and d/e as `dp`, and they multiply to
    its GPUs (the run presets, dense, and mixtures of experts)."""
    args = [*overrides, "physics=realistic"]
    layout = load_scenario(compose_config(args)).run
    assert layout is not None
    points = series_points(*args)
    assert_degrees_multiply_to_the_gpus(points)
    row = laid_out(points).row(0, named=True)
    lay = layout.layout
    assert (row["dp"], row["cp"], row["ep"]) == (lay.expert_dp, lay.cp, lay.ep)
