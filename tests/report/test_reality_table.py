"""The report page's reality check: counts per physics and the contradictions, worst first."""

from __future__ import annotations

import polars as pl

from pipeline.forecast.reality import reality_checks, reality_dicts
from pipeline.io.rows import Provenance, table_from_rows
from pipeline.io.tables import table_spec
from pipeline.report.reality_table import reality_counts, reality_section
from pipeline.sources.epoch import ObservedRun
from tests.observed_runs import trained_run


def _run(name: str, flop: float, hours: float, hardware: str, line: int) -> ObservedRun:
    """A run on 8 accelerators of `hardware` (`tests.observed_runs.trained_run`)."""
    return trained_run(name, flop, hours, line, (hardware,))


def _reality(runs: list[ObservedRun]) -> pl.DataFrame:
    rows = reality_dicts(reality_checks(runs, physics=["paper"]), "ab" * 32, Provenance("r"))
    frame = pl.from_arrow(table_from_rows(rows, table_spec("reality").schema))
    assert isinstance(frame, pl.DataFrame)
    return frame


def test_reality_section_shows_contradictions_only() -> None:
    """A run of impossible compute is in the table; a feasible one and one on an accelerator the model cannot express are counted."""
    frame = _reality(
        [
            _run("feasible run", 1e19, 24.0, "NVIDIA H100 SXM5 80GB", 2),
            _run("impossible run", 1e26, 1.0, "NVIDIA H100 SXM5 80GB", 3),
            _run("unmapped run", 1e22, 24.0, "NVIDIA GeForce GTX 285", 4),
        ]
    )
    page = "\n".join(reality_section(frame))
    assert "impossible run" in page
    assert "feasible run" not in page.replace("impossible run", "")
    assert "unmapped run" not in page
    (counts,) = reality_counts(frame)
    assert counts.startswith("paper: 3 runs")
    assert "answers 2 (not the others: 1 no hardware preset" in counts
    assert counts.endswith(
        "contradictions: 1, 1 of them runs whose own numbers imply a utilization above 1"
    )


def test_reality_section_says_when_none() -> None:
    """Without a contradiction the section says so and draws no table."""
    page = "\n".join(reality_section(_reality([_run("ok", 1e19, 24.0, "NVIDIA V100", 2)])))
    assert "No contradictions" in page
    assert "<table>" not in page


def test_reality_section_names_catalog_hardware() -> None:
    """A contradiction on hardware built from the catalog (a TPU v4 pod) names its entry."""
    frame = _reality([_run("tpu run", 1e26, 1.0, "Google TPU v4", 2)])
    page = "\n".join(reality_section(frame))
    assert "tpu run" in page
    assert "tpu_v4" in page


def test_reality_counts_name_each_reason_the_model_gives_no_answer() -> None:
    """The runs the model does not answer are counted by their own reasons: a run on two
    accelerator kinds is not said to lack a preset."""
    mixed = trained_run(
        "mixed run", 1e22, 24.0, 3, ("NVIDIA H100 SXM5 80GB", "NVIDIA A100 SXM4 80 GB")
    )
    frame = _reality([mixed, _run("unmapped run", 1e22, 24.0, "NVIDIA GeForce GTX 285", 4)])
    (counts,) = reality_counts(frame)
    assert "answers 0 (not the others: 1 no hardware preset" in counts
    assert "; 1 several accelerator kinds: the model trains on one" in counts
