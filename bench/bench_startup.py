"""Benchmark: each start-up mechanism's share of a small command, with it switched off.

Reports figures; it does not pass or fail. Run: `.venv/bin/python bench/bench_startup.py`
(`--pairs N`, default 12; about 10 minutes on 2 quiet cores).

A mechanism of `dmlimits`' start-up is worth its lines only where it saves a good part of a
command users run often: `dmlimits -m hardware=v100_sxm,a100_sxm,h100_sxm` (the three-GPU
comparison) and `dmlimits` (the default run). Each command runs as its own process, as
`bench/bench_commands.py` runs it (a fresh dataset root, bytecode compiled once under the
benchmark's cache folder), once with every mechanism on and once with each mechanism off.
Nothing in the package switches a mechanism off for the benchmark: the child process
(`CHILD`) loads the command as the console script does (`pipeline.cli.main.main`),
then replaces the one function that decides the mechanism (`OFF`), and runs it. A mechanism
that did not earn its lines is gone from the package and from `OFF`; its figures, measured
before it went, are kept in `REMOVED` and printed beside the others.

Runs come in rounds, one run with everything on and one with each mechanism off, in an order
shuffled anew each round, so that a drift of a shared machine's load hits them alike. A
mechanism's share of a command is, round by round, (off - on) / off of the wall seconds of the
two runs: the part of the command, as run without it, that it saves. The figures are the
min / median / max over the rounds; the keep-or-remove decision reads the median.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench_commands import PYCACHE, timed

THREE_GPUS = "three GPUs"
DEFAULT = "default"
COMMANDS: dict[str, list[str]] = {
    THREE_GPUS: ["-m", "hardware=v100_sxm,a100_sxm,h100_sxm"],
    DEFAULT: [],
}
"""The small commands: name -> arguments."""
COMMAND_LINES = {
    THREE_GPUS: "`dmlimits -m hardware=v100_sxm,a100_sxm,h100_sxm`",
    DEFAULT: "`dmlimits`",
}

AHEAD = "series evaluated ahead (forked workers)"
SWEEPER = "dmlimits' sweeper (each job composed once)"

OFF: dict[str, str] = {
    AHEAD: "import pipeline.cli.startup as s\ns.workers_for = lambda full, execution: 0",
    SWEEPER: "",  # Hydra's basic sweeper instead (`OFF_ARGS`)
}
"""Mechanism -> the Python lines that switch it off in the child, once the command is loaded."""
OFF_ARGS: dict[str, list[str]] = {SWEEPER: ["hydra/sweeper=basic"]}
"""Mechanism -> overrides that switch it off (Hydra's own sweeper: the check then composes and
checks every job before Hydra starts, and Hydra composes each job twice)."""
APPLIES: dict[str, tuple[str, ...]] = {
    AHEAD: (THREE_GPUS,),  # the default run has one series: nothing to evaluate ahead
    SWEEPER: (THREE_GPUS,),
}
"""Mechanisms that act on some commands only; any other acts on both."""

CHILD = """\
import sys
code = sys.argv[1]
sys.argv = ["dmlimits", *sys.argv[2:]]
from pipeline.cli.main import main
exec(code)
main()
"""
"""The child process: the console script's `pipeline.cli.main.main`, one mechanism off."""


@dataclass(frozen=True, slots=True)
class Removed:
    """A mechanism removed for saving less than 10% of both commands, as measured before."""

    mechanism: str
    commit: str
    """The commit measured, the mechanism still in it."""
    shares: dict[str, str]
    """Command -> share of the wall seconds saved, min / median / max."""
    cpu_shares: dict[str, str]
    """Command -> share of the CPU seconds saved, min / median / max."""
    rounds: str
    """The rounds measured, per command."""
    note: str


