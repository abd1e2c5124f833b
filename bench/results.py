"""Write docs/results.md, and the headline block of README.md, from running the model.

Run: `make docs` (or `.venv/bin/python bench/results.py`; about a minute on one core). Every
figure of docs/results.md comes from `pipeline.run` on this checkout: the paper's series
(`conf/experiment/`), their forecast years, and what each realistic extension does to the
limits. `--check` writes nothing and exits 1 when either file differs from what this script
would write (tests/test_docs_results.py runs the same comparison).

Regenerate after a change of the model, of a preset or of the forecast trajectory; never edit
the generated figures by hand.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pipeline
from pipeline.app.plan import compose_run_config
from pipeline.forecast.inputs import observe_for_run
from pipeline.forecast.null_years import YearNull
from pipeline.forecast.paths import FITTED
from pipeline.forecast.settings import forecast_from_config
from pipeline.forecast.text import NULL_TEXT, trajectory_text, year_text
from pipeline.model.step.pipeline import bubble_time_s

ROOT = Path(__file__).resolve().parent.parent
RESULTS_MD = ROOT / "docs" / "results.md"
README_MD = ROOT / "README.md"
README_BEGIN = "<!-- results: written by bench/results.py (make docs) -->"
README_END = "<!-- end of results -->"
GENERATED = "<!-- Written by bench/results.py (`make docs`) from running the model; do not edit by hand. -->"
UTILIZATION_FLOOR = 0.001
"""A series stops after a point below this utilization (docs/model.md §9)."""

Limit = Callable[["Series"], str]


@dataclass(frozen=True)
class Series:
    """One series' thresholds row, its points and its forecast rows (dicts of columns)."""

    thresholds: dict[str, object]
    points: list[dict[str, object]]
    forecasts: list[dict[str, object]]

    def flop(self, column: str) -> float | None:
        """A FLOP threshold of `thresholds` (None when null)."""
        value = self.thresholds[column]
        return None if value is None else float(value)  # type: ignore[arg-type]

    def last_point(self) -> dict[str, object]:
        """The series' largest evaluated model size."""
        return max(self.points, key=lambda p: float(p["training_flop"]))  # type: ignore[arg-type]


@functools.cache
def series(*overrides: str) -> Series:
    """The one series `dmlimits OVERRIDES` evaluates (computed once per override list)."""
    result = pipeline.run(list(overrides))
    if result.thresholds.height != 1:
        raise ValueError(f"{overrides}: {result.thresholds.height} series, expected one")
    return Series(
        result.thresholds.to_dicts()[0], result.points.to_dicts(), result.forecasts.to_dicts()
    )


def sci(x: float | None, digits: int = 2) -> str:
    """A figure in short scientific notation (2.05e28), or a dash for null."""
    if x is None:
        return "–"
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def linear_end(s: Series, digits: int = 2) -> str:
    """The end of linear scaling, or why the series has none: as the forecasts and the report
    page say it (`NULL_TEXT`) when linear scaling outlasted every feasible size."""
    if s.thresholds["linear_end_flop"] is None:
        if s.thresholds["linear_end_beyond_grid"]:
            return NULL_TEXT[YearNull.BEYOND_GRID]
        return NULL_TEXT[YearNull.NO_FEASIBLE_SIZE]
    return sci(s.flop("linear_end_flop"), digits)


def wall(s: Series, digits: int = 2) -> str:
    """The latency wall (first infeasible size), or why the series has none."""
    if s.thresholds["first_infeasible_flop"] is not None:
        return sci(s.flop("first_infeasible_flop"), digits)
    last = s.last_point()
    if float(last["utilization"]) < UTILIZATION_FLOOR:  # type: ignore[arg-type]
        return f"– (utilization < {UTILIZATION_FLOOR:g} first)"
    ran = NULL_TEXT[YearNull.END_OF_GRID]
    return f"{ran} (up to {sci(float(last['training_flop']), digits)})"  # type: ignore[arg-type]


