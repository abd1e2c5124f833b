"""The `execution` config node: how series are spread over workers (joblib backends)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum

from pipeline.schema.bounds import MAX_INTEGER
from pipeline.schema.errors import ConfigError, UnknownKeyError

DASK_ADDRESS = re.compile(
    r"(?:(?:tcp|tls|ucx|ws|wss)://)?(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d{1,5}"
)
"""A dask.distributed scheduler address: [protocol://]host:port (an IPv6 host in brackets)."""


class Backend(StrEnum):
    """joblib backends: processes (loky), threads, or a dask.distributed cluster."""

    LOKY = "loky"
    THREADING = "threading"
    DASK = "dask"


@dataclass(frozen=True, slots=True)
class ExecutionSettings:
    """Validated `execution.*` values."""

    backend: Backend = Backend.LOKY
    n_jobs: int = -1
    chunk_size: int = 8
    dask_address: str | None = None
    dask_workers: int = 2
    ahead: bool = True
    """Let the CLI evaluate a small command's series ahead in forked workers
    (`pipeline.execute.ahead`, docs/scale-out.md "Small commands")."""

    def in_blocks(self, block: int) -> ExecutionSettings:
        """These settings with `chunk_size` rounded up to whole blocks of `block` consecutive
        series (`pipeline.sweep.Sweep.memory_block`), so that a block's series, which share a
        worker's caches, go to one task."""
        if block <= 1 or self.chunk_size % block == 0:
            return self
        return replace(self, chunk_size=-(-self.chunk_size // block) * block)


def _int(node: dict[str, object], key: str, minimum: int | None, allowed: str) -> int:
    value = node.get(key)
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or (minimum is not None and value < minimum)
        or abs(value) > MAX_INTEGER
    ):
        raise ConfigError(f"execution.{key}", value, allowed)
    return value


def execution_from_config(node: dict[str, object]) -> ExecutionSettings:
    """Check the `execution` node and return its settings; ConfigError names a bad key."""
    known = {f for f in ExecutionSettings.__dataclass_fields__}
    for key in node:
        if key not in known:
            raise UnknownKeyError(f"execution.{key}", node[key], known)
    backend = node.get("backend", "loky")
    if backend not in {b.value for b in Backend}:
        raise ConfigError("execution.backend", backend, "one of loky, threading, dask")
    n_jobs = _int(node, "n_jobs", None, "a whole number: -1 (all cores) or ≥ 1 workers, ≤ 2^53")
    if n_jobs == 0 or n_jobs < -1:
        raise ConfigError("execution.n_jobs", n_jobs, "-1 (all cores) or ≥ 1 workers")
    address = node.get("dask_address")
    if address is not None and (
        not isinstance(address, str) or not DASK_ADDRESS.fullmatch(address)
    ):
        raise ConfigError(
            "execution.dask_address", address, "null or a scheduler address like tcp://host:8786"
        )
    if address is not None and backend != Backend.DASK:
        raise ConfigError(
            "execution.dask_address", address, "is used only with execution.backend=dask"
        )
    ahead = node.get("ahead", True)
    if not isinstance(ahead, bool):
        raise ConfigError("execution.ahead", ahead, "true or false")
    return ExecutionSettings(
        backend=Backend(str(backend)),
        n_jobs=n_jobs,
        chunk_size=_int(node, "chunk_size", 1, "a whole number ≥ 1 (series per task), ≤ 2^53"),
        dask_address=address,
        dask_workers=_int(node, "dask_workers", 1, "a whole number ≥ 1, ≤ 2^53"),
        ahead=ahead,
    )
