"""Docs that cannot drift from the tree: presets, the model's modules and cited sections.

- docs/configuration.md's table of config groups lists every preset of every group of conf/;
- docs/model.md §1's layout table lists every module of `pipeline.model`, and no other;
- every section the code, the tests, the configs or the docs cite exists: `docs/x.md §n`,
  `spec §n` (docs/spec/bottleneck-model.md; a number past a heading's names its numbered item,
  spec §15.4 the fourth item of §15), `docs/x.md R.n` and `docs/x.md, "Title"` (a heading's
  words, or a paragraph's bold lead-in `**Title.**`).
"""

from __future__ import annotations

import math
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import pipeline.model
from pipeline.catalog import METRICS
from pipeline.schema.projected import shipped_catalog
from pipeline.trends.catalog_fits import catalog_trends

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
SPEC = "docs/spec/bottleneck-model.md"
NOT_PRESET_GROUPS = {"hydra"}
"""conf/ folders that are no group a user chooses a preset of (Hydra's own help and sweeper)."""


def section(text: str, heading: str) -> str:
    """The lines of `text` from the heading line starting with `heading` to the next heading
    of the same or a higher level."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    level = len(heading) - len(heading.lstrip("#"))
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(rf"#{{1,{level}}} ", lines[i])),
        len(lines),
    )
    return "\n".join(lines[start:end])


def group_rows() -> dict[str, str]:
    """Group folder -> the choices cell of its row in configuration.md's group table."""
    text = section(
        (REPO / "docs" / "configuration.md").read_text(encoding="utf-8"), "## Config groups"
    )
    return {m[1]: m[2] for m in re.finditer(r"^\| `(\w+)/` \| (.*?) \|", text, re.MULTILINE)}


def groups() -> list[str]:
    """Every config group folder of conf/."""
    return sorted(
        p.name
        for p in CONF.iterdir()
        if p.is_dir() and p.name not in NOT_PRESET_GROUPS and any(p.glob("*.yaml"))
    )


@pytest.mark.parametrize("group", groups())
def test_configuration_lists_every_preset_of_each_group(group: str) -> None:
    """docs/configuration.md's group table has a row for the group naming each of its presets,
    and no preset that is not there."""
    rows = group_rows()
    assert group in rows, f"docs/configuration.md has no row for `{group}/`"
    presets = {p.stem for p in (CONF / group).glob("*.yaml")}
    named = set(re.findall(r"`(\w+)`", rows[group])) - {"null"}
    assert presets - named == set(), f"`{group}/` presets missing from docs/configuration.md"
    assert named - presets == set(), f"`{group}/` names in docs/configuration.md that are no preset"


def model_modules() -> set[str]:
    """Every module of `pipeline.model` (packages' `__init__` left out), as `sub/name` or `name`."""
    return {
        m.name.removeprefix("pipeline.model.").replace(".", "/")
        for m in pkgutil.walk_packages(pipeline.model.__path__, "pipeline.model.")
        if not m.ispkg
    }


def listed_model_modules() -> set[str]:
    """The modules docs/model.md §1's layout table lists, in the form of `model_modules`."""
    text = section((REPO / "docs" / "model.md").read_text(encoding="utf-8"), "## 1.")
    table = text[text.index("**Layout of the code.**") :]
    listed: set[str] = set()
    for first, modules in re.findall(r"^\| `([\w/.]+)` \| (.*?) \|", table, re.MULTILINE):
        if first.endswith(".py"):
            listed.add(first.removesuffix(".py"))
        else:
            listed.update(f"{first}{name}" for name in re.findall(r"`(\w+)`", modules))
    return listed


def test_model_layout_table_lists_every_model_module() -> None:
    """docs/model.md §1 names each module of pipeline/model/ in its layout table, and no module
    that is not there."""
    actual, listed = model_modules(), listed_model_modules()
    assert actual - listed == set(), "modules missing from docs/model.md §1"
    assert listed - actual == set(), "docs/model.md §1 lists modules that do not exist"


CITATION = re.compile(
    r"(?P<doc>\bspec|docs/[\w/-]+\.md)[,:]?\s*\(?"
    r"(?:§\s?(?P<number>\d+(?:\.\d+)*)|(?P<part>R\.\d+(?:\.\d+)?)(?:,\s*\"(?P<after>[^\"]+)\")?"
    r"|\"(?P<title>[^\"]+)\")"
)
"""A citation of a section: `spec §3.2`, `docs/model.md §9.4`, `docs/model.md R.7` (optionally
followed by `, "Title"`), `docs/scale-out.md, "Small commands"`. `spec` is cited by number only."""


def citing_files() -> Iterator[Path]:
    """The files whose citations are checked: the package, tests (this one's examples left out),
    benchmarks, the plugins, the configs, README.md and docs/*.md."""
    for pattern in ("pipeline/**/*.py", "tests/**/*.py", "bench/*.py", "hydra_plugins/**/*.py"):
        yield from (p for p in REPO.glob(pattern) if p != Path(__file__).resolve())
    yield from CONF.rglob("*.yaml")
    yield REPO / "README.md"
    yield from (REPO / "docs").glob("*.md")


