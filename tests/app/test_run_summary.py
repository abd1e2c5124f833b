"""A concrete run's summary says what a planner reads: layout, MFU and HFU, step time, days,
memory per GPU, and feasible or every reason it is not (docs/configuration.md, "One concrete run")."""

from __future__ import annotations

import pipeline
from pipeline.app.run_summary import run_lines


def summary(*overrides: str) -> str:
    """The summary `dmlimits` prints for these overrides."""
    return pipeline.run(list(overrides)).summary()


def test_run_summary_shows_layout_throughput_time_and_memory() -> None:
    """GPT 1T on A100 80GB (realistic physics) shows its 3072 GPUs, MFU, step time, days and
    memory per GPU, and no grid column (wall, T_crit)."""
    result = pipeline.run(["run=gpt_1t", "hardware=a100_sxm_80gb", "physics=realistic"])
    text, row = result.summary(), result.points.row(0, named=True)
    assert "run gpt_1t on a100_sxm_80gb" in text
    assert "physics=realistic" in text
    assert f"{row['n_gpu']:.0f} GPUs: tp 8 x pp 64 x dp 6 x cp 1 (ep 1)" in text
    assert f"MFU {row['mfu']:.3f}, HFU {row['hfu']:.3f}" in text
    assert f"{row['step_time_s']:.4g} s per step" in text
    assert f"{row['training_time_s'] / 86400:.4g} days of training" in text
    assert (
        f"memory per GPU {row['memory_per_gpu_bytes'] / 1e9:.1f} GB of 85.9 GB of HBM (the "
        "datasheet's 80 GB as the driver reports them): fits"
    ) in text
    assert "T_crit" not in text
    assert "wall" not in text


def test_run_summary_names_the_duration_reason_in_words() -> None:
    """An infeasible run over its budget says how many days against how many, not "wall"."""
    text = summary("run=gpt_1t", "hardware=a100_sxm_80gb", "physics=realistic")
    assert "infeasible: trains for" in text
    assert "over the budget of 91.26 days" in text


def test_run_summary_of_a_searched_layout_names_physics_hardware_and_every_reason() -> None:
    """run.layout_search under the default physics names physics=paper and h100_sxm, and both
    its memory per GPU (which paper physics does not check) and its duration as reasons."""
    text = summary("run=gpt_1t", "run.layout_search=true")
    assert "run gpt_1t on h100_sxm" in text
    assert "physics=paper" in text
    assert "best layout run.layout_search found" in text
    verdict = [line for line in text.splitlines() if "infeasible:" in line]
    assert len(verdict) == 1
    assert "GB per GPU, more than the 80 GB of HBM" in verdict[0]
    assert "physics=paper does not check it" in verdict[0]
    assert "trains for" in verdict[0]


def test_run_summary_of_a_feasible_run_says_so() -> None:
    """GPT 1.7B on 32 A100s fits and trains within three months: one line says feasible."""
    text = summary("run=gpt_1p7b", "hardware=a100_sxm_80gb", "physics=realistic")
    assert "feasible: fits and trains within the budget" in text
    assert "infeasible" not in text


def test_run_summary_says_when_the_physics_counts_only_the_mlp_blocks() -> None:
    """Under physics=paper the 1T run counts 6.71e11 parameters (MLP blocks alone): the summary
    says so beside the count; under realistic physics it counts all 1.01e12 without a note."""
    paper = pipeline.run(["run=gpt_1t"])
    count = paper.points["n_params"][0]
    assert f"{count:.3g} parameters (physics=paper: the MLP blocks alone" in paper.summary()
    realistic = pipeline.run(["run=gpt_1t", "physics=realistic"])
    count = realistic.points["n_params"][0]
    assert f"{count:.3g} parameters, " in realistic.summary()


def test_run_summary_layout_names_context_and_expert_parallelism_apart() -> None:
    """Llama 3 405B at 128K tokens shows dp 8 x cp 16 (Llama Team 2024, Table 4), and an
    8-expert GPT 1.7B its 32 data-parallel ranks with 8 of them sharding the experts."""
    text = summary("run=llama3_405b_128k_16384", "physics=realistic")
    assert "16384 GPUs: tp 8 x pp 16 x dp 8 x cp 16 (ep 1)" in text
    text = summary("run=gpt_1p7b", "run.experts=8", "run.top_k=2", "run.ep=8")
    assert "32 GPUs: tp 1 x pp 1 x dp 32 x cp 1 (dp 32 = ep 8 x 4 replicas" in text


