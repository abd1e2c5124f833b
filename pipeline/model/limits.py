"""Limits of a series: thresholds of the simulator and the closed forms of Model B (spec §11-§12).

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137, §3 (the latency bound)
and appendix (T_crit, T_limit); spec §11-§12, quirk Q4.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.model.compute.matmul import WORD_BYTES
from pipeline.model.records.hardware import HardwareSpec, peak_flop_per_s
from pipeline.model.records.options import Quirks
from pipeline.model.records.results import PointResult, SeriesLimits
from pipeline.model.records.scaling import (
    ScalingLaws,
    batch_exponent_in_flop,
    depth_exponent_in_flop,
)

LINEAR_REGIME_FRACTION = 0.8
"""The linear-scaling regime ends at the first utilization ≤ 0.8 · u_eff (spec §11)."""
MODEL_B_DURATION_S = 365.25 * 86400 / 4
"""τ_B = 7,889,400 s: Model B's three months use a 365.25-day year (quirk Q5)."""
REFERENCE_BATCH_TOKENS = 4e6
REFERENCE_LAYERS = 100.0
REFERENCE_FLOP = 3e23
CLOSED_FORM_NETWORK_HOPS = 4
"""Two dependent hops forward and two backward per layer (spec §12)."""
LATENCY_BOUND_FLOP_PER_PARAM_LAYER = 80.0
"""The 80 of N ≤ t_train · B / (80 · n_layer · t_latency) (paper §3)."""


def series_limits(points: Sequence[PointResult], u_eff: float) -> SeriesLimits:
    """Linear-scaling end, last feasible and first infeasible compute of a swept series (spec §11)."""
    feasible = [p for p in points if p.feasible and p.cost is not None]
    linear_end = next(
        (
            p.shape.training_flop
            for p in feasible
            if p.cost is not None and p.cost.utilization <= LINEAR_REGIME_FRACTION * u_eff
        ),
        None,
    )
    infeasible = [p for p in points if not p.feasible]
    return SeriesLimits(
        linear_end_flop=linear_end,
        last_feasible_flop=feasible[-1].shape.training_flop if feasible else None,
        first_infeasible_flop=infeasible[0].shape.training_flop if infeasible else None,
        max_utilization=max((p.cost.utilization for p in feasible if p.cost), default=None),
    )


def linear_end_after_peak_flop(points: Sequence[PointResult]) -> float | None:
    """C of the first feasible point after the series' best utilization u_max whose
    utilization is at most 0.8 · u_max; None if none (realistic physics, docs/model.md R.7).

    The extensions lower utilization everywhere and per-GPU memory lowers it most at small
    sizes, so the linear regime is measured from its peak rather than from u_eff.
    """
    feasible = [p for p in points if p.feasible and p.cost is not None]
    if not feasible:
        return None
    utils = [p.cost.utilization for p in feasible if p.cost is not None]
    peak = max(range(len(utils)), key=utils.__getitem__)
    threshold = LINEAR_REGIME_FRACTION * utils[peak]
    return next(
        (
            p.shape.training_flop
            for p, u in zip(feasible[peak:], utils[peak:], strict=True)
            if u <= threshold
        ),
        None,
    )


def series_alpha(laws: ScalingLaws, quirks: Quirks = Quirks()) -> float:
    """α = α_b − α_L: batch exponent minus depth exponent in C (≈ 0.0303 dense default, spec §12)."""
    return batch_exponent_in_flop(laws, quirks) - depth_exponent_in_flop(laws)


def closed_form_latency_s(hw: HardwareSpec) -> float:
    """t_lat = matmul latency + 4 hops at the slowest level (9 µs on H100, spec §12).

    The paper reads its 9 µs as 4.5 µs matmul latency plus four 1.125 µs network hops;
    taking the hop latency from the hardware lets what-if presets move the closed forms.
    """
    return hw.matmul_latency_s + CLOSED_FORM_NETWORK_HOPS * max(hw.net_latency_s)


@dataclass(frozen=True, slots=True)
class Anchors:
    """Model B's reference point and budget (spec §12): B = b0 and L = L0 at T0, over τ_B."""

    duration_s: float = MODEL_B_DURATION_S
    b0_tokens: float = REFERENCE_BATCH_TOKENS
    l0_layers: float = REFERENCE_LAYERS
    t0_flop: float = REFERENCE_FLOP
    flop_anchor: bool = False
    """Quirk Q4 off: anchor r(α) at T0 FLOP rather than T0 MAC."""