def utilization(s: Series) -> str:
    """The series' best utilization."""
    u = s.thresholds["max_utilization"]
    return "–" if u is None else f"{float(u):.2f}"  # type: ignore[arg-type]


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def headline() -> list[str]:
    """The default run's limits beside the closed forms (README's one result)."""
    s = series()
    t = s.thresholds
    last = next(p for p in s.points if p["training_flop"] == t["last_feasible_flop"])
    n_gpu = int(last["n_gpu"])  # type: ignore[call-overload]
    gpus = f"2^{n_gpu.bit_length() - 1}" if n_gpu & (n_gpu - 1) == 0 else f"{n_gpu:,}"
    alpha = float(t["alpha"])  # type: ignore[arg-type]
    t_lat_us = float(t["t_lat_s"]) * 1e6  # type: ignore[arg-type]
    return [
        "One result, from the default run (H100 SXM, dense, critical batch size, 3 months):",
        "",
        *table(
            ["", "training compute (FLOP)"],
            [
                ["end of linear scaling (utilization ≤ 0.8 · u_eff)", linear_end(s)],
                [
                    f"last feasible run ({gpus} GPUs, utilization "
                    f"{float(last['utilization']):.2f})",  # type: ignore[arg-type]
                    sci(s.flop("last_feasible_flop")),
                ],
                ["latency wall: first infeasible grid size", wall(s)],
                [
                    f"closed forms (Model B): T_crit, T_limit at α = {alpha:.3f}, {t_lat_us:g} µs",
                    f"{sci(s.flop('t_crit_flop'))}, {sci(s.flop('t_limit_flop'))}",
                ],
            ],
        ),
    ]


PAPER_COLUMNS = [
    "linear-scaling end (FLOP)",
    "last feasible (FLOP)",
    "latency wall (FLOP)",
    "best utilization",
    "T_crit (FLOP)",
    "T_limit (FLOP)",
]


def paper_row(name: str, overrides: Sequence[str]) -> list[str]:
    """One paper series: its simulated limits and Model B's closed forms."""
    s = series(*overrides)
    return [
        name,
        linear_end(s),
        sci(s.flop("last_feasible_flop")),
        wall(s),
        utilization(s),
        sci(s.flop("t_crit_flop")),
        sci(s.flop("t_limit_flop")),
    ]


GPUS = ["v100_sxm", "a100_sxm", "h100_sxm"]
"""conf/experiment/base_comparison.yaml and base_comparison_sparse.yaml."""
BATCH_LAWS = ["critical", "constant", "deepseek", "zhang2024"]
"""conf/experiment/batch_size_comparison.yaml (the default law first)."""
WHAT_IFS = [
    "h100_sxm",
    "h100_low_latency",
    "h100_global_nvlink",
    "h100_global_nvlink_low_latency",
    "h100_infinite_network_low_latency",
    "h100_superpod",
    "h100_scaled_10x",
]
"""conf/experiment/what_if.yaml and what_if_sparse.yaml."""


def hardware_tables(title: str, experiment: str, presets: list[str]) -> list[str]:
    """One table per scaling (dense, then sparse) of the paper's figures for `presets`; the
    sparse experiment is `experiment` + `_sparse`."""
    lines: list[str] = []
    for scaling in ("dense", "sparse"):
        suffix = "" if scaling == "dense" else "_sparse"
        lines += ["", f"### {title}, {scaling} (`+experiment={experiment}{suffix}`)", ""]
        rows = [paper_row(h, [f"hardware={h}", f"scaling={scaling}"]) for h in presets]
        lines += table(["hardware", *PAPER_COLUMNS], rows)
    return lines


def paper_tables() -> list[str]:
    """The paper's comparisons (spec §13), one table each."""
    lines = hardware_tables("GPU generations", "base_comparison", GPUS)
    lines += ["", "### Batch-size laws, H100 SXM, dense (`+experiment=batch_size_comparison`)", ""]
    rows = [paper_row(b, [f"batch={b}"]) for b in BATCH_LAWS]
    lines += table(["batch law", *PAPER_COLUMNS], rows)
    lines += hardware_tables("Network what-ifs", "what_if", WHAT_IFS)
    return lines


