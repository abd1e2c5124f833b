"""Layout search and fixed-layout evaluation against the spec's check values (spec §16.3-§16.5)."""

from __future__ import annotations

import math

import pytest

from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.records.results import Layout
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.search.search import optimal_layout, smallest_cluster
from pipeline.model.step.evaluate import evaluate_layout
from tests.presets import preset

SEARCH_REL_TOL = 1e-5
"""Spec §16.3-§16.5 print five to six significant digits; 1e-5 relative covers that rounding."""
DURATION_S = 0.25 * 3.154e7
"""Model A's three months (spec §0)."""

Levels = tuple[tuple[int, ...], ...]


def dense() -> ModelShape:
    return model_shape(12288, ScalingLaws())


def sparse() -> ModelShape:
    return model_shape(12288, ScalingLaws(sparse=True))


def run_totals(name: str, shape: ModelShape, layout: Layout) -> tuple[float, ...]:
    """(T_train, util, TP, DP, PP/EP, latency) run totals of spec §8 for a layout on a preset."""
    c = evaluate_layout(preset(name), shape, layout)
    steps = shape.n_tokens / shape.batch_tokens
    return (
        c.training_time_s,
        c.utilization,
        steps * c.t_tp_comm_s,
        steps * c.t_dp_comm_s,
        steps * c.t_pp_ep_comm_s,
        steps * c.t_latency_s,
    )


def levels_of(layout: Layout) -> Levels:
    return (layout.dp, layout.tp_model, layout.tp_ff, layout.pp, layout.ep)


