"""The generated docs: docs/results.md and README's headline are what bench/results.py writes for
the model as it is; docs/performance.md is bench/performance.py's page, figures with their machine."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]


def generator() -> ModuleType:
    """bench/results.py, imported from its path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_results", REPO / "bench" / "results.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def test_results_docs_carry_the_generator_marks() -> None:
    """docs/results.md starts as the generator writes it, and README holds its headline markers."""
    results = generator()
    assert results.RESULTS_MD.read_text("utf-8").startswith(f"# Results\n\n{results.GENERATED}\n")
    readme = results.README_MD.read_text("utf-8")
    assert readme.index(results.README_BEGIN) < readme.index(results.README_END)


@pytest.mark.slow
def test_results_docs_match_the_model() -> None:
    """Regenerating docs/results.md and README's headline from the model changes nothing."""
    results = generator()
    wanted = results.results_md()
    assert results.RESULTS_MD.read_text("utf-8") == wanted, "run `make docs` and commit"
    readme = results.README_MD.read_text("utf-8")
    assert results.readme_md(readme) == readme, "run `make docs` and commit"


def test_performance_doc_names_its_machine_and_spread() -> None:
    """docs/performance.md is the generator's page: date, commit, machine, versions, spread."""
    text = (REPO / "docs" / "performance.md").read_text("utf-8")
    assert text.startswith("# Performance\n\n<!-- Written by bench/performance.py")
    for row in (
        "Measured ",
        "at commit ",
        "| CPU |",
        "| Python |",
        "| numpy |",
        "min / median / max",
    ):
        assert row in text
