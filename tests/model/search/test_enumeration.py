"""The integer layout tables: their row order and the schedules they hold (docs/model.md §9.1)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
from numpy.typing import NDArray

from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape, model_shape
from pipeline.model.records.switches import TensorParallel
from pipeline.model.search.candidates import Candidates, enumerate_candidates
from pipeline.model.search.enumeration import (
    CP_TABLE_CACHE_BYTES,
    MICROBATCH_SEQS,
    PAPER_RULES,
    MicrobatchRule,
    RowRules,
    ScheduleKey,
    ScheduleRows,
    _context_parallel_table,
    _microbatch_choices,
    context_parallel_degrees,
    context_parallel_table,
    layout_rows,
    may_have_layouts,
    realistic_layout_rows,
)
from pipeline.model.search.grid import grid_kv_heads
from pipeline.model.search.realistic import realistic_steps
from pipeline.model.search.search import physics_hardware
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

FEW = RowRules(few=True)
REALISTIC = RowRules(few=True, expert_sequences=True)
"""Plain 1F1B with fewer microbatches than stages beside the paper's schedules."""


def test_schedule_rows_interleave_each_block_once_per_tp_ff_choice() -> None:
    """Blocks of 2 and 1 rows with two N_TPff choices: each block twice in turn, block-major."""
    rows = np.arange(15, dtype=np.int64).reshape(3, 5)
    order, which = ScheduleRows(rows, np.array([2, 1], dtype=np.int64)).interleaved(2)
    assert order.tolist() == [0, 1, 0, 1, 2, 2]
    assert which.tolist() == [0, 0, 1, 1, 0, 1]


def test_schedule_rows_with_one_tp_ff_choice_keep_their_order() -> None:
    """One N_TPff choice leaves the rows in order, every one with choice 0."""
    rows = np.zeros((6, 5), dtype=np.int64)
    order, which = ScheduleRows(rows, np.array([1, 3, 2], dtype=np.int64)).interleaved(1)
    assert order.tolist() == list(range(6))
    assert which.tolist() == [0] * 6


def test_small_microbatches_add_the_counts_of_micro_batches_of_one_and_two() -> None:
    """224 sequences per data-parallel rank over 4 stages: the paper's fewest four m ≥ 4 (4, 7,
    8, 14: micro-batches of 56 to 16 sequences), then, with `small_microbatches`, the m of
    micro-batches of 2 and 1 sequences (112, 224), ascending; an m already among the four is
    not repeated (base 8: 4 and 8 of the four, none added), and only m ≥ N_PP is added (base
    224 over 128 stages: 224, not 112)."""
    paper = MicrobatchRule.of(SearchOptions(), PAPER_RULES)
    small = MicrobatchRule.of(SearchOptions(), RowRules(small=True))
    assert MICROBATCH_SEQS == (1, 2)
    assert _microbatch_choices(224, 4, paper)[0][:4] == (4, 7, 8, 14)
    ms, zb = _microbatch_choices(224, 4, small)
    assert ms[:6] == (4, 7, 8, 14, 112, 224)
    assert zb[:6] == (0,) * 6  # 1F1B; the zero-bubble one after, as without
    assert ms[6:] == _microbatch_choices(224, 4, paper)[0][4:]
    assert _microbatch_choices(8, 4, small) == _microbatch_choices(8, 4, paper)
    assert _microbatch_choices(224, 128, small)[0] == (224,)


def test_small_microbatches_need_whole_sequences() -> None:
    """A token-granular table's microbatch base counts tokens, not sequences: the key keeps the
    rule off there (`ScheduleKey.of`)."""
    shape = model_shape(12288, load_scenario(compose_config(["physics=realistic"])).laws)
    opts = SearchOptions()
    small = RowRules(small=True)
    assert ScheduleKey.of(shape, opts, whole=True, rules=small, ep=1).rule.small
    assert not ScheduleKey.of(shape, opts, whole=False, rules=small, ep=1).rule.small


def test_few_microbatches_adds_plain_one_f_one_b_below_the_stages() -> None:
    """With `few_microbatches` a realistic search also enumerates 1F1B with m < N_PP, each
    plain (v = 1: only the interleaved schedule needs m ≥ N_PP) and paying the bubble
    (N_PP − 1)/(N_PP − 1 + m); without it every 1F1B row has m ≥ N_PP."""
    scenario = load_scenario(compose_config(["physics=realistic"]))
    shape = model_shape(40960, scenario.laws)
    hw = physics_hardware(preset("h100_sxm"), scenario.physics)
    opts = SearchOptions()
    n_gpu = 2**20
    c = enumerate_candidates(hw, shape, n_gpu, opts, scenario.physics)
    assert isinstance(c, Candidates)
    pp = c.degrees[:, 3].astype(float)
    few = (c.microbatches < pp) & ~c.zero_bubble
    assert few.any()
    assert (c.interleave[few] == 1.0).all()
    bubble = realistic_steps(hw, scenario.physics, shape, n_gpu, c, opts).bubble_fraction
    expected = (pp[few] - 1.0) / (pp[few] - 1.0 + c.microbatches[few])
    np.testing.assert_allclose(bubble[few], expected, rtol=1e-12)
    before = dataclasses.replace(scenario.physics, few_microbatches=False)
    c = enumerate_candidates(hw, shape, n_gpu, opts, before)
    assert isinstance(c, Candidates)
    assert (c.microbatches >= c.degrees[:, 3]).all()


