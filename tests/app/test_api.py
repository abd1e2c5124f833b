"""`pipeline.run`: frames with the documented columns, the same rows as the dataset, one-line errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pipeline
from pipeline.io.tables import TABLES
from tests.command import VOLATILE, dmlimits, python_output, stable_table

DOCS = Path(__file__).resolve().parents[2] / "docs"
SMALL = ["scaling.grid.max_d_model=16384", "execution.n_jobs=1"]
"""Three paper-grid sizes, in-process: a run takes well under a second."""


def test_run_returns_frames_with_documented_columns() -> None:
    """Each frame has exactly its table's columns, in schema order, one series' rows."""
    result = pipeline.run(SMALL)
    assert list(result.tables) == [spec.name for spec in TABLES]
    for spec in TABLES:
        assert getattr(result, spec.name).columns == spec.schema.names, spec.name
    assert result.points.height == 3
    assert result.thresholds.height == result.series.height == 1
    assert result.report.root is None


def test_run_frames_equal_the_written_dataset(tmp_path: Path) -> None:
    """With write=True the frames hold the rows the Parquet parts hold, column for column."""
    result = pipeline.run(SMALL, write=True, root=tmp_path)
    for spec in TABLES:
        frame = result.tables[spec.name].drop(VOLATILE)
        assert frame.equals(stable_table(tmp_path, spec.name).select(frame.columns)), spec.name


def test_run_bad_value_raises_the_cli_message(tmp_path: Path) -> None:
    """A bad value raises ConfigError (a ValueError) whose text is the line dmlimits prints."""
    bad = "hardware.hbm_bandwidth_gb_per_s=-1"
    with pytest.raises(ValueError, match="hbm_bandwidth_gb_per_s") as caught:
        pipeline.run([bad])
    assert isinstance(caught.value, pipeline.ConfigError)
    cli = dmlimits(tmp_path, bad)
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"dmlimits: error: {caught.value}"


def test_run_unknown_preset_raises_one_line_config_error() -> None:
    """Hydra's own error (a preset that is no file) becomes a one-line ConfigError."""
    with pytest.raises(pipeline.ConfigError) as caught:
        pipeline.run(["hardware=h100_sxmm"])
    message = str(caught.value)
    assert "h100_sxmm" in message
    assert "\n" not in message


def test_run_root_without_write_is_refused(tmp_path: Path) -> None:
    """A root given without write=True is a mistake, not silently ignored."""
    with pytest.raises(pipeline.ConfigError, match="write=True"):
        pipeline.run(SMALL, root=tmp_path)
    assert not any(tmp_path.iterdir())


def python_blocks(markdown: str) -> list[str]:
    """The ```python code blocks of a Markdown page, in order."""
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.DOTALL | re.MULTILINE)


def test_docs_api_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every python block of docs/api.md runs, in order, in one namespace, and checks itself."""
    blocks = python_blocks((DOCS / "api.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_api"}
    for block in blocks:
        exec(compile(block, str(DOCS / "api.md"), "exec"), namespace)
    assert not (tmp_path / "outputs").exists()  # only write=True writes, and into its root


def test_import_pipeline_stays_light() -> None:
    """`import pipeline` imports neither the application nor Hydra or polars (only the leaf
    holding its version)."""
    probe = (
        "import sys, pipeline; "
        "print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('hydra', 'polars', 'pyarrow') or m.startswith('pipeline.')))"
    )
    out = python_output(probe)
    assert out.strip() == "['pipeline.version']"
