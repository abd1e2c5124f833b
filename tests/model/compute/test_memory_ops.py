"""Memory-bound operators and the optimizer step (pipeline/model/compute/memory_ops.py; docs/model.md R.3)."""

from __future__ import annotations

import numpy as np

from pipeline.model.compute.memory_ops import layer_tensors, layernorm_ops, optimizer_step_bytes


def test_layernorm_bytes_tiny_microbatch() -> None:
    """A LayerNorm over 8 tokens x 4: forward reads and writes 32 16-bit values (128 B), backward 192 B."""
    one = np.ones(1)
    x = layer_tensors(8.0 * one, 4.0, 16.0, 4.0, 2.0, 8.0, (one, one, one))
    norm = layernorm_ops(x)[0]
    assert (norm.forward_bytes[0], norm.backward_bytes[0]) == (128.0, 192.0)


def test_optimizer_step_bytes_per_param() -> None:
    """The Adam step moves 30 B per parameter (16 read, 12 + 2 written)."""
    assert optimizer_step_bytes(np.ones(1))[0] == 30.0
