"""The change report names the observed runs the model contradicts (the `reality` table)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path

from pipeline.forecast.reality import reality_checks, reality_dicts
from pipeline.io.parquet import write_run_parts
from pipeline.io.rows import Provenance, table_from_rows
from pipeline.io.tables import table_spec
from pipeline.model.records.hardware import peak_flop_per_s
from pipeline.nightly.changes import compare_dates, render_markdown, report_json
from pipeline.nightly.partition import date_dir
from pipeline.nightly.reality import Contradiction, contradiction_summary
from pipeline.schema.projected import preset_spec
from pipeline.sources.epoch import ObservedRun
from tests.observed_runs import trained_run

D1, D2 = dt.date(2025, 1, 1), dt.date(2025, 1, 2)


def _write_reality(root: Path, run_date: dt.date, runs: list[ObservedRun]) -> None:
    rows = reality_dicts(reality_checks(runs, physics=["paper"]), "ab" * 32, Provenance(run_id="r"))
    table = table_from_rows(rows, table_spec("reality").schema)
    write_run_parts(date_dir(root, run_date), [("reality", table)])


def test_changes_name_contradicted_runs_new_ones_marked(tmp_path: Path) -> None:
    """A run of impossible compute for its hours is named with its physics; new on its first date."""
    tiny = trained_run("tiny", 1e19, 24.0, 2)
    impossible = trained_run("impossible", 1e26, 1.0, 3)
    _write_reality(tmp_path, D1, [tiny, impossible])
    _write_reality(tmp_path, D2, [tiny, impossible, trained_run("also impossible", 1e27, 1.0, 4)])
    report = compare_dates(tmp_path, D2)
    named = {(c.model, c.physics, c.new) for c in report.contradictions}
    assert named == {("impossible", "paper", False), ("also impossible", "paper", True)}
    markdown = render_markdown(report)
    assert "## Contradictions" in markdown
    assert "NEW paper: also impossible" in markdown
    assert "tiny" not in markdown
    data = report_json(report)
    assert [c["model"] for c in data["contradictions"]] == ["also impossible", "impossible"]


def test_changes_first_date_lists_contradictions(tmp_path: Path) -> None:
    """The first date under a root has nothing to compare, yet names its contradictions."""
    _write_reality(tmp_path, D1, [trained_run("impossible", 1e26, 1.0, 2)])
    markdown = render_markdown(compare_dates(tmp_path, D1))
    assert "nothing to compare" in markdown
    assert "NEW paper: impossible" in markdown


def test_contradiction_summary_counts_per_physics_and_new(tmp_path: Path) -> None:
    """The printed line counts contradictions per physics, how many are new, and how many
    state more compute than their accelerators deliver at peak (implied utilization above 1).
    The run at 0.95 of the H100's peak on 1,000 GPUs is the model's alone: the paper's
    powers-of-two clusters need 2,048 (more than twice), though its numbers are possible."""
    peak = peak_flop_per_s(preset_spec("h100_sxm"))
    near = trained_run("near peak", 0.95 * 1000 * peak * 24 * 3600.0, 24.0, 4, n_gpu=1000)
    _write_reality(tmp_path, D1, [trained_run("impossible", 1e26, 1.0, 2)])
    _write_reality(
        tmp_path,
        D2,
        [trained_run("impossible", 1e26, 1.0, 2), trained_run("b", 1e27, 1.0, 3), near],
    )
    report = compare_dates(tmp_path, D2)
    assert {c.model for c in report.contradictions} == {"impossible", "b", "near peak"}
    line = contradiction_summary(report.contradictions)
    assert "3 under paper (2 new, 2 whose own numbers imply a utilization above 1)" in line
    markdown = render_markdown(report)
    assert "3 under paper (2 whose own numbers imply a utilization above 1)" in markdown


def test_contradiction_detail_names_a_format_other_than_bf16() -> None:
    """An answer the reality check gave at FP8 says so; a BF16 one (or one from a part written
    before the format was recorded) names none."""
    fp8 = Contradiction(
        physics="realistic",
        model="run",
        publication_date="2025-02-17",
        training_flop=1e27,
        training_hardware="NVIDIA H100 SXM5 80GB",
        hardware_quantity=1000,
        training_time_s=3600.0,
        preset="h100_sxm",
        implied_utilization=280.0,
        d_model=40960,
        precision="fp8",
        feasible=True,
        model_n_gpu=1_048_576,
        gpu_ratio=1048.576,
        model_utilization=0.3,
    )
    assert "at d_model 40960 in fp8, utilization 0.30" in fp8.detail
    for other in ("bf16", None):
        line = replace(fp8, precision=other).detail
        assert "at d_model 40960, utilization" in line
        assert "fp8" not in line
    infeasible = replace(fp8, feasible=False, model_n_gpu=None, gpu_ratio=None).detail
    assert infeasible.endswith(
        "the model calls it infeasible within its hours on h100_sxm at d_model 40960 in fp8"
    )
