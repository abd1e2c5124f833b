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

from pipeline.model.caches import cached
from pipeline.model.compute.matmul import WORD_BYTES

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Network:
    """Per-level bidirectional per-GPU bandwidth (B/s, may be inf) and hop latency (s)."""

    bandwidth_bytes_per_s: tuple[float, ...]
    latency_s: tuple[float, ...]


def allreduce_bytes(p: Array, words: float, rs: float, rp: Array) -> Array:
    """Bytes the cluster moves in one level's all-reduces: (((2(p−1))·words)·rs)·rp·w (spec §6.1)."""
    return ((((2.0 * (p - 1.0)) * words) * rs) * rp) * WORD_BYTES


def p2p_bytes(words: float, rs: Array, rp: float) -> Array:
    """Bytes the cluster moves point to point: ((words·rs)·rp)·w (spec §6.1)."""
    return ((words * rs) * rp) * WORD_BYTES


def aggregate_rate_bytes_per_s(n_gpu: float, bandwidth: float) -> float:
    """(N_GPU·BW)/2: a level's aggregate unidirectional rate over the whole cluster (spec §6.1)."""
    return (n_gpu * bandwidth) / 2.0


def higher_level_products(factors: Array) -> Array:
    """∏_{k>ℓ} factor_k for every level ℓ: the parallel repeats from outer levels (spec §6.1)."""
    k = factors.shape[1]
    out = np.ones_like(factors)
    for level in range(k - 2, -1, -1):
        out[:, level] = out[:, level + 1] * factors[:, level + 1]
    return out


@cached(maxsize=4096)
def level_rates_bytes_per_s(n_gpu: float, net: Network) -> Array:
    """(K, 1) aggregate rate of every level (`aggregate_rate_bytes_per_s`), to divide (K, n)
    bytes. Cached per cluster size and network: read only."""
    rates = [aggregate_rate_bytes_per_s(n_gpu, bw) for bw in net.bandwidth_bytes_per_s]
    out = np.array(rates, dtype=np.float64)[:, None]
    out.setflags(write=False)
    return out


@cached(maxsize=4096)
def level_hop_latency_s(hops_per_level: float, net: Network) -> Array:
    """(K, 1) latency of `hops_per_level` dependent hops at every level: hops·λ_ℓ. Read only."""
    out = np.array([hops_per_level * lat for lat in net.latency_s], dtype=np.float64)[:, None]
    out.setflags(write=False)
    return out


def slowest_level_s(per_level_s: Array) -> Array:
    """max(0, max_ℓ t_ℓ) of (K, n) per-level times: levels run concurrently (spec §6)."""
    out: Array = np.maximum(np.zeros(per_level_s.shape[1]), per_level_s.max(axis=0))
    return out


def summed_in_order_s(terms_s: Array) -> Array:
    """((t_0 + t_1) + …) over axis 0 of (T, n) terms, strictly in order (latencies add, spec §6)."""
    if terms_s.shape[0] == 0:
        return np.zeros(terms_s.shape[1])
    out: Array = np.add.accumulate(terms_s, axis=0)[-1]
    return out


@dataclass(frozen=True, slots=True)
class DpTraffic:
    """What DP moves per level, independent of the network's rates (spec §6.2)."""

    bytes_: Array
    """(K, n) all-reduce bytes at each level."""
    active: Array
    """(K, n) 1.0 where N_DP,ℓ > 1: the level costs two hops of latency."""


def dp_traffic(dp: Array, n_params: float) -> DpTraffic:
    """AR bytes(N_DP,ℓ, words=N, rs=1, rp=∏_{k>ℓ} N_DP,k) per level (spec §6.2)."""
    rp = higher_level_products(dp)
    return DpTraffic(allreduce_bytes(dp.T, n_params, 1.0, rp.T), (dp.T > 1.0).astype(np.float64))


def dp_costs_s(traffic: DpTraffic, n_gpu: float, net: Network) -> tuple[Array, Array]:
    """(T_DP^bw, T_DP^lat) = (max_ℓ bytes_ℓ / rate_ℓ, Σ_ℓ 2·λ_ℓ·[N_DP,ℓ > 1]) (spec §6.2)."""
    bw = slowest_level_s(traffic.bytes_ / level_rates_bytes_per_s(n_gpu, net))
    return bw, summed_in_order_s(level_hop_latency_s(2.0, net) * traffic.active)


@dataclass(frozen=True, slots=True)
class TpTraffic:
    """What TP moves per level, independent of the network's rates (spec §6.2)."""

    bytes_model: Array
    """(K, n) all-reduce bytes of the N_TPm groups (d_ff words per token)."""
    bytes_ff: Array
    """(K, n) all-reduce bytes of the N_TPff groups (d_model words per token)."""
    hops: Array
    """(K, n) [N_TPm,ℓ > 1] + [N_TPff,ℓ > 1]."""


