"""docs/trends.md §4's moving-frontier table is what bench/forecast_table.py --trends writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
BEGIN = "<!-- BEGIN bench/forecast_table.py --trends -->"
END = "<!-- END bench/forecast_table.py --trends -->"


def generator() -> ModuleType:
    """bench/forecast_table.py, imported from its path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "bench_forecast_table", REPO / "bench" / "forecast_table.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def documented_table() -> list[str]:
    """The lines between docs/trends.md's generator marks."""
    text = (REPO / "docs" / "trends.md").read_text("utf-8")
    return text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip().splitlines()


def test_trends_doc_table_sits_between_the_generator_marks() -> None:
    """docs/trends.md holds one marked table with a row per series and trajectory."""
    rows = [line for line in documented_table() if line.startswith("| h100_sxm /")]
    assert len(rows) == 6


@pytest.mark.slow
def test_trends_doc_table_matches_the_model() -> None:
    """Regenerating docs/trends.md's moving-frontier table from the shipped data changes nothing."""
    assert generator().trends_table() == documented_table(), (
        "run `.venv/bin/python bench/forecast_table.py --trends` and paste it between the marks"
    )
