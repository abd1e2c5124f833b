"""The one step assembly's overlap rules (pipeline/model/step/assembly.py; docs/model.md R.6,
R.7): Megatron-Core's distributed optimizer overlap and TP overlap inside the NVLink domain."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ScalingLaws, model_shape
from pipeline.model.records.switches import Physics
from pipeline.model.search.candidates import Candidates, enumerate_candidates
from pipeline.model.search.counts import grid_shape
from pipeline.model.search.realistic import RealisticSteps, realistic_steps
from pipeline.model.search.search import physics_hardware
from pipeline.model.step.assembly import distributed_optimizer_exposed_s, dp_bucket_params
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

times = st.one_of(st.just(0.0), st.floats(min_value=1e-9, max_value=1e3))
"""Times in s: zero, or far enough from the subnormals for a relative tolerance."""


def realistic(**changes: object) -> Physics:
    """The shipped realistic physics with `changes`."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    return dataclasses.replace(physics, **changes)  # type: ignore[arg-type]


def grid_steps(physics: Physics, n_gpu: int, d_model: int = 12288) -> RealisticSteps:
    """Every candidate's step of a dense grid model on n_gpu H100s."""
    shape = grid_shape(physics, model_shape(d_model, ScalingLaws(), SearchOptions().quirks))
    hw = physics_hardware(preset("h100_sxm"), physics)
    c = enumerate_candidates(hw, shape, n_gpu, SearchOptions(), physics)
    assert isinstance(c, Candidates)
    return realistic_steps(hw, physics, shape, n_gpu, c, SearchOptions())


BUCKET_SHARES = st.one_of(st.just(0.0), st.floats(min_value=1e-9, max_value=1.0))
"""A bucket's share of the reduction: none, or at least 1e-9 (a smaller share of a reduction of
`times` makes a bucket of subnormal seconds, whose halves underflow to 0)."""


@given(times, BUCKET_SHARES, times, times, st.booleans())
def test_distributed_optimizer_exposed_between_one_bucket_and_the_reduction(
    t_reduce: float, share: float, backward: float, forward: float, sharded: bool
) -> None:
    """The exposed reduction is at least one bucket's and at most the whole reduction's."""
    t_bucket = share * t_reduce
    out = distributed_optimizer_exposed_s(
        np.array([t_reduce]),
        np.array([t_bucket]),
        np.array([backward]),
        np.array([forward]),
        np.array([sharded]),
    )[0]
    assert t_bucket * (1.0 - 1e-12) <= out <= t_reduce * (1.0 + 1e-12)


def test_distributed_optimizer_exposes_only_a_bucket_behind_long_passes() -> None:
    """Behind passes longer than the reduction only the last reduce-scatter bucket and the
    first all-gather bucket are exposed (half a bucket's all-reduce each); without them, all."""
    args = (np.array([8.0]), np.array([1.0]))
    sharded = np.array([True])
    long = np.array([100.0])
    assert distributed_optimizer_exposed_s(*args, long, long, sharded)[0] == 1.0
    assert distributed_optimizer_exposed_s(*args, long, long, ~sharded)[0] == 1.0
    zero = np.array([0.0])
    assert distributed_optimizer_exposed_s(*args, zero, zero, sharded)[0] == 8.0


def test_dp_bucket_params_is_megatron_core_default() -> None:
    """A bucket holds max(4e7, 1e6 · d) parameters (Megatron-Core's default bucket_size)."""
    assert list(dp_bucket_params(np.array([1.0, 40.0, 512.0]))) == [4e7, 4e7, 5.12e8]


def test_dp_overlap_never_lengthens_a_step() -> None:
    """With the distributed optimizer's overlap every candidate's exposed gradient reduction
    and step are at most those without it, and some are shorter."""
    on = grid_steps(realistic(dp_overlap=True), 4096)
    off = grid_steps(realistic(dp_overlap=False), 4096)
    assert np.all(on.t_dp_comm_s <= off.t_dp_comm_s)
    assert np.all(on.t_step_s <= off.t_step_s)
    assert np.any(on.t_dp_comm_s < off.t_dp_comm_s)


def test_tp_overlap_in_domain_exposes_tensor_parallelism_across_nodes() -> None:
    """With `tp_overlap_in_domain` a candidate whose tensor-parallel group spans more than an
    NVLink domain (8 H100s) pays its whole TP collectives; inside it, the overlapped part."""
    on = grid_steps(realistic(tp_overlap_in_domain=True), 4096)
    off = grid_steps(realistic(tp_overlap_in_domain=False), 4096)
    shape = grid_shape(realistic(), model_shape(12288, ScalingLaws(), SearchOptions().quirks))
    hw = physics_hardware(preset("h100_sxm"), realistic())
    c = enumerate_candidates(hw, shape, 4096, SearchOptions(), realistic())
    assert isinstance(c, Candidates)
    tp = c.degrees[:, 1] * c.degrees[:, 2]
    inside, across = tp <= 8, tp > 8
    assert inside.any()
    assert across.any()
    assert np.array_equal(on.t_tp_comm_s[inside], off.t_tp_comm_s[inside])
    assert np.all(on.t_tp_comm_s[across] >= off.t_tp_comm_s[across])
    assert np.any(on.t_tp_comm_s[across] > off.t_tp_comm_s[across])


def test_grad_reduce_fp32_lengthens_only_the_reduce_scatter() -> None:
    """With FP32 gradients the distributed optimizer's exposed reduction takes the
    reduce-scatter at the gradients' all-reduce and the all-gather at the 16-bit one."""
    sharded, zero = np.array([True]), np.array([0.0])
    wide = distributed_optimizer_exposed_s(
        np.array([16.0]), np.array([2.0]), zero, zero, sharded, np.array([8.0]), np.array([1.0])
    )
    assert wide[0] == 8.0 + 4.0


def test_grad_reduce_fp32_never_shortens_a_step() -> None:
    """Reducing gradients in FP32 leaves every candidate's compute as it was and lengthens
    its exposed gradient reduction and step or keeps them, some strictly (the per-GPU memory
    check off, so that the 4-byte gradients' memory leaves the candidates as they were)."""
    on = grid_steps(realistic(grad_reduce_fp32=True, gpu_memory=False), 4096)
    off = grid_steps(realistic(grad_reduce_fp32=False, gpu_memory=False), 4096)
    assert on.t_step_s.shape == off.t_step_s.shape
    assert np.array_equal(on.t_compute_s, off.t_compute_s)
    assert np.all(on.t_dp_comm_s >= off.t_dp_comm_s)
    assert np.all(on.t_step_s >= off.t_step_s)
    assert np.any(on.t_dp_comm_s > off.t_dp_comm_s)
