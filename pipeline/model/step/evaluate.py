"""One layout's step cost, what bounds it, and the evaluation of a given (fixed) layout.

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137; spec §7-§8, §16.4.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from pipeline.model.caches import cached
from pipeline.model.compute.layer import layer_matmul_calls, layer_matmul_time_s
from pipeline.model.compute.matmul import matmul_terms_s, slowest_call_bound
from pipeline.model.network.collectives import Network
from pipeline.model.records.hardware import HardwareSpec, gpu_only
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import Bottleneck, Layout, MatmulBound, PointResult, StepCost
from pipeline.model.records.scaling import ModelShape
from pipeline.model.step.step_time import LayoutBatch, StepArrays, step_arrays, utilization


def matmul_bound(hw: HardwareSpec, shape: ModelShape, layout: Layout) -> MatmulBound:
    """The resource bounding the layout's slowest matmul call under the paper's physics: the
    memory wall shows here (spec §4; realistic physics: `search.realistic.realistic_matmul_bound`)."""
    dm = shape.d_model // int(np.prod(layout.tp_model))
    df = shape.d_ff // int(np.prod(layout.tp_ff))
    return _shard_matmul_bound(gpu_only(hw), dm, df, layout.nanobatch_tokens)


@cached(maxsize=16384)
def _shard_matmul_bound(hw: HardwareSpec, dm: int, df: int, nanobatch: int) -> MatmulBound:
    """`matmul_bound` of one shard shape on one GPU (cached: sweep points share shapes): the
    four distinct calls of an MLP block (`layer.layer_matmul_calls`) against the paper's
    matmul latency (`matmul.slowest_call_bound`)."""
    one = np.ones(1)
    t = matmul_terms_s(hw, *layer_matmul_calls(one * dm, one * df, one * nanobatch))
    return slowest_call_bound(t, hw.matmul_latency_s)


def bottleneck(step: StepArrays) -> Bottleneck:
    """The largest of the step's parts: critical-path work, bubble, paid latency, DP (spec §7)."""
    t_mm = float(step.t_compute_s[0])
    tp, ppep = float(step.t_tp_bw_s[0]), float(step.t_pp_ep_bw_s[0])
    busy = max(t_mm, tp + ppep)
    if t_mm >= tp + ppep:
        work = Bottleneck.COMPUTE
    else:
        work = Bottleneck.TP_COMM if tp >= ppep else Bottleneck.PP_EP_COMM
    f = float(step.bubble_fraction[0])
    parts = {
        work: busy,
        Bottleneck.BUBBLE: busy * f / (1.0 - f),
        Bottleneck.LATENCY: float(step.t_latency_paid_s[0]),
        Bottleneck.DP_COMM: float(step.t_dp_bw_s[0]),
    }
    return max(parts, key=lambda k: parts[k])


def step_cost(hw: HardwareSpec, shape: ModelShape, layout: Layout, step: StepArrays) -> StepCost:
    """Package row 0 of `step` as the layout's StepCost."""
    t_step = float(step.t_step_s[0])
    return StepCost(
        t_compute_s=float(step.t_compute_s[0]),
        t_tp_comm_s=float(step.t_tp_bw_s[0]),
        t_pp_ep_comm_s=float(step.t_pp_ep_bw_s[0]),
        t_dp_comm_s=float(step.t_dp_bw_s[0]),
        t_latency_s=float(step.t_tp_lat_s[0] + step.t_pp_ep_lat_s[0] + step.t_dp_lat_s[0]),
        t_latency_paid_s=float(step.t_latency_paid_s[0]),
        bubble_fraction=float(step.bubble_fraction[0]),
        step_time_s=t_step,
        training_time_s=float(step.t_train_s[0]),
        utilization=float(utilization(hw, shape, layout.n_gpu, step.t_step_s)[0]),
        bottleneck=bottleneck(step),
        matmul_bound=matmul_bound(hw, shape, layout),
    )


