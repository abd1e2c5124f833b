"""conf/run/*.yaml -> RunSpec: one concrete training run (its keys are a contract).

The keys are `layers, hidden, ffn_hidden, heads, kv_heads, vocab, seq_len, mlp,
global_batch_seqs, microbatch_seqs, tp, pp, dp, cp, ep, interleave, sequence_parallel,
recompute, zero_stage` and `name`, and the optional `layout_search` (default false: the
run's own layout; true: the best layout for its model and batch at its GPU count; the one
switch that searches a run's layout), `experts`
(default 1: a dense transformer) and `top_k` (default 1), `dropout` and `tied_embeddings`
(default true),
`gpu_budget` (default null: a searched layout uses exactly the given GPUs; a number: at most that many), `microbatch_group` (default 0: pp where it divides the microbatches, else the smallest N
Megatron-Core accepts), `overlap_p2p`, `overlap_dp`, `dp_overlap`
(Megatron-Core's distributed optimizer overlap), `tp_comm_overlap` (Transformer Engine's,
inside NVLink only), `cp_all_gather`, `grad_reduce_fp32` (gradients reduced in FP32) and
`fp8_params` (FP8 weights only, under `physics.precision=fp8`) (default false), `expert_imbalance`
(default 0: balanced routing; the busiest expert rank's excess of routed tokens) and `tokens` (default null: the scaling law's
tokens per parameter times the run's parameters), declared from the `TransformerShape`,
`RunLayout` and `RunSpec` fields. They may come from a user's own `--config-dir`; docs/configuration.md
documents them. Layers need not divide `pp`: `stage_layers` places them (Llama 3's placement).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields

from pipeline.model.compute.efficiency import fp8_gemms
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.run import RunLayout, RunSpec, stage_layers
from pipeline.model.records.switches import Physics, Recompute
from pipeline.model.records.transformer import Mlp, TransformerShape
from pipeline.model.runs.run_point import run_counts
from pipeline.schema import bounds
from pipeline.schema.compose import RUN_PRESET_NEEDED
from pipeline.schema.errors import ConfigError
from pipeline.schema.physics import zero_stage
from pipeline.schema.section import Section, plain

RUN_KEYS = frozenset(
    {"name", "global_batch_seqs", "layout_search", "tokens", "gpu_budget"}
    | {f.name for f in fields(TransformerShape)}
    | {f.name for f in fields(RunLayout)}
)
"""Every key of a run node (declared from the dataclasses)."""
OPTIONAL_RUN_KEYS = {"experts": 1, "top_k": 1, "microbatch_group": 0}
"""Run keys that may be left out, with the default that keeps a dense run as before."""
OPTIONAL_RUN_SWITCHES = {
    "dropout": True,
    "tied_embeddings": True,
    "overlap_p2p": False,
    "overlap_dp": False,
    "dp_overlap": False,
    "tp_comm_overlap": False,
    "cp_all_gather": False,
    "grad_reduce_fp32": False,
    "fp8_params": False,
}
"""Switches that may be left out, with the default of Megatron-LM's GPT runs (2021-2022)."""
RUN_RECOMPUTE = (Recompute.NONE.value, Recompute.SELECTIVE.value, Recompute.FULL.value)


def run_expert_imbalance(sec: Section, shape: TransformerShape) -> float:
    """`expert_imbalance` (a fraction >= 0; default 0, balanced routing); a ConfigError when
    above 0 for a run without experts, where it would do nothing."""
    if not sec.has("expert_imbalance"):
        return 0.0
    value = sec.number("expert_imbalance", "fraction", exclusive=False)
    if value > 0.0 and shape.experts == 1:
        raise ConfigError(
            sec.key("expert_imbalance"),
            value,
            "does nothing without experts (run.experts > 1): set 0 or leave it out",
        )
    return value


