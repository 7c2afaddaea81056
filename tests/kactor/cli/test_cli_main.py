"""kactor.cli's parser: a named command imports its own module only; without one, every command is listed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kactor.cli import COMMANDS, build_parser


def _commands(argv: list[str] | None) -> list[str]:
    sub = next(a for a in build_parser(argv)._actions if a.dest == "command")
    return sorted(sub.choices)  # type: ignore[arg-type]


def test_a_named_command_registers_only_itself() -> None:
    assert _commands(["consumer-groups", "--list"]) == ["consumer-groups"]
    assert _commands(["trace", "replay", "x"]) == ["trace"]


@pytest.mark.parametrize("argv", [None, [], ["--help"], ["no-such-command"]])
def test_without_a_known_command_every_command_is_registered(argv: list[str] | None) -> None:
    names = _commands(argv)
    assert names == sorted(COMMANDS)
    assert {"topics", "consumer-groups", "trace", "broker", "reassign-partitions"} <= set(names)


def test_an_unknown_command_is_a_usage_error_listing_the_commands() -> None:
    proc = subprocess.run([sys.executable, "-m", "kactor", "no-such-command"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert "invalid choice: 'no-such-command'" in proc.stderr and "'reassign-partitions'" in proc.stderr
