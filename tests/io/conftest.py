"""Hand-built model results for the io tests (independent of the search implementation)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from pipeline.identity import config_hash
from pipeline.io.rows import Provenance, SeriesKey
from pipeline.model.records.results import (
    Bottleneck,
    InfeasibleReason,
    Layout,
    MatmulBound,
    PointResult,
    StepCost,
)
from pipeline.model.records.scaling import ModelShape

PointFactory = Callable[..., PointResult]


def _shape(d_model: int, sparsity: int = 1) -> ModelShape:
    return ModelShape(
        d_model=d_model,
        d_ff=4 * d_model,
        n_layers=96,
        sparsity=sparsity,
        seq_len=2048,
        batch_seqs=2048 * sparsity,
    )


def _layout() -> Layout:
    return Layout(
        n_gpu=8192,
        dp=(1, 64),
        tp_model=(2, 1),
        tp_ff=(4, 1),
        pp=(1, 16),
        ep=(1, 1),
        microbatches=32,
        zero_bubble=False,
        pp_interleave=6,
        nanobatch_tokens=2048,
        cp=(1, 1),
    )


def _cost(bubble_fraction: float = 0.1) -> StepCost:
    return StepCost(
        t_compute_s=1.5,
        t_tp_comm_s=0.4,
        t_pp_ep_comm_s=0.2,
        t_dp_comm_s=0.3,
        t_latency_s=0.01,
        t_latency_paid_s=0.005,
        bubble_fraction=bubble_fraction,
        step_time_s=2.0,
        training_time_s=5.0e6,
        utilization=0.55,
        bottleneck=Bottleneck.COMPUTE,
        matmul_bound=MatmulBound.FLOP,
    )


@pytest.fixture
def feasible_point() -> PointFactory:
    """A factory of feasible points: make(d_model, **layout/cost overrides)."""

    def make(d_model: int, *, n_gpu: int = 8192, bubble_fraction: float = 0.1) -> PointResult:
        layout = replace(_layout(), n_gpu=n_gpu)
        return PointResult(_shape(d_model), True, None, layout, _cost(bubble_fraction))

    return make


@pytest.fixture
def infeasible_point() -> PointFactory:
    """A factory of infeasible points: make(d_model, reason)."""

    def make(d_model: int, reason: InfeasibleReason = InfeasibleReason.NO_CLUSTER) -> PointResult:
        return PointResult(_shape(d_model), False, reason, None, None)

    return make


@pytest.fixture
def provenance() -> Provenance:
    """A fixed provenance, so that tables compare equal across builds."""
    return Provenance(run_id="test-run", created_at=datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC))


@pytest.fixture
def make_series() -> Callable[..., SeriesKey]:
    """A factory of series keys hashed from a small config."""

    def make(
        hardware: str = "h100", scaling: str = "dense", batch_law: str = "critical"
    ) -> SeriesKey:
        config = {"hardware": hardware, "scaling": scaling, "batch_law": batch_law}
        return SeriesKey(hardware, scaling, batch_law, 7.885e6, config_hash(config), 3.154e7)

    return make