def test_realistic_layout_rows_within_a_tp_unit_are_the_rows_whose_tp_divides_it() -> None:
    """With `tp_unit` the realistic table holds exactly the whole table's rows whose N_TP
    divides it, in the same order, with the same context-parallel degrees (2-D tensor
    parallelism, whose N_TPm ranks are not held to the 8 K/V heads, so N_TP reaches past 8)."""
    over = ["physics=realistic", "physics.tensor_parallel=both"]
    physics = load_scenario(compose_config(over)).physics
    shape = model_shape(24576, load_scenario(compose_config([])).laws)
    dropped = 0
    for n_gpu, unit in ((3 * 2**12, 8), (5 * 2**14, 64), (2**18, 256), (24, 8)):
        whole = realistic_layout_rows(shape, n_gpu, SearchOptions(), physics)
        part = realistic_layout_rows(shape, n_gpu, SearchOptions(), physics, unit)
        assert whole is not None
        assert part is not None
        keep = unit % (whole[0][:, 1] * whole[0][:, 2]) == 0
        assert keep.sum() > 0
        dropped += int(keep.size - keep.sum())
        assert np.array_equal(part[0], whole[0][keep])
        assert whole[1] is not None
        assert part[1] is not None
        assert np.array_equal(part[1], whole[1][keep])
    assert dropped > 0


def test_context_parallel_tables_of_a_walk_stay_kept_within_their_bytes() -> None:
    """The tables of 200 node-multiple cluster sizes (a series' walk) are all kept, the first
    found again after the last, within `CP_TABLE_CACHE_BYTES`."""
    shape = model_shape(12288, load_scenario(compose_config([])).laws)
    context_parallel_table.cache_clear()
    sizes = [8 * k for k in range(1, 201)]
    for n_gpu in sizes:
        context_parallel_table(shape, n_gpu, SearchOptions(), TensorParallel.ONE_D, 16, 8, FEW)
    before = context_parallel_table.cache_info()
    context_parallel_table(shape, sizes[0], SearchOptions(), TensorParallel.ONE_D, 16, 8, FEW)
    after = context_parallel_table.cache_info()
    assert after.hits == before.hits + 1
    assert after.misses == before.misses
    assert 0 < after.nbytes <= CP_TABLE_CACHE_BYTES


