"""The integer layout tables the search enumerates (spec §10 steps 1-7).

A layout is (N_DP, N_TPm, N_TPff, N_PP, N_EP) with a pipeline schedule (m microbatches,
1F1B or zero-bubble) and its nanobatch. The order of the rows is the original's (spec §10):
N_TP ascending over the divisors of gcd(N/N_EP, d_model·d_ff), then N_PP descending (N_DP
ascending), then N_TPff, then the schedules, so ties resolve the same way.

At N_TP = t the data and pipeline degrees multiply to r = N/(N_EP·t·c) (c context-parallel
ranks), and what follows from r (N_PP | gcd(r, L), the batch divisibility, the schedules,
the nanobatch) depends only on r and the model: `_schedule_rows` makes it once per r, and
every cluster size and GPU whose tensor-parallel degrees leave the same r shares it. A table
is then one gather per N_TP (docs/model.md §9.2).

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137; spec §10.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import cached, register
from pipeline.model.network.levels import divisors
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import Physics, TensorParallel
from pipeline.model.search.grid import grid_kv_heads
from pipeline.model.search.memo import ByteBoundedMemo
from pipeline.model.step.schedule import nanobatch_tokens

LAYOUT_TABLE_CACHE_SIZE = 128
"""(model, cluster size, options) whose integer layout table a process keeps: read only when
a GPU's candidates are not cached, e.g. by the next GPU of a comparison."""
CP_TABLE_CACHE_BYTES = 64 * 2**20
"""Bytes of context-parallel layout tables (`context_parallel_table`) a process keeps, least
recently used out: the cluster sizes of a series' walk and of the series before it (37 kB a
table on average on the realistic sensitivity sweep), which the next series of a sweep over
the network revisits (docs/model.md §9.2)."""
SCHEDULE_CACHE_SIZE = 4096
"""(model, r, options) whose schedule rows a process keeps: a few hundred per series."""
MICROBATCH_SEQS = (1, 2)
"""Sequences per micro-batch of a GPU (a data-parallel or expert rank), ascending, whose
microbatch counts a search with `Physics.small_microbatches` tries beside the paper's fewest four
(`_microbatch_choices`): Megatron-LM's, Megatron-Core's and NeMo's `micro_batch_size` of the
measured runs of docs/validation.md, 1 or 2 sequences on every 2021-2025 run that states it
(tests/validation/data/modern_2021_2025.csv), 1 on Korthikanti et al.'s, and up to 16 on
Narayanan et al.'s smallest models of 2021, whose fewest four already hold them."""

_SEQS_DESCENDING = tuple(reversed(MICROBATCH_SEQS))

IntArray = NDArray[np.int64]


class RowRules(NamedTuple):
    """What a realistic search changes in the paper's layout rows. The schedules it tries
    beside the paper's (`_microbatch_choices`): plain 1F1B with m < N_PP (`few`,
    `Physics.few_microbatches`) and, with whole sequences, the m of small micro-batches
    (`small`, `Physics.small_microbatches`). And, with whole sequences, whole sequences on
    every GPU (`expert_sequences`): the N_EP expert ranks of a data-parallel replica each hold
    their own sequences, as Megatron-Core carves expert parallelism out of the data-parallel
    ranks and its every rank runs attention on a micro-batch of `micro_batch_size` whole
    sequences (docs/model.md R.7), so d·N_EP·m divides the batch's sequences, where the
    paper's flag asks d·m (spec Q3). And, where the physics models attention (its heads),
    whole heads on every GPU (`whole_heads`): N_TPff divides the model's K/V heads
    (`head_unit`). None of them for the paper's search (`PAPER_RULES`)."""

    few: bool = False
    small: bool = False
    expert_sequences: bool = False
    whole_heads: bool = False

    @classmethod
    def of(cls, physics: Physics) -> RowRules:
        """The rules of a realistic search under `physics`."""
        return cls(physics.few_microbatches, physics.small_microbatches, True, physics.attention)

    def head_unit(self, shape: ModelShape) -> int:
        """What N_TPff must divide under these rules: with `whole_heads` the model's K/V heads
        (`search.grid.grid_kv_heads`; its a heads under multi-head attention), so that each
        rank holds whole K/V heads and whole query heads, as Megatron-Core's attention divides
        both by its tensor-parallel size (docs/model.md R.7); the query heads are a multiple of
        the K/V heads, as a lab sizes them (the grid's widths, multiples of 2,048, give a
        multiple of 16 heads of 128; a width off the grid, as the reality check's, is read as
        such a model). Else 0 (any)."""
        return grid_kv_heads(shape) if self.whole_heads else 0


