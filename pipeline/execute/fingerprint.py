"""The model's version: a hash of the source of the code that computes a series' numbers.

`series_id` hashes it with the scenario, so a change to the physics gives new series ids and a
resumed sweep recomputes instead of keeping rows of the old model. The sources are read through
`importlib.resources`, which works for a source checkout, an editable install and a wheel; they
are read once per process (a dozen small files, well under a millisecond).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from importlib.resources import files
from importlib.resources.abc import Traversable

from pipeline.version import __version__

MODEL_PACKAGES = ("pipeline.model",)
"""Packages whose every .py file is part of the fingerprint (recursively)."""


def _sources(node: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    """(relative name, file) of every .py file under `node`, in name order."""
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        name = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _sources(child, f"{name}/")
        elif child.name.endswith(".py"):
            yield name, child


def source_fingerprint(sources: Iterator[tuple[str, bytes]], version: str) -> str:
    """sha256 over (name, bytes) of each source file and the package version, as hex."""
    digest = hashlib.sha256(version.encode("utf-8"))
    for name, data in sources:
        digest.update(b"\0" + name.encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def _model_sources() -> Iterator[tuple[str, bytes]]:
    for package in MODEL_PACKAGES:
        for name, path in _sources(files(package), f"{package}/"):
            yield name, path.read_bytes()


@functools.cache
def model_fingerprint() -> str:
    """The fingerprint of this installation's model code and `pipeline.__version__`."""
    return source_fingerprint(_model_sources(), __version__)
