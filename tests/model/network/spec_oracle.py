"""The spec's collective formulas (spec §6.1-§6.2) written out directly, one level at a time:
a test oracle for `pipeline.model.network.collectives`, which computes the same times in two
parts (what a layout moves, then its time on one network) for the search's tables."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pipeline.model.network.collectives import Network

Array = NDArray[np.float64]
WORD_BYTES = 2.0


def allreduce_bandwidth_s(
    p: Array, words: float, rs: float, rp: Array, n_gpu: float, bandwidth: float
) -> Array:
    """((((2(p−1))·words)·rs)·rp)·w / ((N_GPU·BW)/2) (spec §6.1)."""
    out: Array = (
        ((((2.0 * (p - 1.0)) * words) * rs) * rp) * WORD_BYTES / ((n_gpu * bandwidth) / 2.0)
    )
    return out


def p2p_bandwidth_s(words: float, rs: Array, rp: float, n_gpu: float, bandwidth: float) -> Array:
    """((words·rs)·rp)·w / ((N_GPU·BW)/2) (spec §6.1)."""
    out: Array = ((words * rs) * rp) * WORD_BYTES / ((n_gpu * bandwidth) / 2.0)
    return out


def outer_products(factors: Array, level: int) -> Array:
    """∏_{k>ℓ} factor_k of each row (spec §6.1)."""
    out: Array = np.prod(factors[:, level + 1 :], axis=1)
    return out


def dp_bandwidth_s(dp: Array, n_params: float, n_gpu: float, net: Network) -> Array:
    """T_DP^bw = max_ℓ AR(N_DP,ℓ, words = N, rs = 1, rp = ∏_{k>ℓ} N_DP,k) (spec §6.2)."""
    per_level = [
        allreduce_bandwidth_s(dp[:, lv], n_params, 1.0, outer_products(dp, lv), n_gpu, bw)
        for lv, bw in enumerate(net.bandwidth_bytes_per_s)
    ]
    out: Array = np.max(per_level, axis=0)
    return out


def dp_latency_s(dp: Array, net: Network) -> Array:
    """T_DP^lat = Σ_ℓ 2·λ_ℓ·[N_DP,ℓ > 1] (spec §6.2)."""
    out: Array = sum(
        (2.0 * lat * (dp[:, lv] > 1.0) for lv, lat in enumerate(net.latency_s)),
        np.zeros(dp.shape[0]),
    )
    return out


def tp_bandwidth_s(
    tp_model: Array,
    tp_ff: Array,
    d_model: float,
    d_ff: float,
    n_layers: float,
    batch_tokens: float,
    n_gpu: float,
    net: Network,
) -> Array:
    """T_TP^bw = max_ℓ [AR(N_TPm,ℓ, d_ff) + AR(N_TPff,ℓ, d_model)], rs = 2L,
    rp = B_tok·∏_{k>ℓ} (spec §6.2)."""
    rs = 2.0 * n_layers
    per_level = [
        allreduce_bandwidth_s(
            tp_model[:, lv], d_ff, rs, batch_tokens * outer_products(tp_model, lv), n_gpu, bw
        )
        + allreduce_bandwidth_s(
            tp_ff[:, lv], d_model, rs, batch_tokens * outer_products(tp_ff, lv), n_gpu, bw
        )
        for lv, bw in enumerate(net.bandwidth_bytes_per_s)
    ]
    out: Array = np.max(per_level, axis=0)
    return out


def tp_latency_s(tp_model: Array, tp_ff: Array, n_layers: float, net: Network) -> Array:
    """T_TP^lat = Σ_ℓ 4·L·λ_ℓ·([N_TPm,ℓ > 1] + [N_TPff,ℓ > 1]) (spec §6.2)."""
    out: Array = sum(
        (
            4.0 * n_layers * lat * ((tp_model[:, lv] > 1.0) * 1.0 + (tp_ff[:, lv] > 1.0))
            for lv, lat in enumerate(net.latency_s)
        ),
        np.zeros(tp_model.shape[0]),
    )
    return out
