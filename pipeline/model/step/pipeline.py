"""The realistic step of a pipelined layout, vectorized over layouts: how a concrete run and a
realistic grid candidate add their parts up (docs/model.md R.6, R.7).

  t_full  = t_layer + t_tp + t_ep                       one layer and microbatch, collectives in
  t_slow  = max(L_full · t_full, L_last · t_full + t_last)   the slowest stage (t_last: logits)
  t_all   = L · t_full + t_last                         one microbatch through every stage
  t_pipe  = m · t_slow + (t_all − t_slow)/v + m · t_p2p  1F1B: steady state at the slowest
            stage, fill and drain through the others (0 for a zero-bubble schedule)
  t_step  = t_pipe + t_dp + t_optimizer

Every part is non-negative and t_step is non-decreasing in each of t_layer, t_tp, t_ep,
t_p2p, t_dp and t_optimizer: d t_pipe / d t_full = m · L_s + (L − L_s)/v ≥ 0 with L_s ∈
{L_full, L_last} ≤ L and v ≥ 1. So the step with every network time at 0 is a lower bound of
the step on any network (`pipeline_floor_s`); each operation rounds monotonically except the
subtraction t_all − t_slow, whose rounding moves the result by a few units in the last place,
far inside the search's relative slack (`search.PRUNE_SLACK`, 1e-9).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.records.results import Bottleneck

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class StageLayers:
    """Layers per pipeline stage, per row: the fullest stage's, the last stage's (it runs the
    logits) and all of them (`records.run.stage_layers`; the grid's stages are even)."""

    full: Array
    last: Array
    total: float


@dataclass(frozen=True, slots=True)
class PipelineStep:
    """A step's time and its pipeline's parts, per row (s)."""

    t_step_s: Array
    t_pipe_s: Array
    t_bubble_s: Array
    """Fill and drain: what the pipeline adds to the slowest stage's m passes."""
    slowest_layers: Array
    """Layers of the slowest stage, the one t_slow times: L_full, or L_last where the last
    stage with the logits is slower (on even stages with logits, the last)."""
    slowest_has_logits: NDArray[np.bool_]
    """The slowest stage is the last, which runs the logits."""

    @property
    def bubble_fraction(self) -> Array:
        """Fill and drain over the pipeline's time, in [0, 1)."""
        out: Array = self.t_bubble_s / self.t_pipe_s
        return out


def exposed_gradient_s(t_dp_s: Array, t_backward_s: Array, overlapped: NDArray[np.bool_]) -> Array:
    """The gradient all-reduce's part on the critical path: all of it, or with `overlapped`
    (FSDP, Zhao et al. 2023) what outlasts `t_backward_s`, the first stage's backward of its
    last microbatch, over which the layers' gradients reduce."""
    out: Array = np.where(overlapped, np.maximum(t_dp_s - t_backward_s, 0.0), t_dp_s)
    return out


def exposed_tensor_parallel_s(
    t_tp_s: Array, t_gemm_s: Array, overlapped: NDArray[np.bool_] | bool
) -> Array:
    """The tensor-parallel collectives' part on the critical path of a layer: all of them, or
    with `overlapped` what outlasts the layer's weight GEMMs they are pipelined with
    (Transformer Engine's and Megatron-Core's TP communication overlap: all-gathers and
    reduce-scatters split into chunks that run beside the GEMMs consuming and producing them;
    Wang et al. 2023, "Overlap communication with dependent computation via decomposition
    in large deep learning models", ASPLOS)."""
    out: Array = np.where(overlapped, np.maximum(t_tp_s - t_gemm_s, 0.0), t_tp_s)
    return out


def pipeline_step_s(
    stages: StageLayers,
    t_full_s: Array,
    t_last_s: Array,
    microbatches: Array,
    interleave: Array,
    zero_bubble: NDArray[np.bool_] | None,
    t_p2p_s: Array,
    t_dp_s: Array,
    t_optimizer_s: Array | None,
) -> PipelineStep:
    """The step of each row (module docstring): the slowest stage m times, fill and drain
    through the other stages (v chunks shorten them v times; a zero-bubble schedule, Qi et
    al. 2024's ZB-H2, fills them with split backward passes: none), m exposed sends, the
    exposed gradient all-reduce and the optimizer step (None: not modelled)."""
    t_full_stage = stages.full * t_full_s
    t_last_stage = stages.last * t_full_s + t_last_s
    last_slower = t_last_stage > t_full_stage
    t_slowest = np.where(last_slower, t_last_stage, t_full_stage)
    t_stages = stages.total * t_full_s + t_last_s  # every stage once: one microbatch end to end
    t_bubble = (t_stages - t_slowest) / interleave
    if zero_bubble is not None:
        t_bubble = np.where(zero_bubble, 0.0, t_bubble)
    t_pipe = microbatches * t_slowest + t_bubble + microbatches * t_p2p_s
    t_step = t_pipe + t_dp_s
    if t_optimizer_s is not None:
        t_step = t_step + t_optimizer_s
    slowest_layers = np.where(last_slower, stages.last, stages.full)
    return PipelineStep(t_step, t_pipe, t_bubble, slowest_layers, last_slower)


def bubble_time_s(
    bubble_fraction: Array | float,
    step_time_s: Array | float,
    t_dp_s: Array | float,
    t_optimizer_s: Array | float | None,
) -> Array:
    """Realistic rows' fill and drain (s) from their columns: f · t_pipe with t_pipe = t_step −
    t_dp − t_optimizer (module docstring; None: no optimizer step), `PipelineStep.t_bubble_s`
    again: f is a share of the pipeline's time, not of the step's."""
    optimizer = 0.0 if t_optimizer_s is None else t_optimizer_s
    t_pipe = np.maximum(np.asarray(step_time_s, dtype=np.float64) - t_dp_s - optimizer, 0.0)
    out: Array = np.asarray(bubble_fraction, dtype=np.float64) * t_pipe
    return out


def pipeline_floor_s(
    stages: StageLayers,
    t_layer_s: Array,
    microbatches: Array,
    interleave: Array,
    zero_bubble: NDArray[np.bool_] | None,
    t_optimizer_s: Array | None,
) -> Array:
    """A lower bound on each row's `pipeline_step_s` on any network: the step with every
    network time at 0 and t_last = 0 (module docstring: the step never decreases in any
    of them)."""
    zero = np.zeros_like(t_layer_s)
    step = pipeline_step_s(
        stages, t_layer_s, zero, microbatches, interleave, zero_bubble, zero, zero, t_optimizer_s
    )
    return step.t_step_s


def step_bottleneck(
    t_compute_s: float, t_tp_s: float, t_pp_ep_s: float, t_dp_s: float, t_bubble_s: float
) -> Bottleneck:
    """The largest part of a step: compute, a communication, or the bubble (fill and drain);
    latencies are inside the communication terms."""
    parts = {
        Bottleneck.COMPUTE: t_compute_s,
        Bottleneck.TP_COMM: t_tp_s,
        Bottleneck.PP_EP_COMM: t_pp_ep_s,
        Bottleneck.DP_COMM: t_dp_s,
        Bottleneck.BUBBLE: t_bubble_s,
    }
    return max(parts, key=lambda k: parts[k])
