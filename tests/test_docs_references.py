"""Code the docs name in backticks exists (`pipeline.x.y`, `module.name`, `module.py`); links resolve.

A backticked dotted name in README.md or docs/*.md (the spec under docs/spec/ describes the
original implementation and is left out) is one of:
- a reference into the package, `pipeline.io.read` or `search.clear_caches`: it must resolve to
  a module or an object of the package (a short form is tried against every module of that name);
- a config key (`output.root`, `efficiency.matmul`: any dotted suffix of a key in conf/), or a
  column (`points.n_gpu`: a table and a column of docs/schema.md), which are not code;
- anything else whose first part names no module of the package (`index.html`, `.inf`).
A file name `name.py` must be a module of the package or a file of tests/, bench/ or the root.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import yaml

import pipeline
from pipeline.schema.keys import ROOT_NODES

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
CONF = REPO / "conf"
TICKED = re.compile(r"`([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+)(?:\(\))?`")
"""A backticked dotted name, optionally called: `a.b`, `a.b.c()`."""
FILE_SUFFIXES = {"py", "yaml", "md", "png", "html", "json", "csv", "parquet", "duckdb", "txt"}


@cache
def modules() -> dict[str, list[str]]:
    """Every module and package of `pipeline`, by its last name part (and by its full name)."""
    names = ["pipeline"] + [
        m.name
        for m in pkgutil.walk_packages(pipeline.__path__, "pipeline.")
        if ".conf" not in m.name and not m.name.endswith("__main__")
    ]
    by_name: dict[str, list[str]] = {}
    for name in names:
        by_name.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    return by_name


def resolves(dotted: str) -> bool:
    """`dotted` is a module of the package, or an attribute path inside one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def flat_keys(node: object, prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """Every key path of a YAML mapping."""
    if isinstance(node, dict):
        for key, value in node.items():
            path = (*prefix, str(key))
            yield path
            yield from flat_keys(value, path)


@cache
def config_keys() -> frozenset[str]:
    """Every dotted suffix of every key path in conf/ (a group file's keys under its group)."""
    paths: set[tuple[str, ...]] = set()
    for file in CONF.rglob("*.yaml"):
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
        group = file.parent.relative_to(CONF).parts
        text = file.read_text(encoding="utf-8")
        at_root = not group or "@package _global_" in text
        paths.update(flat_keys(data, () if at_root else group))
        if not at_root:
            paths.add(group)
    return frozenset(".".join(p[i:]) for p in paths for i in range(len(p)) if len(p) - i >= 2)


@cache
def columns() -> frozenset[str]:
    """`table.column` for every column docs/schema.md documents."""
    found: set[str] = set()
    table = None
    for line in (REPO / "docs" / "schema.md").read_text(encoding="utf-8").splitlines():
        heading = re.match(r"## `(\w+)`", line)
        if heading:
            table = heading.group(1)
        column = re.match(r"\| `(\w+)` \|", line)
        if table and column:
            found.add(f"{table}.{column.group(1)}")
    return frozenset(found)


@cache
def read_strings() -> frozenset[str]:
    """Every string literal of the package's source: the config keys its readers read."""
    found: set[str] = set()
    for file in Path(pipeline.__file__).parent.rglob("*.py"):
        found.update(re.findall(r"[\"'](\w+)[\"']", file.read_text(encoding="utf-8")))
    return frozenset(found)


def is_config_key(dotted: str) -> bool:
    """A key of conf/ (any dotted suffix), or a key a reader of a root config node reads."""
    first, last = dotted.split(".")[0], dotted.rsplit(".", 1)[-1]
    return dotted in config_keys() or (first in ROOT_NODES and last in read_strings())


@cache
def classes() -> dict[str, list[type]]:
    """Every class defined in the package, by name."""
    found: dict[str, list[type]] = {}
    for names in modules().values():
        for name in names:
            module = importlib.import_module(name)
            for value in vars(module).values():
                if isinstance(value, type) and value.__module__ == name:
                    found.setdefault(value.__name__, []).append(value)
    return found


def class_attribute(dotted: str) -> bool | None:
    """`Class.attr` of a package class: whether it has that attribute or field (None: no class)."""
    first, _, rest = dotted.partition(".")
    if first not in classes():
        return None
    for cls in classes()[first]:
        obj: object = cls
        fields = (
            {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
        )
        if "." not in rest and rest in fields:
            return True
        try:
            for attr in rest.split("."):
                obj = getattr(obj, attr)
        except AttributeError:
            continue
        return True
    return False


def is_code_name(dotted: str) -> bool:
    """`dotted` names the package or starts with a module name of it."""
    return dotted.startswith("pipeline.") or dotted.split(".")[0] in modules()


def reference_ok(dotted: str) -> bool:
    """A code reference resolves; a config key or a column is left to other checks."""
    if dotted.startswith("pipeline."):
        return resolves(dotted)
    first, _, rest = dotted.partition(".")
    if any(resolves(f"{module}.{rest}") for module in modules().get(first, [])):
        return True
    return resolves(f"pipeline.{dotted}") or is_config_key(dotted) or dotted in columns()


def python_files() -> set[str]:
    """Names of the repository's Python files outside the package (tests, bench, the root)."""
    found = {p.name for d in ("tests", "bench") for p in (REPO / d).rglob("*.py")}
    return found | {p.name for p in REPO.glob("*.py")}


def references() -> list[tuple[str, str]]:
    """(document, dotted name) of every backticked dotted name the docs hold, once each."""
    found = {
        (doc.relative_to(REPO).as_posix(), m.group(1))
        for doc in DOCS
        for m in TICKED.finditer(doc.read_text(encoding="utf-8"))
    }
    return sorted(found)


@pytest.mark.parametrize(("doc", "dotted"), references())
def test_docs_reference_resolves(doc: str, dotted: str) -> None:
    """A backticked code name in the docs is a module, object, test file, config key or column."""
    stem, _, suffix = dotted.rpartition(".")
    if suffix in FILE_SUFFIXES:
        if suffix == "py":
            assert stem in modules() or dotted in python_files(), f"{doc}: no file {dotted}"
        return
    if class_attribute(dotted) is not None:
        assert class_attribute(dotted), f"{doc}: `{dotted}`: the class has no such attribute"
    elif is_code_name(dotted):
        assert reference_ok(dotted), f"{doc}: `{dotted}` names nothing in the package"


def test_docs_reference_check_fails_on_a_missing_name() -> None:
    """The check refuses a name that does not exist and accepts one that does."""
    assert not reference_ok("pipeline.io.read.no_such_function")
    assert not reference_ok("search.no_such_function")
    assert reference_ok("pipeline.io.read")
    assert reference_ok("output.root")
    assert class_attribute("Layout.dp")
    assert class_attribute("Layout.no_such_field") is False


def test_architecture_tree_names_every_package() -> None:
    """The tree in docs/architecture.md lists exactly the subpackages of `pipeline/`."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = text.split("## The tree", 1)[1].split("```")[1]
    listed = set(re.findall(r"^  (\w+)/", tree, re.M))
    packages = {
        m.name for m in pkgutil.iter_modules(pipeline.__path__) if m.ispkg and m.name != "conf"
    }
    assert listed == packages


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_docs_relative_links_resolve(doc: Path) -> None:
    """Every relative Markdown link of README.md and docs/*.md points at a file that exists."""
    targets = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8"))
    missing = [t for t in targets if not (doc.parent / t).exists()]
    assert missing == []