def batch_per_layer_anchor(alpha: float, anchors: Anchors = Anchors()) -> float:
    """r(α) = (b0/L0)·T0^(−α), so that B/L = r(α)·MAC^α (spec §12).

    The original raises r against MAC = C/2 while anchoring at T0 as given (Q4);
    `flop_anchor` uses r(α)·(2·MAC)^α instead, i.e. multiplies r by 2^α.
    """
    r = float((anchors.b0_tokens / anchors.l0_layers) * anchors.t0_flop ** (-alpha))
    return float(r * 2.0**alpha) if anchors.flop_anchor else r


def t_limit_flop(alpha: float, t_lat_s: float, anchors: Anchors = Anchors()) -> float:
    """T_limit = 2·[(3/320)·(r(α)·τ/t_lat)²]^(1/(1−2α)) FLOP: the latency wall (spec §12).

    From B/L = r·MAC^α, D = 20N, MAC = 60N² and a step of at least 4·L·t_lat.
    The training time then grows as MAC^(1/2 − α): for α ≥ 1/2, or without latency,
    nothing bounds the compute and T_limit is infinite.
    """
    if alpha >= 0.5 or t_lat_s <= 0.0:
        return math.inf
    r = batch_per_layer_anchor(alpha, anchors)
    ratio = r * anchors.duration_s / t_lat_s
    mac = ((3.0 / 320.0) * ratio**2) ** (1.0 / (1.0 - 2.0 * alpha))
    return float(2.0 * mac)


def node_nanobatch_tokens(hw: HardwareSpec) -> float:
    """n = M / W_mem: tokens per matmul that balance arithmetic and HBM traffic (spec §12)."""
    return _node_mac_per_s(hw) / _node_words_per_s(hw.hbm_bandwidth_bytes_per_s, hw)


def node_shard_side(hw: HardwareSpec) -> float:
    """a = 4·M / (3·W_net): the smallest useful 2-D TP weight-shard side (spec §12)."""
    return 4.0 * _node_mac_per_s(hw) / (3.0 * _node_words_per_s(_inter_node_bandwidth(hw), hw))


def _node_gpus(hw: HardwareSpec) -> int:
    return hw.level_sizes[0] if hw.level_sizes else 1


def _node_mac_per_s(hw: HardwareSpec) -> float:
    """M = G·F_peak/2 MAC/s for a node of G GPUs."""
    return _node_gpus(hw) * peak_flop_per_s(hw) / 2.0


def _node_words_per_s(bandwidth: float, hw: HardwareSpec) -> float:
    """W = G·bandwidth/(2w) words/s."""
    return _node_gpus(hw) * bandwidth / (2.0 * WORD_BYTES)


def _inter_node_bandwidth(hw: HardwareSpec) -> float:
    """Level-1 bandwidth, or the only level's on a flat network."""
    bws = hw.net_bandwidth_bytes_per_s
    return bws[1] if len(bws) > 1 else bws[0]


def t_crit_flop(hw: HardwareSpec, alpha: float, anchors: Anchors = Anchors()) -> float:
    """T_crit = 2·[(1/960)·(r(α)·M·τ/(a²·n))²]^(1/(1−2α)) FLOP: where data movement starts to bind (spec §12)."""
    if alpha >= 0.5:  # the useful cluster outgrows the needed one at every compute
        return math.inf
    r = batch_per_layer_anchor(alpha, anchors)
    m = _node_mac_per_s(hw)
    a = node_shard_side(hw)
    n = node_nanobatch_tokens(hw)
    if a == 0.0 or n == 0.0:  # infinite network or memory bandwidth: no critical compute
        return math.inf
    mac = ((1.0 / 960.0) * (r * m * anchors.duration_s / (a * a * n)) ** 2) ** (
        1.0 / (1.0 - 2.0 * alpha)
    )
    return float(2.0 * mac)


def latency_bound_params(
    duration_s: float, batch_tokens: float, n_layers: float, t_latency_s: float
) -> float:
    """N ≤ t_train · B / (80 · n_layer · t_latency): the simple latency bound (paper §3).

    3 months, 4M-token batches, 120 layers and 9 µs give about 4e14 parameters.
    """
    return duration_s * batch_tokens / (LATENCY_BOUND_FLOP_PER_PARAM_LAYER * n_layers * t_latency_s)
