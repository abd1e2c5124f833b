"""Bubble, memory and step time against the worked examples of docs/model.md §7-§8."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pipeline.model.memory.aggregate import memory_required_bytes
from pipeline.model.network.collectives import Network
from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.records.scaling import ScalingLaws, model_shape
from pipeline.model.step.schedule import bubble_fraction
from pipeline.model.step.step_time import LayoutBatch, step_arrays
from tests.presets import preset

REL_TOL = 1e-12
"""The example's values are exact decimals; the float evaluation order costs a few ulps."""
SHAPE = model_shape(12288, ScalingLaws())
"""Dense d_model 12288: L = 192 (spec §16.1)."""
NET = Network((float("inf"),), (1e-6,))
"""One level of infinite bandwidth and 1 µs per hop: only latency costs."""


def pipeline_of_four(zero_bubble: bool) -> LayoutBatch:
    """PP = 4 on one level, m = 8, v = 1, t_layer = 1 ms; every other degree 1."""
    factors = np.array([[[1, 1, 1, 4, 1]]])
    repeats = float((SHAPE.n_layers // 4) * 1 * 8)
    return LayoutBatch.from_factors(
        factors,
        np.array([8.0]),
        np.array([zero_bubble]),
        np.array([1.0]),
        np.array([1e-3]),
        np.array([repeats]),
    )


def test_bubble_fraction_by_schedule() -> None:
    """N_PP = 4, m = 8: 3/11 with v = 1, 3/19 with v = 2, 0 for zero-bubble."""
    pp, m = np.array([4.0, 4.0, 4.0]), np.array([8.0, 8.0, 8.0])
    f = bubble_fraction(pp, m, np.array([1.0, 2.0, 1.0]), np.array([False, False, True]))
    assert f.tolist() == [3.0 / 11.0, 3.0 / 19.0, 0.0]


def test_memory_required_bytes_weights_per_replica_and_sharded_optimizer() -> None:
    """1e9 parameters at N_DP = 4 need 2·1e9·4 + 8·1e9 = 1.6e10 bytes (spec §9)."""
    shape = replace(SHAPE, d_model=1000, d_ff=1000, n_layers=500)  # N = 2·1000·1000·500 = 1e9
    assert shape.n_params == 1e9
    one = np.array([1.0])
    need = memory_required_bytes(
        shape, np.array([4.0]), one, one, np.array([False]), SearchOptions()
    )
    assert need.tolist() == [1.6e10]


def test_step_time_of_1f1b_pays_bubble_and_latency() -> None:
    """T_mm = 0.384 s; 1F1B: t_step = 0.384/(1 − 3/11) + 6 µs = 0.528006 s."""
    step = step_arrays(preset("h100_sxm"), SHAPE, 4, pipeline_of_four(False), NET, SearchOptions())
    assert step.t_compute_s[0] == pytest.approx(0.384, rel=REL_TOL)
    assert step.t_pp_ep_lat_s[0] == pytest.approx(6e-6, rel=REL_TOL)
    assert step.t_step_s[0] == pytest.approx(0.528006, rel=REL_TOL)
    assert step.t_train_s[0] == pytest.approx(
        SHAPE.n_tokens / SHAPE.batch_tokens * 0.528006, rel=REL_TOL
    )


@pytest.mark.parametrize("hides_correctly", [False, True])
def test_step_time_of_zero_bubble_is_busy_time(hides_correctly: bool) -> None:
    """ZB: t_step = T_mm = 0.384 s and no latency is paid, under Q1 and with Q1 off."""
    opts = SearchOptions(quirks=Quirks(zb_hides_latency_correctly=hides_correctly))
    step = step_arrays(preset("h100_sxm"), SHAPE, 4, pipeline_of_four(True), NET, opts)
    assert step.t_step_s[0] == pytest.approx(0.384, rel=REL_TOL)
    assert step.t_latency_paid_s[0] == 0.0