def forecast_table() -> list[str]:
    """The years frontier compute reaches each limit, frozen hardware (conf/forecast/default.yaml),
    each year shown as `pipeline.forecast.text` shows it."""
    rows = []
    as_of = None
    for b in BATCH_LAWS:
        forecasts = series(f"batch={b}").forecasts
        as_of = as_of or next((f["data_as_of"] for f in forecasts if f["data_as_of"]), None)
        batch = [] if b == "critical" else [f"batch={b}"]  # the realistic table's series
        realistic = series("scaling=dense", "physics=realistic", *batch).forecasts
        paired = [("paper", f) for f in forecasts]
        paired += [("realistic", f) for f in realistic if f["trajectory"] == FITTED]
        for physics, f in sorted(
            paired, key=lambda p: (p[1]["trajectory"] != FITTED, p[0], p[1]["growth_per_year"])
        ):
            f = {**f, "passed_by_run_date": None}  # the page is dated by its data, not the day
            rows.append(
                [
                    b,
                    physics,
                    trajectory_text(f),
                    year_text(f, "linear_end_year"),
                    year_text(f, "wall_year"),
                ]
            )
    return [
        "H100 SXM, dense: the year the largest training run reaches each limit, on the envelope",
        "of the largest observed runs (median and 5th-95th percentile of a prediction: the",
        "bootstrap lines with the wait for the next record, docs/sources.md; data as of",
        f"{as_of}) and on the hand-set trajectories of `conf/forecast/default.yaml`, under the",
        "paper's physics and, on the envelope, `physics=realistic` (the section below); a dash where",
        "the series has no such limit (the batch-law table above says why). A year after the",
        "data's date is shown as a year even when past: a run (the nightly) prints it as passed",
        "before its own date. On hardware that improves along the catalog's trends (the moving",
        "frontier): `bench/forecast_table.py`.",
        "",
        *table(["batch law", "physics", "trajectory", "linear-scaling end", "latency wall"], rows),
        "",
        *largest_run_table(),
    ]


PREDICTED_YEARS = (2025.0, 2026.0, 2027.0, 2028.0, 2029.0, 2030.0)
"""Years (the start of each) the largest run's compute is predicted for."""


def largest_run_table() -> list[str]:
    """The largest training run's compute at the start of each year: the envelope's prediction
    (median and 5th-95th percentile, `FrontierFit.flop_prediction_at`)."""
    cfg = compose_run_config([])
    settings = forecast_from_config(cfg.forecast)
    observed = observe_for_run(settings, cfg.sources, cfg.output, write=False).observed
    fit = None if observed is None else observed.fit
    if fit is None:
        return []
    rows = []
    for year in PREDICTED_YEARS:
        median, low, high = fit.flop_prediction_at(year)
        rows.append([f"{year:.0f}", sci(median), f"{sci(low)}-{sci(high)}"])
    return [
        "The largest training run's compute at the start of each year, predicted from the same",
        "envelope (its parameters and the running maximum's gap below it), never below the",
        "largest run the data show by then, or by the data's date after it (a running maximum",
        "does not fall):",
        "",
        *table(["year", "largest run (FLOP), median", "5th-95th percentile"], rows),
    ]


SWITCHES_OFF = [
    "physics.attention=false",
    "physics.memory_bound_ops=false",
    "physics.memory_check=aggregate",
    "physics.recompute=none",
    "physics.zero_stage=0",
    "physics.whole_sequences=false",
    "physics.tensor_parallel=2d",
    "physics.tp_in_domain=false",
    "physics.tensor_memory=false",
    "physics.max_context_parallel=1",
    "physics.few_microbatches=false",
    "physics.small_microbatches=false",
    "physics.batch_at_row_flop=false",
    "physics.dp_overlap=false",
    "physics.tp_overlap_in_domain=false",
    "physics.nic_striping=false",
    "physics.cluster_sizes=powers_of_two",
    "physics.hbm_capacity=datasheet",
    "physics.expert_imbalance=0",
]
"""physics=realistic with every switch off: its efficiencies only."""

BEFORE_STACK_RULES = [
    "physics.fusion=fused",
    "physics.max_context_parallel=1",
    "scaling.kv_heads=null",
    "scaling.dropout=true",
    "physics.tensor_parallel=both",
    "physics.tp_in_domain=false",
    "physics.few_microbatches=false",
    "physics.small_microbatches=false",
    "physics.batch_at_row_flop=false",
    "physics.dp_overlap=false",
    "physics.tp_overlap_in_domain=false",
    "physics.nic_striping=false",
    "physics.cluster_sizes=powers_of_two",
    "physics.stack=2024",
    "physics.expert_imbalance=0",
]
"""The realistic preset's rules of today's stack, each at its other value: the preset before them."""


