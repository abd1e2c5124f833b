"""Reading one config section with checks: types, ranges, required and unknown keys.

A `Section` wraps a plain mapping (a composed DictConfig node turned into a dict) with
its dotted path. Every reader names the key, the value and what is allowed when it
rejects a value, through `ConfigError`. Unknown keys are rejected when the section is
opened, before any value is read, so a misspelt key is reported as itself rather than
as its correctly spelt twin missing.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, cast

from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from pipeline.schema.bounds import MAX_INTEGER
from pipeline.schema.errors import MISSING, ConfigError, UnknownKeyError, yaml_word

SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")
"""A name that becomes a folder or file name (a preset's `name` is a partition folder of the
dataset): letters, digits, '_', '.', '+', '-', starting with a letter or digit, at most 100
characters; so no space, no slash, no `..` on its own, no hidden name."""
NAME_RULE = (
    "must be a file-name-safe name: letters, digits, '_', '.', '+', '-', starting with a "
    "letter or digit, at most 100 characters (no spaces or slashes)"
)


def join_key(path: str, key: str) -> str:
    """The dotted key of ``key`` under ``path`` ("" is the root)."""
    return f"{path}.{key}" if path else key


def plain(node: object, path: str) -> object:
    """A DictConfig/ListConfig as plain Python containers, interpolations resolved.

    Anything else is returned unchanged. OmegaConf failures (a ``???`` value, a broken
    interpolation) become a ConfigError on the offending key.
    """
    if not isinstance(node, DictConfig | ListConfig):
        return node
    try:
        return OmegaConf.to_container(node, resolve=True, throw_on_missing=True)
    except OmegaConfBaseException as err:
        key = getattr(err, "full_key", None) or path
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ConfigError(key, MISSING, f"must be set and resolvable ({reason})") from err


def is_integer(value: object) -> bool:
    """True for integers, False for bools (YAML's true/false are not numbers here)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """True for real numbers (ints and floats), False for bools."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_number(
    value: object,
    key: str,
    unit: str = "",
    *,
    minimum: float | None = 0.0,
    exclusive: bool = True,
    maximum: float | None = None,
    allow_inf: bool = False,
) -> float:
    """``value`` as a float, or a ConfigError saying which numbers are allowed.

    By default the number must be positive and finite. ``minimum=None`` allows any
    finite number, ``exclusive=False`` allows the minimum itself, ``maximum`` bounds it
    above (inclusive), and ``allow_inf`` admits +inf (never NaN or -inf).
    """
    if minimum is None:
        allowed = "must be a finite number"
    elif minimum == 0.0 and exclusive:
        allowed = "must be a positive finite number"
    else:
        allowed = f"must be a finite number {'>' if exclusive else '>='} {minimum:g}"
    if maximum is not None:
        allowed += f" and <= {maximum:g}"
    if allow_inf:
        allowed = allowed.replace("finite number", "number") + " or .inf (inf on the command line)"
    if unit:
        allowed += f" ({unit})"
    if not is_number(value):
        raise ConfigError(key, value, allowed)
    number = float(cast(numbers.Real, value))
    if math.isnan(number) or (math.isinf(number) and not (allow_inf and number > 0)):
        raise ConfigError(key, value, allowed)
    too_low = minimum is not None and (number <= minimum if exclusive else number < minimum)
    too_high = maximum is not None and number > maximum
    if too_low or too_high:
        raise ConfigError(key, value, allowed)
    return number


def integer_rule(minimum: int, maximum: int = MAX_INTEGER, value: object = None) -> str:
    """What an integer key allows, in words. The bound every integer key has, 2^53 (the
    largest integer a double holds exactly, `bounds.MAX_INTEGER`), is named only to a `value`
    above it: to a fraction, a word or a count of GPUs it says nothing."""
    low = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    if maximum != MAX_INTEGER:
        return f"must be {low} and <= {maximum}"
    if is_integer(value) and int(cast(numbers.Integral, value)) > MAX_INTEGER:
        return f"must be {low} and <= 2^53 (the largest integer a double holds exactly)"
    return f"must be {low}"


def check_integer(value: object, key: str, *, minimum: int = 1, maximum: int = MAX_INTEGER) -> int:
    """``value`` as an int in [minimum, maximum] (default: positive, <= 2^53), or a ConfigError."""
    allowed = integer_rule(minimum, maximum, value)
    if not is_integer(value) or not minimum <= int(cast(numbers.Integral, value)) <= maximum:
        raise ConfigError(key, value, allowed)
    return int(cast(numbers.Integral, value))


def check_si(
    key: str, raw: object, si: float, maximum: float, si_unit: str, *, allow_inf: bool = False
) -> float:
    """A converted value ``si`` (from config value ``raw``), or a ConfigError unless it is
    finite and at most ``maximum`` (`pipeline.schema.bounds`); +inf only with ``allow_inf``."""
    if si <= maximum or (allow_inf and si == math.inf):
        return si
    raise ConfigError(
        key, raw, f"is {si:.3g} {si_unit} in SI units; must be at most {maximum:.3g} {si_unit}"
    )


def flat_hint(path: str, value: object, keys: Collection[str]) -> str:
    """The hint for an unknown key whose value is a mapping of keys allowed where the unknown
    key is (`run.layout.tp=3` for `run.tp=3`): those keys are written directly under `path`;
    "" otherwise (the closest allowed key is the hint then)."""
    if not isinstance(value, Mapping) or not value or not all(k in keys for k in value):
        return ""
    named = ", ".join(f"{join_key(path, str(k))}={yaml_word(v) or v}" for k, v in value.items())
    return f"these keys are written directly under {path or 'the root'}: {named}"