def headings(doc: str) -> list[str]:
    """The heading lines of a doc."""
    return [
        line
        for line in (REPO / doc).read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    ]


def number_resolves(doc: str, number: str) -> bool:
    """A heading numbered `number` exists, or one numbered by a prefix of it whose section holds
    the rest as a numbered item (spec §15.4: item 4. of §15)."""
    parts = number.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        found = [h for h in headings(doc) if re.match(rf"#+ {re.escape(prefix)}[. ]", h)]
        if found:
            if cut == len(parts):
                return True
            body = section((REPO / doc).read_text(encoding="utf-8"), found[0])
            return re.search(rf"^\s*{parts[cut]}\. ", body, re.MULTILINE) is not None
    return False


def title_resolves(doc: str, title: str) -> bool:
    """A heading of `doc` holds `title`, or a paragraph of it starts with `**title`."""
    text = (REPO / doc).read_text(encoding="utf-8")
    return any(title in h for h in headings(doc)) or f"**{title}" in text


def citations() -> Iterator[tuple[str, str]]:
    """(citing file, citation) for every citation of a section in the citing files."""
    for file in citing_files():
        text = re.sub(r"\s+", " ", file.read_text(encoding="utf-8"))
        for m in CITATION.finditer(text):
            if m["doc"] == "spec" and m["number"] is None:
                continue  # "spec" alone is a word of the code (a table spec), not a citation
            yield str(file.relative_to(REPO)), m[0]


def resolves(citation: str) -> bool:
    """The section a citation names exists."""
    m = CITATION.match(citation)
    assert m is not None
    doc = SPEC if m["doc"] == "spec" else m["doc"]
    if not (REPO / doc).is_file():
        return False
    if m["number"] is not None:
        return number_resolves(doc, m["number"])
    if m["part"] is not None:
        part = any(re.match(rf"#+ {re.escape(m['part'])}[. ]", h) for h in headings(doc))
        return part and (m["after"] is None or title_resolves(doc, m["after"]))
    return title_resolves(doc, m["title"])


def test_every_cited_section_exists() -> None:
    """Each section a docstring, test, config or doc cites by number or by title is a section
    (or a numbered item, or a bold lead-in) of the doc it names."""
    found = list(citations())
    assert len(found) > 100  # the citations are read at all
    missing = sorted({(file, cited) for file, cited in found if not resolves(cited)})
    assert missing == []


def test_citation_check_refuses_a_missing_section() -> None:
    """A title, a section number or an item number that a doc does not have is not resolved."""
    assert resolves('docs/scale-out.md, "Small commands"')
    assert not resolves('docs/model.md R.7, "One implementation"')
    assert resolves("spec §15.4")
    assert not resolves("spec §15.40")
    assert not resolves("docs/model.md §99")


def fit_text(n: int, low: float, growth: float, high: float) -> str:
    """A fit as docs/trends.md's tables write it: n, growth per year and its 90% interval."""
    if low == growth == high:
        return f"{n}, 1.00 (flat)" if growth == 1.0 else f"{n}, {growth:.2f}"
    return f"{n}, {growth:.2f} ({low:.2f}-{high:.2f})"


def test_trends_doc_tables_give_the_shipped_catalog_fits() -> None:
    """Each metric's n, growth per year and interval in docs/trends.md's two catalog tables are
    those `catalog_trends` fits to the shipped catalog (one latency sample, not two sizes)."""
    trends = catalog_trends(shipped_catalog())
    expected = []
    for metric in METRICS:
        fit = trends.fits[metric.name]
        growth = math.exp(fit.log_growth_per_year)
        expected.append(
            fit_text(fit.n_points, fit.growth_per_year_low, growth, fit.growth_per_year_high)
        )
    text = (REPO / "docs" / "trends.md").read_text(encoding="utf-8")
    first = re.findall(r"^\| [^|]+ \| (\d+) \| ([\d.]+ \([^)]*\)) \|", text, re.MULTILINE)
    assert [f"{n}, {fit}" for n, fit in first] == expected
    merged = re.findall(r"^\| [^|]+ \| (\d+, [\d.]+ \([^)]*\)|\d+, flat) \|", text, re.MULTILINE)
    assert [m.replace(", flat", ", 1.00 (flat)") for m in merged] == expected


def test_architecture_recipes_name_files_that_exist() -> None:
    """Every file path docs/architecture.md's recipes name (`pipeline/io/rows.py`, a folder, a
    `<name>` placeholder matched by any file) is in the tree."""
    text = section((REPO / "docs" / "architecture.md").read_text(encoding="utf-8"), "## Recipes")
    paths = re.findall(r"`((?:conf|pipeline|tests|bench)/[\w/<>.-]*)`", text)
    assert len(paths) > 20
    missing = [p for p in paths if not list(REPO.glob(re.sub(r"<\w+>", "*", p)))]
    assert missing == []
