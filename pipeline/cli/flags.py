"""The options of a `dmlimits` command line: @hydra.main's, read in any order.

Hydra's own parser stops at the first option that follows an override (``dmlimits
hardware=a100_sxm --config-dir DIR scaling=sparse`` would leave ``scaling=sparse`` unread). The
CLI reads the command line with the same options (`HYDRA_FLAGS`), options and overrides
intermixed, and hands Hydra the same command line with its options first (`hydra_argv`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from pipeline.schema.errors import InputError

HYDRA_FLAGS: tuple[tuple[str, str | None, bool], ...] = (
    ("--help", "-h", False),
    ("--hydra-help", None, False),
    ("--cfg", "-c", True),
    ("--resolve", None, False),
    ("--package", "-p", True),
    ("--run", "-r", False),
    ("--multirun", "-m", False),
    ("--shell-completion", "-sc", False),
    ("--config-path", "-cp", True),
    ("--config-name", "-cn", True),
    ("--config-dir", "-cd", True),
    ("--experimental-rerun", None, True),
    ("--info", "-i", True),
)
"""The options of @hydra.main's command line (Hydra 1.3): (flag, short flag, takes a value).
`--version` is the CLI's own (`pipeline.cli.main`); `--info` alone means `--info all`."""
HYDRA_CHOICES = {
    "--cfg": ("job", "hydra", "all"),
    "--info": ("all", "config", "defaults", "defaults-tree", "plugins", "searchpath"),
}
"""The values Hydra accepts for the options that take one of a few."""


def flags_parser() -> argparse.ArgumentParser:
    """A parser of `HYDRA_FLAGS`, overrides as positional arguments, that never exits."""
    parser = argparse.ArgumentParser(prog="dmlimits", add_help=False, exit_on_error=False)
    for flag, short, takes_value in HYDRA_FLAGS:
        names = [flag] if short is None else [flag, short]
        if flag == "--info":
            parser.add_argument(*names, nargs="?", const="all", choices=HYDRA_CHOICES[flag])
        elif takes_value:
            parser.add_argument(*names, choices=HYDRA_CHOICES.get(flag))
        else:
            parser.add_argument(*names, action="store_true")
    parser.add_argument("overrides", nargs="*")
    return parser


def read_flags(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    """The command line's options and overrides, in any order, and the same command line in
    the order @hydra.main's own parser accepts (options first, then the overrides)."""
    try:
        args, unknown = flags_parser().parse_known_intermixed_args(list(argv))
    except argparse.ArgumentError as err:
        raise InputError(f"{err} (dmlimits --help lists the options)") from None
    if unknown:
        raise InputError(f"unknown option {unknown[0]!r} (dmlimits --help lists them)")
    ordered: list[str] = []
    for flag, _, takes_value in HYDRA_FLAGS:
        value = getattr(args, flag.removeprefix("--").replace("-", "_"))
        if value is None or value is False:
            continue
        ordered += [flag, value] if takes_value else [flag]
    return args, [*ordered, *args.overrides]


def hydra_argv(argv: Sequence[str]) -> list[str]:
    """The command line in the order @hydra.main parses (an option after an override would
    make it stop there); unchanged if it does not parse (Hydra then says why)."""
    try:
        return read_flags(argv)[1]
    except InputError:
        return list(argv)
