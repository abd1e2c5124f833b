"""A key the config has no place for, written without Hydra's ``+``: the schema's own line
naming it (with the closest allowed key), not Hydra's advice to add it with ``+``, which would
only lead to that line; Hydra's message where its advice stands."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import DictConfig

from pipeline.cli.check import SweepCheck, check_command_line
from pipeline.cli.main import EXIT_BAD_INPUT, check
from pipeline.schema.compose import compose_with_hydra, hydra_session
from pipeline.schema.errors import ConfigError

MISSPELT = [
    # (id, override, the line the check prints after "dmlimits: error: ", up to the hint)
    ("nested", "hardware.network.latency=1",
     "hardware.network.latency = 1: unknown key; allowed keys: bandwidth_gb_per_s, latency_us, "
     "level_sizes, nics_per_node; did you mean latency_us?"),
    ("output", "output.rot=x",
     "output.rot = 'x': unknown key; allowed keys: flush_s, nightly_root, resume, root, "
     "run_date, series_per_part, whole_grid; did you mean root?"),
    ("physics", "physics.precison=fp8", "physics.precison = 'fp8': unknown key; allowed keys: "),
    ("root_node", "outptu.root=x", "outptu = {'root': 'x'}: unknown key; allowed keys: batch, "),
    ("execution", "execution.nj=3", "execution.nj = 3: unknown key; allowed keys: ahead, "),
]  # fmt: skip


def check_line(
    args: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    root: bool = True,
) -> str:
    """The one line `check` prints for a command line it refuses with exit status 2 (with an
    output root in the temporary directory unless not `root`)."""
    monkeypatch.chdir(tmp_path)
    code = check([*args, *([f"output.root={tmp_path / 'data'}"] if root else [])])
    captured = capsys.readouterr()
    assert code == EXIT_BAD_INPUT
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("dmlimits: error: ")
    assert list(tmp_path.iterdir()) == []
    return lines[0].removeprefix("dmlimits: error: ")


@pytest.mark.parametrize(
    ("override", "expected"), [pytest.param(o, e, id=i) for i, o, e in MISSPELT]
)
def test_misspelt_key_is_named_by_the_schema_without_plus(
    override: str,
    expected: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without ``+`` the line is the one ``+`` would lead to: the key, its value, the keys
    allowed there and the closest one; no advice to add the key."""
    line = check_line([override], tmp_path, monkeypatch, capsys)
    assert line.startswith(expected)
    assert "Could not override" not in line
    assert "+" not in line
    assert line == check_line([f"+{override}"], tmp_path, monkeypatch, capsys)


def test_misspelt_sweep_axis_is_named_by_the_schema_without_plus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep axis naming a field the config lacks gets the schema's line with the fields
    where it points and the closest one, with ``+`` or without, not Hydra's advice."""
    override = "sweep.axes.hardware.hbm_bandwith_gb_per_s=[1,2]"
    line = check_line(["sweep=smoke", override], tmp_path, monkeypatch, capsys)
    assert line.startswith(
        "sweep.axes.hardware.hbm_bandwith_gb_per_s = [1, 2]: unknown config field "
        "hardware.hbm_bandwith_gb_per_s; allowed keys: dense_fp8_tflop_per_s, "
    )
    assert line.endswith("; did you mean hbm_bandwidth_gb_per_s?")
    assert line == check_line(["sweep=smoke", f"+{override}"], tmp_path, monkeypatch, capsys)


SECTIONS_GIVEN_VALUES = {
    "output=/data/x": "output = '/data/x': must be a mapping of keys to values",
    "execution=dask": "execution = 'dask': must be a mapping of keys to values",
    "execution=null": "execution = null: must be a mapping of keys to values",
}
"""A section set to a plain value on the command line, and the one line the check prints."""


