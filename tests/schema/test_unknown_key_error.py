"""`UnknownKeyError`: the keys allowed where the key is, the closest one, and a pickle that
keeps them (a joblib worker's error reaches the parent whole)."""

from __future__ import annotations

import pickle

import pytest

from pipeline.schema.errors import ConfigError, UnknownKeyError
from pipeline.schema.section import Section


def test_unknown_key_names_the_closest_allowed_key() -> None:
    """The last part of the dotted key is matched against the allowed keys."""
    err = UnknownKeyError("hardware.network.latency", 1, ["latency_us", "bandwidth_gb_per_s"])
    assert isinstance(err, ConfigError)
    assert str(err) == (
        "hardware.network.latency = 1: unknown key; allowed keys: bandwidth_gb_per_s, "
        "latency_us; did you mean latency_us?"
    )


def test_unknown_key_without_a_close_key_lists_the_allowed_ones_only() -> None:
    err = UnknownKeyError("output.zzz", "x", ["root", "resume"])
    assert str(err) == "output.zzz = 'x': unknown key; allowed keys: resume, root"


def test_unknown_key_hint_replaces_the_closest_key_and_survives_pickling() -> None:
    err = UnknownKeyError("hardware.year", 2030, ["sms", "name"], "year is a key of projected")
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is UnknownKeyError
    assert (
        str(again)
        == str(err)
        == (
            "hardware.year = 2030: unknown key; allowed keys: name, sms; year is a key of projected"
        )
    )
    assert again.allowed_keys == ("name", "sms")


def test_unknown_key_rule_says_what_the_key_stands_for_and_survives_pickling() -> None:
    """A sweep axis names a config field: its rule says which, before the allowed keys."""
    err = UnknownKeyError(
        "sweep.axes.hardware.smz",
        [1],
        ["sms"],
        "did you mean sms?",
        "unknown config field hardware.smz",
    )
    again = pickle.loads(pickle.dumps(err))
    assert (
        str(again)
        == str(err)
        == (
            "sweep.axes.hardware.smz = [1]: unknown config field hardware.smz; allowed keys: sms; "
            "did you mean sms?"
        )
    )


def test_values_are_shown_as_typed_on_the_command_line() -> None:
    """Booleans and null read as YAML writes them, not as Python's True and None; strings
    keep their quotes (``'false'`` is a string, not the boolean)."""
    assert str(ConfigError("physics.fp8_params", True, "x")) == "physics.fp8_params = true: x"
    assert str(ConfigError("output.resume", False, "x")) == "output.resume = false: x"
    assert str(ConfigError("output", None, "x")) == "output = null: x"
    assert str(ConfigError("run.dropout", "false", "x")) == "run.dropout = 'false': x"


def test_a_nested_key_of_flat_keys_says_to_write_them_flat() -> None:
    """``run.layout.tp=3`` for ``run.tp=3``: the hint names the keys as they are written, not
    the closest key to ``layout``."""
    with pytest.raises(UnknownKeyError) as info:
        Section(
            {"layout": {"tp": 3, "sequence_parallel": True}},
            "run",
            ["tp", "sequence_parallel", "layout_search"],
        )
    assert str(info.value).endswith(
        "; these keys are written directly under run: run.tp=3, run.sequence_parallel=true"
    )