def _divides(sec: Section, key: str, divisor: int, quantity: str, size: int) -> None:
    if size % divisor:
        raise ConfigError(sec.key(key), divisor, f"must divide {quantity} = {size}")


def optional_integer(sec: Section, key: str) -> int:
    """An optional run key's value, or its default (`OPTIONAL_RUN_KEYS`)."""
    return sec.integer(key) if sec.has(key) else OPTIONAL_RUN_KEYS[key]


def optional_switch(sec: Section, key: str) -> bool:
    """An optional run switch's value, or its default (`OPTIONAL_RUN_SWITCHES`)."""
    return sec.boolean(key) if sec.has(key) else OPTIONAL_RUN_SWITCHES[key]


def microbatch_group(sec: Section) -> int:
    """N of the interleaved schedule (0: Megatron-Core's, `gpu_memory.megatron_group_microbatches`),
    or its default when absent."""
    return sec.integer("microbatch_group", minimum=0) if sec.has("microbatch_group") else 0


def gpu_budget(sec: Section, search: bool) -> int | None:
    """The layout search's GPU budget, or None (absent or null); only with layout_search."""
    if not sec.has("gpu_budget") or sec.raw("gpu_budget", "") is None:
        return None
    budget = sec.integer("gpu_budget")
    if not search:
        raise ConfigError(
            sec.key("gpu_budget"),
            budget,
            "is the layout search's budget: set run.layout_search=true",
        )
    return budget


def run_tokens(sec: Section) -> float | None:
    """The run's training tokens, or None (absent or null: from the scaling law)."""
    if not sec.has("tokens"):
        return None
    return sec.optional_number("tokens", "tokens", maximum=bounds.MAX_FLOP)


def run_from_config(node: object, path: str = "run") -> RunSpec | None:
    """The RunSpec of a run node, None for `run: null` (the scaling-law grid)."""
    data = plain(node, path)
    if data is None:
        return None
    if isinstance(data, dict) and data and not {"name", "layers"} & data.keys():
        key = next(iter(data))  # a run node made of `+run.<key>` overrides alone
        raise ConfigError(f"{path}.{key}", data[key], RUN_PRESET_NEEDED)
    sec = Section(data, path, RUN_KEYS)
    shape = TransformerShape(
        layers=sec.integer("layers"),
        hidden=sec.integer("hidden"),
        ffn_hidden=sec.integer("ffn_hidden"),
        heads=sec.integer("heads"),
        kv_heads=sec.integer("kv_heads"),
        vocab=sec.integer("vocab"),
        seq_len=sec.integer("seq_len"),
        mlp=Mlp(sec.choice("mlp", [m.value for m in Mlp])),
        experts=optional_integer(sec, "experts"),
        top_k=optional_integer(sec, "top_k"),
        dropout=optional_switch(sec, "dropout"),
        tied_embeddings=optional_switch(sec, "tied_embeddings"),
    )
    layout = RunLayout(
        tp=sec.integer("tp"),
        pp=sec.integer("pp"),
        dp=sec.integer("dp"),
        microbatch_seqs=sec.integer("microbatch_seqs"),
        cp=sec.integer("cp"),
        ep=sec.integer("ep"),
        interleave=sec.integer("interleave"),
        sequence_parallel=sec.boolean("sequence_parallel"),
        recompute=Recompute(sec.choice("recompute", RUN_RECOMPUTE)),
        zero_stage=zero_stage(sec),
        microbatch_group=microbatch_group(sec),
        overlap_p2p=optional_switch(sec, "overlap_p2p"),
        overlap_dp=optional_switch(sec, "overlap_dp"),
        dp_overlap=optional_switch(sec, "dp_overlap"),
        tp_comm_overlap=optional_switch(sec, "tp_comm_overlap"),
        cp_all_gather=optional_switch(sec, "cp_all_gather"),
        grad_reduce_fp32=optional_switch(sec, "grad_reduce_fp32"),
        fp8_params=optional_switch(sec, "fp8_params"),
        expert_imbalance=run_expert_imbalance(sec, shape),
    )
    search = sec.boolean("layout_search") if sec.has("layout_search") else False
    run = RunSpec(
        sec.string("name"),
        shape,
        sec.integer("global_batch_seqs"),
        layout,
        search,
        run_tokens(sec),
        gpu_budget(sec, search),
    )
    check_run(sec, run)
    return run