PAPER_RULES = RowRules()
"""The paper's search: its schedules only (spec §10 step 7) and its split of the batch (spec
Q3)."""


class MicrobatchRule(NamedTuple):
    """What the schedules tried depend on (`_microbatch_choices`): the search options' schedule
    switches and caps and the `RowRules` (`small` only with whole sequences); a tuple of
    integers, cheap to hash."""

    one_f_one_b: bool
    zero_bubble: bool
    max_1f1b: int
    max_zb: int
    few: bool
    small: bool = False

    @classmethod
    def of(cls, opts: SearchOptions, rules: RowRules) -> MicrobatchRule:
        """The rule of `opts` with the schedules of `rules`."""
        return cls(
            opts.one_f_one_b,
            opts.zero_bubble,
            opts.max_1f1b_microbatch_candidates,
            opts.max_zb_microbatch_candidates,
            rules.few,
            rules.small,
        )


class ScheduleKey(NamedTuple):
    """What the schedule rows of N_DP·N_PP = r read of the model and options (`_schedule_rows`):
    a tuple of integers, so the per-r cache hashes no model or options record."""

    sparsity: int
    batch_seqs: int
    batch_tokens: int
    n_layers: int
    whole: bool
    reject_non_divisible: bool
    rule: MicrobatchRule
    expert_ranks: int = 1
    """The ranks of a data-parallel replica that hold their own whole sequences: N_EP under
    `RowRules.expert_sequences` with whole sequences, else 1."""

    @classmethod
    def of(
        cls, shape: ModelShape, opts: SearchOptions, whole: bool, rules: RowRules, ep: int
    ) -> ScheduleKey:
        """The key of `shape` and `opts` at N_EP = `ep` with `whole` sequences or not and the
        rules of `rules` (its small micro-batches and its expert ranks' own sequences only with
        whole sequences: without them a microbatch count splits tokens, not sequences)."""
        return cls(
            shape.sparsity,
            shape.batch_seqs,
            shape.batch_tokens,
            shape.n_layers,
            whole,
            opts.quirks.reject_non_divisible,
            MicrobatchRule.of(opts, rules._replace(small=rules.small and whole)),
            ep if whole and rules.expert_sequences else 1,
        )