REMOVED: tuple[Removed, ...] = (
    Removed(
        "frozen heap while the command loads (collector paused, gc.freeze at load and before "
        "the first fork)",
        "3edeffc",
        {THREE_GPUS: "-50% / +7% / +26%", DEFAULT: "-34% / +14% / +57%"},
        {THREE_GPUS: "-14% / +4% / +16%", DEFAULT: "-8% / +16% / +37%"},
        "15 per command",
        "switched off with the exit freeze, which stayed then: the exit freeze alone off cost "
        "+20% / +9% of the wall and +7% / +15% of the CPU (three GPUs / default), so the "
        "load-time part adds under 10%; load average 8-14 on 2 CPUs",
    ),
    Removed(
        "a single run reuses the series its check expanded",
        "3edeffc",
        {DEFAULT: "-80% / +11% / +34%"},
        {DEFAULT: "-23% / +4% / +26%"},
        "15",
        "the job's own expansion of the default series costs 0.002-0.003 s CPU, measured in "
        "the command: the wall median is the load's noise; load average 8-14 on 2 CPUs; back "
        "since be4852b for another command: a nightly's single run composes its eight choices "
        "once, not twice, about 0.7 CPU s of its start-up (`cli.main.Command.series_for`)",
    ),
    Removed(
        "first job checked before Hydra (its series start first)",
        "bcaf915",
        {THREE_GPUS: "-12% / 1% / 11%"},
        {THREE_GPUS: "-11% / 1% / 16%"},
        "8",
        "a multirun whose series went ahead had its first job composed and checked by the "
        "command's check, so the workers started on it before Hydra composed; "
        "load average 1-2 on 2 CPUs",
    ),
    Removed(
        "heap frozen at exit (atexit gc.freeze)",
        "bcaf915",
        {THREE_GPUS: "-3% / 4% / 11%", DEFAULT: "-0% / 6% / 12%"},
        {THREE_GPUS: "-3% / 2% / 13%", DEFAULT: "-0% / 5% / 11%"},
        "8 per command",
        "a command with execution.ahead on registered an atexit gc.freeze, so the "
        "interpreter's last collections skipped its heap; load average 1-2 on 2 CPUs",
    ),
    Removed(
        "package configs parsed once (ParsedOnceSource)",
        "64f3961",
        {THREE_GPUS: "-7% / 5% / 36%", DEFAULT: "-4% / 6% / 28%"},
        {THREE_GPUS: "-6% / 4% / 34%", DEFAULT: "-3% / 6% / 27%"},
        "8 per command",
        "every composition read dmlimits' and Hydra's package YAML through a config source "
        "that parsed each file once per process; it had saved 13-14% while the catalog's 7 GPU "
        "presets were composed one by one, and once they were composed in one composition "
        "it saved under 10%: farm-bench, 15 pairs on and off, wall on / off 0.99 (three GPUs) "
        "and 0.98 (default); load average 1-2 on 2 CPUs",
    ),
)
"""The mechanisms removed, with the figures that removed them (`bench/bench_startup.py` at
their commit; the machine's load average in `note`)."""


@dataclass(slots=True)
class Share:
    """One mechanism's seconds on one command, round by round: on and off, wall and CPU."""

    mechanism: str
    command: str
    on_s: list[float] = field(default_factory=list)
    off_s: list[float] = field(default_factory=list)
    on_cpu_s: list[float] = field(default_factory=list)
    off_cpu_s: list[float] = field(default_factory=list)

    @property
    def shares(self) -> list[float]:
        """(off - on) / off of each round's wall seconds: the part of the command it saves."""
        return [(off - on) / off for on, off in zip(self.on_s, self.off_s, strict=True)]

    @property
    def cpu_shares(self) -> list[float]:
        """(off - on) / off of each round's CPU seconds (the command and its workers)."""
        return [(off - on) / off for on, off in zip(self.on_cpu_s, self.off_cpu_s, strict=True)]


