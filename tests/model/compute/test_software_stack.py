"""physics.stack (docs/model.md R.9): the software generation whose GEMM efficiency realistic
physics reads, 2024 (`efficiency.matmul` on every GPU) or 2025 (a GPU's own
`hardware.matmul_speedup_2025` where its preset gives one)."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.model.compute.efficiency import matmul_efficiency
from pipeline.model.runs.training_run import evaluate_run
from pipeline.model.search.counts import matmul_rate_flop_per_s
from pipeline.schema import compose_config, load_scenario
from pipeline.schema.errors import ConfigError


def _scenario(*overrides: str):  # type: ignore[no-untyped-def]
    return load_scenario(compose_config(["physics=realistic", *overrides]))


def test_realistic_runs_the_2025_stack_and_the_paper_none() -> None:
    """Realistic physics is today's software; the paper's model reads no efficiency."""
    assert _scenario().physics.stack == 2025
    assert load_scenario(compose_config([])).physics.stack == 2024


@pytest.mark.parametrize("hardware", ["h100_sxm", "h200_sxm", "h100_superpod"])
def test_the_2025_stack_speeds_the_h100_familys_gemms_by_its_own_factor(hardware: str) -> None:
    """H100 and the presets composing it (the same die) run their GEMMs at `efficiency.matmul`
    times their 2025 speedup under 2025, at `efficiency.matmul` under 2024."""
    new, old = (
        _scenario(f"hardware={hardware}"),
        _scenario(f"hardware={hardware}", "physics.stack=2024"),
    )
    speedup = new.hardware.matmul_speedup_2025
    assert speedup is not None
    assert speedup > 1.0
    base = new.physics.efficiency.matmul
    assert matmul_efficiency(new.hardware, new.physics) == base * speedup
    assert matmul_efficiency(old.hardware, old.physics) == old.physics.efficiency.matmul


def test_efficiency_matmul_moves_every_gpus_gemms_under_either_stack() -> None:
    """`efficiency.matmul` is the one knob of the GEMM rate: a sweep over it moves H100's
    GEMMs under the 2025 stack too (the speedup multiplies it)."""
    low = _scenario("physics.efficiency.matmul=0.7")
    high = _scenario("physics.efficiency.matmul=0.8")
    ratio = matmul_efficiency(high.hardware, high.physics) / matmul_efficiency(
        low.hardware, low.physics
    )
    assert ratio == pytest.approx(0.8 / 0.7, rel=1e-12)


@pytest.mark.parametrize("hardware", ["a100_sxm_80gb", "b200", "gb200_nvl72", "h100_pcie"])
def test_a_gpu_without_a_2025_efficiency_runs_efficiency_matmul_under_either_stack(
    hardware: str,
) -> None:
    """No preset value: both stacks give the same rate, the 2021-2024 fit's."""
    new, old = (
        _scenario(f"hardware={hardware}"),
        _scenario(f"hardware={hardware}", "physics.stack=2024"),
    )
    assert new.hardware.matmul_speedup_2025 is None
    assert matmul_efficiency(new.hardware, new.physics) == new.physics.efficiency.matmul
    assert matmul_rate_flop_per_s(new.hardware, new.physics) == matmul_rate_flop_per_s(
        old.hardware, old.physics
    )


def test_the_2025_stack_speeds_the_gemms_and_the_attention_core_alike() -> None:
    """A compute-bound run's matmul and attention times fall by the ratio of the two
    efficiencies, and its rate floor rises by it (`matmul_rate_flop_per_s`)."""
    new = _scenario("run=llama3_405b_8k_8192")
    old = _scenario("run=llama3_405b_8k_8192", "physics.stack=2024")
    ratio = new.hardware.matmul_speedup_2025
    a = evaluate_run(new.hardware, new.physics, new.run)
    b = evaluate_run(old.hardware, old.physics, old.run)
    assert a.t_attention_s is not None
    assert b.t_attention_s is not None
    assert a.t_attention_s == pytest.approx(b.t_attention_s / ratio, rel=0.02)
    assert a.t_matmul_s < b.t_matmul_s
    assert a.step_time_s < b.step_time_s
    rates = (
        matmul_rate_flop_per_s(new.hardware, new.physics),
        matmul_rate_flop_per_s(old.hardware, old.physics),
    )
    assert rates[0] / rates[1] == pytest.approx(ratio, rel=1e-12)


def test_a_preset_without_the_key_and_a_cleared_one_agree() -> None:
    """`hardware.matmul_speedup_2025=null` is a GPU without one."""
    cleared = _scenario("hardware.matmul_speedup_2025=null")
    assert cleared.hardware.matmul_speedup_2025 is None
    plain = dataclasses.replace(_scenario().hardware, matmul_speedup_2025=None)
    assert cleared.hardware == plain


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["physics.stack=2023"], "must be one of: 2024, 2025"),
        (["physics.stack=true"], "must be one of: 2024, 2025"),
        (["hardware.matmul_speedup_2025=2.5"], "matmul_speedup_2025"),
        (["hardware.matmul_speedup_2025=0"], "matmul_speedup_2025"),
    ],
)
def test_a_bad_stack_or_efficiency_is_refused(overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _scenario(*overrides)


def test_the_paper_refuses_the_2025_stack() -> None:
    """The paper's model reads no efficiency: a 2025 stack there would change nothing."""
    with pytest.raises(ConfigError, match="reads no efficiency") as info:
        load_scenario(compose_config(["physics.stack=2025"]))
    assert info.value.key == "physics.stack"
