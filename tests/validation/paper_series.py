"""The paper's 21 series, as the experiments in conf/experiment/ define them, and their golden file.

The five paper experiments (spec §13) sweep 3 + 3 + 4 + 7 + 7 = 24 (hardware, scaling,
batch) choices. Three of them repeat: H100 SXM dense with the critical batch law is in
`base_comparison`, `batch_size_comparison` and `what_if`, and H100 SXM sparse critical in
`base_comparison_sparse` and `what_if_sparse`. That leaves 24 − 3 = 21 distinct series:
the 19 of spec §13 plus two the experiment files add, the superpod with sparse models and
the Zhang et al. (2024) batch law on H100 SXM dense.

`python -m tests.validation.paper_series` regenerates `golden/paper_series.json`; do that
only for a deliberate change of the paper model's numbers, and say so in the commit.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.model.records.results import PointResult
from pipeline.schema import compose_config, load_scenario

PAPER_EXPERIMENTS = (
    "base_comparison",
    "base_comparison_sparse",
    "batch_size_comparison",
    "what_if",
    "what_if_sparse",
)
"""The experiment files that reproduce the paper's figures (the others are ours, e.g. nightly)."""
SWEPT_GROUPS = ("hardware", "scaling", "batch")
PAPER_SERIES_COUNT = 21
"""Distinct series over the paper experiments: 24 swept choices, 3 of them repeated."""
GOLDEN_PATH = Path(__file__).parent / "golden" / "paper_series.json"

Choice = tuple[str, str, str]
"""(hardware, scaling, batch) group choices of one series."""


def experiment_choices(experiment: str) -> list[Choice]:
    """The (hardware, scaling, batch) choices an experiment's sweep runs, in sweep order."""
    cfg = compose_config([f"+experiment={experiment}"], return_hydra_config=True)
    params = OmegaConf.to_container(cfg.hydra.sweeper.params)
    assert isinstance(params, dict)
    runtime = cfg.hydra.runtime.choices
    axes = [
        [c.strip() for c in str(params[group]).split(",")]
        if group in params
        else [str(runtime[group])]
        for group in SWEPT_GROUPS
    ]
    return [(hw, sc, b) for hw, sc, b in itertools.product(*axes)]


def paper_series() -> list[Choice]:
    """The distinct series of the paper experiments, in first-seen order."""
    runs = [c for e in PAPER_EXPERIMENTS for c in experiment_choices(e)]
    return list(dict.fromkeys(runs))


def series_key(choice: Choice) -> str:
    """'hardware/scaling/batch', the golden file's key of a series."""
    return "/".join(choice)


def run_series(choice: Choice) -> SeriesOutcome:
    """One series through the pipeline's own path: compose, load, evaluate."""
    overrides = [f"{group}={value}" for group, value in zip(SWEPT_GROUPS, choice, strict=True)]
    return evaluate_series(load_scenario(compose_config(overrides)))


def _number(x: float | None) -> float | str | None:
    """JSON-safe float: infinities and NaN as strings; finite floats round-trip exactly."""
    if x is None or math.isfinite(x):
        return x
    return repr(x)


def _point(p: PointResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "d_model": p.shape.d_model,
        "feasible": p.feasible,
        "infeasible_reason": None if p.infeasible_reason is None else str(p.infeasible_reason),
    }
    if p.layout is not None:
        lay = p.layout
        out["layout"] = {
            "n_gpu": lay.n_gpu,
            "dp": list(lay.dp),
            "tp_model": list(lay.tp_model),
            "tp_ff": list(lay.tp_ff),
            "pp": list(lay.pp),
            "ep": list(lay.ep),
            "microbatches": lay.microbatches,
            "zero_bubble": lay.zero_bubble,
            "pp_interleave": lay.pp_interleave,
            "nanobatch_tokens": lay.nanobatch_tokens,
        }
    if p.cost is not None:
        out["utilization"] = p.cost.utilization
        out["training_time_s"] = p.cost.training_time_s
        out["bottleneck"] = str(p.cost.bottleneck)
        out["matmul_bound"] = str(p.cost.matmul_bound)
    return out


def golden_record(outcome: SeriesOutcome) -> dict[str, Any]:
    """What the golden file pins of one series: thresholds, closed forms and every point."""
    lim, cf = outcome.limits, outcome.closed_forms
    return {
        "thresholds": {
            "linear_end_flop": _number(lim.linear_end_flop),
            "last_feasible_flop": _number(lim.last_feasible_flop),
            "first_infeasible_flop": _number(lim.first_infeasible_flop),
            "max_utilization": _number(lim.max_utilization),
            "alpha": _number(cf.alpha),
            "t_lat_s": _number(cf.t_lat_s),
            "t_crit_flop": _number(cf.t_crit_flop),
            "t_limit_flop": _number(cf.t_limit_flop),
        },
        "points": [_point(p) for p in outcome.points],
    }


def main() -> None:
    """Evaluate the 21 paper series and write the golden file."""
    series = paper_series()
    if len(series) != PAPER_SERIES_COUNT:
        raise SystemExit(f"expected {PAPER_SERIES_COUNT} paper series, found {len(series)}")
    golden = {series_key(c): golden_record(run_series(c)) for c in series}
    GOLDEN_PATH.parent.mkdir(exist_ok=True)
    GOLDEN_PATH.write_text(json.dumps(golden, indent=1) + "\n")
    print(f"wrote {len(golden)} series to {GOLDEN_PATH}")


if __name__ == "__main__":
    main()