def run_once(args: Sequence[str], mechanism: str | None) -> tuple[float, float]:
    """Wall and CPU seconds (the process and its workers) of `dmlimits ARGS` in its own process, into a fresh root, with
    `mechanism` off (None: every mechanism on)."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(PYCACHE))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode as an installed package has it
    code = OFF[mechanism] if mechanism is not None else ""
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as scratch:
        extra = [f"output.root={scratch}/out"]
        if "-m" in args:
            extra.append(f"hydra.sweep.dir={scratch}/multirun")
        more = OFF_ARGS.get(mechanism, []) if mechanism is not None else []
        command = [sys.executable, "-c", CHILD, code, *args, *more, *extra]
        return timed(command, scratch, env)


def applies(mechanism: str, command: str) -> bool:
    return command in APPLIES.get(mechanism, (command,))


def measure(
    pairs: int, commands: Sequence[str] = tuple(COMMANDS), seed: int = 0, verbose: bool = False
) -> list[Share]:
    """Every mechanism's `Share` of each command, over `pairs` rounds (module docstring)."""
    rng = random.Random(seed)
    results: list[Share] = []
    for command in commands:
        args = COMMANDS[command]
        mechanisms = [m for m in OFF if applies(m, command)]
        for mechanism in (None, *mechanisms):  # warm-up, not counted: bytecode, file cache
            run_once(args, mechanism)
        shares = {m: Share(m, command) for m in mechanisms}
        for round_ in range(pairs):
            order: list[str | None] = [None, *mechanisms]
            rng.shuffle(order)
            seconds = {m: run_once(args, m) for m in order}
            for m in mechanisms:
                shares[m].on_s.append(seconds[None][0])
                shares[m].off_s.append(seconds[m][0])
                shares[m].on_cpu_s.append(seconds[None][1])
                shares[m].off_cpu_s.append(seconds[m][1])
            if verbose:
                line = ", ".join(f"{m or 'on'}: {w:.2f} ({c:.2f})" for m, (w, c) in seconds.items())
                print(f"{command} round {round_ + 1}: {line}", flush=True)
        results.extend(shares.values())
    return results


def spread(values: Sequence[float], fmt: str = "{:.0%}") -> str:
    """min / median / max."""
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def markdown(results: Sequence[Share]) -> str:
    """The docs/performance.md section: each mechanism's share of each small command."""
    lines = [
        "| mechanism | command | all on, wall s | off, wall s | share of wall saved | "
        "share of CPU saved |",
        "|---|---|---|---|---|---|",
    ]
    for share in results:
        lines.append(
            f"| {share.mechanism} | {COMMAND_LINES[share.command]} | "
            f"{spread(share.on_s, '{:.2f}')} | {spread(share.off_s, '{:.2f}')} | "
            f"{spread(share.shares)} | {spread(share.cpu_shares)} |"
        )
    for gone in REMOVED:
        for command, wall in gone.shares.items():
            lines.append(
                f"| removed: {gone.mechanism} (measured at {gone.commit}, rounds: {gone.rounds}; "
                f"{gone.note}) | {COMMAND_LINES[command]} | – | – | {wall} | "
                f"{gone.cpu_shares[command]} |"
            )
    return "\n".join(
        [
            f"Each start-up mechanism switched off in turn (`bench/bench_startup.py`, "
            f"{len(results[0].on_s) if results else 0} rounds): a share is (off - on) / off of "
            "the seconds of one round's two runs, the part of the command it saves (wall; CPU "
            "of the command and its workers), min / median / max over the rounds; a mechanism "
            "is kept where its median share of the wall seconds of one of the two commands is "
            "at least 10%. Series evaluated ahead use a CPU the command leaves idle: on a "
            "loaded machine, with no CPU idle, they show no share.",
            "",
            *lines,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12, help="rounds (pairs per mechanism)")
    parser.add_argument("--only", nargs="*", default=None, help="commands: 'three GPUs', default")
    args = parser.parse_args()
    commands = [c for c in COMMANDS if not args.only or c in args.only]
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    results = measure(args.pairs, commands, verbose=True)
    print(f"(load average at the end {os.getloadavg()[0]:.1f})\n")
    print(markdown(results))


if __name__ == "__main__":
    main()
