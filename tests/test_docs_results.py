"""The generated docs: docs/results.md and README's headline are what bench/results.py writes for
the model as it is; docs/performance.md is bench/performance.py's page, figures with their machine."""

from __future__ import annotations

import importlib.util
import re
import sys
from itertools import pairwise
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


LOCAL_PATH = re.compile(r"(?<![\w.])/(?:work|home|tmp|Users|root|mnt|srv|var)/[\w./-]+")
"""An absolute path of some machine's file system: a generated page names commits instead."""


def test_generated_docs_name_no_local_path() -> None:
    """docs/performance.md and docs/results.md name no path of the machine that wrote them (a
    baseline is a commit), and the performance page names its commit and machine."""
    for name in ("performance.md", "results.md"):
        text = (REPO / "docs" / name).read_text("utf-8")
        assert LOCAL_PATH.findall(text) == [], name
    performance = (REPO / "docs" / "performance.md").read_text("utf-8")
    assert re.search(r"at commit [0-9a-f]{7}", performance)
    assert "| CPU |" in performance


def performance_generator() -> ModuleType:
    """bench/performance.py, imported from its path (it imports its sibling bench_commands)."""
    spec = importlib.util.spec_from_file_location("bench_perf", REPO / "bench" / "performance.py")
    assert spec is not None
    assert spec.loader is not None
    sys.path.insert(0, str(REPO / "bench"))
    try:
        performance = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(performance)
    finally:
        sys.path.remove(str(REPO / "bench"))
    return performance


def test_performance_sections_name_their_machine() -> None:
    """Every section of docs/performance.md names the machine it was measured on: the page's
    sections are measured at different times, on whatever machine ran each."""
    performance = performance_generator()
    text = (REPO / "docs" / "performance.md").read_text("utf-8")
    blocks = performance.kept_blocks(text)
    assert set(blocks) == set(performance.SECTIONS)
    for name, block in blocks.items():
        assert any(map(performance.MACHINE_NAMED.match, block)), name


def test_performance_keeps_no_section_without_its_machine() -> None:
    """Measuring some sections keeps the others only where they name their machine: the page's
    machine is the one measuring now, so a kept section without its own would be read as
    measured there."""
    performance = performance_generator()
    text = (REPO / "docs" / "performance.md").read_text("utf-8")
    kept = performance.kept_blocks(text)["report"]
    measured = next(line for line in kept if performance.MACHINE_NAMED.match(line))
    unnamed = re.sub(r" on .+ logical cores,", ",", measured)
    assert not performance.MACHINE_NAMED.match(unnamed)
    with pytest.raises(SystemExit, match="report"):
        performance.performance_md(1, None, ("series",), text.replace(measured, unnamed))


def test_performance_section_of_a_changed_tree_names_its_machine() -> None:
    """A section measured on a tree with changes (`commit` marks it) still reads as naming its
    machine, so that the next `--only` keeps it."""
    performance = performance_generator()
    line = (
        "Measured 2026-12-07 11:45 UTC at commit 93bd1ea (with uncommitted changes) on AMD EPYC,"
        " 2 logical cores, 1 run, load average (1 min) 0.2 before, 0.2 after."
    )
    assert performance.MACHINE_NAMED.match(line)
    assert not performance.MACHINE_NAMED.match(line.replace(" on AMD EPYC, 2 logical cores", ""))


def test_performance_baseline_is_named_by_its_commit() -> None:
    """bench/performance.py names a baseline checkout by its commit, not by where it lies."""
    performance = performance_generator()
    head = performance.commit(REPO)
    lines = "\n".join(performance.baseline_lines(head))
    assert head.split()[0] in lines
    assert str(REPO) not in lines


def cliff_point(**columns: object) -> dict[str, object]:
    """A points row as the cliff table reads it: a 2 s step of no parts but `columns`' on a
    64-GPU tensor group, 16 stages and 16 microbatches, its layout's other columns as given."""
    base: dict[str, object] = {
        "step_time_s": 2.0,
        "t_compute_s": 0.0,
        "t_tp_comm_s": 0.0,
        "t_pp_ep_comm_s": 0.0,
        "t_dp_comm_s": 0.0,
        "t_optimizer_s": 0.0,
        "bubble_fraction": 0.0,
        "pp": 16,
        "microbatches": 16,
        "batch_seqs": 5120.0,
        "tp_model": 1,
        "tp_ff": 8,
    }
    return {**base, **columns}


def test_results_cliff_why_names_the_spanning_tensor_group() -> None:
    """A tensor-parallel-bound point is explained by its parts and the nodes its group spans."""
    levels = {"tp_model_levels": "1x8", "tp_ff_levels": "8x1"}
    parts = {"t_compute_s": 0.5, "t_tp_comm_s": 1.5, "t_dp_comm_s": 0.1}
    point = cliff_point(bottleneck="tp_comm", dp=320, tp_model=8, **levels, **parts)
    why = generator().cliff_why(point)
    assert why.startswith("tp_comm 75%, compute 25%: its 64-GPU tensor-parallel group spans 8")
    assert "5,120 sequences" in why


def test_results_cliff_why_counts_context_ranks_in_the_gradient_all_reduce() -> None:
    """A gradient-bound point's all-reduce spans its data-parallel times its context ranks."""
    point = cliff_point(bottleneck="dp_comm", t_compute_s=0.5, t_dp_comm_s=1.5, dp=64, cp=4)
    why = generator().cliff_why(point)
    assert why.endswith("over 64 replicas of 4 context ranks each (256 ranks)")


@pytest.mark.slow
def test_results_cliffs_each_have_a_bottleneck() -> None:
    """Every fall of utilization by more than 2x between neighbouring sizes of the default
    realistic series is a row of docs/results.md's cliff table, with its bottleneck."""
    results = generator()
    rows = results.cliffs_table()
    text = results.RESULTS_MD.read_text("utf-8")
    for scaling in ("dense", "sparse"):
        points = results.series(f"scaling={scaling}", "physics=realistic").points
        feasible = sorted((p for p in points if p["feasible"]), key=lambda p: p["d_model"])
        for a, b in pairwise(feasible):
            if a["utilization"] > results.CLIFF_RATIO * b["utilization"]:
                assert b["bottleneck"] is not None
                row = next(r for r in rows if f"{int(b['n_gpu']):,} |" in r)
                assert f"| {b['bottleneck']} |" in row
                assert row in text


def test_results_cliff_why_takes_the_bubble_from_the_pipeline_s_time() -> None:
    """`bubble_fraction` is fill and drain over the pipeline's time, the step less the exposed
    gradient reduction and the optimizer step (docs/model.md R.6): 0.8 of 1.5 s is 60% of a
    2 s step, not 80%."""
    parts = {"t_compute_s": 0.3, "t_dp_comm_s": 0.4, "t_optimizer_s": 0.1}
    point = cliff_point(
        bottleneck="bubble", bubble_fraction=0.8, dp=64, pp=64, microbatches=10, **parts
    )
    why = generator().cliff_why(point)
    assert why.startswith("bubble 60%, dp_comm 20%, compute 15%: m = 10 microbatches over 64")