class Section:
    """One mapping of the config, read key by key with checks.

    ``keys`` lists every key the section may hold; any other key is an error at once.
    """

    def __init__(self, data: object, path: str, keys: Collection[str]) -> None:
        if not isinstance(data, Mapping):
            raise ConfigError(path, data, "must be a mapping of keys to values")
        self.path = path
        self._data: Mapping[str, Any] = data
        for key in data:
            if key not in keys:
                raise UnknownKeyError(
                    join_key(path, str(key)), data[key], keys, flat_hint(path, data[key], keys)
                )

    @property
    def values(self) -> Mapping[str, Any]:
        """The section's mapping as read (plain values)."""
        return self._data

    def key(self, key: str) -> str:
        """The dotted key of ``key`` in this section."""
        return join_key(self.path, key)

    def has(self, key: str) -> bool:
        """True if the key is present (even when its value is null)."""
        return key in self._data

    def raw(self, key: str, allowed: str) -> object:
        """The value as stored; a ConfigError mentioning ``allowed`` if it is absent."""
        if key not in self._data:
            raise ConfigError(self.key(key), MISSING, f"required key; {allowed}")
        return self._data[key]

    def string(self, key: str) -> str:
        """A non-empty string."""
        allowed = "must be a non-empty string"
        value = self.raw(key, allowed)
        if not isinstance(value, str) or not value:
            raise ConfigError(self.key(key), value, allowed)
        return value

    def name(self, key: str) -> str:
        """A name that becomes part of a path (`SAFE_NAME`)."""
        value = self.raw(key, NAME_RULE)
        if not isinstance(value, str) or not SAFE_NAME.fullmatch(value):
            raise ConfigError(self.key(key), value, NAME_RULE)
        return value

    def choice(self, key: str, choices: Sequence[str]) -> str:
        """One of ``choices``."""
        allowed = f"must be one of: {', '.join(choices)}"
        value = self.raw(key, allowed)
        if value not in choices:
            raise ConfigError(self.key(key), value, allowed)
        return str(value)

    def boolean(self, key: str) -> bool:
        """true or false (not 0/1, not a string)."""
        allowed = "must be true or false"
        value = self.raw(key, allowed)
        if not isinstance(value, bool):
            raise ConfigError(self.key(key), value, allowed)
        return value

    def integer(self, key: str, *, minimum: int = 1, maximum: int = MAX_INTEGER) -> int:
        """An integer in [minimum, maximum] (default: positive, at most 2^53)."""
        value = self.raw(key, integer_rule(minimum, maximum))
        return check_integer(value, self.key(key), minimum=minimum, maximum=maximum)

    def si(
        self,
        key: str,
        unit: str,
        convert: Callable[[float], float],
        maximum: float,
        si_unit: str,
        **bounds: Any,
    ) -> float:
        """A number in ``unit`` (checked as `number`), converted to SI and bounded (`check_si`)."""
        value = self.raw(key, "must be a number")
        number = check_number(value, self.key(key), unit, **bounds)
        return check_si(self.key(key), value, convert(number), maximum, si_unit)

    def si_list(
        self,
        key: str,
        unit: str,
        convert: Callable[[float], float],
        maximum: float,
        si_unit: str,
        **bounds: Any,
    ) -> tuple[float, ...]:
        """A list of numbers, each as `si`; element errors name ``key[i]``."""
        raw = self._list(key, f"must be a non-empty list of numbers ({unit})", nonempty=True)
        numbers_ = self.number_list(key, unit, **bounds)
        return tuple(
            # inf typed as inf may pass (if allowed); a finite value that overflows may not
            check_si(key_i, raw[i], convert(x), maximum, si_unit, allow_inf=math.isinf(x))
            for i, x in enumerate(numbers_)
            for key_i in [f"{self.key(key)}[{i}]"]
        )

    def number(self, key: str, unit: str = "", **bounds: Any) -> float:
        """A number; positive and finite unless ``bounds`` (see `check_number`) say otherwise."""
        value = self.raw(key, "must be a number")
        return check_number(value, self.key(key), unit, **bounds)

    def optional_number(self, key: str, unit: str = "", **bounds: Any) -> float | None:
        """A number as `number`, or None when the value is null."""
        value = self.raw(key, "must be a number or null")
        if value is None:
            return None
        return check_number(value, self.key(key), unit, **bounds)

    def _list(self, key: str, allowed: str, *, nonempty: bool) -> list[object]:
        value = self.raw(key, allowed)
        if not isinstance(value, list | tuple) or (nonempty and not value):
            raise ConfigError(self.key(key), value, allowed)
        return list(value)

    def number_list(
        self, key: str, unit: str = "", *, nonempty: bool = True, **bounds: Any
    ) -> tuple[float, ...]:
        """A list of numbers, each checked as `number`; element errors name ``key[i]``."""
        allowed = f"must be a {'non-empty ' if nonempty else ''}list of numbers ({unit})"
        items = self._list(key, allowed, nonempty=nonempty)
        return tuple(
            check_number(item, f"{self.key(key)}[{i}]", unit, **bounds)
            for i, item in enumerate(items)
        )

    def integer_list(self, key: str, *, nonempty: bool = True, minimum: int = 1) -> tuple[int, ...]:
        """A list of integers >= minimum; element errors name ``key[i]``."""
        allowed = f"must be a {'non-empty ' if nonempty else ''}list of integers"
        items = self._list(key, allowed, nonempty=nonempty)
        return tuple(
            check_integer(item, f"{self.key(key)}[{i}]", minimum=minimum)
            for i, item in enumerate(items)
        )

    def section(self, key: str, keys: Collection[str]) -> Section:
        """The nested mapping under ``key``, as a Section with its own allowed keys."""
        return Section(self.raw(key, "must be a mapping"), self.key(key), keys)
