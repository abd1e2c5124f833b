"""Communication costs over a hierarchy of network levels (spec §6).

Every collective is charged against aggregate bandwidth: the bytes the whole cluster
moves at a level over N_GPU times the level's unidirectional per-GPU rate (BW/2).
Latency does not depend on group size. Across levels, bandwidth times take the
maximum (levels run concurrently) and latency times add.

Factor arrays have shape (n, K): n layouts, K levels (0 innermost), entries ≥ 1.
Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137; spec §6, order spec §15.8.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.matmul import WORD_BYTES

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Network:
    """Per-level bidirectional per-GPU bandwidth (B/s, may be inf) and hop latency (s)."""

    bandwidth_bytes_per_s: tuple[float, ...]
    latency_s: tuple[float, ...]


def allreduce_bandwidth_s(
    p: Array, words: float, rs: float, rp: Array, n_gpu: float, bandwidth: float
) -> Array:
    """All-reduce bandwidth time ((((2(p−1))·words)·rs)·rp)·w / ((N_GPU·BW)/2) (spec §6.1)."""
    return ((((2.0 * (p - 1.0)) * words) * rs) * rp) * WORD_BYTES / ((n_gpu * bandwidth) / 2.0)


def p2p_bandwidth_s(words: float, rs: Array, rp: float, n_gpu: float, bandwidth: float) -> Array:
    """Point-to-point bandwidth time ((words·rs)·rp)·w / ((N_GPU·BW)/2) (spec §6.1)."""
    return (((words * rs) * rp) * WORD_BYTES) / ((n_gpu * bandwidth) / 2.0)


def higher_level_products(factors: Array) -> Array:
    """∏_{k>ℓ} factor_k for every level ℓ: the parallel repeats from outer levels (spec §6.1)."""
    k = factors.shape[1]
    out = np.ones_like(factors)
    for level in range(k - 2, -1, -1):
        out[:, level] = out[:, level + 1] * factors[:, level + 1]
    return out


def dp_bandwidth_s(dp: Array, n_params: float, n_gpu: float, net: Network) -> Array:
    """T_DP^bw = max_ℓ AR_bw(N_DP,ℓ, words=N, rs=1, rp=∏_{k>ℓ} N_DP,k) (spec §6.2)."""
    rp = higher_level_products(dp)
    out = np.zeros(dp.shape[0])
    for level, bw in enumerate(net.bandwidth_bytes_per_s):
        t = allreduce_bandwidth_s(dp[:, level], n_params, 1.0, rp[:, level], n_gpu, bw)
        out = np.maximum(out, t)
    return out


def dp_latency_s(dp: Array, net: Network) -> Array:
    """T_DP^lat = Σ_ℓ 2·λ_ℓ·[N_DP,ℓ > 1] (spec §6.2)."""
    out = np.zeros(dp.shape[0])
    for level, lat in enumerate(net.latency_s):
        out = out + (2.0 * lat) * (dp[:, level] > 1.0)
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
    """T_TP^bw = max_ℓ [AR_bw(N_TPm,ℓ, d_ff) + AR_bw(N_TPff,ℓ, d_model)], rs = 2L, rp = B_tok·∏ (spec §6.2)."""
    rp_m = higher_level_products(tp_model)
    rp_ff = higher_level_products(tp_ff)
    rs = 2.0 * n_layers
    out = np.zeros(tp_model.shape[0])
    for level, bw in enumerate(net.bandwidth_bytes_per_s):
        t_m = allreduce_bandwidth_s(
            tp_model[:, level], d_ff, rs, batch_tokens * rp_m[:, level], n_gpu, bw
        )
        t_ff = allreduce_bandwidth_s(
            tp_ff[:, level], d_model, rs, batch_tokens * rp_ff[:, level], n_gpu, bw
        )
        out = np.maximum(out, t_m + t_ff)
    return out


def tp_latency_s(tp_model: Array, tp_ff: Array, n_layers: float, net: Network) -> Array:
    """T_TP^lat = Σ_ℓ 4·L·λ_ℓ·([N_TPm,ℓ > 1] + [N_TPff,ℓ > 1]) (spec §6.2)."""
    out = np.zeros(tp_model.shape[0])
    for level, lat in enumerate(net.latency_s):
        hops = (tp_model[:, level] > 1.0).astype(np.float64) + (tp_ff[:, level] > 1.0)
        out = out + ((4.0 * n_layers) * lat) * hops
    return out


def highest_active_level(factors: Array) -> NDArray[np.int64]:
    """Highest level with a factor > 1, or −1 when the degree is 1 everywhere."""
    active = factors > 1.0
    k = factors.shape[1]
    last = k - 1 - np.argmax(active[:, ::-1], axis=1)
    return np.where(active.any(axis=1), last, -1).astype(np.int64)


def pipeline_transfers(pp: Array, interleave: Array, n_layers: float) -> list[Array]:
    """n_a for a = −1 … K−1: forward layer interfaces whose highest changed pipeline digit is at a (spec §6.2).

    a = −1: L − v·N_PP; a = P (the highest active level): v·N_PP,P − 1;
    otherwise v·(∏_{k>a} N_PP,k)·(N_PP,a − 1). Stages are round-robin over v·N_PP.
    """
    above = higher_level_products(pp)
    top = highest_active_level(pp)
    out = [n_layers - interleave * (above[:, 0] * pp[:, 0])]
    for level in range(pp.shape[1]):
        inner = interleave * above[:, level] * (pp[:, level] - 1.0)
        out.append(np.where(top == level, interleave * pp[:, level] - 1.0, inner))
    return out


def expert_fractions(ep: Array) -> list[Array]:
    """f_ep for e = −1 … K−1: share of tokens whose expert hop crosses exactly level e (spec §6.2)."""
    above = higher_level_products(ep)
    out = [1.0 / (above[:, 0] * ep[:, 0])]
    for level in range(ep.shape[1]):
        out.append(1.0 / above[:, level] - 1.0 / (above[:, level] * ep[:, level]))
    return out


def pp_ep_costs_s(
    pp: Array,
    ep: Array,
    interleave: Array,
    d_model: float,
    n_layers: float,
    batch_tokens: float,
    n_gpu: float,
    net: Network,
) -> tuple[Array, Array]:
    """(T_PPEP^bw, T_PPEP^lat): point-to-point d_model words per token at layer interfaces (spec §6.2).

    Sums over pipeline level a (outer) and expert level e (inner) of transfers at
    level max(a, e); bandwidth weights by f_pp·f_ep, latency charges the worst-case
    expert hop (g_ep = 1 at the highest EP level), forward and backward: 2·(L−1).
    """
    n = pp.shape[0]
    k = pp.shape[1]
    top_pp = highest_active_level(pp)
    top_ep = highest_active_level(ep)
    interfaces = n_layers - 1.0
    repeats = 2.0 * interfaces
    bw = np.zeros(n)
    lat = np.zeros(n)
    if interfaces <= 0.0:
        return bw, lat
    transfers = pipeline_transfers(pp, interleave, n_layers)
    f_eps = expert_fractions(ep)
    for a in range(-1, k):
        f_pp = transfers[a + 1] / interfaces
        for e in range(-1, k):
            x = max(a, e)
            if x < 0:
                continue
            on = (a <= top_pp) & (e <= top_ep)
            f_ep = f_eps[e + 1]
            g_ep = (top_ep == e).astype(np.float64)
            t_bw = p2p_bandwidth_s(
                d_model,
                repeats * (f_pp * f_ep),
                batch_tokens,
                n_gpu,
                net.bandwidth_bytes_per_s[x],
            )
            t_lat = (repeats * (f_pp * g_ep)) * net.latency_s[x]
            bw = np.where(on, bw + t_bw, bw)
            lat = np.where(on, lat + t_lat, lat)
    return bw, lat
