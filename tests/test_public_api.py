"""The package uses only the public API of the libraries it imports.

A name is private when a segment of its dotted path starts with ``_`` (``__future__`` and other
dunders are public). Checked over every module of the package, with `ast`:

- imported modules (``import a._b``, ``from a._b import c``) and imported names
  (``from a import _b``);
- attributes of an imported module (``hydra._internal``, ``os._something``), except the
  documented ones in `DOCUMENTED`;
- dotted strings naming a private path of an importable package
  (``"hydra._internal.core_plugins.basic_launcher.BasicLauncher"`` as a config target, or
  given to `importlib.import_module`).

A test rather than ruff's banned-api rule (TID251), which bans the modules it is given by
name: this one rejects any private path of any library, including one added next year.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import pipeline

PACKAGE_DIR = Path(pipeline.__file__).resolve().parent
PLUGIN_DIR = PACKAGE_DIR.parent / "hydra_plugins" / "dmlimits"
"""The package's Hydra plugin (its sweeper), shipped in the same wheel."""
OWN = "pipeline"
DOCUMENTED = frozenset({"os._exit"})
"""Underscore names that their library documents as public."""
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def is_private(path: str) -> bool:
    """Whether a dotted path of another package has a segment starting with ``_`` (not a dunder)."""
    parts = path.split(".")
    if parts[0] == OWN or path in DOCUMENTED:
        return False
    return any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in parts)


def is_library(top: str) -> bool:
    """Whether a top-level name is an importable module other than this package."""
    if top == OWN:
        return False
    if top in sys.stdlib_module_names:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def attribute_path(node: ast.Attribute) -> str | None:
    """``a.b.c`` of an attribute chain rooted at a name, else None."""
    parts: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        parts.append(current.attr)
        current = current.value
    if not isinstance(current, ast.Name):
        return None
    return ".".join([current.id, *reversed(parts)])


def private_uses(source: str) -> Iterator[tuple[int, str]]:
    """(line, dotted path) of every private name of a library that `source` uses."""
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # a local name bound to a library module -> its path
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == OWN:
                    continue
                yield from [(node.lineno, alias.name)] if is_private(alias.name) else []
                local = alias.asname or alias.name.split(".")[0]
                modules[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == OWN:
                continue
            for alias in node.names:
                path = f"{node.module}.{alias.name}"
                if is_private(path):
                    yield node.lineno, path
                modules[alias.asname or alias.name] = path
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            path = attribute_path(node)
            if path is None:
                continue
            root, _, rest = path.partition(".")
            if root in modules and is_private(f"{modules[root]}.{rest}"):
                yield node.lineno, f"{modules[root]}.{rest}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value.strip()
            if DOTTED.fullmatch(text) and is_private(text) and is_library(text.split(".")[0]):
                yield node.lineno, text


def package_modules() -> list[Path]:
    """Every Python file of the package and of its Hydra plugin."""
    return sorted([*PACKAGE_DIR.rglob("*.py"), *PLUGIN_DIR.rglob("*.py")])


def test_package_uses_no_private_name_of_a_library() -> None:
    """No module of the package imports, reaches or names a private module of a library."""
    found = [
        f"{path.relative_to(PACKAGE_DIR.parent)}:{line}: {name}"
        for path in package_modules()
        for line, name in private_uses(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("from hydra._internal.utils import get_args_parser", "hydra._internal.utils"),
        ("import hydra._internal.utils", "hydra._internal.utils"),
        ("from concurrent.futures import _base", "concurrent.futures._base"),
        ("import hydra\nhydra._internal.utils.x()", "hydra._internal.utils.x"),
        ("import multiprocessing as mp\nmp._private()", "multiprocessing._private"),
        ('T = "hydra._internal.core_plugins.basic_launcher.BasicLauncher"', "hydra._internal"),
    ],
)
def test_private_uses_finds_each_kind(source: str, name: str) -> None:
    """Each kind of private use is found: import, from-import, attribute, dotted string."""
    assert [found for _, found in private_uses(source) if found.startswith(name)]


@pytest.mark.parametrize(
    "source",
    [
        "from __future__ import annotations",
        "import os\nos._exit(1)",
        "from pipeline.io import _private_of_ours",
        "from hydra import __version__",
        'x = "self._cache.size"',
        "import collections\nt = collections.namedtuple('T', 'a')(1)._asdict()",
    ],
)
def test_private_uses_accepts_public_names(source: str) -> None:
    """Dunders, documented underscore names, our own names and non-library strings pass."""
    assert list(private_uses(source)) == []
