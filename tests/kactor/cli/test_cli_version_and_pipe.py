"""What every kactor tool does as a Unix / Kafka tool: ``--version`` (Kafka's tools all take it and print their
version, exit 0) and output piped into a reader that stops early (``| head``) ending quietly with SIGPIPE's status,
not a BrokenPipeError traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from kactor import __version__
from kactor.cli import COMMANDS, KAFKA_VERSION, SIGPIPE_EXIT, main

EVERY_COMMAND = sorted(COMMANDS)


def test_the_kafka_version_is_2_6_3() -> None:
    assert KAFKA_VERSION == "2.6.3"


@pytest.mark.parametrize("argv", [[], *([c] for c in EVERY_COMMAND), ["trace", "show"], ["bench", "produce"]])
def test_every_tool_prints_its_version_and_exits_0(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main([*argv, "--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"kactor {__version__} (Kafka 2.6.3)\n"


def test_version_wins_over_the_tools_required_options(capsys: pytest.CaptureFixture[str]) -> None:
    """kafka-topics.sh --version needs no action nor --bootstrap-server (printVersionAndDieIfNeeded comes first)."""
    with pytest.raises(SystemExit) as e:
        main(["topics", "--version"])
    assert (e.value.code, capsys.readouterr().out) == (0, f"kactor {__version__} (Kafka 2.6.3)\n")


# A command that prints a long listing line by line, as kactor's tools print (kactor.cli.support.printer), run with
# its stdout on a pipe whose reader is already gone.
_LONG_LISTING = textwrap.dedent("""
    import argparse, sys
    import kactor.cli as cli

    def build_parser(argv):
        p = cli._Parser(prog="kactor")
        sub = p.add_subparsers(dest="command", parser_class=cli._Parser)
        t = sub.add_parser("topics")
        t.set_defaults(func=lambda args: [print(f"topic-{i}", flush={flush}) for i in range(100000)] and 0)
        return p

    cli.build_parser = build_parser
    sys.exit(cli.main(["topics"]))
""")


@pytest.mark.parametrize("flush", [True, False])
def test_a_reader_that_stops_early_ends_the_tool_quietly(flush: bool) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # `| head -1` after its line: every write now fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, "-c", _LONG_LISTING.replace("{flush}", str(flush))], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (SIGPIPE_EXIT, "")


def test_a_broken_pipe_that_is_not_stdout_is_still_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a closed stdout is a reader gone: a BrokenPipeError of the command's own connection propagates."""
    import kactor.cli as cli

    def build_parser(argv: list[str] | None) -> cli._Parser:
        p = cli._Parser(prog="kactor")
        sub = p.add_subparsers(dest="command", parser_class=cli._Parser)

        def fails(args: object) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        sub.add_parser("topics").set_defaults(func=fails)
        return p

    monkeypatch.setattr(cli, "build_parser", build_parser)
    monkeypatch.setattr(cli, "_stdout_closed", lambda: False)
    with pytest.raises(BrokenPipeError):
        main(["topics"])
