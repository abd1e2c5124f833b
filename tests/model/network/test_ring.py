"""Collectives of one group and ring attention's exchange (pipeline/model/network/ring.py; docs/model.md R.5)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.model.network.ring import ring_exchange_s
from pipeline.model.records.transformer import TransformerShape
from tests.presets import preset

TINY = TransformerShape(layers=2, hidden=4, ffn_hidden=16, heads=2, kv_heads=2, vocab=10, seq_len=8)


def test_ring_attention_kv_exchange_tiny_run() -> None:
    """c = 4, t = 1, b = 2, s = 8, h_kv = 1·2 (d_head 2): 2·(3/4)·2·8·2 words of 2 B = 96 B,
    at half the level's bidirectional bandwidth, plus 3 hops (Liu et al. 2023)."""
    hw = preset("h100_sxm")
    shape = dataclasses.replace(TINY, kv_heads=1)
    level = 0  # 4 GPUs fit in the 8-GPU node
    bw = hw.net_bandwidth_bytes_per_s[level] / 2.0
    expected = 96.0 / bw + 3 * hw.net_latency_s[level]
    one = np.ones(1)
    link = (hw.net_bandwidth_bytes_per_s[level] * one, hw.net_latency_s[level] * one)
    tokens = 2 * 8 / 4 * one  # b·s/c
    got = ring_exchange_s(tokens, float(shape.kv_width), one, 4 * one, *link)
    assert got[0] == pytest.approx(expected, rel=1e-12)
    assert ring_exchange_s(tokens, float(shape.kv_width), one, one, *link)[0] == 0.0
