"""The model's one cache registry (pipeline/model/caches.py): it lists and clears every cache."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pipeline.model
from pipeline.model import caches

REPO = Path(__file__).resolve().parents[2]
MODEL_DIR = Path(pipeline.model.__file__).parent
SERIES = ["hardware=h100_sxm", "scaling.grid.kind=list", "scaling.grid.d_models=[12288,16384]"]
RUN = f"""
import json
from pipeline.execute.series import evaluate_series
from pipeline.model.caches import cache_counts
from pipeline.schema import compose_config, load_scenario
points = evaluate_series(load_scenario(compose_config({SERIES!r}))).points
print(json.dumps({{"rows": [repr(p) for p in points], "counts": cache_counts()}}))
"""


def model_modules() -> list[str]:
    """Every module of pipeline.model, imported (so each cache has registered itself)."""
    names = [m.name for m in pkgutil.walk_packages(pipeline.model.__path__, "pipeline.model.")]
    for name in names:
        importlib.import_module(name)
    return names


def test_caches_every_cache_of_the_model_is_registered() -> None:
    """Every memoized function of every model module is in the registry, and no module makes
    a cache the registry does not see (a bare functools.lru_cache or functools.cache)."""
    names = model_modules()
    found = set()
    for name in names:
        module = sys.modules[name]
        for value in vars(module).values():
            is_cache = hasattr(value, "cache_clear") and hasattr(value, "cache_info")
            if is_cache and not isinstance(value, type):
                found.add(value)
    registered = {entry.cache for entry in caches._REGISTRY.values()}
    assert found <= registered
    assert len(registered) == len(caches.registered())
    for path in MODEL_DIR.rglob("*.py"):
        if path.name != "caches.py":
            text = path.read_text()
            assert not re.search(r"@(functools\.)?(lru_cache|cache)\b", text), path


def test_caches_cleared_run_equals_a_fresh_process() -> None:
    """A series run after `clear_caches` (caches warmed by another series first) gives the same
    rows and the same hits, misses and entries in every cache as in a fresh process."""
    fresh = subprocess.run(
        [sys.executable, "-c", RUN], cwd=REPO, capture_output=True, text=True, check=True
    )
    expected = json.loads(fresh.stdout)
    from pipeline.execute.series import evaluate_series
    from pipeline.schema import compose_config, load_scenario

    evaluate_series(load_scenario(compose_config(["hardware=a100_sxm", *SERIES[1:]])))
    caches.clear_caches()
    points = evaluate_series(load_scenario(compose_config(SERIES))).points
    assert [repr(p) for p in points] == expected["rows"]
    assert {k: list(v) for k, v in caches.cache_counts().items()} == expected["counts"]


def test_caches_docs_list_the_registry() -> None:
    """docs/model.md's cache table lists exactly the registered caches, with their bounds."""
    model_modules()
    text = (REPO / "docs" / "model.md").read_text()
    section = text[text.index("### 9.6 Caches") :]
    section = section[: section.index("\n## ")]
    rows = re.findall(r"^\| `([\w.]+)` \| ([^|]+) \|", section, flags=re.MULTILINE)
    assert {name: bound.strip() for name, bound in rows} == caches.registered()
