"""A mixture-of-experts layer's router and token permutation (pipeline/model/compute/memory_ops.py
`moe_ops`; docs/model.md R.3.1)."""

from __future__ import annotations

import numpy as np

from pipeline.model.compute.layer import LayerWork, layer_times_s, layer_traffic
from pipeline.model.compute.memory_ops import MASK_BYTES, WORD_BYTES, layer_tensors, moe_ops
from pipeline.schema import compose_config, load_scenario

SCENARIO = load_scenario(compose_config(["physics=realistic"]))


def test_moe_op_bytes_by_hand() -> None:
    """8 tokens of width 4 on one GPU, 2 of 8 experts each: H = 32 hidden elements, R = 64
    routed copies, S = 64 router scores; the bytes are the docstring's kernels counted by hand."""
    one = np.ones(1)
    x = layer_tensors(8.0 * one, 4.0, 16.0, 4.0, 2.0, 8.0, (one, one, one), 2.0, 8.0)
    h, r, s = 32.0, 64.0, 64.0
    assert (x.hidden[0], x.routed[0], x.router[0]) == (h, r, s)
    w = WORD_BYTES
    expected = {
        # name: (forward bytes, backward bytes, forward kernels, backward kernels)
        "router_gemm": (w * (h + s), w * ((s + h) + (h + s) + 3 * h), 1, 3),
        "router_scores": (w * (2 * s + s + s) + MASK_BYTES * s, w * (2 * s + 3 * s), 3, 3),
        "permute": (w * (h + r), w * (h + (r + h)), 1, 2),
        "unpermute": (
            w * ((r + r) + h + (r + h)),
            w * ((h + r) + (r + r) + (2 * r + r) + r),
            3,
            4,
        ),
    }
    got = {
        op.name: (
            op.forward_bytes[0],
            op.backward_bytes[0],
            op.kernels,
            op.kernels if op.backward_kernels is None else op.backward_kernels,
        )
        for op in moe_ops(x)
    }
    assert got == expected


def test_moe_ops_split_over_sequence_parallel_ranks() -> None:
    """Megatron-Core routes and permutes each rank's sequence-parallel shard: t = 4 ways quarter
    every byte of the router and the permutation."""
    one = np.ones(1)
    whole = layer_tensors(64.0 * one, 8.0, 16.0, 8.0, 2.0, 64.0, (one, one, one), 2.0, 8.0)
    four = 4.0 * one
    split = layer_tensors(64.0 * one, 8.0, 16.0, 8.0, 2.0, 64.0, (four, four, four), 2.0, 8.0)
    for a, b in zip(moe_ops(whole), moe_ops(split), strict=True):
        assert a.forward_bytes[0] == 4.0 * b.forward_bytes[0]
        assert a.backward_bytes[0] == 4.0 * b.backward_bytes[0]


def _work(experts: float) -> LayerWork:
    one = np.ones(1)
    return LayerWork(
        hidden=4096.0 * one,
        ffn=14336.0 * one,
        kv_width=1024.0 * one,
        heads=32.0 * one,
        seq_len=4096.0 * one,
        tp_model=one,
        tp_ff=one,
        sp=one,
        tokens=8192.0 * one,
        expert_tokens=2048.0 * one,
        local_experts=one,
        mlp_matrices=3,
        top_k=2.0,
        experts=experts,
        dropout=False,
    )


def test_dense_layer_runs_no_router() -> None:
    """A dense layer (E = 1) has no router or permutation kernel; a layer of 8 experts has the
    dense layer's kernels, bytes for bytes, then those four, and takes longer."""
    hw, physics = SCENARIO.hardware, SCENARIO.physics
    dense = layer_traffic(hw, physics, _work(1.0)).ops
    moe = layer_traffic(hw, physics, _work(8.0)).ops
    assert dense is not None
    assert moe is not None
    assert len(moe.kinds) == len(dense.kinds) + 4
    assert moe.kinds[: len(dense.kinds)] == dense.kinds
    np.testing.assert_array_equal(moe.forward_bytes[: len(dense.kinds)], dense.forward_bytes)
    dense_t = layer_times_s(hw, physics, _work(1.0))
    moe_t = layer_times_s(hw, physics, _work(8.0))
    assert moe_t.matmul_forward_s[0] == dense_t.matmul_forward_s[0]
    assert moe_t.forward_s[0] > dense_t.forward_s[0]
    assert moe_t.backward_s[0] > dense_t.backward_s[0]
