"""The import contracts of docs/architecture.md hold (`lint-imports`, as `make lint` runs it)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

REPO = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept() -> None:
    """lint-imports finds every contract of pyproject.toml kept (the layers, the model's inner
    layers, the pure-physics contract)."""
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-logo", "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with (REPO / "pyproject.toml").open("rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    assert f"Contracts: {len(contracts)} kept, 0 broken." in result.stdout


def import_cycles(package: str) -> list[list[str]]:
    """The cycles of `package`'s import graph as grimp (import-linter's graph) reads it: every
    import statement of every module, those inside a function or under TYPE_CHECKING included.
    One list of modules per strongly connected component of more than one module (Tarjan)."""
    graph = grimp.build_graph(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


def test_package_imports_form_no_cycle() -> None:
    """No two modules of the package import each other, directly or through others, even by an
    import inside a function (which the layer contracts cannot see inside one layer)."""
    assert import_cycles("pipeline") == []
