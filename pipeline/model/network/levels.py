"""Parallel degrees and their split across network levels (spec §5, spec §10).

Pure integer combinatorics: divisors, the small-cluster level-size adjustment, and
the table of per-level factor tuples in the original's enumeration order.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import cached

N_DEGREES = 5
"""Degree order in every factor table: (DP, TP_m, TP_ff, PP, EP)."""


@cached(maxsize=65536)
def prime_factors(n: int) -> tuple[tuple[int, int], ...]:
    """(prime, exponent) pairs of n ≥ 1, powers of two stripped first (clusters are S · 2^i)."""
    factors: list[tuple[int, int]] = []
    twos = (n & -n).bit_length() - 1
    if twos:
        factors.append((2, twos))
        n >>= twos
    p = 3
    while p * p <= n:
        e = 0
        while n % p == 0:
            n //= p
            e += 1
        if e:
            factors.append((p, e))
        p += 2
    if n > 1:
        factors.append((n, 1))
    return tuple(factors)


@cached(maxsize=65536)
def divisors(n: int) -> tuple[int, ...]:
    """All divisors of n ≥ 1, ascending, from its prime factorization (spec §17)."""
    divs = [1]
    for p, e in prime_factors(n):
        divs = [d * p**k for d in divs for k in range(e + 1)]
    return tuple(sorted(divs))


def adjusted_level_sizes(level_sizes: tuple[int, ...], n_gpu: int) -> tuple[int, ...]:
    """Non-top level sizes shrunk to fit a small cluster (spec §5.2).

    Walk the sizes keeping a running product P: keep s_k while P · s_k < N_GPU;
    otherwise replace s_k by N_GPU / P and set every later size to 1.
    """
    adjusted: list[int] = []
    product = 1
    for k, size in enumerate(level_sizes):
        if product * size < n_gpu:
            adjusted.append(size)
            product *= size
        else:
            adjusted.append(n_gpu // product)
            adjusted.extend([1] * (len(level_sizes) - k - 1))
            break
    return tuple(adjusted)


def hierarchy_is_consistent(level_sizes: tuple[int, ...], n_gpu: int) -> bool:
    """True if N_GPU is divisible by every prefix product of level sizes it exceeds (spec §5.2)."""
    product = 1
    for size in level_sizes:
        product *= size
        if n_gpu > product and n_gpu % product:
            return False
    return True


@cached(maxsize=4096)
def ordered_factorizations(size: int) -> tuple[tuple[int, ...], ...]:
    """Ordered 5-tuples of positive integers with product `size`, lexicographic ascending."""
    divs = divisors(size)
    out = []
    for combo in itertools.product(divs, repeat=N_DEGREES - 1):
        rest, rem = divmod(size, math.prod(combo))
        if rem == 0:
            out.append((*combo, rest))
    return tuple(sorted(out))


@cached(maxsize=1024)
def split_table(adjusted: tuple[int, ...]) -> NDArray[np.int64]:
    """Per-level factors of every non-top level, shape (n_splits, n_levels - 1, 5).

    The Cartesian product over non-top levels has level 0 as the outermost,
    slowest-varying choice (spec §10 step 8.4); ties are decided in this order.
    """
    per_level = [ordered_factorizations(s) for s in adjusted]
    combos = list(itertools.product(*per_level))
    table = np.array(combos, dtype=np.int64).reshape(len(combos), len(adjusted), N_DEGREES)
    table.setflags(write=False)
    return table


@cached(maxsize=1024)
def split_inner_products(adjusted: tuple[int, ...]) -> NDArray[np.int64]:
    """Product of the non-top factors of every split, (n_splits, 5): a split is valid for a
    layout when each degree's product divides the layout's degree, the top factor being the
    quotient (spec §5.2). Read only."""
    table = split_table(adjusted)
    n_split, inner = table.shape[0], table.shape[1]
    inner_prod = table.prod(axis=1) if inner else np.ones((n_split, N_DEGREES), np.int64)
    inner_prod.setflags(write=False)
    return inner_prod


def group_level(level_sizes: tuple[int, ...], span: NDArray[np.float64]) -> NDArray[np.int64]:
    """Network level a group spans: the first whose cumulative size G_i both holds `span` GPUs
    (the group's size times the stride of its ranks; Megatron's rank order puts tensor ranks
    innermost, then context, expert, data and pipeline ranks) and is a multiple of it. The
    group's ranks lie in an aligned block of `span` consecutive ranks, which sits inside one
    unit of G_i ranks only when span divides G_i: a block of 6 ranks on 8-GPU nodes straddles
    two nodes for every other group, so that group set crosses the level (a cluster of whole
    nodes allows such degrees, `physics.cluster_sizes`). Past every bounded level: the top
    level, `len(level_sizes)`."""
    cum = cumulative_sizes(level_sizes)
    if cum.size == 0:
        return np.zeros(np.shape(span), dtype=np.int64)
    s = np.asarray(span, dtype=np.float64)
    out: NDArray[np.int64] = np.full(s.shape, len(level_sizes), dtype=np.int64)
    for level in range(cum.size - 1, -1, -1):  # outermost first: the innermost holding it wins
        size = float(cum[level])
        out[(s <= size) & (np.fmod(size, s) == 0.0)] = level  # spans are positive: fmod is mod
    return out


@cached(maxsize=1024)
def cumulative_sizes(level_sizes: tuple[int, ...]) -> NDArray[np.float64]:
    """GPUs within each bounded level, innermost first: the running product of the level
    sizes (as floats, for `group_level`'s search). Read only."""
    out: NDArray[np.float64] = np.array(level_sizes, dtype=np.float64).cumprod()
    out.setflags(write=False)
    return out


def level_factors(degrees: tuple[int, ...], level_sizes: tuple[int, ...]) -> list[list[int]]:
    """Per-level factors of each degree, filling levels innermost-first in the given order
    (a rank order, innermost degree first: Megatron-Core's tp-cp-ep-dp-pp).

    Each degree takes the largest factor of itself that still divides the room left on a
    level; what is left over goes to the unbounded top level.
    """
    out = [[1] * (len(level_sizes) + 1) for _ in degrees]
    left = list(degrees)
    for level, size in enumerate(level_sizes):
        room = size
        for i, remaining in enumerate(left):
            take = math.gcd(remaining, room)
            out[i][level] = take
            left[i] //= take
            room //= take
    for i, remaining in enumerate(left):
        out[i][-1] = remaining
    return out
