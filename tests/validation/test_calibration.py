"""The leave-one-source-out calibration (docs/validation.md): how a fit picks its constants,
and that the generated block of docs/validation.md is what the model gives today."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.model.records.run import RunLayout, RunSpec
from pipeline.model.records.transformer import TransformerShape
from tests.validation import calibration
from tests.validation.calibration import (
    KORTHIKANTI,
    KORTHIKANTI_MEAN_TOLERANCE,
    NARAYANAN,
    Grid,
    fit_pair_per_hardware,
    fit_per_hardware,
    within_tolerances,
)
from tests.validation.modern_runs import Measured, modern_runs

_RUN = RunSpec("tiny", TransformerShape(2, 64, 256, 4, 4, 0, 128), 8, RunLayout(1, 1, 8, 1))


def _measured(source: str, gpu: str) -> Measured:
    return Measured(source, source, (f"hardware={gpu}",), (), _RUN, 1.0, "bf16")


def test_calibration_fit_weights_sources_alike() -> None:
    """A source of many runs pulls a shared fit no harder than a source of one run."""
    obs = (*[_measured("many", "a100_sxm") for _ in range(9)], _measured("one", "a100_sxm"))
    errors = np.zeros((2, 1, 10))
    errors[0, 0, :9] = 0.10  # grid point 0: the nine runs 10% off, the single run exact
    errors[1, 0, 9] = 0.30  # grid point 1: the nine runs exact, the single run 30% off
    assert Grid(obs, errors).fit(["many", "one"]) == (0, 0)


def test_calibration_fit_per_hardware_gives_each_gpu_its_matmul() -> None:
    """Fitting matmul per GPU generation lets A100 and H100 sources take different points."""
    obs = (_measured("old", "a100_sxm"), _measured("new", "h100_sxm"))
    errors = np.ones((3, 2, 2))
    errors[0, 1, 0] = 0.0  # A100's run exact at matmul point 0, network point 1
    errors[2, 1, 1] = 0.0  # H100's run exact at matmul point 2, network point 1
    fit = fit_per_hardware(Grid(obs, errors), ["old", "new"])
    assert fit == {"a100": (0, 1), "h100": (2, 1)}


def test_calibration_fit_pair_per_hardware_gives_each_gpu_its_network() -> None:
    """Fitting both constants per GPU generation lets A100 and H100 take different networks."""
    obs = (_measured("old", "a100_sxm"), _measured("new", "h100_sxm"))
    errors = np.ones((3, 2, 2))
    errors[0, 1, 0] = 0.0  # A100's run exact at matmul point 0, network point 1
    errors[2, 0, 1] = 0.0  # H100's run exact at matmul point 2, network point 0
    fit = fit_pair_per_hardware(Grid(obs, errors), ["old", "new"])
    assert fit == {"a100": (0, 1), "h100": (2, 0)}


def test_calibration_within_tolerances_holds_each_tolerance() -> None:
    """A grid point is allowed only where Narayanan's teraFLOP/s and Korthikanti's large runs
    both keep their tolerances; Korthikanti's 22B is not held to them."""
    named = [
        dataclasses.replace(
            _measured(source, "a100_sxm_80gb"), run=dataclasses.replace(_RUN, name=n)
        )
        for source, n in ((NARAYANAN, "GPT"), (KORTHIKANTI, "175B"), (KORTHIKANTI, "22B"))
    ]
    errors = np.zeros((3, 1, 3))
    errors[:, 0, 2] = 0.5  # the 22B 50% off everywhere: not held to the tolerances
    errors[1, 0, 0] = -0.2  # Narayanan's run 20% fast: its teraFLOP/s 25% high
    errors[2, 0, 1] = KORTHIKANTI_MEAN_TOLERANCE + 0.01  # the 175B slow past the mean allowed
    assert within_tolerances(Grid(tuple(named), errors)) == [(0, 0)]


@pytest.mark.slow
def test_calibration_block_matches_the_model() -> None:
    """docs/validation.md's calibration block is what `make validation` writes today."""
    current = calibration.VALIDATION_MD.read_text("utf-8")
    assert calibration.validation_md(current) == current, "run `make validation` and commit"


def test_calibration_rule_overrides_reach_every_run() -> None:
    """A rule's overrides are added to each run's physics, so its runs are timed with the rule."""
    gpt = next(m for m in modern_runs() if m.label.startswith("m2-007"))  # t = p = 1, d = 48
    (one,) = calibration.with_overrides([gpt], ("physics.nic_striping=false",))
    (striped,) = calibration.with_overrides([gpt], ("physics.nic_striping=true",))
    _, physics = calibration.scenario_of((*striped.hardware, *striped.physics))
    assert physics.nic_striping
    before = calibration.step_errors([one], None, None)
    after = calibration.step_errors([striped], None, None)
    assert after[0] < before[0]  # 48 ranks on 6 nodes: its gradient ring stripes over 8 NICs
