"""Scaling laws and the rounding function against the spec's check values (spec §2, §16.1)."""

from __future__ import annotations

import pytest

from pipeline.model.records.scaling import (
    BatchLaw,
    BatchLawKind,
    ScalingLaws,
    model_shape,
    paper_d_model_grid,
    round_to_grid,
)

SHAPE_REL_TOL = 5e-5
"""spec §16.1 prints N and C to five significant digits."""
DEEPSEEK = BatchLaw(BatchLawKind.DEEPSEEK, coefficient=0.2920, exponent=0.3271)

# d_model, L, N, C, B_seq default, B_seq DeepSeek, sparse (S, N, C, B_seq) — spec §16.1
CHECK_VALUES = [
    (12288, 192, 2.3193e11, 6.4549e24, 3584, 18432, (8, 1.8554e12, 5.1639e25, 14336)),
    (14336, 224, 3.6829e11, 1.6277e25, 4096, 24576, (9, 3.3146e12, 1.4649e26, 16128)),
    (24576, 320, 1.5462e12, 2.8688e26, 6144, 65536, (16, 2.4739e13, 4.5901e27, 40960)),
    (49152, 576, 1.1133e13, 1.4872e28, 12288, 229376, (32, 3.5624e14, 4.7591e29, 131072)),
    (98304, 896, 6.9269e13, 5.7579e29, 24576, 786432, (64, 4.4332e15, 3.6850e31, 393216)),
    (196608, 1536, 4.7499e14, 2.7074e31, 40960, 2621440, (128, 6.0799e16, 3.4654e33, 1048576)),
    (
        1572864,
        7168,
        1.4186e17,
        2.4150e36,
        294912,
        117440512,
        (1024, 1.4527e20, 2.4730e39, 29360128),
    ),
]


@pytest.mark.parametrize(
    ("d_model", "layers", "n", "c", "b_default", "b_deepseek", "sparse"), CHECK_VALUES
)
def test_model_shape_matches_spec_table(
    d_model: int,
    layers: int,
    n: float,
    c: float,
    b_default: int,
    b_deepseek: int,
    sparse: tuple[int, float, float, int],
) -> None:
    """Depth, parameters, compute and both batch laws equal spec §16.1, dense and sparse."""
    dense = model_shape(d_model, ScalingLaws())
    assert (dense.n_layers, dense.sparsity, dense.batch_seqs) == (layers, 1, b_default)
    assert dense.n_params == pytest.approx(n, rel=SHAPE_REL_TOL)
    assert dense.training_flop == pytest.approx(c, rel=SHAPE_REL_TOL)
    assert model_shape(d_model, ScalingLaws(batch=DEEPSEEK)).batch_seqs == b_deepseek
    moe = model_shape(d_model, ScalingLaws(sparse=True))
    assert (moe.sparsity, moe.batch_seqs) == (sparse[0], sparse[3])
    assert moe.n_params == pytest.approx(sparse[1], rel=SHAPE_REL_TOL)
    assert moe.training_flop == pytest.approx(sparse[2], rel=SHAPE_REL_TOL)


def test_paper_grid_has_55_sizes() -> None:
    """The default grid is the 55 widths of spec §2.2, from 12288 to 1572864."""
    grid = paper_d_model_grid()
    assert (len(grid), grid[0], grid[-1]) == (55, 12288, 1572864)


@pytest.mark.parametrize(
    ("x", "expected"),
    [(0.3, 1), (1.0, 1), (2.0, 2), (3.5, 3), (3.6, 4), (11.0, 10), (9.0, 9), (1e30, 9 * 2**59)],
)
def test_round_to_grid_nearest_smaller_on_tie(x: float, expected: int) -> None:
    """R returns the nearest element of G, the smaller on a tie, clamped at both ends."""
    assert round_to_grid(x) == expected


def test_constant_batch_ignores_experts_by_default() -> None:
    """Quirk Q7: the constant law gives 2048 sequences whatever the expert count."""
    laws = ScalingLaws(sparse=True, batch=BatchLaw(BatchLawKind.CONSTANT, exponent=0.0))
    assert model_shape(24576, laws).batch_seqs == 2048


def test_zhang_batch_grows_with_data() -> None:
    """Zhang et al. (2024): B = 17.75 · D^0.47 tokens, rounded to S · R(B / (seq_len · S))."""
    law = BatchLaw(BatchLawKind.ZHANG2024, coefficient=17.75, exponent=0.47)
    shape = model_shape(12288, ScalingLaws(batch=law))
    tokens = 17.75 * (20 * shape.n_params) ** 0.47
    assert shape.batch_seqs == round_to_grid(tokens / 2048)
    assert shape.batch_seqs > model_shape(12288, ScalingLaws()).batch_seqs


@pytest.mark.parametrize("sparse", [False, True])
def test_observed_batch_is_a_power_law_in_training_flop(sparse: bool) -> None:
    """The observed law: B = c · C^e · √S tokens, rounded to S · R(B / (seq_len · S))."""
    law = BatchLaw(BatchLawKind.OBSERVED, coefficient=1.57e-6, exponent=0.519)
    shape = model_shape(24576, ScalingLaws(sparse=sparse, batch=law))
    s = shape.sparsity
    tokens = s**0.5 * 1.57e-6 * shape.training_flop**0.519
    assert shape.batch_seqs == s * round_to_grid(tokens / (2048 * s))
    assert shape.batch_seqs > model_shape(24576, ScalingLaws(sparse=sparse)).batch_seqs