def alone(*on: str) -> list[str]:
    """physics=realistic with every switch off except `on` (`key=value`, without `physics.`)."""
    keys = {o.split("=")[0] for o in on}
    off = [s for s in SWITCHES_OFF if s.removeprefix("physics.").split("=")[0] not in keys]
    return ["physics=realistic", *off, *(f"physics.{o}" for o in on)]


REALISTIC: dict[str, list[str]] = {
    "paper": [],
    "realistic (all: today's stack)": ["physics=realistic"],
    "realistic with `fusion=fused` (Megatron-LM 2021's attention kernels)": [
        "physics=realistic",
        "physics.fusion=fused",
    ],
    "realistic with `cluster_sizes=powers_of_two`": [
        "physics=realistic",
        "physics.cluster_sizes=powers_of_two",
    ],
    "realistic with `max_context_parallel=1`": [
        "physics=realistic",
        "physics.max_context_parallel=1",
    ],
    "realistic with `scaling.kv_heads=null` (as many K/V heads as heads)": [
        "physics=realistic",
        "scaling.kv_heads=null",
    ],
    "realistic with `scaling.dropout=true` (dropout in every layer, as GPT trained)": [
        "physics=realistic",
        "scaling.dropout=true",
    ],
    "realistic with `tensor_parallel=both tp_in_domain=false` (2-D past NVLink)": [
        "physics=realistic",
        "physics.tensor_parallel=both",
        "physics.tp_in_domain=false",
    ],
    "realistic with `few_microbatches=false`": [
        "physics=realistic",
        "physics.few_microbatches=false",
    ],
    "realistic with `small_microbatches=false`": [
        "physics=realistic",
        "physics.small_microbatches=false",
    ],
    "realistic with `batch_at_row_flop=false`": [
        "physics=realistic",
        "physics.batch_at_row_flop=false",
    ],
    "realistic without `dp_overlap` and `tp_overlap_in_domain`": [
        "physics=realistic",
        "physics.dp_overlap=false",
        "physics.tp_overlap_in_domain=false",
    ],
    "realistic without `nic_striping` (every crossing at one NIC)": [
        "physics=realistic",
        "physics.nic_striping=false",
    ],
    "realistic with `stack=2024` (the 2021-2024 software's GEMM efficiency)": [
        "physics=realistic",
        "physics.stack=2024",
    ],
    "realistic with `expert_imbalance=0` (balanced routing)": [
        "physics=realistic",
        "physics.expert_imbalance=0",
    ],
    "realistic with all fifteen of these (the preset before them)": [
        "physics=realistic",
        *BEFORE_STACK_RULES,
    ],
    "efficiencies only": alone(),
    "attention alone": alone("attention=true"),
    "memory_bound_ops (fused) alone": alone("memory_bound_ops=true", "fusion=fused"),
    "memory_check=per_gpu alone (recompute none, ZeRO-0)": alone("memory_check=per_gpu"),
    "memory_check=per_gpu + recompute auto + ZeRO-1": alone(
        "memory_check=per_gpu", "recompute=auto", "zero_stage=1"
    ),
    "whole_sequences alone": alone("whole_sequences=true"),
    "tensor_parallel=1d alone": alone("tensor_parallel=1d"),
    "tensor_parallel=both alone": alone("tensor_parallel=both"),
    "whole_sequences + tensor_parallel=1d": alone("whole_sequences=true", "tensor_parallel=1d"),
    "whole_sequences + tensor_parallel=both": alone("whole_sequences=true", "tensor_parallel=both"),
    "tp_in_domain alone (with tensor_parallel=both)": alone(
        "tp_in_domain=true", "tensor_parallel=both"
    ),
}
"""The physics variants of the realistic table: name -> overrides."""


LIMIT_HEADER = [
    "linear-scaling end (FLOP)",
    "last feasible (FLOP)",
    "wall: first infeasible (FLOP)",
    "best utilization",
]
"""The columns `limit_cells` fills."""


def limit_cells(s: Series) -> list[str]:
    """A series' limits as table cells: linear-scaling end, last feasible, wall, utilization."""
    return [linear_end(s), sci(s.flop("last_feasible_flop")), wall(s), utilization(s)]


