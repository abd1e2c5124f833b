"""Transformer FLOP of a layer, a step and recomputation (pipeline/model/compute/flop.py; docs/model.md R.1)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.model.compute.flop import (
    attention_core_forward_flop,
    flop_per_step,
    hardware_flop_per_step,
    linear_forward_flop,
    model_params,
    narayanan_flop_per_step,
)
from pipeline.model.records.switches import Physics, Recompute
from pipeline.model.records.transformer import Mlp, TransformerShape

TINY = TransformerShape(layers=2, hidden=4, ffn_hidden=16, heads=2, kv_heads=2, vocab=10, seq_len=8)


shapes = st.builds(
    TransformerShape,
    layers=st.integers(1, 64),
    hidden=st.sampled_from([512, 1024, 4096]),
    ffn_hidden=st.sampled_from([2048, 4096, 16384]),
    heads=st.sampled_from([8, 16]),
    kv_heads=st.sampled_from([1, 8]),
    vocab=st.integers(1000, 200_000),
    seq_len=st.sampled_from([512, 2048, 8192]),
    mlp=st.sampled_from(list(Mlp)),
)


SEARCH_MODES = (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)


def test_linear_forward_flop_tiny_layer() -> None:
    """h=4, f=16: QKV 4·12 + out 16 + MLP 2·4·16 = 192 weights; 8 tokens give 2·8·192 FLOP."""
    assert linear_forward_flop(TINY, 8.0) == 2 * 8 * (4 * 12 + 16 + 2 * 4 * 16)


def test_linear_forward_flop_grouped_query_and_swiglu() -> None:
    """One K/V head of width 2 and SwiGLU: QKV 4·(4+4) + out 16 + MLP 3·4·16 = 240 weights."""
    shape = dataclasses.replace(TINY, kv_heads=1, mlp=Mlp.SWIGLU)
    assert linear_forward_flop(shape, 1.0) == 2 * (4 * 8 + 16 + 3 * 4 * 16)


def test_attention_core_forward_flop_tiny_layer() -> None:
    """QK^T and AV on 8 tokens of a length-8 sequence, h=4: 2 · 2 · 8 · 8 · 4 FLOP."""
    assert attention_core_forward_flop(TINY, 8.0) == 4 * 8 * 8 * 4


def test_narayanan_eq3_equals_full_recompute_hardware_flop() -> None:
    """For ffn = 4h, eq. (3) of Narayanan et al. 2021 is the hardware count under full recompute."""
    shape = TransformerShape(24, 2304, 4 * 2304, 24, 24, 51200, 2048)
    ours = hardware_flop_per_step(shape, 512, Recompute.FULL)
    assert ours == pytest.approx(narayanan_flop_per_step(shape, 512), rel=1e-12)


@given(shapes, st.integers(1, 4096))
def test_recompute_never_lowers_hardware_flop(shape: TransformerShape, batch: int) -> None:
    """Hardware FLOP grow from none to selective to full recomputation."""
    none, sel, full = (hardware_flop_per_step(shape, batch, m) for m in SEARCH_MODES)
    assert none <= sel <= full


ATTENTION = Physics(attention=True)
LLAMA3_405B = TransformerShape(
    layers=126,
    hidden=16384,
    ffn_hidden=53248,
    heads=128,
    kv_heads=8,
    vocab=128256,
    seq_len=8192,
    mlp=Mlp.SWIGLU,
    dropout=False,
    tied_embeddings=False,
)
"""Llama 3 405B as Llama Team 2024 (arXiv:2407.21783) Table 3 gives it; separate output layer."""


def test_model_params_separate_output_layer_adds_one_embedding() -> None:
    """A separate output layer adds exactly one V x h matrix to the tied model's count."""
    untied = dataclasses.replace(TINY, tied_embeddings=False)
    extra = model_params(ATTENTION, untied) - model_params(ATTENTION, TINY)
    assert extra == TINY.vocab * TINY.hidden


def test_model_params_llama3_405b_counts_its_published_size() -> None:
    """Llama 3 405B counts its published 405B parameters (Llama Team 2024, Table 3) to 0.25%
    (405.85e9); with the output layer tied it would count 403.75e9, 0.31% short."""
    assert model_params(ATTENTION, LLAMA3_405B) == pytest.approx(405e9, rel=2.5e-3)
    tied = model_params(ATTENTION, dataclasses.replace(LLAMA3_405B, tied_embeddings=True))
    assert model_params(ATTENTION, LLAMA3_405B) - tied == pytest.approx(128256 * 16384)


def test_model_params_without_attention_is_the_papers_count() -> None:
    """Without `physics.attention` a dense model counts the paper's N = 2·h·f·L of its MLPs
    (no embedding); with it L · layer weights + V·h: h=4, f=16, L=2, V=10 gives 2·192 + 40."""
    assert model_params(Physics(), TINY) == 2 * 4 * 16 * 2
    assert model_params(Physics(attention=True), TINY) == 2 * 192 + 10 * 4


def test_flop_per_step_without_attention_is_six_n_per_token() -> None:
    """Without attention a step's model FLOP is 6 · (top_k MLP weights) · L · B·s, and full
    recomputation adds a third forward (4/3) to the hardware count."""
    modes = np.array([0, 2], dtype=np.int64)  # none, full
    model, hardware = flop_per_step(Physics(), TINY, 3, modes)
    assert model == 6.0 * (2 * 4 * 16) * 2 * 3 * 8
    assert hardware.tolist() == [model, model * 4.0 / 3.0]
