"""The one exception the schema raises: a config value that is not allowed."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

_MAX_VALUE_CHARS = 120


class _Missing:
    """Marker for a required key that is absent; shown as ``<missing>`` in messages."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()
"""The ``value`` of a ConfigError raised for an absent key."""


def yaml_word(value: object) -> str | None:
    """How YAML and the command line spell null and the two booleans (where Python's repr says
    None, True, False); None for any other value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return None


def _show(value: object) -> str:
    """The value as one short line, as the user typed it where they differ from Python's repr
    (`yaml_word`); otherwise its repr, newlines flattened, long values cut."""
    word = yaml_word(value)
    if word is not None:
        return word
    text = " ".join(repr(value).split("\n"))
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 3] + "..."
    return text


class ConfigError(ValueError):
    """A config value failed validation.

    ``str()`` is one line naming the dotted key, the bad value and what is allowed, e.g.
    ``hardware.hbm_bandwidth_gb_per_s = -1: must be a positive finite number (GB/s)``.
    The three parts are kept as attributes so callers (and tests) can inspect them, and
    they are the exception's ``args``, so it pickles across joblib workers.
    """

    def __init__(self, key: str, value: object, allowed: str) -> None:
        super().__init__(key, value, allowed)
        self.key = key
        self.value = value
        self.allowed = allowed

    def __str__(self) -> str:
        allowed = " ".join(self.allowed.split())
        return f"{self.key} = {_show(self.value)}: {allowed}"


def closest_key_hint(name: str, allowed_keys: Iterable[str]) -> str:
    """``did you mean KEY?`` for the allowed key closest to `name`, "" when none is close."""
    close = difflib.get_close_matches(name, list(allowed_keys), n=1)
    return f"did you mean {close[0]}?" if close else ""


class UnknownKeyError(ConfigError):
    """A key the config may not hold: ``str()`` names it, its value, `rule` (``unknown key``, or
    what the key stands for) and the keys allowed where it is, then ``hint`` or, without one,
    the closest allowed key when one is close,
    ``hardware.network.latency = 1: unknown key; allowed keys: bandwidth_gb_per_s, latency_us,
    level_sizes, nics_per_node; did you mean latency_us?``."""

    def __init__(
        self,
        key: str,
        value: object,
        allowed_keys: Iterable[str],
        hint: str = "",
        rule: str = "unknown key",
    ) -> None:
        self.allowed_keys = tuple(sorted(allowed_keys))
        self.hint = hint
        self.rule = rule
        hint = hint or closest_key_hint(key.rsplit(".", 1)[-1], self.allowed_keys)
        text = f"{rule}; allowed keys: {', '.join(self.allowed_keys)}"
        super().__init__(key, value, f"{text}; {hint}" if hint else text)

    def __reduce__(
        self,
    ) -> tuple[type[UnknownKeyError], tuple[str, object, tuple[str, ...], str, str]]:
        return (type(self), (self.key, self.value, self.allowed_keys, self.hint, self.rule))


class InputError(ValueError):
    """Bad input that is not one config value (a config file, a directory, the command line).

    ``str()`` is the whole one-line message, naming the input (a file and line for YAML).
    """
