"""A run that turns an extension on beside `physics=paper` says it left the paper's model: any
extension times the grid by Part II's (docs/model.md, Part II), so its limits are not the
paper's with that one switch."""

from __future__ import annotations

import pipeline
from pipeline.app.tally import extensions_beside_paper
from pipeline.schema import compose_config, load_scenario

SMALL = "scaling.grid.max_d_model=16384"


def notes(*overrides: str) -> list[str]:
    """The summary's note lines for these overrides."""
    text = pipeline.run([*overrides, SMALL]).summary()
    return [line for line in text.splitlines() if line.startswith("note:")]


def test_an_extension_beside_the_paper_is_noted_by_name() -> None:
    """FP8 alone under `physics=paper` runs Part II's model, and the note names the switch."""
    (note,) = notes("physics.precision=fp8")
    assert note.startswith("note: physics=paper with physics.precision is not the paper's model")


def test_no_note_for_the_paper_or_the_realistic_preset() -> None:
    """The paper's model itself, and the realistic preset (whose name says it is not the
    paper's), print no such note."""
    assert notes() == []
    assert not any("physics=paper with" in n for n in notes("physics=realistic"))


def test_extensions_beside_paper_lists_every_switch_set() -> None:
    """Each field set away from the paper's values, in field order; none for the presets."""
    physics = load_scenario(
        compose_config(["physics.gemm_waves=true", "physics.attention=true"])
    ).physics
    assert extensions_beside_paper(physics) == ("attention", "gemm_waves")
    assert extensions_beside_paper(load_scenario(compose_config([])).physics) == ()
    realistic = load_scenario(compose_config(["physics=realistic"])).physics
    assert extensions_beside_paper(realistic) == ()
