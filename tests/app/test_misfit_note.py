"""A fixed-layout series with a size its layout does not fit says which rule it breaks: its row
says only `layout_does_not_divide` (docs/model.md §7, `search.fixed.physics_misfit`)."""

from __future__ import annotations

import pipeline

SMALL = "scaling.grid.max_d_model=16384"
LAYOUT = (
    "parallelism=fixed",
    "parallelism.layout.tp_model=[1,1]",
    "parallelism.layout.tp_ff=[8,1]",
    "parallelism.layout.pp=[1,64]",
    "parallelism.layout.dp=[1,4]",
    "parallelism.layout.microbatches=32",
    "parallelism.layout.zero_bubble=false",
    "scaling.grid.max_d_model=12288",  # 64 stages divide its 192 layers, not 14336's 224
)


def notes(*overrides: str) -> list[str]:
    """The summary's note lines for these overrides."""
    text = pipeline.run([*overrides]).summary()
    return [line for line in text.splitlines() if line.startswith("note:")]


def test_a_fixed_layout_that_does_not_fit_names_the_rule() -> None:
    """32 microbatches over 64 stages: 1F1B needs m >= N_PP without `few_microbatches`, and the
    note names the first width and that rule."""
    [note] = notes(*LAYOUT, "physics=realistic", "physics.few_microbatches=false")
    assert note.startswith("note: the fixed layout does not fit series ")
    assert note.endswith("at d_model 12288: microbatches = 32: 1F1B needs m >= N_PP = 64")


def test_no_note_where_the_fixed_layout_fits() -> None:
    """With `few_microbatches` (realistic physics) the same layout runs m < N_PP: no note; nor
    for a search."""
    assert notes(*LAYOUT, "physics=realistic") == []
    assert notes("physics=realistic", SMALL) == []