@pytest.mark.parametrize("override", list(SECTIONS_GIVEN_VALUES))
def test_a_section_given_a_plain_value_is_refused_in_one_line(
    override: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``output=/data/x`` for ``output.root=/data/x`` (or ``execution=dask`` for
    ``execution.backend=dask``) is the schema's line naming the section, exit status 2."""
    root = not override.startswith("output")
    line = check_line([override], tmp_path, monkeypatch, capsys, root)
    assert line == SECTIONS_GIVEN_VALUES[override]


def test_key_of_a_projection_says_which_preset_has_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``hardware.year`` on a GPU preset names the preset whose key it is."""
    line = check_line(["hardware.year=2030"], tmp_path, monkeypatch, capsys)
    assert line.startswith("hardware.year = 2030: unknown key; allowed keys: dense_fp8_")
    assert line.endswith("; year is a key of hardware=projected (a catalog GPU moved to a year)")


@pytest.mark.parametrize(
    ("override", "key"),
    [
        pytest.param("sweep.max_series=3", "sweep.max_series", id="optional-schema-key"),
        pytest.param("hydra.foo=1", "hydra.foo", id="hydra-key"),
    ],
)
def test_hydra_advice_stands_for_a_key_the_schema_takes(
    override: str,
    key: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A key the schema takes but the composed config lacks (or Hydra's own) keeps Hydra's
    message and its advice to add it with ``+``."""
    line = check_line([override], tmp_path, monkeypatch, capsys)
    assert line == f"Could not override '{key}'; To append to your config use +{override}"


def test_misspelt_key_next_to_another_mistake_keeps_hydra_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """When the check of the config with the key added stops on another value first, nothing
    is said of the key that is not known: Hydra's message stands."""
    args = ["physics.precison=fp8", "scaling.duration_months=0"]
    line = check_line(args, tmp_path, monkeypatch, capsys)
    assert line.startswith("Could not override 'physics.precison'")


def test_misspelt_swept_key_names_its_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A multirun whose jobs the check composes (Hydra's basic sweeper) names the job."""
    args = ["-m", "hydra/sweeper=basic", "hardware.network.latency=1,2"]
    line = check_line(args, tmp_path, monkeypatch, capsys)
    assert line.startswith("hardware.network.latency = 1: unknown key; allowed keys: ")
    assert line.endswith("; did you mean latency_us? (job hardware.network.latency=1)")


def test_sweep_check_names_a_misspelt_key_of_a_job(tmp_path: Path) -> None:
    """dmlimits' sweeper composes the jobs itself: a job it cannot compose for a key the
    schema refuses is the schema's line, naming the job."""
    checked = check_command_line(
        ["-m", "hardware.network.latency=1,2", f"output.root={tmp_path / 'data'}"],
        sweeper_checks_jobs=True,
    )
    assert checked is not None

    def compose() -> DictConfig:  # as the sweeper composes a job: Hydra's "Could not override"
        with hydra_session():
            return compose_with_hydra(job)

    job = ["hardware.network.latency=1"]
    with pytest.raises(ConfigError) as info:
        SweepCheck(checked.line)(compose, job, "hardware.network.latency=1")
    assert info.value.key == "hardware.network.latency"
    assert str(info.value).endswith("; did you mean latency_us? (job hardware.network.latency=1)")


REPO = Path(__file__).resolve().parents[2]


DOC_QUOTES = [
    # (command-line arguments of an error line, a doc quoting it)
    (["hardware.hbm_bandwidth_gb_per_s=-1"], REPO / "README.md"),
    (["hardware.hbm_bandwidth_gb_per_s=-1"], REPO / "docs" / "configuration.md"),
    (["output.rot=x"], REPO / "docs" / "configuration.md"),
]


@pytest.mark.parametrize(("args", "doc"), DOC_QUOTES)
def test_docs_quote_the_line_the_command_prints(
    args: list[str],
    doc: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The error lines README.md and docs/configuration.md show are those the command prints."""
    line = f"dmlimits: error: {check_line(args, tmp_path, monkeypatch, capsys)}"
    assert line in doc.read_text()