def check_run(sec: Section, run: RunSpec) -> None:
    """Raise ConfigError unless the layout can run the model (Megatron-LM's own checks)."""
    shape, lay = run.shape, run.layout
    if shape.top_k > shape.experts:
        raise ConfigError(
            sec.key("top_k"), shape.top_k, f"must be at most experts = {shape.experts}"
        )
    _divides(sec, "ep", lay.ep, "experts", shape.experts)
    _divides(sec, "ep", lay.ep, "dp (experts share the data-parallel ranks)", lay.dp)
    _divides(sec, "heads", shape.heads, "hidden", shape.hidden)
    _divides(sec, "kv_heads", shape.kv_heads, "heads", shape.heads)
    _divides(sec, "tp", lay.tp, "heads", shape.heads)
    _divides(sec, "tp", lay.tp, "ffn_hidden", shape.ffn_hidden)
    _divides(sec, "tp", lay.tp, "kv_heads (each rank holds whole K/V heads)", shape.kv_heads)
    if lay.pp > shape.layers:
        raise ConfigError(sec.key("pp"), lay.pp, f"must be at most layers = {shape.layers}")
    largest = max(stage_layers(shape.layers, lay.pp))
    _divides(sec, "interleave", lay.interleave, "the largest stage's layers", largest)
    _divides(sec, "cp", lay.cp, "seq_len", shape.seq_len)
    _divides(sec, "dp", lay.dp, "global_batch_seqs", run.global_batch_seqs)
    _divides(
        sec,
        "microbatch_seqs",
        lay.microbatch_seqs,
        "each data-parallel rank's batch (global_batch_seqs / dp)",
        run.global_batch_seqs // lay.dp,
    )
    microbatches = run.microbatches
    if lay.interleave > 1 and microbatches < lay.pp:  # plain 1F1B runs any m (docs/model.md)
        raise ConfigError(
            sec.key("global_batch_seqs"),
            run.global_batch_seqs,
            f"gives {microbatches} microbatches per pipeline; the interleaved schedule needs"
            f" at least pp = {lay.pp} (interleave 1 runs fewer at its bubble)",
        )
    if lay.interleave > 1 and lay.pp == 1:
        raise ConfigError(
            sec.key("interleave"), lay.interleave, "must be 1 without pipeline parallelism"
        )


def check_run_precision(run: RunSpec, physics: Physics, hardware: HardwareSpec) -> None:
    """ConfigError on `run.fp8_params` without FP8 GEMMs (`physics.precision=fp8` on a GPU with
    an FP8 peak: a 16-bit run holds no FP8 weights, and the switch would change nothing) or
    without a sharded optimizer (`run.zero_stage` ≥ 1: Megatron-LM refuses
    `--fp8-param-gather` without the distributed optimizer or FSDP)."""
    if not run.layout.fp8_params:
        return
    if not fp8_gemms(hardware, physics):
        raise ConfigError(
            "run.fp8_params",
            True,
            f"holds the weights in FP8, which needs FP8 GEMMs: physics.precision=fp8 (it is "
            f"{physics.precision.value}) on a GPU with an FP8 peak ({hardware.name})",
        )
    if run.layout.zero_stage < 1:
        raise ConfigError(
            "run.fp8_params",
            True,
            "gathers FP8 weights from a sharded optimizer, which needs run.zero_stage >= 1 "
            "(Megatron-Core's distributed optimizer; it is 0)",
        )


