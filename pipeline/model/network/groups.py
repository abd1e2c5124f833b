"""A layout's collectives as NCCL runs them, one group at the network level its ranks span,
vectorized over layouts: what a concrete run and a realistic grid candidate both charge for
tensor, expert, pipeline and data parallelism (docs/model.md R.5, R.7).

Ranks fill the network levels in Megatron-Core's order: tensor ranks innermost (of the grid's
2-D tensor parallelism the N_TPff ranks first, then the N_TPm ranks), then context, expert and
data ranks, then pipeline ranks. A group of g ranks at stride r spans g·r GPUs, and its level
is the first whose cumulative size holds them (`levels.group_level`). Every time below is one
GPU's, per layer and microbatch (tensor and expert parallelism), per microbatch (pipeline
sends) or per step (gradients), built from `ring.ring_allreduce_s` and `ring.all_to_all_s`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.memory_ops import WORD_BYTES
from pipeline.model.network.levels import group_level
from pipeline.model.network.ring import (
    all_to_all_s,
    ring_allreduce_s,
    ring_exchange_s,
    ring_exposed_s,
)
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.switches import RECOMPUTE_ORDER, Physics, Recompute

Array = NDArray[np.float64]
FULL = RECOMPUTE_ORDER.index(Recompute.FULL)


@dataclass(frozen=True, slots=True)
class Levels:
    """The preset's per-level bandwidths (B/s, bidirectional per GPU, at the achieved fraction
    of the physics) and hop latencies (s), and the level sizes."""

    bandwidth: Array
    latency: Array
    sizes: tuple[int, ...]
    striped: bool = False
    """A ring crossing level 0 stripes over its ranks' NICs (`physics.nic_striping` with the
    preset's `nics_per_node`, `striped_bandwidth`)."""

    @classmethod
    def of(cls, hw: HardwareSpec, physics: Physics) -> Levels:
        """The preset's levels with bandwidths at `physics.efficiency.network`."""
        bw = np.array(hw.net_bandwidth_bytes_per_s, dtype=np.float64) * physics.efficiency.network
        return cls(bw, np.array(hw.net_latency_s, dtype=np.float64), hw.level_sizes).striping(
            hw, physics.nic_striping
        )

    @classmethod
    def as_given(cls, hw: HardwareSpec, striped: bool = False) -> Levels:
        """The preset's levels with bandwidths as given (already at the achieved fraction),
        striped as `physics.nic_striping` says (`striped`)."""
        bw = np.array(hw.net_bandwidth_bytes_per_s, dtype=np.float64)
        levels = cls(bw, np.array(hw.net_latency_s, dtype=np.float64), hw.level_sizes)
        return levels.striping(hw, striped)

    def striping(self, hw: HardwareSpec, on: bool) -> Levels:
        """These levels, striped when `on` and the preset gives its NICs per node."""
        striped = on and bool(hw.nics_per_node) and bool(self.sizes)
        return Levels(self.bandwidth, self.latency, self.sizes, striped)

    def at(self, span: Array, ring: Array | None = None) -> tuple[Array, Array]:
        """(bandwidth, latency) of the level a group of `span` GPUs reaches (`group_level`);
        for a ring of `ring` ranks on striped levels, its crossing edge's (`striped_bandwidth`)."""
        level = group_level(self.sizes, span)
        bw, lat = self.bandwidth[level], self.latency[level]
        if self.striped and ring is not None:
            bw = striped_bandwidth(bw, self.bandwidth[0], self.sizes[0], ring, span)
        return bw, lat


def striped_bandwidth(
    level_bw: Array, node_bw: float, node_gpus: int, ring: Array, span: Array
) -> Array:
    """Bandwidth per GPU of a collective ring's crossing edge, bidirectional, when NCCL stripes
    it over the NICs of the ring's ranks in each node: k · BW_L, at most the node's own links'
    BW_0, never below BW_L, for k the fewest ranks the ring has in any n-GPU node it crosses.

    NCCL builds a ring per NIC ("channel") and splits a collective's bytes over them through
    NVLink, so a ring's crossing edge runs on the NICs of its ranks in the node; every GPU of
    the node lies in such a ring at the same time (each group of a group set runs the same
    collective), so the node's NICs, n · BW_L per direction whatever their number (the
    preset's BW_L is one GPU's share, `nics_per_node` · NIC rate / n), are shared in proportion
    to ranks: a ring holding k ranks of a node gets k · BW_L there, and its slowest node sets
    its rate. A ring of g ranks at stride r = span/g lies in aligned blocks of `span` ranks;
    node and block boundaries cut a block into pieces of at least gcd(span, n) ranks, in
    which a ring holds ⌊gcd(span, n)/r⌋ ranks or, when r exceeds the piece, one:
    k = max(1, ⌊gcd(span, n)/r⌋). When n divides span and r divides n that is n/r in every
    node; a span of 12 at stride 4 on 8-GPU nodes holds 2 ranks of each ring in one node
    and 1 in the next, so k = 1. At level 0 (span dividing n) the edge keeps BW_0.
    NCCL's rings per NIC: NCCL User Guide, "Environment Variables", NCCL_CROSS_NIC (rings and
    trees keep to the same NIC, one network rail, on every node); each GPU uses its local NIC
    as much as possible (NVIDIA, "Doubling all2all Performance with NVIDIA Collective
    Communication Library 2.12", 2022). Point-to-point sends (pipeline sends, ring
    attention's K/V exchange, all-to-alls) are one GPU's to one GPU: not striped."""
    whole = np.rint(span).astype(np.int64)
    piece = np.gcd(whole, np.int64(node_gpus)).astype(np.float64)
    ranks_in_node = np.maximum(1.0, np.floor(piece * ring / span))
    striped: Array = np.maximum(level_bw, np.minimum(node_bw, ranks_in_node * level_bw))
    return striped