def layout_batch(hw: HardwareSpec, shape: ModelShape, layout: Layout) -> LayoutBatch:
    """A one-row batch for a given layout; v and b are taken from the layout as given."""
    per_level = np.array(
        [layout.dp, layout.tp_model, layout.tp_ff, layout.pp, layout.ep], dtype=np.float64
    ).T[None, :, :]
    tpm, tpff = int(np.prod(layout.tp_model)), int(np.prod(layout.tp_ff))
    pp, ep = int(np.prod(layout.pp)), int(np.prod(layout.ep))
    one = np.ones(1)
    t_layer = layer_matmul_time_s(
        hw,
        one * (shape.d_model // tpm),
        one * (shape.d_ff // tpff),
        one * layout.nanobatch_tokens,
    )
    repeats = (shape.n_layers // pp) * (shape.sparsity // ep) * layout.microbatches
    return LayoutBatch.from_factors(
        per_level,
        one * layout.microbatches,
        np.array([layout.zero_bubble]),
        one * layout.pp_interleave,
        t_layer,
        one * repeats,
    )


def evaluate_layout(
    hw: HardwareSpec, shape: ModelShape, layout: Layout, opts: SearchOptions = SearchOptions()
) -> StepCost:
    """Step cost of a given layout as is: no search, no memory check (spec §16.4)."""
    net = Network(hw.net_bandwidth_bytes_per_s, hw.net_latency_s)
    step = step_arrays(hw, shape, layout.n_gpu, layout_batch(hw, shape, layout), net, opts)
    return step_cost(hw, shape, layout, step)


Q1_TOLERANCE = 0.01
"""Share of a row's step past which the latency quirk Q1 drops is said to decide the row: a
warning line names the series (docs/model.md §11); below it Q1 moves the row by under 1 %."""


def q1_latency_hidden_s(
    hw: HardwareSpec, shape: ModelShape, layout: Layout, opts: SearchOptions
) -> float:
    """Latency per step (s) that quirk Q1 drops from a zero-bubble layout: the layout's step
    evaluated with Q1 off (`zb_hides_latency_correctly`: T_pipe = max(busy, T_TP^lat +
    T_PPEP^lat)) minus its step with the quirk as set (T_pipe = busy); docs/model.md §7 and
    §11, spec §14 Q1. 0 for a 1F1B layout (it pays its latency either way) or with Q1 off;
    never negative (the two steps differ only by that max)."""
    if not layout.zero_bubble or opts.quirks.zb_hides_latency_correctly:
        return 0.0
    return _q1_difference_s(hw, shape, layout, opts)


def with_q1_latency(point: PointResult, hw: HardwareSpec, opts: SearchOptions) -> PointResult:
    """The point with `q1_latency_hidden_s` set on the paper's step path (a row whose
    latencies are known); None without a cost or under realistic physics. A layout whose
    latencies (even all three: `t_latency_s`) stay within its compute loses nothing to Q1
    (T_TP^lat + T_PPEP^lat <= t_latency_s <= T_mm <= busy), so only the others are
    evaluated a second time."""
    cost, layout = point.cost, point.layout
    if cost is None or layout is None or math.isnan(cost.t_latency_s):
        return point
    hidden = 0.0
    if cost.t_latency_s > cost.t_compute_s:
        hidden = q1_latency_hidden_s(hw, point.shape, layout, opts)
    return dataclasses.replace(point, q1_latency_hidden_s=hidden)


def _q1_difference_s(
    hw: HardwareSpec, shape: ModelShape, layout: Layout, opts: SearchOptions
) -> float:
    """The layout's step with Q1 off minus its step with Q1 on, at least 0."""
    fixed = dataclasses.replace(
        opts, quirks=dataclasses.replace(opts.quirks, zb_hides_latency_correctly=True)
    )
    with_quirk = evaluate_layout(hw, shape, layout, opts).step_time_s
    without = evaluate_layout(hw, shape, layout, fixed).step_time_s
    hidden = without - with_quirk
    return hidden if math.isfinite(hidden) and hidden > 0.0 else 0.0