def test_optimal_layout_matches_end_to_end_check() -> None:
    """H100 dense d_model 12288 on 2048 GPUs: the layout, step and run totals of spec §16.3."""
    shape = dense()
    found = optimal_layout(preset("h100_sxm"), shape, 2048)
    assert found is not None
    layout, cost = found
    assert levels_of(layout) == ((1, 1), (4, 1), (2, 4), (1, 64), (1, 1))
    assert (layout.microbatches, layout.zero_bubble, layout.pp_interleave) == (128, True, 1)
    assert (shape.d_model // 4, shape.d_ff // 8, layout.nanobatch_tokens) == (3072, 6144, 57344)
    steps = shape.n_tokens / shape.batch_tokens
    assert steps == pytest.approx(631954.2857, rel=1e-9)
    assert cost.step_time_s == pytest.approx(7.2113191, rel=SEARCH_REL_TOL)
    assert cost.step_time_s == cost.t_compute_s
    assert cost.t_tp_comm_s == pytest.approx(4.0587441, rel=SEARCH_REL_TOL)
    assert cost.t_pp_ep_comm_s == pytest.approx(0.22196257, rel=SEARCH_REL_TOL)
    assert cost.t_dp_comm_s == 0.0
    assert cost.training_time_s == pytest.approx(4.5572240e6, rel=SEARCH_REL_TOL)
    assert cost.utilization == pytest.approx(0.69899358, rel=SEARCH_REL_TOL)
    assert steps * cost.t_latency_s == pytest.approx(1727.6050, rel=SEARCH_REL_TOL)
    assert cost.t_latency_paid_s == 0.0  # quirk Q1: zero-bubble pays no TP or PP/EP latency


def test_smallest_cluster_for_check_model_is_2048() -> None:
    """The smallest sufficient cluster for H100 dense d_model 12288 is 2048 GPUs (spec §16.3)."""
    point = smallest_cluster(preset("h100_sxm"), dense(), DURATION_S)
    assert point.feasible
    assert point.layout is not None
    assert point.layout.n_gpu == 2048


# model, N_GPU, layout levels, m, zero-bubble, T_train, util, TP, DP, PP/EP, latency — spec §16.5
SEARCH_CHECKS = [
    ("dense", 4096, ((1, 2), (2, 1), (4, 4), (1, 64), (1, 1)), 128,
     (2.2847521e6, 0.69711508, 1.2824704e6, 2862.6571, 7.0135098e4, 1729.0269)),
    ("dense", 1024, ((1, 1), (2, 1), (4, 2), (1, 64), (1, 1)), 128,
     (9.1078960e6, 0.69949643, 1.8999561e6, 0.0, 2.8054039e5, 1727.6050)),
    ("sparse", 32768, ((1, 2), (4, 1), (2, 4), (1, 64), (1, 8)), 128,
     (2.2941683e6, 0.69425384, 1.2824704e6, 5725.3141, 1.9481972e5, 3822.0595)),
]  # fmt: skip


@pytest.mark.parametrize(("model", "n_gpu", "levels", "m", "totals"), SEARCH_CHECKS)
def test_optimal_layout_matches_search_checks(
    model: str, n_gpu: int, levels: Levels, m: int, totals: tuple[float, ...]
) -> None:
    """Searches at cluster sizes that are not sweep results return spec §16.5's layouts and totals."""
    shape = dense() if model == "dense" else sparse()
    found = optimal_layout(preset("h100_sxm"), shape, n_gpu)
    assert found is not None
    layout, _ = found
    assert levels_of(layout) == levels
    assert (layout.microbatches, layout.zero_bubble) == (m, True)
    assert run_totals("h100_sxm", shape, layout) == pytest.approx(
        totals, rel=SEARCH_REL_TOL, abs=1e-6
    )


# id, preset, model, layout levels (DP; TPm; TPff; PP; EP), m, ZB, v, T_train, util, TP, DP, PP/EP, latency — spec §16.4
FIXED_CHECKS = [
    ("B", "h100_sxm", "dense", ((1, 1), (4, 1), (2, 4), (1, 64), (1, 1)), 64, False, 3,
     (6.0501218e6, 0.52651343, 2.5649407e6, 0.0, 4.2526361e5, 1909.6079)),
    ("C", "h100_sxm", "dense", ((1, 8), (2, 2), (2, 2), (1, 16), (1, 1)), 16, False, 12,
     (5.1098994e6, 0.62339198, 4.2749012e6, 4.0077199e4, 4.2526361e5, 2457.0383)),
    ("D", "h100_sxm", "sparse", ((1, 4), (2, 1), (2, 4), (1, 32), (2, 4)), 32, False, 6,
     (5.3311998e6, 0.59751472, 2.5649407e6, 3.4351885e4, 4.2526361e5, 3822.0595)),
    ("E", "h100_sxm", "sparse", ((1, 8), (2, 1), (2, 2), (1, 4), (2, 4)), 8, True, 1,
     (3.7059718e7, 0.68764050, 6.8398419e6, 6.4123518e5, 2.6114501e6, 3822.0595)),
    ("F", "v100_sxm", "dense", ((1, 4), (2, 2), (4, 2), (1, 16), (1, 1)), 16, False, 12,
     (4.0678786e7, 0.61696205, 3.4199210e7, 1.3740754e5, 3.4021089e6, 2457.0383)),
    ("G", "h100_superpod", "dense", ((1, 1, 2), (4, 1, 1), (2, 2, 2), (1, 16, 2), (1, 1, 1)), 64, True, 1,
     (4.5629508e6, 0.69811631, 1.5199649e6, 5725.3141, 1.7069918e4, 2229.5347)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "name", "model", "levels", "m", "zb", "v", "totals"), FIXED_CHECKS
)
def test_evaluate_layout_matches_fixed_checks(
    case: str,
    name: str,
    model: str,
    levels: Levels,
    m: int,
    zb: bool,
    v: int,
    totals: tuple[float, ...],
) -> None:
    """Fixed layouts evaluate to spec §16.4's training time, utilization and run totals."""
    shape = dense() if model == "dense" else sparse()
    n_gpu = math.prod(math.prod(level) for level in levels)
    dp = math.prod(levels[0])
    nano = shape.batch_tokens // (dp * m * shape.sparsity)
    layout = Layout(
        n_gpu,
        *levels,
        microbatches=m,
        zero_bubble=zb,
        pp_interleave=v,
        nanobatch_tokens=nano,
        cp=tuple(1 for _ in levels[0]),
    )
    assert run_totals(name, shape, layout) == pytest.approx(totals, rel=SEARCH_REL_TOL, abs=1e-6)


def test_optimal_layout_none_when_memory_too_small() -> None:
    """A cluster whose memory cannot hold the weights and optimizer state has no layout (spec §9)."""
    assert optimal_layout(preset("h100_sxm"), dense(), 8) is None


def test_zb_latency_quirk_off_never_shortens_training() -> None:
    """Q1 off charges zero-bubble layouts their hidden latency, so the best time cannot fall."""
    on = optimal_layout(preset("h100_sxm"), dense(), 2048)
    opts = SearchOptions(quirks=Quirks(zb_hides_latency_correctly=True))
    off = optimal_layout(preset("h100_sxm"), dense(), 2048, opts)
    assert on is not None
    assert off is not None
    assert off[1].training_time_s >= on[1].training_time_s
