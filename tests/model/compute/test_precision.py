"""physics.precision (docs/model.md R.11): FP8 weight GEMMs at the catalog's FP8 peak, the rest
of a step as under BF16."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.model.compute.efficiency import precision_speedup
from pipeline.model.compute.flop import layer_weight_params
from pipeline.model.memory.gpu_memory import (
    activation_bytes_per_layer,
    fp8_input_savings_bytes_per_layer,
)
from pipeline.model.records.switches import Precision, Recompute
from pipeline.model.runs.training_run import evaluate_run
from pipeline.schema import compose_config, load_scenario

FP8_OVER_BF16_H100 = 1979.0 / 989.4
"""H100 SXM datasheet: 1,979 dense FP8 TFLOP/s against 989.4 dense BF16 (conf/hardware/h100_sxm.yaml)."""

MAMF_FP8_OVER_BF16 = {
    "h100_sxm": 1402.6 / 794.5,
    "b200": 3432.5 / 1745.0,
    "gb200_nvl72": 3615.6 / 1822.0,
}
"""Each GPU's maximum achievable matmul FLOPS, FP8 over BF16, in TFLOP/s (Bekman, *Machine
Learning Engineering*, the MAMF tables; docs/model.md R.11)."""


def _scenario(*overrides: str):  # type: ignore[no-untyped-def]
    return load_scenario(compose_config(["physics=realistic", *overrides]))


@pytest.mark.parametrize("name", sorted(MAMF_FP8_OVER_BF16))
def test_precision_fp8_speedup_is_the_measured_matmul_ratio(name: str) -> None:
    """Under fp8 a GPU's layer GEMMs run faster by its sustained FP8 matmul rate over its BF16
    one (the MAMF tables' ratio, to the preset's three digits: 1.77 on H100, 1.97 and 1.98 on
    B200 and GB200), not by its datasheet peaks' ratio of 2."""
    s = _scenario(f"hardware={name}", "physics.precision=fp8")
    assert s.physics.precision is Precision.FP8
    speedup = precision_speedup(s.hardware, s.physics)
    assert abs(speedup / MAMF_FP8_OVER_BF16[name] - 1.0) < 2e-3


def test_precision_fp8_speedup_without_a_ratio_is_the_datasheet_ratio() -> None:
    """A preset without `fp8_u_eff_ratio` takes the peaks' ratio (H100: 1,979 over 989.4)."""
    s = _scenario("hardware=h100_sxm", "physics.precision=fp8")
    unset = dataclasses.replace(s.hardware, fp8_u_eff_ratio=None)
    assert abs(precision_speedup(unset, s.physics) / FP8_OVER_BF16_H100 - 1.0) < 1e-3


def test_precision_bf16_and_pre_hopper_gpus_have_no_speedup() -> None:
    """BF16 anywhere, and FP8 on an A100 (no FP8 tensor cores), keep the 16-bit rate."""
    assert precision_speedup(*_pair("hardware=h100_sxm")) == 1.0
    assert precision_speedup(*_pair("hardware=a100_sxm_80gb", "physics.precision=fp8")) == 1.0


def _pair(*overrides: str):  # type: ignore[no-untyped-def]
    s = _scenario(*overrides)
    return s.hardware, s.physics


def test_precision_fp8_shortens_only_the_layer_gemms() -> None:
    """An FP8 run's layer matmuls take less time than BF16's; its attention core does not change."""
    s = _scenario("hardware=h100_sxm", "run=llama3_405b_8k_8192", "physics.fusion=flash")
    assert s.run is not None
    bf16 = evaluate_run(s.hardware, s.physics, s.run)
    fp8_physics = dataclasses.replace(s.physics, precision=Precision.FP8)
    fp8 = evaluate_run(s.hardware, fp8_physics, s.run)
    assert fp8.t_matmul_s < 0.6 * bf16.t_matmul_s
    assert fp8.t_attention_s == bf16.t_attention_s
    assert fp8.step_time_s < bf16.step_time_s


def test_precision_fp8_is_not_the_paper_model() -> None:
    """The paper's physics with fp8 alone is no longer the paper's model."""
    s = _scenario("physics=paper", "physics.precision=fp8")
    assert not s.physics.is_paper


def test_precision_fp8_peaks_reach_catalog_and_hardware_record() -> None:
    """H100-class presets carry an FP8 peak into their record; A100 carries none."""
    assert _scenario("hardware=h200_sxm").hardware.fp8_flop_per_s == 1979e12
    assert _scenario("hardware=gb200_nvl72").hardware.fp8_flop_per_s == 5000e12
    assert _scenario("hardware=a100_sxm").hardware.fp8_flop_per_s is None


def test_precision_fp8_input_savings_of_a_gpt_layer() -> None:
    """A GPT layer (f = 4h) saves 7h bytes a token on one GPU: the two norm outputs, the
    projection input and the GeLU output at 1 byte; nothing under full recomputation."""
    one = np.ones(1)
    tokens, h = 4096.0 * one, 1024.0
    saved = fp8_input_savings_bytes_per_layer(tokens, h, 4 * h, (one, one), Recompute.NONE)
    assert saved[0] == 7.0 * h * 4096.0
    stored = activation_bytes_per_layer(tokens, h, 16.0, 4096.0, (one, one), Recompute.NONE, False)
    assert saved[0] < stored[0]
    full = fp8_input_savings_bytes_per_layer(tokens, h, 4 * h, (one, one), Recompute.FULL)
    assert full[0] == 0.0


def test_precision_fp8_run_holds_its_weight_copies() -> None:
    """An FP8 run on H100 with full recomputation (no FP8 activation savings) holds exactly 2
    bytes more per layer parameter; on an A100 (no FP8 peak) its memory is the BF16 run's."""
    for gpu, changes in (("h100_sxm", True), ("a100_sxm_80gb", False)):
        s = _scenario(f"hardware={gpu}", "run=gpt_1p7b", "physics.fusion=flash")
        assert s.run is not None
        bf16 = evaluate_run(s.hardware, s.physics, s.run)
        fp8_physics = dataclasses.replace(s.physics, precision=Precision.FP8)
        fp8 = evaluate_run(s.hardware, fp8_physics, s.run)
        if changes:
            shape = s.run.shape
            copies = 2.0 * shape.layers * layer_weight_params(shape)  # t = 1, one stage
            assert s.run.layout.recompute is Recompute.FULL
            assert fp8.memory_per_gpu_bytes - bf16.memory_per_gpu_bytes == copies
        else:
            assert fp8.memory_per_gpu_bytes == bf16.memory_per_gpu_bytes
