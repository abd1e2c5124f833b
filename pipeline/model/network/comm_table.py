"""Network times of a cluster's candidate layouts, tabulated per degree group and split (spec §6, spec §10).

A layout's TP, PP/EP and DP network times each depend only on that group's per-level factors
(and, for PP/EP, the interleave v): on the candidate's group totals and on the split's non-top
factors, the top factor being their quotient. Candidates share few distinct totals and splits
few distinct non-top factors, so each group's times are computed once per (totals, non-top
factors) pair, and every row (candidate, split) gathers its own: bit for bit what
`step.comm_times_s` gives the row's factors (the same elementwise arithmetic on the same
values), for a fraction of the work. A candidate's smallest entries bound its rows from below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import cached
from pipeline.model.network.collectives import (
    Network,
    dp_costs_s,
    dp_traffic,
    pp_ep_costs_from_traffic_s,
    pp_ep_traffic,
    tp_costs_s,
)
from pipeline.model.network.levels import split_table
from pipeline.model.network.times import CommTimes, layer_tp_traffic
from pipeline.model.records.scaling import ModelShape

Array = NDArray[np.float64]
Index = NDArray[np.intp]
Traffic = Callable[[Array, NDArray[np.int64]], Any]
"""(per-level factors (p, K, d), their keys (p, d + extras)) -> what the group moves (network-free)."""
Times = Callable[[Any], tuple[Array, Array]]
"""What the group moves -> (bandwidth time, latency time) on one network."""


@cached(maxsize=1024)
def split_options(adjusted: tuple[int, ...], lo: int, hi: int) -> tuple[NDArray[np.int64], Index]:
    """Distinct non-top factors (n_options, K - 1, hi - lo) of degrees lo:hi over the splits of
    `split_table(adjusted)`, and for every split the index of its own."""
    table = split_table(adjusted)[:, :, lo:hi]
    n, k, d = table.shape
    if k == 0:
        return np.zeros((1, 0, d), dtype=np.int64), np.zeros(n, dtype=np.intp)
    flat, which = unique_rows(table.reshape(n, k * d))
    options = flat.reshape(-1, k, d)
    options.setflags(write=False)
    which.setflags(write=False)
    return options, which


def unique_rows(a: NDArray[np.int64]) -> tuple[NDArray[np.int64], Index]:
    """Distinct rows of `a` (n, d) in lexicographic order, and each row's index among them:
    `np.unique(a, axis=0, return_inverse=True)` without its structured-dtype detour.

    Rows of small non-negative integers (every layout table's) are encoded as one int64 each,
    the first column most significant, so one sort of the codes gives the same order; each
    distinct row is read back from `a` at one of its places (no integer division: numpy's is
    slow), and the columns' maxima are taken over a transposed copy (a reduction down the
    columns of a C-ordered array is several times slower)."""
    if a.shape[0] and a.min() >= 0:
        spans = np.ascontiguousarray(a.T).max(axis=1).astype(np.float64) + 1.0
        if float(np.prod(spans)) < 2.0**62:
            weights = np.ones(a.shape[1], dtype=np.int64)
            for col in range(a.shape[1] - 2, -1, -1):
                weights[col] = weights[col + 1] * int(spans[col + 1])
            codes = a @ weights
            order = np.argsort(codes)
            ordered_codes = codes[order]
            first, inverse = _distinct(order, ordered_codes[1:] != ordered_codes[:-1])
            return a[first], inverse
    order = np.lexsort(a.T[::-1])
    ordered = a[order]
    first, inverse = _distinct(order, np.any(ordered[1:] != ordered[:-1], axis=1))
    return a[first], inverse


def _distinct(order: Index, differs: NDArray[np.bool_]) -> tuple[Index, Index]:
    """For rows sorted by `order` (ascending, equal rows together), `differs[i]` telling whether
    the (i + 1)-th sorted row differs from the i-th: the place in the input of the first of
    each distinct row, in sorted order, and each input row's index among the distinct ones
    (`np.unique`'s inverse)."""
    new = np.ones(order.shape[0], dtype=bool)
    new[1:] = differs
    inverse = np.empty(order.shape[0], dtype=np.intp)
    inverse[order] = np.cumsum(new, dtype=np.intp) - 1
    return order[new], inverse


@dataclass(frozen=True, slots=True)
class Pairs:
    """The (key, option) pairs whose option divides the key's totals, and their factors."""

    key: Index
    option: Index
    factors: Array
    """(n_pairs, K, d) per-level factors, the top level the quotient."""
    shape: tuple[int, int]
    """(n_keys, n_options)."""
    by_split: NDArray[np.bool_]
    """(n_keys, n_splits) whether each split's non-top factors divide each key's totals."""


@dataclass(frozen=True, slots=True)
class GroupKeys:
    """One degree group's distinct totals over a set of candidates (network-independent)."""

    distinct: NDArray[np.int64]
    """(n_keys, d + extras) distinct rows: the group's totals, then v for PP/EP."""
    key_of: Index
    """(n_candidates,) each candidate's row in `distinct`."""
    pairs: dict[tuple[tuple[int, ...], int, int], Pairs] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Valid pairs per (adjusted level sizes, degree slice), computed once (`valid_pairs`)."""
    traffic: dict[tuple[tuple[int, ...], int, int, ModelShape], Any] = field(
        default_factory=dict, compare=False, repr=False
    )
    """What each valid pair moves, per (adjusted level sizes, degree slice, model): every
    network of a sweep reads it, only the rates and latencies differ (`group_table`)."""
    parent: GroupKeys | None = field(default=None, compare=False, repr=False)
    """The keys of the set these candidates were taken from (`keys_within`), whose pairs,
    traffic and tables hold these keys' as rows; None for keys made from degrees."""
    used: NDArray[np.bool_] | None = field(default=None, compare=False, repr=False)
    """Which of the parent's distinct rows are these keys' `distinct`, in order."""

    def valid_pairs(self, adjusted: tuple[int, ...], lo: int, hi: int) -> Pairs:
        """Pairs of distinct keys and split options of degrees lo:hi whose per-degree
        products divide the key's totals (its first hi - lo columns); of keys taken from a
        parent, the parent's pairs of the rows they use (the same pairs in the same order)."""
        found = self.pairs.get((adjusted, lo, hi))
        if found is None and self.parent is not None and self.used is not None:
            found = _pairs_within(self.parent.valid_pairs(adjusted, lo, hi), self.used)
            self.pairs[(adjusted, lo, hi)] = found
        if found is None:
            n_degrees = hi - lo
            options, which = split_options(adjusted, lo, hi)
            products = options.prod(axis=1)
            totals = self.distinct[:, :n_degrees]
            divides = np.all(totals[:, None, :] % products[None, :, :] == 0, axis=2)
            key, option = np.nonzero(divides)
            top = totals[key] // products[option]
            factors = np.concatenate([options[option], top[:, None, :]], axis=1)
            by_split = divides[:, which]
            by_split.setflags(write=False)
            found = Pairs(key, option, factors.astype(np.float64), divides.shape, by_split)
            self.pairs[(adjusted, lo, hi)] = found
        return found


def _pairs_within(whole: Pairs, used: NDArray[np.bool_]) -> Pairs:
    """The pairs of `whole` whose key is a `used` row, keys renumbered among those rows: what
    `GroupKeys.valid_pairs` computes for the keys `distinct[used]` (each key's divisibility
    is its own row's, and `np.nonzero` keeps key-major order)."""
    keep = used[whole.key]
    renumbered = (np.cumsum(used) - 1).astype(np.intp)
    by_split = whole.by_split[used]
    by_split.setflags(write=False)
    return Pairs(
        renumbered[whole.key[keep]],
        whole.option[keep],
        whole.factors[keep],
        (int(used.sum()), whole.shape[1]),
        by_split,
    )


@dataclass(frozen=True, slots=True, eq=False)
class CandidateKeys:
    """TP (N_TPm, N_TPff), PP/EP (N_PP, N_EP, v) and DP (N_DP) totals of candidates.

    Compared and hashed by identity: `candidate_keys` returns one object per distinct set of
    candidates, so the network tables of one can be cached (`comm_table`).
    """

    tp: GroupKeys
    pp_ep: GroupKeys
    dp: GroupKeys


KEYS_CACHE_SIZE = 512
"""Distinct candidate sets whose keys a process keeps: GPUs that differ only in speed share
keys, so fewer are needed than the candidate sets the search keeps (`CANDIDATE_CACHE_BYTES`)."""
TABLE_CACHE_SIZE = 128
"""Network tables a process keeps: those of a series' cluster sizes, read again by the next
sweep point that differs from it only in the GPU (e.g. its HBM bandwidth)."""


def candidate_keys(degrees: NDArray[np.int64], interleave: Array) -> CandidateKeys:
    """Group keys of candidates with totals `degrees` (n, 5: DP, TPm, TPff, PP, EP) and v.

    One object per distinct (degrees, v): candidates of GPUs that differ only in speed (not
    in memory) share it, and with it their cached traffic and network tables.
    """
    v = interleave.astype(np.int64)  # exact: v = L / N_PP or 1
    table = np.ascontiguousarray(np.column_stack([degrees, v]), dtype=np.int64)
    return _keys_of(table.tobytes(), table.shape[0])


def keys_within(keys: CandidateKeys, rows: Index) -> CandidateKeys:
    """`candidate_keys` of candidates `rows` (ascending) of the set whose keys are `keys`,
    without sorting again: each group's distinct totals are the set's that `rows` use, in
    the same lexicographic order (`unique_rows`), and each candidate's index among them."""
    return CandidateKeys(*(_group_within(g, rows) for g in (keys.tp, keys.pp_ep, keys.dp)))


def _group_within(keys: GroupKeys, rows: Index) -> GroupKeys:
    """`keys` restricted to candidates `rows`: the distinct rows they use, in order, with
    the keys made from degrees they come from as their parent (`GroupKeys.parent`)."""
    key_of = keys.key_of[rows]
    used = np.zeros(keys.distinct.shape[0], dtype=bool)
    used[key_of] = True
    renumbered = (np.cumsum(used) - 1).astype(np.intp)
    root = keys if keys.parent is None else keys.parent
    of_root: NDArray[np.bool_] = used
    if keys.used is not None:  # rows of the root: the used rows among the rows `keys` uses
        of_root = np.zeros(keys.used.shape[0], dtype=bool)
        of_root[np.flatnonzero(keys.used)[used]] = True
    return GroupKeys(root.distinct[of_root], renumbered[key_of], parent=root, used=of_root)


@cached(maxsize=KEYS_CACHE_SIZE)
def _keys_of(table: bytes, n: int) -> CandidateKeys:
    rows = np.frombuffer(table, dtype=np.int64).reshape(n, 6)
    degrees, v = rows[:, :5], rows[:, 5]
    return CandidateKeys(
        GroupKeys(*unique_rows(degrees[:, 1:3])),
        GroupKeys(*unique_rows(np.column_stack([degrees[:, 3:5], v]))),
        GroupKeys(*unique_rows(degrees[:, 0:1])),
    )


@dataclass(frozen=True, slots=True)
class GroupTable:
    """One degree group's bandwidth and latency times per (distinct totals, split option)."""

    key_of: Index
    """(n_candidates,) the row of the tables holding each candidate's totals."""
    option_of: Index
    """(n_splits,) the column of the tables holding each split's non-top factors."""
    bw_s: Array
    """(n_keys, n_options) bandwidth time; inf where the split's factors do not divide."""
    lat_s: Array
    """(n_keys, n_options) latency time; inf likewise."""
    bw_min_s: Array
    """(n_keys,) each key's smallest bandwidth time over its split options."""
    lat_min_s: Array
    """(n_keys,) each key's smallest latency time over its split options."""

    def smallest(self) -> tuple[Array, Array]:
        """Per candidate, the smallest bandwidth and the smallest latency time over its splits."""
        return self.bw_min_s[self.key_of], self.lat_min_s[self.key_of]

    def rows(self, candidate: Index, split: Index) -> tuple[Array, Array]:
        """The times of rows (candidate, split)."""
        k, o = self.key_of[candidate], self.option_of[split]
        return self.bw_s[k, o], self.lat_s[k, o]


def group_table(
    keys: GroupKeys,
    adjusted: tuple[int, ...],
    lo: int,
    hi: int,
    shape: ModelShape,
    traffic: Traffic,
    times: Times,
) -> GroupTable:
    """Times of every distinct key of degrees lo:hi with every split option that divides it.

    What each pair moves (`traffic`) is computed once per keys, levels and model, and only
    its times on this network (`times`) per call. Keys taken from a parent (`keys_within`)
    take the rows they use of the parent's tables: each key's times are its own pairs', so
    the same values, and the parent's traffic serves every subset of its candidates.
    """
    if keys.parent is not None and keys.used is not None:
        whole = group_table(keys.parent, adjusted, lo, hi, shape, traffic, times)
        rows = keys.used
        within = (whole.bw_s[rows], whole.lat_s[rows], whole.bw_min_s[rows], whole.lat_min_s[rows])
        for table in within:
            table.setflags(write=False)
        return GroupTable(keys.key_of, whole.option_of, *within)
    pairs = keys.valid_pairs(adjusted, lo, hi)
    moved = keys.traffic.get((adjusted, lo, hi, shape))
    if moved is None:
        moved = traffic(pairs.factors, keys.distinct[pairs.key])
        keys.traffic[(adjusted, lo, hi, shape)] = moved
    bw, lat = times(moved)
    bw_s = np.full(pairs.shape, np.inf)
    lat_s = np.full(pairs.shape, np.inf)
    bw_s[pairs.key, pairs.option] = bw
    lat_s[pairs.key, pairs.option] = lat
    tables = (bw_s, lat_s, bw_s.min(axis=1), lat_s.min(axis=1))
    for table in tables:
        table.setflags(write=False)
    return GroupTable(keys.key_of, split_options(adjusted, lo, hi)[1], *tables)


@dataclass(frozen=True, slots=True)
class CommTable:
    """TP, PP/EP and DP time tables of a set of candidates at one cluster size."""

    tp: GroupTable
    pp_ep: GroupTable
    dp: GroupTable

    def smallest(self) -> CommTimes:
        """Per candidate, every network time at its own smallest value over the splits."""
        return CommTimes(*self.tp.smallest(), *self.pp_ep.smallest(), *self.dp.smallest())

    def rows(self, candidate: Index, split: Index) -> CommTimes:
        """The network times of rows (candidate, split)."""
        return CommTimes(
            *self.tp.rows(candidate, split),
            *self.pp_ep.rows(candidate, split),
            *self.dp.rows(candidate, split),
        )


@cached(maxsize=TABLE_CACHE_SIZE)
def comm_table(
    shape: ModelShape,
    n_gpu: int,
    keys: CandidateKeys,
    adjusted: tuple[int, ...],
    net: Network,
) -> CommTable:
    """Tables for candidates with group keys `keys` over the splits of the adjusted level
    sizes, on network `net` (the same arithmetic as `step.comm_times_s`, spec §6.2).
    Cached (`TABLE_CACHE_SIZE`); the tables are read only."""
    layers, b_tok, gpus = float(shape.n_layers), float(shape.batch_tokens), float(n_gpu)

    def tp(f: Array, _: NDArray[np.int64]) -> Any:
        return layer_tp_traffic(shape, f[:, :, 0], f[:, :, 1])

    def pp_ep(f: Array, k: NDArray[np.int64]) -> Any:
        v = k[:, 2].astype(np.float64)
        return pp_ep_traffic(f[:, :, 0], f[:, :, 1], v, shape.d_model, layers, b_tok)

    def dp(f: Array, _: NDArray[np.int64]) -> Any:
        return dp_traffic(f[:, :, 0], shape.held_params)

    return CommTable(
        tp=group_table(
            keys.tp, adjusted, 1, 3, shape, tp, lambda t: tp_costs_s(t, layers, gpus, net)
        ),
        pp_ep=group_table(
            keys.pp_ep,
            adjusted,
            3,
            5,
            shape,
            pp_ep,
            lambda t: pp_ep_costs_from_traffic_s(t, gpus, net),
        ),
        dp=group_table(keys.dp, adjusted, 0, 1, shape, dp, lambda t: dp_costs_s(t, gpus, net)),
    )