def collectives_per_layer(modes: NDArray[np.int64]) -> Array:
    """Tensor- (and expert-) parallel collectives of one layer and microbatch on the critical
    path, per group: 2 forward, 2 backward, and the forward's 2 again under full recomputation
    (each row's mode an index into `RECOMPUTE_ORDER`; Korthikanti et al. 2022 §5)."""
    out: Array = 4.0 + np.where(modes == FULL, 2.0, 0.0)
    return out


@dataclass(frozen=True, slots=True)
class TensorGroups:
    """One layer's tensor-parallel layout per row: N_TPm ranks splitting d_model and N_TPff
    ranks splitting d_ff (1-D Megatron: N_TPm = 1, N_TPff = t), the tokens of a microbatch on
    a GPU and the widths the collectives carry."""

    tp_model: Array
    tp_ff: Array
    tokens: Array
    hidden: float
    ffn: float
    """f of the MLP (one expert's)."""
    qkv: float
    """Output width of the QKV projection, h + 2·kv."""


def tensor_parallel_s(
    levels: Levels, g: TensorGroups, modes: NDArray[np.int64], attention: bool
) -> Array:
    """Tensor-parallel collectives of one layer and microbatch on one GPU, in s.

    The N_TPff group (contiguous ranks) all-reduces the partial sums of d_model/N_TPm wide
    outputs: after the attention output projection and the MLP's down projection forward, of
    the QKV and up projections' input gradients backward, `collectives_per_layer` of them,
    w · tokens · h/N_TPm bytes each (Megatron-LM's four per layer under 1-D, Shoeybi et al.
    2019 §3; with sequence parallelism an all-gather and a reduce-scatter move the same bytes,
    Korthikanti et al. 2022 §4.2.2). The N_TPm group (stride N_TPff) all-reduces the partial
    sums of the d_ff- (and head-) side outputs: forward the QKV projection's (h + 2kv)/N_TPff
    and the up projection's f/N_TPff, backward the input gradients of the output projection
    (h/N_TPff) and the down projection (f/N_TPff), the forward ones again under full
    recomputation. Without `attention` a layer is its MLP: half the N_TPff collectives and only
    the MLP's N_TPm ones. 0 for a group of one.
    """
    full = (modes == FULL).astype(np.float64)
    bw, lat = levels.at(g.tp_ff, g.tp_ff)
    per_ff = collectives_per_layer(modes) if attention else 0.5 * collectives_per_layer(modes)
    t_ff: Array = per_ff * ring_allreduce_s(
        g.tp_ff, WORD_BYTES * g.tokens * g.hidden / g.tp_model, bw, lat
    )
    if not np.any(g.tp_model > 1):
        return t_ff
    bw, lat = levels.at(g.tp_model * g.tp_ff, g.tp_model)

    def allreduce(width: float) -> Array:
        out: Array = ring_allreduce_s(g.tp_model, WORD_BYTES * g.tokens * width / g.tp_ff, bw, lat)
        return out

    mlp: Array = (2.0 + full) * allreduce(g.ffn)
    if not attention:
        return t_ff + mlp
    block = (1.0 + full) * allreduce(g.qkv) + allreduce(g.hidden)
    out: Array = t_ff + (mlp + block)
    return out


def expert_all_to_all_s(
    levels: Levels,
    modes: NDArray[np.int64],
    ep: Array,
    span: Array,
    dispatch_bytes: Array,
) -> Array:
    """Expert parallelism's all-to-alls of one layer and microbatch on one GPU, in s:
    `collectives_per_layer` (dispatch and combine, forward and backward) of `dispatch_bytes`
    per GPU over the e ranks, at the level of their `span` (Rajbhandari et al. 2022 §5.1;
    `ring.all_to_all_s`)."""
    bw, lat = levels.at(span)
    out: Array = collectives_per_layer(modes) * all_to_all_s(ep, dispatch_bytes, bw, lat)
    return out


