"""A run whose grid series asked for FP8 GEMMs of a GPU without an FP8 peak says so: accepted
beside other extensions, the switch changed nothing there (docs/model.md R.11)."""

from __future__ import annotations

import pipeline

SMALL = "scaling.grid.max_d_model=16384"
FP8 = ("physics=realistic", "physics.precision=fp8", SMALL)


def notes(*overrides: str) -> list[str]:
    """The summary's note lines for these overrides."""
    text = pipeline.run([*overrides]).summary()
    return [line for line in text.splitlines() if line.startswith("note:")]


def test_fp8_on_a_gpu_without_an_fp8_peak_is_noted() -> None:
    """A100 has no FP8 peak: its series ran 16-bit GEMMs, and the note names it alone in a sweep
    that also holds H100, whose GEMMs ran FP8."""
    assert notes("hardware=a100_sxm", *FP8) == [
        "note: physics.precision=fp8 on a100_sxm, without an FP8 peak: those series ran 16-bit "
        "GEMMs (docs/model.md R.11)"
    ]
    both = notes("+sweep.choices.hardware=[a100_sxm,h100_sxm]", *FP8)
    assert len(both) == 1
    assert "on a100_sxm, without" in both[0]


def test_no_note_where_fp8_acts_or_is_not_asked() -> None:
    """H100 runs FP8 GEMMs under the switch, and 16-bit runs ask for nothing: no note."""
    assert notes("hardware=h100_sxm", *FP8) == []
    assert notes("hardware=a100_sxm", "physics=realistic", SMALL) == []