@cached(maxsize=65536)
def _microbatch_choices(
    base: int, pp: int, rule: MicrobatchRule
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The schedules tried, as columns: each one's m and whether it is zero-bubble (1 or 0).
    1F1B first, then ZB; m | base, m ≥ N_PP (1F1B) or ≥ 2·N_PP (ZB): the fewest
    `max_1f1b_microbatch_candidates` (spec §10 step 7). With `rule.small`
    (`Physics.small_microbatches`; `base` then counts the sequences of one rank, data-parallel
    or expert), after those, ascending, the other m ≥ N_PP of micro-batches of μ sequences,
    m = base/μ for each μ of `MICROBATCH_SEQS` dividing base. With `rule.few` (`Physics.few_microbatches`), after the
    1F1B ones, plain 1F1B with m < N_PP: the largest `max_1f1b_microbatch_candidates` divisors
    below N_PP (the fewest bubbles)."""
    divs = divisors(base) if base > 0 else ()
    at_pp = bisect_left(divs, pp)  # divs[at_pp:] are the m >= N_PP (divs ascending)
    ms: list[int] = []
    cap = rule.max_1f1b  # caps are positive (the configuration's check)
    if rule.one_f_one_b:
        fewest = divs[at_pp : at_pp + cap]
        ms += fewest
        if rule.small:  # base // μ ascending: μ descending
            for mu in _SEQS_DESCENDING:
                if base % mu == 0 and (m := base // mu) >= pp and m not in fewest:
                    ms.append(m)
        if rule.few and pp > 1:
            ms += divs[max(at_pp - cap, 0) : at_pp]
    plain = len(ms)
    if rule.zero_bubble:
        at_zb = bisect_left(divs, 2 * pp, at_pp)  # 2·N_PP ≥ N_PP: at or past at_pp
        ms += divs[at_zb : at_zb + rule.max_zb]
    return tuple(ms), (0,) * plain + (1,) * (len(ms) - plain)


@cached(maxsize=65536)
def _tp_ff_choices(tp: int, d_model: int, d_ff: int, window: int) -> tuple[int, ...]:
    """N_TPff | N_TP with ⌊√N_TP⌋ ≤ N_TPff ≤ window·⌊√N_TP⌋, N_TPm | d_model, N_TPff | d_ff (spec §10.5)."""
    root = math.isqrt(tp)
    return tuple(
        f
        for f in divisors(tp)
        if root <= f <= window * root and d_model % (tp // f) == 0 and d_ff % f == 0
    )


@cached(maxsize=65536)
def tp_ff_choices(
    tp: int,
    d_model: int,
    d_ff: int,
    window: int,
    tensor_parallel: TensorParallel,
    head_unit: int = 0,
) -> tuple[int, ...]:
    """N_TPff values tried at N_TP of a model of widths d_model and d_ff: the paper's 2-D ones
    (`window`: the search options' `tp_ff_window`), 1-D (N_TPff = N_TP), or both; with
    `head_unit` > 0 only those dividing it (`RowRules.head_unit`: whole heads on each rank).

    A candidate with N_TPm = 1 is 1-D tensor parallelism; outside `tensor_parallel=2d` it
    runs with sequence parallelism (`search.grid.sequence_parallel_degree`).
    """
    one_d: tuple[int, ...] = (tp,) if d_ff % tp == 0 else ()
    if tensor_parallel is TensorParallel.ONE_D:
        choices = one_d
    else:
        choices = _tp_ff_choices(tp, d_model, d_ff, window)
        if tensor_parallel is TensorParallel.BOTH and one_d and tp not in choices:
            choices = (*choices, tp)
    if head_unit:
        return tuple(f for f in choices if head_unit % f == 0)
    return choices


@cached(maxsize=LAYOUT_TABLE_CACHE_SIZE)
def layout_table(
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    whole_sequences: bool = False,
    tensor_parallel: TensorParallel = TensorParallel.TWO_D,
    tp_unit: int = 0,
    rules: RowRules = PAPER_RULES,
) -> IntArray | None:
    """(n, 8) integer rows (N_DP, N_TPm, N_TPff, N_PP, N_EP, m, zero-bubble, nanobatch) of
    every layout the divisibility rules allow at n_gpu, in enumeration order (spec §10 steps
    1-7; with `tp_unit` only the rows whose N_TP divides it, `layout_rows`; with the schedules
    of `rules` too); GPU-independent, so the GPUs of a comparison share it. Read-only; None if
    empty."""
    whole = opts.quirks.whole_sequences or whole_sequences
    table = layout_rows(shape, n_gpu, opts, whole, tensor_parallel, 1, tp_unit, rules)
    if table is None:
        return None
    table.setflags(write=False)
    return table


def layout_rows(
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    whole: bool,
    tensor_parallel: TensorParallel,
    cp: int,
    tp_unit: int = 0,
    rules: RowRules = PAPER_RULES,
) -> IntArray | None:
    """`layout_table`'s rows with each sequence split over `cp` context-parallel ranks (1 =
    none): N_DP = d·cp token-splitting ranks of which d divide the batch (docs/model.md R.7);
    with the rules of `rules` too (`_microbatch_choices`). One gather of
    `_schedule_rows` per N_TP (module docstring); a new, writable array.

    `tp_unit` > 0 keeps only the rows whose N_TP divides it (the N_TP are the divisors of
    gcd(N/N_EP, d_model·d_ff, tp_unit), in the same ascending order), the rows the other
    N_TP give left out whole: the rows a realistic search with `tp_in_domain` can use, N_TP
    dividing the fastest level's size (`search.realistic`); 0 keeps every N_TP (gcd(x, 0) = x)."""
    ep = math.gcd(n_gpu, shape.sparsity)
    q = n_gpu // ep
    pieces: list[IntArray] = []
    tp_m: list[IntArray] = []
    tp_ff: list[IntArray] = []
    key = ScheduleKey.of(shape, opts, whole, rules, ep)
    d_model, d_ff, window = shape.d_model, shape.d_ff, opts.tp_ff_window
    heads = rules.head_unit(shape)
    for tp in divisors(math.gcd(q, d_model * d_ff, tp_unit)):
        ff_choices = tp_ff_choices(tp, d_model, d_ff, window, tensor_parallel, heads)
        if not ff_choices or (q // tp) % cp:
            continue
        rows = _schedule_rows(key, cp, q // (tp * cp))
        if rows is None:
            continue
        if len(ff_choices) == 1:
            pieces.append(rows.rows)
            ff = np.full(rows.rows.shape[0], ff_choices[0], dtype=np.int64)
        else:
            order, which = rows.interleaved(len(ff_choices))
            pieces.append(rows.rows[order])
            ff = np.asarray(ff_choices, dtype=np.int64)[which]
        tp_ff.append(ff)
        tp_m.append(tp // ff)
    if not pieces:
        return None
    schedules = np.concatenate(pieces)
    table = np.empty((schedules.shape[0], 8), dtype=np.int64)
    table[:, [0, 3, 5, 6, 7]] = schedules
    table[:, 1] = np.concatenate(tp_m)
    table[:, 2] = np.concatenate(tp_ff)
    table[:, 4] = ep
    return table


class ScheduleRows:
    """What N_DP·N_PP = r allows (`_schedule_rows`): rows (N_DP, N_PP, m, zero-bubble,
    nanobatch) in block order, N_PP descending, and each block's row count."""

    __slots__ = ("_interleaved", "rows", "sizes")

    def __init__(self, rows: IntArray, sizes: IntArray) -> None:
        rows.setflags(write=False)
        self.rows = rows
        self.sizes = sizes
        self._interleaved: dict[int, tuple[IntArray, IntArray]] = {}

    def interleaved(self, n_ff: int) -> tuple[IntArray, IntArray]:
        """The row order with each block repeated once per N_TPff choice (block-major, as
        spec §10 nests N_TPff inside N_PP), and the N_TPff choice of each row."""
        if n_ff not in self._interleaved:
            sizes = np.repeat(self.sizes, n_ff)  # each block's size, once per choice
            starts = np.repeat(np.cumsum(self.sizes) - self.sizes, n_ff)
            ends = np.cumsum(sizes)
            offset = np.arange(int(ends[-1])) - np.repeat(ends - sizes, sizes)
            order = np.repeat(starts, sizes) + offset
            which = np.repeat(np.arange(sizes.size) % n_ff, sizes)
            order.setflags(write=False)
            which.setflags(write=False)
            self._interleaved[n_ff] = (order, which)
        return self._interleaved[n_ff]


@cached(maxsize=SCHEDULE_CACHE_SIZE)
def _schedule_rows(key: ScheduleKey, cp: int, r: int) -> ScheduleRows | None:
    """Every (N_DP·cp, N_PP, m, zero-bubble, nanobatch) with N_DP·N_PP = r (spec §10 steps
    3-7) of the model and options `key` (`ScheduleKey.of`): N_PP | gcd(r, L) descending, N_DP
    dividing the batch's split unit (sequences with `whole`, else tokens, Q3), the schedules of
    `_microbatch_choices`. With whole sequences the `key.expert_ranks` ranks of a replica each
    hold their own (`RowRules.expert_sequences`): N_DP divides the batch's sequences over them,
    and m each one's. None if there is none."""
    s, b_tok, whole, e = key.sparsity, key.batch_tokens, key.whole, key.expert_ranks
    if whole and key.batch_seqs % e:
        return None
    seqs = key.batch_seqs // e  # a replica's expert ranks' sequences each (all of them at e = 1)
    unit = math.gcd(r, seqs if whole else b_tok)
    sizes: list[int] = []  # each block's row count
    dps: list[int] = []  # each row's N_DP·cp, N_PP, m and zero-bubble flag
    pps: list[int] = []
    ms: list[int] = []
    zbs: list[int] = []
    for pp in reversed(divisors(math.gcd(r, key.n_layers))):  # N_DP ascending
        dp = r // pp
        if unit % dp:
            continue
        if key.reject_non_divisible and b_tok % (s * dp * cp):  # Q8
            continue
        base = seqs // dp if whole else b_tok // (s * dp)
        m, zb = _microbatch_choices(base, pp, key.rule)
        if m:
            sizes.append(len(m))
            dps += [dp * cp] * len(m)
            pps += [pp] * len(m)
            ms += m
            zbs += zb
    if not sizes:
        return None
    rows = np.empty((len(ms), 5), dtype=np.int64)
    rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3] = dps, pps, ms, zbs
    rows[:, 4] = nanobatch_tokens(b_tok, rows[:, 0], rows[:, 2], s)
    return ScheduleRows(rows, np.array(sizes, dtype=np.int64))


def context_parallel_degrees(shape: ModelShape, max_cp: int) -> tuple[int, ...]:
    """c tried beside 1: powers of two up to `max_cp` that divide the sequence length."""
    out, c = [], 2
    while c <= max_cp:
        if shape.seq_len % c == 0:
            out.append(c)
        c *= 2
    return tuple(out)


def _context_parallel_table(
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    tensor_parallel: TensorParallel,
    max_cp: int,
    tp_unit: int = 0,
    rules: RowRules = PAPER_RULES,
) -> tuple[IntArray, IntArray] | None:
    """Whole-sequence layouts with context parallelism: `layout_table`'s rows (c = 1), then
    those of each c in `context_parallel_degrees` with a nonzero nanobatch (N_DP = d·c,
    nanobatch over d·c), and each row's c; with `tp_unit`, only N_TP dividing it; with the
    schedules of `rules` too. Read-only; None if empty.

    The rows are `layout_rows`' for each c, made in one pass: with whole sequences the
    schedules of N_DP·N_PP = r (N_PP, d, m, zero-bubble) do not depend on c, so every (N_TP,
    c) piece gathers the c = 1 schedule rows of its r = N/(N_EP·N_TP·c) (`_schedule_rows`,
    shared with the c = 1 block and the other c whose r is the same) and the table sets N_DP
    = d·c and the nanobatch B_tok/(d·c·m·S) of every row at once. Under Q8
    (`reject_non_divisible`, which rejects d by d·c) each c keeps its own `layout_rows`."""
    cs = (1, *context_parallel_degrees(shape, max_cp))
    if opts.quirks.reject_non_divisible:
        return _per_degree_table(shape, n_gpu, opts, tensor_parallel, cs, tp_unit, rules)
    ep = math.gcd(n_gpu, shape.sparsity)
    q = n_gpu // ep
    key = ScheduleKey.of(shape, opts, True, rules, ep)
    d_model, d_ff, window = shape.d_model, shape.d_ff, opts.tp_ff_window
    heads = rules.head_unit(shape)
    tps = [
        (tp, choices)
        for tp in divisors(math.gcd(q, d_model * d_ff, tp_unit))
        if (choices := tp_ff_choices(tp, d_model, d_ff, window, tensor_parallel, heads))
    ]
    pieces: list[IntArray] = []
    ff_parts: list[IntArray | int] = []  # each piece's N_TPff: one value, or one per row
    piece_tp: list[int] = []
    piece_c: list[int] = []
    lengths: list[int] = []
    by_r: dict[int, ScheduleRows | None] = {}  # the pieces of equal N_TP·c share r
    for c in cs:
        for tp, ff_choices in tps:
            if (q // tp) % c:
                continue
            r = q // (tp * c)
            if r not in by_r:
                by_r[r] = _schedule_rows(key, 1, r)
            rows = by_r[r]
            if rows is None:
                continue
            if len(ff_choices) == 1:
                piece = rows.rows
                ff_parts.append(ff_choices[0])
            else:
                order, which = rows.interleaved(len(ff_choices))
                piece = rows.rows[order]
                ff_parts.append(np.asarray(ff_choices, dtype=np.int64)[which])
            pieces.append(piece)
            piece_tp.append(tp)
            piece_c.append(c)
            lengths.append(piece.shape[0])
    if not pieces:
        return None
    schedules = np.concatenate(pieces)
    sizes = np.asarray(lengths, dtype=np.int64)
    cp = np.repeat(np.asarray(piece_c, dtype=np.int64), sizes)
    ff = _piece_values(ff_parts, sizes)
    table = np.empty((schedules.shape[0], 8), dtype=np.int64)
    table[:, 0] = schedules[:, 0] * cp
    table[:, 1] = np.repeat(np.asarray(piece_tp, dtype=np.int64), sizes) // ff
    table[:, 2] = ff
    table[:, 3] = schedules[:, 1]
    table[:, 5:7] = schedules[:, 2:4]
    table[:, 4] = ep
    table[:, 7] = nanobatch_tokens(shape.batch_tokens, table[:, 0], table[:, 5], shape.sparsity)
    keep = (cp == 1) | (table[:, 7] > 0)
    if not keep.any():
        return None
    if not keep.all():
        table, cp = table[keep], cp[keep]
    table.setflags(write=False)
    cp.setflags(write=False)
    return table, cp


def _piece_values(parts: list[IntArray | int], sizes: IntArray) -> IntArray:
    """One column of a table made of pieces of `sizes` rows: each piece's values, given as
    one value for its every row or as one per row."""
    if all(isinstance(v, int) for v in parts):
        return np.repeat(np.asarray(parts, dtype=np.int64), sizes)
    return np.concatenate(
        [
            np.full(n, v, dtype=np.int64) if isinstance(v, int) else v
            for v, n in zip(parts, sizes.tolist(), strict=True)
        ]
    )


def _per_degree_table(
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    tensor_parallel: TensorParallel,
    cs: tuple[int, ...],
    tp_unit: int,
    rules: RowRules,
) -> tuple[IntArray, IntArray] | None:
    """`_context_parallel_table` as `layout_rows` of each c in `cs` in turn."""
    parts: list[IntArray] = []
    cps: list[IntArray] = []
    for c in cs:
        block = layout_rows(shape, n_gpu, opts, True, tensor_parallel, c, tp_unit, rules)
        if block is None:
            continue
        if c > 1:
            block = block[block[:, 7] > 0]
        parts.append(block)
        cps.append(np.full(block.shape[0], c, dtype=np.int64))
    if not parts or not sum(p.shape[0] for p in parts):
        return None
    table, cp = np.concatenate(parts), np.concatenate(cps)
    table.setflags(write=False)
    cp.setflags(write=False)
    return table, cp


def _table_nbytes(table: tuple[IntArray, IntArray] | None) -> int:
    """Bytes of a context-parallel table's two arrays."""
    return 0 if table is None else table[0].nbytes + table[1].nbytes


context_parallel_table = ByteBoundedMemo(
    _context_parallel_table, CP_TABLE_CACHE_BYTES, _table_nbytes
)
"""`_context_parallel_table`, kept per (model, cluster size, options, tensor-parallel kind,
largest c, N_TP unit, row rules: `RowRules`) within `CP_TABLE_CACHE_BYTES`."""
register(
    f"{__name__}.context_parallel_table", context_parallel_table, f"{CP_TABLE_CACHE_BYTES} bytes"
)


def tries_context_parallel(physics: Physics) -> bool:
    """Whether a realistic search tries context-parallel degrees c > 1: whole sequences and
    `physics.max_context_parallel` above 1 (docs/model.md R.7)."""
    return physics.max_context_parallel > 1 and physics.whole_sequences


def realistic_layout_rows(
    shape: ModelShape, n_gpu: int, opts: SearchOptions, physics: Physics, tp_unit: int = 0
) -> tuple[IntArray, IntArray | None] | None:
    """The rows a realistic search enumerates at n_gpu before its memory check, and each row's
    context-parallel degree c: `context_parallel_table` when the physics tries c > 1 with whole
    sequences, else `layout_table` (c None: no context parallelism); plain 1F1B with m < N_PP
    among them with `physics.few_microbatches`, the m of small micro-batches with
    `physics.small_microbatches`; with `tp_unit` > 0 only the rows whose N_TP divides it
    (`layout_rows`). None if there is none."""
    if not may_have_layouts(shape, n_gpu, opts, physics, tp_unit):
        return None
    rules = RowRules.of(physics)
    if tries_context_parallel(physics):
        cp = physics.max_context_parallel
        return context_parallel_table(
            shape, n_gpu, opts, physics.tensor_parallel, cp, tp_unit, rules
        )
    whole, tensor = physics.whole_sequences, physics.tensor_parallel
    table = layout_table(shape, n_gpu, opts, whole, tensor, tp_unit, rules)
    return None if table is None else (table, None)


def may_have_layouts(
    shape: ModelShape, n_gpu: int, opts: SearchOptions, physics: Physics, tp_unit: int = 0
) -> bool:
    """False only when `realistic_layout_rows` has no row at n_gpu: when q = N/N_EP does not
    divide U·c_max·L·B, U = gcd(d_model·d_ff, `tp_unit`) (gcd(x, 0) = x), c_max the largest
    context-parallel degree tried (1 when none), L the layers and B the batch's split unit
    (its sequences with whole sequences, else its tokens). A few integer operations, where the
    table is a loop over N_TP and c: most node multiples of a walk have no layout at all.

    Proof. A row has q = N_TP·c·d·N_PP (`layout_rows`, `_schedule_rows`: N_DP·N_PP = r =
    q/(N_TP·c), N_DP = d·c) with N_TP dividing U, c a power of two up to c_max (so dividing
    it), N_PP dividing L and d dividing B (a divisor of gcd(r, B)); the product of four
    divisors divides the product of their multiples. The schedules, nanobatches and Q8 only
    remove rows."""
    return room_admits(layout_room(shape, opts, physics, tp_unit), shape, n_gpu)


def layout_room(shape: ModelShape, opts: SearchOptions, physics: Physics, tp_unit: int = 0) -> int:
    """U·c_max·L·B of `may_have_layouts`: a multiple of q = N/N_EP at every size with a
    realistic row. The same at every cluster size, so a walk computes it once per N_TP unit."""
    whole = physics.whole_sequences or opts.quirks.whole_sequences
    most_cp = 1
    if tries_context_parallel(physics):
        most_cp = max((1, *context_parallel_degrees(shape, physics.max_context_parallel)))
    split = shape.batch_seqs if whole else shape.batch_tokens
    return math.gcd(shape.d_model * shape.d_ff, tp_unit) * most_cp * shape.n_layers * split


def room_admits(room: int, shape: ModelShape, n_gpu: int) -> bool:
    """Whether q = N/N_EP divides `room` (`layout_room`): False only where `may_have_layouts`
    is."""
    return room % (n_gpu // math.gcd(n_gpu, shape.sparsity)) == 0