def _per_degree_reference(
    shape: ModelShape, n_gpu: int, tensor: TensorParallel, extra: RowRules, unit: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """The context-parallel table as `layout_rows` of each c in turn, c > 1 rows with a
    nonzero nanobatch (the simple construction the one-pass table must equal)."""
    parts, cps = [], []
    for c in (1, *context_parallel_degrees(shape, 16)):
        block = layout_rows(shape, n_gpu, SearchOptions(), True, tensor, c, unit, extra)
        if block is None:
            continue
        block = block if c == 1 else block[block[:, 7] > 0]
        parts.append(block)
        cps.append(np.full(block.shape[0], c, dtype=np.int64))
    if not parts or not sum(p.shape[0] for p in parts):
        return None
    return np.concatenate(parts), np.concatenate(cps)


def test_context_parallel_table_equals_layout_rows_of_each_degree() -> None:
    """The one-pass context-parallel table holds `layout_rows`' rows of every c in order, with
    each row's c, for dense and sparse models, 1-D, 2-D and both, with and without plain 1F1B
    below the stages and a tensor-parallel unit, on powers of two and node multiples."""
    sizes = (8, 24, 96, 1000, 4096, 5 * 2**12, 3 * 2**17, 2**20)
    for scaling, width in (("dense", 12288), ("dense", 49152), ("sparse", 16384)):
        shape = model_shape(width, load_scenario(compose_config([f"scaling={scaling}"])).laws)
        for tensor in TensorParallel:
            for extra, unit, n_gpu in itertools.product(
                (PAPER_RULES, FEW, REALISTIC), (0, 8, 64), sizes
            ):
                got = _context_parallel_table(
                    shape, n_gpu, SearchOptions(), tensor, 16, unit, extra
                )
                want = _per_degree_reference(shape, n_gpu, tensor, extra, unit)
                assert (got is None) == (want is None)
                if got is not None and want is not None:
                    assert np.array_equal(got[0], want[0])
                    assert np.array_equal(got[1], want[1])


def test_may_have_layouts_is_false_only_where_the_realistic_table_is_empty() -> None:
    """On every node multiple up to 4,096 GPUs, dense and sparse, with and without a tensor-
    parallel unit and context parallelism, a size `may_have_layouts` rejects has no realistic
    layout row, and some sizes are rejected."""
    realistic = load_scenario(compose_config(["physics=realistic"])).physics
    no_cp = dataclasses.replace(realistic, max_context_parallel=1)
    tokens = dataclasses.replace(no_cp, whole_sequences=False)
    rejected = 0
    for scaling, width in (("dense", 12288), ("sparse", 16384)):
        shape = model_shape(width, load_scenario(compose_config([f"scaling={scaling}"])).laws)
        for physics, unit, n_gpu in itertools.product(
            (realistic, no_cp, tokens), (0, 8), range(8, 4097, 8)
        ):
            if may_have_layouts(shape, n_gpu, SearchOptions(), physics, unit):
                continue
            rejected += 1
            if physics is realistic:
                table = _context_parallel_table(
                    shape,
                    n_gpu,
                    SearchOptions(),
                    physics.tensor_parallel,
                    16,
                    unit,
                    RowRules.of(physics),
                )
                assert table is None
            else:
                whole = physics.whole_sequences
                tensor = physics.tensor_parallel
                assert (
                    layout_rows(
                        shape, n_gpu, SearchOptions(), whole, tensor, 1, unit, RowRules.of(physics)
                    )
                    is None
                )
    assert rejected > 0


def test_realistic_rows_hold_whole_sequences_on_every_gpu() -> None:
    """Under realistic physics every GPU of a sparse model runs attention on whole sequences
    (or, with c context ranks, whole shards of seq_len/c): a data-parallel replica's N_EP
    expert ranks each hold their own, so d·N_EP·m divides the batch's sequences and a GPU's
    tokens a microbatch, B_tok/(d·c·m·N_EP), are a whole number of sequence shards (docs/model.md
    R.7; the nanobatch b, a local expert's share, is that over S/N_EP, floored as spec Q8).
    The paper's flag (spec Q3) splits only over d: on the same sizes some of its rows hold part
    of a sequence on a GPU, so the check can fail."""
    scenario = load_scenario(compose_config(["physics=realistic", "scaling=sparse"]))
    physics = scenario.physics
    checked = split_rows = 0
    for width in (16384, 20480, 22528):
        shape = model_shape(width, scenario.laws)
        for n_gpu in (10 * 2**14, 14 * 2**17, 3 * 2**19, 7 * 2**20):
            rows = realistic_layout_rows(shape, n_gpu, SearchOptions(), physics)
            if rows is None:
                continue
            table, cp = rows
            assert cp is not None
            d, ep, m, nano = table[:, 0] // cp, table[:, 4], table[:, 5], table[:, 7]
            assert (shape.batch_seqs % (d * ep * m) == 0).all()
            gpu_tokens = shape.batch_tokens // (d * cp * m * ep)  # b·S/N_EP before Q8's floor
            assert (gpu_tokens * d * cp * m * ep == shape.batch_tokens).all()
            assert (gpu_tokens % (shape.seq_len // cp) == 0).all()
            assert (nano > 0).all()
            checked += table.shape[0]
            paper = _context_parallel_table(
                shape, n_gpu, SearchOptions(), physics.tensor_parallel, 16, 0, FEW
            )
            assert paper is not None
            p_table, p_cp = paper
            p_d, p_ep, p_m = p_table[:, 0] // p_cp, p_table[:, 4], p_table[:, 5]
            split_rows += int((shape.batch_seqs % (p_d * p_ep * p_m) != 0).sum())
    assert checked > 0
    assert split_rows > 0


def test_realistic_rows_hold_whole_heads_on_every_rank() -> None:
    """Every realistic row's N_TPff divides the model's K/V heads
    (`RowRules.head_unit`; Megatron-Core's attention divides both by its tensor-parallel size),
    on a 64-GPU NVLink domain where larger groups would fit; the same rows without the rule
    hold fractions of a K/V head, so the rule is what keeps them whole."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    laws = load_scenario(compose_config(["physics=realistic", "hardware=gb200_nvl72"])).laws
    checked = 0
    for d_model, n_gpu in ((26624, 2**14), (45056, 2**16), (30720, 3 * 2**13)):
        shape = model_shape(d_model, laws)
        unit = grid_kv_heads(shape)
        assert unit == 8
        rows = realistic_layout_rows(shape, n_gpu, SearchOptions(), physics, 64)
        assert rows is not None
        assert (unit % rows[0][:, 2] == 0).all()
        free = layout_rows(shape, n_gpu, SearchOptions(), True, TensorParallel.ONE_D, 1, 64)
        assert free is not None
        checked += int((unit % free[:, 2] != 0).sum())
    assert checked > 0