def test_run_summary_says_how_dp_splits_into_the_rows_dp_and_ep() -> None:
    """With experts over ep 4 of GPT 1.7B's 32 data-parallel ranks, the summary's dp 32 (the
    run's `dp`) is shown as ep 4 x 8 replicas of each expert shard, the 8 its row's `dp` holds."""
    result = pipeline.run(["run=gpt_1p7b", "run.experts=8", "run.top_k=2", "run.ep=4"])
    row = result.points.row(0, named=True)
    assert (row["dp"], row["ep"]) == (8, 4)
    expected = (
        "tp 1 x pp 1 x dp 32 x cp 1 (dp 32 = ep 4 x 8 replicas of each expert shard: points.dp 8)"
    )
    assert expected in result.summary()


def test_run_summary_of_a_resumed_run_points_to_its_row() -> None:
    """A run read back from the dataset (no point kept) says where its row is."""
    scenario = pipeline.run(["run=gpt_1p7b"]).report.outcomes[0].scenario
    assert run_lines(scenario, None)[-1].endswith("its row is in points/")


def test_run_summary_names_the_software_its_gemms_are_timed_as() -> None:
    """A realistic run says which software generation times its GEMMs and at what share of
    u_eff x peak (`physics.stack`, docs/model.md R.9): H100's own under 2025, `efficiency.matmul`
    under 2024; the paper's model reads no efficiency and says none."""
    new = summary("run=llama3_405b_8k_16384", "physics=realistic")
    assert "physics=realistic (2025 software: 16-bit GEMMs at 0.891 of u_eff x peak)" in new
    old = summary("run=llama3_405b_8k_16384", "physics=realistic", "physics.stack=2024")
    assert "physics=realistic (2024 software: 16-bit GEMMs at 0.775 of u_eff x peak)" in old
    assert "software" not in summary("run=llama3_405b_8k_16384").splitlines()[0]


def test_run_summary_names_the_number_format_its_gemms_ran_in() -> None:
    """Under `physics.precision=fp8` the header gives the FP8 speedup over the 16-bit rate (1.77
    on H100, docs/model.md R.11); on a GPU without an FP8 peak it says the GEMMs ran 16-bit,
    where the run's row would otherwise not show that the switch did nothing."""
    fp8 = summary("run=llama3_405b_8k_16384", "physics=realistic", "physics.precision=fp8")
    assert "(2025 software: FP8 GEMMs at 1.77 x 0.891 of u_eff x peak)" in fp8
    a100 = summary(
        "run=gpt_1p7b", "hardware=a100_sxm_80gb", "physics=realistic", "physics.precision=fp8"
    )
    assert (
        "(2025 software: 16-bit GEMMs at 0.775 of u_eff x peak, a100_sxm_80gb having no 2025 "
        "factor: the 2024 rate; a100_sxm_80gb has no FP8 peak, so physics.precision=fp8 runs "
        "them 16-bit)"
    ) in a100


def test_run_summary_says_how_a_mixture_of_experts_routes() -> None:
    """A run with experts names its routing as the step charges it: in balance by default, the
    busiest expert rank's share under `run.expert_imbalance`, none over one expert rank; a dense
    run says nothing of routing (docs/model.md R.5.1)."""
    moe = ["run=gpt_1t", "hardware=a100_sxm_80gb", "physics=realistic", "run.experts=8"]
    moe += ["run.top_k=2"]
    assert "top-2 of 8 experts over 2 expert ranks in balance" in summary(*moe, "run.ep=2")
    busy = summary(*moe, "run.ep=2", "run.expert_imbalance=0.41")
    assert "the busiest computing 1.41 x the balanced tokens (run.expert_imbalance 0.41)" in busy
    assert "all on every GPU: routing moves no work between GPUs" in summary(*moe)
    assert "routing" not in summary("run=gpt_1t", "hardware=a100_sxm_80gb", "physics=realistic")
