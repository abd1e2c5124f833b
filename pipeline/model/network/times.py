"""A layout's TP, PP/EP and DP network times from its per-level factors (spec §6.2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.network.collectives import (
    Network,
    TpTraffic,
    dp_costs_s,
    dp_traffic,
    pp_ep_costs_s,
    tp_costs_s,
    tp_traffic,
)
from pipeline.model.records.scaling import ModelShape

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class CommTimes:
    """Per-row network times (s) before recomputation: each depends only on its own degrees'
    per-level factors (TP: N_TPm and N_TPff; PP/EP: N_PP, N_EP and v; DP: N_DP) (spec §6.2)."""

    t_tp_bw_s: Array
    t_tp_lat_s: Array
    t_pp_ep_bw_s: Array
    t_pp_ep_lat_s: Array
    t_dp_bw_s: Array
    t_dp_lat_s: Array


def layer_tp_traffic(shape: ModelShape, tp_model: Array, tp_ff: Array) -> TpTraffic:
    """What a layer's tensor parallelism moves in the paper's model: the MLP's all-reduces
    (spec §6.2). Realistic physics charges each group's collectives on its own level instead
    (`network.groups.tensor_parallel_s`, docs/model.md R.5)."""
    layers = float(shape.n_layers)
    b_tok = float(shape.batch_tokens)
    return tp_traffic(tp_model, tp_ff, shape.d_model, shape.d_ff, layers, b_tok)


def tp_times_s(
    shape: ModelShape, n_gpu: int, tp_model: Array, tp_ff: Array, net: Network
) -> tuple[Array, Array]:
    """(T_TP^bw, T_TP^lat) of per-level TP factors (spec §6.2)."""
    traffic = layer_tp_traffic(shape, tp_model, tp_ff)
    return tp_costs_s(traffic, float(shape.n_layers), float(n_gpu), net)


def pp_ep_times_s(
    shape: ModelShape, n_gpu: int, pp: Array, ep: Array, interleave: Array, net: Network
) -> tuple[Array, Array]:
    """(T_PPEP^bw, T_PPEP^lat) of per-level PP and EP factors and the interleave v (spec §6.2)."""
    layers = float(shape.n_layers)
    b_tok = float(shape.batch_tokens)
    return pp_ep_costs_s(pp, ep, interleave, shape.d_model, layers, b_tok, float(n_gpu), net)


def dp_times_s(shape: ModelShape, n_gpu: int, dp: Array, net: Network) -> tuple[Array, Array]:
    """(T_DP^bw, T_DP^lat) of per-level DP factors (spec §6.2)."""
    return dp_costs_s(dp_traffic(dp, shape.held_params), float(n_gpu), net)
