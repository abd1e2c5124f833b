"""A run whose rows a reproduced quirk decides says so in a warning line (docs/model.md §11)."""

from __future__ import annotations

from pathlib import Path

import pipeline

SMALL = "scaling.grid.max_d_model=65536"


def warnings(*overrides: str) -> list[str]:
    """The summary's warning lines for these overrides."""
    text = pipeline.run([*overrides, SMALL]).summary()
    return [line for line in text.splitlines() if line.startswith("warning:")]


def test_quirk_q1_deciding_rows_prints_a_warning_with_the_latency_it_hid() -> None:
    """At 100 µs of network latency, inside the plausible range, zero-bubble layouts drop
    latency: one warning names quirk Q1, the latency dropped and the switch that charges it."""
    result = pipeline.run(["hardware.network.latency_us=[100,100]", SMALL])
    lines = [line for line in result.summary().splitlines() if line.startswith("warning:")]
    worst = result.points["q1_latency_hidden_s"].max()
    assert len(lines) == 1
    assert "quirk Q1" in lines[0]
    assert f"up to {worst:.3g} s" in lines[0]
    assert "zb_hides_latency_correctly=true" in lines[0]


def test_quirk_q1_warning_is_absent_where_it_decides_nothing() -> None:
    """At the default latency, and with Q1 off, no row is decided by it: no warning."""
    assert warnings() == []
    assert (
        warnings(
            "hardware.network.latency_us=[100,100]",
            "parallelism.quirks.zb_hides_latency_correctly=true",
        )
        == []
    )


def test_quirk_q1_warning_counts_the_series_a_resumed_run_read_back(tmp_path: Path) -> None:
    """A rerun into the same root resumes every series from the dataset; its summary warns of
    the same Q1 rows as the run that evaluated them, read back from `points`."""
    overrides = ["hardware.network.latency_us=[100,100]", SMALL]
    first = pipeline.run(overrides, write=True, root=tmp_path)
    again = pipeline.run([*overrides, "output.resume=true"], write=True, root=tmp_path)
    assert again.report.tally.resumed == again.report.tally.series > 0
    lines = [r.summary().splitlines() for r in (first, again)]
    warned = [[line for line in text if line.startswith("warning:")] for text in lines]
    assert len(warned[0]) == 1
    assert warned[1] == warned[0]
