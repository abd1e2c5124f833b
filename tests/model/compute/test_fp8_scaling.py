"""physics.fp8_current_scaling (docs/model.md R.11): FP8 current scaling reads each quantized
tensor twice, delayed scaling once (Transformer Engine user guide, "FP8 Delayed Scaling"), so
each weight GEMM's input and output gradient is read once more for its amax."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.model.compute.layer import LayerWork, layer_fp8_amax_op, layer_traffic
from pipeline.model.records.switches import Precision
from pipeline.model.runs.training_run import evaluate_run
from pipeline.schema import compose_config, load_scenario
from pipeline.schema.errors import ConfigError


def _scenario(*overrides: str):  # type: ignore[no-untyped-def]
    return load_scenario(compose_config(["physics=realistic", *overrides]))


def _llama8b_work(
    tp: float, local_experts: float = 1.0, expert_tokens: float = 8192.0
) -> LayerWork:
    """A Llama 3 8B layer (h 4096, f 14,336, 8 K/V heads of 128, SwiGLU) on 8,192 tokens."""
    one = np.ones(1)
    return LayerWork(
        hidden=4096.0 * one,
        ffn=14336.0 * one,
        kv_width=1024.0 * one,
        heads=32.0 * one,
        seq_len=8192.0 * one,
        tp_model=one,
        tp_ff=tp * one,
        sp=tp * one,
        tokens=8192.0 * one,
        expert_tokens=expert_tokens * one,
        local_experts=local_experts * one,
        mlp_matrices=3,
    )


def test_amax_pass_reads_every_gemm_input_and_output_gradient_once() -> None:
    """At t = 2 a GPU's GEMMs take, per token, the QKV input h, the projection input h/2, the
    up-and-gate input h and the down input f/2 (forward), and the output gradients (h + 2kv)/2,
    h, 2f/2 and h (backward); each element is read once more at 2 bytes, one kernel a matrix."""
    physics = _scenario("hardware=h100_sxm", "physics.precision=fp8").physics
    op = layer_fp8_amax_op(physics, _llama8b_work(2.0))
    h, kv, f, tokens = 4096.0, 1024.0, 14336.0, 8192.0
    inputs = tokens * (h + h / 2 + h + f / 2)
    grads = tokens * ((h + 2 * kv) / 2 + h + 2 * f / 2 + h)
    assert op.forward_bytes[0] == 2.0 * inputs
    assert op.backward_bytes[0] == 2.0 * grads
    assert op.kernels == 4


def test_amax_pass_of_experts_counts_every_local_experts_tokens() -> None:
    """Four local experts of 2,048 routed tokens each read what one MLP of 8,192 tokens reads:
    the MLP's part of the pass counts the tokens of all the GPU's experts."""
    physics = _scenario("hardware=h100_sxm", "physics.precision=fp8").physics
    dense = layer_fp8_amax_op(physics, _llama8b_work(1.0))
    experts = layer_fp8_amax_op(physics, _llama8b_work(1.0, 4.0, 2048.0))
    assert experts.forward_bytes[0] == dense.forward_bytes[0]
    assert experts.backward_bytes[0] == dense.backward_bytes[0]


def test_current_scaling_adds_the_pass_to_the_layers_kernels_only_under_fp8() -> None:
    """The layer's memory-bound kernels gain the pass under FP8 GEMMs with the switch, and not
    with BF16 GEMMs (where the switch is refused as inert)."""
    s = _scenario("hardware=h100_sxm", "physics.precision=fp8", "physics.fp8_current_scaling=true")
    work = _llama8b_work(2.0)
    delayed = dataclasses.replace(s.physics, fp8_current_scaling=False)
    with_pass = layer_traffic(s.hardware, s.physics, work).ops
    without = layer_traffic(s.hardware, delayed, work).ops
    assert with_pass is not None
    assert without is not None
    assert len(with_pass.kinds) == len(without.kinds) + 1
    op = layer_fp8_amax_op(s.physics, work)
    assert with_pass.forward_bytes[-1, 0] == op.forward_bytes[0]
    bf16 = dataclasses.replace(s.physics, precision=Precision.BF16)
    plain = layer_traffic(s.hardware, bf16, work).ops
    assert plain is not None
    assert len(plain.kinds) == len(without.kinds)


def test_current_scaling_alone_is_refused_and_inert_beside_bf16() -> None:
    """Alone on the paper's model the switch could only take it off its code path: refused, as
    `fp8_params` is. Beside realistic BF16 physics it is accepted and changes no layer."""
    with pytest.raises(ConfigError, match="fp8_current_scaling"):
        load_scenario(compose_config(["physics.fp8_current_scaling=true"]))
    s = _scenario("hardware=h100_sxm", "physics.fp8_current_scaling=true")
    work = _llama8b_work(2.0)
    off = dataclasses.replace(s.physics, fp8_current_scaling=False)
    on, plain = (
        layer_traffic(s.hardware, s.physics, work).ops,
        layer_traffic(s.hardware, off, work).ops,
    )
    assert on is not None
    assert plain is not None
    assert on.kinds == plain.kinds
    assert (on.forward_bytes == plain.forward_bytes).all()


def test_current_scaling_slows_an_fp8_run_by_its_memory_bound_time_only() -> None:
    """Llama 3 405B's 8K run in FP8 on 8,192 H100s: current scaling leaves its matmuls, its
    attention and its communication as they are and lengthens its element-wise kernels."""
    s = _scenario("run=llama3_405b_8k_8192", "physics.precision=fp8")
    assert s.run is not None
    delayed = evaluate_run(s.hardware, s.physics, s.run)
    current = evaluate_run(
        s.hardware, dataclasses.replace(s.physics, fp8_current_scaling=True), s.run
    )
    assert current.t_matmul_s == delayed.t_matmul_s
    assert current.t_attention_s == delayed.t_attention_s
    assert current.t_tp_comm_s == delayed.t_tp_comm_s
    assert current.t_elementwise_s is not None
    assert delayed.t_elementwise_s is not None
    assert current.t_elementwise_s > delayed.t_elementwise_s
    assert current.step_time_s > delayed.step_time_s
