"""What a step is made of in the report: exposed parts that add up to the step, and the time
overlap hides kept apart (`pipeline.report.step_parts`, `step_chart`); the parallelism chart's
panels (`charts.parallelism_figure`)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from pipeline.execute.series import evaluate_series
from pipeline.io.rows import Provenance
from pipeline.report.charts import parallelism_figure
from pipeline.report.selection import select_series
from pipeline.report.step_chart import HIDDEN_LABEL, step_time_figure
from pipeline.report.step_parts import Overlap, step_parts
from pipeline.schema import compose_config, load_scenario
from tests.io.helpers import outcome_tables

GRID = "scaling.grid.max_d_model=65536"
"""The paper grid up to d_model 65536: sizes where TP time overlaps compute, and some where it
outlasts it."""


@pytest.fixture(scope="module")
def tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    """The points and thresholds of one dense H100 series (paper physics), as the report reads
    them."""
    outcome = evaluate_series(load_scenario(compose_config([GRID])))
    points, thresholds = outcome_tables(outcome, Provenance(run_id="t"))
    return pl.DataFrame(pl.from_arrow(points)), pl.DataFrame(pl.from_arrow(thresholds))


def test_step_parts_add_up_to_the_step_and_keep_overlap_apart(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    """The exposed parts of each row sum to its step time; the TP and PP/EP time overlapped
    with compute is counted hidden, not added (the raw terms over-fill the step)."""
    points = tables[0].filter(pl.col("feasible"))
    parts = step_parts(points, Overlap())
    total = sum(parts.exposed.values())
    np.testing.assert_allclose(total, points["step_time_s"].to_numpy(), rtol=1e-12)
    overlapped = (points["t_tp_comm_s"] + points["t_pp_ep_comm_s"]).to_numpy()
    compute = points["t_compute_s"].to_numpy()
    np.testing.assert_allclose(parts.hidden, np.minimum(compute, overlapped), rtol=1e-12)
    raw = (points["t_compute_s"] + points["t_tp_comm_s"] + points["t_pp_ep_comm_s"]) / points[
        "step_time_s"
    ]
    assert float(raw.max()) > 1.0  # adding the raw terms would claim more than the step


def test_step_parts_without_overlap_charge_all_communication(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    """With neither TP nor PP/EP overlapped, nothing is hidden and TP is all exposed."""
    points = tables[0].filter(pl.col("feasible"))
    parts = step_parts(points, Overlap(tp=False, pp_ep=False))
    assert not parts.hidden.any()
    np.testing.assert_allclose(parts.exposed["tp"], points["t_tp_comm_s"].to_numpy())


def test_step_chart_stacks_exposed_parts_and_draws_hidden_apart(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    """The step-time chart's stack reaches exactly the whole step, and its legend names the
    hidden overlap as not in the step."""
    points, thresholds = tables
    figure = step_time_figure(points, thresholds, select_series(thresholds))
    (ax,) = [a for a in figure.axes if a.get_visible()]
    top = max(float(np.max(p.get_paths()[0].vertices[:, 1])) for p in ax.collections)
    assert top == pytest.approx(1.0, rel=1e-9)
    labels = [t.get_text() for legend in figure.legends for t in legend.texts]
    assert HIDDEN_LABEL in labels


def test_parallelism_chart_has_no_expert_panel_for_dense_series(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    """A dense series (N_EP = 1 throughout) gets data, tensor and pipeline panels, no expert
    panel, and a note that says why."""
    points, thresholds = tables
    figure = parallelism_figure(points, thresholds, select_series(thresholds))
    ylabels = [ax.get_ylabel() for ax in figure.axes if ax.get_visible()]
    assert len(ylabels) == 3
    assert not [y for y in ylabels if "expert" in y]
    assert "N_EP = 1" in figure.get_supxlabel()


def test_parallelism_chart_draws_the_context_parallel_degree_of_realistic_rows() -> None:
    """A realistic dense series that splits sequences gets an N_CP panel beside N_DP."""
    outcome = evaluate_series(load_scenario(compose_config(["physics=realistic"])))
    points, thresholds = (
        pl.DataFrame(pl.from_arrow(t)) for t in outcome_tables(outcome, Provenance(run_id="t"))
    )
    assert (points["cp"] > 1).any()
    figure = parallelism_figure(points, thresholds, select_series(thresholds))
    ylabels = [ax.get_ylabel() for ax in figure.axes if ax.get_visible()]
    assert "context-parallel degree N_CP" in ylabels
    assert "N_CP" not in figure.get_supxlabel()


def test_parallelism_chart_claims_no_context_degree_of_rows_without_one(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    """Rows of a part before schema version 5 (null `cp`) get no N_CP panel and no note that
    N_CP is 1; a paper series with `cp` gets the note."""
    points, thresholds = tables
    old = points.with_columns(cp=pl.lit(None, dtype=pl.Int64))
    note = parallelism_figure(old, thresholds, select_series(thresholds)).get_supxlabel()
    assert "N_CP" not in note
    assert "N_EP = 1" in note
    paper = parallelism_figure(points, thresholds, select_series(thresholds)).get_supxlabel()
    assert "N_CP" in paper


def test_realistic_step_parts_hide_nothing_and_bubble_the_pipeline_only() -> None:
    """Under realistic physics the columns are exposed times: nothing is hidden, and the
    bubble is f times the pipeline's time (the step less the exposed DP reduction and the
    optimizer), so the parts never over-fill the step where DP is exposed beside a bubble."""
    scenario = load_scenario(
        compose_config(["physics=realistic", "scaling.grid.max_d_model=49152"])
    )
    points, _ = outcome_tables(evaluate_series(scenario), Provenance(run_id="t"))
    rows = pl.DataFrame(pl.from_arrow(points)).filter(pl.col("feasible"))
    both = rows.filter((pl.col("bubble_fraction") > 0) & (pl.col("t_dp_comm_s") > 0))
    assert both.height > 0  # rows where f · step would charge DP time to the bubble
    parts = step_parts(rows, Overlap())
    assert not parts.hidden.any()
    step = rows["step_time_s"].to_numpy()
    pipe = step - rows["t_dp_comm_s"].to_numpy() - rows["t_optimizer_s"].fill_null(0.0).to_numpy()
    np.testing.assert_allclose(parts.exposed["bubble"], rows["bubble_fraction"].to_numpy() * pipe)
    named = sum(v for k, v in parts.exposed.items() if k != "other")
    assert np.all(named <= step * (1 + 1e-12))
    np.testing.assert_allclose(sum(parts.exposed.values()), step, rtol=1e-12)