def realistic_table() -> list[str]:
    """What each realistic extension does to the limits, H100 SXM, dense and sparse."""
    rows = []
    for scaling in ("dense", "sparse"):
        for name, overrides in REALISTIC.items():
            rows.append([scaling, name, *limit_cells(series(f"scaling={scaling}", *overrides))])
    return table(["scaling", "physics", *LIMIT_HEADER], rows)


OBSERVED_BATCHES = ["critical", "observed"]
"""The critical law (the default) and the law fitted to observed batches (docs/sources.md §6a)."""


def observed_batch_table() -> list[str]:
    """The limits under the critical law and under observed batches, side by side: H100 SXM,
    dense and sparse, paper and realistic physics."""
    rows = []
    for scaling in ("dense", "sparse"):
        for physics in ("paper", "realistic"):
            for batch in OBSERVED_BATCHES:
                s = series(f"scaling={scaling}", f"physics={physics}", f"batch={batch}")
                rows.append([scaling, physics, batch, *limit_cells(s)])
    return table(["scaling", "physics", "batch law", *LIMIT_HEADER], rows)


CLIFF_RATIO = 2.0
"""A cliff: utilization falls by more than this factor from one grid size to the next."""
STEP_PARTS = {
    "compute": "t_compute_s",
    "tp_comm": "t_tp_comm_s",
    "pp_ep_comm": "t_pp_ep_comm_s",
    "dp_comm": "t_dp_comm_s",
}
"""The step part each `bottleneck` names (the bubble: `bubble_time_s`, bubble_fraction times the
pipeline's time)."""


def across_nodes(levels: object) -> int:
    """A degree's factor past the NVLink domain: the product of its per-level factors
    (`dp_levels` etc., level 0 first, "1x8") after the first."""
    factors = [int(f) for f in str(levels).split("x")]
    return math.prod(factors[1:])


def step_parts(p: dict[str, object]) -> dict[str, float]:
    """Each part of a point's step (s), named as `bottleneck` names it."""
    parts = {name: float(p[column]) for name, column in STEP_PARTS.items()}  # type: ignore[arg-type]
    optimizer = p["t_optimizer_s"]
    parts["bubble"] = float(
        bubble_time_s(
            float(p["bubble_fraction"]),  # type: ignore[arg-type]
            float(p["step_time_s"]),  # type: ignore[arg-type]
            parts["dp_comm"],
            None if optimizer is None else float(optimizer),  # type: ignore[arg-type]
        )
    )
    return parts


def cliff_why(p: dict[str, object]) -> str:
    """Why a point's step is slow: its parts of at least a tenth of the step, largest first,
    and what in its layout makes its bottleneck large."""
    name = str(p["bottleneck"])
    step = float(p["step_time_s"])  # type: ignore[arg-type]
    parts = sorted(step_parts(p).items(), key=lambda kv: -kv[1])
    shares = ", ".join(f"{k} {v / step:.0%}" for k, v in parts if v >= 0.1 * step)
    dp, pp, m = (int(p[k]) for k in ("dp", "pp", "microbatches"))  # type: ignore[call-overload]
    seqs = int(float(p["batch_seqs"]))  # type: ignore[arg-type]
    tp = int(p["tp_model"]) * int(p["tp_ff"])  # type: ignore[call-overload]
    if name == "tp_comm":
        span = across_nodes(p["tp_model_levels"]) * across_nodes(p["tp_ff_levels"])
        why = f"its {tp}-GPU tensor-parallel group spans {span} nodes"
        if dp * m >= seqs:
            why += (
                f", as N_DP·m = {dp * m:,} microbatches already hold one each of the batch's "
                f"{seqs:,} sequences"
            )
    elif name == "dp_comm":
        cp = int(p["cp"])  # type: ignore[call-overload]
        why = f"the gradient all-reduce over {dp:,} replicas"  # `dp` counts no context ranks
        if cp > 1:
            why += f" of {cp} context ranks each ({dp * cp:,} ranks)"
    elif name == "bubble":
        why = f"m = {m} microbatches over {pp} pipeline stages"
    elif name == "pp_ep_comm":
        why = f"pipeline sends over {pp} stages and expert all-to-alls over {int(p['ep'])}"  # type: ignore[call-overload]
    else:
        nano = int(p["nanobatch_tokens"])  # type: ignore[call-overload]
        why = f"its matmuls {p['matmul_bound']}-bound on microbatches of {nano:,} tokens"
    return f"{shares}: {why}"