def pipeline_send_s(
    levels: Levels,
    message_bytes: Array,
    tp: Array,
    n_gpu: Array,
    pp: Array,
    interleave: Array,
    overlapped: NDArray[np.bool_],
) -> Array:
    """Exposed pipeline sends of one microbatch on one GPU, in s: 1/t of the microbatch's hidden
    activations per rank (scatter/gather) per chunk boundary, forward and backward, 2·v sends
    at BW/2 plus a hop each, at the level of the whole layout (neighbouring stages sit t·c·d
    ranks apart; Narayanan et al. 2021 §4.1); 0 without pipeline parallelism or when the sends
    overlap compute (asynchronous sends, Llama Team 2024 §3.3.2)."""
    bw, lat = levels.at(n_gpu)
    one = message_bytes / tp / (bw / 2.0) + lat
    out: Array = np.where((pp > 1) & ~overlapped, 2.0 * interleave * one, 0.0)
    return out


@dataclass(frozen=True, slots=True)
class GradientGroups:
    """Who reduces which gradients, per row: the ranks holding the same dense (replicated)
    weights and the ranks holding the same expert shard, each with the GPUs its ranks span."""

    dense: Array
    dense_span: Array
    expert: Array
    expert_span: Array


def gradient_allreduce_s(
    levels: Levels, groups: GradientGroups, dense_params: Array, expert_params: Array | None
) -> Array:
    """The gradient all-reduce of one step on one GPU, in s: w bytes per parameter the GPU
    holds, over the ranks holding the same weights (ZeRO's reduce-scatter plus all-gather
    moves the same bytes, Rajbhandari et al. 2020); a mixture of experts reduces its expert
    gradients apart, over the replicas of each expert shard (DeepSpeed-MoE's expert-data-
    parallel group, Rajbhandari et al. 2022 §4). `expert_params` None: a dense model."""
    bw, lat = levels.at(groups.dense_span, groups.dense)
    dense: Array = ring_allreduce_s(groups.dense, WORD_BYTES * dense_params, bw, lat)
    if expert_params is None:
        return dense
    bw, lat = levels.at(groups.expert_span, groups.expert)
    out: Array = dense + ring_allreduce_s(groups.expert, WORD_BYTES * expert_params, bw, lat)
    return out


def ring_attention_exposed_s(
    levels: Levels,
    tokens: Array,
    kv_width: Array | float,
    tp: Array,
    cp: Array,
    attention_forward_s: Array,
    attention_backward_s: Array,
    modes: NDArray[np.int64],
    all_gather: NDArray[np.bool_] | bool,
) -> Array:
    """What context parallelism's K/V ring adds to one layer and microbatch on one GPU, in s:
    the exchange (`ring.ring_exchange_s`) at the level of the t·c GPUs its ranks span, past the
    attention core kernels it overlaps with (`ring.ring_exposed_s`; pass zeros for an exchange
    that overlaps nothing), the forward's again when the core is recomputed (selective, full).
    Ring attention passes K and V by point-to-point sends between neighbouring ranks, one
    GPU's to one GPU (Megatron-Core's `--cp-comm-type p2p`), which NCCL does not stripe over
    other GPUs' NICs; where `all_gather` (Transformer Engine's `cp_comm_type="all_gather"`)
    they are an NCCL all-gather (and reduce-scatter) ring, striped on striped levels
    (`striped_bandwidth`)."""
    ring = ring_attention_exchange_s(levels, tokens, kv_width, tp, cp, all_gather)
    reruns = (modes >= 1).astype(np.float64)
    return ring_exposed_s(ring, attention_forward_s, attention_backward_s, reruns)


def ring_attention_exchange_s(
    levels: Levels,
    tokens: Array,
    kv_width: Array | float,
    tp: Array,
    cp: Array,
    all_gather: NDArray[np.bool_] | bool,
) -> Array:
    """Context parallelism's forward K/V exchange of one layer and microbatch on one GPU, in s
    (`ring.ring_exchange_s`), at the level of the t·c GPUs its ranks span: point-to-point
    sends, or with `all_gather` an NCCL ring striped on striped levels
    (`ring_attention_exposed_s`, which adds what of it outlasts the attention core)."""
    span = tp * cp
    bw, lat = levels.at(span)
    if np.any(all_gather):
        bw = np.where(all_gather, levels.at(span, cp)[0], bw)
    return ring_exchange_s(tokens, kv_width, tp, cp, bw, lat)