def check_run_batch(run: RunSpec, physics: Physics, tokens_per_param: float) -> None:
    """ConfigError on `run.global_batch_seqs` unless the run takes at least one step: a
    global batch of more tokens than the run trains on (its `tokens`, or tokens_per_param
    times its parameters) has no step to time."""
    tokens = run_counts(physics, run, tokens_per_param).n_tokens
    batch_tokens = float(run.global_batch_seqs) * run.shape.seq_len
    if batch_tokens > tokens:
        raise ConfigError(
            "run.global_batch_seqs",
            run.global_batch_seqs,
            f"holds {batch_tokens:.3g} tokens per step, more than the {tokens:.3g} tokens the "
            "run trains on (run.tokens, or scaling.tokens_per_param times its parameters): "
            "not one whole step",
        )


RUN_COUNTERPARTS = {
    "physics.recompute": "run.recompute",
    "physics.zero_stage": "run.zero_stage",
    "physics.grad_reduce_fp32": "run.grad_reduce_fp32",
    "physics.fp8_params": "run.fp8_params",
    "physics.expert_imbalance": "run.expert_imbalance",
    "physics.max_context_parallel": "run.cp",
    "physics.cp_all_gather": "run.cp_all_gather",
    "physics.dp_overlap": "run.dp_overlap",
    "physics.tp_overlap_in_domain": "run.tp_comm_overlap",
    "physics.whole_sequences": "",
    "physics.tensor_parallel": "",
    "physics.tp_in_domain": "",
    "physics.few_microbatches": "",
    "physics.small_microbatches": "",
    "physics.batch_at_row_flop": "",
    "scaling.seq_len": "run.seq_len",
    "scaling.kv_heads": "run.kv_heads",
    "scaling.dropout": "run.dropout",
    "scaling.ff_ratio": "run.ffn_hidden",
    "scaling.sparse": "run.experts",
    "scaling.grid": "",
    "scaling.depth": "run.layers",
    "scaling.experts": "run.experts",
    "output.whole_grid": "",
    "physics.cluster_sizes": "",
    "parallelism.max_cluster_doublings": "",
}
"""Config keys (or key prefixes) a concrete run does not read, with the run key that says the
same of a run ("": none): grid-search switches of the physics group, the scaling laws other
than the duration and the tokens per parameter, the grid. A run's layout, schedule and model
are its own (`runs.training_run.RunLayouts`, `runs.run_search`)."""


def override_key(override: str) -> str:
    """The dotted key of a command-line override (`+key=value`, `++key=value`, `~key`)."""
    return override.lstrip("+~").split("=", 1)[0]


def override_value(override: str) -> str | None:
    """The value of a command-line override as written; None for a deletion (`~key`)."""
    return override.split("=", 1)[1] if "=" in override else None


def first_override_of(
    overrides: Iterable[str], keys: Iterable[str]
) -> tuple[str, str | None, str] | None:
    """(key, value, which) of the first of `overrides` that sets one of `keys` or a key under
    it (`which`, the one of `keys` it sets): the override a check refuses; None if none does."""
    wanted = tuple(keys)
    for override in overrides:
        key = override_key(override)
        for which in wanted:
            if key == which or key.startswith(f"{which}."):
                return key, override_value(override), which
    return None


def check_run_overrides(run_name: str, overrides: tuple[str, ...]) -> None:
    """ConfigError naming the first override of a key `run=run_name` does not read
    (`RUN_COUNTERPARTS`): set on the command line, it would change nothing while the row and
    its summary said otherwise (`physics.recompute=none` beside a run that recomputes)."""
    found = first_override_of(overrides, RUN_COUNTERPARTS)
    if found is None:
        return
    key, value, ignored = found
    counterpart = RUN_COUNTERPARTS[ignored]
    instead = f" (the run's own key is {counterpart})" if counterpart else ""
    raise ConfigError(
        key,
        value,
        f"is not read by run={run_name}, whose model, batch and layout are its own: drop "
        f"it{instead}",
    )