def tp_traffic(
    tp_model: Array,
    tp_ff: Array,
    d_model: float,
    d_ff: float,
    n_layers: float,
    batch_tokens: float,
) -> TpTraffic:
    """AR bytes(N_TPm,ℓ, d_ff) and AR bytes(N_TPff,ℓ, d_model), rs = 2L, rp = B_tok·∏ (spec §6.2)."""
    rs = 2.0 * n_layers
    rp_m = batch_tokens * higher_level_products(tp_model).T
    rp_ff = batch_tokens * higher_level_products(tp_ff).T
    hops = (tp_model.T > 1.0).astype(np.float64) + (tp_ff.T > 1.0)
    return TpTraffic(
        allreduce_bytes(tp_model.T, d_ff, rs, rp_m),
        allreduce_bytes(tp_ff.T, d_model, rs, rp_ff),
        hops,
    )


def tp_costs_s(
    traffic: TpTraffic, n_layers: float, n_gpu: float, net: Network
) -> tuple[Array, Array]:
    """(T_TP^bw, T_TP^lat) = (max_ℓ [AR_m,ℓ + AR_ff,ℓ] / rate_ℓ, Σ_ℓ 4·L·λ_ℓ·hops_ℓ) (spec §6.2)."""
    rate = level_rates_bytes_per_s(n_gpu, net)
    bw = slowest_level_s(traffic.bytes_model / rate + traffic.bytes_ff / rate)
    return bw, summed_in_order_s(level_hop_latency_s(4.0 * n_layers, net) * traffic.hops)


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


@dataclass(frozen=True, slots=True)
class PpEpTraffic:
    """What PP/EP moves, one term per (pipeline level a, expert level e) with x = max(a, e) ≥ 0,
    in the order a (outer), e (inner), independent of the network's rates (spec §6.2)."""

    level: tuple[int, ...]
    """(T,) the level x each term crosses."""
    bytes_: Array
    """(T, n) point-to-point bytes, 0 where the term does not apply."""
    hops: Array
    """(T, n) dependent hops charged at level x (worst-case expert hop), 0 where it does not apply."""
    applies: NDArray[np.bool_]
    """(T, n) a ≤ highest PP level and e ≤ highest EP level."""


def pp_ep_traffic(
    pp: Array, ep: Array, interleave: Array, d_model: float, n_layers: float, batch_tokens: float
) -> PpEpTraffic:
    """Point-to-point d_model words per token at layer interfaces, per (a, e) term (spec §6.2).

    Transfers at level max(a, e): bandwidth weights by f_pp·f_ep, latency charges the
    worst-case expert hop (g_ep = 1 at the highest EP level), forward and backward: 2·(L−1).
    """
    n, k = pp.shape
    interfaces = n_layers - 1.0
    levels: list[int] = []
    bytes_: list[Array] = []
    hops: list[Array] = []
    applies: list[NDArray[np.bool_]] = []
    if interfaces > 0.0:
        top_pp = highest_active_level(pp)
        top_ep = highest_active_level(ep)
        repeats = 2.0 * interfaces
        transfers = pipeline_transfers(pp, interleave, n_layers)
        f_eps = expert_fractions(ep)
        for a in range(-1, k):
            f_pp = transfers[a + 1] / interfaces
            for e in range(-1, k):
                if max(a, e) < 0:
                    continue
                on = (a <= top_pp) & (e <= top_ep)
                g_ep = (top_ep == e).astype(np.float64)
                levels.append(max(a, e))
                bytes_.append(p2p_bytes(d_model, repeats * (f_pp * f_eps[e + 1]), batch_tokens))
                hops.append(repeats * (f_pp * g_ep))
                applies.append(on)
    empty = np.zeros((0, n))
    return PpEpTraffic(
        tuple(levels),
        np.array(bytes_) if bytes_ else empty,
        np.array(hops) if hops else empty,
        np.array(applies) if applies else empty.astype(bool),
    )


def pp_ep_costs_from_traffic_s(
    traffic: PpEpTraffic, n_gpu: float, net: Network
) -> tuple[Array, Array]:
    """(T_PPEP^bw, T_PPEP^lat): every applying term's bytes over its level's rate, and its hops
    times its level's latency, each summed in term order (spec §6.2)."""
    x = list(traffic.level)
    rates = level_rates_bytes_per_s(n_gpu, net)[x]
    latency = level_hop_latency_s(1.0, net)[x]
    bw = np.where(traffic.applies, traffic.bytes_ / rates, 0.0)
    lat = np.where(traffic.applies, traffic.hops * latency, 0.0)
    return summed_in_order_s(bw), summed_in_order_s(lat)


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
    level max(a, e) (`pp_ep_traffic`, `pp_ep_costs_from_traffic_s`).
    """
    traffic = pp_ep_traffic(pp, ep, interleave, d_model, n_layers, batch_tokens)
    return pp_ep_costs_from_traffic_s(traffic, n_gpu, net)