def cliffs_table() -> list[str]:
    """Every fall of utilization by more than CLIFF_RATIO between neighbouring grid sizes of the
    default realistic series, H100 SXM dense and sparse, with the resource that bounds the
    smaller size's step and why."""
    rows = []
    for scaling in ("dense", "sparse"):
        feasible = [
            p for p in series(f"scaling={scaling}", "physics=realistic").points if p["feasible"]
        ]
        feasible.sort(key=lambda p: int(p["d_model"]))  # type: ignore[call-overload]
        for a, b in itertools.pairwise(feasible):
            ua, ub = float(a["utilization"]), float(b["utilization"])  # type: ignore[arg-type]
            if ua > CLIFF_RATIO * ub:
                rows.append(
                    [
                        scaling,
                        f"{sci(float(a['training_flop']))} → {sci(float(b['training_flop']))}",  # type: ignore[arg-type]
                        f"{int(float(a['n_gpu'])):,} → {int(float(b['n_gpu'])):,}",  # type: ignore[arg-type]
                        f"{ua:.3f} → {ub:.3f}",
                        str(b["bottleneck"]),
                        cliff_why(b),
                    ]
                )
    if not rows:
        return [f"No fall of utilization by more than {CLIFF_RATIO:g}x between neighbouring sizes."]
    header = ["scaling", "training FLOP", "GPUs", "utilization", "bottleneck", "why"]
    return table(header, rows)


