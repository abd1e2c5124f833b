"""Realistic physics against published measurements (docs/validation.md).

Narayanan et al. 2021 (SC21, arXiv:2104.04473) Table 1: teraFLOP/s per GPU of ten GPT runs,
counted with their eq. (3). Ivanov et al. 2021 (MLSys, arXiv:2007.00072) Table 1: runtime
shares by operator class of a BERT-large layer trained in eager PyTorch on a V100. The
numbers are copied with their citations in tests/validation/data/.
"""

from __future__ import annotations

import csv
from functools import lru_cache
from pathlib import Path

from pipeline.model.records.run import RunCost
from pipeline.model.runs.training_run import evaluate_run, layer_breakdown
from pipeline.schema import CONF_DIR, compose_config, load_scenario

DATA = Path(__file__).parent / "data"
NARAYANAN_MEAN_TOLERANCE = 0.05
"""Mean absolute relative error allowed over the ten runs."""
NARAYANAN_MAX_TOLERANCE = 0.10
"""Largest absolute relative error allowed on any run."""
IVANOV_TOLERANCE_POINTS = 5.0
"""Percentage points allowed on each runtime share."""


def _rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open() as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))


@lru_cache(maxsize=16)
def narayanan_prediction(preset: str) -> tuple[RunCost, int, int]:
    """The run preset under physics=realistic on A100 80GB: its cost, layers and hidden."""
    cfg = compose_config([f"run={preset}", "hardware=a100_sxm_80gb", "physics=realistic"])
    scenario = load_scenario(cfg)
    assert scenario.run is not None
    cost = evaluate_run(scenario.hardware, scenario.physics, scenario.run)
    return cost, scenario.run.shape.layers, scenario.run.shape.hidden


def narayanan_errors() -> dict[str, float]:
    """Relative error of predicted vs published teraFLOP/s per GPU, by model."""
    published = {
        (int(r["layers"]), int(r["hidden"])): r for r in _rows("narayanan_2021_table1.csv")
    }
    errors = {}
    for path in sorted((CONF_DIR / "run").glob("gpt_*.yaml")):
        cost, layers, hidden = narayanan_prediction(path.stem)
        row = published[(layers, hidden)]
        measured = float(row["tflops_per_gpu"])
        errors[row["model"]] = cost.narayanan_flop_per_s_per_gpu / 1e12 / measured - 1.0
    return errors


def test_narayanan_runs_all_have_presets() -> None:
    """Every run of Narayanan et al. 2021 Table 1 has a run preset."""
    assert len(narayanan_errors()) == len(_rows("narayanan_2021_table1.csv")) == 10


def test_narayanan_tflops_mean_error_within_tolerance() -> None:
    """Predicted teraFLOP/s per GPU (eq. (3) count) match Table 1 within 5% on average."""
    errors = narayanan_errors()
    mean = sum(abs(e) for e in errors.values()) / len(errors)
    assert mean <= NARAYANAN_MEAN_TOLERANCE, errors


def test_narayanan_tflops_max_error_within_tolerance() -> None:
    """No run's predicted teraFLOP/s per GPU is off Table 1 by more than 10%."""
    errors = narayanan_errors()
    assert max(abs(e) for e in errors.values()) <= NARAYANAN_MAX_TOLERANCE, errors


def test_ivanov_bert_runtime_shares_within_tolerance() -> None:
    """BERT-large on V100 with eager kernels: contraction, normalization and element-wise
    runtime shares within 5 points of Ivanov et al. 2021 Table 1."""
    cfg = compose_config(
        ["run=bert_large", "hardware=v100_sxm", "physics=realistic", "physics.fusion=none"]
    )
    scenario = load_scenario(cfg)
    assert scenario.run is not None
    layer = layer_breakdown(scenario.hardware, scenario.physics, scenario.run)
    predicted = {
        "tensor_contraction": layer.tensor_contraction_s,
        "statistical_normalization": layer.normalization_s,
        "element_wise": layer.elementwise_s,
    }
    for row in _rows("ivanov_2021_bert_breakdown.csv"):
        share = 100.0 * predicted[row["class"]] / layer.total_s
        assert abs(share - float(row["runtime_share_pct"])) <= IVANOV_TOLERANCE_POINTS, (
            row["class"],
            share,
        )