def results_md() -> str:
    """The whole of docs/results.md."""
    lines = [
        "# Results",
        "",
        GENERATED,
        "",
        "What the model says, as this checkout computes it: every figure below is written by",
        "`bench/results.py` (`make docs`) from `pipeline.run`, the same code as `dmlimits`, and",
        "`tests/test_docs_results.py` fails when a figure differs from what the model gives now.",
        "Thresholds are defined in [schema.md](schema.md) (`thresholds` table) and",
        '[model.md](model.md) §9-10; "spec §n" is a section of',
        "[spec/bottleneck-model.md](spec/bottleneck-model.md). The paper's headlines, utilization",
        "falling beyond about 2e28 FLOP and runs beyond about 2e31 FLOP being infeasible, are held",
        "by `tests/validation/`; agreement with measured training runs is in",
        "[validation.md](validation.md).",
        "",
        "A dash in a limit column: the series ended before reaching that limit (its last point fell",
        f"below {UTILIZATION_FLOOR:g} utilization, or the model-size grid ended), as its note says.",
        "",
        "## The default run",
        "",
        *headline(),
        "",
        "## The paper's comparisons (`physics=paper`, critical batch, 3 months)",
        "",
        "T_crit and T_limit are Model B's closed forms (spec §12) for the series' α and latency;",
        "a dash there is an infinite closed form (an infinite network, or α at 1/2: model.md §12).",
        *paper_tables(),
        "",
        "## Forecast years",
        "",
        *forecast_table(),
        "",
        "## What realistic physics does to the limits",
        "",
        "H100 SXM, critical batch, 3 months; `physics=realistic` adds attention (8 K/V heads,",
        "`scaling.kv_heads`; no dropout, `scaling.dropout`), memory-bound operators, per-GPU",
        "memory, whole-sequence",
        "microbatches, and searches as today's stack runs (Megatron-Core, Transformer Engine,",
        "NCCL on 8-GPU NVLink nodes): flash attention, 1-D tensor parallelism inside the NVLink domain, context",
        "parallelism up to c = 16, plain 1F1B with fewer microbatches than stages, micro-batches",
        "of 1 and 2 sequences beside the paper's fewest four microbatch counts, the batch law",
        "read at the FLOP the row trains, the distributed optimizer's overlapped gradient",
        "reduction, TP communication overlap only inside NVLink, a ring crossing nodes",
        "striped over its ranks' NICs, the GEMM efficiency of NVIDIA's 2025 software on",
        "H100 (`stack`, fitted on its 2025 runs, [validation.md](validation.md)), and experts",
        "split over ranks computing, on the busiest, 1.41 times the balanced tokens, as dropless",
        "routing does (`expert_imbalance`, derived from NVIDIA's Megatron MoE Model Zoo,",
        "[validation.md](validation.md))",
        '([model.md](model.md), Part II). A row "with" or',
        '"without" a key sets that rule to its other value; the last of them sets all fifteen, the',
        "preset before",
        'them. "Alone": the realistic efficiencies with every other switch off but the one named',
        "(8 K/V heads where attention is on, no dropout). Under realistic",
        "physics the linear-scaling end is the first size past the series' peak utilization from",
        "which every larger size runs at or below 0.8 of that peak (the extensions lower",
        "utilization everywhere, and a realistic size's utilization scatters with how its",
        "degrees divide the batch, so a dip that larger sizes climb back from ends nothing). With",
        "attention a size's FLOP and utilization count the transformer it timed (projections and",
        "attention core, 20 tokens per parameter): a dense grid size trains about 1.6 times the",
        "paper's C of the same width with 8 K/V heads, 2.3 times with as many as heads",
        "([model.md](model.md) R.7.1). Every realistic row, the",
        '"alone" ones included, times each layout as the concrete run of that layout: its',
        "collectives as rings on the network level each group spans, its step as a run's 1F1B",
        "pipeline ([model.md](model.md) R.5-R.7), where the paper charges aggregate bandwidth",
        "over the levels; tensor parallelism past an NVLink domain and flat rings over many",
        "data-parallel ranks cost more there ([model.md](model.md) R.10). The realistic wall is",
        "not the paper's latency wall: with whole sequences, data, context and pipeline",
        "parallelism share the batch's sequences (N_DP · N_PP ≤ c · B_seqs with 1F1B's",
        "m ≥ N_PP), so past 8 · c · B_seqs H100s a tensor-parallel group inside its NVLink",
        "domain leaves the pipeline with fewer microbatches than stages, and the step becomes",
        "bubble-bound; without `tp_in_domain` tensor parallelism crosses InfiniBand there and",
        "the step becomes communication-bound (the table's rows). A realistic cluster is any",
        "whole number of 8-GPU nodes (`cluster_sizes=nodes`, [model.md](model.md) §9.4), where",
        "the paper's walk tries S·2^i GPUs (the `cluster_sizes=powers_of_two` row).",
        "",
        *realistic_table(),
        "",
        "### Utilization cliffs",
        "",
        f"Where the default realistic series' utilization falls by more than {CLIFF_RATIO:g}x from",
        "one grid size to the next, the larger size's `bottleneck` (the largest part of its",
        "step, [schema.md](schema.md)) says which resource bound it, and its layout why that",
        "part is large (`dp`, `tp_model`·`tp_ff`, `pp`, `microbatches` and the per-level",
        "factors, `*_levels`, of its row).",
        "",
        *cliffs_table(),
        "",
        "## Critical and observed batches",
        "",
        "H100 SXM, 3 months: the limits under the critical batch law (the default) and under",
        "`batch=observed`, the law fitted to the batch sizes of 32 large language-model runs in",
        "Epoch AI's data (B = 1.570e-6 · C^0.519 tokens, exponent 0.157-1.126 at 90%;",
        "[sources.md](sources.md) §6a). Observed batches grow faster with compute than the",
        "critical law's C^(1/6), so each step carries more tokens and fewer steps fit the same",
        "compute: the limits move out, far out where the critical law's few sequences per",
        "step are what bound the realistic search. Read these rows with the fit's interval:",
        "at its low end (0.157) the observed exponent is close to the critical law's 1/6, and",
        "the fitted exponent carries the labs' move to larger batches over 2020-2024 as well",
        "as a trend in compute.",
        "",
        *observed_batch_table(),
    ]
    return "\n".join(lines)


def readme_md(current: str) -> str:
    """README.md with its headline block (between the markers) rewritten."""
    begin, end = current.index(README_BEGIN), current.index(README_END)
    block = "\n".join([README_BEGIN, *headline(), README_END])
    return current[:begin] + block + current[end + len(README_END) :]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file would change"
    )
    args = parser.parse_args(argv)
    wanted = {RESULTS_MD: results_md(), README_MD: readme_md(README_MD.read_text("utf-8"))}
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text("utf-8") != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} differs from what bench/results.py writes")
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], "utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
